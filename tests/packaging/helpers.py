"""What the packaging tests share: a fresh user's environment, running the window, status counts."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD_ENV = "RALPH_PACKAGING_TESTS"
APP_ENV = "RALPH_DESK_APP"

needs_build = pytest.mark.skipif(
    not os.environ.get(BUILD_ENV),
    reason=f"builds the wheel or the app: `make package-test` runs it (or set {BUILD_ENV}=1)",
)

# The app logs each start-up step as `start N/M: name` (ralph_desk.app.Startup); the last step's line
# means every earlier one, the window among them, has started.
LAST_STEP = re.compile(r"start (\d+)/\1: ")
MCP_URL = re.compile(r"MCP server listening on (http://\S+)")


def fresh_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a new user: home and XDG folders under `home`, no Python or venv variables."""
    env = {key: os.environ[key] for key in ("LANG", "LC_ALL", "TZ") if key in os.environ}
    venv_bin = str(REPO / ".venv" / "bin")
    env["PATH"] = os.pathsep.join(
        part for part in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if part != venv_bin
    )
    runtime = home / "runtime"
    for key, folder in {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_RUNTIME_DIR": runtime,
    }.items():
        folder.mkdir(parents=True, exist_ok=True)
        env[key] = str(folder)
    runtime.chmod(0o700)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env.update(extra)
    return env


def run(command: Sequence[str | Path], env: dict[str, str], timeout: float = 120) -> str:
    """Run a command to completion in the home folder (never the checkout, whose package would be
    imported first); its standard output (a failure shows both streams)."""
    result = subprocess.run(
        [str(part) for part in command],
        env=env,
        cwd=env.get("HOME"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, command))} exited {result.returncode}\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    return result.stdout


def status_counts(report: dict[str, Any]) -> dict[str, Any]:
    """The parts of `status --json` that do not depend on where or when the project was made."""
    return {"title": report["project"]["title"], **{key: report[key] for key in ("tasks", "inbox", "cost")}}


def checkout_demo_status(folder: Path) -> dict[str, Any]:
    """`status --json` of a demo project made by this checkout's code, in this process."""
    import io
    from contextlib import redirect_stdout

    from ralph_desk import cli

    with redirect_stdout(io.StringIO()):
        assert cli.main(["demo", str(folder)]) == 0
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["status", "--json", "--root", str(folder)]) == 0
    return status_counts(json.loads(out.getvalue()))


def check_demo_and_status(
    command: Sequence[str | Path], folder: Path, env: dict[str, str], expected: Any, db_url: str | None = None
) -> None:
    """`COMMAND demo FOLDER` then `COMMAND status --json --root FOLDER` report what the checkout does."""
    database = ["--db-url", db_url] if db_url else []
    created = run([*command, "demo", folder, *database], env)
    assert f"Created the demo project in {folder}" in created
    report = json.loads(run([*command, "status", "--json", "--root", folder, *database], env))
    assert report["project"]["root"] == str(folder)
    assert report["tasks"]["total"] > 0 and report["inbox"]["asks"] > 0
    assert status_counts(report) == expected


def check_postgres_driver(command: Sequence[str | Path], folder: Path, env: dict[str, str]) -> None:
    """A PostgreSQL URL reaches psycopg: with nothing listening, the driver's own refusal is the error."""
    result = subprocess.run(
        [
            *map(str, command),
            "status",
            "--root",
            str(folder),
            "--db-url",
            "postgresql+psycopg://ralph@127.0.0.1:1/x",
        ],
        env=env,
        cwd=env.get("HOME"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    # libpq's own words (through psycopg): without the driver bundled the error would name a missing module.
    assert 'connection to server at "127.0.0.1", port 1 failed' in result.stderr, result.stderr
    assert "No module named" not in result.stderr


@dataclass
class WindowRun:
    """What one run of the window showed."""

    code: int
    log: str
    mcp_status: int


def _http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@contextlib.contextmanager
def _lines(process: subprocess.Popen[str]) -> Iterator[queue.Queue[str | None]]:
    """The process's output lines as they come (None at the end), read by a thread."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield lines
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        reader.join(timeout=30)


def run_window(
    command: Sequence[str | Path],
    env: dict[str, str],
    timeout: float = 120,
    while_up: Any = None,
) -> WindowRun:
    """Start the window, wait until it is up, ask its MCP server, close it with Ctrl+C (SIGINT).

    "Up" is proved without sleeping: the log line of the last start-up step, then an HTTP answer of
    the embedded MCP server. That server runs in the window's event loop, which answers only after the
    start-up coroutine has returned control, so the window is shown and the Ctrl+C handler is in
    place. `while_up(log)` runs while the window is up (a screenshot, say).
    """
    process = subprocess.Popen(
        [str(part) for part in command],
        env={**env, "RALPH_DEBUG": "1"},
        cwd=env.get("HOME"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log: list[str] = []
    deadline = time.monotonic() + timeout

    def next_line(lines: queue.Queue[str | None]) -> str | None:
        remaining = deadline - time.monotonic()
        try:
            line = lines.get(timeout=max(0.1, remaining))
        except queue.Empty:
            pytest.fail(f"the window did not come up within {timeout} s:\n{''.join(log)[-6000:]}")
        if line is not None:
            log.append(line)
        return line

    with _lines(process) as lines:
        url = None
        while True:
            line = next_line(lines)
            if line is None:
                pytest.fail(
                    f"the app exited with {process.wait()} before its window was up:\n{''.join(log)[-6000:]}"
                )
            found = MCP_URL.search(line)
            url = found.group(1) if found else url
            if LAST_STEP.search(line):
                break
        assert url is not None, f"no MCP server announced:\n{''.join(log)[-6000:]}"
        mcp_status = _http_status(url)
        if while_up is not None:
            while_up("".join(log))
        process.send_signal(signal.SIGINT)
        while next_line(lines) is not None:
            pass
        code = process.wait(timeout=30)
    return WindowRun(code, "".join(log), mcp_status)


def check_window(command: Sequence[str | Path], env: dict[str, str], while_up: Any = None) -> WindowRun:
    """The window comes up with its MCP server, and closes cleanly on Ctrl+C."""
    window = run_window(command, env, while_up=while_up)
    tail = window.log[-6000:]
    assert window.mcp_status == 401, tail  # the embedded server refuses a request without a token
    assert window.code == 0, tail
    assert "stop: the window" in window.log, tail  # only a step that started is stopped
    assert "could not start" not in window.log.lower(), tail
    assert "Traceback" not in window.log, tail
    return window
