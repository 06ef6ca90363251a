"""Run one check: the platform's shell in a folder, its whole process tree ended at its timeout, its output
kept (all of it, up to a bound, in a 0600 log file; the useful tail for the database and the prompt)."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BufferedReader
from pathlib import Path

from ralph_desk.domain.checks import Check, CheckStatus, Outcome, useful_tail
from ralph_desk.process_tree import own_group, signal_tree
from ralph_desk.project import contained
from ralph_desk.sandbox import Confined

LOG_LIMIT = 32 * 1024 * 1024
"""The most of one run's output kept in its log file: a check that prints more cannot fill the disk."""
TAIL_BYTES = 256 * 1024
"""The end of the output kept in memory, from which the useful tail is taken."""
CHUNK = 64 * 1024
GRACE_S = 2.0
"""How long a timed-out or stopped check has to end after it is asked, before it is killed."""
STOP_POLL_S = 0.2
"""How often a running check looks at the stop request (its own end wakes it at once)."""

Output = Callable[[str], None]
"""Called with each piece of a check's output as it arrives (off the caller's thread)."""
Confiner = Callable[[list[str]], Confined]
"""Puts a check's command line in its sandbox (or says why it runs unconfined)."""


@dataclass
class Stop:
    """A request, from any thread, that the checks running now end (the loop was stopped)."""

    event: threading.Event = field(default_factory=threading.Event)

    def request(self) -> None:
        """Ask the running checks to end."""
        self.event.set()

    @property
    def requested(self) -> bool:
        """Whether a stop was asked."""
        return self.event.is_set()


def shell_command(run: str) -> list[str]:
    """The platform's shell running one command line, as a CI step does."""
    if sys.platform == "win32":
        return [os.environ.get("COMSPEC", "cmd.exe"), "/d", "/s", "/c", run]
    return ["/bin/sh", "-c", run]


def run_check(
    check: Check,
    folder: Path,
    log: tuple[Path, Path] | None,
    stop: Stop | None = None,
    on_output: Output | None = None,
    confine: Confiner | None = None,
) -> Outcome:
    """Run `check` in `folder` (inside the sandbox `confine` gives); `log` is (project root, log file) for
    the full output. Never raises for the check's own failure: a shell that cannot start is an ERROR
    outcome."""
    started = time.monotonic()
    sink = _Sink(log, on_output)
    command = confine(shell_command(check.run)) if confine is not None else None
    if command is not None and not command.confined:
        sink.note(f"[ralph-desk: runs unconfined: {command.reason}]\n")
    try:
        process = subprocess.Popen(
            command.argv if command is not None else shell_command(check.run),
            cwd=folder,
            env=command.environment(dict(os.environ)) if command is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            **own_group(),
        )
    except OSError as error:
        sink.close()
        return Outcome(CheckStatus.ERROR, None, time.monotonic() - started, f"could not start: {error}")
    assert isinstance(process.stdout, BufferedReader)
    reader = threading.Thread(
        target=sink.drain, args=(process.stdout,), name=f"check {check.name}", daemon=True
    )
    reader.start()
    try:
        status = _wait(process, check.timeout_s, stop)
    except BaseException:  # interrupted (Ctrl-C): the check is in a group of its own, so end it here
        signal_tree(process.pid, force=True)
        sink.close()
        raise
    # The shell has ended (or was ended): whatever it left running in its group goes too.
    signal_tree(process.pid, force=True)
    reader.join(GRACE_S)
    sink.close()
    exit_code = process.returncode
    if status is CheckStatus.PASSED and exit_code != 0:
        status = CheckStatus.FAILED
    note = {
        CheckStatus.TIMED_OUT: f"\n[ralph-desk: timed out after {check.timeout_s} s; the check and every "
        "process it started were killed]",
        CheckStatus.STOPPED: "\n[ralph-desk: the loop was stopped; the check was ended]",
    }.get(status, "")
    return Outcome(status, exit_code, time.monotonic() - started, useful_tail(sink.text() + note))


def _wait(process: subprocess.Popen[bytes], timeout_s: float, stop: Stop | None) -> CheckStatus:
    """Wait for the check's shell; end its tree at the timeout or on a stop. PASSED means only "it ended"."""
    ended = threading.Event()

    def wait_for_exit() -> None:
        process.wait()
        ended.set()

    threading.Thread(target=wait_for_exit, daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while not ended.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            _end(process, ended)
            return CheckStatus.TIMED_OUT
        if stop is not None and stop.requested:
            _end(process, ended)
            return CheckStatus.STOPPED
        ended.wait(min(left, STOP_POLL_S) if stop is not None else left)
    return CheckStatus.PASSED


def _end(process: subprocess.Popen[bytes], ended: threading.Event) -> None:
    signal_tree(process.pid, force=False)
    if not ended.wait(GRACE_S):
        signal_tree(process.pid, force=True)
        ended.wait(GRACE_S)


class _Sink:
    """Where a check's output goes: the log file (bounded), the in-memory end, the live listener."""

    def __init__(self, log: tuple[Path, Path] | None, on_output: Output | None) -> None:
        self._file = None
        if log is not None:
            root, path = log
            descriptor = contained.open_descriptor(
                root,
                path,
                os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                contained.PRIVATE_FILE_MODE,
                contained.PRIVATE_DIR_MODE,
            )
            self._file = os.fdopen(descriptor, "wb")
        self._written = 0
        self._end = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._on_output = on_output

    def drain(self, stream: BufferedReader) -> None:
        """Read the check's output to its end (run on a thread of its own)."""
        while chunk := stream.read1(CHUNK):
            self._keep(chunk)

    def note(self, text: str) -> None:
        """A line of ralph-desk's own among the output."""
        self._keep(text.encode())

    def _keep(self, chunk: bytes) -> None:
        if self._file is not None and self._written < LOG_LIMIT:
            room = LOG_LIMIT - self._written
            self._file.write(chunk[:room])
            self._written += min(len(chunk), room)
            if self._written >= LOG_LIMIT:
                self._file.write(
                    f"\n[ralph-desk: output beyond {LOG_LIMIT // 2**20} MiB not kept]\n".encode()
                )
        self._end += chunk
        if len(self._end) > TAIL_BYTES:
            del self._end[: len(self._end) - TAIL_BYTES]
        if self._on_output is not None:
            self._on_output(self._decoder.decode(chunk))

    def text(self) -> str:
        """The end of the output, as text."""
        return bytes(self._end).decode("utf-8", errors="replace")

    def close(self) -> None:
        """Close the log file."""
        if self._file is not None:
            self._file.close()
            self._file = None
