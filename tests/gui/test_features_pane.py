"""The Features pane alone, with its own feature: edits and learnings are asked for through its signals."""

from __future__ import annotations

from datetime import datetime

import pytest
from pytestqt.qtbot import QtBot

from ralph_desk.domain.records import Feature, FeatureLearning
from ralph_desk.gui.panes.features.pane import LEARNINGS, FeaturesPane

MADE = datetime(2026, 11, 1)


def learning(learning_id: int, text: str) -> FeatureLearning:
    """A learning an agent recorded on feature `charts`."""
    return FeatureLearning(learning_id, "charts", text, "agent", None, None, 1, MADE)


CHARTS = Feature(
    1,
    "charts",
    "Tide charts",
    "TC",
    "Seven-day tide curves.",
    None,
    None,
    (),
    (),
    (),
    MADE,
    (learning(11, "Heights are in metres."), learning(12, "Times are local.")),
)


@pytest.fixture
def pane(qtbot: QtBot) -> FeaturesPane:
    """The pane, on its own, with `charts` listed and shown."""
    shown = FeaturesPane()
    qtbot.addWidget(shown)
    shown.show_records([CHARTS])
    shown.detail.show_feature(CHARTS, [])
    return shown


def test_the_shown_feature_has_its_heading_and_learnings_counted(pane: FeaturesPane) -> None:
    detail = pane.detail

    assert pane.selected_name() == "charts"
    assert detail.heading.text() == "Tide charts  ·  TC"
    assert detail.tabs.tabText(LEARNINGS) == "Learnings (2)"


def test_an_edited_field_is_asked_to_be_saved_for_its_feature(qtbot: QtBot, pane: FeaturesPane) -> None:
    fields = pane.detail.fields
    fields.description.setPlainText("Seven-day tide curves with extremes marked.")
    assert fields.dirty

    with qtbot.waitSignal(pane.sig_save_requested, timeout=1000) as saved:
        fields.save.click()

    name, changes = saved.args
    assert name == "charts" and changes == {"description": "Seven-day tide curves with extremes marked."}


def test_deleting_a_learning_asks_first_then_asks_to_delete_it(qtbot: QtBot, pane: FeaturesPane) -> None:
    learnings = pane.detail.learnings
    learnings.select_ids([12])
    learnings.delete_button.click()
    assert learnings.confirm_box is not None

    with qtbot.waitSignal(pane.sig_delete_learning_requested, timeout=1000) as deleted:
        learnings.confirm_box.confirm_button.click()

    assert deleted.args == [12]
