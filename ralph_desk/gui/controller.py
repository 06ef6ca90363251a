"""The one controller: connects the panes' requests to the services and the change feed to the panes."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable

from PySide6.QtCore import QObject, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from ralph_desk.domain.records import Change
from ralph_desk.gui.backend import Services
from ralph_desk.gui.companion import CompanionWiring
from ralph_desk.gui.dialogs import initialise
from ralph_desk.gui.dialogs.connect import ConnectDialog
from ralph_desk.gui.directory import TaskDirectory
from ralph_desk.gui.live import ChangeFeed
from ralph_desk.gui.loop_switch import WindowLoopSwitch
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.notify import Notifier
from ralph_desk.gui.panes.dashboard.wiring import DashboardWiring
from ralph_desk.gui.panes.inbox.pane import QUESTIONS
from ralph_desk.gui.panes.inbox.reviews.wiring import ReviewsWiring
from ralph_desk.gui.panes.inbox.wiring import InboxWiring
from ralph_desk.gui.panes.loop.wiring import LoopWiring
from ralph_desk.gui.panes.tasks.wiring import TasksWiring
from ralph_desk.gui.undo import PendingActions, UndoKey
from ralph_desk.gui.widgets.undo_toast import UndoToast
from ralph_desk.gui.worker import Worker
from ralph_desk.mcp_server.clients import ralph_command
from ralph_desk.project import Problem, ProjectPaths, init_project, opening_problems, validate_project

log = logging.getLogger("ralph_desk.gui")

FileOpener = Callable[[str], bool]


def open_with_desktop(path: str) -> bool:
    """Open a file in the desktop's application for it."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


class Controller(QObject):
    """Owns the pane wirings; routes change notices to them and window requests to the right place."""

    def __init__(
        self,
        window: MainWindow,
        services: Services,
        feed: ChangeFeed,
        worker: Worker,
        notifier: Notifier,
        mcp_url: str | None = None,
        open_file: FileOpener = open_with_desktop,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.services = services
        self.feed = feed
        self.worker = worker
        self.notifier = notifier
        self.mcp_url = mcp_url
        self.open_file = open_file
        self.directory = TaskDirectory()
        self.waiting = (0, 0)
        """What waits for the person: in the inbox's counted tabs, and in review."""
        self.connect_dialog: ConnectDialog | None = None
        self.loop: LoopWiring | None = None
        """The Loop pane's wiring, set by the composition root; it stops the loop at shutdown."""
        self.tasks = TasksWiring(window.tasks, services, worker, self.directory, self.show_transcript)
        self.pending = PendingActions(UndoToast(window), parent=self)
        """Inbox decisions waiting a few seconds for an Undo; the window's close commits them."""
        self.inbox = InboxWiring(
            window.inbox, services, worker, self.directory, notifier, self._on_counts, self.pending
        )
        self.reviews = ReviewsWiring(
            window.inbox.reviews, services, worker, self._on_review_count, self.pending
        )
        self.dashboard = DashboardWiring(window.dashboard, services, worker, self.directory)
        self.companion = CompanionWiring(
            services, worker, WindowLoopSwitch(lambda: self.loop), lambda: window.project_title, parent=self
        )
        """The companion page, served while the person has it on (File › Companion…)."""
        self._connect()

    def _connect(self) -> None:
        window = self.window
        window.sig_closed.connect(self.pending.commit)  # after every guard let it close: nothing is lost
        window.sig_undo_requested.connect(self.pending.undo)
        reviews = window.inbox.reviews
        reviews.viewed_marks = lambda task_id: window.settings.viewed(window.root, task_id)
        reviews.sig_viewed_changed.connect(
            lambda task_id, marks: window.settings.set_viewed(window.root, task_id, marks)
        )
        self.undo_key = UndoKey(self.pending, window)
        self.feed.sig_changes.connect(self.on_changes)
        self.feed.sig_health.connect(window.set_live)
        self.worker.sig_failed.connect(window.show_error)
        self.worker.sig_succeeded.connect(window.show_notice)
        window.sig_refresh_requested.connect(self.refresh_all)
        window.sig_pane_changed.connect(self._on_pane)
        window.sig_connect_requested.connect(self.show_connect)
        window.sig_companion_requested.connect(lambda: self.companion.show_dialog(self.window))
        window.sig_open_project_requested.connect(self.open_project)
        window.inbox.sig_open_task_requested.connect(self.open_task)
        window.inbox.sig_open_transcript_requested.connect(self.show_transcript)
        window.dashboard.sig_open_task_requested.connect(self.open_task)
        window.dashboard.sig_open_inbox_requested.connect(self.open_inbox)
        self.notifier.sig_show_requested.connect(lambda: self.open_inbox(QUESTIONS))
        self.notifier.sig_quit_requested.connect(window.close)
        self.notifier.sig_notified.connect(lambda _title, _text: QApplication.alert(window))

    def refresh_all(self) -> None:
        """Read everything every pane shows."""
        self.tasks.refresh()
        self.inbox.refresh(now=True)
        self.reviews.refresh()
        self.dashboard.stale = True
        self.dashboard.set_visible(self.window.current_pane == "dashboard")

    def on_changes(self, changes: list[Change]) -> None:
        """Give each wiring the changes; the task directory is brought up to date first."""
        topics = {change.topic for change in changes}
        log.debug("changes: %s", ", ".join(sorted(topics)))
        self.tasks.on_changes(changes)
        self.inbox.on_changes(changes)
        self.reviews.on_changes(changes)
        self.dashboard.on_changes(changes)
        self.companion.on_changes(changes)

    def open_task(self, task_id: int) -> None:
        """Show a task in the Tasks pane."""
        self.window.show_pane("tasks")
        if not self.window.tasks.select_task(task_id):
            self.worker.fail(f"Task #{task_id} is not there (any more).")

    def open_inbox(self, tab: int) -> None:
        """Show a tab of the inbox and bring the window forward."""
        self.window.show_pane("inbox")
        self.window.inbox.show_tab(tab)
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def show_connect(self) -> None:
        """Show the client configurations."""
        dialog = ConnectDialog(self.services.paths.root, self.mcp_url, self.window, self.services.db.url)
        self.connect_dialog = dialog
        dialog.open()

    def open_project(self, folder: str) -> None:
        """Open another project in a window (and process) of its own; offer to initialise a plain folder."""
        paths = ProjectPaths.at(folder)
        self.worker.submit(
            f"look at {paths.root}", paths.ralph.is_dir, lambda there: self._open_found(folder, paths, there)
        )

    def _open_found(self, folder: str, paths: ProjectPaths, initialised: bool) -> None:
        if not initialised and not initialise.ask_to_initialise(paths.root, self.window):
            return
        what = f"open {paths.root}" if initialised else f"create a project in {paths.root}"
        self.worker.submit(
            what,
            lambda: _problems_opening(paths, initialised),
            lambda problems: self._launch_project(folder, paths, problems),
            keep=True,
            busy=True,
        )

    def _launch_project(self, folder: str, paths: ProjectPaths, problems: list[Problem]) -> None:
        if problems:
            self.worker.fail(f"Could not open {paths.root}: {problems[0]}")
            return
        try:
            subprocess.Popen([*ralph_command(), "open", str(paths.root)], start_new_session=True)
        except OSError as error:
            self.worker.fail(f"Could not open {folder}: {error}")
            return
        self.window.show_notice(f"Opening {folder} in a new window…")

    def _on_pane(self, key: str) -> None:
        self.dashboard.set_visible(key == "dashboard")

    def _on_counts(self, questions: int, suggestions: int, flags: int, failed: int) -> None:
        self.waiting = (questions + suggestions + flags + failed, self.waiting[1])
        self._publish_waiting()

    def _on_review_count(self, count: int) -> None:
        self.window.inbox.set_review_count(count)
        self.waiting = (self.waiting[0], count)
        self._publish_waiting()

    def _publish_waiting(self) -> None:
        total = sum(self.waiting)
        self.window.set_waiting(total)
        self.notifier.set_waiting(total)

    def show_transcript(self, recorded: str) -> None:
        """Show a session transcript (a path relative to the project) in the Loop pane."""
        if self.loop is None or not self.loop.show_transcript(recorded):
            self._open_transcript(str(self.services.paths.root / recorded))
            return
        self.window.show_pane("loop")

    def _open_transcript(self, path: str) -> None:
        paths = self.services.paths
        self.worker.submit("open the transcript", lambda: str(paths.transcript(path)), self._open_file)

    def _open_file(self, path: str) -> None:
        if not self.open_file(path):
            self.worker.fail(f"Could not open {path}: no application is set to open it.")


def _problems_opening(paths: ProjectPaths, initialised: bool) -> list[Problem]:
    """Initialise the folder when it is not a project yet, then say what stops it opening (on the worker)."""
    if not initialised:
        init_project(paths.root)
    return opening_problems(validate_project(paths.root))
