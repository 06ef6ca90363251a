"""The PyInstaller one-folder app (`packaging/build`): its contents, its commands and its window.

`make package-test` builds dist/ralph-desk/ first and names it in $RALPH_DESK_APP; without that
variable the module builds the app into a temporary folder itself.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk import __version__
from tests.packaging.helpers import (
    APP_ENV,
    REPO,
    check_demo_and_status,
    check_postgres_driver,
    check_window,
    checkout_demo_status,
    fresh_env,
    needs_build,
    run,
)

pytestmark = [needs_build, pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built app's executable: $RALPH_DESK_APP, else built now with packaging/build."""
    given = os.environ.get(APP_ENV)
    if given:
        path = Path(given).resolve()
        assert path.is_file() and os.access(path, os.X_OK), f"${APP_ENV}={given} is not an executable"
        return path
    dist = tmp_path_factory.mktemp("app")
    started = time.monotonic()
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "PYTHONHOME"}}
    run(["bash", REPO / "packaging" / "build", "--dist", dist, "--work", dist / "work"], env, timeout=1200)
    print(f"\nbuilt the app in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return dist / "ralph-desk" / "ralph-desk"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return fresh_env(tmp_path / "home")


def files_under(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_app_folder_holds_the_qt_plugins_migrations_resources_and_desktop_files(app: Path) -> None:
    folder = app.parent
    inside = folder / "_internal"
    plugins = inside / "PySide6" / "Qt" / "plugins"
    for plugin in (
        "platforms/libqoffscreen.so",
        "platforms/libqxcb.so",
        "platforms/libqwayland.so",
        "imageformats/libqsvg.so",
        "iconengines/libqsvgicon.so",
    ):
        assert (plugins / plugin).is_file(), plugin
    migrations = REPO / "ralph_desk" / "store" / "migrations"
    assert files_under(migrations) <= files_under(inside / "ralph_desk" / "store" / "migrations")
    assert files_under(REPO / "resources") == files_under(inside / "ralph_desk" / "resources")
    for name in ("ralph-desk.desktop", "ralph-desk.png", "install-desktop-entry"):
        assert (folder / name).is_file(), name


def test_the_app_says_its_version_also_when_started_as_python_would_be(
    app: Path, env: dict[str, str]
) -> None:
    assert run([app, "--version"], env).strip() == f"ralph-desk {__version__}"
    # A running window opens another project with `sys.executable -m ralph_desk open DIR`.
    assert run([app, "-m", "ralph_desk", "--version"], env).strip() == f"ralph-desk {__version__}"


def test_the_app_makes_the_demo_and_reports_its_status(
    app: Path, env: dict[str, str], tmp_path: Path
) -> None:
    expected = checkout_demo_status(tmp_path / "checkout-demo")
    check_demo_and_status([app], tmp_path / "demo", env, expected)


def test_the_app_keeps_the_demo_in_postgresql(
    app: Path, env: dict[str, str], tmp_path: Path, postgres_db: str
) -> None:
    expected = checkout_demo_status(tmp_path / "checkout-demo")
    check_demo_and_status([app], tmp_path / "demo", env, expected, postgres_db)


def test_the_app_reaches_postgresql_through_psycopg(app: Path, env: dict[str, str], tmp_path: Path) -> None:
    run([app, "init", tmp_path / "p"], env)
    check_postgres_driver([app], tmp_path / "p", env)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_app_serves_mcp_to_an_sdk_client_over_stdio(
    app: Path, env: dict[str, str], tmp_path: Path
) -> None:
    run([app, "demo", tmp_path / "demo"], env)
    params = StdioServerParameters(command=str(app), args=["mcp", "--root", str(tmp_path / "demo")], env=env)
    async with Client(params, mode="legacy") as client:
        info: Any = client.server_info
        assert info is not None and info.name
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "ralph_status" in names


def test_the_app_window_opens_offscreen_and_closes_on_ctrl_c(
    app: Path, env: dict[str, str], tmp_path: Path
) -> None:
    run([app, "demo", tmp_path / "demo"], env)
    window = check_window([app, "open", tmp_path / "demo"], env)
    assert "ralph-desk:" not in window.log  # no error line


@pytest.fixture
def x_display(tmp_path: Path) -> Iterator[str]:
    """A virtual X screen (Xvfb) for the test; skipped where Xvfb is not installed."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 30)
        assert ready, "Xvfb did not start"
        number = os.read(read_end, 32).decode().strip()
        assert number.isdigit(), "Xvfb did not say its display"
        yield f":{number}"
    finally:
        os.close(read_end)
        server.terminate()
        server.wait(timeout=30)


GRAB = """
import sys
from PySide6.QtGui import QGuiApplication
app = QGuiApplication(sys.argv[:1])
image = app.primaryScreen().grabWindow(0).toImage()
colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
image.save(sys.argv[1])
print(len(colours))
"""


def test_the_app_window_draws_on_an_x_server(
    app: Path, env: dict[str, str], tmp_path: Path, x_display: str
) -> None:
    """The xcb platform plugin and its libraries travel with the app: a real X screen shows the window."""
    run([app, "demo", tmp_path / "demo"], env)
    x_env = {**env, "QT_QPA_PLATFORM": "xcb", "DISPLAY": x_display}
    shot = tmp_path / "window.png"
    seen: list[int] = []

    def screenshot(_log: str) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the window has drawn: an empty screen is one colour
            colours = int(run([sys.executable, "-c", GRAB, shot], {**x_env, "PATH": os.environ["PATH"]}))
            seen.append(colours)
            if colours > 20:
                return

    check_window([app, "open", tmp_path / "demo"], x_env, while_up=screenshot)
    assert seen and seen[-1] > 20, f"the screen stayed blank (colours seen: {seen}); see {shot}"


def test_the_app_adds_itself_to_the_application_menu(app: Path, tmp_path: Path) -> None:
    env = {**fresh_env(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "share")}
    run([app.parent / "install-desktop-entry"], env)
    entry = (tmp_path / "share" / "applications" / "ralph-desk.desktop").read_text(encoding="utf-8")
    assert f'Exec="{app}"' in entry.splitlines()
    assert (tmp_path / "share" / "icons" / "hicolor" / "256x256" / "apps" / "ralph-desk.png").is_file()
