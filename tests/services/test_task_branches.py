"""A task's branch is the one recorded as its own, never one found by its name: a reused task id, a second
project in the same repository and tags named like the base or the branch adopt or delete nothing."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config

from ralph_desk.demo_review import put_in_review, run_session
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from ralph_desk.store import migrate
from ralph_desk.store.engine import create_db_engine
from ralph_desk.store.urls import is_sqlite
from ralph_desk.vcs import worktrees
from tests.postgres import server
from tests.support.cli import ralph_desk_process
from tests.support.git_repo import commit_all, git, make_repo
from tests.support.review_project import open_review_project


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"README.md": "# tides\n"}, "Branches")
    yield services
    services.close()


def tip(root: Path, ref: str) -> str | None:
    """The commit `ref` (a full ref) is on, or None when there is no such ref."""
    listing = git(root, "for-each-ref", "--format=%(refname) %(objectname)", ref)
    return listing.split()[1] if listing.startswith(ref + " ") else None


def in_terminal(services: Services, *args: str) -> subprocess.CompletedProcess[str]:
    """`ralph-desk ARGS` on this project, as a person types it."""
    return ralph_desk_process(*args, "--root", str(services.paths.root), "--db-url", services.db.url)


def test_a_new_task_given_a_deleted_tasks_id_gets_a_fresh_branch_and_its_discard_leaves_the_old_one(
    desk: Services,
) -> None:
    root = desk.paths.root
    old = desk.tasks.create("core", "backend", "Chart the tides")
    old_tree = put_in_review(desk, old.id, ({"tides.txt": "high 2\n"}, "charted"))
    deleted = in_terminal(desk, "delete", str(old.id))
    assert deleted.returncode == 0 and "kept the branch" in deleted.stdout, deleted.stderr
    old_tip = tip(root, old_tree.ref)
    assert old_tip is not None

    new = desk.tasks.create("core", "backend", "Chart the tides")
    if new.id != old.id:
        pytest.skip("this database never gives an id again (PostgreSQL's sequences)")

    assert desk.workspaces.existing(new.id) is None  # the kept branch is not the new task's
    fresh = run_session(desk, new.id, 2, {"moon.txt": "full\n"}, "moon drawn")  # 1 is the old task's
    desk.tasks.move(new.id, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
    assert fresh.ref != old_tree.ref and fresh.ref.startswith(old_tree.ref + "-")
    assert git(root, "merge-base", fresh.ref, "refs/heads/main") == git(root, "rev-parse", "refs/heads/main")
    assert "tides.txt" not in git(
        root, "ls-tree", "--name-only", fresh.ref
    )  # from the base, not the old work

    discarded = in_terminal(desk, "review", "discard", str(new.id))

    assert discarded.returncode == 0, discarded.stderr
    assert tip(root, fresh.ref) is None and not fresh.path.exists()
    assert tip(root, old_tree.ref) == old_tip  # the deleted task's work is still there
    assert git(root, "show", f"{old_tip}:tides.txt") == "high 2"


def test_two_projects_in_one_repository_keep_to_their_own_branches_and_worktrees(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a/README.md": "# A\n", "b/README.md": "# B\n"})
    a_paths, b_paths = ProjectPaths.at(repo / "a"), ProjectPaths.at(repo / "b")
    # Each project has a database of its own (on PostgreSQL, B gets a second one).
    b_url = None if is_sqlite(a_paths.db_url()) else server.create_database()
    for paths, url in ((a_paths, None), (b_paths, b_url)):
        made = ralph_desk_process("init", str(paths.root), *(("--db-url", url) if url else ()))
        assert made.returncode == 0, made.stderr
    commit_all(repo, "two ralph-desk projects")
    first, second = Services.open(a_paths), Services.open(b_paths, b_url)
    try:
        for services in (first, second):
            services.features.create("core", "Core")
            services.disciplines.create("backend", "Backend", "server", "#336699")
        a_task = first.tasks.create("core", "backend", "Write the parser")
        b_task = second.tasks.create("core", "backend", "Write the parser")
        assert a_task.id == b_task.id == 1
        a_tree = put_in_review(first, a_task.id, ({"a/parser.py": "A = 1\n"}, "parsed"))
        b_tree = put_in_review(second, b_task.id, ({"b/parser.py": "B = 1\n"}, "parsed"))

        assert a_tree.ref != b_tree.ref
        assert a_tree.path.is_relative_to(repo / "a") and b_tree.path.is_relative_to(repo / "b")
        a_tip = tip(repo, a_tree.ref)
        assert first.workspaces.existing(a_task.id) == a_tree
        assert second.workspaces.existing(b_task.id) == b_tree

        discarded = in_terminal(second, "review", "discard", str(b_task.id))
        assert discarded.returncode == 0, discarded.stderr
        second.tasks.delete(b_task.id)
        assert second.retiring.sweep() == []

        assert tip(repo, b_tree.ref) is None and not b_tree.path.exists()
        assert tip(repo, a_tree.ref) == a_tip and (a_tree.path / "a" / "parser.py").is_file()
        assert first.workspaces.existing(a_task.id) == a_tree
        assert first.retiring.sweep() == [] and a_tree.path.is_dir()
    finally:
        first.close()
        second.close()
        if b_url is not None:
            server.drop_database(b_url)


def test_tags_named_like_the_base_or_the_task_branch_never_stand_in_for_them(desk: Services) -> None:
    root = desk.paths.root
    main = git(root, "rev-parse", "refs/heads/main")
    git(root, "checkout", "-q", "-b", "elsewhere")
    (root / "elsewhere.txt").write_text("not on main\n")
    other = commit_all(root, "a commit that is not on main")
    git(root, "checkout", "-q", "main")
    git(root, "tag", "main", other)  # `main` now names this tag first, for git's short-name lookup
    task = desk.tasks.create("core", "backend", "Mark the buoys")
    git(root, "tag", "ralph/1-mark-the-buoys", other)

    worktree = desk.workspaces.prepare(task.id, task.title)

    assert worktree is not None and worktree.ref == "refs/heads/ralph/1-mark-the-buoys"
    assert tip(root, worktree.ref) == main and not (worktree.path / "elsewhere.txt").exists()
    assert git(worktree.path, "symbolic-ref", "HEAD") == worktree.ref
    git(root, "worktree", "remove", "--force", str(worktree.path))  # gone: the next session makes it again
    again = desk.workspaces.prepare(task.id, task.title)
    assert again == worktree and git(worktree.path, "symbolic-ref", "HEAD") == worktree.ref
    assert desk.workspaces.existing(task.id) == worktree

    discarded = in_terminal(desk, "review", "discard", str(task.id))

    assert discarded.returncode == 0, discarded.stderr
    assert tip(root, worktree.ref) is None and not worktree.path.exists()
    assert git(root, "rev-parse", "refs/tags/ralph/1-mark-the-buoys") == other  # the tag is not the desk's
    assert git(root, "rev-parse", "refs/heads/main") == main


def downgrade_to_0007(url: str) -> None:
    """Take the database back to revision 0007, as an older ralph-desk left it (no branch records)."""
    engine = create_db_engine(url)
    try:
        with engine.begin() as connection:
            config = Config()
            config.set_main_option("script_location", str(migrate.MIGRATIONS_DIR))
            config.attributes["connection"] = connection
            command.downgrade(config, "0007")
        assert migrate.current_revision(engine) == "0007"
    finally:
        engine.dispose()


def test_a_project_from_before_the_records_keeps_its_task_in_review_and_adopts_no_deleted_tasks_branch(
    tmp_path: Path,
) -> None:
    desk = open_review_project(tmp_path / "repo", {"README.md": "# tides\n"}, "Upgraded")
    root, url = desk.paths.root, desk.db.url
    try:
        reviewed = desk.tasks.create("core", "backend", "Chart the tides")
        in_review = put_in_review(desk, reviewed.id, ({"tides.txt": "high 2\n"}, "charted"))
        gone = desk.tasks.create("core", "backend", "Draw the moon")
        gone_tree = put_in_review(desk, gone.id, ({"moon.txt": "full\n"}, "drawn"))
        assert "kept the branch" in (desk.retiring.delete_task(gone.id) or "")
    finally:
        desk.close()
    downgrade_to_0007(url)  # the branches stay, named as every ralph-desk named them; no record says whose
    gone_tip = tip(root, gone_tree.ref)

    shown = ralph_desk_process("review", "show", str(reviewed.id), "--root", str(root), "--db-url", url)

    assert shown.returncode == 0, shown.stderr
    assert "+high 2" in shown.stdout and in_review.branch in shown.stdout
    desk = Services.open(ProjectPaths.at(root), url)
    try:
        assert desk.workspaces.existing(reviewed.id) == in_review
        again = desk.tasks.create("core", "backend", "Draw the moon")  # on SQLite, the deleted task's id
        fresh = desk.workspaces.prepare(again.id, again.title)
        assert fresh is not None and fresh.ref != gone_tree.ref
        assert tip(root, fresh.ref) == git(root, "rev-parse", "refs/heads/main")
        assert tip(root, gone_tree.ref) == gone_tip
    finally:
        desk.close()
    shown_tip = tip(root, in_review.ref)
    assert shown_tip is not None and shown_tip in shown.stdout  # the commit the person read
    command = ("review", "approve", str(reviewed.id), "--commit", shown_tip, "--root", str(root))
    approved = ralph_desk_process(*command, "--db-url", url)
    assert approved.returncode == 0, approved.stderr
    assert git(root, "show", "refs/heads/main:tides.txt") == "high 2"
    assert tip(root, in_review.ref) is None and tip(root, gone_tree.ref) == gone_tip


def test_after_the_upgrade_each_project_in_one_repository_adopts_only_the_branch_holding_its_own_work(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a/README.md": "# A\n", "b/README.md": "# B\n"})
    a_paths, b_paths = ProjectPaths.at(repo / "a"), ProjectPaths.at(repo / "b")
    b_url = None if is_sqlite(a_paths.db_url()) else server.create_database()
    for paths, url in ((a_paths, None), (b_paths, b_url)):
        made = ralph_desk_process("init", str(paths.root), *(("--db-url", url) if url else ()))
        assert made.returncode == 0, made.stderr
    commit_all(repo, "two ralph-desk projects")
    trees = []
    for paths, url, name in ((a_paths, None, "a"), (b_paths, b_url, "b")):
        services = Services.open(paths, url)
        try:
            services.features.create("core", "Core")
            services.disciplines.create("backend", "Backend", "server", "#336699")
            task = services.tasks.create("core", "backend", "Write the parser")
            trees.append(put_in_review(services, task.id, ({f"{name}/parser.py": f"{name} = 1\n"}, "parsed")))
            url = services.db.url
        finally:
            services.close()
        downgrade_to_0007(url)  # as if both were made by an older ralph-desk
    a_tree, b_tree = trees
    assert (a_tree.task_id, b_tree.task_id) == (1, 1) and b_tree.ref == a_tree.ref + "-2"

    try:
        for paths, url, tree, other in ((b_paths, b_url, b_tree, "a"), (a_paths, None, a_tree, "b")):
            shown = ralph_desk_process(
                "review", "show", "1", "--root", str(paths.root), *(("--db-url", url) if url else ())
            )
            assert shown.returncode == 0, shown.stderr
            assert tree.branch in shown.stdout and f"{other}/parser.py" not in shown.stdout
    finally:
        if b_url is not None:
            server.drop_database(b_url)


def test_an_old_branch_is_adopted_by_work_of_its_own_never_by_a_base_commit_every_branch_holds(
    desk: Services,
) -> None:
    # On upgrade, a branch is told apart by a commit a session of its task made. A base commit proves
    # nothing: another project's `ralph/1-…` branch made from the same base holds it too.
    root = desk.paths.root
    base = git(root, "rev-parse", "refs/heads/main")
    git(root, "update-ref", "refs/heads/ralph/1-another-project", base)
    refs = worktrees.task_refs(root)
    worktrees_dir = desk.workspaces.worktrees_dir

    assert worktrees.legacy_branch(root, worktrees_dir, 1, base, refs, set(), "refs/heads/main") is None

    git(root, "checkout", "-q", "ralph/1-another-project")
    (root / "work.txt").write_text("the task's own work\n")
    git(root, "add", "work.txt")
    git(root, "commit", "-qm", "work")
    own = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    found = worktrees.legacy_branch(root, worktrees_dir, 1, own, refs, set(), "refs/heads/main")
    assert found == "refs/heads/ralph/1-another-project"
