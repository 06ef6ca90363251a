"""Whether a task worktree is still one: its folder, its `.git` file and the repository's record of it agree.

An agent works inside its worktree and may delete it, remove it with `git worktree remove`, or break or
re-aim its `.git` file. Before the desk commits there (or lets another session work there) it checks,
reading the files rather than running git inside a folder the agent controlled.
"""

from __future__ import annotations

from pathlib import Path

from ralph_desk.vcs.run import out, run

POINTER_LIMIT = 4096  # a `.git` file is one short line; anything longer is not one git wrote


def damage(repo: Path, path: Path) -> str | None:
    """What became of the worktree at `path` (words that follow "the worktree"); None when it is sound."""
    if path.is_symlink() or not path.is_dir():
        return "was deleted"
    dot_git = path / ".git"
    if dot_git.is_symlink() or not dot_git.is_file():
        return "lost its .git file"
    record = _record(repo, dot_git)
    if record is None:
        return "is no longer known to git (its record under .git/worktrees is gone)"
    if _pointer(dot_git) != record:
        return "has a .git file that no longer points to its record in the repository"
    return None


def mend(repo: Path, path: Path) -> bool:
    """Whether the worktree at `path` is sound, once git has rewritten a broken `.git` file (when it can)."""
    if damage(repo, path) is None:
        return True
    if path.is_dir() and not path.is_symlink() and _record(repo, path / ".git") is not None:
        run(repo, "worktree", "repair", "--", str(path), ok_codes=None)
    return damage(repo, path) is None


def _record(repo: Path, dot_git: Path) -> Path | None:
    """The folder under `.git/worktrees/` whose `gitdir` file names `dot_git`, if any."""
    common = Path(out(repo, "rev-parse", "--git-common-dir"))
    records = (common if common.is_absolute() else repo / common) / "worktrees"
    if not records.is_dir():
        return None
    wanted = dot_git.absolute().resolve()
    for record in records.iterdir():
        gitdir = _read(record / "gitdir")
        if gitdir is not None and (record / gitdir).resolve() == wanted:  # relative paths: to the record
            return record.resolve()
    return None


def _pointer(dot_git: Path) -> Path | None:
    """The folder a `.git` file names (`gitdir: …`), resolved; None when it names none."""
    text = _read(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    named = Path(text.removeprefix("gitdir:").strip())
    return (named if named.is_absolute() else dot_git.parent / named).resolve()


def _read(file: Path) -> str | None:
    """The stripped text of a small plain file; None when it is missing, a link, too long or not text."""
    try:
        if file.is_symlink() or not file.is_file():
            return None
        with file.open("rb") as handle:
            raw = handle.read(POINTER_LIMIT + 1)
    except OSError:
        return None
    if len(raw) > POINTER_LIMIT:
        return None
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
