"""The checks gate after `done` (DESIGN §13): the project's checks run in the task's worktree, and only a
done whose required checks pass goes on to review; the runs are kept as the task's evidence."""

from __future__ import annotations

from dataclasses import replace

from ralph_desk.domain import checks
from ralph_desk.domain.checks import CheckPurpose, CheckRun
from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.domain.postprocess import Decision
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.run_parts import Attempt, RunParts

STOPPED_REASON = "the loop was stopped while the checks ran: re-queued as pending, not counted as stuck"


def after_done(parts: RunParts, attempt: Attempt, decision: Decision, commit: str | None) -> Decision:
    """Off the event loop: run the checks on a `done` and let their result decide the task's way on."""
    plan, settings = attempt.plan, parts.settings
    if (
        not settings.checks
        or plan.task is None
        or attempt.read_only
        or decision.status is not TaskStatus.DONE
    ):
        return decision
    state = parts.state
    session_id = plan.session_id

    def heard(name: str, text: str) -> None:
        state.emit_from_thread(LiveEvent(EventKind.CHECK_OUTPUT, text, {"check": name}, session_id))

    attempt.transcript.note(f"done: running the checks ({', '.join(c.name for c in settings.checks)})")
    state.emit_from_thread(
        LiveEvent(EventKind.CHECK_STARTED, "", {"checks": [c.name for c in settings.checks]}, session_id)
    )
    runs = parts.services.checks.run(
        settings.checks,
        attempt.prepared.root,
        purpose=CheckPurpose.SESSION,
        task_id=plan.task.id,
        session_id=session_id,
        commit=commit,
        stop=state.checks_stop,
        on_output=heard,
    )
    attempt.transcript.note(summary(runs))
    state.emit_from_thread(
        LiveEvent(EventKind.CHECK_ENDED, summary(runs), {"passed": _passed(runs)}, session_id)
    )
    if state.checks_stop.requested:
        return replace(
            decision,
            status=TaskStatus.PENDING,
            outcome=SessionOutcome.STOPPED,
            reasons=(*decision.reasons, STOPPED_REASON),
        )
    return checks.gate(decision, checks.required_failures(runs), settings.stuck_threshold)


def summary(runs: list[CheckRun]) -> str:
    """One line: each check's result and time."""
    return "checks: " + ", ".join(
        f"{run.name} {run.status.value} ({run.duration_s or 0:.1f} s)" for run in runs
    )


def _passed(runs: list[CheckRun]) -> bool:
    return not checks.required_failures(runs)
