"""The checks gate as lifecycle rules and in the review: an agent cannot declare done past the checks, a
failing required check needs the person's "merge anyway", and that choice is recorded."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.checks import Check, CheckPurpose, CheckStatus, Verdict
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Move, Mover, refusal
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ConflictError
from ralph_desk.services.reviews import ChecksFailingError
from tests.services.test_reviews import START, _work
from tests.support.git_repo import commit_all, git
from tests.support.review_project import open_review_project, read_tip

GREEN = Check(name="tests", run=f"{sys.executable} -c \"print('ok')\"", timeout_s=30)
RED = Check(name="tests", run=f"{sys.executable} -c \"import sys; print('FAILED t::x'); sys.exit(1)\"")


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", START, "Checks")
    update_config(services.paths, checks=[RED.model_dump()])
    commit_all(services.paths.root, "checks")
    yield services
    services.close()


@pytest.mark.parametrize(
    ("mover", "current", "target", "verdict", "anyway", "refused"),
    [
        (Mover.AGENT, TaskStatus.IN_PROGRESS, TaskStatus.DONE, Verdict.NOT_RUN, False, "call done"),
        (Mover.AGENT, TaskStatus.IN_PROGRESS, TaskStatus.DONE, Verdict.FAILED, False, "call done"),
        (Mover.AGENT, TaskStatus.IN_PROGRESS, TaskStatus.DONE, Verdict.PASSED, False, None),
        (Mover.AGENT, TaskStatus.IN_PROGRESS, TaskStatus.DONE, Verdict.NONE, False, None),
        (Mover.PERSON, TaskStatus.IN_PROGRESS, TaskStatus.DONE, Verdict.FAILED, False, None),
        (Mover.LOOP, TaskStatus.IN_PROGRESS, TaskStatus.IN_REVIEW, Verdict.FAILED, False, "checks failed"),
        (Mover.LOOP, TaskStatus.IN_PROGRESS, TaskStatus.IN_REVIEW, Verdict.PASSED, False, None),
        (Mover.REVIEW, TaskStatus.IN_REVIEW, TaskStatus.DONE, Verdict.FAILED, False, "merge anyway"),
        (Mover.REVIEW, TaskStatus.IN_REVIEW, TaskStatus.DONE, Verdict.FAILED, True, None),
        (Mover.REVIEW, TaskStatus.IN_REVIEW, TaskStatus.PENDING, Verdict.FAILED, False, None),
    ],
)
def test_the_checks_rules_of_the_lifecycle(
    mover: Mover, current: TaskStatus, target: TaskStatus, verdict: Verdict, anyway: bool, refused: str | None
) -> None:
    found = refusal(Move(7, current, target, mover, checks=verdict, anyway=anyway))
    assert (found is None) if refused is None else (found is not None and refused in found)


def test_an_agent_cannot_set_its_task_done_past_the_checks(desk: Services) -> None:
    task = desk.tasks.create("core", "backend", "Skip the gate")
    desk.tasks.move(task.id, TaskStatus.IN_PROGRESS, Mover.LOOP)
    with pytest.raises(ConflictError, match="call done, and the desk runs them"):
        desk.tasks.move(task.id, TaskStatus.DONE, Mover.AGENT)
    assert desk.tasks.get(task.id).status is TaskStatus.IN_PROGRESS


def test_approving_a_task_whose_checks_fail_needs_merge_anyway_and_records_it(desk: Services) -> None:
    task = _work(desk, "Greet loudly", {"app.py": "def greet():\n    return 'HELLO'\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None
    (run,) = desk.checks.run([RED], worktree.path, purpose=CheckPurpose.RERUN, task_id=task.id)
    assert run.status is CheckStatus.FAILED
    base = git(desk.paths.root, "rev-parse", "main")
    tip = read_tip(desk, task.id)

    with pytest.raises(ChecksFailingError, match=r"required checks fail \(tests failed\)"):
        desk.reviews.approve(task.id, tip)
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert git(desk.paths.root, "rev-parse", "main") == base and desk.reviews.queued(task.id) is None

    merged = desk.reviews.approve(task.id, tip, anyway=True)
    assert merged.status == TaskStatus.DONE.value
    assert git(desk.paths.root, "rev-parse", "main") != base
    (note,) = [c for c in desk.reviews.comments(task.id) if "Merge anyway" in c.body]
    assert note.author == "human" and "tests failed" in note.body


def test_checks_run_again_that_pass_let_the_review_merge(desk: Services) -> None:
    task = _work(desk, "Greet softly", {"app.py": "def greet():\n    return 'hi'\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None
    desk.checks.run([RED], worktree.path, purpose=CheckPurpose.SESSION, task_id=task.id, session_id="s-x")
    desk.checks.run([GREEN], worktree.path, purpose=CheckPurpose.RERUN, task_id=task.id)
    assert desk.checks.verdict(task.id, [GREEN]) is Verdict.PASSED
    update_config(desk.paths, checks=[GREEN.model_dump()])  # the queue runs it on the merged result too
    commit_all(desk.paths.root, "green")
    assert desk.reviews.approve(task.id, read_tip(desk, task.id)).status == TaskStatus.DONE.value
    passes = desk.checks.first_time_passes()
    assert (passes.passed, passes.checked) == (0, 1)


def test_a_log_path_a_shared_database_points_outside_the_logs_is_never_read(desk: Services) -> None:
    from sqlalchemy import update

    from ralph_desk.project.contained import LinkRefusedError
    from ralph_desk.store.schema import CheckRunRow

    (run,) = desk.checks.run([GREEN], desk.paths.root, purpose=CheckPurpose.PROJECT)
    assert "ok" in desk.checks.read_log(run, 1000)
    for planted in ("/etc/passwd", str(desk.paths.logs_dir / ".." / ".." / "app.py")):
        with desk.db.write() as unit:
            unit.execute(update(CheckRunRow).where(CheckRunRow.id == run.id).values(log_path=planted))
        hostile = desk.checks.get(run.id)
        assert hostile is not None
        with pytest.raises(LinkRefusedError, match="outside the project"):
            desk.checks.read_log(hostile, 1000)
