"""Done is earned, end to end: the stand-in agent (and the real Claude Code CLI where installed) calls done
with a failing test; the desk runs the project's check in the task's worktree, sends the task back with the
failure in its next prompt, and the second session's fix passes the check and reaches review."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ralph_desk.domain.checks import Check, CheckPurpose, CheckStatus
from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.loop.test_review_e2e import edit
from tests.support.cli import ralph_desk_process
from tests.support.git_repo import commit_all, git

CHECK_SCRIPT = """\
import sys
sys.path.insert(0, ".")
import tide
print("collected 2 items")
if tide.HIGH != 2:
    print("FAILED test_tide.py::test_high_water - assert %r == 2" % tide.HIGH)
    print("E   AssertionError: high water is %r, not 2" % tide.HIGH)
    sys.exit(1)
print("2 passed")
"""
FAILED_MARKER = "# CHECKS FAILED after your last session"


def test_a_failing_check_sends_done_back_and_the_fix_reaches_review(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    (root / "tide.py").write_text("HIGH = 1\n")
    (root / "check_tide.py").write_text(CHECK_SCRIPT)
    tests = Check(name="tests", run=f"{sys.executable} check_tide.py", timeout_s=60)
    update_config(project.paths, review_gate=True, checks=[tests.model_dump()])
    commit_all(root, "tide and its check")
    task = project.tasks.create("core", "backend", "Raise high water")
    worktree = project.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    tide = worktree.path / "tide.py"
    start_api(
        **{
            FAILED_MARKER: edit(tide, "HIGH = 3\n", "HIGH = 2\n", "fixed: 2, as the test says"),
            heading(task.id): edit(tide, "HIGH = 1\n", "HIGH = 3\n", "raised high water"),
        }
    )
    loop = settings(agent, checks=(tests,), max_iterations=1)

    # First session: done, but its check fails. The task is back to pending, counted stuck.
    run_loop(project, loop)
    after_first = project.tasks.get(task.id)
    assert after_first.status is TaskStatus.PENDING and after_first.stuck_count == 1
    (first_session,) = project.sessions.list(task_id=task.id)
    assert first_session.outcome == SessionOutcome.CHECKS_FAILED.value
    (failed,) = project.checks.for_session(first_session.id)
    assert (failed.name, failed.status, failed.exit_code) == ("tests", CheckStatus.FAILED, 1)
    assert failed.purpose is CheckPurpose.SESSION and "FAILED test_tide.py::test_high_water" in failed.tail
    assert failed.commit == git(root, "rev-parse", worktree.ref)
    log = Path(failed.log_path or "")
    assert log.parent == project.paths.logs_dir / "checks" and "collected 2 items" in log.read_text()
    if sys.platform != "win32":
        assert log.stat().st_mode & 0o777 == 0o600

    # Second session: its prompt opens with the failure; it fixes the value, the check passes, review.
    run_loop(project, loop)
    prompt = project.paths.mcp_dir.joinpath("prompt.md").read_text()
    assert prompt.startswith(FAILED_MARKER)
    assert "## tests: `" in prompt and "exit code 1" in prompt and "AssertionError: high water is 3" in prompt
    assert "## Checks" in prompt and "- tests (required, 60 s)" in prompt
    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    (latest,) = project.checks.latest(task.id)
    assert latest.status is CheckStatus.PASSED and latest.exit_code == 0 and "2 passed" in latest.tail
    assert git(root, "show", f"{worktree.ref}:tide.py") == "HIGH = 2"

    # The evidence as a person reads it from a terminal: `review show --json`.
    shown = ralph_desk_process("review", "show", str(task.id), "--json", "--root", str(root))
    assert shown.returncode == 0, shown.stderr
    checks = json.loads(shown.stdout)["checks"]
    assert checks["verdict"] == "passed"
    (shown_run,) = checks["latest"]
    assert (shown_run["name"], shown_run["status"], shown_run["exit_code"]) == ("tests", "passed", 0)


def test_failing_checks_in_a_row_end_the_task_failed_with_the_reason(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    tests = Check(name="tests", run=f"{sys.executable} -c \"import sys; print('red'); sys.exit(3)\"")
    update_config(project.paths, checks=[tests.model_dump()])
    commit_all(root, "checks")
    task = project.tasks.create("core", "backend", "Never green")
    done = session(verb("done", summary="all good"))
    start_api(**{FAILED_MARKER: done, heading(task.id): done})
    run_loop(project, settings(stand_in(), checks=(tests,), stuck_threshold=2))
    failed = project.tasks.get(task.id)
    assert failed.status is TaskStatus.FAILED and failed.stuck_count == 2
    runs = project.checks.history(task.id)
    assert [run.exit_code for run in runs] == [3, 3]
    last = project.state_files.progress_tail(1)
    assert "done, but its checks failed: failed, stuck count 2" in last
    assert "checks failed after done (tests exit 3)" in last


def test_a_new_worktree_gets_its_setup_run_once_and_only_ignored_files_copied(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    (root / ".gitignore").write_text(".env\nsetup-ran.txt\n")
    (root / ".env").write_text("TOKEN=local-secret\n")
    setup = f"\"{sys.executable}\" -c \"open('setup-ran.txt', 'a').write('once\\n')\""
    update_config(project.paths, setup=setup, worktree_files=[".env", "notes.txt"])
    commit_all(root, "ignore rules")
    # Untracked and not ignored: never copied in (a session would commit it).
    (root / "notes.txt").write_text("untracked, not ignored\n")
    task = project.tasks.create("core", "backend", "Use the token")
    partial = session(verb("partial", summary="half", remaining="the rest"))
    start_api(**{heading(task.id): partial + partial})
    loop = settings(stand_in(), setup=setup, worktree_files=(".env", "notes.txt"), max_iterations=2)

    run_loop(project, loop)

    worktree = project.workspaces.existing(task.id)
    assert worktree is not None
    assert (worktree.path / "setup-ran.txt").read_text() == "once\n"  # two sessions, one setup
    assert (worktree.path / ".env").read_text() == "TOKEN=local-secret\n"
    assert not (worktree.path / "notes.txt").exists()
    if sys.platform != "win32":
        assert (worktree.path / ".env").stat().st_mode & 0o777 == 0o600
    assert ".env" not in git(root, "show", "--stat", "--format=", worktree.ref)
    (run,) = [run for run in project.checks.history(task.id) if run.name == "setup"]
    assert run.status is CheckStatus.PASSED and not run.required
