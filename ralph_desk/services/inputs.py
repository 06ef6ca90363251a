"""The typed inputs of service calls that no tool takes: built from plain values by `validation.arguments`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from ralph_desk.domain.enums import (
    CLOSING_VERBS,
    FlagCategory,
    FlagResolution,
    LoopState,
    Recipe,
    SessionOutcome,
    Severity,
    TaskOrigin,
    TaskStatus,
    Triage,
    Verb,
)
from ralph_desk.domain.tools import (
    MAX_PATH,
    MAX_SESSION_ID,
    MAX_TEXT,
    NAME_PATTERN,
    NO_NUL_PATTERN,
    TEXT_PATTERN,
    Id,
    Limit,
    Offset,
    OneOf,
    ShortText,
    Text,
)

MAX_AGENT = 32
MAX_NAME = 64
MAX_HEAD = 64
MAX_CHANGED_FILES = 10_000
MAX_LIST = 1_000
TRUNCATED = "\n… (truncated)"

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


def _refused_unless(test: Callable[[Any], bool], allowed: str) -> BeforeValidator:
    """A check that refuses a value failing `test`, saying `allowed`."""

    def check(value: object) -> object:
        if not test(value):
            raise PydanticCustomError("allowed", allowed)
        return value

    return BeforeValidator(check)


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _amount(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value >= 0


def _json_mapping(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return isinstance(value, Mapping)


def _naive_utc(value: datetime | None) -> datetime | None:
    """A timestamp as stored: naive UTC (an aware one converted)."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def _clipped(value: object) -> object:
    """A very long error text (a whole traceback) cut rather than refused."""
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return value[: MAX_TEXT - len(TRUNCATED)] + TRUNCATED
    return value


def _text(limit: int, required: bool = False) -> StringConstraints:
    """A text of at most `limit` characters without NUL; a required one not blank."""
    if required:
        return StringConstraints(min_length=1, max_length=limit, pattern=TEXT_PATTERN)
    return StringConstraints(max_length=limit, pattern=NO_NUL_PATTERN)


SessionId = Annotated[str, _text(MAX_SESSION_ID, required=True)]
AgentText = Annotated[str, _text(MAX_AGENT, required=True)]
ModelText = Annotated[str, _text(MAX_SESSION_ID)]
NameText = Annotated[str, _text(MAX_NAME)]
HeadText = Annotated[str, _text(MAX_HEAD)]
PathText = Annotated[str, _text(MAX_PATH)]
RequiredPath = Annotated[str, _text(MAX_PATH, required=True)]
LongText = Annotated[str, _text(MAX_TEXT)]
Slug = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
Count = Annotated[
    int, _refused_unless(lambda value: _whole(value, 0, 2**63 - 1), "a whole number of 0 or more")
]
Amount = Annotated[float, _refused_unless(_amount, "an amount in US dollars of 0 or more")]
ExitCode = Annotated[
    int,
    _refused_unless(
        lambda value: _whole(value, -(2**31), 2**31 - 1), "a whole number (a process exit status)"
    ),
]
Moment = Annotated[
    datetime | None,
    _refused_unless(lambda value: isinstance(value, datetime), "a date and time"),
    AfterValidator(_naive_utc),
]
Settings = Annotated[
    dict[str, Any], _refused_unless(_json_mapping, "a mapping of setting names to JSON values")
]
ChangedFiles = Annotated[
    list[RequiredPath],
    _refused_unless(lambda value: isinstance(value, list | tuple), "a list of file paths"),
    Field(max_length=MAX_CHANGED_FILES),
]
ClosingVerb = Annotated[Verb, OneOf(tuple(verb for verb in Verb if verb in CLOSING_VERBS))]


class SessionStart(ServiceInput):
    """What the loop records when an agent session starts."""

    id: SessionId
    task_id: Id | None = None
    recipe: Recipe
    agent: AgentText
    model: ModelText | None = None
    loop_run_id: Id | None = None
    iteration: Count | None = None
    discipline: NameText | None = None
    feature: NameText | None = None
    head_before: HeadText | None = None
    transcript_path: PathText | None = None
    started_at: Moment = None
    sandbox: AgentText | None = None
    sandbox_note: LongText | None = None


class SessionChange(ServiceInput):
    """What may change on a session while it runs and when it ends."""

    ended_at: Moment = None
    exit_code: ExitCode | None = None
    closing_verb: ClosingVerb | None = None
    outcome: SessionOutcome | None = None
    cost_usd: Amount = 0.0
    input_tokens: Count = 0
    output_tokens: Count = 0
    turns: Count = 0
    transcript_path: PathText | None = None
    changed_files: ChangedFiles = []
    head_after: HeadText | None = None
    error: Annotated[LongText | None, BeforeValidator(_clipped)] = None


class LoopRunStart(ServiceInput):
    """What the loop records when it starts."""

    agent: AgentText
    max_iterations: Id | None = None
    max_cost_usd: Amount | None = None
    allow_edits: StrictBool = False
    settings: Settings = {}


class LoopRunChange(ServiceInput):
    """What may change on a loop run."""

    state: LoopState = LoopState.RUNNING
    ended_at: Moment = None
    iterations: Count = 0
    cost_usd: Amount = 0.0
    stop_reason: LongText | None = None
    max_iterations: Id | None = None
    max_cost_usd: Amount | None = None
    settings: Settings = {}


class SessionQuery(ServiceInput):
    """Which sessions or loop runs a list shows: of one task or loop run, and a page."""

    task_id: Id | None = None
    loop_run_id: Id | None = None
    limit: Annotated[
        int, _refused_unless(lambda value: _whole(value, 1, MAX_LIST), f"a whole number from 1 to {MAX_LIST}")
    ] = 50
    offset: Count = 0


def columns(args: BaseModel) -> dict[str, Any]:
    """The fields a caller set, as columns: an enum as its value."""
    values = {name: getattr(args, name) for name in args.model_fields_set}
    return {name: value.value if isinstance(value, StrEnum) else value for name, value in values.items()}


def given(values: Mapping[str, object]) -> dict[str, object]:
    """The values a plain caller gave: None stands for leaving the argument out."""
    return {key: value for key, value in values.items() if value is not None}
