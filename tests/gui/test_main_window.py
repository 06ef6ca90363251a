"""The main window: panes and shortcuts, what it remembers, empty states, the dashboard, dialogs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, QSize, Qt
from PySide6.QtWidgets import QApplication, QLabel, QTabWidget
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui.dialogs import initialise
from ralph_desk.gui.main_window import DEFAULT_SIZE, PANES, WINDOW_OFFSET, MainWindow
from ralph_desk.gui.panes.inbox.pane import SUGGESTIONS
from ralph_desk.gui.settings import DeskSettings
from ralph_desk.mcp_server.clients import ralph_command
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.support.demo_rows import task_id

LAPTOP = QSize(1280, 720)
MAX_MINIMUM_WIDTH = 1000


def test_ctrl_and_a_number_switch_panes(qtbot: QtBot, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.waitActive(window)
    for number, entry in enumerate(PANES, start=1):
        qtbot.keyClick(window, Qt.Key(Qt.Key.Key_0.value + number), Qt.KeyboardModifier.ControlModifier)
        settle(qtbot, window)
        assert window.current_pane == entry.key
        assert window.sidebar.currentRow() == number - 1


def test_the_inbox_badge_counts_questions_suggestions_open_flags_and_failed_tasks(
    window: MainWindow, services: Services
) -> None:
    counts = services.inbox.counts()
    questions = len(services.inbox.asks(open_only=False))
    failed = len(services.inbox.failed())

    assert failed == 1
    assert window.sidebar.badge("inbox") == questions + counts["suggestions"] + counts["flags"] + failed
    assert window.windowTitle().startswith(
        f"{services.project.get().title} ({window.sidebar.badge('inbox')})"
    )


def test_the_status_bar_shows_project_endpoint_and_live_updates(window: MainWindow) -> None:
    assert window.project_label.text() == "Tidewater"
    assert window.mcp_label.text() == "MCP not running"
    assert "live" in window.live_label.text()


def test_the_pane_geometry_and_splitter_are_remembered(
    qtbot: QtBot, services: Services, settings: QSettings
) -> None:
    first = build_window(services, settings=settings, use_tray=False, live=False)
    qtbot.addWidget(first)
    first.resize(701, 503)
    first.show_pane("dashboard")
    first.close()

    second = build_window(services, settings=settings, use_tray=False, live=False)
    qtbot.addWidget(second)

    assert second.current_pane == "dashboard"
    assert (second.width(), second.height()) == (701, 503)
    assert [Path(p) for p in settings.value("projects/recent")] == [services.paths.root]


def test_an_empty_project_says_what_to_do_in_every_pane(
    qtbot: QtBot, tmp_path: Path, settings: QSettings
) -> None:
    paths = init_project(tmp_path / "empty", title="Empty")
    services = Services.open(ProjectPaths.at(paths.root))
    try:
        window = build_window(services, settings=settings, use_tray=False, live=False)
        qtbot.addWidget(window)
        settle(qtbot, window)

        assert window.tasks.stack.currentWidget() is window.tasks.empty
        assert "import-prd" in window.tasks.empty.text.text()
        assert window.inbox.questions.currentWidget() is window.inbox.questions.empty
        assert window.inbox.suggestions.currentWidget() is window.inbox.suggestions.empty
        assert window.inbox.flags.stack.currentWidget() is window.inbox.flags.empty
        assert window.sidebar.badge("inbox") == 0
        assert "Nothing waits for you" in window.inbox.summary.text()
        window.show_pane("dashboard")
        settle(qtbot, window)
        assert "No tasks yet" in window.dashboard.subtitle.text()
        assert window.loop.stream.empty.title.text() == "No session yet"
        assert window.loop.state.text() == "not running"
    finally:
        window.close()
        services.close()


def test_the_dashboard_shows_progress_cost_counts_and_recent_sessions(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("dashboard")
    settle(qtbot, window)
    dashboard = window.dashboard
    progress = services.project.progress()

    assert dashboard.done.value.text() == f"{progress['done']} / {progress['total']}"
    assert dashboard.cost.value.text() == f"${services.sessions.total_cost():,.2f}"
    assert dashboard.flags.value.text() == str(services.inbox.counts()["flags"])
    assert dashboard.status_bar.total == progress["total"]
    assert dashboard.recent.topLevelItemCount() == 8
    feature_labels = {
        item.widget().text()
        for index in range(dashboard.features_grid.count())
        if (item := dashboard.features_grid.itemAt(index)) is not None and isinstance(item.widget(), QLabel)
    }
    assert set(progress["by_feature"]) <= feature_labels


def test_dashboard_tiles_lead_to_the_inbox_and_recent_sessions_to_their_task(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.show_pane("dashboard")
    settle(qtbot, window)
    qtbot.mouseClick(window.dashboard.suggestions, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    assert window.current_pane == "inbox"
    assert window.inbox.tabs.currentIndex() == SUGGESTIONS

    window.show_pane("dashboard")
    item = window.dashboard.recent.topLevelItem(0)
    assert item is not None
    window.dashboard.recent.itemDoubleClicked.emit(item, 0)
    assert window.current_pane == "tasks"
    assert window.tasks.selected_id() == item.data(0, Qt.ItemDataRole.UserRole)


def test_the_dashboard_is_read_again_only_when_shown(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("dashboard")
    settle(qtbot, window)
    window.show_pane("tasks")
    services.tasks.move(task_id(services, "Mark high and low water on the chart"), "done", Mover.IMPORT)
    wiring = controller(window).dashboard
    qtbot.waitUntil(lambda: wiring.stale, timeout=3000)

    window.show_pane("dashboard")
    settle(qtbot, window)

    assert not wiring.stale
    assert window.dashboard.done.value.text().startswith(f"{services.project.progress()['done']} /")


def test_connect_a_client_shows_a_configuration_per_client(window: MainWindow) -> None:
    window.connect_action.trigger()

    dialog = controller(window).connect_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.clients.count() >= 5
    assert "mcp" in dialog.text()
    dialog.close()


def test_a_task_link_in_the_inbox_opens_the_task(window: MainWindow, services: Services) -> None:
    ask = services.inbox.asks()[0]
    card = window.inbox.questions.card(ask.id)
    assert card is not None

    card.task.linkActivated.emit(f"task:{ask.task_id}")

    assert window.current_pane == "tasks"
    assert window.tasks.selected_id() == ask.task_id


def test_notices_hide_by_themselves_and_errors_stay(qtbot: QtBot, window: MainWindow) -> None:
    window.message_bar.success("Saved.")
    assert window.message_bar.isVisible()
    window.message_bar.error("Could not save: the disk is full")
    assert window.message_bar.level == "error"
    assert not window.message_bar._timer.isActive()


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The commands the window starts (none is run)."""
    commands: list[list[str]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda command, **_kwargs: commands.append(command))
    return commands


def test_opening_another_project_starts_a_window_of_its_own(
    qtbot: QtBot, window: MainWindow, project: Path, started: list[list[str]]
) -> None:
    window.sig_open_project_requested.emit(str(project))
    settle(qtbot, window)

    assert started and started[0][-2:] == ["open", str(project)]
    assert "new window" in window.message_bar.text


def test_opening_a_broken_project_says_why_in_the_window(
    qtbot: QtBot, window: MainWindow, project: Path, started: list[list[str]]
) -> None:
    ProjectPaths.at(project).config_file.write_text("[]", encoding="utf-8")

    window.sig_open_project_requested.emit(str(project))
    settle(qtbot, window)

    assert started == []
    assert window.message_bar.level == "error"
    assert "config.json" in window.message_bar.text


def test_opening_another_project_runs_this_installations_ralph_desk(
    qtbot: QtBot, window: MainWindow, project: Path, started: list[list[str]]
) -> None:
    window.sig_open_project_requested.emit(str(project))
    settle(qtbot, window)

    assert started == [[*ralph_command(), "open", str(project)]]


def test_opening_a_plain_folder_offers_to_initialise_it_first(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    started: list[list[str]],
) -> None:
    monkeypatch.setattr(initialise, "ask_to_initialise", lambda *_args: True)
    folder = tmp_path / "harbour"
    folder.mkdir()

    window.sig_open_project_requested.emit(str(folder))
    settle(qtbot, window)

    assert ProjectPaths.at(folder).db_file.is_file()
    assert started == [[*ralph_command(), "open", str(folder)]]


def test_a_new_window_fits_the_screen_it_opens_on(
    qtbot: QtBot, services: Services, settings: QSettings
) -> None:
    fresh = build_window(services, settings=settings, use_tray=False, live=False)
    qtbot.addWidget(fresh)

    available = fresh.screen().availableGeometry().size()
    assert fresh.size() == DEFAULT_SIZE.boundedTo(available)
    assert fresh.width() <= available.width() and fresh.height() <= available.height()


def visit_every_pane(qtbot: QtBot, window: MainWindow) -> None:
    """Show each pane and each tab in it; the window keeps its width throughout."""
    width = window.width()
    for entry in PANES:
        window.show_pane(entry.key)
        qtbot.waitUntil(lambda key=entry.key: window.panes[key].isVisible())
        for tabs in window.panes[entry.key].findChildren(QTabWidget):
            for index in range(tabs.count() if tabs.isVisible() else 0):
                tabs.setCurrentIndex(index)
                # Layouts ask for room through posted events: let them all through before measuring.
                QApplication.processEvents()
                assert window.width() == width, f"{entry.key}: {tabs.tabText(index)}"
        QApplication.processEvents()
        assert window.width() == width, entry.key


def assert_fits_a_laptop_screen(qtbot: QtBot, window: MainWindow) -> None:
    """No pane holds the window wider than a small laptop's screen, and 1280 × 720 is taken as it is."""
    visit_every_pane(qtbot, window)
    assert window.minimumSizeHint().width() <= MAX_MINIMUM_WIDTH

    window.resize(LAPTOP)
    qtbot.waitUntil(lambda: window.size() == LAPTOP)
    visit_every_pane(qtbot, window)

    assert window.size() == LAPTOP


def test_every_pane_fits_a_laptop_screen(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    window.tasks.select_task(task_id(services, "Apply daylight-saving offsets"))
    window.features.select_feature("tide-data")
    window.disciplines.select_discipline("docs")

    assert_fits_a_laptop_screen(qtbot, window)


def test_every_empty_pane_fits_a_laptop_screen(qtbot: QtBot, tmp_path: Path, settings: QSettings) -> None:
    paths = init_project(tmp_path / "empty", title="Empty")
    services = Services.open(ProjectPaths.at(paths.root))
    try:
        window = build_window(services, settings=settings, use_tray=False, live=False)
        qtbot.addWidget(window)
        settle(qtbot, window)
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)

        assert_fits_a_laptop_screen(qtbot, window)
    finally:
        window.close()
        services.close()


def offset(first: MainWindow, other: MainWindow) -> QPoint:
    """How far `other` lies from `first`, to 4 px (offscreen Qt shifts a frame by a pixel or two)."""
    shift = other.pos() - first.pos()
    return QPoint(round(shift.x() / 4) * 4, round(shift.y() / 4) * 4)


def test_a_second_window_opens_offset_from_the_first_and_a_closed_one_frees_its_place(
    qtbot: QtBot, services: Services, settings: QSettings
) -> None:
    def opened() -> MainWindow:
        window = build_window(services, settings=settings, use_tray=False, live=False)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        return window

    placed = opened()
    placed.move(120, 90)  # the last window's place, saved when it closes
    placed.close()
    first = opened()
    second = opened()

    assert offset(first, second) == QPoint(WINDOW_OFFSET, WINDOW_OFFSET)
    second.close()
    third = opened()
    assert offset(first, third) == QPoint(WINDOW_OFFSET, WINDOW_OFFSET)
    third.close()
    first.close()
    assert DeskSettings(settings).open_windows() == []
