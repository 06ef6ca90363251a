"""The README's staged pictures agree with themselves: the running sessions match the settings shown."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from tests.gui.conftest import settle

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshots.py"


def _screenshots() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshots_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses in the script look their module up
    spec.loader.exec_module(module)
    return module


def test_the_staged_sessions_run_as_the_form_says_and_leave_the_settings_as_they_were(
    qtbot: QtBot, window: MainWindow
) -> None:
    scenes = _screenshots().SCENES
    settle(qtbot, window)
    form, sessions = window.loop.settings, window.loop.sessions
    saved = form.values()

    scenes["loop-sessions"](window)
    rows = sessions.rows

    assert len(rows) == form.parallel.value() == 3
    assert {row.agent for row in rows} == {form.agent.currentData()}
    assert not form.dirty  # the staged settings are shown, not an edit waiting to be saved
    scenes["loop"](window)
    assert form.values() == saved and not form.dirty and sessions.rows == []
