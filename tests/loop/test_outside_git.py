"""The loop outside a git repository: edits are seen in the file tree, so progress is told from idling."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.loop import filetree
from ralph_desk.project import init_project, read_config
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, run_loop, session, settings, verb

pytestmark = [pytest.mark.slow]


@pytest.fixture
def plain_project(tmp_path: Path) -> Iterator[Services]:
    """A project in a plain folder (no git anywhere above it): feature `core`, discipline `backend`."""
    root = tmp_path / "plain"
    root.mkdir()
    (root / "README.md").write_text("# plain\n")
    services = Services.open(init_project(root, title="No git"))
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    yield services
    services.close()


def test_a_partial_that_edits_files_three_times_stays_pending(
    agent: Agent, plain_project: Services, start_api: StartApi
) -> None:
    task = plain_project.tasks.create("core", "backend", "Grow the notes")
    notes = plain_project.paths.root / "notes.md"
    script = [
        turn
        for attempt in range(3)
        for turn in session(
            ("Write", {"file_path": str(notes), "content": f"attempt {attempt}\n"}),
            verb("partial", summary=f"wrote attempt {attempt}", remaining="write more"),
        )
    ]
    start_api(**{heading(task.id): script})
    run_loop(plain_project, settings(agent, max_iterations=3))
    assert notes.read_text() == "attempt 2\n"
    recorded = plain_project.tasks.get(task.id)
    assert recorded.status is TaskStatus.PENDING and recorded.stuck_count == 0
    sessions = plain_project.sessions.list(task_id=task.id)
    assert [s.outcome for s in sessions] == [SessionOutcome.REQUEUED.value] * 3
    assert all(s.changed_files == ("notes.md",) for s in sessions)


def test_a_partial_that_changes_nothing_three_times_fails(
    agent: Agent, plain_project: Services, start_api: StartApi
) -> None:
    task = plain_project.tasks.create("core", "backend", "Talk only")
    script = [
        turn
        for _ in range(3)
        for turn in session(verb("partial", summary="thought about it", remaining="everything"))
    ]
    start_api(**{heading(task.id): script})
    run_loop(plain_project, settings(agent, max_iterations=3))
    recorded = plain_project.tasks.get(task.id)
    assert recorded.status is TaskStatus.FAILED and recorded.stuck_count == 3
    assert all(s.changed_files == () for s in plain_project.sessions.list(task_id=task.id))


def test_done_with_the_review_gate_on_finishes_the_task_in_the_project_folder_as_before(
    agent: Agent, plain_project: Services, start_api: StartApi
) -> None:
    # Without git there is no branch to review or merge: done is done, as before the review gate.
    assert read_config(plain_project.paths).review_gate
    task = plain_project.tasks.create("core", "backend", "Write the notes")
    notes = plain_project.paths.root / "notes.md"
    script = session(
        ("Write", {"file_path": str(notes), "content": "the notes\n"}), verb("done", summary="notes written")
    )
    start_api(**{heading(task.id): script})
    run_loop(plain_project, settings(agent, max_iterations=1))
    assert plain_project.tasks.get(task.id).status is TaskStatus.DONE
    assert notes.read_text() == "the notes\n"
    (recorded,) = plain_project.sessions.list(task_id=task.id)
    assert recorded.outcome == SessionOutcome.DONE.value and recorded.changed_files == ("notes.md",)
    assert (recorded.head_before, recorded.head_after) == (None, None)
    assert not plain_project.paths.worktrees_dir.exists()
    assert plain_project.reviews.list() == []


def test_the_file_tree_snapshot_skips_project_state_and_tool_folders(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    for ignored in (".ralph", ".git", "node_modules", ".venv", "__pycache__"):
        (tmp_path / ignored).mkdir()
        (tmp_path / ignored / "inside.txt").write_text("noise\n")
    (tmp_path / "outside").symlink_to(tmp_path.parent)
    before = filetree.snapshot(tmp_path)
    assert set(before) == {"src/app.py", "outside"}
    (tmp_path / "node_modules" / "inside.txt").write_text("more noise\n")
    (tmp_path / "src" / "app.py").write_text("x = 22\n")
    (tmp_path / "src" / "new.py").write_text("")
    assert filetree.changed(before, filetree.snapshot(tmp_path)) == ["src/app.py", "src/new.py"]


def test_checks_run_in_the_project_folder_and_a_pass_makes_the_task_done(
    plain_project: Services, start_api: StartApi
) -> None:
    from ralph_desk.domain.checks import Check, CheckStatus
    from tests.loop.conftest import stand_in

    root = plain_project.paths.root
    task = plain_project.tasks.create("core", "backend", "Write the notes")
    notes = root / "notes.md"
    check = Check(name="notes", run=f'"{sys.executable}" -c "open(\'notes.md\').read()"', timeout_s=60)
    start_api(
        **{
            heading(task.id): session(
                ("Write", {"file_path": str(notes), "content": "written\n"}), verb("done", summary="notes")
            )
        }
    )
    run_loop(plain_project, settings(stand_in(), checks=(check,)))
    assert plain_project.tasks.get(task.id).status is TaskStatus.DONE
    (run,) = plain_project.checks.latest(task.id)
    assert run.status is CheckStatus.PASSED and run.commit is None
