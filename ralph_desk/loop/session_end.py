"""After a session's agent: what it changed, its commit, the decision and the review gate, its record."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from ralph_desk.domain.checks import useful_tail
from ralph_desk.domain.enums import FlagCategory, SessionOutcome, Severity, TaskStatus, Verb
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.postprocess import Decision, decide
from ralph_desk.domain.tools import MAX_TEXT
from ralph_desk.loop import branches, check_gate, git, guard
from ralph_desk.loop.apply import apply_decision
from ralph_desk.loop.fingerprint import project_fingerprint
from ralph_desk.loop.model import FINISHED, SessionPlan, StreamSummary
from ralph_desk.loop.run_parts import Attempt, RunParts
from ralph_desk.loop.tasks import through

log = logging.getLogger("ralph_desk.loop")

MAX_PATHS_NAMED = 20
STDERR_CHARS = 4000


def crash_of(attempt: Attempt, stopped: bool) -> str | None:
    """Why the agent's process failed: its exit code and the last lines of its standard error (None when it
    exited cleanly, timed out, met a rate limit or was stopped by the person)."""
    code = attempt.exit_code
    if not code or attempt.timed_out or stopped or attempt.summary.rate_limited:
        return None
    what = f"the agent exited with code {code}" if code > 0 else f"the agent was ended by signal {-code}"
    said = "\n".join(attempt.stderr_tail).strip()
    if said:
        what += f"; its standard error ended with:\n{useful_tail(said, STDERR_CHARS)}"
    else:
        what += " and wrote nothing on its standard error"
    return attempt.transcript.redacted(what)


@dataclass
class SessionResult:
    """What one agent session came to."""

    plan: SessionPlan
    summary: StreamSummary
    exit_code: int | None
    decision: Decision | None
    outcome: SessionOutcome
    changed_files: list[str] = field(default_factory=list)
    timed_out: bool = False
    stopped: bool = False


@dataclass(frozen=True)
class Ending:
    """How a session ended once its agent had: the result, the task branch's tip, why its work was lost."""

    result: SessionResult
    head_after: str | None
    lost: str | None = None


async def conclude(parts: RunParts, attempt: Attempt) -> Ending:
    """After the agent: what it changed, its commit on the task branch, the decision, the review gate."""
    services, plan, work = parts.services, attempt.plan, attempt.prepared
    assert attempt.git_before is not None
    try:
        # Through the git folder the desk made: an agent process still running cannot re-aim `.git` now.
        place = await through(branches.git_place, services, work)
        git_after = await asyncio.to_thread(git.state, place)
        changed = await asyncio.to_thread(git.changed_files, place, attempt.git_before, git_after)
        escaped = (
            guard.outside(parts.settings.allowed_paths, changed)
            if plan.task and not attempt.read_only
            else []
        )
        if escaped:
            await asyncio.to_thread(put_aside, parts, attempt, escaped, place)
        # The commit comes before the decision: a crash between them leaves the work on the task branch.
        async with parts.git:
            committed = await asyncio.to_thread(branches.commit, services, work, plan, not attempt.read_only)
    except branches.UNCOMMITTABLE as error:  # the session ends; its task, the siblings and the loop go on
        log.warning("session %s: its work was not committed: %s", plan.session_id, error)
        return await through(conclude_lost, parts, attempt, branches.not_committed(error))
    parts.state.event_loop = asyncio.get_running_loop()  # the checks' live output comes back through it
    tip = committed.after if committed is not None else git_after.head
    result = await asyncio.to_thread(
        post_process, parts, attempt, changed, attempt.fingerprint_before, None, tip
    )
    stashed = (
        committed.stashed
        if committed is not None
        else attempt.read_only
        and bool(changed)
        and await asyncio.to_thread(
            git.stash_changes,
            place,
            f"ralph-desk: session {plan.session_id} made edits while edits were not allowed",
        )
    )
    if stashed:
        result.outcome = SessionOutcome.REJECTED
        if plan.task and result.decision and result.decision.status in FINISHED:
            services.tasks.move(plan.task.id, TaskStatus.PENDING, Mover.LOOP)
    elif result.decision is not None and plan.task is not None:
        async with parts.git:
            await asyncio.to_thread(
                branches.after_review_gate, services, parts.review, plan, result.decision, committed
            )
    return Ending(result, committed.after if committed is not None else git_after.head)


def conclude_lost(parts: RunParts, attempt: Attempt, lost: branches.Lost) -> Ending:
    """Off the event loop: a session whose task was deleted, or whose worktree was wrecked, under it.

    Nothing is committed. A deleted task's session only ends; a wrecked worktree is flagged, and its
    task goes back to `pending` (a `done` finished nothing a person could review).
    """
    plan, summary = attempt.plan, attempt.summary
    if lost.task_deleted or plan.task is None:
        stopped = parts.state.stop_requested
        outcome = SessionOutcome.STOPPED
        result = SessionResult(
            plan, summary, attempt.exit_code, None, outcome, [], attempt.timed_out, stopped
        )
        return Ending(result, None, lost.reason)
    branches.flag_lost(parts.services, plan, lost)
    result = post_process(parts, attempt, [], None, lost)
    return Ending(result, branches.tip(parts.services, attempt.prepared), lost.reason)


def post_process(
    parts: RunParts,
    attempt: Attempt,
    changed: list[str],
    fingerprint_before: str | None,
    lost: branches.Lost | None = None,
    tip: str | None = None,
) -> SessionResult:
    """Off the event loop: decide from the session's signals (and its stagnation) and apply the decision."""
    services, plan, summary = parts.services, attempt.plan, attempt.summary
    exit_code, timed_out = attempt.exit_code, attempt.timed_out
    if plan.task is None:
        return SessionResult(plan, summary, exit_code, None, SessionOutcome.DONE, changed, timed_out)
    task = services.tasks.get(plan.task.id)
    signals = services.signals.for_session(plan.session_id)
    stagnant = (
        fingerprint_before is not None
        and not changed
        and (project_fingerprint(services, attempt.prepared.root) == fingerprint_before)
    )
    stopped = parts.state.stop_requested
    decision = decide(
        signals,
        stuck_count=task.stuck_count,
        stuck_threshold=parts.settings.stuck_threshold,
        stopped_by_human=stopped,
        rate_limited=summary.rate_limited,
        stagnant=stagnant,
    )
    if lost is not None:
        decision = branches.requeue(branches.gate(services, attempt.prepared, plan, decision), lost)
    else:
        decision = check_gate.after_done(parts, attempt, decision, tip)
        decision = branches.gate(services, attempt.prepared, plan, decision)
    apply_decision(services, plan.task.id, plan.session_id, decision)
    return SessionResult(
        plan, summary, exit_code, decision, decision.outcome, changed, timed_out, stopped=stopped
    )


def put_aside(parts: RunParts, attempt: Attempt, paths: list[str], place: git.Place) -> None:
    """Edits outside `allowed_paths` leave the tree (kept, never lost) and become a blocking flag."""
    plan, transcript = attempt.plan, attempt.transcript
    assert plan.task is not None and attempt.git_before is not None
    services = parts.services
    kept = guard.put_aside(place, services.paths.ralph, plan.session_id, paths, attempt.git_before)
    shown = ", ".join(paths[:MAX_PATHS_NAMED]) + (" …" if len(paths) > MAX_PATHS_NAMED else "")
    what = (
        f"The session edited files outside allowed_paths ({', '.join(parts.settings.allowed_paths)}): "
        f"{shown}. They were put aside in {kept.where}."
    )
    if kept.left_in_tree:
        left = ", ".join(kept.left_in_tree)
        what += f" Still in the tree (committed by the session, or no older version outside git): {left}."
    what = what[:MAX_TEXT]
    transcript.note(what)
    services.signals.record(
        plan.task.id,
        plan.session_id,
        Verb.FLAG,
        what=what,
        severity=Severity.BLOCKING,
        category=FlagCategory.SECURITY,
    )


def task_gone(parts: RunParts, plan: SessionPlan) -> bool:
    """Whether the session's task was deleted (a failed lookup says nothing: False)."""
    try:
        return branches.deleted_meanwhile(parts.services, plan)
    except Exception as error:
        log.warning("could not tell whether the task of session %s still exists: %s", plan.session_id, error)
        return False


def record_end(parts: RunParts, attempt: Attempt, outcome: str, **fields: object) -> None:
    """Off the event loop: close the transcript and record how the session ended."""
    summary, exit_code = attempt.summary, attempt.exit_code
    transcript_path = attempt.transcript.close(summary=summary, exit_code=exit_code, outcome=outcome)
    parts.services.sessions.finish_session(
        attempt.plan.session_id,
        exit_code=exit_code,
        outcome=outcome,
        cost_usd=summary.cost_usd,
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        turns=summary.turns,
        transcript_path=str(transcript_path),
        **fields,
    )
