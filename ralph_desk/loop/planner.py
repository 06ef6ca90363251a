"""Planning sessions: claim the next runnable task, or set up a session of another recipe.

The plan (recipe, discipline, feature, task, enabled tools, session id) is the one object the prompt
builder, the MCP endpoint and the agent command all read, so that what the prompt tells the agent to
call and what the server lets it call never drift apart (seed 001, "The Coordination Problem").
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime

from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.recipes import enabled_tools
from ralph_desk.domain.records import Discipline, Feature, Task, TaskSummary
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.model import LoopSettings, SessionPlan
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError
from ralph_desk.store.errors import StoreDataError

log = logging.getLogger("ralph_desk.loop.planner")

PEEK_WINDOW = 20
"""How many queued tasks a preview looks through for one whose stored text can be read."""

# The recipes a standalone session can run: everything but task execution (which needs a claimed
# task) and `ide` (which serves IDE clients and never starts an agent).
RECIPE_SESSIONS: tuple[Recipe, ...] = (
    Recipe.BRAINDUMP,
    Recipe.YAP,
    Recipe.RAMBLE,
    Recipe.DISCUSS,
    Recipe.ENRICHMENT,
    Recipe.OPUS_REVIEW,
    Recipe.UNDERSTAND,
)
DEFAULT_QUEUE_LIMIT = 10


def new_session_id(label: str, now: datetime | None = None) -> str:
    """A fresh session id, `<yyyymmdd-hhmmss>-<label>-<12 hex>` (UTC; 48 random bits: unique in a second)."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%d-%H%M%S}-{label}-{secrets.token_hex(6)}"


def plan_next_task(
    services: Services,
    settings: LoopSettings,
    *,
    loop_run_id: int | None = None,
    iteration: int | None = None,
) -> SessionPlan | None:
    """Claim the next runnable task (marking it in_progress) and plan its task_execution session.

    Returns None when nothing is runnable. `settings` are the loop's (planning reads none of them yet).
    """
    task = services.tasks.claim_next()
    if task is None:
        return None
    try:
        return plan_task_session(services, task, loop_run_id=loop_run_id, iteration=iteration)
    except Exception:
        # A claimed task that cannot be planned goes back to the queue rather than stay in_progress.
        log.exception("could not plan task #%s; returning it to the queue", task.id)
        services.tasks.move(task.id, TaskStatus.PENDING, Mover.LOOP)
        raise


def peek_next_task(services: Services) -> SessionPlan | None:
    """The plan the loop's next session would get, without claiming its task (for dry runs and previews)."""
    for queued in services.tasks.next_runnable(limit=PEEK_WINDOW):
        try:
            task = services.tasks.get(queued.id)
        except StoreDataError as error:  # the loop passes over it too (`claim_next`)
            log.warning("the next session passes over task #%d: %s", queued.id, error)
            continue
        return plan_task_session(services, task)
    return None


def plan_task_session(
    services: Services,
    task: Task,
    *,
    loop_run_id: int | None = None,
    iteration: int | None = None,
) -> SessionPlan:
    """The task_execution plan of a task (claimed or not): its feature, discipline, tools and a new id."""
    feature = services.features.get(task.feature)
    discipline = services.disciplines.get(task.discipline)
    session_id = new_session_id(f"t{task.id}")
    return SessionPlan(
        session_id=session_id,
        recipe=Recipe.TASK_EXECUTION,
        context=_context(Recipe.TASK_EXECUTION, session_id, discipline, feature, task.id),
        enabled_tools=enabled_tools(Recipe.TASK_EXECUTION, discipline.disabled_tools),
        task=task,
        feature=feature,
        discipline=discipline,
        iteration=iteration,
        loop_run_id=loop_run_id,
    )


def plan_recipe_session(
    services: Services,
    recipe: Recipe | str,
    *,
    feature: str | None = None,
    discipline: str | None = None,
    extra_input: str | None = None,
) -> SessionPlan:
    """Plan one session of a recipe other than task execution; no task is claimed.

    `feature` and `discipline` are names (unknown ones raise NotFoundError); the discipline's disabled
    tools narrow the recipe's tools. `extra_input` (e.g. the braindump text) goes into the prompt verbatim.
    """
    checked = _recipe(recipe)
    feature_record = services.features.get(feature) if feature is not None else None
    discipline_record = services.disciplines.get(discipline) if discipline is not None else None
    disabled = discipline_record.disabled_tools if discipline_record else ()
    session_id = new_session_id(checked.value.replace("_", "-"))
    return SessionPlan(
        session_id=session_id,
        recipe=checked,
        context=_context(checked, session_id, discipline_record, feature_record, None),
        enabled_tools=enabled_tools(checked, disabled),
        feature=feature_record,
        discipline=discipline_record,
        extra_input=extra_input if extra_input and extra_input.strip() else None,
    )


def describe_queue(services: Services, limit: int = DEFAULT_QUEUE_LIMIT) -> list[TaskSummary]:
    """The tasks the loop would attempt next, in order, without claiming any (for dry runs)."""
    return services.tasks.next_runnable(limit=limit)


def _recipe(value: Recipe | str) -> Recipe:
    allowed = ", ".join(recipe.value for recipe in RECIPE_SESSIONS)
    try:
        recipe = Recipe(value)
    except ValueError:
        raise InvalidValueError("recipe", value, allowed) from None
    if recipe not in RECIPE_SESSIONS:
        raise InvalidValueError(
            "recipe", recipe.value, f"{allowed} (task_execution sessions come from plan_next_task)"
        )
    return recipe


def _context(
    recipe: Recipe,
    session_id: str,
    discipline: Discipline | None,
    feature: Feature | None,
    task_id: int | None,
) -> SessionContext:
    return SessionContext(
        recipe=recipe,
        discipline=discipline.name if discipline else None,
        feature=feature.name if feature else None,
        task_id=task_id,
        session_id=session_id,
        discipline_disabled=frozenset(discipline.disabled_tools) if discipline else frozenset(),
    )
