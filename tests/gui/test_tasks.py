"""The Tasks pane: filter and sort the table, edit a task, its dependencies and comments; at scale."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.base import KEY_ROLE
from ralph_desk.gui.models.tasks import PRIORITY, TaskFilter
from ralph_desk.gui.panes.tasks.detail import ACTIVITY, COMMENTS
from ralph_desk.gui.panes.tasks.pane import TasksPane
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from tests.gui.conftest import add_tasks, controller, settle
from tests.support.demo_rows import task_id

WAIT_MS = 3000
SCALE = 10_000
CHART = "Mark high and low water on the chart"


def shown_ids(pane: TasksPane) -> list[int]:
    proxy = pane.proxy
    return [int(proxy.index(row, 0).data(KEY_ROLE)) for row in range(proxy.rowCount())]


def select(qtbot: QtBot, window: MainWindow, task_id: int) -> None:
    window.show_pane("tasks")
    assert window.tasks.select_task(task_id)
    data = window.tasks.detail.data
    qtbot.waitUntil(lambda: (data := window.tasks.detail.data) is not None and data.task.id == task_id)
    del data


# --- the table -------------------------------------------------------------------------------


def test_the_table_shows_every_task_with_the_robot_on_agent_tasks(
    window: MainWindow, services: Services
) -> None:
    pane = window.tasks
    tasks = services.tasks.list()

    assert shown_ids(pane) == [task.id for task in tasks]
    agent_row = pane.model.row_of(next(task.id for task in tasks if task.origin is TaskOrigin.AGENT))
    human_row = pane.model.row_of(next(task.id for task in tasks if task.origin is TaskOrigin.HUMAN))
    assert agent_row is not None and human_row is not None
    assert pane.model.index(agent_row, 6).data(Qt.ItemDataRole.DecorationRole) is not None
    assert pane.model.index(human_row, 6).data(Qt.ItemDataRole.DecorationRole) is None
    assert pane.count.text() == f"{len(tasks)} tasks"


def test_each_filter_narrows_the_table(window: MainWindow, services: Services) -> None:
    bar = window.tasks.filters

    bar.choose(bar.status, "pending")
    assert shown_ids(window.tasks) == [task.id for task in services.tasks.list(status="pending")]
    bar.choose(bar.status, None)
    bar.choose(bar.feature, "tide-charts")
    bar.choose(bar.discipline, "frontend")
    expected = services.tasks.list(feature="tide-charts", discipline="frontend")
    assert shown_ids(window.tasks) == [task.id for task in expected]
    bar.clear_filters()
    bar.choose(bar.origin, "agent")
    assert shown_ids(window.tasks) == [task.id for task in services.tasks.list(origin="agent")]
    bar.clear_filters()
    bar.choose(bar.priority, "critical")
    assert {
        window.tasks.model.record(window.tasks.model.row_of(i) or 0).priority for i in shown_ids(window.tasks)
    } == {Priority.CRITICAL}


def test_search_text_filters_after_a_short_pause_and_no_match_offers_to_clear(
    qtbot: QtBot, window: MainWindow
) -> None:
    pane = window.tasks
    qtbot.keyClicks(pane.filters.search, "keel")
    settle(qtbot, window)
    qtbot.waitUntil(lambda: pane.proxy.filter.text == "keel", timeout=WAIT_MS)
    assert shown_ids(pane) and all(
        "keel" in pane.model.record(pane.model.row_of(i) or 0).title.lower() for i in shown_ids(pane)
    )

    pane.filters.search.setText("no task is called this")
    qtbot.waitUntil(lambda: pane.table_stack.currentWidget() is pane.no_match, timeout=WAIT_MS)
    qtbot.mouseClick(pane.no_match.button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    assert pane.proxy.filter == TaskFilter()
    assert pane.table_stack.currentWidget() is pane.table


def test_the_open_status_choice_hides_done_and_skipped_tasks(window: MainWindow) -> None:
    bar = window.tasks.filters

    bar.choose(bar.status, "open")

    statuses = {
        window.tasks.model.record(window.tasks.model.row_of(i) or 0).status for i in shown_ids(window.tasks)
    }
    assert statuses and not statuses & {TaskStatus.DONE, TaskStatus.SKIPPED}


def test_clicking_a_header_sorts_and_the_selection_stays_on_its_task(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    dark_mode = task_id(services, "Dark mode for the tide chart")
    pane = window.tasks
    select(qtbot, window, dark_mode)

    pane.table.horizontalHeader().sectionClicked.emit(PRIORITY)
    pane.table.sortByColumn(PRIORITY, Qt.SortOrder.AscendingOrder)

    ranks = [pane.model.record(row).priority.rank for row in range(pane.model.rowCount())]
    assert ranks == sorted(ranks, reverse=True)
    assert pane.selected_id() == dark_mode


def test_selecting_a_task_shows_its_fields_timeline_and_sessions(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    offsets = task_id(services, "Apply daylight-saving offsets")
    select(qtbot, window, offsets)
    detail = window.tasks.detail
    task = services.tasks.get(offsets)

    assert detail.heading.text() == f"#{offsets}  {task.title}"
    assert detail.fields.title.text() == task.title
    assert detail.fields.status.currentData() == "needs_input"
    assert detail.timeline_model.rowCount() == len(services.signals.for_task(offsets)) > 0
    assert detail.sessions_model.rowCount() == len(services.sessions.list(task_id=offsets)) > 0
    assert detail.tabs.tabText(ACTIVITY) == f"Activity ({detail.sessions_model.rowCount()})"
    first = min(detail.sessions_model.items, key=lambda session: session.started_at)
    assert detail.sessions_model.index(detail.sessions_model.row_of(first.id) or 0, 0).data() == "#1"


def test_show_transcript_shows_the_sessions_stream_in_the_windows_transcript_view(
    qtbot: QtBot, window: MainWindow, services: Services, opened_files: list[str]
) -> None:
    offsets = task_id(services, "Apply daylight-saving offsets")
    select(qtbot, window, offsets)
    detail = window.tasks.detail
    detail.tabs.setCurrentIndex(ACTIVITY)
    detail.sessions.selectRow(0)
    session = detail.sessions_model.record(0)
    assert session.transcript_path is not None

    qtbot.mouseClick(detail.open_transcript, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    assert window.current_pane == "loop"
    assert window.loop.stream.title.text().startswith(f"Past session — #{offsets} ")
    assert window.loop.stream.model.lines
    assert opened_files == []


# --- editing ---------------------------------------------------------------------------------


def test_editing_every_kind_of_field_and_saving_stores_them(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    chart = task_id(services, CHART)
    select(qtbot, window, chart)
    fields = window.tasks.detail.fields
    assert not fields.save.isEnabled()

    fields.title.setText("Mark high and low water on the chart, with times")
    fields.priority.setCurrentIndex(fields.priority.findData("critical"))
    fields.status.setCurrentIndex(fields.status.findData("blocked"))
    fields.feature.setCurrentText("tide-data")
    fields.discipline.setCurrentText("docs")
    fields.turns.setValue(12)
    fields.tags.setText("chart, labels")
    fields.description.setPlainText("Label each extreme.")
    fields.criteria.setPlainText("Labels never overlap\nTimes in local time")
    fields.context.setPlainText("web/chart.ts")
    fields.hints.setPlainText("Reuse the axis formatter.")
    fields.pseudocode.setPlainText("for extreme in extremes:\n    label(extreme)")
    assert fields.dirty and fields.save.isEnabled()

    qtbot.mouseClick(fields.save, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    task = services.tasks.get(chart)
    assert task.title == "Mark high and low water on the chart, with times"
    assert task.priority is Priority.CRITICAL
    assert task.status is TaskStatus.BLOCKED
    assert (task.feature, task.discipline) == ("tide-data", "docs")
    assert task.estimated_turns == 12
    assert task.tags == ("chart", "labels")
    assert task.description == "Label each extreme."
    assert task.acceptance_criteria == ("Labels never overlap", "Times in local time")
    assert task.context_files == ("web/chart.ts",)
    assert task.hints == "Reuse the axis formatter."
    assert task.pseudocode == "for extreme in extremes:\n    label(extreme)"
    assert not fields.dirty
    qtbot.waitUntil(
        lambda: window.tasks.model.record(window.tasks.model.row_of(chart) or 0).priority is Priority.CRITICAL
    )


def test_revert_throws_edits_away(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    chart = task_id(services, CHART)
    select(qtbot, window, chart)
    fields = window.tasks.detail.fields
    fields.title.setText("Something else")

    qtbot.mouseClick(fields.revert, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    assert fields.title.text() == services.tasks.get(chart).title
    assert not fields.dirty


def test_an_edit_in_progress_survives_a_change_made_elsewhere(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    chart = task_id(services, CHART)
    select(qtbot, window, chart)
    fields = window.tasks.detail.fields
    fields.hints.setPlainText("My unsaved hint")

    services.comments.add(chart, "agent", "A comment arriving meanwhile")

    qtbot.waitUntil(lambda: window.tasks.detail.comments.cards.order != [], timeout=WAIT_MS)
    assert fields.hints.toPlainText() == "My unsaved hint"
    assert fields.dirty
    assert fields.notice.text() == ""  # a comment is no change to the fields being edited

    services.tasks.update(chart, description="Rewritten by an agent")

    qtbot.waitUntil(lambda: "Changed elsewhere" in fields.notice.text(), timeout=WAIT_MS)
    assert fields.hints.toPlainText() == "My unsaved hint"


def test_writes_that_leave_the_edited_fields_alone_say_nothing_changed_elsewhere(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    chart = task_id(services, CHART)
    other = next(task.id for task in services.tasks.list() if task.id != chart)
    select(qtbot, window, chart)
    fields = window.tasks.detail.fields
    fields.hints.setPlainText("My unsaved hint")
    seen = len(window.tasks.detail.comments.cards.order)

    services.tasks.update(other, description="Another task, changed by the loop")
    services.tasks.update(chart, output_artifacts=["chart.svg"])  # bumps the record, not a field of the form
    services.comments.add(chart, "agent", "Then a comment")

    qtbot.waitUntil(lambda: len(window.tasks.detail.comments.cards.order) > seen, timeout=WAIT_MS)
    settle(qtbot, window)
    assert fields.dirty and fields.hints.toPlainText() == "My unsaved hint"
    assert fields.notice.text() == ""


def test_a_refused_save_shows_why_in_the_message_bar(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    chart = task_id(services, CHART)
    select(qtbot, window, chart)

    controller(window).tasks.save(chart, {"feature": "no-such-feature"})
    settle(qtbot, window)

    assert window.message_bar.level == "error"
    assert "no-such-feature" in window.message_bar.text


def test_dependencies_are_added_and_removed_by_id(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    chart = task_id(services, CHART)
    predictions = task_id(services, "Compute hourly tide predictions")
    select(qtbot, window, chart)
    detail = window.tasks.detail
    detail.dependency_id.setValue(predictions)

    qtbot.mouseClick(detail.add_dependency, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    qtbot.waitUntil(
        lambda: detail.dependencies.count() == len(services.tasks.get(chart).depends_on), timeout=WAIT_MS
    )
    assert predictions in services.tasks.get(chart).depends_on
    row = next(
        r
        for r in range(detail.dependencies.count())
        if detail.dependencies.item(r).data(Qt.ItemDataRole.UserRole) == predictions
    )
    detail.dependencies.setCurrentRow(row)
    qtbot.mouseClick(detail.remove_dependency, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    qtbot.waitUntil(lambda: predictions not in services.tasks.get(chart).depends_on, timeout=WAIT_MS)


def test_a_dependency_cycle_is_refused_with_a_message(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    extremes = task_id(services, "Find the times of high and low water")
    offsets = task_id(services, "Apply daylight-saving offsets")  # the demo makes it depend on the first
    select(qtbot, window, extremes)
    window.tasks.detail.dependency_id.setValue(offsets)

    qtbot.mouseClick(window.tasks.detail.add_dependency, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    assert window.message_bar.level == "error"
    assert offsets not in services.tasks.get(extremes).depends_on


def test_comments_are_added_edited_and_deleted(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    chart = task_id(services, CHART)
    select(qtbot, window, chart)
    detail = window.tasks.detail
    detail.tabs.setCurrentIndex(COMMENTS)
    comments = detail.comments
    qtbot.keyClicks(comments.new, "Use the chart's own font.")
    settle(qtbot, window)
    qtbot.mouseClick(comments.add_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    qtbot.waitUntil(lambda: len(comments.cards.order) == 1, timeout=WAIT_MS)
    assert comments.new.toPlainText() == ""
    (comment,) = services.comments.list(chart)
    assert (comment.author, comment.body) == ("human", "Use the chart's own font.")

    card = comments.cards.card(comment.id)
    assert card is not None
    qtbot.mouseClick(card.edit_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    card.editor.setPlainText("Use the chart's own font, at 11 px.")
    qtbot.mouseClick(card.save_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    qtbot.waitUntil(lambda: card.body.text() == "Use the chart's own font, at 11 px.", timeout=WAIT_MS)
    assert services.comments.list(chart)[0].body == "Use the chart's own font, at 11 px."

    qtbot.mouseClick(card.delete_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    assert card.confirm_button.isVisibleTo(card)
    qtbot.mouseClick(card.confirm_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    qtbot.waitUntil(lambda: comments.cards.order == [], timeout=WAIT_MS)
    assert services.comments.list(chart) == []


# --- live and scale --------------------------------------------------------------------------


def test_a_task_changed_elsewhere_updates_its_row_and_keeps_selection_and_scroll(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    guide = task_id(services, "User guide: reading a tide chart")
    extremes = task_id(services, "Find the times of high and low water")
    pane = window.tasks
    window.resize(1400, 500)
    select(qtbot, window, guide)
    settle(qtbot, window)
    scroll = pane.table.verticalScrollBar()
    # Halfway, not at the end: a table whose height changes by a row clamps a bar at its maximum.
    scroll.setValue(scroll.maximum() // 2)
    position = scroll.value()

    services.tasks.move(extremes, "failed", Mover.IMPORT)
    services.tasks.create("tide-data", "backend", "A new task from elsewhere")

    qtbot.waitUntil(lambda: pane.model.rowCount() == len(services.tasks.list()), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: pane.model.record(pane.model.row_of(extremes) or 0).status is TaskStatus.FAILED,
        timeout=WAIT_MS,
    )
    assert pane.selected_id() == guide
    assert scroll.value() == position and position > 1  # no jump: the rows shown stay shown


def test_ten_thousand_tasks_load_filter_and_sort(qtbot: QtBot, project: Path, settings: QSettings) -> None:
    """What each step does at scale; how fast is bench/window_open.py's to measure."""
    add_tasks(project, SCALE)
    services = Services.open(ProjectPaths.at(project))
    try:
        window = build_window(services, settings=settings, use_tray=False, live=False)
        qtbot.addWidget(window)
        pane = window.tasks
        window.show_pane("tasks")
        window.show()
        qtbot.waitExposed(window)

        pane.filters.choose(pane.filters.status, "pending")
        pane.table.sortByColumn(PRIORITY, Qt.SortOrder.AscendingOrder)
        controller(window).tasks.refresh()
        settle(qtbot, window, timeout=120_000)

        assert pane.model.rowCount() == services.project.progress()["total"] > SCALE
        assert pane.proxy.rowCount() == len([t for t in pane.model.items if t.status is TaskStatus.PENDING])
        proxy = pane.proxy
        rows = [proxy.mapToSource(proxy.index(row, 0)).row() for row in range(proxy.rowCount())]
        shown_ranks = [pane.model.record(row).priority.rank for row in rows]
        assert shown_ranks == sorted(shown_ranks, reverse=True)
    finally:
        window.close()
        services.close()
