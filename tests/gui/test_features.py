"""The Features pane, driven like a person would, over real services on the demo database."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.features import FeatureTableModel, LearningTableModel
from ralph_desk.gui.panes.features.pane import LEARNINGS, FeaturesPane
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.gui.conftest import settle
from tests.support.demo_rows import task_id

WAIT_MS = 3000


def open_feature(qtbot: QtBot, window: MainWindow, name: str) -> FeaturesPane:
    window.show_pane("features")
    pane = window.features
    assert pane.select_feature(name)
    qtbot.waitUntil(
        lambda: (shown := pane.detail.feature) is not None and shown.name == name, timeout=WAIT_MS
    )
    return pane


def learning_rows(pane: FeaturesPane) -> dict[int, int]:
    """Learning id → hit count, as the table shows them."""
    model = pane.detail.learnings.model
    return {model.record(row).id: model.record(row).hit_count for row in range(model.rowCount())}


# --- the list and the fields -----------------------------------------------------------------


def test_the_list_shows_every_feature_and_selects_the_first(window: MainWindow, services: Services) -> None:
    pane = window.features

    assert sorted(pane.names()) == sorted(feature.name for feature in services.features.list())
    assert pane.count.text() == f"{len(services.features.list())} features"
    assert pane.selected_name() is not None
    assert pane.detail.currentWidget() is pane.detail.page


def test_editing_every_field_and_saving_stores_them(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    pane = open_feature(qtbot, window, "tide-charts")
    fields = pane.detail.fields
    assert not fields.save.isEnabled()

    fields.display_name.setText("Tide curves")
    fields.acronym.setText("TCV")
    fields.description.setPlainText("Draws the tide curve for a station.")
    fields.architecture.setPlainText("React + SVG; data from /predictions.")
    fields.boundaries.setPlainText("Never computes predictions itself.")
    fields.context.input.setText("web/src/charts/Axis.tsx")
    qtbot.keyClick(fields.context.input, Qt.Key.Key_Return)
    settle(qtbot, window)
    fields.context.list.setCurrentRow(0)
    fields.context.remove_button.click()
    settle(qtbot, window)
    fields.knowledge.add("docs/charts.md")
    fields.dependencies.set_checked("tide-data", False)
    fields.dependencies.set_checked("station-search", True)
    assert fields.save.isEnabled()
    fields.save.click()
    settle(qtbot, window)

    stored = services.features.get("tide-charts")
    assert stored.display_name == "Tide curves"
    assert stored.acronym == "TCV"
    assert stored.description == "Draws the tide curve for a station."
    assert stored.architecture == "React + SVG; data from /predictions."
    assert stored.boundaries == "Never computes predictions itself."
    assert stored.context_files == ("web/src/charts/useTides.ts", "web/src/charts/Axis.tsx")
    assert stored.knowledge_paths == ("docs/charts.md",)
    assert stored.dependencies == ("station-search",)
    assert not fields.dirty and not fields.save.isEnabled()
    assert window.message_bar.text == "Saved feature tide-charts."
    qtbot.waitUntil(lambda: pane.detail.heading.text().startswith("Tide curves"), timeout=WAIT_MS)


def test_revert_throws_edits_away(qtbot: QtBot, window: MainWindow) -> None:
    pane = open_feature(qtbot, window, "tide-data")
    fields = pane.detail.fields
    fields.description.setPlainText("Something else")
    assert fields.dirty

    fields.revert.click()
    settle(qtbot, window)

    assert not fields.dirty
    assert fields.description.toPlainText() == (
        pane.detail.feature.description if pane.detail.feature else ""
    )


def test_an_edit_elsewhere_keeps_edits_in_progress_and_says_so(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    pane = open_feature(qtbot, window, "tide-data")
    fields = pane.detail.fields
    fields.boundaries.setPlainText("Mine, not saved yet")

    services.features.update("tide-data", description="Changed by an agent")

    qtbot.waitUntil(lambda: "Changed elsewhere" in fields.notice.text(), timeout=WAIT_MS)
    assert fields.boundaries.toPlainText() == "Mine, not saved yet"


def test_creating_a_feature_selects_it(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    window.show_pane("features")
    pane = window.features
    pane.new_button.click()
    settle(qtbot, window)
    dialog = pane.new_dialog
    assert dialog is not None
    dialog.display_name.setText("Weather overlay")
    assert dialog.name.text() == "weather-overlay"
    dialog.create_button.click()
    settle(qtbot, window)

    assert services.features.get("weather-overlay").display_name == "Weather overlay"
    qtbot.waitUntil(lambda: pane.selected_name() == "weather-overlay", timeout=WAIT_MS)


def test_deleting_a_feature_that_tasks_use_is_refused_with_the_services_message(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    pane = open_feature(qtbot, window, "tide-data")
    pane.delete_button.click()
    settle(qtbot, window)
    assert pane.confirm_box is not None

    pane.confirm_box.confirm_button.click()
    settle(qtbot, window)

    assert window.message_bar.isVisible() and window.message_bar.level == "error"
    assert "feature 'tide-data' is used by tasks" in window.message_bar.text
    assert "move or delete those tasks first" in window.message_bar.text
    assert "tide-data" in pane.names()


def test_deleting_an_unused_feature_removes_it(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    services.features.create("scratch", "Scratch")
    qtbot.waitUntil(lambda: "scratch" in window.features.names(), timeout=WAIT_MS)
    pane = open_feature(qtbot, window, "scratch")
    pane.delete_button.click()
    settle(qtbot, window)
    assert pane.confirm_box is not None

    pane.confirm_box.confirm_button.click()
    settle(qtbot, window)

    assert "scratch" not in [feature.name for feature in services.features.list()]
    assert "scratch" not in pane.names()
    assert window.message_bar.text == "Deleted feature scratch."


# --- learnings ------------------------------------------------------------------------------


def test_merging_two_learnings_keeps_one_and_adds_their_hit_counts(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    first, _ = services.features.append_learning("tide-data", "Heights are in metres above chart datum (CD).")
    services.features.append_learning("tide-data", "Heights are in metres above chart datum (CD).")
    second, _ = services.features.append_learning(
        "tide-data", "All heights use metres over chart datum, never feet.", source="human"
    )
    assert services.features.get("tide-data").learnings
    pane = open_feature(qtbot, window, "tide-data")
    pane.detail.tabs.setCurrentIndex(LEARNINGS)
    view = pane.detail.learnings
    qtbot.waitUntil(lambda: {first.id, second.id} <= set(learning_rows(pane)), timeout=WAIT_MS)
    hits = learning_rows(pane)
    total = hits[first.id] + hits[second.id]
    assert hits[first.id] == 2

    view.select_ids([first.id, second.id])
    assert view.merge_button.isEnabled()
    view.merge_button.click()
    settle(qtbot, window)
    dialog = view.merge_dialog
    assert dialog is not None and dialog.keep_id() == first.id
    dialog.choose(second.id)
    dialog.ok.click()
    settle(qtbot, window)

    stored = {learning.id: learning for learning in services.features.get("tide-data").learnings}
    assert first.id not in stored
    assert stored[second.id].hit_count == total
    assert stored[second.id].text == "All heights use metres over chart datum, never feet."
    qtbot.waitUntil(lambda: first.id not in learning_rows(pane), timeout=WAIT_MS)
    assert learning_rows(pane)[second.id] == total
    assert "Merged 2 learnings into one, seen 3 times." in window.message_bar.text


def test_editing_and_deleting_a_learning(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    learning = services.features.get("harbour-alerts").learnings[0]
    pane = open_feature(qtbot, window, "harbour-alerts")
    view = pane.detail.learnings
    view.select_ids([learning.id])

    view.edit_button.click()
    settle(qtbot, window)
    dialog = view.edit_dialog
    assert dialog is not None
    dialog.text.setPlainText("Keel clearance = draught + 0.3 m unless the user sets another margin.")
    dialog.reason.setPlainText("The harbour master's rule")
    dialog.ok.click()
    settle(qtbot, window)

    edited = services.features.get("harbour-alerts").learnings[0]
    assert edited.text == "Keel clearance = draught + 0.3 m unless the user sets another margin."
    assert edited.reason == "The harbour master's rule"

    view.select_ids([learning.id])
    view.delete_button.click()
    settle(qtbot, window)
    assert view.confirm_box is not None
    view.confirm_box.confirm_button.click()
    settle(qtbot, window)

    assert services.features.get("harbour-alerts").learnings == ()
    qtbot.waitUntil(lambda: view.stack.currentWidget() is view.empty, timeout=WAIT_MS)


# --- models and empty states ----------------------------------------------------------------


def test_the_feature_and_learning_models_pass_the_model_tester(
    qtmodeltester: ModelTester, services: Services
) -> None:
    features = FeatureTableModel()
    features.set_items(services.features.list())
    learnings = LearningTableModel()
    parser = task_id(services, "Parse harmonic constituents")
    services.features.append_learning(
        "tide-data", "Constituent speeds are in degrees per hour.", task_id=parser
    )
    learnings.set_items(list(services.features.get("tide-data").learnings))

    qtmodeltester.check(features)
    qtmodeltester.check(learnings)
    qtmodeltester.check(LearningTableModel())


def test_a_project_without_features_says_how_to_make_one(
    qtbot: QtBot, tmp_path: Path, settings: QSettings
) -> None:
    paths = init_project(tmp_path / "empty", title="Empty")
    services = Services.open(ProjectPaths.at(paths.root))
    window = build_window(services, settings=settings, use_tray=False, live=False)
    qtbot.addWidget(window)
    try:
        pane = window.features
        assert pane.stack.currentWidget() is pane.empty
        assert pane.empty.title.text() == "No features yet"
        assert "import-prd" in pane.empty.text.text()
        pane.empty.button.click()
        assert pane.new_dialog is not None and pane.new_dialog.isVisible()
        pane.new_dialog.reject()
    finally:
        window.close()
        services.close()
