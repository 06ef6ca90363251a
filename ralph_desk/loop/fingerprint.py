"""The stagnation check's fingerprint: did a session change the project at all?

The runner takes one before and one after each task session; equal fingerprints mean the session
changed nothing, which seed 002 counts as stuck unless it ended with `done`. The fingerprint covers
the database content agents' work changes (not the signals or session records themselves),
progress.txt, learnings.txt and the git working tree (`vcs.tree_state`) — HEAD, the status of every
changed or untracked file, and each such file's content hash. The project's own `.ralph/` folder is left
out of the git part: the runner writes the session's prompt and context there. Outside git the tree
contributes nothing here: the files a session changed come from a file-tree snapshot
(`filetree`, through `git.state`), which the runner consults before this fingerprint.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ralph_desk.project import ProjectError, contained
from ralph_desk.services.container import Services
from ralph_desk.store.fingerprint import content_fingerprint
from ralph_desk.vcs.tree_state import git_tree_state

MISSING = b"\0missing"


def project_fingerprint(services: Services, repo_root: Path) -> str:
    """sha256 over the database content, progress.txt, learnings.txt and the git tree of `repo_root`."""
    with services.db.read() as unit:
        database = content_fingerprint(unit)
    digest = hashlib.sha256()
    digest.update(b"database\0" + database.encode())
    for name, path in (
        ("progress", services.paths.progress_file),
        ("learnings", services.paths.learnings_file),
    ):
        digest.update(f"\0{name}\0".encode() + _state_bytes(services.paths.root, path))
    digest.update(b"\0git\0" + git_tree_state(repo_root, exclude=services.paths.ralph))
    return digest.hexdigest()


def _state_bytes(root: Path, path: Path) -> bytes:
    try:
        return contained.read_bytes(root, path)
    except (FileNotFoundError, ProjectError):  # a link is never read, so never hashed
        return MISSING
