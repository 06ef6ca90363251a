"""The Loop pane tells the truth: all work done, what it waits on, a live clock and turns, outcomes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui import theme
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.stream import StreamModel, line_of
from ralph_desk.gui.panes.loop.pane import LoopPane
from ralph_desk.gui.panes.loop.state import Backlog, LoopView, Phase
from ralph_desk.gui.panes.loop.stream import StreamView
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.services.container import Services
from tests.gui.conftest import settle

WAIT_MS = 3000


def test_when_every_task_is_done_or_skipped_the_loop_says_all_work_is_done(qtbot: QtBot) -> None:
    pane = LoopPane()
    qtbot.addWidget(pane)
    backlog = Backlog.of([TaskStatus.DONE, TaskStatus.DONE, TaskStatus.SKIPPED])

    pane.show_view(LoopView(Phase.WAITING, backlog=backlog))

    assert pane.state.text() == "all work done"
    assert "all 3 tasks are done or skipped" in pane.detail.text()
    assert "waiting for input" not in pane.state.text()


def test_waiting_says_what_it_waits_on(qtbot: QtBot) -> None:
    pane = LoopPane()
    qtbot.addWidget(pane)
    backlog = Backlog.of([TaskStatus.NEEDS_INPUT, TaskStatus.NEEDS_INPUT, TaskStatus.FAILED, TaskStatus.DONE])

    pane.show_view(LoopView(Phase.WAITING, backlog=backlog))

    assert pane.state.text() == "waiting for input"
    assert "2 tasks need answers · 1 task failed" in pane.detail.text()


def test_the_window_says_all_work_done_once_the_last_tasks_are_finished(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    assert window.loop.state.text() == "not running"

    for task in services.tasks.list():
        if task.status not in (TaskStatus.DONE, TaskStatus.SKIPPED):
            services.tasks.move(task.id, TaskStatus.DONE.value, Mover.IMPORT)

    qtbot.waitUntil(lambda: window.loop.state.text() == "all work done", timeout=WAIT_MS)


def test_a_session_without_a_closing_verb_is_not_shown_as_a_green_success(qtbot: QtBot) -> None:
    model = StreamModel()
    result = line_of(LiveEvent(EventKind.RESULT, "finished (success) after 4 turns", {"is_error": False}))
    ended = line_of(
        LiveEvent(EventKind.SESSION_ENDED, SessionOutcome.STUCK.value, {"turns": 4, "closing_verb": None})
    )
    model.append(result)
    model.append(ended)

    done = theme.status_color(TaskStatus.DONE)
    assert result.text == "Agent process finished (success) after 4 turns"
    assert model.data(model.index(0, 0), 9) != done  # ForegroundRole
    assert ended.text.startswith("Session ended: stuck (no closing verb)")
    assert model.data(model.index(1, 0), 9) == theme.outcome_color(SessionOutcome.STUCK.value)
    assert theme.outcome_color(SessionOutcome.STUCK.value) != done


def test_a_live_session_shows_its_elapsed_time_and_counts_turns_as_they_happen(qtbot: QtBot) -> None:
    view = StreamView()
    qtbot.addWidget(view)
    view.start_session("#3 Parse constituents", "s-1", started=datetime.now(UTC) - timedelta(seconds=65))

    for kind in (EventKind.ASSISTANT_TEXT, EventKind.TOOL_CALL, EventKind.TOOL_RESULT, EventKind.TOOL_CALL):
        event = LiveEvent(kind, "Reading the tide table")
        view.figures.take(event)
        view.add(line_of(event))

    assert "2 turns" in view.counts.text()
    assert "running 1 min" in view.counts.text()
    view.figures.take(LiveEvent(EventKind.COST, "", {"cost_usd": 0.12, "turns": 5}))
    view.add(line_of(LiveEvent(EventKind.COST, "$0.12")))
    assert "5 turns" in view.counts.text() and "$0.12" in view.counts.text()
    view.end_session()
    assert "running" not in view.counts.text() and not view.clock.isActive()


def test_double_clicking_a_past_session_shows_its_stream_in_the_window(
    qtbot: QtBot, window: MainWindow, services: Services, opened_files: list[str]
) -> None:
    history = window.loop.history
    oldest = [s for s in services.sessions.list(limit=200) if s.transcript_path][-1]
    row = history.model.row_of(oldest.id)
    assert row is not None

    history.show_at(history.model.index(row, 0))
    settle(qtbot, window)

    assert window.loop.stream.title.text().startswith(f"Past session — #{oldest.task_id} ")
    assert window.loop.stream.model.lines
    assert opened_files == []
