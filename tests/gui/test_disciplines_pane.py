"""The Disciplines pane alone, with its own disciplines: creating, selecting and deleting are asked for
through its signals."""

from __future__ import annotations

from datetime import datetime

import pytest
from pytestqt.qtbot import QtBot

from ralph_desk.domain.records import Discipline
from ralph_desk.gui.panes.disciplines.pane import DisciplinesPane

CREATED = datetime(2026, 11, 1)


def discipline(record_id: int, name: str, display_name: str) -> Discipline:
    """A discipline with no persona, tools or servers of its own."""
    return Discipline(
        record_id,
        name,
        display_name,
        "server",
        "#336699",
        None,
        None,
        (),
        None,
        (),
        (),
        datetime(2026, 11, 1),
    )


@pytest.fixture
def pane(qtbot: QtBot) -> DisciplinesPane:
    """The pane, on its own, listing two disciplines."""
    shown = DisciplinesPane()
    qtbot.addWidget(shown)
    shown.show_records([discipline(1, "backend", "Backend"), discipline(2, "docs", "Docs")])
    return shown


def test_the_first_discipline_is_selected_and_another_one_is_told_when_selected(
    qtbot: QtBot, pane: DisciplinesPane
) -> None:
    assert pane.selected_name() == "backend" and pane.count.text() == "2 disciplines"

    with qtbot.waitSignal(pane.sig_selected, timeout=1000) as selected:
        assert pane.select_discipline("docs")

    assert selected.args == ["docs"]
    assert not pane.select_discipline("ops")


def test_the_new_dialog_asks_to_create_a_discipline_with_its_fields(
    qtbot: QtBot, pane: DisciplinesPane
) -> None:
    pane.new_button.click()
    dialog = pane.new_dialog
    assert dialog is not None
    dialog.display_name.setText("Data science")

    with qtbot.waitSignal(pane.sig_create_requested, timeout=1000) as created:
        dialog.create_button.click()

    (fields,) = created.args
    assert fields["name"] == "data-science" and fields["display_name"] == "Data science"


def test_delete_asks_first_then_asks_to_delete_the_selected_discipline(
    qtbot: QtBot, pane: DisciplinesPane
) -> None:
    assert pane.select_discipline("docs")
    pane.delete_button.click()
    assert pane.confirm_box is not None and "docs" in pane.confirm_box.text()

    with qtbot.waitSignal(pane.sig_delete_requested, timeout=1000) as deleted:
        pane.confirm_box.confirm_button.click()

    assert deleted.args == ["docs"]
