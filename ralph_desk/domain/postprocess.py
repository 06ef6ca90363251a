"""Seed 002's post-processing: what one agent session's signals do to its task (pure, no I/O).

The rules, in the order they are applied:

1. Signals are read in the order they were called (`created`, then id).
2. The closing verb is the last `done`, `partial` or `stuck`; with none, `stuck("session ended
   without closing signal")` is inferred.
3. A human stop ends the session without judging it: the task goes back to `pending`, the stuck
   count is kept, no blocker or question changes the task. A rate limit (or usage limit) that ended
   a session before any closing verb does the same. Either way, a `done` already called still wins.
4. `done` makes the task `done`; blockers and blocking questions become informational.
5. A session that did not end with `done` and changed nothing (the stagnation check: database
   content, progress.txt, learnings.txt and the git tree hashed before and after) counts as
   `stuck`, even when it said `partial`.
6. `stuck` (said, inferred or stagnant) raises the stuck count by one; reaching the threshold
   makes the task `failed`, otherwise it is re-queued `pending`. `partial` re-queues it `pending`
   with its summary and remaining work as the next session's continuation.
7. With a closing verb other than `done`: an unanswered `ask(blocking=true)` makes the task
   `needs_input`; `blocked` (upstream task or external) makes it `blocked`, and an upstream
   blocker asks for a dependency (resolving its text to a task is the caller's job).
8. Precedence when several apply to a session that did not end with `done`:
   **needs_input > blocked > failed > pending** — a task waiting for a person or for other work
   is not retried, and a blocked task that also reached the stuck threshold stays blocked (so it
   resumes when unblocked) while its stuck count still rises.
9. Whatever the outcome: `suggest(new_task)` becomes a draft task (other kinds are kept for
   review only), `learned` is stored by scope, `flag` is stored with its severity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ralph_desk.domain.enums import (
    CLOSING_VERBS,
    BlockerKind,
    LearningScope,
    SessionOutcome,
    Severity,
    SuggestionKind,
    TaskStatus,
    Verb,
)
from ralph_desk.domain.records import Signal

NO_CLOSING_SIGNAL = "session ended without closing signal"
DEFAULT_STUCK_THRESHOLD = 3

_TASK_REFERENCE = re.compile(r"(?:\btask\s*#?\s*|#|\bT-)(\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Blocker:
    """A `blocked` signal that changes the task: what it waits on, in the agent's words."""

    signal_id: int
    kind: BlockerKind
    on: str
    detail: str | None = None


@dataclass(frozen=True)
class LearningIds:
    """The ids of a session's `learned` signals, by scope."""

    project: tuple[int, ...] = ()
    feature: tuple[int, ...] = ()
    task: tuple[int, ...] = ()

    @property
    def all(self) -> tuple[int, ...]:
        """Every id, ascending."""
        return tuple(sorted((*self.project, *self.feature, *self.task)))

    def of(self, scope: LearningScope) -> tuple[int, ...]:
        """The ids of one scope."""
        return {
            LearningScope.PROJECT: self.project,
            LearningScope.FEATURE: self.feature,
            LearningScope.TASK: self.task,
        }[scope]


@dataclass(frozen=True)
class Decision:
    """What one session's signals do to its task, and why (the reasons are shown in the window)."""

    closing_verb: Verb | None
    closing_signal_id: int | None
    inferred: bool
    status: TaskStatus
    outcome: SessionOutcome
    stuck_count: int
    counts_as_stuck: bool
    continuation: str | None
    blocking_ask_ids: tuple[int, ...]
    upstream_blockers: tuple[Blocker, ...]
    external_blockers: tuple[Blocker, ...]
    suggestion_ids: tuple[int, ...]
    learning_ids: LearningIds
    flag_ids: tuple[int, ...]
    reasons: tuple[str, ...]

    @property
    def effective_verb(self) -> Verb | None:
        """The closing verb as judged: the one called, or `stuck` when it was inferred."""
        return Verb.STUCK if self.inferred else self.closing_verb


def find_task_reference(text: str) -> int | None:
    """The task id a text names as `#12`, `task 12`, `task #12` or `T-12` (the first one), else None."""
    for match in _TASK_REFERENCE.finditer(text):
        task_id = int(match.group(1))
        if task_id > 0:
            return task_id
    return None


def decide(
    signals: Sequence[Signal],
    *,
    stuck_count: int,
    stuck_threshold: int = DEFAULT_STUCK_THRESHOLD,
    stopped_by_human: bool = False,
    rate_limited: bool = False,
    stagnant: bool = False,
) -> Decision:
    """Apply seed 002's rules (see the module docstring) to the signals of one session."""
    if stuck_threshold < 1:
        raise ValueError(f"stuck_threshold must be at least 1, not {stuck_threshold}")
    if stuck_count < 0:
        raise ValueError(f"stuck_count must not be negative, not {stuck_count}")
    ordered = sorted(signals, key=lambda signal: (signal.created, signal.id))
    closing = _closing_signal(ordered)
    reasons = _closing_reasons(ordered, closing)
    stored = _stored(ordered, reasons)
    if closing is not None and closing.verb is Verb.DONE:
        _note_informational(ordered, reasons)
        return _unjudged(closing, TaskStatus.DONE, SessionOutcome.DONE, stuck_count, stored, reasons)
    if stopped_by_human or (rate_limited and closing is None):
        outcome = SessionOutcome.STOPPED if stopped_by_human else SessionOutcome.RATE_LIMITED
        reasons.append(
            "stopped by the human: re-queued as pending, not counted as stuck"
            if stopped_by_human
            else "rate-limited before any closing verb: re-queued as pending, not counted as stuck"
        )
        return _unjudged(closing, TaskStatus.PENDING, outcome, stuck_count, stored, reasons)
    return _judged(ordered, closing, stuck_count, stuck_threshold, stagnant, stored, reasons)


@dataclass(frozen=True)
class _Stored:
    """What a session's signals leave for review and for later prompts, whatever its outcome."""

    suggestion_ids: tuple[int, ...]
    learning_ids: LearningIds
    flag_ids: tuple[int, ...]


def _unjudged(
    closing: Signal | None,
    status: TaskStatus,
    outcome: SessionOutcome,
    stuck_count: int,
    stored: _Stored,
    reasons: list[str],
) -> Decision:
    """A decision that leaves the stuck count alone and lets no blocker or question act."""
    return Decision(
        closing_verb=closing.verb if closing is not None else None,
        closing_signal_id=closing.id if closing is not None else None,
        inferred=False,
        status=status,
        outcome=outcome,
        stuck_count=stuck_count,
        counts_as_stuck=False,
        continuation=_continuation(closing),
        blocking_ask_ids=(),
        upstream_blockers=(),
        external_blockers=(),
        suggestion_ids=stored.suggestion_ids,
        learning_ids=stored.learning_ids,
        flag_ids=stored.flag_ids,
        reasons=tuple(reasons),
    )


def _judged(
    ordered: Sequence[Signal],
    closing: Signal | None,
    stuck_count: int,
    threshold: int,
    stagnant: bool,
    stored: _Stored,
    reasons: list[str],
) -> Decision:
    """A session that did not end with `done`: stuck counting, questions and blockers act."""
    counts_as_stuck = closing is None or closing.verb is Verb.STUCK or stagnant
    if stagnant:
        reasons.append(
            "the session changed nothing (database, progress.txt, learnings.txt, git tree): counted as stuck"
        )
    new_count = stuck_count + 1 if counts_as_stuck else stuck_count
    asks = _blocking_asks(ordered, reasons)
    upstream = _blockers(ordered, BlockerKind.UPSTREAM_TASK)
    external = _blockers(ordered, BlockerKind.EXTERNAL)
    status = _status(counts_as_stuck, new_count, threshold, asks, upstream, external, reasons)
    return Decision(
        closing_verb=closing.verb if closing is not None else None,
        closing_signal_id=closing.id if closing is not None else None,
        inferred=closing is None,
        status=status,
        outcome=_outcome(status, counts_as_stuck),
        stuck_count=new_count,
        counts_as_stuck=counts_as_stuck,
        continuation=_continuation(closing),
        blocking_ask_ids=asks,
        upstream_blockers=upstream,
        external_blockers=external,
        suggestion_ids=stored.suggestion_ids,
        learning_ids=stored.learning_ids,
        flag_ids=stored.flag_ids,
        reasons=tuple(reasons),
    )


def _closing_signal(ordered: Sequence[Signal]) -> Signal | None:
    closing = [signal for signal in ordered if signal.verb in CLOSING_VERBS]
    return closing[-1] if closing else None


def _closing_reasons(ordered: Sequence[Signal], closing: Signal | None) -> list[str]:
    if closing is None:
        return [f"no closing verb: stuck inferred ({NO_CLOSING_SIGNAL})"]
    earlier = [signal for signal in ordered if signal.verb in CLOSING_VERBS and signal is not closing]
    reason = f"closing verb: {closing.verb.value} (signal {closing.id})"
    if earlier:
        overridden = ", ".join(f"{signal.verb.value} (signal {signal.id})" for signal in earlier)
        reason += f"; the last closing verb wins over {overridden}"
    return [reason]


def _continuation(closing: Signal | None) -> str | None:
    if closing is None or closing.verb is not Verb.PARTIAL:
        return None
    return f"Done so far: {closing.summary or ''}\nRemaining: {closing.remaining or ''}"


def _stored(ordered: Sequence[Signal], reasons: list[str]) -> _Stored:
    """New-task suggestions, learnings by scope and flags: kept whatever the closing verb."""
    suggestions = tuple(
        s.id for s in ordered if s.verb is Verb.SUGGEST and s.kind == SuggestionKind.NEW_TASK.value
    )
    others = [s for s in ordered if s.verb is Verb.SUGGEST and s.kind != SuggestionKind.NEW_TASK.value]
    if suggestions:
        reasons.append(f"{_count(len(suggestions), 'new-task suggestion')} → draft task(s) for review")
    if others:
        reasons.append(f"{_count(len(others), 'other suggestion')} kept for review only")
    by_scope: dict[LearningScope, list[int]] = {scope: [] for scope in LearningScope}
    for signal in ordered:
        if signal.verb is Verb.LEARNED:
            by_scope[_scope(signal.scope)].append(signal.id)
    learnings = LearningIds(*(tuple(by_scope[scope]) for scope in LearningScope))
    if learnings.all:
        shown = ", ".join(f"{len(ids)} {scope.value}" for scope, ids in by_scope.items() if ids)
        reasons.append(f"{_count(len(learnings.all), 'learning')} stored ({shown})")
    flags = [s for s in ordered if s.verb is Verb.FLAG]
    if flags:
        levels = [s.severity or Severity.INFO.value for s in flags]
        ordered_levels = sorted(set(levels), key=_severity_rank, reverse=True)
        counted = ", ".join(f"{levels.count(level)} {level}" for level in ordered_levels)
        reasons.append(f"{_count(len(flags), 'flag')} stored ({counted})")
    return _Stored(suggestions, learnings, tuple(s.id for s in flags))


def _scope(value: str | None) -> LearningScope:
    # The MCP layer stores the default scope; an old or foreign row without one gets seed 002's default.
    try:
        return LearningScope(value) if value is not None else LearningScope.FEATURE
    except ValueError:
        return LearningScope.FEATURE


def _severity_rank(value: str) -> int:
    try:
        return Severity(value).rank
    except ValueError:
        return -1


def _note_informational(ordered: Sequence[Signal], reasons: list[str]) -> None:
    """With `done`, blockers and blocking questions are kept but change nothing."""
    informational = [
        f"{signal.verb.value} (signal {signal.id})"
        for signal in ordered
        if signal.verb is Verb.BLOCKED or (signal.verb is Verb.ASK and signal.blocking)
    ]
    if informational:
        reasons.append("done: informational only — " + ", ".join(informational))


def _blocking_asks(ordered: Sequence[Signal], reasons: list[str]) -> tuple[int, ...]:
    """Blocking questions still waiting for an answer (one answered mid-session blocks nothing)."""
    asks = [s for s in ordered if s.verb is Verb.ASK and s.blocking]
    answered = [s.id for s in asks if s.answered_at is not None]
    if answered:
        reasons.append(f"blocking question(s) already answered: {_ids(answered)}")
    return tuple(s.id for s in asks if s.answered_at is None)


def _blockers(ordered: Sequence[Signal], kind: BlockerKind) -> tuple[Blocker, ...]:
    return tuple(
        Blocker(signal.id, kind, signal.on or "", signal.detail)
        for signal in ordered
        if signal.verb is Verb.BLOCKED and _blocker_kind(signal.kind) is kind
    )


def _blocker_kind(value: str | None) -> BlockerKind:
    # A blocker of unknown kind is left to the human, like an external one.
    return BlockerKind.UPSTREAM_TASK if value == BlockerKind.UPSTREAM_TASK.value else BlockerKind.EXTERNAL


def _status(
    counts_as_stuck: bool,
    new_count: int,
    threshold: int,
    asks: tuple[int, ...],
    upstream: tuple[Blocker, ...],
    external: tuple[Blocker, ...],
    reasons: list[str],
) -> TaskStatus:
    """needs_input > blocked > failed > pending."""
    failed = counts_as_stuck and new_count >= threshold
    if counts_as_stuck:
        verdict = "the task fails" if failed else "re-queued"
        reasons.append(f"stuck {new_count}/{threshold}: {verdict}")
    else:
        reasons.append("partial: re-queued with its remaining work as continuation")
    blocker_ids = [blocker.signal_id for blocker in (*upstream, *external)]
    if asks:
        reasons.append(f"unanswered blocking question(s) {_ids(asks)}: needs input")
        if blocker_ids:
            reasons.append(f"needs input takes precedence over blocker(s) {_ids(blocker_ids)}")
        if failed:
            reasons.append("needs input takes precedence over failing")
        return TaskStatus.NEEDS_INPUT
    if blocker_ids:
        shown = "; ".join(f"{b.kind.value} {b.on!r} (signal {b.signal_id})" for b in (*upstream, *external))
        reasons.append(f"blocked on {shown}")
        if failed:
            reasons.append("blocked takes precedence over failing; the stuck count still rose")
        return TaskStatus.BLOCKED
    return TaskStatus.FAILED if failed else TaskStatus.PENDING


def _outcome(status: TaskStatus, counts_as_stuck: bool) -> SessionOutcome:
    if status is TaskStatus.NEEDS_INPUT:
        return SessionOutcome.NEEDS_INPUT
    if status is TaskStatus.BLOCKED:
        return SessionOutcome.BLOCKED
    if status is TaskStatus.FAILED:
        return SessionOutcome.FAILED
    return SessionOutcome.STUCK if counts_as_stuck else SessionOutcome.REQUEUED


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)
