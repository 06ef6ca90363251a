"""The review gate switched off in the window: the Loop pane's setting reaches config.json and comes back,
and a task's `done` in a git project merges at once (nothing waits in the Reviews tab)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Task
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import REVIEWS
from ralph_desk.gui.panes.loop.pane import LoopPane
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.loop.planner import peek_next_task
from ralph_desk.project import read_config
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import make_repository
from ralph_desk.vcs.worktrees import TaskWorktree
from tests.gui import test_loop_pane as loop_pane
from tests.gui.conftest import controller, settle
from tests.gui.test_loop_pane import choose_agent
from tests.loop.conftest import Agent, StartApi, heading, verb
from tests.support.fake_model_api import Hang, Text, ToolCalls
from tests.support.git_changes import git

# The Loop pane tests' window, its asyncio loop and embedded server, and the loop tests' agents.
qt_loop = loop_pane.qt_loop
embedded = loop_pane.embedded
loop_window = loop_pane.loop_window
agent = loop_pane.agent
start_api = loop_pane.start_api

WAIT_MS = 10_000
SESSION_MS = 120_000
WORK = "def gate_off():\n    return 'merged at once'\n"


def test_the_gate_setting_is_saved_to_config_json_and_shown_again_by_a_new_window(
    qtbot: QtBot, window: MainWindow, services: Services, settings: QSettings
) -> None:
    form = window.loop.settings
    assert form.review_gate.isChecked() and read_config(services.paths).review_gate

    form.review_gate.setChecked(False)
    form.save.click()
    settle(qtbot, window)

    assert read_config(services.paths).review_gate is False and not form.dirty
    again = build_window(services, settings=settings, use_tray=False)
    qtbot.addWidget(again, before_close_func=lambda built: controller(built).feed.stop())
    settle(qtbot, again)
    assert not again.loop.settings.review_gate.isChecked() and not again.loop.settings.dirty

    again.loop.settings.review_gate.setChecked(True)
    again.loop.settings.save.click()
    settle(qtbot, again)
    assert read_config(services.paths).review_gate is True


def next_task_in_a_repository(services: Services, project: Path) -> tuple[Task, TaskWorktree, str]:
    """Make the demo a git repository; the task the loop runs next, its worktree, and the base's commit."""
    make_repository(project, "main")
    base_before = git(project, "rev-parse", "HEAD").strip()
    for task in services.tasks.list(status=TaskStatus.IN_PROGRESS.value):
        services.tasks.move(
            task.id, TaskStatus.PENDING.value, Mover.IMPORT
        )  # as the loop recovers them at start
    plan = peek_next_task(services)
    assert plan is not None and plan.task is not None
    worktree = services.workspaces.prepare(plan.task.id, plan.task.title)
    assert worktree is not None
    return plan.task, worktree, base_before


def gate_off_with_one_session(
    loop_window: MainWindow, agent: Agent, start_api: StartApi, task_id: int, worktree: TaskWorktree
) -> LoopPane:
    """Script the task's session (it writes src/gate_off.py, then done) and set the Loop pane: gate off,
    one iteration. The pane, ready to start."""
    written = worktree.path / "src" / "gate_off.py"
    start_api(
        [Hang()],
        **{
            heading(task_id): [
                ToolCalls(
                    [
                        ("Write", {"file_path": str(written), "content": WORK}),
                        verb("done", summary="Wrote gate_off"),
                    ]
                ),
                Text("Session over."),
            ]
        },
    )
    pane = loop_window.loop
    choose_agent(pane.settings, agent)
    pane.settings.timeout.setValue(120)
    pane.settings.max_iterations.setValue(1)
    pane.settings.review_gate.setChecked(False)
    return pane


@pytest.mark.slow
def test_with_the_gate_off_a_tasks_done_merges_into_the_base_at_once(
    qtbot: QtBot,
    project: Path,
    loop_window: MainWindow,
    services: Services,
    agent: Agent,
    start_api: StartApi,
) -> None:
    chosen, worktree, base_before = next_task_in_a_repository(services, project)
    pane = gate_off_with_one_session(loop_window, agent, start_api, chosen.id, worktree)

    pane.start.click()  # saves the edited settings first
    settle(qtbot, loop_window)

    assert read_config(services.paths).review_gate is False
    qtbot.waitUntil(lambda: services.tasks.get(chosen.id).status is TaskStatus.DONE, timeout=SESSION_MS)
    qtbot.waitUntil(pane.start.isEnabled, timeout=SESSION_MS)  # the loop ended: max iterations 1
    assert pane.phase in (Phase.STOPPED, Phase.COMPLETED)
    # The base branch holds the work; the person's checkout followed it; the task's worktree is gone.
    assert git(project, "show", f"{worktree.base}:src/gate_off.py").strip() == WORK.strip()
    assert git(project, "merge-base", "--is-ancestor", base_before, worktree.base) == ""
    assert (project / "src" / "gate_off.py").read_text() == WORK
    assert not worktree.path.exists()
    # Nothing waits for review.
    assert services.reviews.list() == []
    loop_window.show_pane("inbox")
    loop_window.inbox.show_tab(REVIEWS)
    qtbot.waitUntil(lambda: loop_window.inbox.tabs.tabText(REVIEWS) == "Reviews", timeout=WAIT_MS)
    assert loop_window.inbox.reviews.current is None


@pytest.mark.slow
def test_with_the_gate_off_a_merge_refused_for_uncommitted_changes_waits_in_the_reviews_tab_saying_why(
    qtbot: QtBot,
    project: Path,
    loop_window: MainWindow,
    services: Services,
    agent: Agent,
    start_api: StartApi,
) -> None:
    chosen, worktree, base_before = next_task_in_a_repository(services, project)
    draft = project / "src" / "gate_off.py"
    draft.parent.mkdir(exist_ok=True)
    draft.write_text("# the person's own draft, not committed\n")
    pane = gate_off_with_one_session(loop_window, agent, start_api, chosen.id, worktree)

    pane.start.click()
    settle(qtbot, loop_window)

    refused = "approved, not merged: the merge would overwrite uncommitted changes"
    qtbot.waitUntil(
        lambda: (services.reviews.merge_state(chosen.id) or "").startswith(refused), timeout=SESSION_MS
    )
    qtbot.waitUntil(pane.start.isEnabled, timeout=SESSION_MS)
    assert services.tasks.get(chosen.id).status is TaskStatus.IN_REVIEW
    assert git(project, "rev-parse", worktree.base).strip() == base_before  # nothing merged
    assert draft.read_text() == "# the person's own draft, not committed\n"  # nothing overwritten
    loop_window.show_pane("inbox")
    loop_window.inbox.show_tab(REVIEWS)
    reviews = loop_window.inbox.reviews
    qtbot.waitUntil(
        lambda: reviews.current is not None and reviews.current.merge.startswith(refused), timeout=WAIT_MS
    )
    assert reviews.current is not None and reviews.current.task_id == chosen.id
    detail = reviews.detail.merge
    assert detail.isVisibleTo(reviews) and "src/gate_off.py (untracked)" in detail.text()
    assert "move them elsewhere (or commit them)" in detail.text()
