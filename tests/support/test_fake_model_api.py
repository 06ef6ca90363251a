"""Tests for the fake Messages API, with plain HTTP and with the real Claude Code CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_api import FakeModelApi, HttpError, Script, Text, ToolCalls
from tests.support.npm_tools import claude_bin, conformance_cmd, inspector_cmd, missing_reason

ECHO_SERVER = textwrap.dedent(
    '''
    import os

    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("t")


    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text back and append it to $ECHO_FILE."""
        with open(os.environ["ECHO_FILE"], "a", encoding="utf-8") as f:
            f.write(text + "\\n")
        return text


    if __name__ == "__main__":
        mcp.run()
    '''
)

ECHO_TOOL = "mcp__t__echo"


def _post(api: FakeModelApi, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(
        api.base_url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def _turn_body(prompt: str, *, stream: bool, tools: Sequence[str] = (ECHO_TOOL,)) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "stream": stream,
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        "tools": [{"name": n, "input_schema": {"type": "object"}} for n in tools],
    }


def _sse_events(raw: bytes) -> list[dict[str, Any]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if line)
        if lines:
            data = json.loads(lines["data"])
            assert data["type"] == lines["event"]
            events.append(data)
    return events


# -- the fake on its own (fast) ---------------------------------------------------------------------


def test_streaming_tool_calls_are_proper_sse() -> None:
    with FakeModelApi(
        [ToolCalls([(ECHO_TOOL, {"text": "a"}), (ECHO_TOOL, {"text": "b"})], text="two")]
    ) as api:
        status, headers, raw = _post(api, "/v1/messages?beta=true", _turn_body("hi", stream=True))
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    events = _sse_events(raw)
    assert [e["type"] for e in events] == [
        "message_start",
        *["content_block_start", "content_block_delta", "content_block_stop"] * 3,
        "message_delta",
        "message_stop",
    ]
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use", "tool_use"]
    assert starts[1]["name"] == ECHO_TOOL and starts[1]["id"] != starts[2]["id"]
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    assert json.loads(deltas[2]["partial_json"]) == {"text": "b"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert events[-2]["usage"]["output_tokens"] > 0


def test_non_streaming_json_and_fallback_after_script() -> None:
    with FakeModelApi([Text("first")]) as api:
        _, _, raw1 = _post(api, "/v1/messages", _turn_body("hi", stream=False))
        _, _, raw2 = _post(api, "/v1/messages", _turn_body("hi", stream=False))
        api.wait_turns(2, timeout=5)
    first, second = json.loads(raw1), json.loads(raw2)
    assert first["content"] == [{"type": "text", "text": "first"}] and first["stop_reason"] == "end_turn"
    assert second["content"][0]["text"] == "done"
    assert [r.turn_index for r in api.turn_requests] == [0, None]


def test_http_errors_carry_anthropic_body_and_retry_after() -> None:
    with FakeModelApi([HttpError(429, retry_after=3), HttpError(529)]) as api:
        s1, h1, b1 = _post(api, "/v1/messages", _turn_body("hi", stream=True))
        s2, _, b2 = _post(api, "/v1/messages", _turn_body("hi", stream=True))
    assert (s1, h1["retry-after"], json.loads(b1)["error"]["type"]) == (429, "3", "rate_limit_error")
    assert (s2, json.loads(b2)["error"]["type"]) == (529, "overloaded_error")
    assert json.loads(b1)["type"] == "error"


def test_side_requests_and_other_endpoints_consume_no_turn() -> None:
    with FakeModelApi([Text("scripted")]) as api:
        side = _turn_body("make a title", stream=False, tools=())
        _, _, raw = _post(api, "/v1/messages", side)
        status, _, counted = _post(api, "/v1/messages/count_tokens", side)
        _, _, turn = _post(api, "/v1/messages", _turn_body("hi", stream=False))
    assert json.loads(raw)["content"][0]["text"] == "Fake title"
    assert status == 200 and json.loads(counted)["input_tokens"] > 0
    assert json.loads(turn)["content"][0]["text"] == "scripted"
    assert len(api.side_requests) == 1 and len(api.requests) == 1
    assert api.offered_tools(0) == [ECHO_TOOL]


def test_scripts_keyed_by_marker_in_first_user_message() -> None:
    sessions = {"TASK-A": [Text("a1"), Text("a2")], "TASK-B": [Text("b1")]}
    with FakeModelApi([Text("default")], sessions=sessions) as api:

        def ask(prompt: str) -> str:
            return str(
                json.loads(_post(api, "/v1/messages", _turn_body(prompt, stream=False))[2])["content"][0][
                    "text"
                ]
            )

        answers = [ask("work on TASK-A"), ask("work on TASK-B"), ask("work on TASK-A"), ask("nothing")]
        assert (api.served("TASK-A"), api.served("TASK-B"), api.served(None)) == (2, 1, 1)
        api.wait_turns(2, key="TASK-A", timeout=5)
    assert answers == ["a1", "b1", "a2", "default"]
    assert [r.script_key for r in api.turn_requests] == ["TASK-A", "TASK-B", "TASK-A", None]


def test_wait_turns_times_out_without_traffic() -> None:
    with FakeModelApi([Text("x")]) as api, pytest.raises(TimeoutError):
        api.wait_turns(1, timeout=0.05)


# -- the real Claude Code CLI -----------------------------------------------------------------------


@dataclass
class ClaudeRun:
    """Outcome of one headless claude run."""

    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    seconds: float

    @property
    def result(self) -> dict[str, Any]:
        """The final `result` event."""
        results = [e for e in self.events if e.get("type") == "result"]
        assert results, f"no result event; stderr: {self.stderr[-2000:]}"
        return results[-1]


@pytest.fixture
def claude() -> Path:
    """The Claude Code binary, or skip."""
    path = claude_bin()
    if path is None:
        pytest.skip(missing_reason("Claude Code (or $RALPH_CLAUDE_BIN)"))
    return path


@pytest.fixture
def echo_server(tmp_path: Path) -> tuple[Path, Path]:
    """A throwaway stdio MCP server file and the file its echo tool appends to."""
    server = tmp_path / "echo_server.py"
    server.write_text(ECHO_SERVER, encoding="utf-8")
    return server, tmp_path / "echo.txt"


def run_claude(
    claude: Path,
    api: FakeModelApi,
    workdir: Path,
    echo_server: tuple[Path, Path],
    prompt: str = "hi",
    extra_env: dict[str, str] | None = None,
) -> ClaudeRun:
    """Run `claude -p` headless against the fake API with only the echo MCP server."""
    server, out_file = echo_server
    config = workdir / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "t": {
                        "type": "stdio",
                        "command": sys.executable,
                        "args": [str(server)],
                        "env": {"ECHO_FILE": str(out_file)},
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    # A minimal environment: variables of an enclosing agent session must not leak into the CLI.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8", **api.env()}
    env.update(extra_env or {})
    argv = [
        str(claude), "-p", prompt, "--output-format", "stream-json", "--verbose",
        "--mcp-config", str(config), "--strict-mcp-config", "--max-turns", "5",
        "--permission-mode", "dontAsk", "--allowedTools", ECHO_TOOL,
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.run(
        argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return ClaudeRun(proc.returncode, events, proc.stderr, time.monotonic() - started)


@pytest.mark.slow
def test_real_claude_calls_scripted_mcp_tool(
    claude: Path, tmp_path: Path, echo_server: tuple[Path, Path]
) -> None:
    with FakeModelApi([ToolCalls([(ECHO_TOOL, {"text": "hello from the script"})]), Text("all good")]) as api:
        run = run_claude(claude, api, tmp_path, echo_server)
    assert echo_server[1].read_text(encoding="utf-8") == "hello from the script\n"
    result = run.result
    assert run.returncode == 0, run.stderr
    assert (result["subtype"], result["is_error"], result["result"]) == ("success", False, "all good")
    assert isinstance(result["total_cost_usd"], float | int) and result["total_cost_usd"] > 0
    assert ECHO_TOOL in api.offered_tools(0)
    assert "hi" in api.user_text(0)
    assert "hello from the script" in json.dumps(api.tool_results(1))
    assert not api.side_requests


@pytest.mark.slow
def test_real_claude_reports_rate_limit(claude: Path, tmp_path: Path, echo_server: tuple[Path, Path]) -> None:
    with FakeModelApi([HttpError(429)]) as api:
        run = run_claude(claude, api, tmp_path, echo_server, extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
    assert run.returncode == 1
    assert (run.result["is_error"], run.result["api_error_status"]) == (True, 429)
    assert len(api.requests) == 1


@pytest.mark.slow
def test_real_claude_sequential_sessions_use_keyed_scripts(
    claude: Path, tmp_path: Path, echo_server: tuple[Path, Path]
) -> None:
    sessions: dict[str, Script] = {
        "TASK-1": [ToolCalls([(ECHO_TOOL, {"text": "one"})]), Text("done one")],
        "TASK-2": [ToolCalls([(ECHO_TOOL, {"text": "two"})]), Text("done two")],
    }
    with FakeModelApi(sessions=sessions) as api:
        first = run_claude(claude, api, tmp_path, echo_server, prompt="Work on TASK-1")
        second = run_claude(claude, api, tmp_path, echo_server, prompt="Work on TASK-2")
    assert (first.result["result"], second.result["result"]) == ("done one", "done two")
    assert echo_server[1].read_text(encoding="utf-8") == "one\ntwo\n"
    assert (api.served("TASK-1"), api.served("TASK-2"), api.served(None)) == (2, 2, 0)


# -- other npm tools against the same throwaway server -----------------------------------------------


@pytest.mark.slow
def test_inspector_cli_lists_tools(echo_server: tuple[Path, Path]) -> None:
    cmd = inspector_cmd()
    if cmd is None:
        pytest.skip(missing_reason("MCP Inspector with Node >= 22.19"))
    server, out_file = echo_server
    proc = subprocess.run(
        [*cmd, "-e", f"ECHO_FILE={out_file}", sys.executable, str(server), "--method", "tools/list"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in json.loads(proc.stdout)["tools"]] == ["echo"]


@pytest.mark.slow
def test_conformance_lists_server_scenarios() -> None:
    cmd = conformance_cmd()
    if cmd is None:
        pytest.skip(missing_reason("MCP conformance with Node >= 22"))
    proc = subprocess.run(
        [*cmd, "list", "--server"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "server-initialize" in proc.stdout
