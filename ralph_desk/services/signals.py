"""Recording the eight signal verbs of seed 002, and reading them back for the loop and the prompt."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
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
    TaskStatus,
    Verb,
)
from ralph_desk.domain.postprocess import Blocker
from ralph_desk.domain.records import FeatureLearning, Signal, Task
from ralph_desk.services import features as features_service
from ralph_desk.services import tasks as tasks_service
from ralph_desk.services import validation as check
from ralph_desk.services.errors import InvalidValueError, NotFoundError, ServiceError
from ralph_desk.services.inbox import draft_fields, refuse_unless_draftable
from ralph_desk.services.state_files import LEARNINGS, PROGRESS, StateFileService
from ralph_desk.store import comments as comments_store
from ralph_desk.store import features as features_store
from ralph_desk.store import signals as store
from ralph_desk.store import tasks as tasks_store
from ralph_desk.store.database import Database, UnitOfWork

MAX_SESSION_ID = 128
MAX_FEATURE_NAME = 64

# Verbs whose signals wait for the human; recording one refreshes the inbox too.
INBOX_VERBS = frozenset({Verb.ASK, Verb.FLAG, Verb.SUGGEST})

Params = Mapping[str, Any]

SETTLER = "ralph-desk"
ELLIPSIS = "…"


@dataclass(frozen=True)
class UpstreamLink:
    """An upstream blocker of a session and the open task it names (None when there is none, and `why`)."""

    blocker: Blocker
    upstream_id: int | None
    why: str


@dataclass(frozen=True)
class Settlement:
    """What a finished session writes: its task's status and stuck count, dependencies, drafts, learnings."""

    status: TaskStatus
    count_stuck: bool = False
    links: Sequence[UpstreamLink] = ()
    suggestion_ids: Sequence[int] = ()
    learning_ids: Sequence[int] = ()
    """The session's `learned` signals to keep on the task's feature, in order."""
    read_ids: Sequence[int] = ()
    """Further signals of the session to hand back (the closing one, questions)."""
    project_learning_ids: Sequence[int] = ()
    """Those of `learning_ids` that learnings.txt gets too when new (a repeat only raises a count)."""
    progress: Callable[[Task, Mapping[int, Signal]], str] | None = None
    """The progress.txt line for the settled task and the session's signals, if one is wanted."""


@dataclass(frozen=True)
class StoredLearning:
    """A session's learning as kept on the feature, whether it was new, and its text."""

    signal_id: int
    learning: FeatureLearning
    is_new: bool
    text: str


@dataclass(frozen=True)
class Settled:
    """What settling a session wrote, and what it could not write (`notes` say why)."""

    task: Task
    signals: Mapping[int, Signal]
    added_dependencies: tuple[int, ...]
    unresolved_blockers: tuple[Blocker, ...]
    created_task_ids: tuple[int, ...]
    learnings: tuple[StoredLearning, ...]
    notes: tuple[str, ...]
    progress_line: str | None = None


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

    def __init__(self, db: Database, state_files: StateFileService | None = None) -> None:
        self.db = db
        self.state_files = state_files

    def record(
        self,
        task_id: int,
        session_id: str | None,
        verb: Verb | str,
        /,
        *,
        recorded_at: datetime | None = None,
        **params: Any,
    ) -> Signal:
        """Store one verb call of an agent working on `task_id` in session `session_id`.

        `recorded_at` is now unless given (an import or the demo replays calls made earlier).
        """
        checked_verb = check.choice("verb", verb, Verb)
        _require_id("task_id", task_id)
        session = _session_id(session_id)
        fields = check_params(checked_verb, params)
        feature_name = fields.pop("feature", None)
        if recorded_at is not None:
            fields["created"] = check.moment("recorded_at", recorded_at)
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
            signal = store.add(unit, fields, facts.discipline, feature_name)
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

    def settle(self, task_id: int, session_id: str, settlement: Settlement) -> Settled:
        """Write a finished session's outcome to its task in one transaction, and say what it wrote.

        Dependencies, stuck count, status, the draft tasks of its new_task suggestions and its
        learnings (a near-duplicate raises a hit count). A dependency, draft or learning that cannot
        be written is skipped with a note (a refused dependency also gets a comment on the task);
        the rest is written all together or not at all. Its new project learnings and progress line
        are appended to learnings.txt and progress.txt in the same unit, which holds the write lock
        (a separate unit per entry cost half a millisecond each).
        """
        _require_id("task_id", task_id)
        session = check.required_text("session_id", session_id, limit=MAX_SESSION_ID)
        notes: list[str] = []
        wants_files = settlement.progress is not None or bool(settlement.project_learning_ids)
        if wants_files and self.state_files is None:
            raise RuntimeError("settling with progress or project learnings needs the state files")
        line: str | None = None
        with self.db.write() as unit:
            facts = _require_task(unit, task_id)
            wanted = {*settlement.suggestion_ids, *settlement.learning_ids, *settlement.read_ids}
            named = store.by_ids(unit, wanted, for_update=bool(settlement.suggestion_ids))
            added, unresolved = _link_upstream(unit, task_id, settlement.links, notes)
            task = tasks_store.settle(unit, task_id, settlement.status.value, settlement.count_stuck)
            assert task is not None
            created = _create_drafts(unit, facts, settlement.suggestion_ids, named, notes)
            ours = {signal_id: signal for signal_id, signal in named.items() if signal.session_id == session}
            learnings = _keep_learnings(unit, facts, settlement.learning_ids, ours, notes)
            if self.state_files is not None:
                project = set(settlement.project_learning_ids)
                for stored in learnings:
                    if stored.is_new and stored.signal_id in project:
                        self.state_files.append_within(unit, LEARNINGS, stored.text)
                if settlement.progress is not None:
                    line = settlement.progress(task, ours)
                    self.state_files.append_within(unit, PROGRESS, line)
        return Settled(
            task=task,
            signals=ours,
            added_dependencies=tuple(added),
            unresolved_blockers=tuple(unresolved),
            created_task_ids=tuple(created),
            learnings=tuple(learnings),
            notes=tuple(notes),
            progress_line=line,
        )

    def latest_continuation(self, task_id: int) -> Signal | None:
        """The task's last `partial` (its summary and what remains), unless a `done` came after it."""
        with self.db.read() as unit:
            _require_task(unit, task_id)
            return store.latest_partial(unit, task_id)


def _link_upstream(
    unit: UnitOfWork, task_id: int, links: Sequence[UpstreamLink], notes: list[str]
) -> tuple[list[int], list[Blocker]]:
    """A dependency per resolved upstream blocker; the others stay as external blockers, with a comment."""
    added: list[int] = []
    unresolved: list[Blocker] = []
    for link in links:
        problem = link.why if link.upstream_id is None else _try_dependency(unit, task_id, link.upstream_id)
        if problem is None and link.upstream_id is not None:
            added.append(link.upstream_id)
            continue
        blocker = link.blocker
        note = (
            f"blocked on {blocker.on!r} (signal {blocker.signal_id}): no dependency added — {problem}; "
            "left for a person to resolve, like an external blocker"
        )
        notes.append(note)
        unresolved.append(blocker)
        try:
            fields = {
                "author": SETTLER,
                "body": check.required_text("body", note),
                "discipline": None,
                "priority": None,
            }
            comments_store.add(unit, task_id, fields)
        except ServiceError as error:
            notes.append(f"could not comment on task #{task_id}: {error}")
    return added, unresolved


def _try_dependency(unit: UnitOfWork, task_id: int, upstream_id: int) -> str | None:
    try:
        tasks_service.add_dependency(unit, task_id, upstream_id)
    except ServiceError as error:
        return str(error)
    return None


def _create_drafts(
    unit: UnitOfWork,
    session_task: store.TaskFacts,
    suggestion_ids: Sequence[int],
    named: Mapping[int, Signal],
    notes: list[str],
) -> list[int]:
    """The draft task of each new_task suggestion (an existing one when already made); their ids, in order."""
    drafts: dict[int, dict[str, Any]] = {}
    existing: dict[int, int] = {}
    facts: dict[int, store.TaskFacts | None] = {session_task.id: session_task}
    for suggestion_id in suggestion_ids:
        if suggestion_id in drafts or suggestion_id in existing:
            continue
        try:
            suggestion = _suggestion(suggestion_id, named)
        except ServiceError as error:
            notes.append(f"suggestion {suggestion_id} made no draft task: {error}")
            continue
        if suggestion.created_task_id is not None:
            existing[suggestion_id] = suggestion.created_task_id
            continue
        if suggestion.task_id not in facts:
            facts[suggestion.task_id] = store.task_facts(unit, suggestion.task_id)
        source = facts[suggestion.task_id]
        assert source is not None, "a signal's task exists (signals are deleted with it)"
        drafts[suggestion_id] = draft_fields(unit, suggestion, source)
    made = dict(zip(drafts, tasks_store.create_many(unit, drafts.values()), strict=True))
    store.link_created_tasks(unit, made)
    if made:
        unit.touch("inbox", *made)
    ids = {**existing, **made}
    return [ids[suggestion_id] for suggestion_id in dict.fromkeys(suggestion_ids) if suggestion_id in ids]


def _suggestion(signal_id: int, named: Mapping[int, Signal]) -> Signal:
    """The new_task suggestion `signal_id`, refused as `InboxService.create_suggested_task` refuses it."""
    _require_id("signal_id", signal_id)
    suggestion = named.get(signal_id)
    if suggestion is None:
        raise NotFoundError(Verb.SUGGEST.value, signal_id)
    if suggestion.verb is not Verb.SUGGEST:
        raise InvalidValueError(
            "signal_id",
            signal_id,
            f"the id of a signal of verb {Verb.SUGGEST.value!r} "
            f"(signal {signal_id} has verb {suggestion.verb.value!r})",
        )
    refuse_unless_draftable(suggestion)
    return suggestion


def _clip(text: str, limit: int = check.MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


def _keep_learnings(
    unit: UnitOfWork,
    facts: store.TaskFacts,
    learning_ids: Sequence[int],
    ours: Mapping[int, Signal],
    notes: list[str],
) -> list[StoredLearning]:
    """The session's learnings, kept on the task's feature (one read of its learnings for all of them)."""
    texts: list[tuple[int, str]] = []
    items: list[features_service.NewLearning] = []
    for signal_id in learning_ids:
        signal = ours.get(signal_id)
        if signal is None or not signal.text:
            notes.append(f"learning {signal_id} is not a learning of this session with a text; skipped")
            continue
        texts.append((signal_id, signal.text))
        items.append(features_service.NewLearning(signal.text, "agent", signal.rationale, facts.id))
    kept: list[StoredLearning] = []
    appended = (
        features_service.append_learnings(unit, facts.feature, items, facts.feature_id) if items else []
    )
    for (signal_id, text), result in zip(texts, appended, strict=True):
        if isinstance(result, ServiceError):
            notes.append(f"learning {signal_id} was not stored on feature {facts.feature!r}: {result}")
            continue
        learning, is_new = result
        kept.append(StoredLearning(signal_id, learning, is_new, text))
    return kept


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
