"""`ralph-desk run` headless: it exits when nothing is runnable, saying why, unless told to `--wait`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ralph_desk.domain.enums import LoopState, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.loop.headless import EXIT_WAITING
from ralph_desk.project import ProjectPaths, init_project, update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, session, stand_in, verb
from tests.support.cli import ralph_desk_process

pytestmark = [pytest.mark.slow]

RUN_TIMEOUT_S = 180


def ask_then_finish(question: str) -> list[Any]:
    """A task script: a blocking question with a partial, then (once answered) done."""
    return [
        *session(
            verb("ask", question=question, options=["knots", "km/h"], blocking=True),
            verb("partial", summary="wind data read", remaining="convert the speeds"),
        ),
        *session(verb("done", summary="converted")),
    ]


def test_run_on_a_project_whose_tasks_are_all_done_exits_0_saying_all_done(project: Services) -> None:
    task = project.tasks.create("core", "backend", "Finished long ago")
    project.tasks.move(task.id, TaskStatus.DONE.value, Mover.IMPORT)
    run = ralph_desk_process("run", "--root", str(project.paths.root), *stand_in().cli)
    assert run.returncode == 0, run.stderr
    assert "all done" in run.stdout
    assert project.sessions.list() == []


def test_run_with_a_question_waiting_exits_naming_it_and_how_to_answer(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Wind speeds")
    start_api(**{heading(task.id): ask_then_finish("Knots or km/h?")})
    logs = project.paths.root.parent / "run-logs"
    run = ralph_desk_process("run", "--root", str(project.paths.root), *agent.cli, "--log-dir", str(logs))
    assert run.returncode == EXIT_WAITING, run.stdout + run.stderr
    (ask,) = project.inbox.asks()
    (log_file,) = logs.glob("*_run.log")
    calls = [json.loads(line) for line in log_file.with_suffix(".tools.jsonl").read_text().splitlines()]
    assert [(call["tool"], call["session"]) for call in calls] == [
        ("ask", ask.session_id),
        ("partial", ask.session_id),
    ]
    assert "Knots or km/h?" in run.stdout
    assert f"ralph-desk answer --root {project.paths.root} {ask.id} TEXT" in run.stdout
    as_json = ralph_desk_process("run", "--root", str(project.paths.root), *agent.cli, "--json")
    finished = json.loads(as_json.stdout.strip().splitlines()[-1])
    assert as_json.returncode == EXIT_WAITING and finished["allDone"] is False
    assert any(f"question #{ask.id}" in line for line in finished["waitingFor"])


def test_run_with_wait_picks_up_an_answer_given_from_another_process_and_ends_when_all_is_done(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Wind speeds")
    api = start_api(**{heading(task.id): ask_then_finish("Knots or km/h?")})
    root = str(project.paths.root)
    command = [sys.executable, "-m", "ralph_desk", "run", "--root", root, *agent.cli, "--wait", "--json"]
    loop = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = threading.Timer(RUN_TIMEOUT_S, loop.kill)  # a hung loop ends the test, not the suite
    deadline.start()
    try:
        assert loop.stdout is not None
        for line in loop.stdout:
            event = json.loads(line)
            if event.get("event") == "loop_state" and event.get("text") == LoopState.WAITING.value:
                break
        (ask,) = project.inbox.asks()
        answered = ralph_desk_process("answer", "--root", root, str(ask.id), "knots")
        assert answered.returncode == 0, answered.stderr
        for line in loop.stdout:
            event = json.loads(line)
            if event.get("event") == "session_ended" and project.tasks.get(task.id).status is TaskStatus.DONE:
                break
        assert project.tasks.get(task.id).status is TaskStatus.DONE
        # All work is done: the loop that waited for a person ends by itself (when_all_done: stop).
        finished = json.loads(loop.stdout.read().strip().splitlines()[-1])
        assert (finished["event"], finished["state"], finished["allDone"]) == ("finished", "completed", True)
    finally:
        loop.terminate()
        loop.wait(RUN_TIMEOUT_S)
        deadline.cancel()
    assert loop.returncode == 0
    assert "ANSWER to your question 'Knots or km/h?': knots" in api.user_text(2)


def test_run_with_work_in_review_exits_naming_it_and_the_review_commands(
    project: Services, start_api: StartApi
) -> None:
    update_config(project.paths, review_gate=True)
    task = project.tasks.create("core", "backend", "Tide table")
    start_api(**{heading(task.id): session(verb("done", summary="table parsed"))})
    run = ralph_desk_process("run", "--root", str(project.paths.root), *stand_in().cli)
    assert run.returncode == EXIT_WAITING, run.stdout + run.stderr
    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert f"task #{task.id} waits for review: Tide table" in run.stdout and "review approve" in run.stdout


AGENT_DONE = Path(__file__).parents[1] / "postgres" / "agent_done.py"


def second_checkout(project: Services, where: Path) -> Path:
    """Another machine's checkout of the project (a clone with its own `.ralph/`), on the same database."""
    subprocess.run(["git", "clone", "-q", str(project.paths.root), str(where)], check=True)
    init_project(where, title="Loop e2e", force=True, db_url=project.db.url)
    update_config(ProjectPaths.at(where), review_gate=False, sandbox=False)  # its agents wait at a gate
    return where


def let_go(gate: Path) -> None:
    """Let the agent waiting at `gate` (a named pipe) go on."""
    with open(gate, "w", encoding="utf-8") as opened:
        opened.write("go\n")


def test_run_with_only_another_runners_task_left_exits_0_saying_it_runs_elsewhere(
    project: Services, tmp_path: Path
) -> None:
    running = project.tasks.create("core", "backend", "Chart the tides")
    follows = project.tasks.create("core", "backend", "Print the chart", depends_on=[running.id])
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    update_config(project.paths, sandbox=False)  # the agent waits at a named pipe outside the project
    agent_command = f"{sys.executable} {AGENT_DONE} {{mcp_config}} {{prompt_file}}"
    agent = ("--agent", "command", "--agent-command", agent_command)
    env = {**os.environ, "RALPH_TEST_AGENT_GATE": str(gate), "RALPH_TEST_MACHINE": "A"}
    root = str(project.paths.root)
    command = [sys.executable, "-m", "ralph_desk", "run", "--root", root, "--db-url", project.db.url]
    first = subprocess.Popen(
        [*command, *agent, "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = threading.Timer(RUN_TIMEOUT_S, first.kill)
    deadline.start()
    try:
        assert first.stdout is not None
        assert any(json.loads(line).get("event") == "session_started" for line in first.stdout)
        other = second_checkout(project, tmp_path / "machine-b")
        second = ralph_desk_process("run", "--root", str(other), "--db-url", project.db.url, *agent, "--json")
        let_go(gate)  # the first task's agent
        for line in first.stdout:
            if json.loads(line).get("event") == "session_started":
                let_go(gate)  # the dependent task's, once the first is merged
        errors = first.stderr.read() if first.stderr else ""
        first.wait(RUN_TIMEOUT_S)
    finally:
        if first.poll() is None:
            first.kill()
        deadline.cancel()

    assert second.returncode == 0, second.stdout + second.stderr
    finished = json.loads(second.stdout.strip().splitlines()[-1])
    assert finished["waitingFor"] == [] and finished["allDone"] is False
    assert finished["runningElsewhere"] == [
        f"task #{running.id} is running in another loop: Chart the tides",
        "1 pending task(s) wait for those to finish",
    ]
    assert first.returncode == 0, errors
    assert project.tasks.get(running.id).status is TaskStatus.DONE
    assert project.tasks.get(follows.id).status is TaskStatus.DONE
