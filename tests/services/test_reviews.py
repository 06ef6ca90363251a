"""The review desk's service: tasks in review with their branch, the diff, comments, and the decisions."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.diffs import LineKind, parse_diff
from ralph_desk.domain.enums import DiffSide, ReviewCommentState, TaskStatus, Verb
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Task
from ralph_desk.project import init_project, update_config, validate_project
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError, NotFoundError
from ralph_desk.services.reviews import CommentDraft, ReviewError, ReviewMovedError
from tests.support.git_repo import commit_all, fsck_ok, git, make_repo
from tests.support.review_project import open_review_project, read_tip, task_in_review

START = {"app.py": "def greet():\n    return 'hello'\n", "notes.txt": "one\ntwo\nthree\n"}


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", START, "Reviews")
    yield services
    services.close()


def _work(desk: Services, title: str, edits: dict[str, str], summary: str = "Did it.") -> Task:
    """A task whose session edited files in its worktree, committed them and called done (now in review)."""
    return task_in_review(desk, title, edits, summary)


def test_a_task_in_review_is_listed_with_its_summary_session_branch_and_base(desk: Services) -> None:
    task = _work(desk, "Greet loudly", {"app.py": "def greet():\n    return 'HELLO'\n"}, "Shouted.")

    (item,) = desk.reviews.list()

    assert (item.task.id, item.summary, item.base) == (task.id, "Shouted.", "main")
    assert item.branch == f"ralph/{task.id}-greet-loudly"
    assert [session.id for session in item.sessions] == [f"s-{task.id}"]
    assert item.worktree is not None and Path(item.worktree).is_relative_to(desk.paths.worktrees_dir)


def test_the_diff_shows_the_branch_against_the_base_and_one_session_alike(desk: Services) -> None:
    task = _work(desk, "Greet loudly", {"app.py": "def greet():\n    return 'HELLO'\n"})

    whole = desk.reviews.diff(task.id).text

    assert "-    return 'hello'\n+    return 'HELLO'" in whole
    assert desk.reviews.diff(task.id, 1).text == whole
    assert desk.reviews.diff(task.id, f"s-{task.id}").text == whole


def test_the_diff_marks_binary_files_and_finds_renames(desk: Services) -> None:
    task = desk.tasks.create("core", "backend", "Move notes")
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    git(worktree.path, "mv", "notes.txt", "docs.txt")
    (worktree.path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    desk.workspaces.commit_session(worktree, task.title, "s-9", "done", "Moved.", allowed=True)

    text = desk.reviews.diff(task.id).text

    assert "rename from notes.txt\nrename to docs.txt" in text
    assert "Binary files /dev/null and b/logo.png differ" in text


def test_the_person_s_checkout_is_not_touched_by_the_task_s_work(desk: Services) -> None:
    _work(desk, "Greet loudly", {"app.py": "changed\n"})

    assert (desk.paths.root / "app.py").read_text() == START["app.py"]
    assert git(desk.paths.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_approve_merges_the_branch_into_the_base_and_removes_the_worktree(desk: Services) -> None:
    task = _work(desk, "Greet loudly", {"app.py": "def greet():\n    return 'HELLO'\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None

    result = desk.reviews.approve(task.id, read_tip(desk, task.id))

    assert result.status == TaskStatus.DONE.value
    assert desk.tasks.get(task.id).status is TaskStatus.DONE
    assert git(desk.paths.root, "show", "main:app.py") == "def greet():\n    return 'HELLO'"
    assert (desk.paths.root / "app.py").read_text() == "def greet():\n    return 'HELLO'\n"
    assert git(desk.paths.root, "status", "--porcelain") == ""
    assert not worktree.path.exists()
    assert git(desk.paths.root, "branch", "--list", "ralph/*") == ""
    assert fsck_ok(desk.paths.root)


@pytest.mark.parametrize("strategy", ["merge", "squash", "ff-only"])
def test_each_merge_strategy_puts_the_work_on_the_base(desk: Services, strategy: str) -> None:
    update_config(desk.paths, merge_strategy=strategy)
    task = _work(desk, "Greet", {"app.py": "new\n"})

    desk.reviews.approve(task.id, read_tip(desk, task.id))

    parents = git(desk.paths.root, "log", "-1", "--format=%P", "main").split()
    assert len(parents) == (2 if strategy == "merge" else 1)
    assert git(desk.paths.root, "show", "main:app.py") == "new"


def test_a_conflicting_merge_is_aborted_and_the_task_returns_to_its_agent_with_a_flag(desk: Services) -> None:
    first = _work(desk, "Greet loudly", {"app.py": "loud\n"})
    second = _work(desk, "Greet softly", {"app.py": "soft\n"})
    desk.reviews.approve(first.id, read_tip(desk, first.id))
    base_before = git(desk.paths.root, "rev-parse", "main")

    result = desk.reviews.approve(second.id, read_tip(desk, second.id))

    assert (result.status, result.conflicts) == (TaskStatus.PENDING.value, ("app.py",))
    assert git(desk.paths.root, "rev-parse", "main") == base_before
    assert desk.tasks.get(second.id).status is TaskStatus.PENDING
    flags = [signal for signal in desk.signals.for_task(second.id) if signal.verb is Verb.FLAG]
    assert "app.py" in (flags[-1].what or "") and "up to date with the base branch 'main'" in (
        flags[-1].what or ""
    )
    assert desk.workspaces.existing(second.id) is not None  # its branch stays for the agent to update
    assert git(desk.paths.root, "status", "--porcelain") == ""
    assert fsck_ok(desk.paths.root)


def test_a_merge_that_would_overwrite_uncommitted_changes_is_refused_and_changes_nothing(
    desk: Services,
) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    (desk.paths.root / "app.py").write_text("the person's unsaved work\n")
    base_before = git(desk.paths.root, "rev-parse", "main")

    with pytest.raises(ReviewError, match="uncommitted changes"):
        desk.reviews.approve(task.id, read_tip(desk, task.id))
    comment = desk.reviews.add_comment(task.id, "Keep the function", file="app.py", line=1)
    with pytest.raises(ReviewError, match=r"is decided \(approved\)"):  # approved, waiting to merge
        desk.reviews.delete_comment(comment.id)

    assert (desk.paths.root / "app.py").read_text() == "the person's unsaved work\n"
    assert git(desk.paths.root, "rev-parse", "main") == base_before
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW


def test_uncommitted_changes_in_other_files_survive_a_merge(desk: Services) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    (desk.paths.root / "notes.txt").write_text("the person's unsaved notes\n")

    desk.reviews.approve(task.id, read_tip(desk, task.id))

    assert (desk.paths.root / "notes.txt").read_text() == "the person's unsaved notes\n"
    assert (desk.paths.root / "app.py").read_text() == "new\n"


def test_request_changes_sends_the_task_back_with_its_comments(desk: Services) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    desk.reviews.add_comment(task.id, "Keep the function", file="app.py", line=1)

    result = desk.reviews.request_changes(task.id, [CommentDraft("Say why", "notes.txt", 2), "And test it"])

    assert result.status == TaskStatus.PENDING.value
    assert desk.tasks.get(task.id).status is TaskStatus.PENDING
    requested = desk.reviews.requested(task.id)
    assert [(c.body, c.where) for c in requested] == [
        ("Keep the function", "app.py:1"),
        ("Say why", "notes.txt:2"),
        ("And test it", ""),
    ]
    assert desk.reviews.addressed(task.id, "s-2") == 3
    assert {c.state for c in desk.reviews.comments(task.id)} == {ReviewCommentState.ADDRESSED}


def test_request_changes_without_any_comment_is_refused(desk: Services) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})

    with pytest.raises(InvalidValueError, match="at least one comment"):
        desk.reviews.request_changes(task.id)
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW


@pytest.mark.parametrize(
    ("text", "file", "line", "wrong"),
    [
        ("", None, None, "comment"),
        ("x", "../etc/passwd", 1, "file"),
        ("x", "/abs", None, "file"),
        ("x", None, 3, "line"),
        ("x", "a.py", 0, "line"),
    ],
)
def test_a_bad_comment_is_refused_naming_what_is_allowed(
    desk: Services, text: str, file: str | None, line: int | None, wrong: str
) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})

    with pytest.raises(InvalidValueError, match=f"invalid {wrong}"):
        desk.reviews.add_comment(task.id, text, file=file, line=line)
    assert desk.reviews.comments(task.id) == []


def test_a_comment_on_a_removed_line_keeps_its_side_and_its_line_in_the_old_file(desk: Services) -> None:
    task = _work(desk, "Greet", {"notes.txt": "one\nthree\n"})

    removed = desk.reviews.add_comment(task.id, "Keep two", file="notes.txt", line=2, side="old")
    kept = desk.reviews.add_comment(task.id, "Fine", file="notes.txt", line=2)

    assert [(c.side, c.line, c.where) for c in desk.reviews.comments(task.id)] == [
        (DiffSide.OLD, 2, "notes.txt:2 (removed, old file)"),
        (DiffSide.NEW, 2, "notes.txt:2"),
    ]
    assert (removed.side, kept.side) == (DiffSide.OLD, DiffSide.NEW)
    with pytest.raises(InvalidValueError, match=r"invalid side.*one of old, new"):
        desk.reviews.add_comment(task.id, "x", file="notes.txt", line=2, side="left")
    with pytest.raises(InvalidValueError, match=r"invalid side.*only with a line"):
        desk.reviews.add_comment(task.id, "x", file="notes.txt", side="old")
    assert len(desk.reviews.comments(task.id)) == 2


def test_the_person_edits_and_deletes_their_unsent_comments_while_the_review_is_open(desk: Services) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    first = desk.reviews.add_comment(task.id, "Keep the function", file="app.py", line=1, side="old")
    second = desk.reviews.add_comment(task.id, "Typo", file="app.py", line=1)

    edited = desk.reviews.edit_comment(first.id, "  Keep greet()  ")
    desk.reviews.delete_comment(second.id)

    assert (edited.body, edited.side, edited.line) == ("Keep greet()", DiffSide.OLD, 1)
    assert [(c.id, c.body) for c in desk.reviews.comments(task.id)] == [(first.id, "Keep greet()")]
    with pytest.raises(InvalidValueError, match="invalid comment"):
        desk.reviews.edit_comment(first.id, "   ")
    with pytest.raises(NotFoundError, match=f"no review comment {second.id}"):
        desk.reviews.delete_comment(second.id)


def test_comments_cannot_be_changed_once_sent_written_by_an_agent_or_the_review_decided(
    desk: Services,
) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    agent = desk.reviews.add_comment(task.id, "Looks risky", author="opus_review")
    mine = desk.reviews.add_comment(task.id, "Keep the function", file="app.py", line=1)
    with pytest.raises(ReviewError, match="written by opus_review"):
        desk.reviews.edit_comment(agent.id, "Fine")

    desk.reviews.request_changes(task.id)
    with pytest.raises(ReviewError, match="sent to the agent; only your unsent comments can be deleted"):
        desk.reviews.delete_comment(mine.id)

    other = _work(desk, "Shout", {"notes.txt": "ONE\n"})
    late = desk.reviews.add_comment(other.id, "Nice", file="notes.txt", line=1)
    desk.reviews.approve(other.id, read_tip(desk, other.id), drop_comments=True)
    with pytest.raises(ReviewError, match=r"closed \(answered by its agent, or dropped at its merge\)"):
        desk.reviews.edit_comment(late.id, "Nicer")
    assert [c.body for c in desk.reviews.comments(other.id)] == ["Nice"]
    assert desk.reviews.comments(task.id)[1].body == "Keep the function"


@pytest.mark.parametrize(("skip", "status"), [(False, TaskStatus.PENDING), (True, TaskStatus.SKIPPED)])
def test_discard_drops_branch_and_worktree(desk: Services, skip: bool, status: TaskStatus) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None

    desk.reviews.discard(task.id, skip=skip)

    assert desk.tasks.get(task.id).status is status
    assert not worktree.path.exists()
    assert desk.workspaces.existing(task.id) is None
    assert git(desk.paths.root, "show", "main:app.py") == START["app.py"].strip()


def test_only_work_in_review_can_be_approved(desk: Services) -> None:
    task = desk.tasks.create("core", "backend", "Not yet")

    with pytest.raises(ReviewError, match="pending, not in_review"):
        desk.reviews.approve(task.id, read_tip(desk, task.id))


def test_a_project_without_git_has_no_workspaces_and_approves_without_merging(tmp_path: Path) -> None:
    paths = init_project(tmp_path / "plain", title="Plain")
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        task = services.tasks.create("core", "backend", "Anything")
        assert services.workspaces.prepare(task.id, task.title) is None
        services.tasks.move(task.id, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
        assert services.reviews.diff(task.id).text == ""
        assert services.reviews.approve(task.id, None).status == TaskStatus.DONE.value
    finally:
        services.close()


def test_validate_reports_a_stale_worktree_and_init_force_removes_it_keeping_live_ones(
    desk: Services,
) -> None:
    live = desk.workspaces.prepare(desk.tasks.create("core", "backend", "Live").id, "Live")
    assert live is not None
    leftover = desk.paths.worktrees_dir / "9-left-by-a-crash"
    (leftover / "src").mkdir(parents=True)

    problems = validate_project(desk.paths.root)

    assert [(problem.path, "stale task worktree" in problem.message) for problem in problems] == [
        (leftover, True)
    ]
    init_project(desk.paths.root, force=True)
    assert not leftover.exists() and live.path.is_dir()
    assert validate_project(desk.paths.root) == []


def test_a_dependent_task_waits_until_its_dependency_is_merged(desk: Services) -> None:
    first = _work(desk, "Greet", {"app.py": "new\n"})
    second = desk.tasks.create("core", "backend", "Greet twice", depends_on=[first.id])

    assert second.id not in [task.id for task in desk.tasks.next_runnable(limit=10)]
    desk.reviews.approve(first.id, read_tip(desk, first.id))
    assert second.id in [task.id for task in desk.tasks.next_runnable(limit=10)]


# --- pinned to commits (issue 26: the diff shown is the commit merged; a branch cannot change the rules) ---


def _commit_in(worktree: Path, message: str) -> str:
    """Commit everything in a task's worktree as its agent would (`.ralph/` too), the new tip."""
    git(worktree, "add", "-A", "-f", "--", ".")
    git(worktree, "commit", "-qm", message)
    return git(worktree, "rev-parse", "HEAD")


def test_the_diff_is_pinned_to_the_merge_base_and_the_tip_it_was_read_between(desk: Services) -> None:
    task = _work(desk, "Greet loudly", {"app.py": "loud\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None

    read = desk.reviews.diff(task.id)

    assert read.pin is not None and read.rules_changed == ()
    assert read.pin.tip == git(desk.paths.root, "rev-parse", f"refs/heads/{worktree.branch}")
    assert read.pin.base == git(desk.paths.root, "rev-parse", "refs/heads/main")
    assert desk.reviews.get(task.id).pin == read.pin


def test_approving_a_commit_the_branch_moved_past_raises_naming_its_tip_and_queues_nothing(
    desk: Services,
) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    read = read_tip(desk, task.id)
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None
    (worktree.path / "extra.py").write_text("unseen\n")
    moved = _commit_in(worktree.path, "after the read")
    base = git(desk.paths.root, "rev-parse", "main")

    with pytest.raises(ReviewMovedError) as raised:
        desk.reviews.approve(task.id, read)

    assert (raised.value.tip, raised.value.approved) == (moved, read)
    assert f"it is at {moved} now, not {read}" in str(raised.value)
    assert git(desk.paths.root, "rev-parse", "main") == base and desk.reviews.queued(task.id) is None
    with pytest.raises(ReviewMovedError, match="needs the commit whose diff you read"):
        desk.reviews.approve(task.id, None)
    assert desk.reviews.approve(task.id, moved.upper()).status == TaskStatus.DONE.value


@pytest.mark.parametrize("commit", ["HEAD", "main", "abc1234", "-p", "0" * 39, ""])
def test_approve_takes_only_a_full_commit_id(desk: Services, commit: str) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})

    with pytest.raises(InvalidValueError, match=r"the full commit id \(40 hex digits\)"):
        desk.reviews.approve(task.id, commit)
    assert desk.reviews.queued(task.id) is None


def _change_rules(worktree: Path, prefix: str, how: str) -> None:
    """What a task branch does to the project's `.ralph/` (at `prefix` in the repository)."""
    rules = worktree / prefix / ".ralph"
    if how == "config":
        (rules / "config.json").write_text('{"review_gate": false}\n')
    elif how == "link":
        git(worktree, "rm", "-rq", "--cached", f"{prefix}.ralph")
        shutil.rmtree(rules)
        rules.symlink_to("/tmp")
    else:
        (rules / "state.json").write_text("{}\n")


@pytest.mark.parametrize("how", ["config", "link", "new state file"])
def test_a_branch_that_changes_ralph_is_flagged_in_its_review_and_its_approval_refused(
    desk: Services, how: str
) -> None:
    root = desk.paths.root
    task = _work(desk, "Greet", {"app.py": "new\n"})
    worktree = desk.workspaces.existing(task.id)
    assert worktree is not None
    config = (root / ".ralph" / "config.json").read_text()
    _change_rules(worktree.path, "", how)
    tip = _commit_in(worktree.path, "change the rules")
    base = git(root, "rev-parse", "main")

    flagged = desk.reviews.get(task.id).rules_changed
    assert flagged and all(path == ".ralph" or path.startswith(".ralph/") for path in flagged)
    assert desk.reviews.diff(task.id).rules_changed == flagged
    with pytest.raises(ReviewError, match="remove those changes from the branch") as raised:
        desk.reviews.approve(task.id, tip)

    assert flagged[0] in str(raised.value)
    assert git(root, "rev-parse", "main") == base and (root / ".ralph" / "config.json").read_text() == config
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW and desk.reviews.queued(task.id) is None


def test_in_a_project_below_the_top_of_its_repository_its_own_ralph_folder_is_guarded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# repo\n", "harbour/README.md": "# harbour\n"})
    paths = init_project(repo / "harbour", title="Below the top")
    commit_all(repo, "ralph-desk project")
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        task = services.tasks.create("core", "backend", "Chart")
        worktree = services.workspaces.prepare(task.id, task.title)
        assert worktree is not None
        (worktree.path / "harbour" / "chart.txt").write_text("chart\n")
        (worktree.path / ".ralph").mkdir()  # a folder of that name above the project: not its rules
        (worktree.path / ".ralph" / "notes.txt").write_text("top\n")
        _change_rules(worktree.path, "harbour/", "config")
        tip = _commit_in(worktree.path, "chart, and the rules")
        services.tasks.move(task.id, TaskStatus.IN_REVIEW.value, Mover.IMPORT)

        assert services.reviews.get(task.id).rules_changed == ("harbour/.ralph/config.json",)
        with pytest.raises(ReviewError, match=r"harbour/\.ralph/config\.json"):
            services.reviews.approve(task.id, tip)
    finally:
        services.close()


def test_a_carriage_return_in_a_file_cannot_forge_lines_or_files_in_the_diff_shown(desk: Services) -> None:
    # A lone CR is a character of the line, not a line break: read as one, it would forge a file section.
    forged = "safe = 1\rdiff --git a/secret.py b/secret.py\r+++ b/secret.py\r@@ -0,0 +1 @@\r+harmless\n"
    task = _work(desk, "Carriage", {"app.py": forged})

    files = parse_diff(desk.reviews.diff(task.id).text)

    assert [file.new_path for file in files] == ["app.py"]
    added = [line.text for hunk in files[0].hunks for line in hunk.lines if line.kind is LineKind.ADDED]
    assert added == [forged.removesuffix("\n")]
