"""When nothing is runnable: is all work done, or what waits for a person and the command that answers it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.services.container import Services

PROG = "ralph-desk"
MAX_LISTED = 10
# Tasks in these states are finished business: a loop with only these left has nothing more to do.
SETTLED = frozenset({TaskStatus.DONE, TaskStatus.SKIPPED})


@dataclass(frozen=True)
class IdleReport:
    """What an idle loop leaves behind: one line per thing a person must do (none when all is done)."""

    waiting: tuple[str, ...]

    @property
    def all_done(self) -> bool:
        """Nothing waits for a person: every task is settled."""
        return not self.waiting


def idle_report(services: Services) -> IdleReport:
    """What waits for a person, each with the command that answers it (database reads only)."""
    root = shlex.quote(str(services.paths.root))
    lines: list[str] = []
    for ask in services.inbox.asks(open_only=True)[:MAX_LISTED]:
        lines.append(
            f"question #{ask.id} of task #{ask.task_id}: {_clip(ask.question)} — answer it with "
            f"`{PROG} answer --root {root} {ask.id} TEXT`"
        )
    counts = services.tasks.count_by_status()
    for task in services.tasks.list(status=TaskStatus.DRAFT.value, limit=MAX_LISTED):
        lines.append(
            f"suggested task #{task.id}: {_clip(task.title)} — `{PROG} approve --root {root} {task.id}` "
            f"or `{PROG} reject --root {root} {task.id} --reason R`"
        )
    for task in services.tasks.list(status=TaskStatus.BLOCKED.value, limit=MAX_LISTED):
        lines.append(f"task #{task.id} is blocked: {_clip(task.title)} — see `{PROG} inbox --root {root}`")
    for task in services.tasks.list(status=TaskStatus.IN_REVIEW.value, limit=MAX_LISTED):
        lines.append(
            f"task #{task.id} waits for review: {_clip(task.title)} — `{PROG} review show --root {root} "
            f"{task.id}`, then `review approve`, `review changes` or `review discard`"
        )
    for task in services.tasks.list(status=TaskStatus.FAILED.value, limit=MAX_LISTED):
        lines.append(f"task #{task.id} failed: {_clip(task.title)} — set it back to pending to retry it")
    listed = (
        TaskStatus.NEEDS_INPUT,
        TaskStatus.DRAFT,
        TaskStatus.BLOCKED,
        TaskStatus.IN_REVIEW,
        TaskStatus.FAILED,
    )
    beyond = sum(max(0, counts[status.value] - MAX_LISTED) for status in listed)
    others = sum(count for name, count in counts.items() if TaskStatus(name) not in {*SETTLED, *listed})
    if beyond or others:
        lines.append(
            f"{beyond + others} more task(s) not done (pending on unfinished dependencies, or beyond this "
            f"list) — see `{PROG} status --root {root}`"
        )
    return IdleReport(tuple(lines))


def _clip(text: str | None, limit: int = 80) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
