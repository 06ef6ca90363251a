"""`ralph-desk mcp` over stdio answers the handshake and the listings first, then opens the database."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text

from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from ralph_desk.store.engine import create_db_engine
from tests.support.jsonrpc import INITIALIZE, INITIALIZED, request, tool_call
from tests.support.stdio_wire import StdioWire, mcp_command

TOOLS_LIST = request(2, "tools/list")
PING = request(3, "ping")
GET_TASK = tool_call(4, "get_task", {"id": 1})
READ_TASK = request(5, "resources/read", {"uri": "ralph://tasks/1"})

# What answering the handshake must not wait for: the database layer.
LOADED_LATER = ("sqlalchemy", "alembic", "ralph_desk.store.database")


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    """A project with one task."""
    paths = init_project(tmp_path / "proj", title="Staged start")
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        services.tasks.create("core", "backend", "Write the parser")
    finally:
        services.close()
    return paths


@contextmanager
def spoken_to(paths: ProjectPaths, stderr_file: Path) -> Iterator[StdioWire]:
    """`ralph-desk mcp` for the project, its stderr kept in `stderr_file`, stopped afterwards."""
    with stderr_file.open("wb") as stderr:
        stdio = StdioWire(mcp_command(paths), stderr=stderr)
        try:
            yield stdio
        finally:
            stdio.kill()


FUTURE_REVISION = "f00d_from_the_future"


def set_revision(paths: ProjectPaths, revision: str | None = None) -> str:
    """Mark the database as written by `revision` (a newer ralph-desk's, when given); returns the revision."""
    engine = create_db_engine(paths.db_url())
    try:
        with engine.begin() as connection:
            if revision is not None:
                connection.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
            return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one())
    finally:
        engine.dispose()


@pytest.mark.slow
def test_the_handshake_is_answered_without_loading_the_database_layer(
    project: ProjectPaths,
) -> None:
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *mcp_command(project)[1:]],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout.splitlines()[0])
    assert answer["result"]["serverInfo"]["name"] == "ralph"
    imported = {
        line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")
    }
    assert "mcp.server.mcpserver" in imported, "the import log was not read"
    loaded = sorted(name for name in imported if name.startswith(LOADED_LATER))
    assert loaded == [], f"imported before the handshake was answered: {loaded}"


@pytest.mark.slow
def test_a_client_sending_everything_at_once_gets_every_answer(project: ProjectPaths, tmp_path: Path) -> None:
    with spoken_to(project, tmp_path / "stderr.txt") as wire:
        wire.send(INITIALIZE, INITIALIZED, TOOLS_LIST, PING, GET_TASK, READ_TASK)
        answers = {message["id"]: message for message in (wire.next_message(timeout=60) for _ in range(5))}
        assert answers[1]["result"]["serverInfo"]["name"] == "ralph"
        assert "get_task" in {tool["name"] for tool in answers[2]["result"]["tools"]}
        assert answers[3] == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert answers[4]["result"]["structuredContent"]["title"] == "Write the parser"
        assert "Write the parser" in answers[5]["result"]["contents"][0]["text"]
        assert wire.close() == 0


@pytest.mark.slow
def test_a_database_that_cannot_be_opened_still_lists_the_tools_and_refuses_each_call_with_the_reason(
    project: ProjectPaths, tmp_path: Path
) -> None:
    set_revision(project, FUTURE_REVISION)
    with spoken_to(project, tmp_path / "stderr.txt") as wire:
        wire.send(INITIALIZE)
        assert "result" in wire.answer(1, timeout=60)
        wire.send(INITIALIZED, TOOLS_LIST)
        assert "get_task" in {tool["name"] for tool in wire.answer(2)["result"]["tools"]}
        for request in (GET_TASK, READ_TASK):
            wire.send(request)
            error = wire.answer(request["id"])["error"]
            assert error["code"] == -32603
            assert error["message"].startswith("opening the project's database failed:")
            assert "upgrade ralph-desk" in error["message"]
        exit_code = wire.close()
    # Once the client has gone, the process ends as an eager start would have: exit code 1, one line.
    assert exit_code == 1
    assert "upgrade ralph-desk" in (tmp_path / "stderr.txt").read_text()
    assert set_revision(project) == FUTURE_REVISION, "the newer database was changed"


@pytest.mark.slow
def test_a_session_for_a_task_still_opens_the_database_before_it_answers(project: ProjectPaths) -> None:
    set_revision(project, FUTURE_REVISION)
    run = subprocess.run(
        [*mcp_command(project), "--task-id", "1"],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1 and "upgrade ralph-desk" in run.stderr
    assert run.stdout == "", "a session whose tools depend on the database must not answer without it"


@pytest.mark.slow
def test_garbage_collection_resumes_once_the_store_is_open_with_start_up_frozen(
    project: ProjectPaths, tmp_path: Path
) -> None:
    stderr = tmp_path / "stderr.txt"
    with spoken_to(project, stderr) as wire:
        wire.send(INITIALIZE)
        assert "result" in wire.answer(1, timeout=60)
        assert "start-up over" not in stderr.read_text(), "the collector resumed before the store was open"
        wire.send(INITIALIZED, GET_TASK)
        assert wire.answer(4)["result"]["structuredContent"]["title"] == "Write the parser"
        resumed = [line for line in stderr.read_text().splitlines() if "start-up over" in line]
        assert len(resumed) == 1, stderr.read_text()
        frozen = int(resumed[0].split("start-up over: ")[1].split()[0])
        assert frozen > 10_000, resumed
        assert wire.close() == 0
