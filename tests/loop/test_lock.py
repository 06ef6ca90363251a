"""One loop per project: the lock refuses a second holder, in this process or another, and names the first."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.loop.lock import LoopAlreadyRunningError, LoopLock, LoopLockError

WAIT_S = 20
HOLD = (
    "import sys; from pathlib import Path; from ralph_desk.loop.lock import LoopLock; "
    "lock = LoopLock(Path(sys.argv[1])); lock.acquire(); print('held', flush=True); sys.stdin.read()"
)


@pytest.fixture
def lock_path(tmp_path: Path) -> Path:
    return tmp_path / ".ralph" / "loop.lock"


@pytest.fixture
def holder(lock_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock until its standard input closes."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    yield process
    process.kill()
    process.wait(WAIT_S)


def test_a_lock_held_by_another_process_is_refused_naming_its_pid(
    lock_path: Path, holder: subprocess.Popen[str]
) -> None:
    lock = LoopLock(lock_path)
    with pytest.raises(
        LoopAlreadyRunningError, match=rf"already running on this project \(pid {holder.pid}\)"
    ):
        lock.acquire()
    assert not lock.held


def test_the_lock_of_a_process_that_died_can_be_taken(lock_path: Path, holder: subprocess.Popen[str]) -> None:
    holder.kill()
    holder.wait(WAIT_S)

    lock = LoopLock(lock_path)
    lock.acquire()
    assert lock.held
    lock.release()


def test_a_second_lock_in_the_same_process_is_refused_until_the_first_is_released(lock_path: Path) -> None:
    first, second = LoopLock(lock_path), LoopLock(lock_path)
    first.acquire()
    with pytest.raises(LoopAlreadyRunningError):
        second.acquire()
    with pytest.raises(LoopAlreadyRunningError):
        first.acquire()
    first.release()

    second.acquire()
    assert second.held and not first.held
    second.release()


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need a privilege on Windows")
def test_a_lock_file_that_is_a_symbolic_link_is_refused_and_its_target_untouched(
    lock_path: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    lock_path.parent.mkdir()
    lock_path.symlink_to(outside)

    with pytest.raises(LoopLockError, match="symbolic link"):
        LoopLock(lock_path).acquire()
    assert not outside.exists()
