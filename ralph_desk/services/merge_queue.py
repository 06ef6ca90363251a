"""The merge queue (DESIGN §12): approved tasks merge one at a time, in approval order, across processes.

The order lives in the database (an entry per approval, written with it); the merges into one checkout
are serialised by `.ralph/merge.lock`, an OS file lock that every process sharing the checkout takes (the
window, `ralph-desk review approve`, a headless `run`) and that the OS releases when its holder dies.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ralph_desk.project import ProjectPaths, contained
from ralph_desk.services.errors import ConflictError
from ralph_desk.vcs import merging

LOCK_NAME = "merge.lock"
WAIT_S = 600.0

_THREADS: dict[Path, threading.Lock] = {}
_THREADS_LOCK = threading.Lock()


class MergeTurnError(ConflictError):
    """This process could not take its turn at merging; nothing was merged."""


class MergeBusyError(MergeTurnError):
    """Another merge held the turn for longer than this caller waits; queued approvals stay queued for it."""


def _thread_lock(root: Path) -> threading.Lock:
    with _THREADS_LOCK:
        return _THREADS.setdefault(root, threading.Lock())


def _put_right(paths: ProjectPaths) -> None:
    """Whoever takes the turn first puts right a checkout that a merge killed midway left half moved."""
    try:
        merging.recover_interrupted(paths.root)
    except merging.MergeRefusedError as error:
        raise MergeTurnError(str(error)) from None


@contextmanager
def merge_turn(paths: ProjectPaths, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold the checkout's merge turn (one thread of one process at a time) while the body merges."""
    threads = _thread_lock(paths.root)
    if not threads.acquire(timeout=wait_s):
        raise MergeBusyError(
            f"another merge in this process held {paths.root} for over {wait_s:g} s; try again"
        )
    try:
        path = paths.ralph / LOCK_NAME
        contained.make_folder(paths.root, paths.ralph)  # `.ralph/` itself no link
        if contained.is_link(path):
            raise MergeTurnError(
                f"the merge lock {path} is a symbolic link; a lock outside the project is refused "
                "(remove the link and approve again)"
            )
        lock = FileLock(path, timeout=wait_s, mode=0o600, thread_local=False)
        try:
            lock.acquire()
        except Timeout:
            raise MergeBusyError(
                f"another process has been merging into {paths.root} for over {wait_s:g} s; try again"
            ) from None
        except OSError as error:  # the link was made between the check and the open
            raise MergeTurnError(f"the merge lock {path} cannot be taken: {error}") from None
        try:
            _put_right(paths)
            yield
        finally:
            lock.release(force=True)
    finally:
        threads.release()
