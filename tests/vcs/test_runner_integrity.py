"""The desk's own git runs no program a repository or an agent configured, and reads and writes full refs
only: filters, textconv, merge drivers and fsmonitor that would leave a marker file leave none, a tag
named like the base or the task branch changes nothing, and names and object ids are checked."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import MergeStrategy
from ralph_desk.loop import git as loop_git
from ralph_desk.services.container import Services
from ralph_desk.vcs import diffs, lockdown, merging
from ralph_desk.vcs import run as runner
from ralph_desk.vcs.names import branch_ref, object_id, task_ref
from ralph_desk.vcs.places import GitError
from ralph_desk.vcs.refs import rev
from ralph_desk.vcs.run import run
from ralph_desk.vcs.worktree_git import WorktreeIntegrityError
from ralph_desk.vcs.worktrees import TaskWorktree
from tests.support.git_repo import git
from tests.support.review_project import open_review_project

MARKING = '#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n'


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"app.py": "one\ntwo\nthree\n"}, "Integrity")
    yield services
    services.close()


def _task(desk: Services, title: str) -> TaskWorktree:
    task = desk.tasks.create("core", "backend", title)
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    return worktree


def _arm(root: Path, tmp_path: Path) -> Path:
    """Attributes and config (one part through an include of a file outside) whose programs leave a marker."""
    marker = tmp_path / "MARKER"
    script = tmp_path / "mark.sh"
    script.write_text(MARKING.format(marker=marker))
    script.chmod(0o755)
    (root / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n*.py filter=outside\n")
    git(root, "add", ".gitattributes")
    git(root, "commit", "-qm", "attributes")
    outside = tmp_path / "outside.cfg"
    outside.write_text(f'[filter "outside"]\n\tclean = {script}\n\tsmudge = {script}\n\trequired = true\n')
    for key, value in {
        "filter.evil.clean": str(script),
        "filter.evil.smudge": str(script),
        "filter.evil.required": "true",
        "diff.evil.textconv": str(script),
        "diff.evil.command": str(script),
        "merge.evil.driver": f"{script} %A %O %B",
        "core.fsmonitor": str(script),
        "include.path": str(outside),
    }.items():
        git(root, "config", key, value)
    return marker


def test_filters_textconv_merge_drivers_and_fsmonitor_never_run_for_the_desk(
    desk: Services, tmp_path: Path
) -> None:
    root = desk.paths.root
    marker = _arm(root, tmp_path)
    ours, theirs = _task(desk, "Change one"), _task(desk, "Change three")
    (ours.path / "app.py").write_text("ONE\ntwo\nthree\n")
    (ours.path / "notes.txt").write_text("new\n")
    (theirs.path / "app.py").write_text("one\ntwo\nTHREE\n")

    loop_git.state(ours.path)
    first = desk.workspaces.commit_session(ours, "Change one", "s-1", "done", "one", True)
    desk.workspaces.commit_session(theirs, "Change three", "s-2", "done", "three", True)
    diffs.of_pin(root, diffs.pin(root, ours.base, ours.branch))
    assert first.before is not None and first.after is not None
    diffs.between(root, first.before, first.after)
    loop_git.changed_files(ours.path, loop_git.GitState(first.before, frozenset()), loop_git.state(ours.path))
    theirs_tip = desk.workspaces.head(theirs)
    assert theirs_tip is not None
    merged = merging.merge(root, ours.branch, theirs_tip, MergeStrategy.MERGE, "both\n")

    assert not marker.exists(), marker.read_text()
    assert merged.merged and git(root, "show", f"{ours.branch}:app.py") == "ONE\ntwo\nTHREE"
    assert git(root, "show", f"{first.after}:notes.txt") == "new"


def test_a_tag_named_like_the_base_or_the_task_branch_changes_nothing_the_desk_commits_or_reads(
    desk: Services,
) -> None:
    root = desk.paths.root
    worktree = _task(desk, "Greet")
    git(root, "checkout", "-q", "--detach")
    (root / "app.py").write_text("the base moved on\n")
    git(root, "commit", "-qam", "base moves")
    git(root, "branch", "-f", "main", "HEAD")
    git(root, "checkout", "-q", "main")
    git(root, "checkout", "-q", "--orphan", "decoy")
    (root / "planted.txt").write_text("from a tag\n")
    git(root, "add", "planted.txt")
    git(root, "commit", "-qm", "decoy")
    decoy = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-f", "main")
    git(root, "tag", "main", decoy)
    git(root, "tag", worktree.branch, decoy)

    assert desk.workspaces.catch_up(worktree) == ()
    (worktree.path / "work.txt").write_text("mine\n")
    made = desk.workspaces.commit_session(worktree, "Greet", "s-1", "done", "greeted", True)

    tip = git(root, "rev-parse", f"refs/heads/{worktree.branch}")
    assert made.after == tip and desk.workspaces.head(worktree) == tip
    assert git(root, "show", f"{tip}:app.py") == "the base moved on"
    assert "planted.txt" not in git(root, "ls-tree", "-r", "--name-only", tip)
    assert git(root, "rev-parse", f"refs/tags/{worktree.branch}") == decoy
    assert rev(root, f"refs/heads/{worktree.base}") == git(root, "rev-parse", "refs/heads/main")


@pytest.mark.parametrize("staged", [False, True], ids=["untracked", "staged-by-the-agent"])
def test_a_nested_repository_is_left_out_of_the_commit_and_keeps_its_worktree(
    desk: Services, staged: bool
) -> None:
    worktree = _task(desk, "Vendor")
    nested = worktree.path / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "code.py").write_text("x = 1\n")
    git(nested, "add", "code.py")
    git(nested, "commit", "-qm", "only here")
    (worktree.path / "kept.txt").write_text("kept\n")
    if staged:  # the agent adds it itself: a gitlink in the worktree's index
        git(worktree.path, "add", "vendor/lib")

    made = desk.workspaces.commit_session(worktree, "Vendor", "s-1", "done", "vendored", True)

    listing = git(desk.paths.root, "ls-tree", "-r", f"refs/heads/{worktree.branch}")
    assert "kept.txt" in listing and "vendor" not in listing and "160000" not in listing
    assert made.left_out == ("vendor/lib",)
    desk.workspaces.remove(worktree.task_id)
    assert (nested / ".git").is_dir() and (nested / "code.py").read_text() == "x = 1\n"


def test_object_ids_and_full_refs_are_checked_before_git_sees_them() -> None:
    assert object_id("a" * 40) == "a" * 40 and object_id("0" * 64) == "0" * 64
    for bad in ("A" * 40, "a" * 39, "main", "-a" + "a" * 38, "a" * 40 + "\n"):
        with pytest.raises(ValueError, match="object id"):
            object_id(bad)
    assert task_ref("refs/heads/ralph/7-greet") == "refs/heads/ralph/7-greet"
    assert branch_ref("refs/heads/main") == "refs/heads/main"
    for bad in (
        "ralph/7-greet",
        "-refs/heads/ralph/x",
        "refs/heads/ralph/a..b",
        "refs/heads/ralph/x.lock",
        "refs/heads/ralph/a b",
        "refs/heads/ralph/x^",
        "refs/heads/ralph/",
        "refs/heads/ralph/@{1}",
    ):
        with pytest.raises(ValueError, match="ref"):
            task_ref(bad)


def test_git_given_end_of_options_takes_a_dash_name_as_a_name(desk: Services, tmp_path: Path) -> None:
    root = desk.paths.root
    output = tmp_path / "written"
    assert rev(root, f"--output={output}") is None
    result = run(root, "diff", "--end-of-options", f"--output={output}", ok_codes=None)
    assert result.returncode != 0 and not output.exists()


def test_inherited_git_variables_do_not_redirect_the_desk(
    desk: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    git(tmp_path, "init", "-q", str(elsewhere))
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "index"))
    worktree = _task(desk, "Greet")
    (worktree.path / "work.txt").write_text("mine\n")
    made = desk.workspaces.commit_session(worktree, "Greet", "s-1", "done", "greeted", True)
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert git(desk.paths.root, "show", f"{made.after}:work.txt") == "mine"
    assert not (tmp_path / "index").exists()


def test_a_filter_defined_later_in_an_included_file_or_under_a_condition_is_neutralised_too(
    desk: Services, tmp_path: Path
) -> None:
    root = desk.paths.root
    marker = tmp_path / "MARKER"
    script = tmp_path / "mark.sh"
    script.write_text(MARKING.format(marker=marker))
    script.chmod(0o755)
    later, conditional = tmp_path / "later.cfg", tmp_path / "conditional.cfg"
    later.write_text("")
    conditional.write_text(f'[filter "when"]\n\tclean = {script}\n\trequired = true\n')
    git(root, "config", "include.path", str(later))
    git(root, "config", "includeIf.onbranch:ralph/**.path", str(conditional))
    worktree = _task(desk, "Greet")
    (worktree.path / ".gitattributes").write_text("*.py filter=later\n*.txt filter=when\n")
    loop_git.state(worktree.path)
    desk.workspaces.commit_session(worktree, "Greet", "s-1", "done", "greeted", True)

    later.write_text(f'[filter "later"]\n\tclean = {script}\n\trequired = true\n')
    (worktree.path / "app.py").write_text("changed\n")
    (worktree.path / "notes.txt").write_text("changed\n")
    loop_git.state(worktree.path)
    made = desk.workspaces.commit_session(worktree, "Greet", "s-2", "done", "again", True)

    assert not marker.exists(), marker.read_text()
    assert git(root, "show", f"{made.after}:app.py") == "changed"


def test_edits_not_allowed_are_stashed_through_the_worktree_git_and_a_moved_head_goes_back(
    desk: Services,
) -> None:
    root = desk.paths.root
    worktree = _task(desk, "Read only")
    main_before = git(root, "rev-parse", "refs/heads/main")
    tip = git(root, "rev-parse", f"refs/heads/{worktree.branch}")
    git(worktree.path, "checkout", "-q", "--detach")
    (worktree.path / "app.py").write_text("not allowed\n")

    made = desk.workspaces.commit_session(worktree, "Read only", "s-1", None, None, False)

    assert made.stashed and (made.before, made.after) == (tip, tip)
    assert made.head_was is not None and "detached" in made.head_was
    assert git(worktree.path, "symbolic-ref", "HEAD") == f"refs/heads/{worktree.branch}"
    assert (worktree.path / "app.py").read_text() == "one\ntwo\nthree\n"
    assert git(root, "rev-parse", "refs/heads/main") == main_before
    assert "made edits while edits were not allowed" in git(root, "stash", "list")


@pytest.mark.parametrize("swap", ["folder", "elsewhere", "missing"])
def test_a_worktree_whose_git_was_swapped_is_refused_and_nothing_is_committed(
    desk: Services, tmp_path: Path, swap: str
) -> None:
    root = desk.paths.root
    worktree = _task(desk, "Swap")
    tip = git(root, "rev-parse", f"refs/heads/{worktree.branch}")
    dot_git = worktree.path / ".git"
    dot_git.unlink()
    if swap == "folder":
        git(worktree.path, "init", "-q")
    elif swap == "elsewhere":
        git(tmp_path, "init", "-q", "other")
        dot_git.write_text(f"gitdir: {tmp_path / 'other' / '.git'}\n")
    (worktree.path / "work.txt").write_text("mine\n")

    with pytest.raises(WorktreeIntegrityError, match="no longer belongs"):
        desk.workspaces.commit_session(worktree, "Swap", "s-1", "done", "swapped", True)

    assert git(root, "rev-parse", f"refs/heads/{worktree.branch}") == tip


def test_a_configuration_git_cannot_list_in_full_runs_no_git_there(
    desk: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An include of a FIFO: listing the configuration blocks, so the drivers it might define are unknown.
    # A process writing `[filter "x"] clean = …` into it as git reads would otherwise win: the desk refuses.
    root = desk.paths.root
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    git(root, "config", "include.path", str(fifo))
    monkeypatch.setattr(lockdown, "LIST_TIMEOUT_S", 1)
    monkeypatch.setattr(runner, "GIT_TIMEOUT_S", 5)

    with pytest.raises(GitError) as refused:
        run(root, "status", "--porcelain")

    assert "configuration" in str(refused.value) and "could not be read in full" in str(refused.value)
