"""No label, button or tab title is cut off at 1024×640, 1280×720 or 1920×1080 with the Fusion style."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from ralph_desk.gui.clipping import clipped_texts
from ralph_desk.gui.main_window import PANES, MainWindow
from tests.gui.conftest import controller, settle

SIZES = (QSize(1024, 640), QSize(1280, 720), QSize(1920, 1080))
SELECTED_TASK = 5


@pytest.fixture(autouse=True)
def fusion(qapp: QApplication) -> Iterator[None]:
    """The Fusion style, as the app sets it."""
    before = qapp.style().name()
    qapp.setStyle("Fusion")
    yield
    qapp.setStyle(before)


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
        else:
            yield entry.key


def test_the_checker_finds_a_cut_off_button_and_label(qtbot: QtBot) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    cut = QPushButton("Start the loop with these settings", holder)
    cut.setGeometry(0, 0, 40, 24)
    holder.show()

    assert [found.text for found in clipped_texts(holder)] == ["Start the loop with these settings"]


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


Opener = Callable[[MainWindow], QWidget | None]


def _task_dialog(window: MainWindow) -> QWidget | None:
    controller(window).tasks.new_task()
    return controller(window).tasks.task_dialog


def _shortcuts(window: MainWindow) -> QWidget | None:
    window.show_shortcuts()
    return window.shortcuts_dialog


def _connect(window: MainWindow) -> QWidget | None:
    controller(window).show_connect()
    return controller(window).connect_dialog


@pytest.mark.parametrize("open_dialog", [_task_dialog, _shortcuts, _connect], ids=lambda f: f.__name__[1:])
def test_no_text_is_cut_off_in_the_dialogs(qtbot: QtBot, window: MainWindow, open_dialog: Opener) -> None:
    window.resize(SIZES[0])
    dialog = open_dialog(window)
    assert dialog is not None
    qtbot.waitExposed(dialog)

    assert [str(found) for found in clipped_texts(dialog)] == []
    dialog.close()
