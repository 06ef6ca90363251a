"""The window says why: the loop ends when all work is done, a failure names its reason, Start names only
what it knows and Cancel keeps nothing, a missing program points to its field, the Dry run says why."""

from __future__ import annotations

import shlex
import sys

import pytest
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import LoopState, Recipe, SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.loop.model import ALL_DONE, EventKind, LiveEvent
from ralph_desk.loop.start_summary import StartSummary
from ralph_desk.project import read_config
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.gui.test_loop_pane import embedded, loop_window, qt_loop, wiring
from tests.gui.test_rehearsal_loop import forget_start_confirmation, no_agent_programs, start_dialog

__all__ = ["embedded", "loop_window", "no_agent_programs", "qt_loop"]

LOOP_MS = 60_000
WAIT_MS = 5000


def settle_all_work(services: Services, keep: int | None = None) -> None:
    """Answer every open question and skip every task not done (but `keep`): nothing waits for a person."""
    for ask in services.inbox.asks(open_only=True):
        services.inbox.answer(ask.id, "fine")
    for task in services.tasks.list():
        if task.id != keep and task.status not in (TaskStatus.DONE, TaskStatus.SKIPPED):
            services.tasks.move(task.id, TaskStatus.SKIPPED.value, Mover.IMPORT)


@pytest.mark.slow
def test_the_loop_ends_once_all_work_is_done_says_so_and_a_new_task_waits_for_the_next_start(
    qtbot: QtBot,
    no_agent_programs: None,
    qt_loop: qasync.QEventLoop,
    loop_window: MainWindow,
    services: Services,
) -> None:
    last = services.tasks.create(feature="tide-data", discipline="backend", title="Export tides as CSV")
    settle_all_work(services, keep=last.id)
    pane = loop_window.loop

    pane.start.click()
    settle(qtbot, loop_window)

    qtbot.waitUntil(lambda: pane.phase is Phase.COMPLETED, timeout=LOOP_MS)
    assert services.tasks.get(last.id).status is TaskStatus.DONE
    assert pane.view.reason == ALL_DONE and ALL_DONE in pane.state.toolTip()
    assert ("The loop stopped", ALL_DONE) in controller(loop_window).notifier.sent
    qtbot.waitUntil(lambda: not wiring(loop_window).running, timeout=WAIT_MS)
    assert pane.start.isEnabled()
    runs = len(services.sessions.list_loop_runs(limit=100))

    new = services.tasks.create(feature="tide-data", discipline="backend", title="Added after the end")
    qtbot.waitUntil(lambda: new.id in controller(loop_window).directory.by_id, timeout=WAIT_MS)
    settle(qtbot, loop_window)

    assert not wiring(loop_window).running and pane.phase is Phase.COMPLETED
    assert services.sessions.list(task_id=new.id) == []
    assert len(services.sessions.list_loop_runs(limit=100)) == runs
    assert services.tasks.get(new.id).status is TaskStatus.PENDING


def test_the_settings_offer_to_wait_for_new_tasks_instead(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    form = window.loop.settings
    assert form.when_all_done.currentData() == "stop"

    form.when_all_done.setCurrentIndex(form.when_all_done.findData("wait"))
    assert form.changes() == {"when_all_done": "wait"}
    form.save.click()
    settle(qtbot, window)

    qtbot.waitUntil(lambda: read_config(services.paths).when_all_done == "wait", timeout=WAIT_MS)


def test_a_failed_task_is_notified_with_why_it_failed(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    task = services.tasks.create(feature="tide-data", discipline="backend", title="Crashes on start")
    crash = "the agent exited with code 3; its standard error ended with:\nError: invalid API key"
    services.sessions.start_session("crash-1", task.id, Recipe.TASK_EXECUTION, "command", None)
    services.sessions.finish_session("crash-1", exit_code=3, outcome=SessionOutcome.STUCK.value, error=crash)
    services.tasks.move(task.id, TaskStatus.FAILED.value, Mover.IMPORT)
    sent = controller(window).notifier.sent

    qtbot.waitUntil(
        lambda: any(title.startswith(f"Task #{task.id} failed") for title, _ in sent), timeout=WAIT_MS
    )

    ((title, text),) = [(title, text) for title, text in sent if title.startswith(f"Task #{task.id} failed")]
    assert title == f"Task #{task.id} failed: Crashes on start"
    assert "exited with code 3" in text and "invalid API key" in text
    card = window.inbox.failed.card(task.id)
    assert card is not None and "invalid API key" in card.reason.text()
    assert "no closing verb" not in card.reason.text()
    assert card.reason.text().count("exited with code 3") == 1  # said once, by the crash itself


def test_the_persons_own_stop_after_the_session_is_not_notified(qtbot: QtBot, window: MainWindow) -> None:
    loop = wiring(window)
    stopped = LiveEvent(
        EventKind.LOOP_STATE, LoopState.STOPPED.value, {"reason": "stopped by the human after the session"}
    )
    limit = LiveEvent(
        EventKind.LOOP_STATE, LoopState.COMPLETED.value, {"reason": "reached the maximum of 1 iterations"}
    )

    with qtbot.assertNotEmitted(loop.sig_stopped_by_itself):
        loop._on_event(stopped)
    with qtbot.waitSignal(loop.sig_stopped_by_itself, timeout=WAIT_MS):
        loop._on_event(limit)


def test_the_start_of_a_command_agent_names_no_model_or_spend_and_cancel_keeps_no_settings(
    qtbot: QtBot, loop_window: MainWindow, services: Services, settings: QSettings
) -> None:
    forget_start_confirmation(settings, services)
    before = read_config(services.paths)
    form = loop_window.loop.settings
    form.agent.setCurrentIndex(form.agent.findData("command"))
    form.command.setText(shlex.join([sys.executable, "-c", "pass", "{prompt_file}"]))
    form.budget.setValue(3.5)

    loop_window.loop.start.click()
    settle(qtbot, loop_window)

    dialog = start_dialog(loop_window)
    shown = {name: value.text() for name, value in dialog.values.items()}
    assert "sonnet" not in shown["Model"] and "chosen by the command" in shown["Model"]
    assert "the cost the command reports" in shown["Budget"]
    dialog.reject()
    settle(qtbot, loop_window)

    assert read_config(services.paths) == before
    assert not wiring(loop_window).running and form.dirty


def test_a_command_summary_and_a_claude_summary_differ_in_what_they_can_know() -> None:
    command = StartSummary("command", "python", "sonnet", 2.0, None, 3, True, 10)
    claude = StartSummary("claude", "/usr/bin/claude", "sonnet", 2.0, None, 3, True, 10)

    assert dict(command.lines())["Model"].startswith("chosen by the command")
    assert dict(claude.lines())["Model"] == "sonnet"
    assert dict(claude.lines())["Budget"] == "stops at $2.00 per run"


def test_claude_code_not_found_points_to_the_program_field(
    qtbot: QtBot, window: MainWindow, services: Services, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("RALPH_CLAUDE_BIN", raising=False)
    window.show_pane("loop")
    form = window.loop.settings
    form.agent.setCurrentIndex(form.agent.findData("claude"))
    form.agent_bin.setText("")

    window.loop.start.click()
    settle(qtbot, window)

    assert window.message_bar.level == "error"
    assert "Claude Code was not found" in window.message_bar.text
    assert "Program field" in window.message_bar.text
    assert form.agent_bin.hasFocus() or window.focusWidget() is form.agent_bin


def test_the_dry_run_says_why_nothing_would_run(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    settle_all_work(services)
    task = services.tasks.create(feature="tide-data", discipline="backend", title="Asks first")
    services.tasks.move(task.id, TaskStatus.NEEDS_INPUT.value, Mover.IMPORT)
    services.signals.record(task.id, None, "ask", question="Metres or feet?", blocking=True)
    window.show_pane("loop")

    window.loop.preview.click()
    settle(qtbot, window)

    dialog = window.loop.preview_dialog
    assert dialog is not None and dialog.tabs is None
    texts = " ".join(child.text() for child in dialog.findChildren(QLabel))
    assert "waiting for 1 question to answer" in texts
    dialog.reject()
