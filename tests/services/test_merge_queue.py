"""The merge queue across processes: approvals from the window, `ralph-desk review approve` in terminals and a
headless `run` merge one at a time in approval order; a conflict goes back; a crash loses no approval."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.enums import MergeStrategy, TaskStatus, Verb
from ralph_desk.domain.records import Task
from ralph_desk.domain.reviews import ReviewResult
from ralph_desk.loop.idle import idle_report
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.services.merge_queue import merge_turn
from ralph_desk.services.reviews import ReviewError
from ralph_desk.services.sessions import this_host
from ralph_desk.store import merge_queue as queue
from ralph_desk.vcs import merging
from tests.support.git_repo import fsck_ok, git
from tests.support.review_project import open_review_project, read_tip

WAIT_S = 120
RUN = (sys.executable, "-m", "ralph_desk", "run")
NO_AGENT = f"{sys.executable} -c pass"  # never started: no task is runnable


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"README.md": "# tides\n"}, "Merge queue")
    yield services
    services.close()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Return once `condition()` holds; fail naming `what` after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {WAIT_S} s waiting for {what}")
        time.sleep(0.02)  # a poll interval, not a guess at how long anything takes


def _in_review(desk: Services, title: str, edits: dict[str, str | bytes | None]) -> Task:
    task = desk.tasks.create("core", "backend", title)
    put_in_review(desk, task.id, (edits, f"{title}: done."))
    return desk.tasks.get(task.id)


def approve_in_terminal(desk: Services, task_id: int) -> subprocess.Popen[str]:
    """`ralph-desk review approve ID --commit OID`, as a person types it in a terminal beside the window."""
    command = [sys.executable, "-m", "ralph_desk", "review", "approve", str(task_id)]
    command += ["--commit", str(read_tip(desk, task_id))]
    command += ["--root", str(desk.paths.root), "--db-url", desk.db.url]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )


def run_headless(desk: Services) -> subprocess.CompletedProcess[str]:
    """`ralph-desk run` on the project, whose agent never starts (no task is runnable once it has merged)."""
    command = [*RUN, "--root", str(desk.paths.root), "--db-url", desk.db.url]
    return subprocess.run(
        [*command, "--agent", "command", "--agent-command", NO_AGENT],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        stdin=subprocess.DEVNULL,
    )


def approve_in_window(desk: Services, task_id: int, outcomes: dict[int, object]) -> threading.Thread:
    """The window's approval: the review service on a worker thread of this process."""

    def approve() -> None:
        try:
            outcomes[task_id] = desk.reviews.approve(task_id, read_tip(desk, task_id))
        except ReviewError as error:
            outcomes[task_id] = error

    thread = threading.Thread(target=approve)
    thread.start()
    return thread


def queued(desk: Services, task_id: int) -> bool:
    return desk.reviews.merge_state(task_id) is not None


def _tasks_on_base(root: Path) -> list[int]:
    """The `Ralph-Task` trailers of the base's first-parent history, oldest first."""
    log = git(
        root, "log", "--first-parent", "--reverse", "--format=%(trailers:key=Ralph-Task,valueonly)", "main"
    )
    return [int(line) for line in log.split() if line.strip()]


def approve_while_held(
    desk: Services, tasks: list[Task]
) -> tuple[list[subprocess.Popen[str]], dict[int, object]]:
    """Approve each task in turn — odd ones from terminals, even ones from the window — while the merge
    turn is held, each once the one before is queued; then let the queue go."""
    processes: list[subprocess.Popen[str]] = []
    outcomes: dict[int, object] = {}
    threads: list[threading.Thread] = []
    with merge_turn(desk.paths):
        for number, task in enumerate(tasks):
            if number % 2:
                threads.append(approve_in_window(desk, task.id, outcomes))
            else:
                processes.append(approve_in_terminal(desk, task.id))
            wait_until(lambda task_id=task.id: queued(desk, task_id), f"task #{task.id}'s approval")
        assert _tasks_on_base(desk.paths.root) == []  # nothing merges while the turn is held
    for process in processes:
        process.wait(WAIT_S)
    for thread in threads:
        thread.join(WAIT_S)
    assert not any(thread.is_alive() for thread in threads)
    return processes, outcomes


@pytest.mark.parametrize("strategy", [MergeStrategy.SQUASH, MergeStrategy.MERGE])
def test_approvals_from_terminals_and_the_window_merge_one_at_a_time_in_approval_order(
    desk: Services, strategy: MergeStrategy
) -> None:
    update_config(desk.paths, merge_strategy=strategy.value)
    root = desk.paths.root
    tasks = [_in_review(desk, f"Tide table {n}", {f"tides/{n}.txt": f"table {n}\n"}) for n in range(5)]
    tasks = [tasks[index] for index in (3, 0, 4, 1, 2)]  # approval order differs from creation order

    processes, outcomes = approve_while_held(desk, tasks)

    assert [process.returncode for process in processes] == [0] * len(processes), [
        process.stderr.read() if process.stderr else "" for process in processes
    ]
    assert not any(isinstance(outcome, ReviewError) for outcome in outcomes.values()), outcomes
    assert [desk.tasks.get(task.id).status for task in tasks] == [TaskStatus.DONE] * len(tasks)
    assert _tasks_on_base(root) == [task.id for task in tasks]
    history = git(root, "log", "--first-parent", "--format=%H %P", "main").splitlines()
    parents = [len(line.split()) - 1 for line in history]
    expected = 2 if strategy is MergeStrategy.MERGE else 1
    assert parents[: len(tasks)] == [expected] * len(tasks)  # linear: every merge on the first-parent line
    assert sorted(path.name for path in (root / "tides").iterdir()) == sorted(f"{n}.txt" for n in range(5))
    assert all(desk.reviews.merge_state(task.id) is None for task in tasks)  # the queue is empty
    assert fsck_ok(root)


def test_a_conflicting_approval_goes_back_to_its_task_and_the_queue_goes_on(desk: Services) -> None:
    update_config(desk.paths, merge_strategy=MergeStrategy.SQUASH.value)
    root = desk.paths.root
    first = _in_review(desk, "High water", {"tide.txt": "high 2\n"})
    clash = _in_review(desk, "Higher water", {"tide.txt": "high 3\n"})
    after = _in_review(desk, "Low water", {"low.txt": "low 0\n"})

    processes, outcomes = approve_while_held(desk, [first, clash, after])

    assert [desk.tasks.get(task.id).status for task in (first, clash, after)] == [
        TaskStatus.DONE,
        TaskStatus.PENDING,
        TaskStatus.DONE,
    ]
    assert _tasks_on_base(root) == [first.id, after.id]
    assert (root / "tide.txt").read_text() == "high 2\n"
    flags = [signal for signal in desk.signals.for_task(clash.id) if signal.verb is Verb.FLAG]
    assert flags and "tide.txt" in (flags[-1].what or "")
    assert [process.returncode for process in processes] == [0, 0]  # first's and after's terminals
    sent_back = outcomes[clash.id]
    assert isinstance(sent_back, ReviewResult) and sent_back.status == TaskStatus.PENDING.value
    assert git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude).ralph") == ""


def test_approvals_whose_processes_died_before_their_turn_merge_in_order_when_a_loop_starts(
    desk: Services,
) -> None:
    root = desk.paths.root
    tasks = [_in_review(desk, f"Buoy {n}", {f"buoys/{n}.txt": f"buoy {n}\n"}) for n in range(3)]
    tasks.reverse()
    with merge_turn(desk.paths):
        processes = []
        for task in tasks:
            processes.append(approve_in_terminal(desk, task.id))
            wait_until(lambda task_id=task.id: queued(desk, task_id), f"task #{task.id}'s approval")
        for process in processes:  # the terminals are closed mid-queue
            process.send_signal(signal.SIGKILL)
            process.wait(WAIT_S)
    assert [desk.tasks.get(task.id).status for task in tasks] == [TaskStatus.IN_REVIEW] * 3
    assert all(queued(desk, task.id) for task in tasks)

    run = run_headless(desk)

    assert run.returncode == 0, run.stdout + run.stderr
    assert "all done" in run.stdout
    assert _tasks_on_base(root) == [task.id for task in tasks]
    assert [desk.tasks.get(task.id).status for task in tasks] == [TaskStatus.DONE] * 3
    assert all(session.loop_run_id is None for session in desk.sessions.list())  # no agent ran


def test_a_merge_refused_for_uncommitted_changes_stays_in_review_saying_why_and_the_queue_goes_on(
    desk: Services,
) -> None:
    root = desk.paths.root
    blocked = _in_review(desk, "Harbour chart", {"chart.txt": "chart v2\n"})
    free = _in_review(desk, "Pier list", {"piers.txt": "north pier\n"})
    (root / "chart.txt").write_text("the person's own draft\n")  # uncommitted, in the way of the merge

    with pytest.raises(ReviewError, match="uncommitted changes"):
        desk.reviews.approve(blocked.id, read_tip(desk, blocked.id))
    merged = desk.reviews.approve(free.id, read_tip(desk, free.id))

    assert merged.status == TaskStatus.DONE.value
    assert desk.tasks.get(blocked.id).status is TaskStatus.IN_REVIEW
    (item,) = desk.reviews.list()
    assert item.merge is not None and item.merge.startswith("approved, not merged: the merge would overwrite")
    assert (root / "chart.txt").read_text() == "the person's own draft\n"
    listed = subprocess.run(
        [sys.executable, "-m", "ralph_desk", "review", "list", "--root", str(root), "--db-url", desk.db.url],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        stdin=subprocess.DEVNULL,
    )
    assert listed.returncode == 0, listed.stderr
    assert f"#{blocked.id}" in listed.stdout and "not merged: the merge would overwrite" in listed.stdout

    (waiting,) = idle_report(desk).waiting  # a headless run would exit naming it
    assert waiting.startswith(f"task #{blocked.id} was approved but not merged: the merge would overwrite")

    (root / "chart.txt").unlink()  # the person moves the draft away and approves again
    again = desk.reviews.approve(blocked.id, read_tip(desk, blocked.id))
    assert again.status == TaskStatus.DONE.value and desk.reviews.merge_state(blocked.id) is None
    assert _tasks_on_base(root) == [free.id, blocked.id]


def test_a_squash_that_landed_before_its_process_died_is_recorded_not_merged_twice(desk: Services) -> None:
    update_config(desk.paths, merge_strategy=MergeStrategy.SQUASH.value)
    root = desk.paths.root
    task = _in_review(desk, "Moon phases", {"moon.txt": "full\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None
    text = f"Merge task #{task.id}: Moon phases\n\nRalph-Task: {task.id}\n"
    tip = read_tip(desk, task.id)
    assert tip is not None
    merging.merge(root, worktree.base, tip, MergeStrategy.SQUASH, text)  # then the crash
    with desk.db.write() as unit:
        queue.enqueue(unit, task.id, f"{this_host()}:{root}", tip)

    desk.reviews.merge_queued()

    assert desk.tasks.get(task.id).status is TaskStatus.DONE
    assert _tasks_on_base(root) == [task.id]  # one squash commit, not two
    assert desk.reviews.merge_state(task.id) is None


def test_work_done_with_the_gate_off_whose_loop_stopped_before_its_merge_merges_when_a_loop_starts(
    desk: Services,
) -> None:
    update_config(desk.paths, review_gate=False)
    root = desk.paths.root
    task = _in_review(desk, "Harbour lights", {"lights.txt": "red, green\n"})  # done; the loop then died
    assert desk.reviews.queued(task.id) is None

    run = run_headless(desk)

    assert run.returncode == 0, run.stdout + run.stderr
    assert desk.tasks.get(task.id).status is TaskStatus.DONE
    assert _tasks_on_base(root) == [task.id]


def test_an_approval_whose_branch_moved_before_its_merge_turn_is_refused_and_the_task_stays_in_review(
    desk: Services,
) -> None:
    root = desk.paths.root
    task = _in_review(desk, "Buoy list", {"buoys.txt": "red\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None
    outcomes: dict[int, object] = {}

    with merge_turn(desk.paths):  # another merge holds the turn while the branch moves on
        thread = approve_in_window(desk, task.id, outcomes)
        wait_until(lambda: queued(desk, task.id), f"task #{task.id}'s approval")
        (worktree.path / "buoys.txt").write_text("red\nskull and crossbones\n")
        git(worktree.path, "commit", "-qam", "after the approval")
    thread.join(WAIT_S)

    refused = outcomes[task.id]
    assert isinstance(
        refused, ReviewError
    ) and "the branch moved since it was approved: review it again" in str(refused)
    assert _tasks_on_base(root) == [] and not (root / "buoys.txt").exists()
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    state = desk.reviews.merge_state(task.id)
    assert state is not None and state.startswith(
        "approved, not merged: the branch moved since it was approved"
    )

    again = desk.reviews.approve(task.id, read_tip(desk, task.id))  # the person reads the new diff, approves
    assert again.status == TaskStatus.DONE.value
    assert git(root, "show", "main:buoys.txt") == "red\nskull and crossbones"
