"""Recording the eight signal verbs of seed 002, and reading them back for the loop and the prompt."""

from __future__ import annotations

from datetime import datetime

from ralph_desk.domain.enums import ChangeTopic, FlagResolution, LearningScope, ReviewDecision, Verb
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import Signal
from ralph_desk.domain.tools import (
    VERB_INPUTS,
    VERB_OF,
    AskInput,
    BlockedInput,
    DoneInput,
    FlagInput,
    LearnedInput,
    PartialInput,
    StuckInput,
    SuggestInput,
    VerbInput,
)
from ralph_desk.services import validation as check
from ralph_desk.services.errors import NotFoundError
from ralph_desk.services.inputs import Moment, SessionId
from ralph_desk.store import features as features_store
from ralph_desk.store import signals as store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.writes import SignalWrite

# Verbs whose signals wait for the human; recording one refreshes the inbox too.
INBOX_VERBS = frozenset({Verb.ASK, Verb.FLAG, Verb.SUGGEST})


def verb_input(verb: Verb, params: dict[str, object]) -> VerbInput:
    """A verb's typed arguments from plain values, refused as an MCP call with them would be."""
    checked: Verb = check.value(Verb, "verb", verb)
    return check.arguments(VERB_INPUTS[checked], params, checked.value)


def _columns(args: VerbInput) -> SignalWrite:
    """The columns a verb's arguments fill (options one per line; a new flag open, a suggestion pending)."""
    match args:
        case DoneInput():
            return {"summary": args.summary}
        case PartialInput():
            return {"summary": args.summary, "remaining": args.remaining}
        case StuckInput():
            return {"reason": args.reason}
        case AskInput():
            options = "\n".join(args.options) if args.options else None
            return {
                "question": args.question,
                "options": options,
                "preferred": args.preferred,
                "blocking": args.blocking,
            }
        case FlagInput():
            return {
                "what": args.what,
                "severity": args.severity.value,
                "category": args.category.value,
                "resolution": FlagResolution.OPEN.value,
            }
        case LearnedInput():
            return {
                "text": args.text,
                "kind": args.kind.value,
                "rationale": args.rationale,
                "scope": args.scope.value,
            }
        case SuggestInput():
            return {
                "what": args.what,
                "kind": args.kind.value,
                "why": args.why,
                "review_decision": ReviewDecision.PENDING.value,
            }
        case BlockedInput():
            return {"on": args.on, "kind": args.kind.value, "detail": args.detail}


class SignalService:
    """The eight verbs agents call (each scoped to a task and session), and queries over them."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self,
        task_id: int,
        session_id: str | None,
        verb: Verb,
        /,
        *,
        recorded_at: datetime | None = None,
        **params: object,
    ) -> Signal:
        """Store one verb call given as plain values (the demo, imports, scripts): see `record_input`."""
        return self.record_input(task_id, session_id, verb_input(verb, params), recorded_at=recorded_at)

    def record_input(
        self, task_id: int, session_id: str | None, args: VerbInput, *, recorded_at: datetime | None = None
    ) -> Signal:
        """Store one verb call of an agent working on `task_id` in session `session_id`.

        `args` is the verb's own input model, already checked; `recorded_at` is now unless given (an
        import or the demo replays calls made earlier).
        """
        verb = VERB_OF[type(args)]
        require_id("task_id", task_id)
        fields = _columns(args)
        fields["session_id"] = session_id_of(session_id)
        if recorded_at is not None:
            fields["created"] = check.value(Moment, "recorded_at", recorded_at)
        feature_name = args.feature if isinstance(args, SuggestInput) else None
        with self.db.write() as unit:
            facts = store.task_facts(unit, task_id)
            if facts is None:
                raise NotFoundError("task", task_id)
            if feature_name is not None:
                fields["feature_id"] = feature_id_of(unit, feature_name)
            fields["task_id"], fields["verb"] = task_id, verb.value
            fields["discipline_id"] = facts.discipline_id
            signal = store.add(unit, fields, facts.discipline, feature_name)
            if verb in INBOX_VERBS:
                unit.touch(ChangeTopic.INBOX, signal.id)
            return signal

    def get(self, signal_id: int) -> Signal:
        """One signal, by id."""
        require_id("signal_id", signal_id)
        with self.db.read() as unit:
            signal = store.get(unit, signal_id)
        if signal is None:
            raise NotFoundError("signal", signal_id)
        return signal

    def for_session(self, session_id: str) -> Listing[Signal]:
        """Every signal of one agent session, in the order they were called."""
        session: str = check.value(SessionId, "session_id", session_id)
        with self.db.read() as unit:
            return store.for_session(unit, session)

    def for_task(self, task_id: int) -> Listing[Signal]:
        """Every signal of one task, oldest first."""
        with self.db.read() as unit:
            require_task(unit, task_id)
            return store.for_task(unit, task_id)

    def learnings(
        self, feature: str | None = None, scope: LearningScope | None = None, task_id: int | None = None
    ) -> Listing[Signal]:
        """`learned` signals, oldest first, filtered by their task's feature, their scope and their task."""
        checked_scope = None if scope is None else check.value(LearningScope, "scope", scope).value
        with self.db.read() as unit:
            if feature is not None:
                feature_id_of(unit, feature)
            if task_id is not None:
                require_task(unit, task_id)
            return store.learnings(unit, feature=feature, scope=checked_scope, task_id=task_id)

    def open_flags(self, task_id: int | None = None, feature: str | None = None) -> Listing[Signal]:
        """Flags nobody has triaged yet: blocking first, newest first within a severity."""
        with self.db.read() as unit:
            if feature is not None:
                feature_id_of(unit, feature)
            if task_id is not None:
                require_task(unit, task_id)
            return store.flags(
                unit, resolutions=[FlagResolution.OPEN.value], feature=feature, task_id=task_id
            )

    def latest_answers(self, task_id: int) -> list[Signal]:
        """The task's answered asks since its last `done`: the answers its next prompt carries."""
        with self.db.read() as unit:
            require_task(unit, task_id)
            return store.answered_asks(unit, task_id)

    def latest_continuation(self, task_id: int) -> Signal | None:
        """The task's last `partial` (its summary and what remains), unless a `done` came after it."""
        with self.db.read() as unit:
            require_task(unit, task_id)
            return store.latest_partial(unit, task_id)


def require_id(field: str, value: int) -> int:
    """`value`, refused unless a whole number from 1 to `MAX_ID`."""
    return check.positive_int(field, value)


def require_task(unit: UnitOfWork, task_id: int) -> store.TaskFacts:
    """The facts of task `task_id`; refused when the id is no whole number or names no task."""
    require_id("task_id", task_id)
    facts = store.task_facts(unit, task_id)
    if facts is None:
        raise NotFoundError("task", task_id)
    return facts


def session_id_of(value: str | None) -> str | None:
    """A session id as stored: a non-empty text of at most `MAX_SESSION_ID` characters, or None."""
    if value is None:
        return None
    checked: str = check.value(SessionId, "session_id", value)
    return checked


def feature_id_of(unit: UnitOfWork, name: str) -> int:
    """The id of feature `name`; refused naming the known features."""
    feature_id = features_store.id_of(unit, name)
    if feature_id is None:
        raise NotFoundError("feature", name, features_store.names(unit))
    return feature_id
