"""Carry out a post-processing decision through the services, and let finished upstream work unblock tasks.

`apply_decision` is one service call per step — dependencies, stuck count, status, draft tasks,
learnings, the progress line — so each step publishes its own change notice. It is not idempotent:
the stuck count, learning hit counts and progress.txt would count a session twice, so the runner
calls it exactly once per session.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ralph_desk.domain.enums import BlockerKind, LearningScope, SessionOutcome, TaskStatus, Verb
from ralph_desk.domain.postprocess import NO_CLOSING_SIGNAL, Blocker, Decision, find_task_reference
from ralph_desk.domain.records import FeatureLearning, Signal, Task, TaskSummary
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ServiceError

log = logging.getLogger("ralph_desk.loop")

AUTHOR = "ralph-desk"
DETAIL_LIMIT = 300
ELLIPSIS = "…"

_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"|`([^`]+)`|“([^”]+)”|‘([^’]+)’")


@dataclass(frozen=True)
class AppliedOutcome:
    """What applying a decision changed, and what it could not do (with why)."""

    task: Task
    added_dependencies: tuple[int, ...]
    unresolved_blockers: tuple[Blocker, ...]
    created_task_ids: tuple[int, ...]
    feature_learnings: tuple[FeatureLearning, ...]
    notes: tuple[str, ...]
    progress_line: str


def apply_decision(services: Services, task_id: int, session_id: str, decision: Decision) -> AppliedOutcome:
    """Make the task's status, stuck count, dependencies, drafts, learnings and progress say `decision`."""
    task = services.tasks.get(task_id)
    signals = {signal.id: signal for signal in services.signals.for_session(session_id)}
    notes: list[str] = []
    added, unresolved = _add_dependencies(services, task, decision.upstream_blockers, notes)
    if decision.counts_as_stuck:
        services.tasks.increment_stuck(task_id)
    services.tasks.set_status(task_id, decision.status.value)
    created = _create_drafts(services, decision.suggestion_ids, notes)
    learnings = _store_learnings(services, task, decision, signals, notes)
    line = progress_line(task, decision, signals)
    services.state_files.append_progress(line)
    for note in notes:
        log.info("task #%s, session %s: %s", task_id, session_id, note)
    return AppliedOutcome(
        task=services.tasks.get(task_id),
        added_dependencies=tuple(added),
        unresolved_blockers=tuple(unresolved),
        created_task_ids=tuple(created),
        feature_learnings=tuple(learnings),
        notes=tuple(notes),
        progress_line=line,
    )


def unblock_ready(services: Services) -> list[int]:
    """Blocked tasks whose blockers were all upstream tasks, now all done, go back to pending; their ids.

    A task blocked on something external (or on an upstream text no dependency stands for, or by a
    person without any `blocked` signal) stays blocked until a person moves it.
    """
    blocked = services.tasks.list(status=TaskStatus.BLOCKED.value)
    if not blocked:
        return []
    done = {summary.id for summary in services.tasks.list(status=TaskStatus.DONE.value)}
    unblocked: list[int] = []
    for summary in blocked:
        task = services.tasks.get(summary.id)
        if task.depends_on and set(task.depends_on) <= done and _upstream_only(services, task):
            services.tasks.set_status(task.id, TaskStatus.PENDING.value)
            log.info("task #%s unblocked: its upstream tasks are done", task.id)
            unblocked.append(task.id)
    return unblocked


def resolve_upstream(services: Services, task: Task, blocker: Blocker) -> tuple[int | None, str]:
    """The task an upstream blocker names (an open one other than `task`), or None — and why, in words."""
    reference = find_task_reference(blocker.on) or find_task_reference(blocker.detail or "")
    if reference is not None:
        return _referenced(services, task, reference)
    for query in _queries(blocker.on):
        matches = [
            match
            for match in _title_matches(services, query)
            if match.id != task.id and match.status is not TaskStatus.DONE
        ]
        if len(matches) == 1:
            return matches[0].id, f"the only open task whose title contains {query!r}"
        if len(matches) > 1:
            shown = ", ".join(f"#{match.id}" for match in matches[:10])
            return None, f"{len(matches)} open tasks have {query!r} in their title ({shown})"
    return None, f"no open task has {blocker.on!r} in its title"


def progress_line(task: Task, decision: Decision, signals: Mapping[int, Signal]) -> str:
    """The one line progress.txt gets for a session: `task #7 'Title': partial — remaining: …`."""
    closing = signals.get(decision.closing_signal_id) if decision.closing_signal_id is not None else None
    head, detail = _progress_parts(decision, closing, signals)
    text = f"task #{task.id} '{_one_line(task.title)}': {head}"
    return f"{text} — {_clip(_one_line(detail))}" if detail else text


def _referenced(services: Services, task: Task, reference: int) -> tuple[int | None, str]:
    if reference == task.id:
        return None, f"#{reference} is the blocked task itself"
    try:
        upstream = services.tasks.get(reference)
    except ServiceError:
        return None, f"there is no task #{reference}"
    if upstream.status is TaskStatus.DONE:
        return None, f"task #{reference} is already done, so waiting for it would unblock nothing"
    return upstream.id, f"named as #{reference}"


def _queries(on: str) -> list[str]:
    """The blocker text, then each quoted phrase in it."""
    queries = [on.strip()]
    for match in _QUOTED.finditer(on):
        phrase = next(group for group in match.groups() if group is not None).strip()
        if phrase and phrase not in queries:
            queries.append(phrase)
    return [query for query in queries if query]


def _title_matches(services: Services, query: str) -> list[TaskSummary]:
    """Tasks whose title contains `query`, any case."""
    try:
        found = services.tasks.search(query)
    except ServiceError:
        return []
    folded = query.casefold()
    return [summary for summary in found if folded in summary.title.casefold()]


def _add_dependencies(
    services: Services, task: Task, blockers: Sequence[Blocker], notes: list[str]
) -> tuple[list[int], list[Blocker]]:
    """A dependency per resolvable upstream blocker; the others stay as external blockers."""
    added: list[int] = []
    unresolved: list[Blocker] = []
    for blocker in blockers:
        upstream_id, why = resolve_upstream(services, task, blocker)
        problem = why if upstream_id is None else _try_dependency(services, task.id, upstream_id)
        if problem is None and upstream_id is not None:
            added.append(upstream_id)
            continue
        note = (
            f"blocked on {blocker.on!r} (signal {blocker.signal_id}): no dependency added — {problem}; "
            "left for a person to resolve, like an external blocker"
        )
        notes.append(note)
        unresolved.append(blocker)
        _comment(services, task.id, note, notes)
    return added, unresolved


def _try_dependency(services: Services, task_id: int, upstream_id: int) -> str | None:
    try:
        services.tasks.add_dependency(task_id, upstream_id)
    except ServiceError as error:
        return str(error)
    return None


def _comment(services: Services, task_id: int, body: str, notes: list[str]) -> None:
    try:
        services.comments.add(task_id, AUTHOR, body)
    except ServiceError as error:
        notes.append(f"could not comment on task #{task_id}: {error}")


def _create_drafts(services: Services, suggestion_ids: Sequence[int], notes: list[str]) -> list[int]:
    created: list[int] = []
    for suggestion_id in suggestion_ids:
        try:
            created.append(services.inbox.create_suggested_task(suggestion_id).id)
        except ServiceError as error:
            notes.append(f"suggestion {suggestion_id} made no draft task: {error}")
    return created


def _store_learnings(
    services: Services, task: Task, decision: Decision, signals: Mapping[int, Signal], notes: list[str]
) -> list[FeatureLearning]:
    """Feature and project learnings go to the task's feature; new project ones also to learnings.txt.

    Task-scoped learnings stay as signals: the prompt builder reads them when the task is re-attempted.
    """
    stored: list[FeatureLearning] = []
    scoped = [
        (scope, i)
        for scope in (LearningScope.FEATURE, LearningScope.PROJECT)
        for i in decision.learning_ids.of(scope)
    ]
    for scope, signal_id in scoped:
        signal = signals.get(signal_id)
        if signal is None or not signal.text:
            notes.append(f"learning {signal_id} is not a learning of this session with a text; skipped")
            continue
        try:
            learning, is_new = services.features.append_learning(
                task.feature, signal.text, source="agent", reason=signal.rationale, task_id=task.id
            )
        except ServiceError as error:
            notes.append(f"learning {signal_id} was not stored on feature {task.feature!r}: {error}")
            continue
        stored.append(learning)
        # A repeated project learning only raises its hit count: learnings.txt gets it once.
        if scope is LearningScope.PROJECT and is_new:
            services.state_files.append_learning(signal.text)
    return stored


def _upstream_only(services: Services, task: Task) -> bool:
    """Whether the blockers of the session that blocked `task` are all upstream tasks it now depends on."""
    blockers = [signal for signal in services.signals.for_task(task.id) if signal.verb is Verb.BLOCKED]
    if not blockers:
        return False
    session = blockers[-1].session_id
    latest = [signal for signal in blockers if signal.session_id == session]
    return all(_explained_by_dependency(services, task, signal) for signal in latest)


def _explained_by_dependency(services: Services, task: Task, signal: Signal) -> bool:
    if signal.kind != BlockerKind.UPSTREAM_TASK.value:
        return False
    on = signal.on or ""
    reference = find_task_reference(on) or find_task_reference(signal.detail or "")
    if reference is not None:
        return reference in task.depends_on
    return any(
        match.id in task.depends_on
        for query in _queries(on)
        for match in _title_matches(services, query)
        if match.id != task.id
    )


def _progress_parts(
    decision: Decision, closing: Signal | None, signals: Mapping[int, Signal]
) -> tuple[str, str]:
    """The outcome in a few words, and the agent's own words for it."""
    said = _said(decision, closing)
    status = decision.status
    if status is TaskStatus.DONE:
        return "done", said
    if decision.outcome is SessionOutcome.STOPPED:
        return "stopped by the human, re-queued", said
    if decision.outcome is SessionOutcome.RATE_LIMITED:
        return "rate-limited, re-queued", said
    verb = decision.closing_verb.value if decision.closing_verb else "no closing verb"
    if status is TaskStatus.NEEDS_INPUT:
        questions = [signals[i].question or "" for i in decision.blocking_ask_ids if i in signals]
        return f"{verb}, needs input", ("asked: " + " | ".join(questions)) if questions else said
    if status is TaskStatus.BLOCKED:
        blockers = (*decision.upstream_blockers, *decision.external_blockers)
        return f"{verb}, blocked", "on: " + " | ".join(blocker.on for blocker in blockers)
    if decision.counts_as_stuck:
        head = "failed" if status is TaskStatus.FAILED else "stuck"
        if decision.closing_verb is not Verb.STUCK:
            head += f" ({verb}, changed nothing)" if decision.closing_verb else " (no closing verb)"
        return f"{head}, stuck count {decision.stuck_count}", said
    return "partial", said


def _said(decision: Decision, closing: Signal | None) -> str:
    if decision.inferred:
        return NO_CLOSING_SIGNAL
    if closing is None:
        return ""
    if closing.verb is Verb.PARTIAL:
        return f"remaining: {closing.remaining or ''}"
    if closing.verb is Verb.STUCK:
        return closing.reason or ""
    return closing.summary or ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS
