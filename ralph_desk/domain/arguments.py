"""What was wrong with a tool's arguments, in words: the field, the value and what is allowed (no I/O)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ralph_desk.domain.text import STORABLE_WORDING, unstorable
from ralph_desk.domain.tools import PATTERN_WORDING


@dataclass(frozen=True)
class Problem:
    """One bad argument: where it is (`options[1]`), the value given, and what is allowed there."""

    field: str
    value: object
    allowed: str


def _where(loc: tuple[int | str, ...]) -> str:
    """`('options', 1)` as `options[1]`."""
    head, *rest = loc or ("arguments",)
    return str(head) + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in rest)


def _choices(expected: str) -> str:
    """pydantic's "'a', 'b' or 'c'" as "one of a, b, c"."""
    return "one of " + ", ".join(re.findall(r"'([^']*)'", expected))


@cache
def _properties(model: type[BaseModel]) -> Mapping[str, Any]:
    """The JSON schema of each of a model's fields, by name."""
    properties: Mapping[str, Any] = model.model_json_schema().get("properties", {})
    return properties


def _schema_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> Mapping[str, Any]:
    """The JSON schema of the value at `loc` (an optional field's non-null choice, a list's items)."""
    schema: Mapping[str, Any] = _properties(model).get(str(loc[0]), {}) if loc else {}
    for part in (None, *loc[1:]):
        choices = [choice for choice in schema.get("anyOf", ()) if choice.get("type") != "null"]
        if choices:
            schema = choices[0]
        if isinstance(part, int):
            schema = schema.get("items", {})
    return schema


def _number(schema: Mapping[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"a whole number from {low} to {high}"
    if low is not None:
        return f"a whole number from {low} up"
    return "a whole number"


def _list_of(schema: Mapping[str, Any]) -> str:
    items = schema.get("items", {})
    return "a list of whole numbers" if items.get("type") == "integer" else "a list of texts"


def _allowed(item: ErrorDetails, schema: Mapping[str, Any]) -> tuple[object, str]:
    """The value to show and what is allowed, for one of pydantic's errors at a value of `schema`."""
    kind, value = item["type"], item.get("input")
    ctx: Mapping[str, Any] = item.get("ctx") or {}
    if kind in ("enum", "literal_error"):
        return value, _choices(str(ctx.get("expected", "")))
    if kind == "string_too_long":
        return f"<{len(value)} characters>", f"at most {ctx['max_length']} characters"
    if kind == "too_long":
        return f"<{ctx['actual_length']} items>", f"at most {ctx['max_length']} items"
    if kind == "string_too_short":
        return value, "a non-empty text"
    if kind == "string_pattern_mismatch":
        return value, PATTERN_WORDING.get(str(ctx.get("pattern")), item["msg"])
    if kind == "string_type":
        return value, "a text"
    if kind == "string_unicode":
        return value, f"{STORABLE_WORDING}; this one holds {unstorable(str(value))}"
    if kind == "list_type":
        return value, _list_of(schema)
    if kind in ("bool_type", "bool_parsing"):
        return value, "true or false"
    if kind in ("int_type", "int_parsing", "int_from_float", "greater_than_equal", "less_than_equal"):
        return value, _number(schema)
    return value, item["msg"]


def _missing(model: type[BaseModel], name: str, owner: str) -> str:
    """What a required field allows, said from the refusal of an empty text in its place."""
    try:
        model.model_validate({name: ""})
    except ValidationError as error:
        for item in error.errors(include_url=False):
            if item["loc"][:1] == (name,) and item["type"] != "missing":
                return f"{_allowed(item, _schema_at(model, item['loc']))[1]} (required by {owner})"
    return f"a value (required by {owner})"


def problems(error: ValidationError, model: type[BaseModel], owner: str) -> list[Problem]:
    """Each bad argument of `model` in `error`, in the model's field order; `owner` names the tool."""
    found = []
    for item in error.errors(include_url=False):
        loc = item["loc"]
        if item["type"] == "extra_forbidden":
            names = ", ".join(model.model_fields) or "none"
            found.append(Problem("parameter", loc[-1], f"the parameters of {owner}: {names}"))
        elif item["type"] == "missing":
            found.append(Problem(_where(loc), None, _missing(model, str(loc[0]), owner)))
        else:
            value, allowed = _allowed(item, _schema_at(model, loc))
            found.append(Problem(_where(loc), value, allowed))
    return found
