"""The real Claude Code CLI, started from `ClaudeAdapter.build`, against ralph's own MCP server over HTTP.

The model is the scripted stand-in on 127.0.0.1; everything else is real: the CLI, its MCP config file,
the embedded server with the session's credential, the discipline's extra stdio server, and the parser.
"""

from __future__ import annotations

import asyncio
import json
import stat
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ralph_desk.loop.agents.claude import ClaudeAdapter
from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.transcript import Transcript
from tests.loop.fixtures.record import (
    EXTRA_SERVER,
    Project,
    RealRun,
    make_project,
    real_settings,
    run_session,
)
from tests.support.fake_model_api import FakeModelApi, Script, Text, ToolCalls
from tests.support.npm_tools import claude_bin, missing_reason

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    if claude_bin() is None:
        pytest.skip(missing_reason("Claude Code (or $RALPH_CLAUDE_BIN)"))
    made = make_project(tmp_path)
    yield made
    made.services.close()


def run(
    project: Project,
    tmp_path: Path,
    script: Script,
    prompt: str,
    settings: LoopSettings | None = None,
    read_only: bool = False,
) -> tuple[RealRun, FakeModelApi]:
    with FakeModelApi(script) as api:
        result = asyncio.run(
            run_session(
                project, api, prompt, settings or real_settings(), tmp_path / "home", read_only=read_only
            )
        )
    return result, api


def parse(result: RealRun) -> tuple[ClaudeStreamParser, list[LiveEvent]]:
    parser = ClaudeAdapter().parser()
    assert isinstance(parser, ClaudeStreamParser)
    events = [event for line in result.lines for event in parser.feed(line)]
    return parser, events


def test_a_real_session_calls_ralphs_verbs_and_the_disciplines_server(
    project: Project, tmp_path: Path
) -> None:
    script: Script = [
        ToolCalls([(f"mcp__{EXTRA_SERVER}__note", {"text": "plan: parse lines"})], text="Starting."),
        ToolCalls([("mcp__ralph__done", {"summary": "Parser written and tested."})]),
        Text("Finished."),
    ]
    settings = real_settings(models={"task_execution": "claude-sonnet-4-5"})
    prompt = "- Work on the parser task; a prompt may start with a dash and hold `$(shell)` text."
    result, api = run(project, tmp_path, script, prompt, settings=settings)
    print(
        f"\nreal Claude Code session: {result.seconds:.2f} s, {len(api.requests)} model turns",
        file=sys.stderr,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    parser, events = parse(result)
    summary = parser.summary
    assert summary.saw_result and not summary.is_error and not summary.rate_limited
    assert summary.cost_usd > 0 and summary.turns == 3 and summary.result_text == "Finished."

    signals = project.services.signals.for_session(project.plan.session_id)
    assert [(s.verb.value, s.task_id) for s in signals] == [
        ("done", project.plan.task.id if project.plan.task else 0)
    ]
    assert project.notes_file.read_text(encoding="utf-8") == "plan: parse lines\n"

    offered = api.offered_tools(0)
    assert {"mcp__ralph__done", "mcp__ralph__stuck", f"mcp__{EXTRA_SERVER}__note"} <= set(offered)
    assert "mcp__ralph__learned" not in offered  # the discipline disables it
    assert "WebFetch" not in offered and "Bash" in offered
    assert api.requests[0]["model"] == "claude-sonnet-4-5"
    assert prompt in api.user_text(0)

    init = next(event for event in events if event.kind is EventKind.INIT)
    assert init.data["session_id"] == project.plan.session_id
    assert {server["name"]: server["status"] for server in init.data["mcp_servers"]} == {
        "ralph": "connected",
        EXTRA_SERVER: "connected",
    }
    calls = [event.data["tool"] for event in events if event.kind is EventKind.TOOL_CALL]
    assert calls == [f"mcp__{EXTRA_SERVER}__note", "done"]

    (config,) = result.command.config_files
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert result.endpoint.token in config.read_text(encoding="utf-8")
    assert result.endpoint.token not in result.stdout + result.stderr


def test_the_transcript_of_a_real_session_holds_no_credential(project: Project, tmp_path: Path) -> None:
    script: Script = [
        ToolCalls([("mcp__ralph__stuck", {"reason": "cannot reach the database"})]),
        Text("Stopped."),
    ]
    result, _ = run(project, tmp_path, script, "Work on the task.")
    parser = ClaudeStreamParser()
    transcript = Transcript(project.paths.logs_dir, project.plan.session_id)
    transcript.describe(project.plan, agent="claude", command=result.command, prompt="Work on the task.",
                        endpoint=result.endpoint)  # fmt: skip
    for line in result.lines:
        transcript.raw(line)
        for event in parser.feed(line):
            transcript.event(event)
    log = transcript.close(summary=parser.summary, exit_code=result.returncode)
    written = log.read_text(encoding="utf-8") + transcript.summary_path.read_text(encoding="utf-8")
    assert result.endpoint.token not in written
    assert "stuck" in written
    document = json.loads(transcript.summary_path.read_text(encoding="utf-8"))
    assert document["argv"][-1] == "<prompt: 17 characters>" and document["stream"]["saw_result"] is True


def test_a_very_long_prompt_reaches_claude_through_stdin(project: Project, tmp_path: Path) -> None:
    prompt = "Context line.\n" * 8_000 + "END-OF-PROMPT-MARKER"
    result, api = run(project, tmp_path, [Text("Read it all.")], prompt)
    assert result.command.stdin_text == prompt and prompt not in result.command.argv
    assert result.returncode == 0, result.stderr[-2000:]
    assert api.user_text(0).rstrip().endswith("END-OF-PROMPT-MARKER")


def test_a_read_only_session_cannot_change_files(project: Project, tmp_path: Path) -> None:
    target = project.paths.root / "made-by-agent.txt"
    script: Script = [
        ToolCalls(
            [("Bash", {"command": f"touch {target}"}), ("Write", {"file_path": str(target), "content": "x"})]
        ),
        ToolCalls([("mcp__ralph__partial", {"summary": "read the code", "remaining": "the edits"})]),
        Text("Done reading."),
    ]
    result, api = run(project, tmp_path, script, "Look only.", read_only=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not target.exists()
    assert not {"Bash", "Edit", "Write"} & set(api.offered_tools(0))
    _, events = parse(result)
    refused = [e.data["tool"] for e in events if e.kind is EventKind.TOOL_RESULT and e.data["is_error"]]
    assert refused == ["Bash", "Write"]
    verbs = [s.verb.value for s in project.services.signals.for_session(project.plan.session_id)]
    assert verbs == ["partial"]


def test_max_turns_ends_the_session_as_an_error(project: Project, tmp_path: Path) -> None:
    script: Script = [
        ToolCalls([("mcp__ralph__flag", {"what": "odd", "severity": "info", "category": "bug"})])
    ]
    result, _ = run(project, tmp_path, script, "Work.", settings=replace(real_settings(), max_turns=1))
    assert result.returncode == 1
    parser, _ = parse(result)
    assert parser.summary.is_error and parser.summary.error == "Reached maximum number of turns (1)"
    assert not parser.summary.rate_limited
