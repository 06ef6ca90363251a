"""`validate`: everything missing or broken in a project's `.ralph/` folder, found without changing it."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import suppress

from ralph_desk.domain.enums import Recipe
from ralph_desk.project import contained
from ralph_desk.project.config import config_problems, read_config
from ralph_desk.project.errors import Problem, ProjectError
from ralph_desk.project.paths import ProjectPaths
from ralph_desk.store.health import READ_ONLY_FOLDER, writable

LINK_PROBLEM = (
    "a symbolic link: ralph-desk never reads or writes through a link in .ralph/; "
    "`ralph-desk init --force` replaces it with a plain file"
)
READ_ONLY = (
    "read-only: ralph-desk writes its database, session files and logs here, so it cannot open the "
    "project (nothing is damaged); make the folder writable, or copy the project somewhere writable"
)
CONTEXT_TYPES: Mapping[str, tuple[type, ...]] = {
    "session_id": (str,),
    "recipe": (str,),
    "discipline": (str, type(None)),
    "feature": (str, type(None)),
    "task_id": (int, type(None)),
    "disabled_tools": (list,),
}


def validate_project(root: str | os.PathLike[str], db_url: str | None = None) -> list[Problem]:
    """Everything missing or broken in `root/.ralph/` (empty when the project is sound); changes nothing."""
    paths = ProjectPaths.at(root)
    found = contained.links_below(paths.ralph, contained.UNCHECKED_FOLDERS)
    links = [Problem(link, LINK_PROBLEM) for link in found]
    if contained.is_link(paths.ralph):
        return links
    if not paths.ralph.is_dir():
        return [
            Problem(paths.ralph, "missing: this folder is not a ralph-desk project; run `ralph-desk init`")
        ]
    problems = links
    read_only = not writable(paths.ralph)
    if read_only:
        problems.insert(0, Problem(paths.ralph, READ_ONLY))
    for folder in (paths.db_dir, paths.mcp_dir, paths.sessions_dir, paths.clients_dir, paths.logs_dir):
        if not folder.is_dir() and not contained.is_link(folder):
            problems.append(Problem(folder, "missing folder" if not folder.exists() else "not a folder"))
    problems.extend(_private_folder_problems(paths))
    for state_file in (paths.learnings_file, paths.progress_file, paths.ralph / ".gitignore"):
        if not state_file.is_file() and not contained.is_link(state_file):
            problems.append(Problem(state_file, "missing file" if not state_file.exists() else "not a file"))
    for check in (_config_file_problems, _context_problems):
        with suppress(contained.LinkRefusedError):  # the link is a problem listed already
            problems.extend(check(paths))
    with suppress(contained.LinkRefusedError):
        problems.extend(_database_problems(paths.db_url(db_url), read_only))
    problems.extend(_worktree_problems(paths))
    problems.extend(base_branch_problems(paths))
    # A read-only place first: it explains the rest (a database SQLite cannot open there is not damaged).
    problems.sort(key=lambda problem: problem.message not in (READ_ONLY, READ_ONLY_FOLDER))
    return problems


def opening_problems(problems: Sequence[Problem]) -> list[Problem]:
    """The problems that keep the project from opening (not those that only refuse a loop start)."""
    return [problem for problem in problems if problem.blocks_opening]


def is_read_only(problems: Sequence[Problem]) -> bool:
    """Whether these problems say the project folder or its database's is read-only (not damaged)."""
    return any(problem.message in (READ_ONLY, READ_ONLY_FOLDER) for problem in problems)


def _private_folder_problems(paths: ProjectPaths) -> list[Problem]:
    if os.name != "posix":
        return []
    problems: list[Problem] = []
    for folder, what in ((paths.sessions_dir, "session credentials"), (paths.db_dir, "the database")):
        if folder.is_dir() and not contained.is_link(folder):
            mode = folder.stat().st_mode & 0o777
            if mode & 0o077:
                problems.append(Problem(folder, f"mode {mode:04o} lets others read {what}; expected 0700"))
    return problems


def _database_problems(url: str, read_only: bool = False) -> list[Problem]:
    # Imported here: the command line checks projects without loading the database layer up front.
    from ralph_desk.store import health

    sqlite_file = health.sqlite_file(url)
    if sqlite_file is not None:
        found = health.sqlite_problems(sqlite_file, read_only=read_only)
        return [Problem(sqlite_file, message) for message in found]
    shown = health.redacted(url)
    return [Problem(shown, message) for message in health.url_problems(url)]


def has_task_worktrees(paths: ProjectPaths) -> bool:
    """Whether the project is a git repository with a plain `.ralph/worktrees/` folder to look after."""
    from ralph_desk.vcs.refs import is_repository

    folder = paths.worktrees_dir
    return not contained.is_link(folder) and folder.is_dir() and is_repository(paths.root)


def _worktree_problems(paths: ProjectPaths) -> list[Problem]:
    """Task worktree folders git no longer knows (a crash, a hand-made change): init --force removes them."""
    from ralph_desk.vcs import worktrees
    from ralph_desk.vcs.places import GitError
    from ralph_desk.vcs.refs import is_repository

    if (
        contained.is_link(paths.worktrees_dir)
        or not paths.worktrees_dir.is_dir()
        or not is_repository(paths.root)
    ):
        return []
    try:
        found = worktrees.stale(paths.root, paths.worktrees_dir)
    except GitError as error:
        return [Problem(paths.worktrees_dir, f"git cannot list the worktrees: {error}")]
    message = "a stale task worktree (git no longer knows it); `ralph-desk init --force` removes it"
    return [Problem(folder, message) for folder in found]


def base_branch_problems(paths: ProjectPaths) -> list[Problem]:
    """A git project whose base branch is not there (a misspelt base_branch, a detached HEAD)."""
    from ralph_desk.vcs import bases

    try:
        configured = read_config(paths).base_branch
    except ProjectError:
        return []  # config.json's own problems are listed already
    problem = bases.base_of(paths.root, configured).problem
    return [Problem(paths.config_file, problem, blocks_opening=False)] if problem else []


def _config_file_problems(paths: ProjectPaths) -> list[Problem]:
    path = paths.config_file
    if not path.is_file():
        return [Problem(path, "missing file; `ralph-desk init --force` writes the default settings")]
    try:
        config = json.loads(contained.read_bytes(paths.root, path).decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return [Problem(path, f"not valid JSON: {error}")]
    return [Problem(path, message) for message in config_problems(config)]


def _context_problems(paths: ProjectPaths) -> list[Problem]:
    path = paths.context_file
    if not path.exists():
        return []
    try:
        context = json.loads(contained.read_bytes(paths.root, path).decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return [Problem(path, f"not valid JSON: {error}")]
    if not isinstance(context, dict):
        return [Problem(path, f"must be a JSON object, not {type(context).__name__}")]
    problems: list[Problem] = []
    for key, types in CONTEXT_TYPES.items():
        if key not in context:
            continue
        value = context[key]
        if isinstance(value, bool) or not isinstance(value, types):
            allowed = " or ".join("null" if kind is type(None) else kind.__name__ for kind in types)
            problems.append(Problem(path, f"{key}: {json.dumps(value)} is not allowed; allowed: {allowed}"))
    recipe = context.get("recipe")
    if isinstance(recipe, str) and recipe not in {member.value for member in Recipe}:
        problems.append(
            Problem(
                path, f"recipe: {recipe!r} is not a recipe; allowed: {', '.join(r.value for r in Recipe)}"
            )
        )
    tools = context.get("disabled_tools")
    if isinstance(tools, list) and not all(isinstance(tool, str) for tool in tools):
        problems.append(Problem(path, "disabled_tools: every item must be a tool name (text)"))
    return problems
