"""A phone's browser for the companion's tests: Debian's chromium through Playwright, 390×844, its console
watched for errors and Content-Security-Policy violations."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright

from tests.companion.conftest import Served

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (`apt-get install chromium`): the companion's real-browser "
    "tests drive it through Playwright and never download a browser",
)
PHONE = {"width": 390, "height": 844}
SHOTS = Path("/tmp/companion-shots")
WAIT_MS = 15_000
"""How long a decision may take to show: its Undo time (5 s) and the post."""
TARGET_PX = 44

expect.set_options(timeout=WAIT_MS)


@dataclass
class Phone:
    """One browser tab on the served page, with what its console said that a test must not see."""

    page: Page
    served: Served
    problems: list[str] = field(default_factory=list)

    def go(self, path: str) -> None:
        """Open a page of the companion."""
        self.page.goto(self.served.url + path)

    def pair(self, name: str = "Ana's phone") -> None:
        """Pair as a person does: the code the desk shows typed into the form."""
        self.go("/pair")
        self.page.fill("#pair-code", self.served.code().code)
        self.page.fill("input[name=name]", name)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(self.served.url + "/")

    def shoot(self, name: str) -> Path:
        """A full-page screenshot in SHOTS."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def wider_than_the_screen(self) -> int:
        """How many pixels the page is wider than the phone (0: no sideways scroll)."""
        width: int = self.page.evaluate("document.documentElement.scrollWidth")
        return max(0, width - PHONE["width"])

    def small_targets(self) -> list[str]:
        """Buttons, links, fields and summaries shown smaller than a thumb (44 px) either way."""
        found: list[str] = self.page.evaluate(
            """(size) => [...document.querySelectorAll(
                 'button, a.button, nav a, a.card, summary, input:not([type=hidden]), select, textarea')]
               .filter((el) => el.offsetParent !== null)
               .map((el) => [el, el.getBoundingClientRect()])
               .filter(([, box]) => box.width < size || box.height < size)
               .map(([el, box]) =>
                 `${el.tagName} ${el.textContent.trim().slice(0, 30)} ${box.width}x${box.height}`)
            """,
            TARGET_PX,
        )
        return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium, headless (the same binary .ci/run installs)."""
    assert CHROMIUM is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


def open_phone(browser: Browser, served: Served, scheme: str = "light", script: bool = True) -> Phone:
    """A fresh phone-sized tab (its own cookies) that trusts the desk's own certificate."""
    context = browser.new_context(
        viewport=PHONE,
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        ignore_https_errors=True,
        color_scheme=scheme,  # type: ignore[arg-type]
        java_script_enabled=script,
    )
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    phone = Phone(page, served)

    def console(message: ConsoleMessage) -> None:
        text = message.text
        if "Content Security Policy" in text or (
            message.type == "error" and "Failed to load resource" not in text
        ):
            phone.problems.append(f"{message.type}: {text}")

    page.on("console", console)
    page.on("pageerror", lambda error: phone.problems.append(f"page error: {error}"))
    page.on(
        "response",
        lambda answer: (
            phone.problems.append(f"{answer.status} {answer.url}")
            if "/static/" in answer.url and answer.status >= 400
            else None
        ),
    )
    return phone
