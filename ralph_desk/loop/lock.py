"""One loop per project: an OS file lock held while a loop runs, released even if the process dies."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class LoopAlreadyRunningError(RuntimeError):
    """Another loop holds the project's lock."""


class LoopLock:
    """An exclusive, non-blocking lock on `.ralph/loop.lock` that names its holder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise LoopAlreadyRunningError naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise LoopAlreadyRunningError(
                f"a loop is already running on this project ({holder}); stop it before starting another"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Let the lock go."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def __enter__(self) -> LoopLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
