"""The composition root of the desktop app: builds and connects every part in a visible order.

`launch_window(root)` is what `ralph-desk [DIR]` and `ralph-desk open DIR` call: a QApplication,
one qasync event loop, the project's services, the embedded MCP server and the window, started in
the order of `Startup.steps` and stopped in reverse. `build_window(services)` builds the window
alone, for tests and screenshots.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

from ralph_desk.gui import desktop_notifications as desktop
from ralph_desk.gui import icons, theme
from ralph_desk.gui.child_watch import pidfd_child_watcher
from ralph_desk.gui.collector import GuiThreadCollector, freeze_start_up
from ralph_desk.gui.controller import Controller, FileOpener, open_with_desktop
from ralph_desk.gui.dialogs import initialise
from ralph_desk.gui.focus_style import app_style
from ralph_desk.gui.live import POLL_INTERVAL_MS, ChangeFeed
from ralph_desk.gui.main_window import APP_NAME, MainWindow
from ralph_desk.gui.notify import Notifier
from ralph_desk.gui.panes.disciplines.wiring import DisciplinesWiring
from ralph_desk.gui.panes.features.wiring import FeaturesWiring
from ralph_desk.gui.panes.loop.wiring import LoopWiring
from ralph_desk.gui.settings import SYSTEM, DeskSettings
from ralph_desk.gui.theme import ThemeWatcher
from ralph_desk.gui.worker import Worker
from ralph_desk.project import (
    Problem,
    ProjectError,
    ProjectPaths,
    init_project,
    is_read_only,
    opening_problems,
    validate_project,
)
from ralph_desk.services.container import Services
from ralph_desk.store.errors import REPAIR, StoreError

if TYPE_CHECKING:
    from ralph_desk.domain.endpoints import EndpointIssuer
    from ralph_desk.loop.control import LoopController
    from ralph_desk.mcp_server.embedded import EmbeddedMcp

log = logging.getLogger("ralph_desk.app")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
ORGANIZATION = "ralph-desk"
GIL_SWITCH_S = 0.001
"""How long another thread may keep running Python while the GUI thread waits for it (Python's: 5 ms)."""

Action = Callable[[], Awaitable[None]]


# --- the application object ----------------------------------------------------------------------


def prepare_application(argv: list[str] | None = None) -> QApplication:
    """The QApplication with name, organisation, icon, style and a palette that follows the system."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(ORGANIZATION)
    app.setDesktopFileName(APP_NAME)
    app.setWindowIcon(icons.app_icon())
    style = app_style()
    if style is not None:
        app.setStyle(style)
    # The window's close ends the run coroutine; Qt must not stop the loop under it first.
    app.setQuitOnLastWindowClosed(False)
    if app.property("ralph_theme") is None:
        app.setProperty("ralph_theme", True)
        ThemeWatcher(app)
        GuiThreadCollector(app)
        # The worker and the loop's threads run Python (queries, git output); the GUI thread gives the
        # GIL up at every query and file read and waited up to 5 ms each time to get it back.
        sys.setswitchinterval(GIL_SWITCH_S)
    return app


def theme_watcher(app: QApplication) -> ThemeWatcher | None:
    """The palette follower installed by `prepare_application`."""
    return app.findChild(ThemeWatcher)


# --- the window ----------------------------------------------------------------------------------


def desktop_notifications() -> desktop.DesktopNotifications | None:
    """The platform's own notifications, where it has a service for them (else the tray's)."""
    return desktop.DesktopNotifications(APP_NAME, APP_NAME) if desktop.available() else None


def build_window(
    services: Services,
    *,
    settings: QSettings | None = None,
    mcp_url: str | None = None,
    poll_ms: int = POLL_INTERVAL_MS,
    use_tray: bool = True,
    live: bool = True,
    open_file: FileOpener = open_with_desktop,
    issuer: EndpointIssuer | None = None,
    loop_control: LoopController | None = None,
) -> MainWindow:
    """The main window over `services`, filled, following changes (not shown; needs no event loop).

    `issuer` (the embedded MCP server) gives the loop's agents their endpoints; without it the Loop
    pane says why it cannot start. `loop_control` (the embedded server's) follows the pane's runs.
    """
    desk_settings = DeskSettings(settings)
    window = MainWindow(services.paths.root.name, services.paths.root, desk_settings)
    worker = Worker(parent=window)
    feed = ChangeFeed(services.db, worker, poll_ms, parent=window)
    notifier = Notifier(
        services.paths.root.name,
        use_tray=use_tray,
        parent=window,
        desktop=desktop_notifications() if use_tray else None,
        enabled=lambda topic: desk_settings.notification_on(topic.value),
    )
    window.controller = Controller(window, services, feed, worker, notifier, mcp_url, open_file)
    project = services.project
    worker.submit("read the project", lambda: project.get().title, window.set_project_title)
    window.set_mcp(mcp_url)
    if live:
        feed.start()  # before reading: a change made meanwhile is then read twice, never missed
    window.controller.refresh_all()
    window.controller.loop = _wire_editors(window, services, issuer, open_file)
    window.controller.loop.sig_stopped_by_itself.connect(notifier.loop_stopped)
    if loop_control is not None:
        window.controller.loop.sig_run_started.connect(loop_control.follow)
    desk_settings.add_recent_project(services.paths.root)
    freeze_start_up()
    return window


def _wire_editors(
    window: MainWindow, services: Services, issuer: EndpointIssuer | None, open_file: FileOpener
) -> LoopWiring:
    """Connect the Features, Disciplines and Loop panes (their wirings live as children of the window)."""
    controller = window.controller
    assert controller is not None
    worker, feed = controller.worker, controller.feed
    features = FeaturesWiring(window.features, services, worker, parent=window)
    disciplines = DisciplinesWiring(window.disciplines, services, worker, parent=window)
    loop = LoopWiring(
        window.loop,
        services,
        controller.worker,
        controller.directory,
        issuer,
        window.settings.store,
        open_file,
        window,
    )
    window.close_guards.append(loop.ask_to_close)
    for refresh, on_changes in (
        (features.refresh, features.on_changes),
        (disciplines.refresh, disciplines.on_changes),
        (loop.refresh, loop.on_changes),
    ):
        feed.sig_changes.connect(on_changes)
        window.sig_refresh_requested.connect(refresh)
        refresh()
    return loop


# --- start-up and shut-down ----------------------------------------------------------------------


@dataclass
class Step:
    """One part of the app: how it starts, how it stops, and whether the app can run without it."""

    name: str
    start: Action
    stop: Action | None = None
    required: bool = True


@dataclass
class Startup:
    """The parts of the app in start order; what started is stopped in reverse order."""

    steps: list[Step] = field(default_factory=list)
    started: list[Step] = field(default_factory=list)

    def add(self, name: str, start: Action, stop: Action | None = None, required: bool = True) -> None:
        """Append a step."""
        self.steps.append(Step(name, start, stop, required))

    async def run(self) -> list[str]:
        """Start every step in order; returns the failures of optional steps (a required one raises)."""
        failures: list[str] = []
        for number, step in enumerate(self.steps, start=1):
            log.info("start %d/%d: %s", number, len(self.steps), step.name)
            try:
                await step.start()
            except Exception as error:
                if step.required:
                    raise
                log.warning("could not start %s", step.name, exc_info=True)
                failures.append(f"Could not start {step.name}: {error}")
                continue
            self.started.append(step)
        return failures

    async def shutdown(self) -> None:
        """Stop what started, last first; a failing stop does not keep the others from stopping."""
        while self.started:
            step = self.started.pop()
            if step.stop is None:
                continue
            log.info("stop: %s", step.name)
            try:
                await step.stop()
            except Exception:  # shutting down: log it and go on with the next part
                log.exception("stopping %s failed", step.name)


def embedded_mcp(services: Services) -> tuple[EmbeddedMcp, LoopController]:
    """The window's embedded MCP server, and the loop control its tools ask (it runs loops through it)."""
    from ralph_desk.loop.control import LoopController
    from ralph_desk.mcp_server.calllog import in_project
    from ralph_desk.mcp_server.embedded import EmbeddedMcp  # the MCP SDK loads only with the window

    control = LoopController(services)
    server = EmbeddedMcp(services, loop=control, call_log=in_project(services.paths, "window"))
    control.issue_through(server)
    return server, control


@dataclass
class Parts:
    """What the steps build, for the steps that come after them."""

    paths: ProjectPaths
    db_url: str | None = None
    services: Services | None = None
    mcp: EmbeddedMcp | None = None
    loop_control: LoopController | None = None
    mcp_url: str | None = None
    window: MainWindow | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event)


def _steps(app: QApplication, parts: Parts) -> Startup:
    """The app's parts, in the order they start."""
    startup = Startup()

    async def open_services() -> None:
        parts.services = Services.open(parts.paths, parts.db_url)

    async def close_services() -> None:
        if parts.services is not None:
            parts.services.close()

    async def start_mcp() -> None:
        assert parts.services is not None
        server, parts.loop_control = embedded_mcp(parts.services)
        await server.start()
        parts.mcp, parts.mcp_url = server, server.url

    async def stop_mcp() -> None:
        if parts.mcp is not None:
            await parts.mcp.stop()

    async def show_window() -> None:
        assert parts.services is not None
        window = build_window(
            parts.services, mcp_url=parts.mcp_url, issuer=parts.mcp, loop_control=parts.loop_control
        )
        watcher = theme_watcher(app)
        if watcher is not None:
            watcher.sig_changed.connect(window.refresh_style)  # first: the scheme chosen next redraws it
        scheme = window.settings.scheme()
        theme.choose(None if scheme == SYSTEM else theme.Scheme(scheme))
        window.sig_closed.connect(parts.closed.set)
        window.show()
        parts.window = window

    async def close_window() -> None:
        window = parts.window
        controller = window.controller if window is not None else None
        if controller is None:
            return
        if controller.loop is not None:
            await controller.loop.shutdown()  # the agent ends before the MCP server it talks to
        controller.feed.stop()
        controller.worker.shutdown()  # the operation under way finishes
        controller.notifier.hide()
        controller.window.deleteLater()

    async def start_companion() -> None:
        window = parts.window
        if window is None or window.controller is None:
            return
        try:
            await window.controller.companion.start_saved()
        except Exception:  # an address taken or gone: said in the window, which goes on without the page
            window.show_error(window.controller.companion.problem)

    async def stop_companion() -> None:
        controller = parts.window.controller if parts.window is not None else None
        if controller is not None:
            await controller.companion.stop()

    async def handle_interrupt() -> None:
        # Ctrl+C in the terminal closes the window like Quit; the feed's timer lets Python see it.
        signal.signal(signal.SIGINT, lambda *_: parts.window.close() if parts.window else parts.closed.set())

    async def restore_interrupt() -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)

    startup.add("the project's services", open_services, close_services)
    startup.add("the embedded MCP server", start_mcp, stop_mcp, required=False)
    startup.add("the window", show_window, close_window)
    startup.add("the companion page", start_companion, stop_companion, required=False)
    startup.add("the Ctrl+C handler", handle_interrupt, restore_interrupt, required=False)
    return startup


async def _run(app: QApplication, paths: ProjectPaths, db_url: str | None = None) -> int:
    """Start every part, wait for the window to close, stop every part; the exit code."""
    parts = Parts(paths, db_url)
    startup = _steps(app, parts)
    try:
        failures = await startup.run()
    except Exception as error:  # the top of the app: say why it cannot start, in a window
        log.exception("the window could not start")
        await startup.shutdown()
        known = isinstance(error, StoreError | ProjectError)  # in words already; others with their type
        said = str(error) if known else f"{type(error).__name__}: {error}"
        _critical(f"ralph-desk could not open {paths.root}", said)
        return EXIT_FAILURE
    if parts.window is not None:
        parts.window.set_mcp(parts.mcp_url, "; ".join(failures) or None)
        for failure in failures:
            parts.window.show_error(failure)
    await parts.closed.wait()
    await startup.shutdown()
    return EXIT_OK


# --- opening a folder ----------------------------------------------------------------------------


def _critical(title: str, text: str) -> None:
    box = QMessageBox(QMessageBox.Icon.Critical, APP_NAME, title)
    box.setInformativeText(text)
    box.exec()


def ready_project(root: Path, db_url: str | None = None) -> ProjectPaths | None:
    """The project at `root`, after offering to initialise a plain folder; None when refused or broken."""
    paths = ProjectPaths.at(root)
    if not paths.ralph.is_dir():
        if not initialise.ask_to_initialise(paths.root):
            return None
        try:
            init_project(paths.root, db_url=db_url)
        except (ProjectError, OSError) as error:
            _critical(f"Could not create a project in {paths.root}", str(error))
            return None
        log.info("initialised %s", paths.ralph)
    problems = opening_problems(validate_project(paths.root, db_url))
    if is_read_only(problems):
        log.error("%s is read-only", paths.ralph)
        _critical(f"{paths.root} is read-only", str(problems[0]))
        return None
    if problems:
        log.error("%s is not sound: %s", paths.ralph, "; ".join(str(problem) for problem in problems))
        shown = "\n".join(f"• {problem}" for problem in problems[:12])
        _critical(f"{paths.ralph} is not sound", f"{shown}\n\n{repair_advice(problems, paths.root)}")
        return None
    return paths


def repair_advice(problems: Sequence[Problem], root: Path) -> str:
    """One piece of advice under the problems: a damaged database's own repair path, never "keeps the data"
    beside it (`init --force` keeps the damaged file, which is what stops the project opening)."""
    details = f"Run `ralph-desk validate {root}` for details"
    if any(REPAIR in problem.message for problem in problems):
        return f"{details}; the database's line above says how to repair it."
    return f"{details}; `ralph-desk init --force {root}` repairs the configuration and keeps the data."


def launch_window(root: Path, db_url: str | None = None) -> int:
    """Open the window on the project at `root` and run until it closes; returns the exit code.

    `db_url` overrides the project's database (else `RALPH_DB_URL`, else its SQLite file).
    """
    import qasync  # imported here: the CLI's quick commands never load Qt's event loop

    app = prepare_application()
    paths = ready_project(Path(root), db_url)
    if paths is None:
        return EXIT_USAGE
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop, pidfd_child_watcher(loop):
        code: int = loop.run_until_complete(_run(app, paths, db_url))
    return code
