"""Checks shared by the services; each failure names the field, the bad value and what is allowed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import PurePosixPath
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, Strict, ValidationError, create_model

from ralph_desk.domain.arguments import problems
from ralph_desk.domain.diffs import MAX_CONTEXT_LINES
from ralph_desk.domain.tools import MAX_ID, Author
from ralph_desk.services.errors import InvalidValueError
from ralph_desk.services.inputs import RequiredPath

M = TypeVar("M", bound=BaseModel)


def arguments(model: type[M], values: Mapping[str, object], owner: str) -> M:
    """`values` as `model`'s typed arguments; the first bad one is refused naming it and what is allowed.

    The same model, and so the same rules and limits, as a tool call from an MCP client: a caller
    holding plain values (the window, the CLI, an import, the demo) builds its typed input here.
    """
    try:
        return model.model_validate(values)
    except ValidationError as error:
        problem = problems(error, model, owner)[0]
        raise InvalidValueError(problem.field, problem.value, problem.allowed) from None


@cache
def _single(kind: Any) -> type[BaseModel]:
    """A model of one field, `value`, of the annotated type `kind`."""
    return create_model("Value", value=(kind, ...))


def value(kind: Any, field: str, given: object) -> Any:
    """`given` as a value of the annotated type `kind` (Text, Name…); refused naming `field` and the rule.

    The same types, limits and wording as a tool's arguments, for a service that takes a single value.
    """
    model = _single(kind)
    try:
        return vars(model.model_validate({"value": given}))["value"]
    except ValidationError as error:
        problem = problems(error, model, field)[0]
        where = field + problem.field.removeprefix("value")
        raise InvalidValueError(where, problem.value, problem.allowed) from None


RowId = Annotated[int, Strict(), Field(ge=1, le=MAX_ID)]


def positive_int(field: str, given: int) -> int:
    """A whole number from 1 to `MAX_ID`, such as a row id (not a text or a float that looks like one)."""
    checked: int = value(RowId, field, given)
    return checked


ContextLines = Annotated[int, Strict(), Field(ge=0, le=MAX_CONTEXT_LINES)]


def context_lines(field: str, given: int) -> int:
    """A count of unchanged lines to show around a change: 0 to 100,000 (whole files)."""
    checked: int = value(ContextLines, field, given)
    return checked


def maker(by: str | None) -> str | None:
    """Who made a decision: None (the desk itself) or a paired device's name, 1-200 characters."""
    checked: str | None = None if by is None else value(Author, "by", by)
    return checked


def relative_path(field: str, given: str) -> str:
    """A path inside the project: relative, without '..', normalised to forward slashes."""
    checked: str = value(RequiredPath, field, given)
    normalised = checked.replace("\\", "/")
    path = PurePosixPath(normalised)
    if path.is_absolute() or re.match(r"^[a-zA-Z]:", normalised) or ".." in path.parts:
        raise InvalidValueError(field, given, "a path relative to the project root, without '..'")
    return str(path)


def blank_is_none(value: object) -> object:
    """None for an empty or blank text (a plain caller clears an optional text so), else the value."""
    return None if isinstance(value, str) and not value.strip() else value


def text_or_none(value: str | None) -> str | None:
    """An optional text as stored: None for an empty or blank one."""
    return value if value is not None and value.strip() else None


def paths(field: str, values: Sequence[str] | None) -> list[str]:
    """Paths inside the project, normalised to forward slashes (their text checked by an input model)."""
    return [relative_path(f"{field}[{index}]", value) for index, value in enumerate(values or ())]
