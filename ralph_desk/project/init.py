"""`init`: create a project's `.ralph/` folder with its settings and a migrated database (DESIGN §3)."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from ralph_desk.project import contained
from ralph_desk.project.config import ProjectConfig, write_config
from ralph_desk.project.contained import PRIVATE_DIR_MODE
from ralph_desk.project.errors import ProjectError, ProjectExistsError
from ralph_desk.project.paths import ProjectPaths

log = logging.getLogger("ralph_desk.project")
TITLE_LIMIT = 200
BRANCH_REF = "ref: refs/heads/"

GITIGNORE = """\
# Written by ralph-desk: runtime state stays out of version control (README: what .ralph/ holds).
db/
logs/
mcp/sessions/
mcp/context.json
mcp/prompt.md
worktrees/
sandbox/
*.lock
merge-journal.json
progress.txt
learnings.txt
"""


def complete_gitignore(paths: ProjectPaths) -> list[str]:
    """Add to `.ralph/.gitignore` the lines an older ralph-desk did not write; the lines added.

    A missing file is left for `validate` to name; a link in its place is refused, never followed.
    """
    path = paths.ralph / ".gitignore"
    if not paths.ralph.is_dir() or contained.is_link(paths.ralph):
        return []
    text = contained.read_text(paths.root, path, missing="")
    present = {line.strip() for line in text.splitlines()}
    wanted = [line for line in GITIGNORE.splitlines() if line and not line.startswith("#")]
    missing = [line for line in wanted if line not in present]
    if text and missing:
        separator = "" if text.endswith("\n") else "\n"
        contained.write_text(paths.root, path, text + separator + "\n".join(missing) + "\n")
    return missing if text else []


def init_project(
    root: str | os.PathLike[str],
    title: str | None = None,
    force: bool = False,
    db_url: str | None = None,
) -> ProjectPaths:
    """Create `root/.ralph/` (DESIGN §3) with a migrated database whose project is titled `title`.

    With `force`, an existing folder gets fresh configuration (config.json, .gitignore, any missing
    folders and files) while its database, progress.txt, learnings.txt and logs are kept; every link in
    it is removed (its target left alone) and the files ralph-desk owns are made plain. An existing
    database keeps its project title unless `title` is given.
    """
    paths = ProjectPaths.at(root)
    if paths.root.exists() and not paths.root.is_dir():
        raise ProjectError(f"{paths.root}: exists and is not a folder")
    if (paths.ralph.exists() or contained.is_link(paths.ralph)) and not force:
        raise ProjectExistsError(
            f"{paths.ralph}: already exists; use --force to re-create its configuration "
            "(the database, progress.txt and learnings.txt are kept)"
        )
    project_title = _checked_title(title if title is not None else paths.root.name or "project")
    if contained.is_link(paths.ralph) or paths.ralph.is_dir():
        _remove_links(paths)
    if paths.ralph.exists() and not paths.ralph.is_dir():
        raise ProjectError(f"{paths.ralph}: exists and is not a folder")
    paths.root.mkdir(parents=True, exist_ok=True)
    for folder in (paths.ralph, paths.mcp_dir, paths.clients_dir, paths.logs_dir):
        contained.make_folder(paths.root, folder)
    for private in (paths.db_dir, paths.sessions_dir):
        contained.make_folder(paths.root, private, PRIVATE_DIR_MODE)
        private.chmod(PRIVATE_DIR_MODE)
    for state_file in (paths.learnings_file, paths.progress_file):
        contained.append_bytes(paths.root, state_file, b"")
    contained.write_text(paths.root, paths.ralph / ".gitignore", GITIGNORE)
    write_config(paths, ProjectConfig(base_branch=checked_out_branch(paths.root)))
    if force:
        _repair_worktrees(paths)
    _init_database(paths.db_url(db_url), project_title, overwrite=title is not None, force=force)
    return paths


def _repair_worktrees(paths: ProjectPaths) -> None:
    """Remove task worktree folders git no longer knows (their branches, and so their work, stay)."""
    from ralph_desk.vcs import worktrees
    from ralph_desk.vcs.places import GitError
    from ralph_desk.vcs.refs import is_repository

    if (
        contained.is_link(paths.worktrees_dir)
        or not paths.worktrees_dir.is_dir()
        or not is_repository(paths.root)
    ):
        return
    try:
        worktrees.repair(paths.root, paths.worktrees_dir)
    except GitError as error:
        raise ProjectError(f"{paths.worktrees_dir}: could not repair the task worktrees: {error}") from None


def _remove_links(paths: ProjectPaths) -> None:
    """Delete every link in `.ralph/` (`init --force`): what they point to is never read or written."""
    for link in contained.links_below(paths.ralph, skip=contained.UNCHECKED_FOLDERS):
        os.unlink(link)
        log.warning(
            "%s: removed a symbolic link (its target is untouched); a plain file takes its place", link
        )


def checked_out_branch(root: Path) -> str | None:
    """The git branch checked out in `root` (None outside a repository, or on a detached head)."""
    # Read from the repository's HEAD file, not by running git: init works where git is not installed.
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_file():  # a worktree or submodule: the file names the real git folder
            pointer = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            dot_git = (folder / pointer.removeprefix("gitdir:").strip()).resolve()
        if dot_git.is_dir():
            return _branch_of(dot_git / "HEAD")
    return None


def _branch_of(head: Path) -> str | None:
    try:
        text = head.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith(BRANCH_REF):
        return None  # a detached head names a commit, not a branch
    return text.removeprefix(BRANCH_REF) or None


def _checked_title(title: str) -> str:
    cleaned = title.strip()
    if not cleaned or len(cleaned) > TITLE_LIMIT or "\x00" in cleaned:
        raise ProjectError(f"invalid title {title!r}; allowed: 1 to {TITLE_LIMIT} characters")
    return cleaned


def _init_database(url: str, title: str, overwrite: bool, force: bool) -> None:
    # Imported here: opening a database pulls in the ORM, which `ProjectPaths` users do not need.
    from ralph_desk.store import project_info
    from ralph_desk.store.database import Database
    from ralph_desk.store.errors import StoreError

    try:
        database = Database(url)
    except StoreError as error:  # damaged, read-only, a full disk: said in words, the file left as it is
        done = "the configuration was re-created, but " if force else ""
        raise ProjectError(f"{done}the database was left as it is: {error}") from None
    try:
        with database.write() as unit:
            existing = project_info.get(unit)
            if existing is None:
                project_info.upsert(unit, title, "")
            elif overwrite:
                project_info.upsert(unit, title, existing.description)
    finally:
        database.dispose()


def remove_project(paths: ProjectPaths) -> None:
    """Delete a project's `.ralph/` folder (used to undo a half-made demo)."""
    shutil.rmtree(paths.ralph, ignore_errors=True)
