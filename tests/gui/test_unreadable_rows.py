"""A row whose stored text is not UTF-8 (written by another tool) hides nothing else in the window."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.gui.test_tasks import shown_ids
from tests.support.trusted import trust_copy

NOT_UTF8 = "CAST(X'41EDA08042FF' AS TEXT)"


@pytest.fixture
def project(tmp_path: Path, demo_template: Path) -> Path:
    """The demo project with one task title and one feature description that are not UTF-8."""
    root = tmp_path / "demo"
    shutil.copytree(demo_template, root)
    trust_copy(root)
    connection = sqlite3.connect(ProjectPaths.at(root).db_file)
    try:
        connection.execute(f"UPDATE tasks SET title = {NOT_UTF8} WHERE id = (SELECT MAX(id) FROM tasks)")
        connection.execute(
            f"UPDATE features SET description = {NOT_UTF8} WHERE id = (SELECT MIN(id) FROM features)"
        )
        connection.commit()
    finally:
        connection.close()
    return root


def test_the_window_lists_every_readable_task_and_feature_and_names_each_one_left_out(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    tasks, features = services.tasks.list(), services.features.list()
    (bad_task,), (bad_feature,) = tasks.errors, features.errors

    window.show_pane("features")
    settle(qtbot, window)

    shown = shown_ids(window.tasks)
    assert shown == [task.id for task in tasks] and bad_task.id not in shown
    model = window.features.model
    assert [model.record(row).name for row in range(model.rowCount())] == [item.name for item in features]
    controller(window).tasks.refresh()  # read again, as at every change: said once, not at every read
    settle(qtbot, window)
    failures = controller(window).worker.failures
    for kind, error in (("tasks", bad_task), ("features", bad_feature)):
        said = f"Could not read the {kind} in full: {error}"
        assert sum(text.startswith(said) for text in failures) == 1, failures
        said = f"Could not read the {kind} in full: {error.kind} #{error.id}: the stored"
        assert any(text.startswith(said) and "not valid UTF-8" in text for text in failures), failures
