"""The one writer of a task's status: every path meets the lifecycle's rules, and nothing else writes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ralph_desk
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.services.errors import ConflictError
from ralph_desk.services.tasks import TaskService
from ralph_desk.store.database import Database
from tests.services.conftest import Desk

PACKAGE = Path(ralph_desk.__file__).parent
STATUS_WRITES = {"set_status", "settle", "claim_next"}
WRITERS = {PACKAGE / "services" / "lifecycle.py", PACKAGE / "store" / "tasks.py"}


def test_a_person_cannot_declare_work_in_review_done(desk: Desk) -> None:
    task = desk.task()
    desk.tasks.move(task.id, TaskStatus.IN_REVIEW, Mover.IMPORT)

    with pytest.raises(ConflictError, match=r"task #\d+ is in review.*review approve\|changes\|discard"):
        desk.tasks.move(task.id, TaskStatus.DONE, Mover.PERSON)

    after = desk.tasks.get(task.id)
    assert after.status is TaskStatus.IN_REVIEW and after.completed_at is None


def test_unmerged_work_is_not_done_by_hand_but_plain_work_is(db: Database, desk: Desk) -> None:
    branched, plain = desk.task("On a branch"), desk.task("No branch")
    asked: list[int] = []

    def unmerged(task_id: int) -> bool:
        asked.append(task_id)
        return task_id == branched.id

    tasks = TaskService(db, unmerged)
    with pytest.raises(ConflictError, match="not merged"):
        tasks.move(branched.id, TaskStatus.DONE, Mover.AGENT)
    assert tasks.get(branched.id).status is TaskStatus.PENDING

    assert tasks.move(plain.id, TaskStatus.DONE, Mover.PERSON).status is TaskStatus.DONE
    tasks.move(plain.id, TaskStatus.PENDING, Mover.PERSON)  # no lookup: only a move to done asks
    assert asked == [branched.id, plain.id]


def _status_writes(path: Path) -> list[str]:
    """`module.set_status(…)`-like calls on a store module in one source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STATUS_WRITES
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id.endswith("store")
        ):
            found.append(
                f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.func.value.id}.{node.func.attr}"
            )
    return found


def test_only_the_lifecycle_writes_a_status() -> None:
    outside = [
        call for path in sorted(PACKAGE.rglob("*.py")) if path not in WRITERS for call in _status_writes(path)
    ]
    assert outside == [], "status writes outside services/lifecycle.py"
    assert _status_writes(PACKAGE / "services" / "lifecycle.py"), "the scan finds the writer's own calls"
