"""When nothing is runnable: is all work done, or what waits for a person and the command that answers it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.records import TaskSummary
from ralph_desk.services.container import Services

PROG = "ralph-desk"
MAX_LISTED = 10
# Tasks in these states are finished business: a loop with only these left has nothing more to do.
SETTLED = frozenset({TaskStatus.DONE, TaskStatus.SKIPPED})


@dataclass(frozen=True)
class IdleReport:
    """What an idle loop leaves behind: one line per thing a person must do, and the work other runners do."""

    waiting: tuple[str, ...]
    elsewhere: tuple[str, ...] = ()
    counted: tuple[str, ...] = ()  # what waits, counted by kind ("2 questions to answer")

    @property
    def all_done(self) -> bool:
        """Every task is settled: nothing waits for a person and no other runner is working."""
        return not self.waiting and not self.elsewhere

    @property
    def reason(self) -> str:
        """Why nothing runs, in one line: what waits, counted by kind."""
        return f"nothing is runnable — waiting for {' · '.join(self.counted) or 'new tasks'}"


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
    running, queued = _running_elsewhere(services)
    for task in services.tasks.list(status=TaskStatus.DRAFT, limit=MAX_LISTED):
        lines.append(
            f"suggested task #{task.id}: {_clip(task.title)} — `{PROG} approve --root {root} {task.id}` "
            f"or `{PROG} reject --root {root} {task.id} --reason R`"
        )
    for task in services.tasks.list(status=TaskStatus.BLOCKED, limit=MAX_LISTED):
        lines.append(f"task #{task.id} is blocked: {_clip(task.title)} — see `{PROG} inbox --root {root}`")
    to_review, merging = _in_review(services)
    for task, refused in to_review[:MAX_LISTED]:
        if refused is None:
            lines.append(
                f"task #{task.id} waits for review: {_clip(task.title)} — `{PROG} review show --root {root} "
                f"{task.id}`, then `review approve`, `review changes` or `review discard`"
            )
        else:
            lines.append(
                f"task #{task.id} was approved but not merged: {_clip(refused, 200)} — then "
                f"`{PROG} review approve --root {root} {task.id}` again"
            )
    for task in services.tasks.list(status=TaskStatus.FAILED, limit=MAX_LISTED):
        lines.append(f"task #{task.id} failed: {_clip(task.title)} — set it back to pending to retry it")
    listed = (TaskStatus.NEEDS_INPUT, TaskStatus.DRAFT, TaskStatus.BLOCKED, TaskStatus.FAILED)
    beyond = sum(max(0, counts[status.value] - MAX_LISTED) for status in listed)
    beyond += max(0, len(to_review) - MAX_LISTED)
    settled_or_listed = {*SETTLED, *listed, TaskStatus.IN_REVIEW}
    others = sum(count for name, count in counts.items() if TaskStatus(name) not in settled_or_listed)
    others -= len(running) + len(queued)
    if beyond or others:
        lines.append(
            f"{beyond + others} more task(s) not done (pending on unfinished dependencies, or beyond this "
            f"list) — see `{PROG} status --root {root}`"
        )
    elsewhere = [f"task #{task.id} is running in another loop: {_clip(task.title)}" for task in running]
    elsewhere += [
        f"task #{task.id} is approved and waits for its turn to merge: {_clip(task.title)}"
        for task in merging
    ]
    if queued:
        elsewhere.append(f"{len(queued)} pending task(s) wait for those to finish")
    kinds = (
        (len(services.inbox.asks(open_only=True)), "question to answer", "questions to answer"),
        (counts[TaskStatus.DRAFT.value], "suggested task to approve", "suggested tasks to approve"),
        (len(to_review), "task to review", "tasks to review"),
        (counts[TaskStatus.FAILED.value], "failed task to retry or skip", "failed tasks to retry or skip"),
        (counts[TaskStatus.BLOCKED.value], "blocked task", "blocked tasks"),
        (len(running) + len(merging), "task in another loop", "tasks in another loop"),
        (others, "task on unfinished dependencies", "tasks on unfinished dependencies"),
    )
    counted = tuple(f"{n} {one if n == 1 else many}" for n, one, many in kinds if n > 0)
    return IdleReport(tuple(lines), tuple(elsewhere), counted)


def _in_review(services: Services) -> tuple[list[tuple[TaskSummary, str | None]], list[TaskSummary]]:
    """Tasks in review that wait for a person (with why an approved one did not merge), and those on their way
    to merge: approved, or done with the review gate off (the loop that finished them is merging them)."""
    to_review: list[tuple[TaskSummary, str | None]] = []
    merging: list[TaskSummary] = []
    for task in services.tasks.list(status=TaskStatus.IN_REVIEW):
        approval = services.reviews.queued(task.id)
        if approval is not None and approval.refused is not None:
            to_review.append((task, approval.refused))
        elif approval is None and services.reviews.gate_applies(task.discipline):
            to_review.append((task, None))
        else:
            merging.append(task)
    return to_review, merging


def _running_elsewhere(services: Services) -> tuple[list[TaskSummary], set[int]]:
    """Tasks in progress in a live loop of another process or machine, and the pending tasks waiting on them.

    Neither waits for a person: another runner is working, and its tasks' dependents follow when it is done.
    """
    in_progress = services.tasks.list(status=TaskStatus.IN_PROGRESS)
    orphaned = set(services.sessions.orphans().task_ids)
    running = [task for task in in_progress if task.id not in orphaned]
    if not running:
        return [], set()
    status = {task.id: task.status for task in services.tasks.list()}
    unmet: dict[int, set[int]] = {}
    for task_id, depends_on in services.tasks.edges():
        if status.get(task_id) is TaskStatus.PENDING and status.get(depends_on) is not TaskStatus.DONE:
            unmet.setdefault(task_id, set()).add(depends_on)
    waiting = {task.id for task in running}
    queued: set[int] = set()
    grew = True
    while grew:  # a pending task waits on the other runner when each unmet dependency does (transitively)
        fresh = {task_id for task_id, deps in unmet.items() if task_id not in queued and deps <= waiting}
        grew = bool(fresh)
        queued |= fresh
        waiting |= fresh
    return running, queued


def _clip(text: str | None, limit: int = 80) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
