"""No label, button, tab title or Reviews row is cut off at 1024×640, 1280×720 or 1920×1080 (Fusion)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QApplication, QDialog, QPushButton, QTableWidget, QTableWidgetItem, QWidget
from pytestqt.qtbot import QtBot

import ralph_desk.gui
from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Device, FeatureLearning
from ralph_desk.gui.clipping import CELL_PADDING_PX, clipped_cells, clipped_texts
from ralph_desk.gui.companion import CompanionState
from ralph_desk.gui.dialogs.companion import CompanionDialog
from ralph_desk.gui.dialogs.confirm import ConfirmBox
from ralph_desk.gui.dialogs.connect import ConnectDialog
from ralph_desk.gui.dialogs.new_record import NewRecordDialog
from ralph_desk.gui.dialogs.shortcuts import ShortcutsDialog
from ralph_desk.gui.dialogs.start_loop import StartLoopDialog
from ralph_desk.gui.dialogs.stop_loop import StopLoopBox
from ralph_desk.gui.dialogs.task_dialog import TaskDialog
from ralph_desk.gui.main_window import PANES, MainWindow
from ralph_desk.gui.panes.disciplines.dialogs import NewDisciplineDialog
from ralph_desk.gui.panes.disciplines.servers import ServerDialog
from ralph_desk.gui.panes.features.dialogs import LearningDialog, MergeDialog, NewFeatureDialog
from ralph_desk.gui.panes.inbox.dialogs import EditSuggestionDialog, ReasonDialog
from ralph_desk.gui.panes.inbox.pane import REVIEWS
from ralph_desk.gui.panes.inbox.reviews.dialogs import DiscardDialog, FinishReviewBox, RequestChangesDialog
from ralph_desk.gui.panes.inbox.reviews.diff_view import VIEWED_COLUMN
from ralph_desk.gui.panes.loop.dry_run import PreviewDialog
from ralph_desk.gui.panes.loop.running import RunningRow
from ralph_desk.gui.panes.loop.transcript_window import TranscriptWindow
from ralph_desk.gui.panes.loop.wiring import LoopWiring, loop_settings
from ralph_desk.gui.unsaved import UnsavedBox
from ralph_desk.loop.start_summary import summarise_start
from ralph_desk.project.companion_home import CompanionSettings
from ralph_desk.services.companion import PairingCode
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import make_repository
from tests.gui.conftest import controller, settle

pytestmark = pytest.mark.usefixtures("fusion")

SIZES = (QSize(1024, 640), QSize(1280, 720), QSize(1920, 1080))
SELECTED_TASK = 5


def views(window: MainWindow) -> Iterator[str]:
    """Show every pane, and every tab of the panes that have tabs; yield what is shown."""
    for entry in PANES:
        window.show_pane(entry.key)
        if entry.key == "inbox":
            for index in range(window.inbox.tabs.count()):
                window.inbox.show_tab(index)
                yield f"inbox tab {window.inbox.tabs.tabText(index)}"
        elif entry.key == "tasks":
            window.tasks.select_task(SELECTED_TASK)
            for index in range(window.tasks.detail.tabs.count()):
                window.tasks.detail.tabs.setCurrentIndex(index)
                yield f"task tab {window.tasks.detail.tabs.tabText(index)}"
        elif entry.key == "loop":
            yield "loop"
            yield from running_sessions(window)
        else:
            yield entry.key


def running_sessions(window: MainWindow) -> Iterator[str]:
    """The Loop pane with three sessions running, as the table and stream, then at a glance."""
    now = datetime.now(UTC)
    rows = [
        RunningRow(
            f"s-{n}", f"#{n} {LONG_TITLE}", "claude", now - timedelta(minutes=n), n, 0.37 * n, LONG_TITLE
        )
        for n in (3, 2, 1)
    ]
    sessions = window.loop.sessions
    window.loop.show_running(rows, rows[1].session_id)
    yield "loop running sessions"
    sessions.show_glance(True)
    yield "loop sessions at a glance"
    sessions.show_glance(False)
    window.loop.show_running([], None)


def test_the_checker_finds_a_cut_off_button_and_label(qtbot: QtBot) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    cut = QPushButton("Start the loop with these settings", holder)
    cut.setGeometry(0, 0, 40, 24)
    holder.show()

    assert [found.text for found in clipped_texts(holder)] == ["Start the loop with these settings"]


def test_the_checker_finds_a_cut_off_cell_wrapped_or_not(qtbot: QtBot) -> None:
    table = QTableWidget(1, 1)
    qtbot.addWidget(table)
    table.setItem(0, 0, QTableWidgetItem(LONG_TITLE))
    table.setColumnWidth(0, 120)
    table.show()

    assert [found.text for found in clipped_cells(table)] == [LONG_TITLE]
    table.setWordWrap(True)
    table.resizeRowsToContents()
    assert clipped_cells(table) == []


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size.width()}x{size.height()}")
def test_no_text_is_cut_off_in_any_pane(qtbot: QtBot, window: MainWindow, size: QSize) -> None:
    window.resize(size)
    settle(qtbot, window)
    assert window.size() == size  # the window fits the screen size asked for

    problems = []
    for shown in views(window):
        settle(qtbot, window)  # the pane's data is read and shown, its layout done
        QApplication.processEvents()
        problems += [f"{shown}: {found}" for found in clipped_texts(window)]

    assert problems == []


REVIEW_SIZES = SIZES[:2]
IN_REVIEW = 20


def _eighty(number: int) -> str:
    """A title of exactly 80 characters, numbered."""
    title = f"#{number:02d} Keyboard navigation along the tide curve, announced to screen readers at once"
    return (title + " and read aloud")[:80]


@pytest.mark.parametrize("size", REVIEW_SIZES, ids=lambda size: f"{size.width()}x{size.height()}")
def test_twenty_reviews_of_long_titles_show_each_title_whole(
    qtbot: QtBot, window: MainWindow, services: Services, size: QSize
) -> None:
    feature = services.features.list()[0].name
    discipline = services.disciplines.list()[0].name
    for number in range(IN_REVIEW):
        task = services.tasks.create(feature, discipline, _eighty(number))
        services.tasks.move(task.id, TaskStatus.IN_REVIEW, Mover.IMPORT)
    window.resize(size)
    window.show_pane("inbox")
    window.inbox.show_tab(REVIEWS)
    reviews = window.inbox.reviews
    qtbot.waitUntil(lambda: reviews.model.rowCount() == IN_REVIEW, timeout=10_000)
    settle(qtbot, window)
    QApplication.processEvents()
    assert window.size() == size
    assert all(len(record.title) == 80 for record in reviews.model.items)

    assert [str(found) for found in clipped_cells(reviews.table)] == []
    assert [str(found) for found in clipped_texts(window)] == []
    reviews.table.selectAll()
    QApplication.processEvents()
    assert reviews.list.batch.isVisible()
    assert [str(found) for found in clipped_texts(window)] == []


Opener = Callable[[MainWindow, Services], QWidget | None]
LONG_TITLE = "Keyboard navigation along the tide curve, with the cursor announced to screen readers"


def _task_dialog(window: MainWindow, _services: Services) -> QWidget | None:
    controller(window).tasks.new_task()
    return controller(window).tasks.task_dialog


def _shortcuts(window: MainWindow, _services: Services) -> QWidget | None:
    window.show_shortcuts()
    return window.shortcuts_dialog


def _connect(window: MainWindow, _services: Services) -> QWidget | None:
    controller(window).show_connect()
    return controller(window).connect_dialog


def _dry_run(window: MainWindow, _services: Services) -> QWidget | None:
    window.loop.preview.click()
    return window.loop.preview_dialog


def _start_loop(window: MainWindow, services: Services) -> QWidget | None:
    settings = loop_settings(services.paths, window.loop.settings.changes())
    summary = summarise_start(services, settings, services.paths.root)
    return StartLoopDialog(summary, lambda _keep: None, window)


def _stop_loop(window: MainWindow, _services: Services) -> QWidget | None:
    return StopLoopBox("Stop", f"#5 {LONG_TITLE}", lambda _choice: None, window)


def _confirm(window: MainWindow, _services: Services) -> QWidget | None:
    return ConfirmBox(
        "Delete the feature?", f"Delete the feature {LONG_TITLE}?", "Delete", lambda: None, window
    )


def _unsaved(window: MainWindow, _services: Services) -> QWidget | None:
    window.show_pane("tasks")
    return UnsavedBox(f"task #5 {LONG_TITLE}", window.tasks.detail, lambda: None, lambda: None, window)


def _new_feature(window: MainWindow, _services: Services) -> QWidget | None:
    return NewFeatureDialog([], window)


def _new_discipline(window: MainWindow, _services: Services) -> QWidget | None:
    return NewDisciplineDialog([], window)


def _mcp_server(window: MainWindow, _services: Services) -> QWidget | None:
    return ServerDialog(None, [], window)


def _learnings(services: Services) -> list[FeatureLearning]:
    return [
        learning
        for feature in services.features.list()
        for learning in services.features.get(feature.name).learnings
    ]


def _edit_learning(window: MainWindow, services: Services) -> QWidget | None:
    return LearningDialog(_learnings(services)[0], window)


def _merge_learnings(window: MainWindow, services: Services) -> QWidget | None:
    learnings = _learnings(services)
    assert len(learnings) >= 2
    return MergeDialog(learnings[:3], window)


def _edit_suggestion(window: MainWindow, services: Services) -> QWidget | None:
    draft = next(task for task in services.tasks.list() if task.status.value == "draft")
    features = [feature.name for feature in services.features.list()]
    disciplines = [discipline.name for discipline in services.disciplines.list()]
    return EditSuggestionDialog(services.tasks.get(draft.id), features, disciplines, window)


def _reason(window: MainWindow, _services: Services) -> QWidget | None:
    return ReasonDialog(
        "Reject suggestion", "Why is this task not wanted? The agent reads the reason.", window
    )


def _request_changes(window: MainWindow, _services: Services) -> QWidget | None:
    return RequestChangesDialog(LONG_TITLE, [], window)


def _discard(window: MainWindow, _services: Services) -> QWidget | None:
    return DiscardDialog(12345, LONG_TITLE, "main", 30, window)


def _finish_review(window: MainWindow, _services: Services) -> QWidget | None:
    return FinishReviewBox(12345, 17, window)


def _transcript(window: MainWindow, services: Services) -> QWidget | None:
    newest = next(row for row in window.loop.history.model.items if row.session.transcript_path)
    loop = window.findChild(LoopWiring)
    assert loop is not None
    loop.open_transcript_window(newest)
    return loop.transcript_windows.get(services.paths.transcript(newest.session.transcript_path or ""))


def _companion(window: MainWindow, _services: Services) -> QWidget | None:
    dialog = CompanionDialog(window)
    now = datetime.now(UTC)
    settings = CompanionSettings(True, "192.168.100.200", 47800)
    dialog.show_state(CompanionState(settings, ["127.0.0.1", "192.168.100.200", "fd00::2"], []))
    url = "https://192.168.100.200:47800/"
    dialog.show_serving(url, ":".join(["AB"] * 32))
    dialog.show_code(PairingCode("ABCDEFGH", now + timedelta(minutes=5)), f"{url}pair#ABCDEFGH")
    dialog.show_devices([Device(7, "x" * 60, now, now, now)])
    return dialog


def _transcript_window(window: MainWindow) -> QWidget | None:
    loop = window.findChild(LoopWiring)
    assert loop is not None
    return next(iter(loop.transcript_windows.values()), None)


OPENED_BY_THE_WORKER: dict[type[QWidget], Callable[[MainWindow], QWidget | None]] = {
    PreviewDialog: lambda window: window.loop.preview_dialog,
    TranscriptWindow: _transcript_window,
}

OPENERS: dict[type[QWidget], Opener] = {
    TaskDialog: _task_dialog,
    ShortcutsDialog: _shortcuts,
    ConnectDialog: _connect,
    CompanionDialog: _companion,
    PreviewDialog: _dry_run,
    StartLoopDialog: _start_loop,
    StopLoopBox: _stop_loop,
    ConfirmBox: _confirm,
    UnsavedBox: _unsaved,
    NewFeatureDialog: _new_feature,
    NewDisciplineDialog: _new_discipline,
    ServerDialog: _mcp_server,
    LearningDialog: _edit_learning,
    MergeDialog: _merge_learnings,
    EditSuggestionDialog: _edit_suggestion,
    ReasonDialog: _reason,
    RequestChangesDialog: _request_changes,
    DiscardDialog: _discard,
    FinishReviewBox: _finish_review,
    TranscriptWindow: _transcript,
}
ABSTRACT = {NewRecordDialog}
"""Bases the window never opens as they are (their subclasses are covered)."""


def _dialog_classes() -> set[type]:
    """Every QDialog subclass the window's code defines."""
    for module in pkgutil.walk_packages(ralph_desk.gui.__path__, "ralph_desk.gui."):
        importlib.import_module(module.name)
    found: set[type] = set()
    todo: list[type] = [QDialog]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("ralph_desk.gui."):
                found.add(sub)
    return found


def test_every_dialog_of_the_window_is_checked() -> None:
    assert _dialog_classes() - set(OPENERS) - ABSTRACT == set()


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size.width()}x{size.height()}")
@pytest.mark.parametrize("kind", list(OPENERS), ids=lambda kind: kind.__name__)
def test_no_text_is_cut_off_in_the_dialogs(
    qtbot: QtBot, window: MainWindow, services: Services, kind: type[QWidget], size: QSize
) -> None:
    window.resize(size)
    settle(qtbot, window)
    dialog = OPENERS[kind](window, services)
    if dialog is None and kind in OPENED_BY_THE_WORKER:  # opened once what it shows has been read
        settle(qtbot, window)
        dialog = OPENED_BY_THE_WORKER[kind](window)
    assert isinstance(dialog, kind)
    if not dialog.isVisible():
        dialog.open() if isinstance(dialog, QDialog) else dialog.show()
    qtbot.waitExposed(dialog)
    if isinstance(dialog, TranscriptWindow):  # its lines are read off the GUI thread: shown a moment later
        qtbot.waitUntil(lambda: bool(dialog.status.text()), timeout=5000)
    QApplication.processEvents()

    assert [str(found) for found in clipped_texts(dialog)] == []
    dialog.close()


CHANGED_FILES = {
    "tidewater/chart.py": "MARKS = 2\n",
    "docs/marks.md": "# Marks\n",
    "tidewater/stations/secondary_port_offsets_from_the_admiralty_tables.py": "OFFSETS = {}\n",
}


@pytest.mark.parametrize("size", REVIEW_SIZES, ids=lambda size: f"{size.width()}x{size.height()}")
def test_the_diffs_file_list_shows_usual_paths_whole_and_elides_a_long_one_in_its_middle(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, size: QSize
) -> None:
    make_repository(project, "main")
    task = next(task.id for task in services.tasks.list() if task.status is TaskStatus.PENDING)
    put_in_review(services, task, (CHANGED_FILES, "Three files"))
    window.resize(size)
    window.show_pane("inbox")
    window.inbox.show_tab(REVIEWS)
    diff = window.inbox.reviews.detail.diff
    qtbot.waitUntil(lambda: diff.file_model.rowCount() == len(CHANGED_FILES), timeout=10_000)
    settle(qtbot, window)
    QApplication.processEvents()
    table = diff.file_table

    room = table.columnWidth(0) - table.iconSize().width() - CELL_PADDING_PX * 2
    assert room >= max(table.fontMetrics().horizontalAdvance(path) for path in list(CHANGED_FILES)[:2])
    assert table.textElideMode() == Qt.TextElideMode.ElideMiddle
    assert (
        table.columnViewportPosition(VIEWED_COLUMN) + table.columnWidth(VIEWED_COLUMN)
        <= table.viewport().width()
    )
    tips = [
        str(diff.file_model.data(diff.file_model.index(row, 0), Qt.ItemDataRole.ToolTipRole))
        for row in range(3)
    ]
    assert all(any(tip.startswith(path + "\n") for tip in tips) for path in CHANGED_FILES)
    assert window.size() == size
    assert [str(found) for found in clipped_texts(window)] == []
