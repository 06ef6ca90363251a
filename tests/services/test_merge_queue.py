"""The merge queue: approvals made at once merge one at a time, in approval order; a conflict goes back."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.enums import MergeStrategy, TaskStatus, Verb
from ralph_desk.domain.records import Task
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.services.merge_queue import MergeQueue, queue_for
from ralph_desk.services.reviews import ReviewError
from tests.support.git_repo import fsck_ok, git
from tests.support.review_project import open_review_project

WAIT_S = 60


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"README.md": "# tides\n"}, "Merge queue")
    yield services
    services.close()


def _in_review(desk: Services, title: str, edits: dict[str, str | bytes | None]) -> Task:
    task = desk.tasks.create("core", "backend", title)
    put_in_review(desk, task.id, (edits, f"{title}: done."))
    return desk.tasks.get(task.id)


def _approve_in_order(desk: Services, tasks: list[Task]) -> dict[int, object]:
    """Approve every task from its own thread, each approval made once the one before holds its ticket."""
    queue = queue_for(desk.workspaces.root)
    outcomes: dict[int, object] = {}

    def approve(task: Task) -> None:
        try:
            outcomes[task.id] = desk.reviews.approve(task.id)
        except ReviewError as error:  # reported by the assertions
            outcomes[task.id] = error

    threads = [threading.Thread(target=approve, args=(task,)) for task in tasks]
    with queue.turn():  # hold the queue so that every approval waits, in the order made
        for number, thread in enumerate(threads, start=1):
            thread.start()
            with queue._turns:
                assert queue._turns.wait_for(lambda n=number: queue.waiting == n + 1, timeout=WAIT_S)
    for thread in threads:
        thread.join(timeout=WAIT_S)
    assert not any(thread.is_alive() for thread in threads)
    return outcomes


def _tasks_on_base(root: Path) -> list[int]:
    """The `Ralph-Task` trailers of the base's first-parent history, oldest first."""
    log = git(
        root, "log", "--first-parent", "--reverse", "--format=%(trailers:key=Ralph-Task,valueonly)", "main"
    )
    return [int(line) for line in log.split() if line.strip()]


@pytest.mark.parametrize("strategy", [MergeStrategy.SQUASH, MergeStrategy.MERGE])
def test_approvals_made_at_once_merge_one_at_a_time_in_approval_order(
    desk: Services, strategy: MergeStrategy
) -> None:
    update_config(desk.paths, merge_strategy=strategy.value)
    root = desk.paths.root
    tasks = [_in_review(desk, f"Tide table {n}", {f"tides/{n}.txt": f"table {n}\n"}) for n in range(6)]
    tasks = [tasks[index] for index in (3, 0, 5, 1, 4, 2)]  # approval order differs from creation order

    outcomes = _approve_in_order(desk, tasks)

    assert all(not isinstance(outcome, ReviewError) for outcome in outcomes.values()), outcomes
    assert [desk.tasks.get(task.id).status for task in tasks] == [TaskStatus.DONE] * len(tasks)
    assert _tasks_on_base(root) == [task.id for task in tasks]
    history = git(root, "log", "--first-parent", "--format=%H %P", "main").splitlines()
    parents = [len(line.split()) - 1 for line in history]
    expected = 2 if strategy is MergeStrategy.MERGE else 1
    assert parents[: len(tasks)] == [expected] * len(tasks)  # linear: every merge on the first-parent line
    assert sorted(path.name for path in (root / "tides").iterdir()) == sorted(f"{n}.txt" for n in range(6))
    assert fsck_ok(root)


def test_a_conflicting_approval_goes_back_to_its_task_and_the_queue_goes_on(desk: Services) -> None:
    update_config(desk.paths, merge_strategy=MergeStrategy.SQUASH.value)
    root = desk.paths.root
    first = _in_review(desk, "High water", {"tide.txt": "high 2\n"})
    clash = _in_review(desk, "Higher water", {"tide.txt": "high 3\n"})
    after = _in_review(desk, "Low water", {"low.txt": "low 0\n"})

    outcomes = _approve_in_order(desk, [first, clash, after])

    assert [desk.tasks.get(task.id).status for task in (first, clash, after)] == [
        TaskStatus.DONE,
        TaskStatus.PENDING,
        TaskStatus.DONE,
    ]
    assert _tasks_on_base(root) == [first.id, after.id]
    assert (root / "tide.txt").read_text() == "high 2\n"
    flags = [signal for signal in desk.signals.for_task(clash.id) if signal.verb is Verb.FLAG]
    assert flags and "tide.txt" in (flags[-1].what or "")
    assert not isinstance(outcomes[after.id], ReviewError)
    assert git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude).ralph") == ""


def test_a_queue_serves_tickets_in_the_order_they_were_taken() -> None:
    queue = MergeQueue()
    served: list[int] = []

    def take(number: int) -> None:
        with queue.turn():
            served.append(number)

    with queue.turn():
        threads = []
        for number in range(5):
            threads.append(threading.Thread(target=take, args=(number,)))
            threads[-1].start()
            with queue._turns:
                assert queue._turns.wait_for(lambda n=number: queue.waiting == n + 2, timeout=WAIT_S)
        assert served == []
    for thread in threads:
        thread.join(timeout=WAIT_S)
    assert served == list(range(5)) and queue.waiting == 0
