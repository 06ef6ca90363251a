"""A green base: with checks configured, the merge queue checks each approval merged with the base in a trial
worktree and moves the base only to a merged result that passed."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.checks import Check, CheckPurpose, CheckStatus
from ralph_desk.domain.enums import MergeStrategy, Severity, TaskStatus, Verb
from ralph_desk.domain.records import Task
from ralph_desk.domain.reviews import ReviewResult
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.services.reviews import ReviewError
from ralph_desk.store import merge_queue as queue
from ralph_desk.vcs import merge_trial
from tests.support.git_repo import commit_all, fsck_ok, git, output
from tests.support.review_project import open_review_project, read_tip

# Each file under rules/ names a file the project must not have: two tasks that each add a module and a
# rule forbidding the other's pass alone and fail together.
RULES = """\
import pathlib, sys

broken = [p.name for p in sorted(pathlib.Path("rules").glob("*.forbid"))
          if pathlib.Path(p.read_text().strip()).exists()]
for name in broken:
    print(f"FAILED rules/{name}: forbidden file present")
sys.exit(1 if broken else 0)
"""
TESTS = Check(name="tests", run=f"{shlex.quote(sys.executable)} run_rules.py", timeout_s=60)


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"run_rules.py": RULES}, "Green base")
    update_config(services.paths, checks=[TESTS.model_dump()])
    commit_all(services.paths.root, "checks")
    yield services
    services.close()


def _in_review(desk: Services, title: str, edits: dict[str, str | bytes | None]) -> Task:
    task = desk.tasks.create("core", "backend", title)
    put_in_review(desk, task.id, (edits, f"{title}: done."))
    return desk.tasks.get(task.id)


def _alpha(desk: Services) -> Task:
    return _in_review(desk, "Add alpha", {"alpha.py": "A = 1\n", "rules/alpha.forbid": "beta.py\n"})


def _beta(desk: Services) -> Task:
    return _in_review(desk, "Add beta", {"beta.py": "B = 1\n", "rules/beta.forbid": "alpha.py\n"})


def _main(desk: Services) -> str:
    return git(desk.paths.root, "rev-parse", "refs/heads/main")


def _status(outcome: ReviewResult | ReviewError) -> str:
    assert isinstance(outcome, ReviewResult), outcome
    return outcome.status


def _no_trial_left(desk: Services) -> bool:
    listed = git(desk.paths.root, "worktree", "list", "--porcelain")
    return (
        not (desk.workspaces.worktrees_dir / merge_trial.FOLDER).exists() and merge_trial.FOLDER not in listed
    )


def test_two_branches_that_pass_alone_and_fail_together_keep_the_base_green(desk: Services) -> None:
    alpha, beta = _alpha(desk), _beta(desk)

    merged = desk.reviews.approve(alpha.id, read_tip(desk, alpha.id))
    base = _main(desk)
    refused = desk.reviews.approve(beta.id, read_tip(desk, beta.id))

    assert merged.status == TaskStatus.DONE.value and merged.merged_commit == base
    assert refused.status == TaskStatus.PENDING.value
    assert _main(desk) == base  # the base did not move
    assert desk.tasks.get(beta.id).status is TaskStatus.PENDING
    assert desk.reviews.queued(beta.id) is None
    (flag,) = [signal for signal in desk.signals.for_task(beta.id) if signal.verb is Verb.FLAG]
    what = flag.what or ""
    assert flag.severity == Severity.BLOCKING.value
    assert f"#{alpha.id} Add alpha" in what and "tests exit 1" in what
    assert "FAILED rules/beta.forbid" in what
    assert desk.workspaces.existing(beta.id) is not None  # its branch stays for its agent
    assert git(desk.paths.root, "status", "--porcelain") == ""
    assert _no_trial_left(desk) and fsck_ok(desk.paths.root)


def test_the_merged_result_s_run_is_the_task_s_evidence_naming_the_commit_checked(desk: Services) -> None:
    alpha, beta = _alpha(desk), _beta(desk)
    desk.reviews.approve(alpha.id, read_tip(desk, alpha.id))
    desk.reviews.approve(beta.id, read_tip(desk, beta.id))

    (passed,) = desk.checks.history(alpha.id)
    (failed,) = desk.checks.history(beta.id)

    assert (passed.purpose, passed.status, passed.commit) == (
        CheckPurpose.MERGE,
        CheckStatus.PASSED,
        _main(desk),  # what landed is exactly what was checked
    )
    assert (failed.purpose, failed.status) == (CheckPurpose.MERGE, CheckStatus.FAILED)
    assert failed.commit is not None and failed.commit != _main(desk)
    assert git(desk.paths.root, "rev-parse", f"{failed.commit}^1") == _main(desk)  # beta on alpha's base
    assert desk.checks.latest(beta.id) == []  # the task's own work was not judged by the merge's run


@pytest.mark.parametrize("strategy", list(MergeStrategy))
def test_each_strategy_lands_exactly_the_commit_its_checks_passed_on(
    desk: Services, strategy: MergeStrategy
) -> None:
    update_config(desk.paths, merge_strategy=strategy.value)
    git(desk.paths.root, "commit", "-qam", "strategy", "--allow-empty")
    task = _alpha(desk)

    result = desk.reviews.approve(task.id, read_tip(desk, task.id))

    (run,) = desk.checks.history(task.id)
    assert result.status == TaskStatus.DONE.value
    assert run.commit == result.merged_commit == _main(desk)
    assert git(desk.paths.root, "show", "main:alpha.py") == "A = 1"
    assert git(desk.paths.root, "status", "--porcelain") == "" and _no_trial_left(desk)


def test_the_queue_goes_on_with_the_next_approval_after_a_refusal(desk: Services) -> None:
    alpha, beta = _alpha(desk), _beta(desk)
    gamma = _in_review(desk, "Add gamma", {"gamma.py": "G = 1\n"})
    desk.reviews.approve(alpha.id, read_tip(desk, alpha.id))
    with desk.db.write() as unit:  # both approved before either's turn
        queue.enqueue(unit, beta.id, desk.workspaces.checkout, read_tip(desk, beta.id))
        queue.enqueue(unit, gamma.id, desk.workspaces.checkout, read_tip(desk, gamma.id))

    outcomes = desk.reviews.merge_queued()

    assert [_status(outcomes[beta.id]), _status(outcomes[gamma.id])] == ["pending", "done"]
    assert git(desk.paths.root, "show", "main:gamma.py") == "G = 1"
    assert git(desk.paths.root, "ls-tree", "--name-only", "main", "beta.py") == ""


def test_merging_anyway_lands_a_merged_result_that_fails_and_keeps_its_run(desk: Services) -> None:
    alpha, beta = _alpha(desk), _beta(desk)
    desk.reviews.approve(alpha.id, read_tip(desk, alpha.id))
    with desk.db.write() as unit:  # the person chose to merge although checks failed
        queue.enqueue(unit, beta.id, desk.workspaces.checkout, read_tip(desk, beta.id), "tests failed")

    outcome = desk.reviews.merge_queued()[beta.id]

    (run,) = desk.checks.history(beta.id)
    assert _status(outcome) == TaskStatus.DONE.value
    assert run.status is CheckStatus.FAILED and run.commit == _main(desk)


def test_a_check_that_cannot_start_leaves_no_trial_worktree_and_the_base_where_it_was(desk: Services) -> None:
    update_config(desk.paths, checks=[Check(name="tests", run="no-such-program-here --now").model_dump()])
    commit_all(desk.paths.root, "broken check")
    task = _alpha(desk)
    base = _main(desk)

    result = desk.reviews.approve(task.id, read_tip(desk, task.id))

    (run,) = desk.checks.history(task.id)
    assert run.failing and result.status == TaskStatus.PENDING.value
    assert _main(desk) == base and _no_trial_left(desk)
    assert git(desk.paths.root, "status", "--porcelain") == ""


def test_a_trial_worktree_a_killed_merge_left_is_replaced(desk: Services) -> None:
    left = desk.workspaces.worktrees_dir / merge_trial.FOLDER
    git(desk.paths.root, "worktree", "add", "--quiet", "--detach", str(left), "main")
    (left / "stale.txt").write_text("left by a killed merge\n", encoding="utf-8")
    task = _alpha(desk)

    result = desk.reviews.approve(task.id, read_tip(desk, task.id))

    assert result.status == TaskStatus.DONE.value and _no_trial_left(desk)


def test_without_required_checks_the_queue_merges_without_a_trial(desk: Services) -> None:
    update_config(desk.paths, checks=[TESTS.model_copy(update={"required": False}).model_dump()])
    commit_all(desk.paths.root, "advisory only")
    alpha, beta = _alpha(desk), _beta(desk)
    desk.reviews.approve(alpha.id, read_tip(desk, alpha.id))

    result = desk.reviews.approve(beta.id, read_tip(desk, beta.id))

    assert result.status == TaskStatus.DONE.value
    assert desk.checks.history(alpha.id) == desk.checks.history(beta.id) == []


def test_the_trial_is_made_ready_like_a_task_s_worktree_before_its_checks(desk: Services) -> None:
    root = desk.paths.root
    with (root / ".gitignore").open("a", encoding="utf-8") as ignore:
        ignore.write(".env\nbuilt.txt\n")
    (root / ".env").write_text("SECRET=1\n", encoding="utf-8")
    needs = "import os, sys; sys.exit(0 if os.path.exists('.env') and os.path.exists('built.txt') else 1)"
    build = "import pathlib; pathlib.Path('built.txt').write_text('ok')"
    python = shlex.quote(sys.executable)
    update_config(
        desk.paths,
        checks=[Check(name="ready", run=f"{python} -c {shlex.quote(needs)}").model_dump()],
        setup=f"{python} -c {shlex.quote(build)}",
        worktree_files=[".env"],
    )
    commit_all(root, "setup")
    task = _alpha(desk)

    result = desk.reviews.approve(task.id, read_tip(desk, task.id))

    runs = {run.name: run for run in desk.checks.history(task.id)}
    assert result.status == TaskStatus.DONE.value, result.message
    assert runs["setup"].purpose is CheckPurpose.MERGE and runs["ready"].status is CheckStatus.PASSED
    assert (root / ".env").read_text() == "SECRET=1\n" and _no_trial_left(desk)


def test_a_base_that_moves_while_the_merged_result_is_checked_is_not_overwritten(desk: Services) -> None:
    root = desk.paths.root
    person = "-c user.name=Person -c user.email=person@example.invalid"
    meanwhile = f"git -C {shlex.quote(str(root))} {person} commit -q --allow-empty -m meanwhile"
    # The check stands in for the person committing meanwhile: it runs unconfined to write the base.
    update_config(desk.paths, checks=[Check(name="slow", run=meanwhile).model_dump()], sandbox=False)
    commit_all(root, "a check during which the person commits")
    task = _alpha(desk)

    with pytest.raises(ReviewError, match="moved on while the merge was checked"):
        desk.reviews.approve(task.id, read_tip(desk, task.id))

    assert git(root, "log", "-1", "--format=%s", "main") == "meanwhile"
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert "moved on" in (desk.reviews.merge_state(task.id) or "") and _no_trial_left(desk)


def test_the_person_s_uncommitted_work_survives_a_refused_and_a_landed_merge(desk: Services) -> None:
    root = desk.paths.root
    alpha, beta = _alpha(desk), _beta(desk)
    (root / "run_rules.py").write_text(RULES + "# the person's edit\n", encoding="utf-8")
    (root / "draft.txt").write_text("untracked draft\n", encoding="utf-8")

    desk.reviews.approve(alpha.id, read_tip(desk, alpha.id))
    desk.reviews.approve(beta.id, read_tip(desk, beta.id))

    assert (root / "run_rules.py").read_text().endswith("# the person's edit\n")
    assert (root / "draft.txt").read_text() == "untracked draft\n"
    assert (root / "alpha.py").read_text() == "A = 1\n" and not (root / "beta.py").exists()
    assert output(root, "status", "--porcelain").splitlines() == [" M run_rules.py", "?? draft.txt"]


def test_a_trial_whose_checks_raise_is_removed_and_the_base_stays(
    desk: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = _alpha(desk)
    base = _main(desk)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(desk.checks, "run", broken)

    with pytest.raises(RuntimeError, match="went away"):
        desk.reviews.approve(task.id, read_tip(desk, task.id))

    assert _main(desk) == base and _no_trial_left(desk)
    assert desk.reviews.queued(task.id) is not None  # still approved: the next turn tries again
