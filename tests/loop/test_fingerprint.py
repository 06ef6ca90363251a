"""The stagnation fingerprint: what a session must change to count as having done something."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.loop.fingerprint import project_fingerprint
from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from ralph_desk.store.fingerprint import BOOKKEEPING_TABLE_NAMES, CONTENT_TABLE_NAMES, content_fingerprint
from ralph_desk.store.schema import Base
from ralph_desk.vcs.tree_state import git_tree_state
from tests.support.git_repo import output as git

pytestmark = pytest.mark.usefixtures("no_database_url_from_the_environment")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit (chart.py) and a ralph-desk project at its top."""
    root = tmp_path / "harbour"
    root.mkdir()
    git(root, "init", "-q")
    (root / "chart.py").write_text("print('tides')\n")
    git(root, "add", "chart.py")
    git(root, "commit", "-q", "-m", "start")
    return root


@pytest.fixture
def services(repo: Path) -> Iterator[Services]:
    """The project's services, with one feature, one discipline and one task (#1)."""
    opened = Services.open(init_project(repo, title="Harbour"))
    opened.features.create("charts", "Charts")
    opened.disciplines.create("frontend", "Frontend", icon="code", color="#3b82f6")
    opened.tasks.create("charts", "frontend", "Draw the tide chart")
    yield opened
    opened.close()


def database_fingerprint(services: Services) -> str:
    with services.db.read() as unit:
        return content_fingerprint(unit)


def record_a_signal_only_session(services: Services) -> None:
    """What a session that did nothing but say `partial` leaves behind: bookkeeping rows only."""
    run = services.sessions.start_loop_run(agent="claude")
    services.sessions.start_session(
        "s-1", task_id=1, recipe="task_execution", agent="claude", loop_run_id=run.id, iteration=1
    )
    services.signals.record(1, "s-1", "learned", text="Nothing to see.", kind="discovery")
    services.signals.record(1, "s-1", "partial", summary="Looked around.", remaining="Everything.")
    services.sessions.finish_session("s-1", outcome="requeued", closing_verb="partial")


def test_every_table_is_either_content_or_bookkeeping() -> None:
    tables = set(Base.metadata.tables) | {"alembic_version"}

    assert set(CONTENT_TABLE_NAMES) | set(BOOKKEEPING_TABLE_NAMES) == tables
    assert not set(CONTENT_TABLE_NAMES) & set(BOOKKEEPING_TABLE_NAMES)


def test_the_database_fingerprint_ignores_signals_and_session_records(services: Services) -> None:
    before = database_fingerprint(services)

    record_a_signal_only_session(services)

    assert database_fingerprint(services) == before


CHANGES: dict[str, Callable[[Services], object]] = {
    "task status": lambda s: s.tasks.move(1, TaskStatus.DONE.value, Mover.IMPORT),
    "task field": lambda s: s.tasks.update(1, hints="Use d3."),
    "new task": lambda s: s.tasks.create("charts", "frontend", "Add a legend"),
    "dependency": lambda s: s.tasks.add_dependency(s.tasks.create("charts", "frontend", "Schema").id, 1),
    "comment": lambda s: s.comments.add(1, "agent", "Axes drawn."),
    "feature": lambda s: s.features.update("charts", description="Tide charts."),
    "feature learning": lambda s: s.features.append_learning("charts", "Heights are metres."),
    "discipline": lambda s: s.disciplines.update("frontend", conventions="Prettier."),
    "project": lambda s: s.project.set("Harbour", description="A harbour app."),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_the_database_fingerprint_changes_with_the_projects_content(services: Services, change: str) -> None:
    before = database_fingerprint(services)

    CHANGES[change](services)

    assert database_fingerprint(services) != before


def test_a_repeated_learning_changes_the_fingerprint_through_its_hit_count(services: Services) -> None:
    services.features.append_learning("charts", "Heights are metres.")
    before = database_fingerprint(services)

    services.features.append_learning("charts", "Heights are metres.")

    assert database_fingerprint(services) != before


def test_the_project_fingerprint_is_stable_for_a_session_that_only_signalled(
    services: Services, repo: Path
) -> None:
    before = project_fingerprint(services, repo)

    record_a_signal_only_session(services)
    (services.paths.mcp_dir / "prompt.md").write_text("the next prompt\n")
    (services.paths.logs_dir / "20260211-090000_s-1.log").write_text("transcript\n")

    assert project_fingerprint(services, repo) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda s, repo: s.tasks.move(1, TaskStatus.BLOCKED.value, Mover.IMPORT),
        lambda s, repo: s.comments.add(1, "agent", "Axes drawn."),
        lambda s, repo: s.state_files.append_progress("task #1: partial"),
        lambda s, repo: s.state_files.append_learning("Heights are metres."),
        lambda s, repo: (repo / "chart.py").write_text("print('tides and currents')\n"),
        lambda s, repo: (repo / "legend.py").write_text("LEGEND = True\n"),
        lambda s, repo: (repo / "chart.py").unlink(),
        lambda s, repo: git(repo, "commit", "-q", "--allow-empty", "-m", "empty"),
    ],
    ids=[
        "task",
        "comment",
        "progress.txt",
        "learnings.txt",
        "tracked file",
        "untracked file",
        "deleted file",
        "commit",
    ],
)
def test_the_project_fingerprint_changes_with_any_real_work(
    services: Services, repo: Path, change: Callable[[Services, Path], object]
) -> None:
    before = project_fingerprint(services, repo)

    change(services, repo)

    assert project_fingerprint(services, repo) != before


def test_editing_an_already_changed_file_again_changes_the_fingerprint(
    services: Services, repo: Path
) -> None:
    (repo / "chart.py").write_text("print('first edit')\n")
    before = project_fingerprint(services, repo)

    (repo / "chart.py").write_text("print('second edit')\n")

    assert project_fingerprint(services, repo) != before


def test_a_renamed_file_is_seen_and_its_content_counts(repo: Path) -> None:
    git(repo, "mv", "chart.py", "tide_chart.py")
    before = git_tree_state(repo)

    (repo / "tide_chart.py").write_text("print('renamed and edited')\n")

    assert b"tide_chart.py" in before
    assert git_tree_state(repo) != before


def test_files_inside_the_excluded_folder_do_not_count(repo: Path) -> None:
    before = git_tree_state(repo, exclude=repo / ".ralph")

    (repo / ".ralph").mkdir()
    (repo / ".ralph" / "prompt.md").write_text("prompt\n")
    (repo / ".ralphish.txt").write_text("not excluded\n")

    after = git_tree_state(repo, exclude=repo / ".ralph")
    assert b".ralph/" not in after
    assert b".ralphish.txt" in after
    assert after != before


def test_a_repository_without_commits_has_a_state_too(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    before = git_tree_state(tmp_path)

    (tmp_path / "first.py").write_text("x = 1\n")

    assert before.startswith(b"HEAD (no commits yet)")
    assert git_tree_state(tmp_path) != before


def test_a_folder_that_is_not_a_git_repository_contributes_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "notes.txt").write_text("hello\n")

    assert git_tree_state(outside) == b""


def test_the_project_fingerprint_works_outside_git(tmp_path: Path) -> None:
    opened = Services.open(init_project(tmp_path / "plain", title="Plain"))
    try:
        before = project_fingerprint(opened, opened.paths.root)
        assert project_fingerprint(opened, opened.paths.root) == before
        opened.state_files.append_progress("something happened")
        assert project_fingerprint(opened, opened.paths.root) != before
    finally:
        opened.close()
