"""The Loop pane with several sessions at once: the running sessions' table, the stream of the one picked,
and every session at a glance — driven by a real loop of stand-in agents on the window's event loop."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.running import ELAPSED, TASK, TURNS, RunningTableModel
from ralph_desk.gui.panes.loop.pane import LoopPane
from ralph_desk.gui.panes.loop.running import RunningRow
from ralph_desk.gui.panes.loop.sessions import RunningTable
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.loop.model import EventKind
from ralph_desk.services.container import Services
from tests.gui import test_loop_pane as loop_pane
from tests.gui.test_loop_pane import SESSION_MS, choose_agent
from tests.loop import conftest as loop_fixtures
from tests.loop.conftest import StartApi, heading, stand_in
from tests.support.fake_model_api import Hang, ToolCalls

qt_loop = loop_pane.qt_loop
embedded = loop_pane.embedded
loop_window = loop_pane.loop_window
start_api = loop_fixtures.start_api

PARALLEL = 3
TICK_MS = 10_000


def click_row(qtbot: QtBot, pane: LoopPane, row: int) -> None:
    """Click a row of the running sessions' table, as a person would."""
    table = pane.sessions.table.table
    rect = table.visualRect(table.model().index(row, TASK))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.center()))


def shown_session(pane: LoopPane) -> str:
    return pane.stream.figures.session_id


def task_id(row: RunningRow) -> str:
    """The task number in a row's title (`#12 Draw the curve`)."""
    return row.title.split()[0].removeprefix("#")


def test_rows_leaving_the_table_are_no_pick_and_a_click_is(qtbot: QtBot) -> None:
    view = RunningTable()
    qtbot.addWidget(view)
    view.show()
    now = datetime.now(UTC)
    rows = [RunningRow(f"s{n}", f"#{n} Tide chart", "command", now) for n in (1, 2, 3)]
    picks: list[str] = []
    view.sig_follow_requested.connect(picks.append)

    view.show_rows(rows, "s2")
    view.show_rows([rows[0], rows[2]], "s2")  # the followed session ended: Qt moves the current row
    view.show_rows([rows[2]], None)

    assert picks == [] and view.table.currentIndex().row() == -1
    table = view.table
    rect = table.visualRect(view.model.index(0, TASK))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.center()))
    assert picks == ["s3"]


def test_the_running_sessions_model_passes_the_model_tester(qtmodeltester: ModelTester) -> None:
    model = RunningTableModel()
    now = datetime.now(UTC)
    model.set_items([RunningRow(f"s{n}", f"#{n} Tide chart", "command", now, n, 0.1 * n) for n in (1, 2)])
    model.tick()

    qtmodeltester.check(model)


@pytest.mark.slow
def test_running_sessions_are_listed_live_and_the_one_picked_is_streamed(
    qtbot: QtBot, loop_window: MainWindow, services: Services, start_api: StartApi
) -> None:
    for task in services.tasks.list(status=TaskStatus.IN_PROGRESS.value):
        services.tasks.move(
            task.id, TaskStatus.PENDING.value, Mover.IMPORT
        )  # as the loop recovers them at start
    # Every task's session says what it does, writes a file, then waits for the model until released.
    api = start_api(
        [Hang()],
        **{
            heading(task.id): [
                ToolCalls(
                    [("Write", {"file_path": f"notes/{task.id}.txt", "content": "x"})], text=f"On {task.id}"
                ),
                Hang(),
            ]
            for task in services.tasks.list()
        },
    )
    pane = loop_window.loop
    model = pane.sessions.table.model
    shown: dict[str, RunningRow] = {}  # every session's row as last shown, kept after it leaves the table
    model.dataChanged.connect(lambda *_: shown.update({row.session_id: row for row in model.items}))
    model.rowsInserted.connect(lambda *_: shown.update({row.session_id: row for row in model.items}))
    choose_agent(pane.settings, stand_in())
    pane.settings.parallel.setValue(PARALLEL)
    pane.settings.timeout.setValue(120)

    pane.start.click()

    # Two sessions or more run at once, each in a row with the turn it took.
    qtbot.waitUntil(
        lambda: model.rowCount() >= 2 and all(row.turns >= 1 for row in model.items), timeout=SESSION_MS
    )
    rows = model.items
    assert len({row.session_id for row in rows}) == len(rows) <= PARALLEL
    assert all(row.title.startswith("#") and row.agent == "command" for row in rows)
    assert [model.index(r, TURNS).data() for r in range(len(rows))] == [str(row.turns) for row in rows]
    assert shown_session(pane) == rows[0].session_id  # the stream follows the oldest until one is picked
    elapsed = model.index(0, ELAPSED).data()
    qtbot.waitUntil(lambda: model.index(0, ELAPSED).data() != elapsed, timeout=TICK_MS)  # the clock ticks

    # Picking another row shows that session's stream from its start; the pick survives updates.
    second = rows[1]
    click_row(qtbot, pane, 1)
    assert shown_session(pane) == second.session_id and pane.stream.title.text() == second.title
    lines = pane.stream.model.lines
    assert lines[0].kind is EventKind.SESSION_STARTED and f"task #{task_id(second)}:" in lines[0].text
    assert f"On {task_id(second)}" in [line.text for line in lines]
    picked = model.index(1, ELAPSED).data()
    qtbot.waitUntil(lambda: model.index(1, ELAPSED).data() != picked, timeout=TICK_MS)
    table = pane.sessions.table.table
    assert model.record(table.currentIndex().row()).session_id == second.session_id
    assert shown_session(pane) == second.session_id

    # The glance view shows every running session; a card's button brings its stream back.
    pane.sessions.all.click()
    glance = pane.sessions.glance
    assert pane.sessions.glancing
    assert list(glance.cards) == [row.session_id for row in model.items]
    for row in model.items:
        card = glance.cards[row.session_id]
        assert card.title.text() == row.title and card.action.text() == row.last_action != ""
        assert card.highlighted == (row.session_id == second.session_id)
    first = model.items[0]
    glance.cards[first.session_id].follow.click()
    assert not pane.sessions.glancing and shown_session(pane) == first.session_id

    # Pause lets the running sessions finish: each shows the cost its agent reported, then leaves the table.
    running = {row.session_id for row in model.items}
    pane.pause.click()
    api.release()
    qtbot.waitUntil(lambda: model.rowCount() == 0, timeout=SESSION_MS)
    qtbot.waitUntil(lambda: pane.phase is Phase.PAUSED, timeout=SESSION_MS)
    for session_id in running:
        recorded = services.sessions.get(session_id)
        assert recorded.cost_usd > 0 and shown[session_id].cost_usd == recorded.cost_usd
        assert shown[session_id].turns == recorded.turns
    assert pane.sessions.summary.text() == "none now" and not glance.cards
    # The picked session stays shown once it ended, to its end, whichever session ended last (rows leaving
    # the table move its current row, which is not a pick).
    assert shown_session(pane) == first.session_id
    kinds = [line.kind for line in pane.stream.model.lines]
    assert EventKind.SESSION_ENDED in kinds and not pane.stream.clock.isActive()
