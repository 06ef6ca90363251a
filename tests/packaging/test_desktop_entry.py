"""The Linux desktop entry, its icon and `packaging/install-desktop-entry` (quick: nothing is built)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from ralph_desk.gui.main_window import APP_NAME
from tests.packaging.helpers import REPO

PACKAGING = REPO / "packaging"
INSTALL = PACKAGING / "install-desktop-entry"


def read_entry(path: Path) -> dict[str, str]:
    """The keys of the [Desktop Entry] group."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    entry: dict[str, str] = {}
    for line in lines[1:]:
        if not line or line.startswith("#"):
            continue
        assert not line.startswith("["), "one group only"
        key, _, value = line.partition("=")
        assert key not in entry, f"{key} twice"
        entry[key] = value
    return entry


def exec_arguments(value: str) -> list[str]:
    """An Exec= value as the Desktop Entry Specification reads it: string escapes, then quoting."""
    unescaped, index = [], 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value):
            following = value[index + 1]
            unescaped.append(
                {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(following, "\\" + following)
            )
            index += 2
            continue
        unescaped.append(char)
        index += 1
    text = "".join(unescaped)
    arguments, current, quoted, index = [], [], False, 0
    while index < len(text):
        char = text[index]
        if quoted and char == "\\" and index + 1 < len(text) and text[index + 1] in '"`$\\':
            current.append(text[index + 1])
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char == " " and not quoted:
            if current:
                arguments.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    assert not quoted, "unbalanced quotes"
    if current:
        arguments.append("".join(current))
    return [argument.replace("%%", "%") for argument in arguments]


def test_the_desktop_entry_names_the_app_as_qt_announces_it() -> None:
    entry = read_entry(PACKAGING / f"{APP_NAME}.desktop")  # QGuiApplication.setDesktopFileName(APP_NAME)
    assert entry["Type"] == "Application"
    assert entry["Icon"] == APP_NAME
    assert entry["StartupWMClass"] == APP_NAME
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")
    assert exec_arguments(entry["Exec"]) == ["ralph-desk"]


def _render_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("render_icon", PACKAGING / "render_icon.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_icon_is_256_pixels_and_drawn_from_the_app_svg(qapp: object, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.png"
    _render_module().render(REPO / "resources" / "icons" / "app.svg", fresh, 256)
    committed = QImage(str(PACKAGING / "ralph-desk.png")).convertToFormat(QImage.Format.Format_ARGB32)
    drawn = QImage(str(fresh)).convertToFormat(QImage.Format.Format_ARGB32)
    assert (committed.width(), committed.height()) == (256, 256)
    assert (drawn.width(), drawn.height()) == (256, 256)
    old, new = bytes(committed.constBits()), bytes(drawn.constBits())  # type: ignore[call-overload]
    largest = max(abs(a - b) for a, b in zip(old, new, strict=True))
    assert largest <= 8, "packaging/ralph-desk.png is out of date: run `python packaging/render_icon.py`"


def install(data_home: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_DATA_HOME": str(data_home)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        ["bash", str(INSTALL), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    "command",
    [
        "/usr/local/bin/ralph-desk",
        "/opt/my apps/ralph desk/ralph-desk",
        '/odd/$HOME/"q"/`x`/a\\b/50%/ralph-desk',
    ],
)
def test_the_installer_writes_the_entry_and_icon_for_the_given_command(tmp_path: Path, command: str) -> None:
    result = install(tmp_path, "--exec", command)
    assert result.returncode == 0, result.stderr
    entry_file = tmp_path / "applications" / "ralph-desk.desktop"
    icon_file = tmp_path / "icons" / "hicolor" / "256x256" / "apps" / "ralph-desk.png"
    entry = read_entry(entry_file)
    assert exec_arguments(entry["Exec"]) == [command]
    assert entry["TryExec"].replace("\\\\", "\\") == command
    assert entry["Icon"] == "ralph-desk"
    assert icon_file.read_bytes() == (PACKAGING / "ralph-desk.png").read_bytes()
    assert stat.S_IMODE(entry_file.stat().st_mode) == 0o644
    validator = shutil.which("desktop-file-validate")  # Debian's desktop-file-utils, where installed
    if validator is not None:
        checked = subprocess.run([validator, str(entry_file)], capture_output=True, text=True, check=False)
        assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout + checked.stderr

    removed = install(tmp_path, "--uninstall")
    assert removed.returncode == 0, removed.stderr
    assert not entry_file.exists() and not icon_file.exists()


def test_the_installer_finds_the_command_on_the_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "ralph-desk"
    command.write_text("#!/bin/sh\n")
    command.chmod(0o755)
    result = install(tmp_path / "share", path=f"{bin_dir}:/usr/bin:/bin")
    assert result.returncode == 0, result.stderr
    entry = read_entry(tmp_path / "share" / "applications" / "ralph-desk.desktop")
    if (REPO / "dist" / "ralph-desk" / "ralph-desk").is_file():  # a built app beside the checkout wins
        assert exec_arguments(entry["Exec"]) == [str(REPO / "dist" / "ralph-desk" / "ralph-desk")]
    else:
        assert exec_arguments(entry["Exec"]) == [str(command)]


def test_the_installer_says_what_to_do_when_there_is_no_app(tmp_path: Path) -> None:
    lonely = tmp_path / "packaging"
    lonely.mkdir()
    for name in ("install-desktop-entry", "ralph-desk.desktop", "ralph-desk.png"):
        (lonely / name).write_bytes((PACKAGING / name).read_bytes())
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "share"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        ["bash", str(lonely / "install-desktop-entry")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "no ralph-desk found" in result.stderr
    assert not (tmp_path / "share" / "applications").exists()
