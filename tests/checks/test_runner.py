"""One check run: its exit decides, its whole process tree ends at its timeout or on a stop, and its
output is kept bounded (a 0600 log file up to a limit, a small useful tail for the database)."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from ralph_desk.checks import runner
from ralph_desk.checks.runner import Stop, run_check
from ralph_desk.domain.checks import TAIL_LIMIT, Check, CheckStatus

PY = sys.executable
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell and process ids")


def check(run: str, timeout_s: int = 60) -> Check:
    return Check(name="tests", run=run, timeout_s=timeout_s)


def py(code: str) -> str:
    return f'"{PY}" -c "{code}"'


def gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether the process ends (or is a zombie) within the bound."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z":
            return True
        threading.Event().wait(0.05)
    return False


def test_a_passing_and_a_failing_check(tmp_path: Path) -> None:
    passed = run_check(check(py("print('2 passed')")), tmp_path, None)
    assert (passed.status, passed.exit_code) == (CheckStatus.PASSED, 0) and "2 passed" in passed.tail
    failed = run_check(check(py("import sys; print('FAILED t.py::x'); sys.exit(2)")), tmp_path, None)
    assert (failed.status, failed.exit_code) == (CheckStatus.FAILED, 2) and "FAILED t.py::x" in failed.tail


def test_a_check_runs_in_its_folder(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here")
    outcome = run_check(check(py("print(open('marker.txt').read())")), tmp_path, None)
    assert outcome.status is CheckStatus.PASSED and "here" in outcome.tail


def test_a_folder_that_is_gone_is_an_error_not_a_crash(tmp_path: Path) -> None:
    outcome = run_check(check("true"), tmp_path / "missing", None)
    assert outcome.status is CheckStatus.ERROR and "could not start" in outcome.tail


@posix_only
def test_a_hanging_check_is_killed_at_its_timeout_with_every_child(tmp_path: Path) -> None:
    # The shell starts a child that ignores SIGTERM and keeps the output pipe open, then waits for it.
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"
    hanging = check(f'"{PY}" -c "{deaf}" & echo $! > child.pid; echo started; wait', timeout_s=1)
    started = time.monotonic()
    outcome = run_check(hanging, tmp_path, None)
    took = time.monotonic() - started
    assert outcome.status is CheckStatus.TIMED_OUT and outcome.exit_code != 0
    assert "timed out after 1 s" in outcome.tail and "started" in outcome.tail
    assert took < 1 + 2 * runner.GRACE_S + 5  # the timeout, the grace, and no waiting for the child
    assert gone(int((tmp_path / "child.pid").read_text()))


@posix_only
def test_what_a_check_leaves_running_ends_with_it(tmp_path: Path) -> None:
    outcome = run_check(check("(sleep 300 & echo $! > child.pid) ; echo ok"), tmp_path, None)
    assert outcome.status is CheckStatus.PASSED
    assert gone(int((tmp_path / "child.pid").read_text()))


def test_a_stop_ends_the_running_check(tmp_path: Path) -> None:
    stop = Stop()

    def heard(text: str) -> None:
        if "ready" in text:
            stop.request()

    code = "import sys, time; print('ready'); sys.stdout.flush(); time.sleep(300)"
    started = time.monotonic()
    outcome = run_check(check(py(code)), tmp_path, None, stop, heard)
    assert outcome.status is CheckStatus.STOPPED and "the loop was stopped" in outcome.tail
    assert time.monotonic() - started < 2 * runner.GRACE_S + 5


def test_fifty_megabytes_of_output_keep_the_log_bounded_and_the_tail_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "LOG_LIMIT", 8 * 2**20)  # the bound, smaller: the same code path, less disk
    root = tmp_path / "project"
    root.mkdir()
    log = root / ".ralph" / "logs" / "checks" / "run.log"
    code = "import sys; line = 'x' * 99 + chr(10); [sys.stdout.write(line * 5000) for _ in range(100)]"
    pieces: list[int] = []
    outcome = run_check(check(py(code)), tmp_path, (root, log), None, lambda text: pieces.append(len(text)))
    assert outcome.status is CheckStatus.PASSED
    assert sum(pieces) == 50_000_000  # every byte was heard live
    assert log.stat().st_size < runner.LOG_LIMIT + 200 and "not kept" in log.read_text()[-200:]
    assert len(outcome.tail) <= TAIL_LIMIT
    if sys.platform != "win32":
        assert log.stat().st_mode & 0o777 == 0o600


@posix_only
def test_a_log_path_through_a_link_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".ralph" / "logs").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".ralph" / "logs" / "checks").symlink_to(outside)
    with pytest.raises(Exception, match="symbolic link"):
        run_check(check("true"), tmp_path, (root, root / ".ralph" / "logs" / "checks" / "run.log"))
    assert list(outside.iterdir()) == []


INTERRUPTED = """
import sys
from pathlib import Path
from ralph_desk.checks.runner import run_check
from ralph_desk.domain.checks import Check
run_check(Check(name="tests", run="sleep 300 & echo $! > child.pid; wait"), Path(sys.argv[1]), None)
"""


@posix_only
def test_ctrl_c_in_a_terminal_ends_the_check_it_started(tmp_path: Path) -> None:
    import signal
    import subprocess

    runner_process = subprocess.Popen([PY, "-c", INTERRUPTED, str(tmp_path)], stderr=subprocess.PIPE)
    pid_file = tmp_path / "child.pid"
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        threading.Event().wait(0.02)
    runner_process.send_signal(signal.SIGINT)  # the check, in a group of its own, does not get it itself
    _out, err = runner_process.communicate(timeout=30)
    assert b"KeyboardInterrupt" in err
    assert gone(int(pid_file.read_text()))
