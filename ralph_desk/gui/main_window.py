"""The main window: sidebar of panes, toolbar, menus, message bar and status bar."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QGuiApplication,
    QKeySequence,
    QPalette,
    QShortcut,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from ralph_desk import __version__
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui import icons, theme
from ralph_desk.gui.backend import process_exists
from ralph_desk.gui.dialogs.shortcuts import FIXED as FIXED_SHORTCUTS
from ralph_desk.gui.dialogs.shortcuts import ShortcutsDialog
from ralph_desk.gui.notify import TOPIC_TITLES, Topic
from ralph_desk.gui.panes.dashboard.pane import DashboardPane
from ralph_desk.gui.panes.disciplines.pane import DisciplinesPane
from ralph_desk.gui.panes.features.pane import FeaturesPane
from ralph_desk.gui.panes.inbox.pane import InboxPane
from ralph_desk.gui.panes.loop.pane import LoopPane
from ralph_desk.gui.panes.tasks.pane import TasksPane
from ralph_desk.gui.settings import DeskSettings
from ralph_desk.gui.unsaved import Editor, UnsavedBox, ask_to_leave
from ralph_desk.gui.widgets.layout import PageStack
from ralph_desk.gui.widgets.message_bar import MessageBar
from ralph_desk.gui.widgets.sidebar import PaneEntry, Sidebar

if TYPE_CHECKING:
    from ralph_desk.gui.controller import Controller

APP_NAME = "ralph-desk"
DEFAULT_SIZE = QSize(1360, 860)
PANES = (
    PaneEntry("inbox", "Inbox", "inbox", "Questions, suggestions and flags waiting for you"),
    PaneEntry("tasks", "Tasks", "tasks", "Every task: filter, sort, read and edit"),
    PaneEntry("features", "Features", "features", "Features, their context and learnings"),
    PaneEntry("disciplines", "Disciplines", "disciplines", "Disciplines and the tools their agents may use"),
    PaneEntry("loop", "Loop", "loop", "Run the loop and watch the current session"),
    PaneEntry("dashboard", "Dashboard", "dashboard", "Progress, cost and recent activity"),
)
TASKS_SPLITTER = "tasks"
WINDOW_OFFSET = 32
"""How far each further window opens down and right of the last, in pixels."""
STATUS_MS = 4000

CloseGuard = Callable[[Callable[[], None]], bool]
"""Whether the window may close now; if not, it asked the person and calls back to close once it may."""


def _alive(entry: str) -> bool:
    pid, _, _token = entry.partition(":")
    return pid.isdigit() and process_exists(int(pid))


class MainWindow(QMainWindow):
    """The window of one project; it shows panes and asks for work through signals."""

    sig_open_project_requested = Signal(str)
    """Open the project in this folder (in a window of its own)."""
    sig_connect_requested = Signal()
    """Show the client configurations."""
    sig_companion_requested = Signal()
    """Show the companion page's settings and pairing."""
    sig_refresh_requested = Signal()
    """Read everything again."""
    sig_pane_changed = Signal(str)
    """The pane with this key is now shown."""
    sig_closed = Signal()
    """The window closed: the application may shut down."""
    sig_undo_requested = Signal()
    """Undo the last Inbox decision (still held for Undo)."""

    def __init__(self, title: str, root: Path, settings: DeskSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project_title = title
        self.waiting = 0
        self.root = root
        self.settings = settings
        self.controller: Controller | None = None
        self.window_token = f"{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.close_guards: list[CloseGuard] = []
        self.setWindowIcon(icons.app_icon())
        self.inbox = InboxPane()
        self.tasks = TasksPane()
        self.features = FeaturesPane()
        self.disciplines = DisciplinesPane()
        self.loop = LoopPane()
        self.dashboard = DashboardPane()
        self.panes: dict[str, QWidget] = {
            "inbox": self.inbox,
            "tasks": self.tasks,
            "features": self.features,
            "disciplines": self.disciplines,
            "loop": self.loop,
            "dashboard": self.dashboard,
        }
        self.sidebar = Sidebar(list(PANES))
        self.stack = PageStack()
        for entry in PANES:
            self.stack.addWidget(self.panes[entry.key])
        self.message_bar = MessageBar()
        self.sidebar.sig_pane_requested.connect(self._on_sidebar_row)
        self.unsaved_box: UnsavedBox | None = None
        self.editors: dict[str, tuple[Editor, str]] = {
            "tasks": (self.tasks.detail.fields, "the task"),
            "features": (self.features.detail.fields, "the feature"),
            "disciplines": (self.disciplines.detail, "the discipline"),
            "loop": (self.loop.settings, "the loop settings"),
        }
        for key, signal in (
            ("tasks", self.tasks.detail.fields.sig_dirty_changed),
            ("features", self.features.detail.fields.sig_dirty_changed),
            ("disciplines", self.disciplines.detail.sig_dirty_changed),
            ("loop", self.loop.settings.sig_dirty_changed),
        ):
            signal.connect(partial(self.sidebar.set_unsaved, key))
        self.close_guards.append(self._ask_about_unsaved)
        self._build_central()
        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self._build_status_bar()
        self.set_waiting(0)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.message_bar.hide)
        self._restore()

    # --- building -----------------------------------------------------------------------------

    def _build_central(self) -> None:
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.setSpacing(0)
        right_layout.addWidget(self.stack, 1)
        self.message_bar.float_over(right)
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        separator = QFrame()
        separator.setFrameShape(QFrame.Shape.VLine)
        separator.setFrameShadow(QFrame.Shadow.Plain)
        separator.setForegroundRole(QPalette.ColorRole.Mid)
        layout.addWidget(self.sidebar)
        layout.addWidget(separator)
        layout.addWidget(right, 1)
        self.setCentralWidget(central)

    def _action(
        self,
        text: str,
        icon_name: str | None,
        tip: str,
        shortcut: QKeySequence | QKeySequence.StandardKey | str | None,
    ) -> QAction:
        action = QAction(text, self)
        if icon_name:
            action.setIcon(icons.icon(icon_name))
            action.setData(icon_name)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action(
            "Open project…", "open", "Open another project in its own window", QKeySequence.StandardKey.Open
        )
        self.open_action.triggered.connect(self._choose_project)
        self.refresh_action = self._action("Refresh", "refresh", "Read everything again (F5)", "F5")
        self.refresh_action.triggered.connect(self.sig_refresh_requested)
        self.connect_action = self._action(
            "Connect a client…",
            "connect",
            "MCP configurations for Claude Code, VS Code, JetBrains, Cursor…",
            None,
        )
        self.connect_action.triggered.connect(self.sig_connect_requested)
        self.companion_action = self._action(
            "Companion…", None, "Answer from your phone: serve the companion page, pair a device", None
        )
        self.companion_action.triggered.connect(self.sig_companion_requested)
        self.quit_action = self._action(
            "Quit", None, "Close the window and stop its MCP server", QKeySequence.StandardKey.Quit
        )
        self.quit_action.triggered.connect(self.close)
        self.pane_actions: list[QAction] = []
        for number, entry in enumerate(PANES, start=1):
            action = self._action(entry.title, entry.icon, entry.tooltip, f"Ctrl+{number}")
            action.triggered.connect(lambda _=False, key=entry.key: self.show_pane(key))
            self.addAction(action)
            self.pane_actions.append(action)
        self.item_actions = [
            self._item_action("Next item", "F8", "Move to the next item of the Inbox tab shown", 1),
            self._item_action("Previous item", "Shift+F8", "Move to the previous item of the Inbox tab", -1),
        ]
        self.inbox_actions = [
            self._inbox_action("Answer the question", "answer", "Ctrl+Shift+A", "Type in the question's box"),
            self._inbox_action("Approve the suggestion", "approve", "Ctrl+Shift+Y", "Approve it"),
            self._inbox_action("Reject the suggestion…", "reject", "Ctrl+Shift+N", "Reject the current one"),
            self._inbox_action("Resolve the flag", "resolve", "Ctrl+Shift+R", "Mark the flag resolved"),
            self._inbox_action("Dismiss the flag", "dismiss", "Ctrl+Shift+D", "Dismiss the selected flag"),
        ]
        self.undo_action = self._action(
            "Undo the last decision",
            None,
            "Take back the last Inbox decision while its notice shows",
            "Ctrl+Z",
        )
        self.undo_action.triggered.connect(self.sig_undo_requested)
        self.addAction(self.undo_action)
        self.tab_actions = [
            self._tab_action("Next tab", ("Ctrl+Tab",), 1),
            self._tab_action("Previous tab", ("Ctrl+Shift+Tab", "Ctrl+Shift+Backtab"), -1),
        ]
        self.loop_actions = [
            self._loop_action("Start the loop", "Ctrl+Shift+S", lambda: self.loop.start),
            self._loop_action(
                "Pause or resume the loop",
                "Ctrl+Shift+P",
                lambda: self.loop.pause if self.loop.pause.isEnabled() else self.loop.resume,
            ),
            self._loop_action("Stop the loop", "Ctrl+Shift+X", lambda: self.loop.stop),
        ]
        self.shortcuts_action = self._action("Keyboard shortcuts", None, "Every shortcut of the window", "F1")
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        self.shortcuts_dialog: ShortcutsDialog | None = None

    def _item_action(self, text: str, keys: str, tip: str, delta: int) -> QAction:
        action = self._action(text, None, tip, keys)
        action.triggered.connect(lambda: self._on_inbox(lambda: self._step(delta)))
        self.addAction(action)
        return action

    def _tab_action(self, text: str, keys: tuple[str, ...], delta: int) -> QAction:
        action = self._action(text, None, f"{text} of the pane shown (Inbox, a task's details)", keys[0])
        action.setShortcuts([QKeySequence(key) for key in keys])
        action.triggered.connect(lambda: self.next_tab(delta))
        self.addAction(action)
        return action

    def next_tab(self, delta: int) -> None:
        """Show the next (1) or previous (-1) tab of the pane shown, wherever the keyboard is."""
        if self.current_pane == "inbox":
            self.inbox.next_tab(delta)
        elif self.current_pane == "tasks":
            tabs = self.tasks.detail.tabs
            if tabs.isVisible():
                tabs.setCurrentIndex((tabs.currentIndex() + delta) % tabs.count())

    def _step(self, delta: int) -> bool:
        self.inbox.step(delta)
        return True

    def _inbox_action(self, text: str, name: str, keys: str, tip: str) -> QAction:
        action = self._action(text, None, tip, keys)
        action.triggered.connect(lambda: self._on_inbox(lambda: self.inbox.act(name), text))
        self.addAction(action)
        return action

    def _loop_action(self, text: str, keys: str, target: Callable[[], QPushButton]) -> QAction:
        action = self._action(text, None, text, keys)
        action.triggered.connect(lambda: self._press(target(), text))
        self.addAction(action)
        return action

    def _on_inbox(self, act: Callable[[], bool], text: str = "") -> None:
        if self.current_pane != "inbox":
            self.show_pane("inbox")
        if not act() and text:
            self.statusBar().showMessage(f"{text}: nothing to do in this tab", STATUS_MS)

    def _press(self, target: QPushButton, text: str) -> None:
        if target.isEnabled():
            target.click()
        else:
            self.statusBar().showMessage(f"{text}: not now (the loop is {self.loop.view.label})", STATUS_MS)

    def shortcut_list(self) -> list[tuple[str, str, str]]:
        """Every shortcut of the window: (where, keys, what)."""
        native = QKeySequence.SequenceFormat.NativeText
        groups = (
            ("Window", [self.open_action, self.refresh_action, self.quit_action, self.shortcuts_action]),
            ("Panes", self.pane_actions),
            ("Panes", self.tab_actions),
            ("Inbox", [*self.item_actions, *self.inbox_actions, self.undo_action]),
            ("Loop", self.loop_actions),
        )
        listed = [
            (group, action.shortcut().toString(native), action.text())
            for group, actions in groups
            for action in actions
            if not action.shortcut().isEmpty()
        ]
        return [*listed, *FIXED_SHORTCUTS]

    def show_shortcuts(self) -> None:
        """Show the shortcuts list."""
        dialog = ShortcutsDialog(self.shortcut_list(), self)
        self.shortcuts_dialog = dialog
        dialog.open()

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.open_action)
        self.recent_menu = QMenu("Recent projects", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.connect_action)
        file_menu.addAction(self.companion_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        view_menu = self.menuBar().addMenu("&View")
        for action in self.pane_actions:
            view_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addMenu(self._scheme_menu())
        view_menu.addMenu(self._notifications_menu())
        view_menu.addSeparator()
        view_menu.addAction(self.refresh_action)
        actions_menu = self.menuBar().addMenu("&Actions")
        for group in (self.item_actions, [*self.inbox_actions, self.undo_action], self.loop_actions):
            for action in group:
                actions_menu.addAction(action)
            actions_menu.addSeparator()
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction("About ralph-desk", self._about)

    def _scheme_menu(self) -> QMenu:
        menu = QMenu("Appearance", self)
        group = QActionGroup(menu)
        chosen = self.settings.scheme()
        self.scheme_actions: dict[str, QAction] = {}
        for value, text in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(value == chosen)
            action.triggered.connect(lambda _=False, v=value: self.choose_scheme(v))
            group.addAction(action)
            self.scheme_actions[value] = action
        return menu

    def _notifications_menu(self) -> QMenu:
        menu = QMenu("Notify me about", self)
        menu.setToolTipsVisible(True)
        self.notification_actions: dict[Topic, QAction] = {}
        for topic, text in TOPIC_TITLES.items():
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(self.settings.notification_on(topic.value))
            action.toggled.connect(lambda on, t=topic: self.settings.set_notification(t.value, on))
            self.notification_actions[topic] = action
        return menu

    def _build_toolbar(self) -> None:
        toolbar = QToolBar("Main")
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        toolbar.setIconSize(QSize(18, 18))
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addAction(self.refresh_action)
        toolbar.addAction(self.connect_action)
        toolbar.addAction(self.open_action)
        self.addToolBar(toolbar)
        self.toolbar = toolbar

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.project_label = QLabel(self.project_title)
        self.project_label.setToolTip(str(self.root))
        self.mcp_label = QLabel("MCP: not started")
        self.mcp_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.live_label = QLabel("○ live updates off")
        for widget in (self.project_label, self.mcp_label, self.live_label):
            widget.setContentsMargins(8, 2, 8, 2)
        bar.addWidget(self.project_label)
        bar.addPermanentWidget(self.mcp_label)
        bar.addPermanentWidget(self.live_label)

    def _restore(self) -> None:
        geometry = self.settings.geometry()
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(self.first_size())
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)
        splitter = self.settings.splitter(TASKS_SPLITTER)
        if splitter is not None:
            self.tasks.splitter.restoreState(splitter)
        else:
            self.tasks.splitter.setSizes([780, 480])
        last = self.settings.last_pane()
        self.show_pane(last if last in self.panes else "inbox")
        self._step_aside()

    def _step_aside(self) -> None:
        """Open offset from the windows already open (here or in other processes), then register this one."""
        others = [entry for entry in self.settings.open_windows() if _alive(entry)]
        if others:
            step = WINDOW_OFFSET * len(others)
            self.move(self._base_position() + QPoint(step, step))
        self.settings.set_open_windows([*others, self.window_token])

    def _base_position(self) -> QPoint:
        """Where the restored geometry put the window; without one, the screen's centre (as most WMs do)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if self.settings.geometry() is not None or screen is None:
            return self.pos()
        free = screen.availableGeometry()
        spare = free.size() - self.size()
        return free.topLeft() + QPoint(spare.width() // 2, spare.height() // 2)

    def first_size(self) -> QSize:
        """`DEFAULT_SIZE`, made smaller where the screen's free area is smaller."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return DEFAULT_SIZE
        return DEFAULT_SIZE.boundedTo(screen.availableGeometry().size())

    # --- showing ------------------------------------------------------------------------------

    @property
    def current_pane(self) -> str:
        """The key of the pane shown."""
        return PANES[max(0, self.stack.currentIndex())].key

    def show_pane(self, key: str) -> None:
        """Show the pane `key` (inbox, tasks, features, disciplines, loop, dashboard)."""
        row = next(index for index, entry in enumerate(PANES) if entry.key == key)
        if self.sidebar.currentRow() != row:
            self.sidebar.setCurrentRow(row)
        else:
            self._on_sidebar_row(row)

    def _on_sidebar_row(self, row: int) -> None:
        if row < 0:
            return
        shown = self.stack.currentIndex()
        editor = self.editors.get(PANES[shown].key) if row != shown else None
        if editor is None or not editor[0].dirty:
            self._show_row(row)
            return
        # The sidebar goes back to the pane with the edits until the person chooses, again after a click
        # has selected its row (a click selects after it changed the current row, which called this).
        self._show_row(shown)
        QTimer.singleShot(0, partial(self._show_row, shown))
        self.unsaved_box = ask_to_leave(editor[0], editor[1], self, partial(self._show_row, row))

    def _show_row(self, row: int) -> None:
        """Show the pane at `row` and select it in the sidebar (asking nothing)."""
        blocked = self.sidebar.blockSignals(True)
        self.sidebar.setCurrentRow(row)
        self.sidebar.blockSignals(blocked)
        self.stack.setCurrentIndex(row)
        self.message_bar.refit()
        self.sig_pane_changed.emit(PANES[row].key)

    def set_waiting(self, count: int) -> None:
        """Show how many inbox items wait: on the Inbox badge and in the title."""
        self.waiting = count
        self.sidebar.set_badge("inbox", count)
        waiting = f" ({count})" if count else ""
        self.setWindowTitle(f"{self.project_title}{waiting} — {APP_NAME}")

    def after_work(self, then: Callable[[], None]) -> None:
        """`then()` once every operation handed to the window's worker so far is done."""
        if self.controller is None:
            then()
            return
        self.controller.worker.when_idle(then)

    def set_project_title(self, title: str) -> None:
        """Name the project (read once the window is built) in the title bar and beside the panes."""
        self.project_title = title
        self.project_label.setText(title)
        self.set_waiting(self.waiting)
        if self.controller is not None:
            self.controller.notifier.set_title(title)

    def set_mcp(self, url: str | None, error: str | None = None) -> None:
        """Show the embedded MCP server's endpoint (or why it is not running)."""
        if url:
            self.mcp_label.setText(f"MCP {url}")
            self.mcp_label.setToolTip("The embedded MCP server the loop's agents connect to")
        else:
            self.mcp_label.setText("MCP not running")
            self.mcp_label.setToolTip(error or "The embedded MCP server is not running")

    def set_live(self, healthy: bool, status: str) -> None:
        """Show whether live updates work."""
        color = theme.status_color(TaskStatus.DONE if healthy else TaskStatus.FAILED)
        self.live_label.setText(f'<span style="color:{color.name()}">●</span> {status}')
        self.live_label.setToolTip("Changes by any process (agents, CLI, other windows) appear here")

    def show_error(self, text: str) -> None:
        """Show an error in the message bar."""
        self.message_bar.error(text)

    def show_notice(self, text: str) -> None:
        """Show a confirmation in the message bar."""
        self.message_bar.success(text)

    def refresh_style(self) -> None:
        """Redraw icons and colours after the palette changed."""
        icons.clear_cache()
        self.setWindowIcon(icons.app_icon())
        for action in [self.open_action, self.refresh_action, self.connect_action, *self.pane_actions]:
            name = action.data()
            if isinstance(name, str):
                action.setIcon(icons.icon(name))
        self.sidebar.refresh_style()
        self.message_bar.refresh_style()
        self.inbox.refresh_style()
        self.dashboard.refresh_style()
        self.features.refresh_style()
        self.disciplines.refresh_style()
        self.loop.refresh_style()

    # --- menus --------------------------------------------------------------------------------

    def choose_scheme(self, value: str) -> None:
        """Draw the window in `value` (system, light or dark) and remember it."""
        self.settings.set_scheme(value)
        self.scheme_actions[value].setChecked(True)
        theme.choose(None if value == "system" else theme.Scheme(value))
        self.refresh_style()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = [path for path in self.settings.recent_projects() if path != self.root]
        if not recent:
            self.recent_menu.addAction("No other recent project").setEnabled(False)
            return
        for path in recent:
            action = self.recent_menu.addAction(str(path))
            action.triggered.connect(lambda _=False, p=str(path): self.sig_open_project_requested.emit(p))

    def _choose_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a ralph-desk project", str(self.root.parent))
        if folder:
            self.sig_open_project_requested.emit(folder)

    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About ralph-desk",
            f"<b>ralph-desk {__version__}</b><p>Runs a Ralph loop of coding agents and gives you the "
            "review side: answer their questions, approve their suggestions, triage their flags.</p>"
            f"<p>Project: {self.root}</p>",
        )

    # --- closing ------------------------------------------------------------------------------

    def save_state(self) -> None:
        """Remember geometry, toolbar state, the pane shown and the splitter."""
        self.settings.set_geometry(self.saveGeometry())
        self.settings.set_window_state(self.saveState())
        self.settings.set_last_pane(self.current_pane)
        self.settings.set_splitter(TASKS_SPLITTER, self.tasks.splitter.saveState())
        self.settings.sync()

    def _ask_about_unsaved(self, close: Callable[[], None]) -> bool:
        """Close guard: the first editor with unsaved edits is shown and asked about."""
        for key, (editor, what) in self.editors.items():
            if editor.dirty:
                self._show_row(next(row for row, entry in enumerate(PANES) if entry.key == key))
                self.unsaved_box = ask_to_leave(editor, what, self, close)
                return False
        return True

    def _close_again(self) -> None:
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Close unless a guard asks first (unsaved edits, an agent at work); remember the window's state."""
        for guard in self.close_guards:
            if not guard(self._close_again):
                event.ignore()
                return
        self.save_state()
        kept = [entry for entry in self.settings.open_windows() if entry != self.window_token]
        self.settings.set_open_windows(kept)
        super().closeEvent(event)
        self.sig_closed.emit()
