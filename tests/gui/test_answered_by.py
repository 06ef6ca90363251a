"""The window names who made each decision: the Answered tab, a flag's resolution, a signal's details."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import FlagResolution, TaskStatus, Triage
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui.clipping import clipped_cells, clipped_texts
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.signals import FlagItem, FlagTableModel, describe_long
from ralph_desk.gui.panes.inbox.pane import ANSWERED, REVIEWS
from ralph_desk.services.container import Services
from ralph_desk.store import merge_queue
from tests.gui.conftest import controller, settle

PHONE = "Ana's phone (companion)"
WAIT_MS = 5000


def _line_before(text: str, answer: str) -> str:
    """The heading line of the Answered tab's entry whose answer is `answer` (task, when, by whom)."""
    lines = text.splitlines()
    return lines[lines.index(answer) - 2]


def test_the_answered_tab_names_the_device_that_answered_and_the_desk(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    from_phone, from_desk = services.inbox.asks()[:2]
    answered = window.inbox.answered
    window.inbox.show_tab(ANSWERED)

    services.inbox.answer(from_phone.id, "Metres, from the phone.", by=PHONE)  # as the companion page does
    controller(window).inbox.answer(from_desk.id, "Feet, at the desk.")
    controller(window).pending.commit()

    shown = {from_phone.id, from_desk.id}
    qtbot.waitUntil(lambda: shown <= {item.ask.id for item in answered.items}, timeout=WAIT_MS)
    text = answered.browser.toPlainText()
    assert _line_before(text, "Metres, from the phone.").endswith(f"by {PHONE}")
    assert _line_before(text, "Feet, at the desk.").endswith("by desk")


def test_a_settled_flag_and_a_signal_s_details_name_the_device(qtbot: QtBot, services: Services) -> None:
    flag = services.inbox.flags(resolution=FlagResolution.OPEN)[0]
    dismissed = services.inbox.triage(flag.id, Triage.DISMISSED, by=PHONE).flag
    model = FlagTableModel()
    model.set_items([FlagItem(dismissed, "a task", "a feature"), FlagItem(flag, "a task", "a feature")])
    resolution = [column.title for column in model.columns].index("Resolution")

    tips = [model.data(model.index(row, resolution), Qt.ItemDataRole.ToolTipRole) for row in range(2)]

    assert tips == [f"dismissed by {PHONE}", None]  # the open one has no maker yet
    assert f"Decided by: {PHONE}" in describe_long(dismissed)


def test_reviews_approved_from_a_device_say_so_whole_at_1024x640(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    feature, discipline = services.features.list()[0].name, services.disciplines.list()[0].name
    title = "Keyboard navigation along the tide curve, announced to screen readers at once and read"[:80]
    for _ in range(3):
        task = services.tasks.create(feature, discipline, title)
        services.tasks.move(task.id, TaskStatus.IN_REVIEW, Mover.IMPORT)
        with services.db.write() as unit:  # approved from the phone, queued behind the ones before
            merge_queue.enqueue(unit, task.id, services.workspaces.checkout, None, approved_by=PHONE)
    window.resize(QSize(1024, 640))
    window.show_pane("inbox")
    window.inbox.show_tab(REVIEWS)
    reviews = window.inbox.reviews
    said = f"approved by {PHONE}: merges after 2 other approval(s)"
    qtbot.waitUntil(lambda: any(entry.merge == said for entry in reviews.model.items), timeout=WAIT_MS)
    settle(qtbot, window)
    QApplication.processEvents()

    assert [str(found) for found in clipped_cells(reviews.table)] == []
    assert [str(found) for found in clipped_texts(window)] == []
