"""The human's side of the loop: answer questions, review suggested tasks, triage flags."""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ralph_desk.domain.enums import (
    ChangeTopic,
    FlagCategory,
    FlagResolution,
    Priority,
    ReviewDecision,
    Severity,
    SuggestionKind,
    TaskOrigin,
    TaskStatus,
    Triage,
    Verb,
)
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.listing import ItemError, Listing
from ralph_desk.domain.records import AgentSession, Signal, Task
from ralph_desk.domain.reviews import HUMAN
from ralph_desk.domain.tools import MAX_TEXT, Text
from ralph_desk.services import lifecycle
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.inputs import FlagQuery, Triaging, given
from ralph_desk.services.tasks import TaskService
from ralph_desk.store import comments as comments_store
from ralph_desk.store import features as features_store
from ralph_desk.store import sessions as sessions_store
from ralph_desk.store import signals as store
from ralph_desk.store import tasks as tasks_store
from ralph_desk.store import totals as totals_store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.errors import StoreDataError
from ralph_desk.store.writes import SignalWrite, TaskWrite

TITLE_LENGTH = 120
ELLIPSIS = "…"


@dataclass(frozen=True)
class Question:
    """An unanswered question, and what its task's agent was doing (its latest `partial`), if known."""

    ask: Signal
    doing: Signal | None = None


@dataclass(frozen=True)
class FailedTask:
    """A task that failed, why (in the agent's and the loop's words), and its last session."""

    task: Task
    reason: str
    session: AgentSession | None = None


def failure_reason(session: AgentSession | None, signals: Sequence[Signal], stuck_count: int) -> str:
    """Why a task failed: its stuck count, how its last session ended, and the agent's last `stuck` reason."""
    parts = [f"stuck {stuck_count} time{'s' if stuck_count != 1 else ''}"]
    if session is not None:
        code, error = session.exit_code, session.error or ""
        crashed = bool(code) and not session.closing_verb
        if crashed and code is not None and (f"code {code}" in error or f"signal {-code}" in error):
            parts.append(f"last session: {error}")  # the loop's account of the crash names the code itself
        else:
            parts.append(
                f"the agent of its last session exited with code {code}"
                if crashed
                else f"last session ended with {session.closing_verb or 'no closing verb'}"
            )
            if error:
                parts.append(f"error: {error}")
    stuck = next((signal for signal in reversed(signals) if signal.verb is Verb.STUCK), None)
    if stuck is not None and stuck.reason:
        parts.append(f"the agent said: {stuck.reason}")
    return "; ".join(parts)


@dataclass(frozen=True)
class TriageResult:
    """A triaged flag, and the task it became when it was converted."""

    flag: Signal
    task: Task | None = None


def _failed_task(unit: UnitOfWork, task_id: int) -> FailedTask | None:
    """A failed task with why it failed and its last session (None when it is gone)."""
    task = tasks_store.get(unit, task_id)
    if task is None:
        return None
    last = sessions_store.list_sessions(unit, task_id=task.id, limit=1)
    session = last[0] if last else None
    return FailedTask(task, failure_reason(session, store.for_task(unit, task.id), task.stuck_count), session)


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def title_from(text: str, limit: int = TITLE_LENGTH) -> str:
    """A one-line task title from a longer text: its first line, cut at a word within `limit`."""
    first_line = next((line for line in text.splitlines() if line.strip()), text)
    line = " ".join(first_line.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - len(ELLIPSIS)]
    if line[len(cut)] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-") + ELLIPSIS


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


def refuse_unless_draftable(suggestion: Signal) -> None:
    """Refuse a suggestion that cannot (or can no longer) become a draft task."""
    if suggestion.kind != SuggestionKind.NEW_TASK.value:
        raise ConflictError(
            f"suggestion {suggestion.id} is a {suggestion.kind!r} suggestion; only new_task "
            "suggestions become tasks — acknowledge it instead"
        )
    if suggestion.created_task_id is None and suggestion.review_decision is not ReviewDecision.PENDING:
        raise ConflictError(
            f"suggestion {suggestion.id} was already reviewed ({suggestion.review_decision}) "
            "and its task is gone; nothing to create"
        )


def draft_text(suggestion: Signal) -> tuple[str, str]:
    """The title and description of the draft task a new_task suggestion becomes."""
    what, why = suggestion.what or "", suggestion.why or ""
    return title_from(what), _clip(f"{what}\n\nWhy: {why}")


def draft_fields(unit: UnitOfWork, suggestion: Signal, source: store.TaskFacts) -> TaskWrite:
    """The columns of the draft task a new_task suggestion made on task `source` becomes (origin agent)."""
    feature_id = source.feature_id
    if suggestion.feature is not None:
        feature_id = features_store.id_of(unit, suggestion.feature) or feature_id
    title, description = draft_text(suggestion)
    return {
        "feature_id": feature_id,
        "discipline_id": source.discipline_id,
        "title": title,
        "description": description,
        "priority": Priority.MEDIUM.value,
        "status": TaskStatus.DRAFT.value,
        "origin": TaskOrigin.AGENT.value,
    }


def _signal_of(unit: UnitOfWork, field: str, signal_id: int, verb: Verb) -> Signal:
    """The signal `signal_id`, which must be a `verb`."""
    signal = store.get(unit, check.positive_int(field, signal_id), for_update=unit.writable)
    if signal is None:
        raise NotFoundError(verb.value, signal_id)
    if signal.verb is not verb:
        raise InvalidValueError(
            field,
            signal_id,
            f"the id of a signal of verb {verb.value!r} (signal {signal_id} has verb {signal.verb.value!r})",
        )
    return signal


def _suggested_draft(unit: UnitOfWork, task_id: int, action: str) -> Task:
    """The task `task_id`, which must be a draft an agent suggested."""
    task = tasks_store.get(unit, check.positive_int("task_id", task_id))
    if task is None:
        raise NotFoundError("task", task_id)
    if task.origin is not TaskOrigin.AGENT:
        raise ConflictError(
            f"task #{task_id} was not suggested by an agent (its origin is {task.origin.value!r}); "
            f"only agent-suggested draft tasks can be {action} here"
        )
    if task.status is not TaskStatus.DRAFT:
        raise ConflictError(
            f"task #{task_id} is not a draft (its status is {task.status.value!r}); "
            f"only agent-suggested draft tasks can be {action}"
        )
    return task


def _review(unit: UnitOfWork, task_id: int, fields: SignalWrite) -> None:
    """Record the human's decision on the suggestion a draft task came from, if it came from one."""
    suggestion = store.suggestion_for_task(unit, task_id)
    if suggestion is None:
        unit.touch(ChangeTopic.INBOX)
        return
    store.update(unit, suggestion.id, fields)
    unit.touch(ChangeTopic.INBOX, suggestion.id)


class InboxService:
    """Questions to answer, suggestions to review and flags to triage.

    Each decision takes `by`, the paired device that made it (recorded with it); None: the desk itself.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self.tasks = TaskService(db)

    def asks(self, open_only: bool = True) -> Listing[Signal]:
        """Open blocking questions of tasks in needs_input, oldest first (or every unanswered one)."""
        with self.db.read() as unit:
            return store.asks(unit, open_only=open_only)

    def answered(self, limit: int = 50) -> Listing[Signal]:
        """The latest answered questions, the latest answer first."""
        with self.db.read() as unit:
            return store.latest_answered_asks(unit, limit)

    def questions(self) -> Listing[Question]:
        """Every unanswered question, oldest first, with its task's latest `partial` (two queries)."""
        with self.db.read() as unit:
            asks = store.asks(unit, open_only=False)
            doing = store.latest_partials(unit, {ask.task_id for ask in asks})
        return Listing((Question(ask, doing.get(ask.task_id)) for ask in asks), asks.errors)

    def signals(self, signal_ids: Collection[int]) -> builtins.list[Signal]:
        """The signals with these ids that still exist (for re-reading what a change touched)."""
        with self.db.read() as unit:
            return builtins.list(store.by_ids(unit, signal_ids).values())

    def suggestions(self, pending_only: bool = True) -> Listing[Signal]:
        """Suggestions, oldest first (only those waiting for review when `pending_only`)."""
        with self.db.read() as unit:
            return store.suggestions(unit, pending_only=pending_only)

    def flags(
        self,
        resolution: FlagResolution | Sequence[FlagResolution] | None = None,
        severity: Severity | Sequence[Severity] | None = None,
        category: FlagCategory | Sequence[FlagCategory] | None = None,
        feature: str | None = None,
    ) -> Listing[Signal]:
        """Flags (each filter one value or a list): blocking, then warning, then info; newest first within."""
        filters = {"resolution": resolution, "severity": severity, "category": category}
        query = check.arguments(FlagQuery, given(filters), "flags")
        resolutions, severities, categories = (
            None if chosen is None else [member.value for member in chosen]
            for chosen in (query.resolution, query.severity, query.category)
        )
        with self.db.read() as unit:
            if feature is not None and features_store.id_of(unit, feature) is None:
                raise NotFoundError("feature", feature, features_store.names(unit))
            return store.flags(
                unit, resolutions=resolutions, severities=severities, categories=categories, feature=feature
            )

    def failed(self) -> Listing[FailedTask]:
        """The failed tasks, each with the reason it failed and its last session, by id; a task whose
        stored text cannot be read is an error in `errors`."""
        with self.db.read() as unit:
            summaries = tasks_store.list_summaries(unit, statuses=[TaskStatus.FAILED.value])
        found: builtins.list[FailedTask] = []
        errors = builtins.list(summaries.errors)
        for summary in summaries:
            try:  # a unit each, so that one task that cannot be read leaves the others
                with self.db.read() as unit:
                    failed = _failed_task(unit, summary.id)
            except StoreDataError as error:
                errors.append(ItemError("task", summary.id, str(error)))
                continue
            if failed is not None:
                found.append(failed)
        return Listing(found, errors)

    def counts(self) -> dict[str, int]:
        """How many unanswered questions (`asks`), pending `suggestions` and open `flags` wait."""
        with self.db.read() as unit:
            return totals_store.inbox_counts(unit).as_dict()

    def answer(self, ask_id: int, text: str, *, by: str | None = None) -> Signal:
        """Answer a question; its task goes back to pending once none of its blocking questions is open."""
        answer = check.value(Text, "text", text)
        maker = check.maker(by)
        with self.db.write() as unit:
            ask = _signal_of(unit, "ask_id", ask_id, Verb.ASK)
            if ask.answered_at is not None:
                raise ConflictError(
                    f"ask {ask_id} was already answered (at {ask.answered_at:%Y-%m-%d %H:%M:%S} UTC); "
                    "an answer is given once — ask a new question through the task's next session"
                )
            answered = store.update(
                unit, ask.id, {"answer": answer, "answered_at": _now(), "decided_by": maker}
            )
            assert answered is not None
            unit.touch(ChangeTopic.INBOX, ask.id)
            status = tasks_store.status_of(unit, ask.task_id)
            if status is TaskStatus.NEEDS_INPUT and store.open_blocking_ask_count(unit, ask.task_id) == 0:
                lifecycle.move(unit, ask.task_id, TaskStatus.PENDING, Mover.INBOX)
            return answered

    def create_suggested_task(self, signal_id: int) -> Task:
        """The draft task of a `new_task` suggestion, created on first call (origin agent)."""
        with self.db.write() as unit:
            suggestion = _signal_of(unit, "signal_id", signal_id, Verb.SUGGEST)
            if suggestion.created_task_id is not None and suggestion.kind == SuggestionKind.NEW_TASK.value:
                existing = tasks_store.get(unit, suggestion.created_task_id)
                assert existing is not None, "created_task_id is cleared when its task is deleted"
                return existing
            refuse_unless_draftable(suggestion)
            facts = store.task_facts(unit, suggestion.task_id)
            assert facts is not None, "a signal's task exists (signals are deleted with it)"
            task = tasks_store.create(unit, draft_fields(unit, suggestion, facts))
            store.update(unit, suggestion.id, {"created_task_id": task.id})
            unit.touch(ChangeTopic.INBOX, suggestion.id)
            return task

    def approve(self, task_id_or_signal: int | Signal, *, by: str | None = None) -> Task:
        """Approve an agent-suggested draft task (by task id, or by its suggestion): it becomes pending."""
        maker = check.maker(by)
        task_id = self._suggested_task_id(task_id_or_signal)
        with self.db.write() as unit:
            _suggested_draft(unit, task_id, "approved")
            task = lifecycle.move(unit, task_id, TaskStatus.PENDING, Mover.INBOX)
            _review(unit, task_id, {"review_decision": ReviewDecision.APPROVED.value, "decided_by": maker})
            return task

    def edit_and_approve(
        self,
        task_id: int,
        title: str | None = None,
        description: str | None = None,
        feature: str | None = None,
        discipline: str | None = None,
        priority: str | None = None,
        acceptance_criteria: Sequence[str] | None = None,
        *,
        by: str | None = None,
    ) -> Task:
        """Change a suggested draft task's fields (those given), then approve it."""
        check.maker(by)  # before the edit: a refused maker changes nothing
        with self.db.read() as unit:
            _suggested_draft(unit, task_id, "edited and approved")
        changes = {
            key: value
            for key, value in {
                "title": title,
                "description": description,
                "feature": feature,
                "discipline": discipline,
                "priority": priority,
                "acceptance_criteria": acceptance_criteria,
            }.items()
            if value is not None
        }
        if changes:
            self.tasks.update(task_id, **changes)
        return self.approve(task_id, by=by)

    def retry(self, task_id: int, note: str = "", *, by: str | None = None) -> Task:
        """Queue a failed task again: stuck count zero, pending, the note (and a device's retry) a comment."""
        maker = check.maker(by)
        with self.db.write() as unit:
            task = self._failed_task(unit, task_id)
            tasks_store.reset_stuck(unit, task.id)
            lifecycle.move(unit, task.id, TaskStatus.PENDING, Mover.INBOX)
            if note.strip() or maker is not None:
                said = f"Retry: {_clip(note.strip())}" if note.strip() else "Retry."
                comments_store.add(unit, task.id, {"author": maker or HUMAN, "body": said})
            retried = tasks_store.get(unit, task.id)
            assert retried is not None
            return retried

    def skip(self, task_id: int, *, by: str | None = None) -> Task:
        """Give up on a failed task: it is skipped (tasks that depend on it stay waiting)."""
        maker = check.maker(by)
        with self.db.write() as unit:
            task = self._failed_task(unit, task_id)
            skipped = lifecycle.move(unit, task.id, TaskStatus.SKIPPED, Mover.INBOX)
            if maker is not None:  # the desk's skip needs no note: a device's says which device it was
                comments_store.add(unit, task.id, {"author": maker, "body": "Skipped."})
                skipped = tasks_store.get(unit, task.id) or skipped
            return skipped

    def _failed_task(self, unit: UnitOfWork, task_id: int) -> Task:
        task = tasks_store.get(unit, check.positive_int("task_id", task_id))
        if task is None:
            raise NotFoundError("task", task_id)
        if task.status is not TaskStatus.FAILED:
            raise ConflictError(
                f"task #{task_id} is {task.status.value}, not failed; only a failed task is retried or "
                "skipped from the inbox"
            )
        return task

    def reject(self, task_id: int, reason: str, *, by: str | None = None) -> Task:
        """Reject an agent-suggested draft task: it is skipped, and the reason is kept as a comment."""
        checked_reason = check.value(Text, "reason", reason)
        maker = check.maker(by)
        with self.db.write() as unit:
            _suggested_draft(unit, task_id, "rejected")
            lifecycle.move(unit, task_id, TaskStatus.SKIPPED, Mover.INBOX)
            comments_store.add(
                unit, task_id, {"author": maker or HUMAN, "body": f"Rejected: {checked_reason}"}
            )
            _review(
                unit,
                task_id,
                {
                    "review_decision": ReviewDecision.REJECTED.value,
                    "review_reason": checked_reason,
                    "decided_by": maker,
                },
            )
            task = tasks_store.get(unit, task_id)
            assert task is not None
            return task

    def acknowledge_suggestion(self, signal_id: int, *, by: str | None = None) -> Signal:
        """Mark a suggestion that is not a new task (split, refactor…) as seen."""
        maker = check.maker(by)
        with self.db.write() as unit:
            suggestion = _signal_of(unit, "signal_id", signal_id, Verb.SUGGEST)
            if suggestion.kind == SuggestionKind.NEW_TASK.value:
                shown = (
                    f"#{suggestion.created_task_id}" if suggestion.created_task_id else "(not created yet)"
                )
                raise ConflictError(
                    f"suggestion {signal_id} proposes a new task; approve or reject its draft task "
                    f"{shown} instead of acknowledging it"
                )
            if suggestion.review_decision is ReviewDecision.ACKNOWLEDGED:
                return suggestion
            acknowledged = store.update(
                unit,
                suggestion.id,
                {"review_decision": ReviewDecision.ACKNOWLEDGED.value, "decided_by": maker},
            )
            assert acknowledged is not None
            unit.touch(ChangeTopic.INBOX, suggestion.id)
            return acknowledged

    def triage(self, flag_id: int, resolution: Triage, *, by: str | None = None) -> TriageResult:
        """Settle a flag: acknowledged, resolved, dismissed, or convert (into a pending task)."""
        resolution = check.arguments(Triaging, {"resolution": resolution}, "triage").resolution
        maker = check.maker(by)
        with self.db.write() as unit:
            flag = _signal_of(unit, "flag_id", flag_id, Verb.FLAG)
            if flag.resolution is FlagResolution.CONVERTED:
                raise ConflictError(
                    f"flag {flag_id} was already converted into task #{flag.created_task_id}; "
                    "work on that task instead"
                )
            fields: SignalWrite = {"resolved_at": _now(), "decided_by": maker}
            task: Task | None = None
            if resolution is Triage.CONVERT:
                task = self._task_from_flag(unit, flag)
                fields["resolution"], fields["created_task_id"] = FlagResolution.CONVERTED.value, task.id
            else:
                fields["resolution"] = resolution.value
            triaged = store.update(unit, flag.id, fields)
            assert triaged is not None
            unit.touch(ChangeTopic.INBOX, flag.id)
            return TriageResult(flag=triaged, task=task)

    def convert_flag(self, flag_id: int, *, by: str | None = None, **task: Any) -> TriageResult:
        """Make a task of a flag from the person's fields (status pending or draft); the flag is converted."""
        status = task.get("status", TaskStatus.PENDING.value)
        if status not in (TaskStatus.PENDING.value, TaskStatus.DRAFT.value):
            raise InvalidValueError("status", status, "pending or draft")
        maker = check.maker(by)
        with self.db.read() as unit:
            self._unconverted_flag(unit, flag_id)
        created = self.tasks.create(**task, origin=TaskOrigin.HUMAN)
        try:
            with self.db.write() as unit:
                flag = self._unconverted_flag(unit, flag_id)
                fields: SignalWrite = {
                    "resolved_at": _now(),
                    "resolution": FlagResolution.CONVERTED.value,
                    "created_task_id": created.id,
                    "decided_by": maker,
                }
                triaged = store.update(unit, flag.id, fields)
                assert triaged is not None
                unit.touch(ChangeTopic.INBOX, flag.id)
        except ConflictError:
            self.tasks.delete(created.id)  # converted meanwhile elsewhere: keep one task per flag
            raise
        return TriageResult(flag=triaged, task=created)

    def _unconverted_flag(self, unit: UnitOfWork, flag_id: int) -> Signal:
        flag = _signal_of(unit, "flag_id", flag_id, Verb.FLAG)
        if flag.resolution is FlagResolution.CONVERTED:
            raise ConflictError(
                f"flag {flag_id} was already converted into task #{flag.created_task_id}; "
                "work on that task instead"
            )
        return flag

    def _task_from_flag(self, unit: UnitOfWork, flag: Signal) -> Task:
        facts = store.task_facts(unit, flag.task_id)
        assert facts is not None, "a signal's task exists (signals are deleted with it)"
        what = flag.what or ""
        blocking = flag.severity == Severity.BLOCKING.value
        details = (
            f"Flagged on task #{facts.id} ({facts.title}) — severity: {flag.severity}, "
            f"category: {flag.category}."
        )
        return tasks_store.create(
            unit,
            {
                "feature_id": facts.feature_id,
                "discipline_id": facts.discipline_id,
                "title": title_from(what),
                "description": _clip(f"{what}\n\n{details}"),
                "priority": (Priority.HIGH if blocking else Priority.MEDIUM).value,
                "status": TaskStatus.PENDING.value,
                "origin": TaskOrigin.HUMAN.value,
            },
        )

    def _suggested_task_id(self, target: int | Signal) -> int:
        if not isinstance(target, Signal):
            return target
        if target.verb is not Verb.SUGGEST:
            raise InvalidValueError(
                "suggestion",
                target.id,
                f"a signal of verb 'suggest' (signal {target.id} has verb {target.verb.value!r})",
            )
        if target.created_task_id is not None:
            return target.created_task_id
        return self.create_suggested_task(target.id).id
