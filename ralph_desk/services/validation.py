"""Checks shared by the services; each failure names the field, the bad value and what is allowed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ralph_desk.domain.arguments import problems
from ralph_desk.domain.text import STORABLE_WORDING, unstorable
from ralph_desk.domain.tools import MAX_ID, MAX_ITEMS, MAX_PATH, MAX_TEXT
from ralph_desk.domain.tools import NAME_PATTERN as NAME
from ralph_desk.services.errors import InvalidValueError

NAME_PATTERN = re.compile(NAME)

E = TypeVar("E", bound=StrEnum)
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


def name(field: str, value: str) -> str:
    """A feature or discipline name: a lower-case slug."""
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise InvalidValueError(
            field, value, "1-64 characters of a-z, 0-9, '-' and '_', starting with a letter or digit"
        )
    return value


def text(field: str, value: str | None, required: bool = False, limit: int = MAX_TEXT) -> str | None:
    """A text field within the length limit (and not blank when required)."""
    if value is None:
        if required:
            raise InvalidValueError(field, value, "a non-empty text")
        return None
    if not isinstance(value, str):
        raise InvalidValueError(field, value, "a text")
    if required and not value.strip():
        raise InvalidValueError(field, value, "a non-empty text")
    if len(value) > limit:
        raise InvalidValueError(field, f"<{len(value)} characters>", f"at most {limit} characters")
    if "\x00" in value:
        raise InvalidValueError(field, value, "text without NUL characters")
    if (why := unstorable(value)) is not None:
        raise InvalidValueError(field, value, f"{STORABLE_WORDING}; this one holds {why}")
    return value


def required_text(field: str, value: str | None, limit: int = MAX_TEXT) -> str:
    """A non-empty text field."""
    checked = text(field, value, required=True, limit=limit)
    assert checked is not None
    return checked


def text_list(field: str, values: Sequence[str] | None) -> list[str]:
    """A list of texts within the item and length limits."""
    if values is None:
        return []
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidValueError(field, values, "a list of texts")
    if len(values) > MAX_ITEMS:
        raise InvalidValueError(field, f"<{len(values)} items>", f"at most {MAX_ITEMS} items")
    return [required_text(f"{field}[{index}]", item) for index, item in enumerate(values)]


def choice(field: str, value: str | E, enum: type[E], allowed: Iterable[E] | None = None) -> E:
    """An enum value (optionally from a narrower subset)."""
    members = list(allowed) if allowed is not None else list(enum)
    try:
        member = enum(value)
    except ValueError:
        member = None
    if member is None or member not in members:
        raise InvalidValueError(field, value, "one of " + ", ".join(m.value for m in members))
    return member


def positive_int(field: str, value: int | None, maximum: int = MAX_ID) -> int | None:
    """An optional whole number from 1 to `maximum`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidValueError(field, value, f"a whole number from 1 to {maximum}")
    return value


def relative_path(field: str, value: str) -> str:
    """A path inside the project: relative, without '..', normalised to forward slashes."""
    checked = required_text(field, value, limit=MAX_PATH)
    normalised = checked.replace("\\", "/")
    path = PurePosixPath(normalised)
    if path.is_absolute() or re.match(r"^[a-zA-Z]:", normalised) or ".." in path.parts:
        raise InvalidValueError(field, value, "a path relative to the project root, without '..'")
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


def moment(field: str, value: Any) -> datetime:
    """A timestamp as stored: naive UTC (aware values are converted)."""
    if not isinstance(value, datetime):
        raise InvalidValueError(field, value, "a date and time")
    if value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value
