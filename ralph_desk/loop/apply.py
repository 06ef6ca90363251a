"""Carry out a post-processing decision through the services, and let finished upstream work unblock tasks.

`apply_decision` writes a session's outcome — dependencies, stuck count, status, draft tasks,
learnings, and the learnings.txt and progress.txt entries — in one transaction
(`SignalService.settle`, whose write lock also orders the file appends), which publishes one change
notice per topic. It is not idempotent: the stuck count, learning hit counts and progress.txt would
count a session twice, so the runner calls it exactly once per session.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ralph_desk.domain.enums import BlockerKind, SessionOutcome, TaskStatus, Verb
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.postprocess import NO_CLOSING_SIGNAL, Blocker, Decision, find_task_reference
from ralph_desk.domain.records import FeatureLearning, Signal, Task, TaskSummary
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ServiceError
from ralph_desk.services.settling import Settlement, UpstreamLink

log = logging.getLogger("ralph_desk.loop")

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
    links: list[UpstreamLink] = []
    if decision.upstream_blockers:
        task = services.tasks.get(task_id)
        links = [
            UpstreamLink(blocker, *resolve_upstream(services, task, blocker))
            for blocker in decision.upstream_blockers
        ]
    read = (
        *decision.blocking_ask_ids,
        *(() if decision.closing_signal_id is None else (decision.closing_signal_id,)),
    )
    settled = services.settling.settle(
        task_id,
        session_id,
        Settlement(
            status=decision.status,
            count_stuck=decision.counts_as_stuck,
            links=links,
            suggestion_ids=decision.suggestion_ids,
            learning_ids=(*decision.learning_ids.feature, *decision.learning_ids.project),
            read_ids=read,
            # A repeated project learning only raises its hit count: learnings.txt gets it once.
            project_learning_ids=decision.learning_ids.project,
            progress=lambda task, signals: progress_line(task, decision, signals),
        ),
    )
    line = settled.progress_line
    assert line is not None
    for note in settled.notes:
        log.info("task #%s, session %s: %s", task_id, session_id, note)
    return AppliedOutcome(
        task=settled.task,
        added_dependencies=settled.added_dependencies,
        unresolved_blockers=settled.unresolved_blockers,
        created_task_ids=settled.created_task_ids,
        feature_learnings=tuple(stored.learning for stored in settled.learnings),
        notes=settled.notes,
        progress_line=line,
    )


def unblock_ready(services: Services) -> list[int]:
    """Blocked tasks whose blockers were all upstream tasks, now all done, go back to pending; their ids.

    A task blocked on something external (or on an upstream text no dependency stands for, or by a
    person without any `blocked` signal) stays blocked until a person moves it.
    """
    blocked = services.tasks.list(status=TaskStatus.BLOCKED)
    if not blocked:
        return []
    done = {summary.id for summary in services.tasks.list(status=TaskStatus.DONE)}
    unblocked: list[int] = []
    for summary in blocked:
        task = services.tasks.get(summary.id)
        if task.depends_on and set(task.depends_on) <= done and _upstream_only(services, task):
            services.tasks.move(task.id, TaskStatus.PENDING, Mover.LOOP)
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


def _upstream_only(services: Services, task: Task) -> bool:
    """Whether the blockers of the session that blocked `task` are all upstream tasks it now depends on."""
    signals = services.signals.for_task(task.id)
    if signals.errors:  # a signal that cannot be read may be a blocker that still holds
        return False
    blockers = [signal for signal in signals if signal.verb is Verb.BLOCKED]
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
    if status is TaskStatus.IN_REVIEW:
        return "done, waiting in review", said
    if decision.outcome is SessionOutcome.STOPPED:
        return "stopped by the human, re-queued", said
    if decision.outcome is SessionOutcome.RATE_LIMITED:
        return "rate-limited, re-queued", said
    if decision.outcome is SessionOutcome.CHECKS_FAILED:
        head = "failed" if status is TaskStatus.FAILED else "re-queued"
        return f"done, but its checks failed: {head}, stuck count {decision.stuck_count}", (
            decision.reasons[-1]
        )
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
