"""How a loop run went (seed 003's summary), and what an agent said last, from the records a run leaves.

Read from the database and the session's own log summary, so that any process can tell it of any run.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.domain.loop_results import LoopSummary, exit_code
from ralph_desk.domain.records import AgentSession, LoopRun
from ralph_desk.domain.tools import MAX_TEXT
from ralph_desk.project import ProjectError, ProjectPaths, contained
from ralph_desk.services.container import Services
from ralph_desk.services.errors import NotFoundError

log = logging.getLogger("ralph_desk.loop")

RUN_SESSIONS = 1_000
"""Most sessions of one run read (the sessions service's own limit)."""
WAITING = frozenset({TaskStatus.NEEDS_INPUT, TaskStatus.IN_REVIEW, TaskStatus.BLOCKED})
ENDED = frozenset({"completed", "stopped", "failed"})


def loop_summary(services: Services, run: LoopRun, log_path: str | None = None) -> LoopSummary:
    """The summary of loop run `run`: its sessions, the tasks they worked on as they are now, its files."""
    sessions = services.sessions.list(loop_run_id=run.id, limit=RUN_SESSIONS)
    statuses: list[TaskStatus] = []
    for task_id in {session.task_id for session in sessions if session.task_id is not None}:
        try:
            statuses.append(services.tasks.get(task_id).status)
        except NotFoundError:  # deleted since: it counts for nothing
            continue
    undone = [s for s in sessions if s.outcome == SessionOutcome.REJECTED.value]
    kept = [s for s in sessions if s.outcome != SessionOutcome.REJECTED.value]
    waiting = sum(1 for status in statuses if status in WAITING)
    ended = run.ended_at is not None or run.state in ENDED
    return LoopSummary(
        loop_id=run.id,
        status=run.state,
        stop_reason=run.stop_reason,
        sessions_run=len(sessions),
        tasks_completed=statuses.count(TaskStatus.DONE),
        tasks_failed=statuses.count(TaskStatus.FAILED),
        tasks_waiting=waiting,
        exit_code=exit_code(run.state, waiting > 0) if ended else None,
        files_changed=_files(kept),
        files_put_aside=_files(undone),
        cost_usd=round(run.cost_usd, 6),
        log_path=log_path,
    )


def _files(sessions: list[AgentSession]) -> list[str]:
    return sorted({path for session in sessions for path in session.changed_files})


def final_text(paths: ProjectPaths, session: AgentSession) -> str | None:
    """The agent's last words, from the JSON summary beside its transcript (in the project's logs only)."""
    if not session.transcript_path:
        return None
    summary = Path(session.transcript_path).with_suffix(".json")
    # A path from the database is read only inside the logs folder: a shared database names no other file.
    if not summary.is_absolute() or summary.parent != paths.logs_dir:
        return None
    try:
        document = json.loads(contained.read_text(paths.root, summary))
    except (OSError, ProjectError, ValueError) as error:
        log.debug("no final text for session %s: %s", session.id, error)
        return None
    stream = document.get("stream") if isinstance(document, dict) else None
    text = stream.get("result_text") if isinstance(stream, dict) else None
    return text[:MAX_TEXT] if isinstance(text, str) else None
