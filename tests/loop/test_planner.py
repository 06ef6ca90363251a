"""The planner: which task the loop claims next, the session plan it builds, and the queue it shows."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.recipes import RECIPE_ALLOWED
from ralph_desk.domain.records import Task
from ralph_desk.domain.tools import VERB_TOOLS
from ralph_desk.loop.model import LoopSettings, SessionPlan
from ralph_desk.loop.planner import (
    describe_queue,
    new_session_id,
    peek_next_task,
    plan_next_task,
    plan_recipe_session,
)
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError, NotFoundError
from ralph_desk.store.schema import TaskRow

SETTINGS = LoopSettings()
SESSION_ID = re.compile(r"^\d{8}-\d{6}-t(\d+)-[0-9a-f]{12}$")


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    return init_project(tmp_path / "repo", title="Tide Tables")


@pytest.fixture
def services(paths: ProjectPaths) -> Iterator[Services]:
    """A project: features `charts` and `feeds`, disciplines `frontend` and `docs` (without learned, ask)."""
    opened = Services.open(paths)
    try:
        opened.features.create("charts", "Charts")
        opened.features.create("feeds", "Feeds")
        opened.disciplines.create("frontend", "Frontend", icon="code", color="#3b82f6")
        opened.disciplines.create(
            "docs",
            "Documentation",
            icon="book",
            color="#f59e0b",
            disabled_tools=["learned", "ask", "create_task"],
        )
        yield opened
    finally:
        opened.close()


def _task(services: Services, title: str, priority: str = "medium", **fields: object) -> Task:
    return services.tasks.create("charts", "frontend", title, priority=priority, **fields)  # type: ignore[arg-type]


def _age(services: Services, task: Task, days: int) -> None:
    """Make a task look `days` older (to test ordering by age without waiting)."""
    with services.db.write() as unit:
        unit.session.execute(
            update(TaskRow)
            .where(TaskRow.id == task.id)
            .values(created_at=datetime(2026, 3, 1, 12, 0) - timedelta(days=days))
        )


def _claimed(services: Services) -> list[int]:
    """Plan until nothing is runnable; the ids of the tasks claimed, in order."""
    ids = []
    while (plan := plan_next_task(services, SETTINGS)) is not None:
        assert plan.task is not None
        ids.append(plan.task.id)
    return ids


def test_the_most_urgent_task_is_claimed_first_then_the_oldest(services: Services) -> None:
    low = _task(services, "Low", "low")
    medium_new = _task(services, "Medium, newer")
    medium_old = _task(services, "Medium, older")
    critical = _task(services, "Critical", "critical")
    high = _task(services, "High", "high")
    _age(services, medium_new, days=1)
    _age(services, medium_old, days=2)

    assert _claimed(services) == [critical.id, high.id, medium_old.id, medium_new.id, low.id]


def test_a_claimed_task_is_in_progress_and_not_claimed_again(services: Services) -> None:
    task = _task(services, "Draw the chart")

    plan = plan_next_task(services, SETTINGS)

    assert plan is not None and plan.task is not None
    assert plan.task.id == task.id
    assert services.tasks.get(task.id).status is TaskStatus.IN_PROGRESS
    assert plan_next_task(services, SETTINGS) is None


def test_a_task_waits_until_every_dependency_is_done(services: Services) -> None:
    base = _task(services, "Base", "low")
    other = _task(services, "Other", "low")
    dependent = _task(services, "Dependent", "critical", depends_on=[base.id, other.id])

    assert _claimed(services) == [base.id, other.id]
    services.tasks.move(base.id, TaskStatus.DONE.value, Mover.IMPORT)
    assert plan_next_task(services, SETTINGS) is None

    services.tasks.move(other.id, TaskStatus.DONE.value, Mover.IMPORT)
    plan = plan_next_task(services, SETTINGS)
    assert plan is not None and plan.task is not None and plan.task.id == dependent.id


def test_drafts_and_waiting_tasks_are_never_claimed(services: Services) -> None:
    _task(services, "Draft", status="draft")
    for status in ("needs_input", "blocked", "failed", "skipped", "done"):
        services.tasks.move(_task(services, status.capitalize()).id, status, Mover.IMPORT)

    assert plan_next_task(services, SETTINGS) is None
    assert describe_queue(services) == []


def loops_at_once(paths: ProjectPaths, count: int, work: Callable[[Services], None]) -> None:
    """`work` on `count` loops of their own (each its own Services) started together; fails on any error."""
    loops = [Services.open(paths) for _ in range(count)]
    errors: list[BaseException] = []
    start = threading.Barrier(count, timeout=30)

    def run(loop: Services) -> None:
        try:
            start.wait()
            work(loop)
        except BaseException as error:  # reported by the assertions below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(loop,)) for loop in loops]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        for loop in loops:
            loop.close()
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []


def test_two_loops_planning_at_once_never_claim_the_same_task(
    services: Services, paths: ProjectPaths
) -> None:
    expected = {
        _task(services, f"Task {number}", ("low", "medium", "high")[number % 3]).id for number in range(30)
    }
    claimed: list[int] = []

    def plan_all(loop: Services) -> None:
        for _ in range(20):
            plan = plan_next_task(loop, SETTINGS)
            if plan is not None and plan.task is not None:
                claimed.append(plan.task.id)

    loops_at_once(paths, 2, plan_all)

    assert len(claimed) == len(set(claimed))
    assert set(claimed) == expected


def test_a_task_sharing_a_context_file_with_a_running_task_waits_while_others_run(services: Services) -> None:
    first = _task(services, "Draw the chart", "high", context_files=["src/chart.py"])
    same_file = _task(services, "Colour the chart", "high", context_files=["./src/chart.py"])
    other = _task(services, "Label the axes", "low", context_files=["src/axes.py"])

    assert _claimed(services) == [first.id, other.id]
    assert services.tasks.get(same_file.id).status is TaskStatus.PENDING

    services.tasks.move(first.id, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
    plan = plan_next_task(services, SETTINGS)
    assert plan is not None and plan.task is not None and plan.task.id == same_file.id


def test_a_task_of_a_feature_nobody_works_on_is_claimed_before_an_older_one_of_a_busy_feature(
    services: Services,
) -> None:
    charts = [_task(services, f"Chart {number}", "high") for number in range(2)]
    feeds = services.tasks.create("feeds", "frontend", "Read the feed", priority="low")

    assert _claimed(services) == [charts[0].id, feeds.id, charts[1].id]


def test_two_loops_claiming_at_once_never_run_two_tasks_sharing_a_context_file(
    services: Services, paths: ProjectPaths
) -> None:
    shared = {
        _task(services, f"Edit the chart {number}", context_files=["src/chart.py"]).id for number in range(6)
    }
    claimed: list[int] = []

    def claim(loop: Services) -> None:
        plan = plan_next_task(loop, SETTINGS)
        if plan is not None and plan.task is not None:
            claimed.append(plan.task.id)

    loops_at_once(paths, 4, claim)

    assert len(claimed) == 1 and set(claimed) <= shared
    assert services.tasks.count_by_status()[TaskStatus.IN_PROGRESS.value] == 1


def test_a_task_plan_carries_its_task_feature_discipline_and_context(services: Services) -> None:
    task = _task(services, "Draw the chart")

    plan = plan_next_task(services, SETTINGS, loop_run_id=None, iteration=4)

    assert plan is not None
    assert plan.recipe is Recipe.TASK_EXECUTION
    assert plan.task is not None and plan.task.id == task.id
    assert plan.feature is not None and plan.feature.name == "charts"
    assert plan.discipline is not None and plan.discipline.name == "frontend"
    assert plan.iteration == 4
    assert plan.context.recipe is Recipe.TASK_EXECUTION
    assert (plan.context.task_id, plan.context.feature, plan.context.discipline) == (
        task.id,
        "charts",
        "frontend",
    )
    assert plan.context.session_id == plan.session_id
    assert plan.enabled_tools == VERB_TOOLS == plan.context.enabled_tools


def test_enabled_tools_are_the_recipes_minus_what_the_discipline_takes_away(services: Services) -> None:
    services.tasks.create("charts", "docs", "Write the chart guide")

    plan = plan_next_task(services, SETTINGS)

    assert plan is not None
    assert plan.enabled_tools == VERB_TOOLS - {"learned", "ask"}
    assert plan.context.enabled_tools == plan.enabled_tools
    assert plan.context.refusal("learned") is not None
    assert plan.context.refusal("done") is None


def test_a_discipline_cannot_add_tools_its_recipe_does_not_allow(services: Services) -> None:
    plan = plan_recipe_session(services, Recipe.OPUS_REVIEW, feature="charts", discipline="docs")

    assert plan.enabled_tools == RECIPE_ALLOWED[Recipe.OPUS_REVIEW] - {"create_task"}
    assert "learned" not in plan.enabled_tools
    assert plan.context.enabled_tools == plan.enabled_tools


def test_session_ids_are_unique_and_name_the_time_and_the_task(services: Services) -> None:
    _task(services, "First")
    _task(services, "Second")
    plans = [plan_next_task(services, SETTINGS) for _ in range(2)]
    ids = [plan.session_id for plan in plans if plan is not None]
    many = {new_session_id("t1") for _ in range(500)}

    assert len(ids) == 2
    assert [int(match.group(1)) for match in map(SESSION_ID.match, ids) if match] == [
        plan.task.id for plan in plans if plan is not None and plan.task is not None
    ]
    assert len(set(ids)) == 2
    assert len(many) == 500


def test_a_session_id_carries_the_utc_time_it_was_made(services: Services) -> None:
    moment = datetime(2026, 3, 1, 14, 5, 9, tzinfo=UTC)

    assert re.fullmatch(r"20260301-140509-t7-[0-9a-f]{12}", new_session_id("t7", moment))


def test_a_recipe_session_claims_no_task(services: Services) -> None:
    task = _task(services, "Draw the chart")

    plan = plan_recipe_session(services, "braindump", extra_input="Tide alerts, please.")

    assert plan.task is None and plan.context.task_id is None
    assert plan.recipe is Recipe.BRAINDUMP
    assert plan.extra_input == "Tide alerts, please."
    assert plan.enabled_tools == RECIPE_ALLOWED[Recipe.BRAINDUMP]
    assert re.fullmatch(r"\d{8}-\d{6}-braindump-[0-9a-f]{12}", plan.session_id)
    assert services.tasks.get(task.id).status is TaskStatus.PENDING


@pytest.mark.parametrize(
    "recipe", ["braindump", "yap", "ramble", "discuss", "enrichment", "opus_review", "understand"]
)
def test_every_interactive_recipe_can_be_planned(services: Services, recipe: str) -> None:
    plan: SessionPlan = plan_recipe_session(services, recipe, feature="charts", discipline="frontend")

    assert plan.recipe.value == recipe
    assert plan.feature is not None and plan.feature.name == "charts"
    assert plan.context.feature == "charts" and plan.context.discipline == "frontend"
    assert plan.enabled_tools == RECIPE_ALLOWED[plan.recipe]


@pytest.mark.parametrize("recipe", ["task_execution", "ide", "freestyle"])
def test_a_recipe_session_refuses_recipes_that_need_a_task_or_start_no_agent(
    services: Services, recipe: str
) -> None:
    with pytest.raises(InvalidValueError, match=r"allowed: braindump, yap, ramble, discuss, enrichment"):
        plan_recipe_session(services, recipe)


def test_a_recipe_session_refuses_an_unknown_feature_or_discipline(services: Services) -> None:
    with pytest.raises(NotFoundError, match="no feature 'maps'"):
        plan_recipe_session(services, Recipe.RAMBLE, feature="maps")
    with pytest.raises(NotFoundError, match="no discipline 'ops'"):
        plan_recipe_session(services, Recipe.DISCUSS, discipline="ops")


def test_blank_extra_input_is_no_input(services: Services) -> None:
    assert plan_recipe_session(services, Recipe.YAP, extra_input="  \n").extra_input is None


def test_the_queue_shows_what_would_run_in_order_without_claiming(services: Services) -> None:
    low = _task(services, "Low", "low")
    high = _task(services, "High", "high")
    blocked = _task(services, "Waits", "critical", depends_on=[low.id])

    queue = describe_queue(services, limit=10)

    assert [task.id for task in queue] == [high.id, low.id]
    assert blocked.id not in [task.id for task in queue]
    assert services.tasks.count_by_status()[TaskStatus.IN_PROGRESS.value] == 0
    assert [task.id for task in describe_queue(services, limit=1)] == [high.id]


def test_peeking_plans_the_next_task_without_claiming_it(services: Services) -> None:
    _task(services, "Low", "low")
    high = _task(services, "High", "high")

    peeked = peek_next_task(services)

    assert peeked is not None and peeked.task is not None
    assert peeked.task.id == high.id
    assert services.tasks.get(high.id).status is TaskStatus.PENDING
    claimed = plan_next_task(services, SETTINGS)
    assert claimed is not None and claimed.task is not None and claimed.task.id == high.id
    assert claimed.enabled_tools == peeked.enabled_tools
    assert claimed.session_id != peeked.session_id


def test_peeking_at_an_empty_queue_gives_nothing(services: Services) -> None:
    _task(services, "Draft", status="draft")

    assert peek_next_task(services) is None


def test_a_claimed_task_that_cannot_be_planned_goes_back_to_the_queue(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = _task(services, "Draw the chart")

    def broken(name: str) -> object:
        raise RuntimeError("the feature table is unreadable")

    monkeypatch.setattr(services.features, "get", broken)

    with pytest.raises(RuntimeError, match="unreadable"):
        plan_next_task(services, SETTINGS)
    assert services.tasks.get(task.id).status is TaskStatus.PENDING
