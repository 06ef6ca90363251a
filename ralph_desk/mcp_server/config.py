"""Which session a `ralph-desk mcp` process serves: flags beat the environment, which beats a context file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import ContextError, SessionContext
from ralph_desk.services.errors import ServiceError
from ralph_desk.store.urls import sqlite_url

if TYPE_CHECKING:
    from ralph_desk.services.container import Services

ENV_TASK_ID = "RALPH_TASK_ID"
ENV_SESSION_ID = "RALPH_SESSION_ID"
ENV_DB_PATH = "RALPH_DB_PATH"
ENV_CONTEXT = "RALPH_CONTEXT"
ENV_RECIPE = "RALPH_RECIPE"
ENV_DISCIPLINE = "RALPH_DISCIPLINE"


@dataclass(frozen=True)
class ContextFlags:
    """What the command line said (None where it said nothing)."""

    recipe: str | None = None
    discipline: str | None = None
    task_id: int | None = None
    session_id: str | None = None
    context_file: str | None = None


def db_url_from_env(env: Mapping[str, str]) -> str | None:
    """`RALPH_DB_PATH` as a database URL, if set."""
    path = env.get(ENV_DB_PATH)
    return sqlite_url(Path(path)) if path else None


def read_context_file(path: Path) -> SessionContext:
    """A context file, refusing (fail closed) one that is missing, unreadable or malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ContextError(f"context file {path}: cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ContextError(f"context file {path}: not UTF-8 text") from None
    return SessionContext.from_text(text, source=f"context file {path}")


def _task_id(value: str, source: str) -> int:
    try:
        task_id = int(value)
    except ValueError:
        raise ContextError(f"{source} {value!r} must be a positive whole number") from None
    if task_id < 1:
        raise ContextError(f"{source} {value!r} must be a positive whole number")
    return task_id


def _recipe(value: str, source: str) -> Recipe:
    try:
        return Recipe(value)
    except ValueError:
        allowed = ", ".join(r.value for r in Recipe)
        raise ContextError(f"{source} {value!r} is unknown; allowed: {allowed}") from None


def resolve_context(flags: ContextFlags, env: Mapping[str, str] | None = None) -> SessionContext:
    """Merge flags, environment and context file, field by field; with none of them the recipe is `ide`."""
    env = os.environ if env is None else env
    context_path = flags.context_file or env.get(ENV_CONTEXT)
    base = read_context_file(Path(context_path)) if context_path else None
    recipe_given = flags.recipe or env.get(ENV_RECIPE)
    task_given = flags.task_id if flags.task_id is not None else env.get(ENV_TASK_ID)

    task_id = base.task_id if base else None
    if task_given is not None:
        task_id = task_given if isinstance(task_given, int) else _task_id(task_given, ENV_TASK_ID)
        if task_id < 1:
            raise ContextError(f"--task-id {task_id} must be a positive whole number")
    if recipe_given:
        recipe = _recipe(recipe_given, "--recipe" if flags.recipe else ENV_RECIPE)
    elif base is not None:
        recipe = base.recipe
    else:
        recipe = Recipe.TASK_EXECUTION if task_id is not None else Recipe.IDE
    session_id = flags.session_id or env.get(ENV_SESSION_ID) or (base.session_id if base else None)
    discipline = flags.discipline or env.get(ENV_DISCIPLINE) or (base.discipline if base else None)
    return SessionContext(
        recipe=recipe,
        discipline=discipline,
        feature=base.feature if base else None,
        task_id=task_id,
        session_id=session_id,
        discipline_disabled=base.discipline_disabled if base else frozenset(),
    )


def needs_database(context: SessionContext) -> bool:
    """Whether the context's tools depend on the database: it names a task or a discipline."""
    return context.task_id is not None or context.discipline is not None


def complete_context(context: SessionContext, services: Services) -> SessionContext:
    """Fill in the task's discipline and feature and the discipline's disabled tools from the database."""
    discipline = context.discipline
    feature = context.feature
    if context.task_id is not None:
        try:
            task = services.tasks.get(context.task_id)
        except ServiceError as error:
            raise ContextError(f"task_id {context.task_id}: {error}") from None
        discipline = discipline or task.discipline
        feature = feature or task.feature
    disabled = set(context.discipline_disabled)
    if discipline is not None:
        try:
            disabled |= set(services.disciplines.get(discipline).disabled_tools)
        except ServiceError as error:
            raise ContextError(f"discipline {discipline!r}: {error}") from None
    return replace(context, discipline=discipline, feature=feature, discipline_disabled=frozenset(disabled))
