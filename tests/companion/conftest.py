"""A project whose companion page is served over real HTTPS, in its own thread's asyncio loop."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx2 as httpx
import pytest

from ralph_desk.companion.host import CompanionHost
from ralph_desk.companion.switch import LoopSwitch
from ralph_desk.project.companion_home import CompanionHome, CompanionSettings
from ralph_desk.project.init import init_project
from ralph_desk.services.companion import PairingCode
from ralph_desk.services.container import Services
from tests.support.git_repo import commit_all, make_repo

T = TypeVar("T")


class LoopThread:
    """An asyncio loop in a thread of its own, as the window's or `ralph-desk run`'s would be."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="companion-loop", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout_s: float = 30) -> T:
        """Run `coroutine` in the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout_s)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@dataclass
class Served:
    """A served companion page and the project behind it."""

    root: Path
    services: Services
    host: CompanionHost
    loop: LoopThread

    @property
    def url(self) -> str:
        return self.host.url.rstrip("/")

    def code(self) -> PairingCode:
        """A fresh pairing code, as the desk makes one."""
        return self.host.new_code()

    def client(self, **headers: str) -> httpx.Client:
        """An HTTPS client that sends the page's own Origin (a browser's same-origin request)."""
        given = {"origin": self.url, **headers}
        return httpx.Client(
            base_url=self.url, verify=False, headers=given, follow_redirects=False, timeout=30
        )

    @contextmanager
    def paired_client(self, name: str = "Phone") -> Iterator[httpx.Client]:
        """A client holding a paired device's cookie."""
        with self.client() as client:
            answer = client.post("/pair", data={"code": self.code().code, "name": name})
            assert answer.status_code == 303, answer.text
            yield client


def serve(root: Path, switch: LoopSwitch | None = None) -> Iterator[Served]:
    """Serve the companion of the project at `root` on 127.0.0.1 (any free port) until the test ends."""
    services = Services.open(
        init_project(root, title="Companion") if not (root / ".ralph").exists() else _paths(root)
    )
    loop = LoopThread()
    settings = CompanionSettings(enabled=True, host="127.0.0.1", port=0)
    host = CompanionHost(services, CompanionHome.of(services.paths), settings, switch, "Companion")
    loop.run(host.start())
    try:
        yield Served(root, services, host, loop)
    finally:
        loop.run(host.stop())
        loop.close()
        services.close()


def _paths(root: Path) -> Any:
    from ralph_desk.project import ProjectPaths

    return ProjectPaths(root)


START = {"app.py": "def greet():\n    return 'hello'\n", "notes.txt": "one\ntwo\nthree\n"}


@pytest.fixture
def review_served(tmp_path: Path) -> Iterator[Served]:
    """A git project with files committed (feature `core`, discipline `backend`), its page served."""
    root = tmp_path / "repo"
    make_repo(root, START)
    init_project(root, title="Companion")
    commit_all(root, "ralph-desk project")
    for served in serve(root):
        served.services.features.create("core", "Core")
        served.services.disciplines.create("backend", "Backend", "server", "#336699")
        yield served


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """A fresh git project's companion page, served."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    yield from serve(root)
