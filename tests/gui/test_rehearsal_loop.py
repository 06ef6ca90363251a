"""Start and Stop in the window, with the demo's rehearsal agent: the whole loop in a minute, for free."""

from __future__ import annotations

from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.domain.records import AgentSession
from ralph_desk.gui.dialogs.start_loop import StartLoopDialog
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.gui.panes.loop.wiring import start_confirmed_key
from ralph_desk.services.container import Services
from tests.gui.conftest import settle
from tests.gui.test_loop_pane import embedded, finish, loop_window, qt_loop, wiring

__all__ = ["embedded", "loop_window", "qt_loop"]

REHEARSAL_MS = 60_000
WAIT = 5000


@pytest.fixture
def no_agent_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH on which no agent program (claude, codex, node…) can be found."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("RALPH_CLAUDE_BIN", raising=False)


@pytest.mark.slow
def test_the_demos_rehearsal_brings_a_question_to_the_inbox_and_finishes_a_task_within_a_minute(
    qtbot: QtBot,
    no_agent_programs: None,
    qt_loop: qasync.QEventLoop,
    loop_window: MainWindow,
    services: Services,
) -> None:
    pane = loop_window.loop
    assert pane.settings.agent.currentData() == "rehearsal"
    questions_before = loop_window.inbox.counts[0]
    done_before = {task.id for task in services.tasks.list(status=TaskStatus.DONE.value)}

    pane.start.click()
    settle(qtbot, loop_window)

    def finished() -> list[AgentSession]:
        return [s for s in services.sessions.list(limit=5) if s.outcome == SessionOutcome.DONE.value]

    qtbot.waitUntil(lambda: bool(finished()), timeout=REHEARSAL_MS)
    qtbot.waitUntil(lambda: loop_window.inbox.counts[0] > questions_before, timeout=REHEARSAL_MS)
    assert all(s.agent == "rehearsal" and s.cost_usd == 0 for s in finished())
    assert {task.id for task in services.tasks.list(status=TaskStatus.DONE.value)} - done_before
    assert pane.phase is not Phase.FAILED
    assert not loop_window.message_bar.isVisible() or loop_window.message_bar.level != "error"
    finish(qtbot, qt_loop, wiring(loop_window).shutdown(), timeout=REHEARSAL_MS)


def forget_start_confirmation(settings: QSettings, services: Services) -> None:
    """As on a computer where Start was never confirmed for this project."""
    settings.remove(start_confirmed_key(str(services.paths.root)))


def start_dialog(window: MainWindow) -> StartLoopDialog:
    dialog = wiring(window).start_dialog
    assert dialog is not None and dialog.isVisible(), window.message_bar.text
    return dialog


def in_session(qtbot: QtBot, window: MainWindow) -> str:
    """Wait until an agent works on a task; its title as shown."""
    qtbot.waitUntil(lambda: wiring(window).in_session, timeout=REHEARSAL_MS)
    return window.loop.view.task


@pytest.mark.slow
def test_start_first_says_what_will_run_and_enter_starts_it(
    qtbot: QtBot,
    qt_loop: qasync.QEventLoop,
    loop_window: MainWindow,
    services: Services,
    settings: QSettings,
) -> None:
    forget_start_confirmation(settings, services)
    pane = loop_window.loop
    runs_before = len(services.sessions.list_loop_runs(limit=100))

    pane.start.click()
    settle(qtbot, loop_window)

    dialog = start_dialog(loop_window)
    shown = {name: value.text() for name, value in dialog.values.items()}
    assert shown["Agent"].startswith("rehearsal — built into ralph-desk")
    assert shown["Budget"] == "free: no model is asked"
    runnable = len(services.tasks.next_runnable(limit=200))
    assert shown["Runnable tasks"] == str(runnable) and runnable > 0
    assert shown["Folder"].startswith("not a git repository")
    for short in ("Budget", "Model"):  # short values read on one line, not wrapped word by word
        value = dialog.values[short]
        assert value.fontMetrics().horizontalAdvance(value.text()) <= value.contentsRect().width()
    assert pane.phase is Phase.IDLE and len(services.sessions.list_loop_runs(limit=100)) == runs_before
    dialog.remember.setChecked(True)
    QTest.keyClick(dialog, Qt.Key.Key_Return)

    qtbot.waitUntil(lambda: len(services.sessions.list_loop_runs(limit=100)) == runs_before + 1, timeout=WAIT)
    assert settings.value(start_confirmed_key(str(services.paths.root)), False, bool)
    finish(qtbot, qt_loop, wiring(loop_window).shutdown(), timeout=REHEARSAL_MS)

    wiring(loop_window).start_dialog = None
    pane.start.click()  # remembered: no second question
    settle(qtbot, loop_window)

    assert wiring(loop_window).start_dialog is None and wiring(loop_window).running
    finish(qtbot, qt_loop, wiring(loop_window).shutdown(), timeout=REHEARSAL_MS)


def test_a_real_agent_shows_its_program_model_and_budget_and_cancel_starts_nothing(
    qtbot: QtBot, loop_window: MainWindow, services: Services, settings: QSettings, tmp_path: Path
) -> None:
    forget_start_confirmation(settings, services)
    program = tmp_path / "claude"
    program.write_text("#!/bin/sh\nexit 1\n")
    program.chmod(0o755)
    form = loop_window.loop.settings
    form.agent.setCurrentIndex(form.agent.findData("claude"))
    form.agent_bin.setText(str(program))
    form.budget.setValue(2.5)

    loop_window.loop.start.click()
    settle(qtbot, loop_window)

    shown = {name: value.text() for name, value in start_dialog(loop_window).values.items()}
    assert shown["Agent"] == f"claude — {program}"
    assert shown["Model"] == "sonnet"
    assert shown["Budget"] == "stops at $2.50 per run"
    start_dialog(loop_window).reject()
    assert not wiring(loop_window).running and loop_window.loop.phase is Phase.IDLE
    assert not settings.value(start_confirmed_key(str(services.paths.root)), False, bool)


@pytest.mark.slow
def test_stop_while_an_agent_works_offers_to_stop_after_the_session(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, loop_window: MainWindow, services: Services
) -> None:
    pane = loop_window.loop
    pane.start.click()
    settle(qtbot, loop_window)
    task = in_session(qtbot, loop_window)

    pane.stop.click()
    settle(qtbot, loop_window)

    box = wiring(loop_window).stop_box
    assert box is not None and box.isVisible() and task in box.text()
    assert box.defaultButton() is box.after_button
    box.after_button.click()
    settle(qtbot, loop_window)
    assert pane.phase is Phase.STOPPING
    qtbot.waitUntil(lambda: pane.phase is Phase.STOPPED, timeout=REHEARSAL_MS)
    (last,) = services.sessions.list(limit=1)
    assert last.outcome != SessionOutcome.STOPPED.value  # the session ended on its own, its work kept
    assert "after the session" in pane.state.toolTip()


@pytest.mark.slow
def test_quit_while_an_agent_works_asks_and_can_close_after_the_session(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, loop_window: MainWindow, services: Services
) -> None:
    loop_window.loop.start.click()
    settle(qtbot, loop_window)
    in_session(qtbot, loop_window)

    assert not loop_window.close()

    box = wiring(loop_window).stop_box
    assert box is not None and box.isVisible() and loop_window.isVisible()
    assert box.after_button.text() == "Quit after this session"
    with qtbot.waitSignal(loop_window.sig_closed, timeout=REHEARSAL_MS):
        box.after_button.click()
        settle(qtbot, loop_window)
    assert not wiring(loop_window).running
    (last,) = services.sessions.list(limit=1)
    assert last.outcome != SessionOutcome.STOPPED.value


@pytest.mark.slow
def test_quit_now_while_an_agent_works_closes_at_once(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, loop_window: MainWindow
) -> None:
    loop_window.loop.start.click()
    settle(qtbot, loop_window)
    in_session(qtbot, loop_window)
    assert not loop_window.close()
    box = wiring(loop_window).stop_box
    assert box is not None

    with qtbot.waitSignal(loop_window.sig_closed, timeout=WAIT):
        box.now_button.click()
        settle(qtbot, loop_window)

    assert not loop_window.isVisible()
    finish(qtbot, qt_loop, wiring(loop_window).shutdown(), timeout=REHEARSAL_MS)
