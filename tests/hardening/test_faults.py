"""Faults: the server killed mid-burst, context files it must refuse, a database held by another process.

The loop's own faults are tested where the loop is: an agent killed mid-session is counted stuck and
its task re-queued (tests/loop/test_loop_e2e.py::test_an_agent_killed_mid_session_counts_as_stuck,
and a session over its time limit in tests/loop/test_runner_lifecycle.py); the app killed with a
loop running leaves an `in_progress` task that the next start recovers
(test_runner_lifecycle.py::test_the_app_killed_mid_loop_leaves_a_task_the_next_start_recovers and
::test_a_task_left_in_progress_by_a_dead_loop_is_recovered_at_start).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.server import build_server
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from ralph_desk.store.database import Database
from tests.hardening.support import (
    RawHttpSession,
    Seeded,
    assert_unchanged,
    db_state,
    free_port,
    http_process,
    integrity,
    listening_addresses,
    live_clients,
    refusal_text,
    succeeded,
    text_of,
)
from tests.support.stdio_wire import mcp_command

TOKEN = "burst-token-0123456789"
CLIENTS = 4
KILL_AFTER = 120  # acknowledged writes before the kill

# The snapshots, integrity checks and lock holder read the SQLite file itself.
pytestmark = pytest.mark.sqlite_only


# --- the server killed mid-burst -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_server_killed_mid_burst_keeps_every_acknowledged_write(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, ids = seeded
    flags = ("--token", TOKEN, "--task-id", str(ids.parser), "--session-id", "burst")
    acknowledged: list[str] = []
    cut_off: list[str] = []
    killed_at: list[int] = []
    with http_process(paths, *flags) as (process, url, _):

        async def writer(index: int) -> None:
            async with httpx2.AsyncClient(timeout=30) as http:
                session = RawHttpSession(http, url, TOKEN)
                await session.initialize()
                for number in range(100_000):
                    what = f"burst {index}-{number}"
                    arguments = {"what": what, "severity": "info", "category": "bug"}
                    try:
                        status, answer = await session.call("flag", arguments)
                    except httpx2.TransportError as error:
                        cut_off.append(f"writer {index}: {type(error).__name__}")
                        return
                    if not (status == 200 and succeeded(answer)):
                        cut_off.append(f"writer {index}: HTTP {status} {answer}")
                        return
                    acknowledged.append(what)
                    if len(acknowledged) >= KILL_AFTER and not killed_at:
                        killed_at.append(len(acknowledged))
                        os.kill(process.pid, signal.SIGKILL)

        with anyio.fail_after(180):
            async with anyio.create_task_group() as group:
                for index in range(CLIENTS):
                    group.start_soon(writer, index)
        assert process.wait(timeout=30) == -signal.SIGKILL
    assert killed_at, f"the burst ended before the kill: {cut_off}"
    assert len(cut_off) == CLIENTS, "every writer should have been cut off by the kill"
    assert integrity(paths) == "ok"
    services = Services.open(paths)
    try:
        stored = {s.what for s in services.signals.for_task(ids.parser) if s.verb.value == "flag"}
        missing = [what for what in acknowledged if what not in stored]
        assert missing == [], f"{len(missing)} acknowledged writes were lost, e.g. {missing[:3]}"
        assert services.db.integrity_ok()
        # The database is not left locked: a new write goes through at once.
        services.signals.record(
            ids.parser, "after-kill", "flag", what="after", severity="info", category="bug"
        )
    finally:
        services.close()


# --- context files the server must refuse (fail closed) --------------------------------------------


def _write(text: str | bytes) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / "context.json"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return make


def _document(document: Any) -> Callable[[Path], Path]:
    return _write(json.dumps(document))


def _directory(folder: Path) -> Path:
    path = folder / "context.json"
    path.mkdir()
    return path


def _unreadable(folder: Path) -> Path:
    path = _write('{"recipe": "ide"}')(folder)
    path.chmod(0o000)
    return path


CONTEXTS: list[Any] = [
    pytest.param(_directory, "cannot be read (Is a directory)", id="a directory"),
    pytest.param(
        _unreadable,
        "cannot be read (Permission denied)",
        id="unreadable (mode 000)",
        marks=pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file; see the directory case"),
    ),
    pytest.param(_write(""), "not valid JSON", id="empty"),
    pytest.param(_write('{"recipe": "task_execution", "task_id": '), "not valid JSON", id="truncated"),
    pytest.param(_write(b'\xff\xfe{"recipe": "ide"}'), "not UTF-8 text", id="not UTF-8"),
    pytest.param(_document([]), "expected a JSON object, got list", id="a JSON list"),
    pytest.param(_document("ide"), "expected a JSON object, got str", id="a JSON string"),
    pytest.param(_document({"recipe": "root"}), "recipe 'root' is unknown; allowed: braindump", id="recipe"),
    pytest.param(
        _document({"recipe": "task_execution", "task_id": "1"}),
        "task_id '1' must be a positive whole number",
        id="task id as text",
    ),
    pytest.param(_document({"task_id": 0}), "task_id 0 must be a positive whole number", id="task id 0"),
    pytest.param(
        _document({"disabled_tools": "all"}), "disabled_tools must be a list of tool names", id="tool list"
    ),
    pytest.param(_document({"discipline": 5}), "discipline 5 must be a text or null", id="discipline type"),
    pytest.param(
        _document({"recipe": "task_execution", "task_id": 999}), "task_id 999: no task 999", id="no such task"
    ),
    pytest.param(
        _document({"discipline": "nope"}), "discipline 'nope': no discipline", id="no such discipline"
    ),
]


def run_refused(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, input="", capture_output=True, text=True, timeout=60, env=env)


def assert_refused(run: subprocess.CompletedProcess[str], complaint: str, paths: ProjectPaths) -> None:
    assert run.returncode == 2, run.stderr
    assert "refusing to start" in run.stderr and complaint in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == "", "a refused server must not speak the protocol"
    assert "ralph MCP server:" not in run.stderr and "serving" not in run.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("make", "complaint"), CONTEXTS)
def test_a_bad_context_file_stops_the_stdio_server_before_it_serves(
    seeded: tuple[ProjectPaths, Seeded], tmp_path: Path, make: Callable[[Path], Path], complaint: str
) -> None:
    paths, _ = seeded
    context = make(tmp_path)
    assert_refused(run_refused(mcp_command(paths, "--context", str(context))), complaint, paths)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make", "complaint"),
    [
        pytest.param(_directory, "cannot be read (Is a directory)", id="a directory"),
        pytest.param(_document({"recipe": "root"}), "recipe 'root' is unknown", id="recipe"),
        pytest.param(_document({"task_id": 999}), "task_id 999: no task 999", id="no such task"),
    ],
)
@pytest.mark.parametrize("via", ["--context", "RALPH_CONTEXT"])
def test_a_bad_context_file_stops_the_http_server_before_it_listens(
    seeded: tuple[ProjectPaths, Seeded],
    tmp_path: Path,
    make: Callable[[Path], Path],
    complaint: str,
    via: str,
) -> None:
    paths, _ = seeded
    context = make(tmp_path)
    port = free_port()
    command = mcp_command(paths, "--transport", "http", "--port", str(port), "--token", "t0k3n")
    env = dict(os.environ)
    if via == "--context":
        command += ["--context", str(context)]
    else:
        env["RALPH_CONTEXT"] = str(context)
    assert_refused(run_refused(command, env), complaint, paths)
    assert listening_addresses(port) == set()


# --- a long transaction held by another process ----------------------------------------------------

HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
connection.execute("BEGIN IMMEDIATE")
connection.execute("UPDATE tasks SET title = 'half-written by the holder'")
print("holding", flush=True)
sys.stdin.readline()
connection.execute("ROLLBACK")
connection.close()
print("released", flush=True)
"""
BUSY_TIMEOUT_S = 0.5


class LockHolder:
    """Another process inside a `BEGIN IMMEDIATE` transaction on the project's database."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(paths.db_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "holding"

    def release(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "released"
        assert self.process.wait(timeout=30) == 0

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@pytest.fixture
def holder(seeded: tuple[ProjectPaths, Seeded]) -> Iterator[Callable[[], LockHolder]]:
    started: list[LockHolder] = []

    def start() -> LockHolder:
        started.append(LockHolder(seeded[0]))
        return started[-1]

    yield start
    for lock in started:
        lock.kill()


WRITES = [
    pytest.param(
        Recipe.TASK_EXECUTION,
        "flag",
        {"what": "found a bug", "severity": "info", "category": "bug"},
        id="flag",
    ),
    pytest.param(
        Recipe.YAP,
        "create_task",
        {"feature": "core", "discipline": "backend", "title": "New"},
        id="create_task",
    ),
    pytest.param(Recipe.YAP, "set_task_status", {"id": 1, "status": "done"}, id="set_task_status"),
    pytest.param(
        Recipe.OPUS_REVIEW,
        "add_task_comment",
        {"task_id": 1, "author": "opus", "body": "Looks fine."},
        id="add_task_comment",
    ),
    pytest.param(
        Recipe.OPUS_REVIEW,
        "append_progress",
        {"text": "A progress entry."},
        id="append_progress",
    ),
]


@pytest.mark.parametrize(("recipe", "tool", "arguments"), WRITES)
def test_a_write_waits_out_the_busy_timeout_then_fails_clearly_and_a_retry_succeeds(
    seeded: tuple[ProjectPaths, Seeded],
    holder: Callable[[], LockHolder],
    recipe: Recipe,
    tool: str,
    arguments: dict[str, Any],
) -> None:
    paths, ids = seeded
    services = Services(paths, Database(paths.db_url(None), busy_timeout_s=BUSY_TIMEOUT_S))
    context = SessionContext(recipe=recipe, task_id=ids.parser if recipe is Recipe.TASK_EXECUTION else None)
    try:
        with live_clients() as clients:
            clients.open("writer", build_server(services, context))
            clients.open("reader", build_server(services, SessionContext(recipe=Recipe.IDE)))
            before = db_state(paths)
            lock = holder()
            started = time.monotonic()
            result = clients.call("writer", tool, arguments)
            waited = time.monotonic() - started
            message = refusal_text(result)
            assert "held by another process" in message and "nothing was written" in message, message
            assert BUSY_TIMEOUT_S * 0.9 <= waited < BUSY_TIMEOUT_S + 10, f"waited {waited:.2f} s"
            # Readers are not blocked by a writer (WAL), and see nothing of the refused call.
            read = clients.call("reader", "get_task", {"id": ids.parser})
            assert not read.is_error and read.structured_content is not None
            assert read.structured_content["title"] == "Write the parser"
            assert_unchanged(paths, before, f"the {tool} that timed out")
            lock.release()
            assert_unchanged(paths, before, "the holder's rolled-back transaction")
            retried = clients.call("writer", tool, arguments)
            assert not retried.is_error, text_of(retried)
            after = db_state(paths)
            assert after.change_head > before.change_head
    finally:
        services.close()
    assert integrity(paths) == "ok"
