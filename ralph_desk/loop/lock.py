"""One loop per project: an OS file lock held while a loop runs, released even if the process dies."""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock, Timeout

from ralph_desk.project import contained

HOLDER_BYTES = 200
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX only; Windows has no such flag


class LoopLockError(RuntimeError):
    """The project's loop lock cannot be taken."""


class LoopAlreadyRunningError(LoopLockError):
    """Another loop holds the project's lock."""


def project_lock(ralph_dir: Path) -> LoopLock:
    """The loop lock of the project whose `.ralph/` folder is `ralph_dir`."""
    return LoopLock(ralph_dir / "loop.lock")


class LoopLock:
    """An exclusive, non-blocking lock on `.ralph/loop.lock` that names its holder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Not thread-local: the loop may be stopped from another thread than the one that started it.
        self._lock = FileLock(path, blocking=False, mode=0o600, thread_local=False, on_acquired=_name_holder)

    def acquire(self) -> None:
        """Take the lock or raise LoopAlreadyRunningError naming the holder."""
        if self.held:
            raise self._refusal()
        contained.make_folder(self.path.parent.parent, self.path.parent)  # `.ralph/` itself no link
        if self.path.is_symlink():
            raise LoopLockError(
                f"the loop lock {self.path} is a symbolic link; a lock outside the project is refused "
                "(remove the link and start again)"
            )
        try:
            self._lock.acquire()
        except Timeout:
            raise self._refusal() from None
        except OSError as error:  # the link was made between the check and the open (O_NOFOLLOW)
            raise LoopLockError(f"the loop lock {self.path} cannot be taken: {error}") from None

    def release(self) -> None:
        """Let the lock go."""
        if self.held:
            self._lock.release(force=True)

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._lock.is_locked

    def _refusal(self) -> LoopAlreadyRunningError:
        return LoopAlreadyRunningError(
            f"a loop is already running on this project ({self._holder()}); stop it before starting another"
        )

    def _holder(self) -> str:
        """What the holder wrote into the lock file, read past the byte a Windows lock covers."""
        try:
            descriptor = os.open(self.path, os.O_RDONLY | _NO_FOLLOW)
        except OSError:
            return "another process"
        try:
            os.lseek(descriptor, 1, os.SEEK_SET)
            text = os.read(descriptor, HOLDER_BYTES).decode(errors="replace").strip()
        except OSError:
            text = ""
        finally:
            os.close(descriptor)
        return text or "another process"


def _name_holder(descriptor: int) -> None:
    """Write `pid N` into the freshly taken lock file after its first byte, the one Windows locks."""
    text = f"\npid {os.getpid()}".encode()
    os.lseek(descriptor, 0, os.SEEK_SET)
    os.write(descriptor, text)
    os.ftruncate(descriptor, len(text))
    os.lseek(descriptor, 0, os.SEEK_SET)
