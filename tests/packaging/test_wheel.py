"""The wheel: built with `python -m build`, installed with pip into a clean virtual environment, run."""

from __future__ import annotations

import os
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk import __version__
from tests.packaging.helpers import (
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


@dataclass
class Installed:
    """The built distributions and the clean environment the wheel is installed in."""

    wheel: Path
    sdist: Path
    venv: Path
    home: Path

    @property
    def command(self) -> Path:
        return self.venv / "bin" / "ralph-desk"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def env(self) -> dict[str, str]:
        return fresh_env(self.home)


def _pip_env() -> dict[str, str]:
    """pip keeps the machine's configuration (index, certificates); nothing of this test's venv leaks."""
    return {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """`python -m build` (sdist, then the wheel from it), then `pip install WHEEL[postgres]` in a new venv."""
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    started = time.monotonic()
    run([sys.executable, "-m", "build", "--outdir", dist, REPO], _pip_env(), timeout=600)
    built = time.monotonic()
    (wheel,) = dist.glob("ralph_desk-*.whl")
    (sdist,) = dist.glob("ralph_desk-*.tar.gz")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", venv], _pip_env())
    run(
        [venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"{wheel}[postgres]"],
        _pip_env(),
        timeout=900,
    )
    print(
        f"\nwheel {wheel.name}: {wheel.stat().st_size / 1024:.0f} KiB, built in {built - started:.1f} s, "
        f"installed in a new venv in {time.monotonic() - built:.1f} s",
        file=sys.stderr,
    )
    home = root / "home"
    yield Installed(wheel, sdist, venv, home)


def test_the_wheel_holds_the_package_its_migrations_types_and_resources(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert {name.split("/")[0] for name in names} == {"ralph_desk", f"ralph_desk-{__version__}.dist-info"}
    expected = {"ralph_desk/py.typed"}
    migrations = REPO / "ralph_desk" / "store" / "migrations"
    expected |= {
        f"ralph_desk/store/migrations/{path.relative_to(migrations).as_posix()}"
        for path in migrations.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    resources = REPO / "resources"
    expected |= {
        f"ralph_desk/resources/{path.relative_to(resources).as_posix()}"
        for path in resources.rglob("*")
        if path.is_file()
    }
    assert "ralph_desk/resources/icons/app.svg" in expected
    assert expected <= names, sorted(expected - names)
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def test_the_installed_command_says_its_version(installed: Installed) -> None:
    assert run([installed.command, "--version"], installed.env()).strip() == f"ralph-desk {__version__}"


def test_the_installed_command_makes_the_demo_and_reports_its_status(
    installed: Installed, tmp_path: Path
) -> None:
    expected = checkout_demo_status(tmp_path / "checkout-demo")
    check_demo_and_status([installed.command], tmp_path / "demo", installed.env(), expected)


def test_the_installed_command_keeps_the_demo_in_postgresql(
    installed: Installed, tmp_path: Path, postgres_db: str
) -> None:
    expected = checkout_demo_status(tmp_path / "checkout-demo")
    check_demo_and_status([installed.command], tmp_path / "demo", installed.env(), expected, postgres_db)


def test_the_installed_package_reads_its_own_migrations_and_icons(installed: Installed) -> None:
    script = (
        "import ralph_desk, sys\n"
        "from ralph_desk.store.migrate import MIGRATIONS_DIR, head_revision\n"
        "from ralph_desk.gui import icons\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "assert not icons.app_icon().pixmap(64, 64).isNull()\n"
        "print(ralph_desk.__file__, MIGRATIONS_DIR, head_revision(), icons.resource_dir(), sep='\\n')\n"
    )
    package, migrations, head, resources = run(
        [installed.python, "-c", script], installed.env(), timeout=120
    ).split()
    site = str(installed.venv)
    assert package.startswith(site) and migrations.startswith(site) and resources.startswith(site)
    assert head


def test_the_installed_command_reaches_postgresql_through_psycopg(
    installed: Installed, tmp_path: Path
) -> None:
    run([installed.command, "init", tmp_path / "p"], installed.env())
    check_postgres_driver([installed.command], tmp_path / "p", installed.env())


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_installed_mcp_command_answers_an_sdk_client_over_stdio(
    installed: Installed, tmp_path: Path
) -> None:
    env = installed.env()
    run([installed.command, "demo", tmp_path / "demo"], env)
    params = StdioServerParameters(
        command=str(installed.command), args=["mcp", "--root", str(tmp_path / "demo")], env=env
    )
    async with Client(params, mode="legacy") as client:  # entering it sent `initialize` and got the answer
        info: Any = client.server_info
        assert info is not None and info.name
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "ralph_status" in names


def test_the_installed_window_opens_offscreen_and_closes_on_ctrl_c(
    installed: Installed, tmp_path: Path
) -> None:
    env = installed.env()
    run([installed.command, "demo", tmp_path / "demo"], env)
    check_window([installed.command, "open", tmp_path / "demo"], env)
