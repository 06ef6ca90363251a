"""The typed inputs of service calls that no tool takes: built from plain values by `validation.arguments`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidatorFunctionWrapHandler, WrapValidator
from pydantic_core import PydanticCustomError

from ralph_desk.domain.enums import FlagCategory, FlagResolution, Severity, TaskOrigin, TaskStatus, Triage
from ralph_desk.domain.tools import Id, Limit, Offset, ShortText, Text

_T = TypeVar("_T")


def _listed(value: object, handler: ValidatorFunctionWrapHandler) -> object:
    """A single value as a list of one, refused as that value (not as the list's item 0); a list as given."""
    if isinstance(value, str):
        try:
            return handler([value])
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            raise PydanticCustomError(first["type"], first["msg"], first.get("ctx")) from None
    if isinstance(value, Sequence):
        return handler(list(value))
    raise PydanticCustomError("value_or_list", "a value or a list of values")


Listed = Annotated[list[_T], WrapValidator(_listed)]


class ServiceInput(BaseModel):
    """The typed arguments of one service call."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskQuery(ServiceInput):
    """Which tasks a list shows: each filter a value or a list of values, then search text and a page."""

    status: Listed[TaskStatus] | None = None
    feature: Listed[str] | None = None
    discipline: Listed[str] | None = None
    origin: Listed[TaskOrigin] | None = None
    search: ShortText | None = None
    limit: Id | None = None
    offset: Offset = 0


class TaskExtras(ServiceInput):
    """What a task's creation takes beyond create_task's arguments: any status, its origin, its plan."""

    status: TaskStatus | None = None
    origin: TaskOrigin = TaskOrigin.HUMAN
    pseudocode: Text | None = None


class Page(ServiceInput):
    """How many items a call returns at most."""

    limit: Limit


class FlagQuery(ServiceInput):
    """Which flags a list shows: each filter a value or a list of values."""

    resolution: Listed[FlagResolution] | None = None
    severity: Listed[Severity] | None = None
    category: Listed[FlagCategory] | None = None


class Triaging(ServiceInput):
    """What a person does with a flag."""

    resolution: Triage
