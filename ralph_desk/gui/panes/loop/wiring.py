"""The Loop pane's wiring: saves settings, runs the loop as a task of the window's event loop, shows it."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Qt, Signal

from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.domain.enums import LoopState
from ralph_desk.domain.records import AgentSession, Change, TaskSummary
from ralph_desk.gui.backend import NoBaseBranchError, Services
from ralph_desk.gui.dialogs.start_loop import StartLoopDialog
from ralph_desk.gui.dialogs.stop_loop import StopChoice, StopLoopBox, ask_when_to_stop
from ralph_desk.gui.directory import TaskDirectory
from ralph_desk.gui.models.history import HistoryRow
from ralph_desk.gui.models.stream import line_of
from ralph_desk.gui.pacer import ReadPacer
from ralph_desk.gui.panes.loop.pane import LoopPane
from ralph_desk.gui.panes.loop.running import RunningSession, RunningSessions, SessionFigures
from ralph_desk.gui.panes.loop.state import ACTIVE, Backlog, LoopView, Phase, phase_of
from ralph_desk.gui.panes.loop.transcript_window import TranscriptWindow, started_at
from ralph_desk.gui.worker import Worker
from ralph_desk.loop.agents import AgentUnavailableError, adapter_for
from ralph_desk.loop.build import build_runner
from ralph_desk.loop.idle import idle_report
from ralph_desk.loop.lock import LoopAlreadyRunningError
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.preview import SessionPreview, preview_next_session
from ralph_desk.loop.replay import TranscriptTail, replay
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.loop.start_summary import StartSummary, summarise_start
from ralph_desk.loop.trust_check import Untrusted, untrusted_start
from ralph_desk.project import ProjectConfig, ProjectError, ProjectPaths, read_config, update_config

log = logging.getLogger("ralph_desk.gui.loop")

HISTORY_LIMIT = 200
HISTORY_SPACING_MS = 500
STOP_WAIT_S = 15.0
WAKE_TOPICS = frozenset({"tasks", "signals", "inbox"})
HISTORY_TOPICS = frozenset({"sessions", "tasks"})
PROGRAM_FIELD = (
    "In this window: give its path in the Program field of the loop settings (Browse… picks the file)."
)
HUMAN_STOP = "stopped by the human"  # the runner's reason when the person stopped it
KEPT_NOTE = "This session ended; the others go on. Pick a running session above to follow it."
# The events that change what the running-sessions table shows.
FIGURE_KINDS = frozenset(
    {
        EventKind.SESSION_STARTED,
        EventKind.SESSION_ENDED,
        EventKind.ASSISTANT_TEXT,
        EventKind.TOOL_CALL,
        EventKind.COST,
        EventKind.CHECK_STARTED,
        EventKind.CHECK_ENDED,
    }
)

FileOpener = Callable[[str], bool]


def _session_title(row: HistoryRow) -> str:
    """`#4 Draw the chart` for a task's session, the recipe's name for a recipe run."""
    session = row.session
    return f"#{session.task_id} {row.task_title}".strip() if session.task_id else session.recipe


def _project_key(section: str, root: str) -> str:
    return f"loop/{section}/{hashlib.sha1(root.encode()).hexdigest()[:16]}"


def program_key(root: str) -> str:
    """The QSettings key where older windows kept a project's agent program (now agent_bin in config.json)."""
    return _project_key("agent_bin", root)


def start_confirmed_key(root: str) -> str:
    """The QSettings key that remembers "don't ask again before starting" for a project."""
    return _project_key("start_confirmed", root)


class LoopWiring(QObject):
    """Owns the running `LoopRunner` (one at a time) and turns its events into what the pane shows."""

    sig_run_started = Signal(object, object)
    """A loop run started: its `LoopRunner` and its asyncio task (the IDE tools' controller follows it)."""
    sig_stopped_by_itself = Signal(str)
    """The loop stopped on a limit or an error (not by the person): why."""

    def __init__(
        self,
        pane: LoopPane,
        services: Services,
        worker: Worker,
        directory: TaskDirectory,
        issuer: EndpointIssuer | None,
        store: QSettings,
        open_file: FileOpener | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.pane = pane
        self.services = services
        self.worker = worker
        self.directory = directory
        self.issuer = issuer
        self.store = store
        self.open_file = open_file
        self.runner: LoopRunner | None = None
        self.task: asyncio.Task[None] | None = None
        self.view = LoopView()
        self.running_sessions = RunningSessions()
        self.start_dialog: StartLoopDialog | None = None
        self.stop_box: StopLoopBox | None = None
        self.transcript_windows: dict[Path, TranscriptWindow] = {}
        """The transcript windows open, by transcript file."""
        self._close_window: Callable[[], None] | None = None  # set when the window closes after the session
        self._may_close = False
        self._after_session = False  # the person chose to stop once the current session ends
        self._backlog_due = False
        self.history_reads = ReadPacer(worker, self._start_history_read, HISTORY_SPACING_MS)
        pane.sig_start_requested.connect(self.start)
        pane.sig_pause_requested.connect(self.pause)
        pane.sig_resume_requested.connect(self.resume)
        pane.sig_stop_requested.connect(self.stop)
        pane.sig_preview_requested.connect(self.preview)
        pane.sig_save_settings_requested.connect(self.save_settings)
        pane.sig_open_transcript_requested.connect(self._open_transcript)
        pane.sig_show_transcript_requested.connect(self._show_transcript_or_open)
        pane.sig_follow_requested.connect(self.follow)

    @property
    def running(self) -> bool:
        """Whether a loop run of this window is under way."""
        return self.task is not None and not self.task.done()

    @property
    def in_session(self) -> bool:
        """Whether an agent is working right now (a session started and has not ended)."""
        stopping_now = self.view.phase is Phase.STOPPING and not self._after_session
        return self.running and bool(self.view.task) and not stopping_now

    # --- reading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the settings (unless being edited) and the session history."""
        if not self.pane.settings.dirty:
            paths, key = self.services.paths, program_key(str(self.services.paths.root))
            program = str(self.store.value(key, "") or "").strip()
            self.worker.submit(
                "read the loop settings",
                lambda: _read_form(paths, program),
                lambda form: self._show_form(form, key, program),
            )
        self.refresh_history()
        self._show(self.view)

    def _show_form(self, form: ProjectConfig, key: str, program: str) -> None:
        if program:
            self.store.remove(key)
        if not self.pane.settings.dirty:
            self.pane.settings.load(form)

    def refresh_history(self) -> None:
        """Read the latest sessions on the worker (one read at a time, spaced out)."""
        self.history_reads.request()

    def _start_history_read(self) -> None:
        services, known = self.services, self.directory.by_id  # the worker's thread must not touch self
        self.worker.submit(
            "read the session history",
            lambda: _history(services, known),
            self.history_reads.then(self._show_history),
            self.history_reads.finished,
        )

    def _show_history(self, rows: list[HistoryRow]) -> None:
        """Show the sessions read; while none is live, the newest one's stream is shown again."""
        self.pane.history.show_rows(rows)
        if not self.running and not self.pane.stream.model.lines:
            last = next((row for row in rows if row.session.transcript_path), None)
            if last is not None:
                self.show_past_session(last)

    def show_past_session(self, row: HistoryRow) -> None:
        """Show a finished session's stream again, read from its transcript."""
        session, paths = row.session, self.services.paths
        self.worker.submit(
            f"read the transcript of session {session.id}",
            lambda: _past_events(paths, session),
            lambda events: self._show_past(row, events),
        )

    def _show_past(self, row: HistoryRow, events: list[LiveEvent] | None) -> None:
        if events is None:
            return  # not a transcript of this project, or gone: nothing to show again
        session = row.session
        outcome = (session.outcome or "").replace("_", " ")
        title = f"Past session — {_session_title(row)} ({outcome})"
        figures = SessionFigures(title=title, session_id=session.id)
        for event in events:
            figures.take(event)
        lines = [line_of(event) for event in events]
        self.pane.stream.start_session(title, session.id, figures=figures, lines=lines)

    def show_transcript(self, recorded: str) -> bool:
        """Show the listed session with this transcript; False when it is not listed.

        While a loop runs (the stream view follows it), or while the session itself still runs, the
        transcript opens in a window of its own that follows it as it grows.
        """
        rows = self.pane.history.model.items
        row = next((row for row in rows if row.session.transcript_path == recorded), None)
        if row is None:
            return False
        if self.running or row.session.ended_at is None:
            self.open_transcript_window(row)
        else:
            self.show_past_session(row)
        return True

    def open_transcript_window(self, row: HistoryRow) -> None:
        """Show a session's transcript in a window of its own (raised again when it is open already)."""
        paths, recorded = self.services.paths, row.session.transcript_path or ""
        self.worker.submit(
            "show the transcript",
            lambda: _found_transcript(paths, recorded),
            lambda found: self._open_window(row, *found),
        )

    def _open_window(self, row: HistoryRow, path: Path, there: bool) -> None:
        session, paths = row.session, self.services.paths
        shown = self.transcript_windows.get(path)
        if shown is not None:
            shown.raise_()
            shown.activateWindow()
            return
        if not there:
            self.worker.fail(f"Could not show the transcript: {path} is not there (any more).")
            return
        live = session.ended_at is None
        window = TranscriptWindow(
            TranscriptTail(paths.root, path, session.agent),
            _session_title(row),
            session.id,
            self.worker,
            started=started_at(session.started_at) if live else None,
            parent=self.pane,
        )
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.finished.connect(lambda _result: self.transcript_windows.pop(path, None))
        self.transcript_windows[path] = window
        window.show()

    def _show_transcript_or_open(self, recorded: str) -> None:
        if not self.show_transcript(recorded):
            self._open_transcript(recorded)

    def on_changes(self, changes: Iterable[Change]) -> None:
        """Re-read the history when sessions change; wake a waiting loop when work may have appeared."""
        topics = {change.topic for change in changes}
        if topics & HISTORY_TOPICS:
            self.refresh_history()
        if "tasks" in topics and not self._backlog_due:  # shown once the directory has the change
            self._backlog_due = True
            self.worker.when_idle(self._show_backlog)
        if topics & WAKE_TOPICS and self.runner is not None and self.view.phase is Phase.WAITING:
            self.runner.wake()

    # --- settings -----------------------------------------------------------------------------

    def save_settings(self, changes: dict[str, Any], then: Callable[[], None] | None = None) -> None:
        """Write the edited settings to config.json (the rest of the file kept), then `then()`."""
        paths = self.services.paths
        self.worker.submit(
            "save the loop settings",
            lambda: update_config(paths, **changes),
            lambda config: self._saved(config, then),
            keep=True,
            busy=True,
        )

    def _saved(self, config: ProjectConfig, then: Callable[[], None] | None) -> None:
        self.pane.settings.load(config)
        self.worker.succeed("Loop settings saved in .ralph/config.json.")
        if then is not None:
            then()

    # --- running ------------------------------------------------------------------------------

    def start(self) -> None:
        """Save the settings, check the agent, and run the loop as a task of the event loop."""
        if self.running:
            self.worker.fail("The loop is already running in this window.")
            return
        form = self.pane.settings
        changes = form.changes()
        if form.checks_problem is not None:
            self.worker.fail(
                f"The loop settings are not saved, so the loop did not start: {form.checks_problem}"
            )
            return
        self._prepare_start(changes)

    def _prepare_start(self, changes: dict[str, Any]) -> None:
        """Read the settings (the form's edits on top, saved only once the start is confirmed) and check the
        base branch, the agent and what is trusted, on the worker."""
        services = self.services
        asked = not self.store.value(start_confirmed_key(str(services.paths.root)), False, bool)
        self.worker.submit(
            "start the loop",
            lambda: prepare_start(services, changes, asked),
            lambda plan: self._start_prepared(plan, changes),
            busy=True,
        )

    def _start_prepared(self, plan: StartPlan, changes: dict[str, Any]) -> None:
        if plan.refusal:
            self.worker.fail(plan.refusal)
            if plan.program_missing:
                self.pane.settings.agent_bin.setFocus()
            return
        assert plan.settings is not None
        if self.issuer is None:
            self.worker.fail(
                "Could not start the loop: the embedded MCP server is not running, so agents could not "
                "reach ralph's tools. Restart the window; the status bar says why the server did not start."
            )
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.worker.fail("Could not start the loop: no event loop runs this window.")
            return
        # "Don't ask again" never covers a program the folder named and this computer has not allowed.
        if plan.summary is None:
            self._save_then_launch(plan.settings, changes)
            return
        settings, found = plan.settings, plan.untrusted
        dialog = StartLoopDialog(
            plan.summary,
            lambda keep: self._confirmed(settings, changes, keep, found),
            self.pane,
            untrusted=found,
        )
        self.start_dialog = dialog
        dialog.open()

    def _confirmed(
        self,
        settings: LoopSettings,
        changes: dict[str, Any],
        remember: bool,
        found: Untrusted | None = None,
    ) -> None:
        """The person agreed to start (maybe not to be asked again); the program shown to them is trusted."""
        root = self.services.paths.root
        if found is None:
            self._allowed(settings, changes, remember)
            return
        self.worker.submit(
            "start the loop",
            lambda: found.allow(root),
            lambda _allowed: self._allowed(settings, changes, remember),
            keep=True,
            busy=True,
        )

    def _allowed(self, settings: LoopSettings, changes: dict[str, Any], remember: bool) -> None:
        if remember:
            self.store.setValue(start_confirmed_key(str(self.services.paths.root)), True)
        self._save_then_launch(settings, changes)

    def _save_then_launch(self, settings: LoopSettings, changes: dict[str, Any]) -> None:
        """The run confirmed: the settings it runs with are saved first (a Cancel saved nothing)."""
        if changes:
            self.save_settings(changes, then=lambda: self._launch_once(settings))
            return
        self._launch_once(settings)

    def _launch_once(self, settings: LoopSettings) -> None:
        if not self.running:
            self._launch(settings)

    def _launch(self, settings: LoopSettings) -> None:
        """Run the loop as a task of the window's event loop."""
        assert self.issuer is not None
        event_loop = asyncio.get_running_loop()
        runner = build_runner(self.services, self.issuer, settings)
        runner.subscribe(self._on_event)
        self.runner = runner
        self._after_session = False
        self.running_sessions = RunningSessions()
        self._show_rows()
        self._show(LoopView(Phase.STARTING))
        self.task = event_loop.create_task(self._run(runner))
        self.sig_run_started.emit(runner, self.task)

    async def _run(self, runner: LoopRunner) -> None:
        """Run the loop to its end; a refusal or failure is shown in the window."""
        try:
            await runner.run()
        except (LoopAlreadyRunningError, AgentUnavailableError, NoBaseBranchError) as error:
            self.worker.fail(f"Could not start the loop: {error}")
        except Exception as error:  # the top of the loop's task: show it, the runner logged the traceback
            self.worker.fail(f"The loop stopped with an error: {type(error).__name__}: {error}")
            self.sig_stopped_by_itself.emit(f"an error: {type(error).__name__}: {error}")
        finally:
            status = runner.status
            phase = phase_of(status.state) if status.loop_run_id is not None else Phase.IDLE
            if phase in ACTIVE:
                phase = Phase.STOPPED
            self._show(replace(self._status_view(phase), task=""))
            self.running_sessions.sessions.clear()
            self._show_rows()
            self.runner = None
            self.refresh_history()
            close, self._close_window = self._close_window, None
            if close is not None:
                self._may_close = True
                close()

    def pause(self) -> None:
        """Hold the loop after the current session (at once when it waits for work)."""
        if self.runner is None:
            return
        self.runner.pause()
        waiting = self.view.phase in (Phase.WAITING, Phase.RATE_LIMITED)
        self._show(replace(self.view, phase=Phase.PAUSING))
        if waiting:
            self.runner.wake()

    def resume(self) -> None:
        """Continue the paused loop."""
        if self.runner is None:
            return
        self.runner.resume()
        if self.view.phase is Phase.PAUSING:
            self._show(replace(self.view, phase=Phase.RUNNING))

    def stop(self) -> None:
        """Stop the loop; while an agent works, ask whether now or after its session."""
        if self.runner is None:
            return
        if self.in_session:
            self.stop_box = ask_when_to_stop(self.pane, "Stop", self.view.task, self._stop_chosen)
            return
        self.stop_now()

    def stop_now(self) -> None:
        """End the current session (not counted as stuck) and stop the loop."""
        if self.runner is None:
            return
        self.runner.stop()
        self._show(replace(self.view, phase=Phase.STOPPING))

    def _stop_chosen(self, choice: StopChoice) -> None:
        if choice is StopChoice.NOW:
            self.stop_now()
        elif self.runner is not None:
            self._after_session = True
            self.runner.stop_after_session()
            self._show(replace(self.view, phase=Phase.STOPPING, reason="stopping after this session"))

    def ask_to_close(self, close: Callable[[], None]) -> bool:
        """Whether the window may close now; while an agent works, ask (`close` is called once it may)."""
        if self._may_close or not self.in_session:
            return True
        chosen = partial(self._quit_chosen, close=close)
        self.stop_box = ask_when_to_stop(self.pane, "Quit", self.view.task, chosen)
        return False

    def _quit_chosen(self, choice: StopChoice, *, close: Callable[[], None]) -> None:
        if choice is StopChoice.NOW or self.runner is None:
            self._may_close = True
            close()
            return
        self._close_window = close
        self._stop_chosen(StopChoice.AFTER_SESSION)

    async def shutdown(self) -> None:
        """Stop a running loop and wait for it to end (the window is closing)."""
        task = self.task
        if self.runner is not None:
            self.runner.stop()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_WAIT_S)
            except TimeoutError:
                log.warning("the loop did not stop within %.0f s; cancelling it", STOP_WAIT_S)
                task.cancel()

    def preview(self) -> None:
        """Show what the next session would get, without claiming or starting anything."""
        services, changes, known = self.services, self.pane.settings.changes(), self.directory.by_id

        def read() -> tuple[SessionPreview | None, str]:
            shown = preview_next_session(
                services, loop_settings(services.paths, changes), services.paths.root
            )
            if shown is None:  # why nothing would run, as the loop itself would say it
                return None, idle_report(services).reason
            return shown, _title(services, known, shown.task_id)

        self.worker.submit(
            "preview the next session", read, lambda result: self.pane.show_preview(*result), busy=True
        )

    # --- events -------------------------------------------------------------------------------

    def _show_backlog(self) -> None:
        self._backlog_due = False
        self._show(self.view)

    def _on_event(self, event: LiveEvent) -> None:
        kind = event.kind
        if kind is EventKind.LOOP_STATE:
            self._on_state(event)
            return
        running = self.running_sessions
        if kind is EventKind.CHECK_OUTPUT:  # thousands a second: only into the bounded checks view
            if running.shown(event.session_id):
                self.pane.stream.checks.add_output(str(event.data.get("check") or ""), event.text)
            return
        if kind is EventKind.SESSION_STARTED:
            task_id = event.data.get("task_id")
            task = f"#{task_id} {event.text}" if task_id else event.text
            agent = str(event.data.get("agent") or "")
            session = RunningSession(event.session_id or "", task, datetime.now(UTC), agent=agent)
            if running.started(session):
                self._show_session(session)
        taken = running.take(event)
        if running.shown(event.session_id):
            self.pane.add_line(line_of(event))
            if kind is EventKind.CHECK_STARTED:
                self.pane.stream.checks.started([str(name) for name in event.data.get("checks") or ()])
            elif kind is EventKind.CHECK_ENDED:
                self.pane.stream.checks.ended(bool(event.data.get("passed")), event.text)
        if kind is EventKind.SESSION_ENDED:
            self._ended(event.session_id or "")
        if taken is not None and kind in FIGURE_KINDS:
            self._show_rows()
        if kind in (EventKind.SESSION_STARTED, EventKind.SESSION_ENDED):
            self._show_running()

    def _ended(self, session_id: str) -> None:
        """A session ended: the stream moves on to the next running one, or stays (and says why)."""
        running = self.running_sessions
        was_shown = running.followed == session_id
        following = running.ended(session_id)
        if following is not None:
            self._show_session(following)
        elif was_shown and running.kept is not None and running.chosen:
            self.pane.stream.end_session(KEPT_NOTE)
        elif was_shown:
            self.pane.stream.end_session()

    def follow(self, session_id: str) -> None:
        """Show a running session's stream (the person picked it)."""
        session = self.running_sessions.choose(session_id)
        if session is not None:
            self._show_session(session)
            self._show_rows()
            self._show_running()

    def _show_session(self, session: RunningSession) -> None:
        """Show a running session's stream from its start, its figures counting on as events come."""
        lines = [line_of(event) for event in session.events]
        stream = self.pane.stream
        stream.start_session(
            session.title, session.session_id, started=session.started, figures=session.figures, lines=lines
        )

    def _show_rows(self) -> None:
        running = self.running_sessions
        self.pane.show_running(running.rows(), running.followed)

    def _show_running(self) -> None:
        """Name the session the stream follows, and the others running beside it."""
        running = self.running_sessions
        followed = running.sessions.get(running.followed) if running.followed else None
        task = " · ".join(filter(None, [followed.title if followed else "", running.others()]))
        self._show(replace(self._status_view(self._active_phase()), task=task))

    def _on_state(self, event: LiveEvent) -> None:
        phase = phase_of(LoopState(event.text))
        if self.view.phase is Phase.STOPPING and phase in ACTIVE:
            phase = Phase.STOPPING
        if self.view.phase is Phase.PAUSING and phase is Phase.RUNNING:
            phase = Phase.PAUSING
        reason = str(event.data.get("reason") or "")
        view = replace(self._status_view(phase), reason=reason)
        self._show(view)
        by_person = reason.startswith(HUMAN_STOP)  # now, or after the session: the person knows
        if phase is Phase.FAILED or (phase in (Phase.COMPLETED, Phase.STOPPED) and not by_person):
            self.sig_stopped_by_itself.emit(reason or phase.value)
        if phase in (
            Phase.WAITING,
            Phase.PAUSED,
            Phase.RATE_LIMITED,
            Phase.STOPPED,
            Phase.COMPLETED,
            Phase.FAILED,
        ):
            self.pane.add_line(line_of(event))

    def _active_phase(self) -> Phase:
        return self.view.phase if self.view.phase in (Phase.PAUSING, Phase.STOPPING) else Phase.RUNNING

    def _status_view(self, phase: Phase) -> LoopView:
        runner = self.runner
        if runner is None:
            return replace(self.view, phase=phase)
        status = runner.status
        return LoopView(
            phase=phase,
            reason=status.stop_reason or "",
            task=self.view.task,
            iteration=status.iteration,
            cost_usd=status.cost_usd,
            resumes_at=status.resumes_at,
        )

    def _show(self, view: LoopView) -> None:
        backlog = Backlog.of(summary.status for summary in self.directory.by_id.values())
        self.view = replace(view, backlog=backlog)
        self.pane.show_view(self.view)

    def _open_transcript(self, recorded: str) -> None:
        paths = self.services.paths
        self.worker.submit(
            "open the transcript",
            lambda: _found_transcript(paths, recorded),
            lambda found: self._open_found(*found),
        )

    def _open_found(self, path: Path, there: bool) -> None:
        if not there:
            self.worker.fail(f"Could not open the transcript: {path} is not there (any more).")
            return
        if self.open_file is not None and not self.open_file(str(path)):
            self.worker.fail(f"Could not open {path}: no application is set to open it.")


# --- operations: these run on the worker, never on the GUI thread -----------------------------------


@dataclass(frozen=True)
class StartPlan:
    """What a start needs from the project: the settings, and what to ask (or why it cannot start)."""

    settings: LoopSettings | None = None
    untrusted: Untrusted | None = None
    summary: StartSummary | None = None
    """The run to confirm (None: start without asking)."""
    refusal: str = ""
    program_missing: bool = False
    """The agent's program was not found: the Program field is where to say where it is."""


def loop_settings(paths: ProjectPaths, changes: dict[str, Any]) -> LoopSettings:
    """The loop settings saved in config.json with the form's `changes` on top, as the runner takes them."""
    return LoopSettings.of(read_config(paths).changed(**changes))


def prepare_start(services: Services, changes: dict[str, Any], asked: bool) -> StartPlan:
    """Everything a start reads and checks (git's base branch, the agent, trust); `asked`: confirm first."""
    paths = services.paths
    try:
        config = read_config(paths)
        settings = LoopSettings.of(config.changed(**changes))
    except ProjectError as error:
        return StartPlan(refusal=f"Could not read the loop settings: {error}")
    try:
        services.workspaces.require_base()
        adapter_for(settings).check_available(settings)
        found = untrusted_start(paths, config, settings, services.disciplines.list(), services.db.url)
    except AgentUnavailableError as error:
        if not error.program_missing:
            return StartPlan(refusal=f"Could not start the loop: {error}")
        return StartPlan(refusal=f"Could not start the loop: {error}. {PROGRAM_FIELD}", program_missing=True)
    except ProjectError as error:
        return StartPlan(refusal=f"Could not start the loop: {error}")
    if found is None and not asked:
        return StartPlan(settings, found)
    return StartPlan(settings, found, summarise_start(services, settings, paths.root))


def _read_form(paths: ProjectPaths, program: str) -> ProjectConfig:
    """The saved settings; a program an older window kept in QSettings moves into config.json once."""
    config = read_config(paths)
    if program and config.agent_bin is None:
        config = update_config(paths, agent_bin=program)
        log.info("moved the agent program %s from this computer's settings to %s", program, paths.config_file)
    return config


def _title(services: Services, known: dict[int, TaskSummary], task_id: int | None) -> str:
    """A task's title, from the directory when it knows the task."""
    if task_id is None:
        return ""
    summary = known.get(task_id)
    return summary.title if summary is not None else services.tasks.get(task_id).title


def _history(services: Services, known: dict[int, TaskSummary]) -> list[HistoryRow]:
    """The latest sessions with their tasks' titles (a task that cannot be read has none)."""
    rows = []
    for session in services.sessions.list(limit=HISTORY_LIMIT):
        try:
            title = _title(services, known, session.task_id)
        except Exception:  # one unreadable task must not hide the history
            log.exception("could not read task #%s", session.task_id)
            title = ""
        rows.append(HistoryRow(session, title))
    return rows


def _found_transcript(paths: ProjectPaths, recorded: str) -> tuple[Path, bool]:
    """A recorded transcript's path (refused outside logs/) and whether it is there."""
    path = paths.transcript(recorded)
    return path, path.is_file()


def _past_events(paths: ProjectPaths, session: AgentSession) -> list[LiveEvent] | None:
    """A finished session's events read from its transcript (None: no transcript of this project)."""
    try:
        path = paths.transcript(session.transcript_path or "")
    except ProjectError:
        return None
    if not path.is_file():
        return None
    return replay(paths.root, path, session.agent)
