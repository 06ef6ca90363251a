"""Recording the eight signal verbs of seed 002, and reading them back for the loop and the prompt."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ralph_desk.domain.enums import (
    BlockerKind,
    FlagCategory,
    FlagResolution,
    LearningKind,
    LearningScope,
    ReviewDecision,
    Severity,
    SuggestionKind,
    Verb,
)
from ralph_desk.domain.records import Signal
from ralph_desk.services import validation as check
from ralph_desk.services.errors import InvalidValueError, NotFoundError
from ralph_desk.store import features as features_store
from ralph_desk.store import signals as store
from ralph_desk.store.database import Database, UnitOfWork

MAX_SESSION_ID = 128
MAX_FEATURE_NAME = 64

# Verbs whose signals wait for the human; recording one refreshes the inbox too.
INBOX_VERBS = frozenset({Verb.ASK, Verb.FLAG, Verb.SUGGEST})

Params = Mapping[str, Any]


def _required(verb: Verb, params: Params, name: str) -> str:
    value = params.get(name)
    if value is None:
        raise InvalidValueError(name, None, f"a non-empty text (required by {verb.value})")
    return check.required_text(name, value)


def _optional(params: Params, name: str) -> str | None:
    return check.text(name, params.get(name))


def _enum_value(verb: Verb, params: Params, name: str, enum: type[Any]) -> str:
    value = params.get(name)
    if value is None:
        allowed = ", ".join(member.value for member in enum)
        raise InvalidValueError(name, None, f"one of {allowed} (required by {verb.value})")
    member: str = check.choice(name, value, enum).value
    return member


def _options(values: Any) -> str | None:
    """Options stored one per line: each must be a single non-empty line."""
    items = check.text_list("options", values)
    for index, item in enumerate(items):
        if "\n" in item or "\r" in item:
            raise InvalidValueError(
                f"options[{index}]", item, "a single line (options are stored one per line)"
            )
    return "\n".join(items) if items else None


def _blocking(verb: Verb, value: Any) -> bool:
    if not isinstance(value, bool):
        allowed = "true or false" + (f" (required by {verb.value})" if value is None else "")
        raise InvalidValueError("blocking", value, allowed)
    return value


def _done(params: Params) -> dict[str, Any]:
    return {"summary": _required(Verb.DONE, params, "summary")}


def _partial(params: Params) -> dict[str, Any]:
    return {
        "summary": _required(Verb.PARTIAL, params, "summary"),
        "remaining": _required(Verb.PARTIAL, params, "remaining"),
    }


def _stuck(params: Params) -> dict[str, Any]:
    return {"reason": _required(Verb.STUCK, params, "reason")}


def _ask(params: Params) -> dict[str, Any]:
    return {
        "question": _required(Verb.ASK, params, "question"),
        "options": _options(params.get("options")),
        "preferred": _optional(params, "preferred"),
        "blocking": _blocking(Verb.ASK, params.get("blocking")),
    }


def _flag(params: Params) -> dict[str, Any]:
    return {
        "what": _required(Verb.FLAG, params, "what"),
        "severity": _enum_value(Verb.FLAG, params, "severity", Severity),
        "category": _enum_value(Verb.FLAG, params, "category", FlagCategory),
        "resolution": FlagResolution.OPEN.value,
    }


def _learned(params: Params) -> dict[str, Any]:
    scope = params.get("scope")
    return {
        "text": _required(Verb.LEARNED, params, "text"),
        "kind": _enum_value(Verb.LEARNED, params, "kind", LearningKind),
        "rationale": _optional(params, "rationale"),
        "scope": LearningScope.FEATURE.value
        if scope is None
        else check.choice("scope", scope, LearningScope).value,
    }


def _suggest(params: Params) -> dict[str, Any]:
    return {
        "what": _required(Verb.SUGGEST, params, "what"),
        "kind": _enum_value(Verb.SUGGEST, params, "kind", SuggestionKind),
        "why": _required(Verb.SUGGEST, params, "why"),
        "feature": check.text("feature", params.get("feature"), limit=MAX_FEATURE_NAME),
        "review_decision": ReviewDecision.PENDING.value,
    }


def _blocked(params: Params) -> dict[str, Any]:
    return {
        "on": _required(Verb.BLOCKED, params, "on"),
        "kind": _enum_value(Verb.BLOCKED, params, "kind", BlockerKind),
        "detail": _optional(params, "detail"),
    }


# Per verb: the parameters an agent may pass (seed 002) and the check that turns them into columns.
VERB_PARAMS: dict[Verb, tuple[tuple[str, ...], Callable[[Params], dict[str, Any]]]] = {
    Verb.DONE: (("summary",), _done),
    Verb.PARTIAL: (("summary", "remaining"), _partial),
    Verb.STUCK: (("reason",), _stuck),
    Verb.ASK: (("question", "options", "preferred", "blocking"), _ask),
    Verb.FLAG: (("what", "severity", "category"), _flag),
    Verb.LEARNED: (("text", "kind", "rationale", "scope"), _learned),
    Verb.SUGGEST: (("what", "kind", "why", "feature"), _suggest),
    Verb.BLOCKED: (("on", "kind", "detail"), _blocked),
}


def check_params(verb: Verb, params: Params) -> dict[str, Any]:
    """The columns of a signal from a verb's parameters; unknown or bad parameters are refused."""
    names, convert = VERB_PARAMS[verb]
    for name in params:
        if name not in names:
            raise InvalidValueError("parameter", name, f"the parameters of {verb.value}: {', '.join(names)}")
    return convert(params)


class SignalService:
    """The eight verbs agents call (each scoped to a task and session), and queries over them."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, task_id: int, session_id: str | None, verb: Verb | str, /, **params: Any) -> Signal:
        """Store one verb call of an agent working on `task_id` in session `session_id`."""
        checked_verb = check.choice("verb", verb, Verb)
        _require_id("task_id", task_id)
        session = _session_id(session_id)
        fields = check_params(checked_verb, params)
        feature_name = fields.pop("feature", None)
        with self.db.write() as unit:
            facts = store.task_facts(unit, task_id)
            if facts is None:
                raise NotFoundError("task", task_id)
            if feature_name is not None:
                fields["feature_id"] = _feature_id(unit, feature_name)
            fields.update(
                task_id=task_id,
                session_id=session,
                verb=checked_verb.value,
                discipline_id=facts.discipline_id,
            )
            signal = store.insert(unit, fields)
            if checked_verb in INBOX_VERBS:
                unit.touch("inbox", signal.id)
            return signal

    def get(self, signal_id: int) -> Signal:
        """One signal, by id."""
        _require_id("signal_id", signal_id)
        with self.db.read() as unit:
            signal = store.get(unit, signal_id)
        if signal is None:
            raise NotFoundError("signal", signal_id)
        return signal

    def for_session(self, session_id: str) -> list[Signal]:
        """Every signal of one agent session, in the order they were called."""
        session = check.required_text("session_id", session_id, limit=MAX_SESSION_ID)
        with self.db.read() as unit:
            return store.for_session(unit, session)

    def for_task(self, task_id: int) -> list[Signal]:
        """Every signal of one task, oldest first."""
        with self.db.read() as unit:
            _require_task(unit, task_id)
            return store.for_task(unit, task_id)

    def learnings(
        self, feature: str | None = None, scope: LearningScope | str | None = None, task_id: int | None = None
    ) -> list[Signal]:
        """`learned` signals, oldest first, filtered by their task's feature, their scope and their task."""
        checked_scope = check.choice("scope", scope, LearningScope).value if scope is not None else None
        with self.db.read() as unit:
            if feature is not None:
                _feature_id(unit, feature)
            if task_id is not None:
                _require_task(unit, task_id)
            return store.learnings(unit, feature=feature, scope=checked_scope, task_id=task_id)

    def open_flags(self, task_id: int | None = None, feature: str | None = None) -> list[Signal]:
        """Flags nobody has triaged yet: blocking first, newest first within a severity."""
        with self.db.read() as unit:
            if feature is not None:
                _feature_id(unit, feature)
            if task_id is not None:
                _require_task(unit, task_id)
            return store.flags(
                unit, resolutions=[FlagResolution.OPEN.value], feature=feature, task_id=task_id
            )

    def latest_answers(self, task_id: int) -> list[Signal]:
        """The task's answered asks since its last `done`: the answers its next prompt carries."""
        with self.db.read() as unit:
            _require_task(unit, task_id)
            return store.answered_asks(unit, task_id)

    def latest_continuation(self, task_id: int) -> Signal | None:
        """The task's last `partial` (its summary and what remains), unless a `done` came after it."""
        with self.db.read() as unit:
            _require_task(unit, task_id)
            return store.latest_partial(unit, task_id)


def _require_id(field: str, value: int) -> int:
    checked = check.positive_int(field, value)
    if checked is None:
        raise InvalidValueError(field, value, "a whole number from 1 to 2147483647")
    return checked


def _require_task(unit: UnitOfWork, task_id: int) -> store.TaskFacts:
    _require_id("task_id", task_id)
    facts = store.task_facts(unit, task_id)
    if facts is None:
        raise NotFoundError("task", task_id)
    return facts


def _session_id(value: str | None) -> str | None:
    if value is None:
        return None
    return check.required_text("session_id", value, limit=MAX_SESSION_ID)


def _feature_id(unit: UnitOfWork, name: str) -> int:
    feature_id = features_store.id_of(unit, name)
    if feature_id is None:
        raise NotFoundError("feature", name, features_store.names(unit))
    return feature_id
