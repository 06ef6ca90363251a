"""The git tree's state as bytes: HEAD, the status of every changed file and each one's content hash.

Two equal results mean nothing in the tree changed; when git fails inside a repository the result is
unique, so that a change is never missed for want of evidence.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from ralph_desk.vcs.places import GitError
from ralph_desk.vcs.run import run
from ralph_desk.vcs.work_state import status_entries

log = logging.getLogger("ralph_desk.vcs")

MISSING = b"\0missing"


class _GitFailed(Exception):
    """A git command failed inside a repository: the tree's state is unknown."""


def git_tree_state(repo_root: Path, exclude: Path | None = None) -> bytes:
    """HEAD, status and content hashes of the changed files (outside `exclude`); empty outside a repository.

    When git fails inside a repository the result is unique to this call, so that a session is never
    judged to have changed nothing on missing evidence.
    """
    try:
        top = _git(repo_root, "rev-parse", "--show-toplevel")
    except _GitFailed:
        return b""
    toplevel = Path(os.fsdecode(top.rstrip(b"\n")))
    try:
        return _tree_state(toplevel, _excluded_prefix(toplevel, exclude))
    except _GitFailed as error:
        log.warning("git failed in %s (%s): the stagnation check treats the tree as changed", toplevel, error)
        return b"\0unknown\0" + os.urandom(16)


def _tree_state(toplevel: Path, excluded: bytes | None) -> bytes:
    try:
        head = _git(toplevel, "rev-parse", "--verify", "--quiet", "HEAD").strip()
    except _GitFailed:
        head = b"(no commits yet)"
    status = _git_text(toplevel, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    entries = [
        (code.encode(), _bytes(path), _bytes(original)) for code, path, original in status_entries(status)
    ]
    entries = [entry for entry in entries if not _is_excluded(entry[1], excluded)]
    hashes = _content_hashes(toplevel, [path for _, path, _ in entries])
    parts = [b"HEAD " + head]
    parts.extend(b"\0".join((code, path, original, hashes[path])) for code, path, original in entries)
    return b"\n".join(parts)


def _git_text(cwd: Path, *args: str, stdin: str | None = None) -> str:
    try:
        return run(cwd, "--no-optional-locks", *args, stdin=stdin).stdout
    except GitError as error:
        raise _GitFailed(str(error)) from error


def _git(cwd: Path, *args: str) -> bytes:
    return _bytes(_git_text(cwd, *args))


def _bytes(text: str) -> bytes:
    """Git's own bytes: the one git runner reads its output as UTF-8 with surrogateescape."""
    return text.encode("utf-8", "surrogateescape")


def _excluded_prefix(toplevel: Path, exclude: Path | None) -> bytes | None:
    """`exclude` as a path relative to the repository's top, as git spells paths; None when outside."""
    if exclude is None:
        return None
    try:
        relative = exclude.resolve().relative_to(toplevel.resolve())
    except ValueError:
        return None
    return os.fsencode(relative.as_posix()) if relative.parts else None


def _is_excluded(path: bytes, prefix: bytes | None) -> bool:
    return prefix is not None and (path == prefix or path.startswith(prefix + b"/"))


def _content_hashes(toplevel: Path, paths: Sequence[bytes]) -> dict[bytes, bytes]:
    """Each path's blob hash as git computes it; MISSING for a path that is not a file (deleted)."""
    hashes = dict.fromkeys(paths, MISSING)
    files = [path for path in paths if (toplevel / os.fsdecode(path)).is_file()]
    # --stdin-paths reads one path per line: a name with a newline is hashed here instead.
    listed = [path for path in files if b"\n" not in path]
    if listed:
        names = "".join(path.decode("utf-8", "surrogateescape") + "\n" for path in listed)
        blobs = _git_text(toplevel, "hash-object", "--stdin-paths", stdin=names).encode().split()
        if len(blobs) != len(listed):
            raise _GitFailed(f"git hash-object gave {len(blobs)} hashes for {len(listed)} files")
        hashes.update(zip(listed, blobs, strict=True))
    for path in files:
        if b"\n" in path:
            hashes[path] = _sha256_of(toplevel / os.fsdecode(path))
    return hashes


def _sha256_of(path: Path) -> bytes:
    return hashlib.sha256(_file_bytes(path)).hexdigest().encode()


def _file_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return MISSING
