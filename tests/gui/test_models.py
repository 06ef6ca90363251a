"""The Qt models: thin adapters over plain lists that pass qtmodeltester and update row by row."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QPersistentModelIndex, Qt
from pytestqt.modeltest import ModelTester

from ralph_desk.domain.enums import Priority, Recipe, TaskOrigin, TaskStatus
from ralph_desk.domain.records import TaskSummary
from ralph_desk.gui import fmt
from ralph_desk.gui.models.base import KEY_ROLE, RECORD_ROLE
from ralph_desk.gui.models.history import STARTED, HistoryRow, HistoryTableModel
from ralph_desk.gui.models.sessions import SessionTableModel
from ralph_desk.gui.models.signals import FlagItem, FlagTableModel, SignalTimelineModel, flag_order
from ralph_desk.gui.models.tasks import PRIORITY, STATUS, TaskFilter, TaskFilterProxy, TaskTableModel
from ralph_desk.services.container import Services


def keys(model: TaskTableModel | TaskFilterProxy) -> list[int]:
    return [model.index(row, 0).data(KEY_ROLE) for row in range(model.rowCount())]


def test_the_task_model_passes_the_model_tester(qtmodeltester: ModelTester, services: Services) -> None:
    model = TaskTableModel()
    model.set_items(services.tasks.list())

    qtmodeltester.check(model)


def test_the_filtered_task_proxy_passes_the_model_tester(
    qtmodeltester: ModelTester, services: Services
) -> None:
    model = TaskTableModel()
    model.set_items(services.tasks.list())
    proxy = TaskFilterProxy(model)
    proxy.set_filter(TaskFilter(statuses=frozenset({TaskStatus.PENDING, TaskStatus.DRAFT})))

    qtmodeltester.check(proxy)


def test_the_flag_model_passes_the_model_tester(qtmodeltester: ModelTester, services: Services) -> None:
    model = FlagTableModel()
    model.set_items([FlagItem(flag, "a task", "a feature") for flag in services.inbox.flags()])

    qtmodeltester.check(model)


def test_the_timeline_model_passes_the_model_tester(qtmodeltester: ModelTester, services: Services) -> None:
    model = SignalTimelineModel()
    model.set_items(services.signals.for_task(5))

    qtmodeltester.check(model)


def test_the_session_model_passes_the_model_tester(qtmodeltester: ModelTester, services: Services) -> None:
    model = SessionTableModel()
    model.set_items(services.sessions.list(limit=100))

    qtmodeltester.check(model)


def test_an_empty_model_passes_the_model_tester(qtmodeltester: ModelTester) -> None:
    qtmodeltester.check(TaskTableModel())


def test_updating_items_removes_inserts_and_changes_rows_without_a_reset(services: Services) -> None:
    model = TaskTableModel()
    tasks = services.tasks.list()
    model.set_items(tasks)
    kept = QPersistentModelIndex(model.index(4, 1))
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    changed = replace(tasks[4], title="Renamed")

    model.set_items([tasks[0], *tasks[2:4], changed, *tasks[5:]])

    assert resets == []
    assert kept.isValid() and kept.row() == 3
    assert kept.data() == "Renamed"
    assert keys(model) == [tasks[0].id, *(task.id for task in tasks[2:])]


def test_sorting_moves_persistent_indexes_with_their_rows(services: Services) -> None:
    model = TaskTableModel()
    model.set_items(services.tasks.list())
    watched = QPersistentModelIndex(model.index(0, 0))
    task = model.index(0, 0).data(RECORD_ROLE)

    model.sort(PRIORITY, Qt.SortOrder.AscendingOrder)

    ranks = [model.record(row).priority.rank for row in range(model.rowCount())]
    assert ranks == sorted(ranks, reverse=True)
    assert watched.data(RECORD_ROLE) == task


def test_new_items_follow_the_current_sort(services: Services) -> None:
    model = TaskTableModel()
    tasks = services.tasks.list()
    model.set_items(tasks)
    model.sort(STATUS, Qt.SortOrder.AscendingOrder)
    late = replace(tasks[0], id=999, status=TaskStatus.DRAFT, priority=Priority.LOW, origin=TaskOrigin.AGENT)

    model.upsert([late])

    assert model.record(0).status is TaskStatus.DRAFT
    assert model.row_of(999) is not None


def test_a_new_flag_goes_where_the_inbox_order_puts_it_after_asking_only_a_few_rows(
    services: Services,
) -> None:
    flag = services.inbox.flags()[0]
    start = datetime(2026, 1, 1, tzinfo=UTC).replace(tzinfo=None)

    def item(number: int, severity: str, second: int) -> FlagItem:
        created = start + timedelta(seconds=second)
        return FlagItem(replace(flag, id=number, severity=severity, created=created), "", "")

    flags = [item(n, ("info", "warning", "blocking")[n % 3], n) for n in range(1, 1001)]
    model = FlagTableModel()
    model.upsert(sorted(flags, key=flag_order))
    asked: list[FlagItem] = []

    def counted_order(item: FlagItem) -> tuple[int, float, int]:
        asked.append(item)
        return flag_order(item)

    late = item(5000, "warning", 500)
    model.upsert([late], order=counted_order)

    rows = [model.record(row) for row in range(model.rowCount())]
    assert rows == sorted([*flags, late], key=flag_order)
    assert len(asked) <= 20


def test_session_history_shows_days_old_sessions_with_their_date_and_sorts_by_time(
    services: Services,
) -> None:
    now = datetime.now(UTC).replace(tzinfo=None)
    sessions = services.sessions.list(limit=3)
    ages = (timedelta(minutes=2), timedelta(days=3), timedelta(days=40))
    rows = [HistoryRow(replace(s, started_at=now - age)) for s, age in zip(sessions, ages, strict=True)]
    model = HistoryTableModel()
    model.set_items(list(reversed(rows)))

    model.sort(STARTED, Qt.SortOrder.DescendingOrder)

    assert [model.record(row) for row in range(model.rowCount())] == rows
    oldest = model.index(2, STARTED)
    assert oldest.data() == fmt.when(rows[2].session.started_at)
    assert fmt.MONTHS[fmt.local(rows[2].session.started_at).month - 1] in oldest.data()
    assert fmt.full(rows[2].session.started_at) in oldest.data(Qt.ItemDataRole.ToolTipRole)


def test_the_task_filter_combines_every_field_and_matches_words_or_an_id() -> None:
    task = TaskSummary(
        id=42,
        title="Shade the band below keel clearance",
        status=TaskStatus.PENDING,
        priority=Priority.HIGH,
        feature="tide-charts",
        discipline="frontend",
        origin=TaskOrigin.AGENT,
        created_at=datetime(2026, 1, 1),
        updated_at=datetime(2026, 1, 1),
    )

    assert TaskFilter(text="keel band").accepts(task)
    assert TaskFilter(text="#42").accepts(task)
    assert not TaskFilter(text="#4").accepts(task)
    assert TaskFilter(feature="tide-charts", origin=TaskOrigin.AGENT, priority=Priority.HIGH).accepts(task)
    assert not TaskFilter(discipline="backend").accepts(task)
    assert not TaskFilter(statuses=frozenset({TaskStatus.DONE})).accepts(task)


def test_the_sessions_table_says_which_sandbox_confined_each_session_and_names_an_unconfined_one(
    services: Services,
) -> None:
    services.sessions.start_session(
        "confined-1",
        None,
        Recipe.TASK_EXECUTION,
        "claude",
        sandbox="bubblewrap",
        sandbox_note="bubblewrap: writes",
    )
    services.sessions.start_session(
        "loose-2",
        None,
        Recipe.TASK_EXECUTION,
        "claude",
        sandbox_note="unconfined: the sandbox setting is off",
    )
    model = SessionTableModel()
    model.set_items([s for s in services.sessions.list(limit=100) if s.id in {"confined-1", "loose-2"}])
    column = next(
        i for i in range(model.columnCount()) if model.headerData(i, Qt.Orientation.Horizontal) == "Sandbox"
    )

    shown = {
        model.index(row, 0).data(KEY_ROLE): (
            model.index(row, column).data(),
            model.index(row, column).data(Qt.ItemDataRole.ToolTipRole),
        )
        for row in range(model.rowCount())
    }

    assert shown["confined-1"] == ("bubblewrap", "bubblewrap: writes")
    assert shown["loose-2"] == ("none", "unconfined: the sandbox setting is off")
