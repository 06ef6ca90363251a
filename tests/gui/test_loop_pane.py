"""The Loop pane: settings, start/pause/stop, the live stream of an agent's session, the history."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from collections.abc import Coroutine, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest
import qasync
from PySide6.QtCore import QModelIndex, QSettings, Qt
from PySide6.QtWidgets import QApplication, QPlainTextEdit
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window, embedded_mcp
from ralph_desk.domain.enums import Recipe, SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.history import HistoryRow, HistoryTableModel
from ralph_desk.gui.models.stream import StreamLine, StreamModel, line_of
from ralph_desk.gui.panes.loop.dry_run import TOOLS
from ralph_desk.gui.panes.loop.pane import LoopPane
from ralph_desk.gui.panes.loop.settings_form import LoopSettingsForm
from ralph_desk.gui.panes.loop.state import BUTTONS, LoopView, Phase
from ralph_desk.gui.panes.loop.stream import StreamView
from ralph_desk.gui.panes.loop.wiring import LoopWiring, program_key, start_confirmed_key
from ralph_desk.loop.lock import LoopLock
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.planner import peek_next_task
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import read_config, update_config
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.loop import conftest as loop_fixtures
from tests.loop.conftest import Agent, StartApi, heading, verb
from tests.support.fake_model_api import Hang, Text, ToolCalls
from tests.support.ide import HELD_AGENT, ide_client

T = TypeVar("T")

# The loop tests' agents (the stand-in everywhere, the real Claude Code CLI when installed) and their
# scripted model API.
agent = loop_fixtures.agent
start_api = loop_fixtures.start_api

WAIT_MS = 3000
SESSION_MS = 120_000
SERVER_MS = 20_000


@pytest.fixture
def qt_loop(qapp: QApplication, qtbot: QtBot) -> Iterator[qasync.QEventLoop]:
    """The window's asyncio loop: qasync over the Qt event loop that qtbot's waits already run."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()  # e.g. the runner's delayed SIGKILL of an agent that already ended
    qtbot.waitUntil(lambda: all(task.done() for task in pending), timeout=WAIT_MS)
    # stop() would quit Qt's event loop, and with it every later qtbot wait; only mark it stopped.
    loop._QEventLoop__is_running = False
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)


def finish(
    qtbot: QtBot, loop: qasync.QEventLoop, work: Coroutine[Any, Any, T], timeout: int = SERVER_MS
) -> T:
    """Run a coroutine in the window's loop while Qt's events are processed."""
    task: asyncio.Task[T] = loop.create_task(work)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


@pytest.fixture
def embedded(qtbot: QtBot, qt_loop: qasync.QEventLoop, services: Services) -> Iterator[EmbeddedMcp]:
    """The embedded MCP server the loop's agents reach, serving in the window's loop."""
    server = EmbeddedMcp(services)
    finish(qtbot, qt_loop, server.start())
    yield server
    finish(qtbot, qt_loop, server.stop())


@pytest.fixture
def loop_window(
    qtbot: QtBot,
    qt_loop: qasync.QEventLoop,
    services: Services,
    settings: QSettings,
    embedded: EmbeddedMcp,
    opened_files: list[str],
) -> MainWindow:
    """The window with the embedded server as its loop's issuer, on the Loop pane (Start confirmed before)."""
    settings.setValue(start_confirmed_key(str(services.paths.root)), True)

    def open_file(path: str) -> bool:
        opened_files.append(path)
        return True

    built = build_window(
        services,
        settings=settings,
        mcp_url=embedded.url,
        use_tray=False,
        open_file=open_file,
        issuer=embedded,
    )

    def shut_down(window: MainWindow) -> None:
        # Called by pytest-qt before it closes and deletes the window, ahead of every fixture's teardown.
        finish(qtbot, qt_loop, wiring(window).shutdown(), timeout=60_000)
        controller(window).feed.stop()

    qtbot.addWidget(built, before_close_func=shut_down)
    built.resize(1400, 900)
    built.show()
    built.show_pane("loop")
    settle(qtbot, built)
    return built


def wiring(window: MainWindow) -> LoopWiring:
    found = window.findChild(LoopWiring)
    assert found is not None
    return found


def choose_agent(form: LoopSettingsForm, chosen: Agent) -> None:
    """Pick the agent in the settings form as a user would: its kind, then its program or command."""
    form.agent.setCurrentIndex(form.agent.findData(chosen.settings.agent))
    if chosen.settings.agent_command:
        form.command.setText(chosen.settings.agent_command)
    else:
        form.agent_bin.setText(chosen.settings.agent_bin or "")


def texts(lines: list[StreamLine], kind: EventKind) -> list[str]:
    return [line.text for line in lines if line.kind is kind]


# --- running the loop -----------------------------------------------------------------------


@pytest.mark.slow
def test_start_shows_the_live_session_and_stop_ends_the_loop(
    qtbot: QtBot, loop_window: MainWindow, services: Services, agent: Agent, start_api: StartApi
) -> None:
    for task in services.tasks.list(status=TaskStatus.IN_PROGRESS.value):
        services.tasks.move(
            task.id, TaskStatus.PENDING.value, Mover.IMPORT
        )  # as the loop recovers them at start
    plan = peek_next_task(services)
    assert plan is not None and plan.task is not None
    first = plan.task
    api = start_api(
        [Hang()],
        **{
            heading(first.id): [
                ToolCalls(
                    [verb("done", summary="Constituents parsed and tested")], text="Reading the CSV first."
                ),
                Text("Session over."),
            ]
        },
    )
    pane = loop_window.loop
    seen: list[StreamLine] = []
    pane.stream.model.rowsInserted.connect(
        lambda _parent, _first, last: seen.append(pane.stream.model.lines[last])
    )
    choose_agent(pane.settings, agent)
    pane.settings.timeout.setValue(120)
    sessions_before = len(services.sessions.list(limit=500))

    pane.start.click()
    settle(qtbot, loop_window)

    assert not pane.start.isEnabled() and pane.stop.isEnabled()
    qtbot.waitUntil(lambda: services.tasks.get(first.id).status is TaskStatus.DONE, timeout=SESSION_MS)
    qtbot.waitUntil(lambda: any(r.script_key is None for r in api.turn_requests), timeout=SESSION_MS)
    qtbot.waitUntil(lambda: pane.phase is Phase.RUNNING and pane.view.task != "", timeout=WAIT_MS)

    assert "Reading the CSV first." in texts(seen, EventKind.ASSISTANT_TEXT)
    (call,) = [text for text in texts(seen, EventKind.TOOL_CALL) if text.startswith("done ")]
    assert "Constituents parsed and tested" in call
    assert any(line.kind is EventKind.TOOL_RESULT and not line.error for line in seen)
    assert texts(seen, EventKind.SESSION_ENDED)[0].startswith("Session ended: done (closed with done)")
    assert texts(seen, EventKind.COST)
    second = pane.view.task
    assert not second.startswith(f"#{first.id} ")
    assert pane.state.text() == "running" and second in pane.detail.text()
    assert pane.stream.title.text() == second
    assert pane.stream.model.lines[0].kind is EventKind.SESSION_STARTED
    assert "running " in pane.stream.counts.text()  # the live session's elapsed time
    assert pane.pause.isEnabled() and pane.stop.isEnabled() and not pane.start.isEnabled()

    pane.stop.click()
    settle(qtbot, loop_window)
    box = wiring(loop_window).stop_box
    assert box is not None and box.defaultButton() is box.after_button
    box.now_button.click()
    settle(qtbot, loop_window)

    assert pane.phase is Phase.STOPPING and not pane.stop.isEnabled()
    qtbot.waitUntil(lambda: pane.phase is Phase.STOPPED, timeout=SESSION_MS)
    assert pane.start.isEnabled() and not pane.stop.isEnabled() and not pane.pause.isEnabled()
    assert "stopped by the human" in pane.state.toolTip()
    qtbot.waitUntil(lambda: pane.history.model.rowCount() == sessions_before + 2, timeout=WAIT_MS)

    def newest_outcomes() -> dict[int | None, str]:
        model = pane.history.model
        return {model.record(row).session.task_id: model.record(row).session.outcome for row in range(2)}

    # the history re-reads on the change feed's next poll after the stopped session is recorded
    qtbot.waitUntil(lambda: SessionOutcome.RUNNING.value not in newest_outcomes().values(), timeout=WAIT_MS)
    outcomes = newest_outcomes()
    assert outcomes[first.id] == SessionOutcome.DONE.value
    stopped_id = next(task_id for task_id in outcomes if task_id is not None and task_id != first.id)
    assert outcomes[stopped_id] == SessionOutcome.STOPPED.value
    stopped = services.tasks.get(stopped_id)
    assert stopped.status is TaskStatus.PENDING and stopped.stuck_count == 0
    assert not loop_window.message_bar.isVisible() or loop_window.message_bar.level != "error"


def test_a_missing_agent_program_is_shown_as_an_error_and_nothing_starts(
    qtbot: QtBot, window: MainWindow, services: Services, tmp_path: Path
) -> None:
    pane = window.loop
    runs_before = services.sessions.list_loop_runs(limit=100)
    pane.settings.agent.setCurrentIndex(pane.settings.agent.findData("claude"))
    pane.settings.agent_bin.setText(str(tmp_path / "no-such-claude"))

    pane.start.click()
    settle(qtbot, window)

    assert window.message_bar.level == "error"
    assert "Could not start the loop" in window.message_bar.text
    assert "no-such-claude" in window.message_bar.text
    assert pane.phase is Phase.IDLE and pane.start.isEnabled()
    assert services.sessions.list_loop_runs(limit=100) == runs_before


def test_a_loop_already_running_on_the_project_is_refused_in_the_message_bar(
    qtbot: QtBot, loop_window: MainWindow, services: Services
) -> None:
    pane = loop_window.loop
    pane.settings.agent_bin.setText(sys.executable)
    pane.settings.save.click()
    settle(qtbot, loop_window)
    lock = LoopLock(services.paths.ralph / "loop.lock")
    lock.acquire()
    try:
        pane.start.click()
        settle(qtbot, loop_window)
        qtbot.waitUntil(lambda: "already running" in loop_window.message_bar.text, timeout=WAIT_MS)
    finally:
        lock.release()

    assert loop_window.message_bar.level == "error"
    assert "a loop is already running on this project (pid " in loop_window.message_bar.text
    qtbot.waitUntil(lambda: pane.start.isEnabled(), timeout=WAIT_MS)
    assert pane.phase is Phase.IDLE


def test_without_the_embedded_server_the_loop_says_why_it_cannot_start(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.loop.settings.agent_bin.setText(sys.executable)

    window.loop.start.click()
    settle(qtbot, window)

    assert "embedded MCP server is not running" in window.message_bar.text


# --- settings and dry run -------------------------------------------------------------------


def test_settings_and_the_program_are_saved_to_config_json(
    qtbot: QtBot, window: MainWindow, services: Services, settings: QSettings
) -> None:
    form = window.loop.settings
    form.agent.setCurrentIndex(form.agent.findData("codex"))
    form.agent_bin.setText("/opt/codex/bin/codex")
    form.models[Recipe.TASK_EXECUTION].setCurrentText("haiku")
    form.max_iterations.setValue(7)
    form.budget.setValue(2.5)
    form.timeout.setValue(600)
    form.stuck.setValue(5)
    form.review.setValue(4)
    form.allow_edits.setChecked(False)
    assert form.dirty and form.save.isEnabled()

    form.save.click()
    settle(qtbot, window)

    config = read_config(services.paths)
    assert config.agent == "codex"
    assert config.models["task_execution"] == "haiku"
    assert (config.max_iterations, config.max_cost_usd, config.session_timeout_s) == (7, 2.5, 600)
    assert (config.stuck_threshold, config.opus_review_every, config.allow_edits) == (5, 4, False)
    assert config.agent_bin == "/opt/codex/bin/codex"
    assert settings.value(program_key(str(services.paths.root))) is None
    assert not form.dirty


def test_zero_means_no_limit_and_no_budget(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    form = window.loop.settings
    form.max_iterations.setValue(0)
    form.budget.setValue(0)

    form.save.click()
    settle(qtbot, window)

    config = read_config(services.paths)
    assert config.max_iterations == 0 and config.max_cost_usd is None
    assert form.max_iterations.text() == "no limit" and form.budget.text() == "no budget"


def test_the_dry_run_shows_the_next_prompt_and_its_tools(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    plan = peek_next_task(services)
    assert plan is not None and plan.task is not None

    window.loop.preview.click()
    settle(qtbot, window)

    dialog = window.loop.preview_dialog
    assert dialog is not None and dialog.tabs is not None
    prompt = dialog.tabs.widget(0)
    assert isinstance(prompt, QPlainTextEdit)
    assert heading(plan.task.id) in prompt.toPlainText()
    assert dialog.tabs.tabText(TOOLS) == f"Tools ({len(plan.enabled_tools)})"
    assert services.tasks.get(plan.task.id).status is TaskStatus.PENDING
    dialog.reject()


# --- the stream and the history -------------------------------------------------------------


def test_the_history_lists_sessions_and_opens_a_transcript(
    qtbot: QtBot, window: MainWindow, services: Services, opened_files: list[str]
) -> None:
    history = window.loop.history
    sessions = services.sessions.list(limit=200)
    assert history.model.rowCount() == len(sessions)
    row = history.model.row_of(sessions[0].id)
    assert row is not None

    history.table.selectRow(row)
    history.open_button.click()
    settle(qtbot, window)

    assert opened_files == [str(services.paths.root / (sessions[0].transcript_path or ""))]


def test_a_session_recorded_elsewhere_is_listed_after_a_read_off_the_windows_thread(
    qtbot: QtBot, window: MainWindow, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    readers: list[str] = []
    sessions = services.sessions
    listed = sessions.list

    def list_noting_the_thread(**kwargs: Any) -> Any:
        readers.append(threading.current_thread().name)
        return listed(**kwargs)

    monkeypatch.setattr(sessions, "list", list_noting_the_thread)
    task = services.tasks.list()[0].id
    sessions.start_session("s-elsewhere", task_id=task, recipe=Recipe.TASK_EXECUTION.value, agent="claude")

    qtbot.waitUntil(lambda: window.loop.history.model.row_of("s-elsewhere") is not None, timeout=WAIT_MS)

    assert readers and threading.main_thread().name not in readers


def test_the_newest_session_is_shown_again_from_its_transcript_when_nothing_runs(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    newest = services.sessions.list(limit=1)[0]
    stream = window.loop.stream

    assert stream.title.text().startswith(f"Past session — #{newest.task_id} ")
    kinds = {line.kind for line in stream.model.lines}
    assert {EventKind.ASSISTANT_TEXT, EventKind.TOOL_CALL, EventKind.TOOL_RESULT, EventKind.COST} <= kinds


def test_the_stream_follows_new_lines_unless_scrolled_up(qtbot: QtBot) -> None:
    view = StreamView()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    view.start_session("#1 A task", "s-1")
    for number in range(120):
        view.add(StreamLine(EventKind.ASSISTANT_TEXT, f"line {number}", f"line {number}"))
    qtbot.waitUntil(view.at_end, timeout=WAIT_MS)
    bar = view.list.verticalScrollBar()

    bar.setValue(0)
    for number in range(20):
        view.add(StreamLine(EventKind.TOOL_CALL, f"call {number}", ""))

    assert bar.value() == 0 and not view.following
    bar.setValue(bar.maximum())
    view.add(StreamLine(EventKind.TOOL_RESULT, "last", ""))
    qtbot.waitUntil(view.at_end, timeout=WAIT_MS)


def test_each_phase_allows_the_right_buttons(qtbot: QtBot) -> None:
    pane = LoopPane()
    qtbot.addWidget(pane)
    for phase, allowed in BUTTONS.items():
        pane.show_view(LoopView(phase))
        shown = (
            pane.start.isEnabled(),
            pane.pause.isEnabled(),
            pane.resume.isEnabled(),
            pane.stop.isEnabled(),
        )
        assert shown == (allowed.start, allowed.pause, allowed.resume, allowed.stop), phase

    pane.show_view(LoopView(Phase.RATE_LIMITED, resumes_at=datetime(2030, 1, 1, 12, 5, tzinfo=UTC)))
    assert pane.state.text().startswith("rate-limited until ")
    pane.show_view(LoopView(Phase.WAITING))
    assert pane.state.text() == "waiting for input" and "Inbox" in pane.detail.text()


def test_the_buttons_ask_for_start_pause_resume_and_stop_through_the_panes_signals(qtbot: QtBot) -> None:
    pane = LoopPane()
    qtbot.addWidget(pane)
    for phase, button, signal in (
        (Phase.STOPPED, pane.start, pane.sig_start_requested),
        (Phase.RUNNING, pane.pause, pane.sig_pause_requested),
        (Phase.PAUSED, pane.resume, pane.sig_resume_requested),
        (Phase.RUNNING, pane.stop, pane.sig_stop_requested),
        (Phase.STOPPED, pane.preview, pane.sig_preview_requested),
    ):
        pane.show_view(LoopView(phase))
        with qtbot.waitSignal(signal, timeout=WAIT_MS):
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_edited_settings_are_asked_to_be_saved_through_the_panes_signal(qtbot: QtBot) -> None:
    pane = LoopPane()
    qtbot.addWidget(pane)
    pane.settings.timeout.setValue(77)

    with qtbot.waitSignal(pane.sig_save_settings_requested, timeout=WAIT_MS) as saved:
        qtbot.mouseClick(pane.settings.save, Qt.MouseButton.LeftButton)

    assert saved.args[0]["session_timeout_s"] == 77


def test_the_stream_and_history_models_pass_the_model_tester(
    qtmodeltester: ModelTester, services: Services
) -> None:
    stream = StreamModel(limit=5)
    events = [
        LiveEvent(EventKind.SESSION_STARTED, "A task", {"task_id": 3, "recipe": "task_execution"}, "s"),
        LiveEvent(EventKind.ASSISTANT_TEXT, "Thinking"),
        LiveEvent(EventKind.TOOL_CALL, 'done {"summary": "x"}', {"name": "mcp__ralph__done", "input": {}}),
        LiveEvent(EventKind.TOOL_RESULT, "error: nope", {"is_error": True, "content": "nope"}),
        LiveEvent(EventKind.COST, "$0.01", {"cost_usd": 0.01, "turns": 2}),
        LiveEvent(EventKind.SESSION_ENDED, "done", {"cost_usd": 0.01, "turns": 2}),
    ]
    for event in events:
        stream.append(line_of(event))
    history = HistoryTableModel()
    history.set_items([HistoryRow(session, "a title") for session in services.sessions.list(limit=50)])

    qtmodeltester.check(stream)
    qtmodeltester.check(history)
    assert stream.rowCount() == 5
    assert stream.index(2, 0).data() == "error: nope" and stream.lines[2].error
    assert stream.data(QModelIndex()) is None


@pytest.mark.slow
def test_the_ide_tools_of_the_windows_server_report_and_stop_the_panes_loop(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, services: Services, settings: QSettings
) -> None:
    for task in services.tasks.list(status=TaskStatus.IN_PROGRESS.value):
        services.tasks.move(
            task.id, TaskStatus.PENDING.value, Mover.IMPORT
        )  # as the loop recovers them at start
    host, control = embedded_mcp(services)
    finish(qtbot, qt_loop, host.start())
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    agents: list[socket.socket] = []
    held = [sys.executable, str(HELD_AGENT), str(listener.getsockname()[1])]
    update_config(services.paths, agent="command", agent_command=held)
    settings.setValue(start_confirmed_key(str(services.paths.root)), True)
    window = build_window(
        services, settings=settings, mcp_url=host.url, use_tray=False, issuer=host, loop_control=control
    )
    qtbot.addWidget(window)

    async def ask(tool: str) -> dict[str, Any]:
        async with ide_client(host) as client:
            result = await client.call_tool(tool, {})
        assert not result.is_error, result.content
        return result.structured_content or {}

    def agent_started() -> bool:
        try:
            agents.append(listener.accept()[0])
        except BlockingIOError:
            return False
        return True

    try:
        window.loop.start.click()
        qtbot.waitUntil(agent_started, timeout=SESSION_MS)
        status = finish(qtbot, qt_loop, ask("ralph_status"))
        stopped = finish(qtbot, qt_loop, ask("ralph_stop"))
        qtbot.waitUntil(lambda: window.loop.phase is Phase.STOPPED, timeout=SESSION_MS)
    finally:
        for line in (*agents, listener):
            line.close()
        finish(qtbot, qt_loop, wiring(window).shutdown(), timeout=60_000)
        controller(window).feed.stop()
        finish(qtbot, qt_loop, host.stop())
    assert status["status"] == "running" and status["currentTask"] is not None
    assert stopped["status"] == "stopped" and stopped["loopId"] == status["loopId"]
