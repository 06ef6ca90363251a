"""Two machines, one PostgreSQL database: two `ralph-desk run` processes, each in its own checkout,
share one queue. Their agent is a command template whose script calls `done` over HTTP with its
session's bearer token, so every signal goes through the real MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine, select, text
from sqlalchemy.pool import NullPool

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.project import ProjectPaths, update_config
from ralph_desk.services.container import Services
from ralph_desk.store.schema import AgentSessionRow, TaskSignalRow
from tests.postgres.conftest import git_project, wait_until

AGENT = Path(__file__).with_name("agent_done.py")
AGENT_COMMAND = f"{sys.executable} {AGENT} {{mcp_config}} {{prompt_file}}"
RUN_TIMEOUT_S = 240
TASKS = 12

pytestmark = pytest.mark.slow


def start_runner(
    paths: ProjectPaths, db_url: str, machine: str, gate: Path | None = None, parallel: int = 1
) -> subprocess.Popen[str]:
    """`ralph-desk run --exit-when-idle` on one machine's checkout, printing its events as JSON lines."""
    env = {**os.environ, "RALPH_TEST_MACHINE": machine}
    env.pop("RALPH_TEST_AGENT_GATE", None)
    if gate is not None:
        env["RALPH_TEST_AGENT_GATE"] = str(gate)
    command = [sys.executable, "-m", "ralph_desk", "run", "--root", str(paths.root), "--db-url", db_url]
    command += ["--agent", "command", "--agent-command", AGENT_COMMAND, "--exit-when-idle", "--json"]
    command += ["--parallel", str(parallel)]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )


def finish(runner: subprocess.Popen[str]) -> str:
    """Wait for a runner to end on its own; its output, checked for a clean exit."""
    out, err = runner.communicate(timeout=RUN_TIMEOUT_S)
    # A runner that ends while the other machine still works (or merges) says so, and exits 0: no person is
    # needed.
    assert runner.returncode == 0, f"exit {runner.returncode}\n{out[-3000:]}\n{err[-3000:]}"
    return out


def read_until_session_starts(runner: subprocess.Popen[str]) -> bool:
    """Read a runner's JSON events until its first session starts (True) or it ends without one."""
    assert runner.stdout is not None
    for line in runner.stdout:
        if line.startswith("{") and json.loads(line)["event"] == "session_started":
            return True
    return False


@pytest.fixture
def machines(pg_url: str, tmp_path: Path) -> Iterator[dict[str, ProjectPaths]]:
    """Two checkouts (machines A and B) of one project whose database is `pg_url`: feature core,
    discipline backend, no tasks yet, no review gate."""
    checkouts = {name: git_project(tmp_path / f"machine-{name}", pg_url) for name in "AB"}
    for paths in checkouts.values():
        # About claims, not reviews: done work merges at once into each machine's own checkout.
        update_config(paths, review_gate=False, sandbox=False)  # the agents wait at a gate outside
    services = Services.open(checkouts["A"], pg_url)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    services.close()
    yield checkouts


def _sessions_per_task(services: Services) -> Counter[int | None]:
    with services.db.read() as unit:
        return Counter(unit.session.scalars(select(AgentSessionRow.task_id)).all())


def _done_summaries(services: Services) -> list[str]:
    with services.db.read() as unit:
        query = select(TaskSignalRow.summary).where(TaskSignalRow.verb == "done")
        return [summary or "" for summary in unit.session.scalars(query)]


def _runners_waiting_on(connection: Connection, table: str) -> int:
    query = text("SELECT count(*) FROM pg_locks WHERE relation = CAST(:table AS regclass) AND NOT granted")
    return int(connection.execute(query, {"table": table}).scalar_one())


@pytest.mark.parametrize("parallel", [1, 2])
def test_two_runners_on_one_postgresql_database_never_run_a_task_twice_and_share_the_queue(
    pg_url: str, machines: dict[str, ProjectPaths], parallel: int
) -> None:
    services = Services.open(machines["A"], pg_url)
    task_ids = [services.tasks.create("core", "backend", f"Chart {n}").id for n in range(TASKS)]

    # Both runners are held at their start line (each writes its loop run as it starts, after its
    # start-up recovery) and let go together, so that their first claims race.
    admin = create_engine(pg_url, poolclass=NullPool)
    runners: list[subprocess.Popen[str]] = []
    try:
        with admin.connect() as holder:
            holder.execute(text("LOCK TABLE loop_runs IN EXCLUSIVE MODE"))
            runners.extend(start_runner(machines[name], pg_url, name, parallel=parallel) for name in "AB")
            wait_until(lambda: _runners_waiting_on(holder, "loop_runs") == 2, 120, "both runners to start")
            holder.commit()
        outputs = [finish(runner) for runner in runners]
    finally:
        admin.dispose()
        for runner in runners:
            if runner.poll() is None:
                runner.kill()

    try:
        assert _sessions_per_task(services) == Counter(task_ids)  # every task once, nothing else
        counts = services.tasks.count_by_status()
        assert counts[TaskStatus.DONE.value] == sum(counts.values()) == TASKS
        summaries = _done_summaries(services)
        assert len(summaries) == TASKS
        by_machine = Counter(summary.rsplit(" ", 1)[-1].rstrip(".") for summary in summaries)
        assert set(by_machine) == {"A", "B"}, by_machine  # both machines did some of the work
        assert all('"state": "completed"' in output for output in outputs)
        loop_runs = [run for run in services.sessions.list_loop_runs() if run.iterations]
        assert sorted(run.iterations for run in loop_runs) == sorted(by_machine.values())
    finally:
        services.close()


def test_a_runner_starting_while_another_machine_is_mid_session_leaves_that_task_alone(
    pg_url: str, machines: dict[str, ProjectPaths], tmp_path: Path
) -> None:
    services = Services.open(machines["A"], pg_url)
    task = services.tasks.create("core", "backend", "Draw the tide chart")
    gates = {name: tmp_path / f"gate-{name}" for name in "AB"}
    for fifo in gates.values():
        os.mkfifo(fifo)
    first = start_runner(machines["A"], pg_url, "A", gates["A"])
    started = [first]
    try:
        assert read_until_session_starts(first)  # A holds the task; its agent waits at the gate
        second = start_runner(machines["B"], pg_url, "B", gates["B"])
        started.append(second)
        second_ran_it = read_until_session_starts(second)
        for name, runner in (("A", first), ("B", second)):
            if name == "A" or second_ran_it:
                with open(gates[name], "w", encoding="utf-8") as gate:
                    gate.write("go\n")
            finish(runner)

        assert _sessions_per_task(services) == Counter([task.id])
        assert services.tasks.get(task.id).status is TaskStatus.DONE
    finally:
        for runner in started:
            if runner.poll() is None:
                runner.kill()
        services.close()
