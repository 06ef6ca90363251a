"""A binary-free coding agent for the `command` agent template: a small stdlib MCP client that calls verbs.

It reads the session's prompt and MCP config, speaks MCP to every server of the config (the ralph
server over streamable HTTP with the session's credential, others over stdio), and asks a model for
its turns: the scripted model API of the tests (`ANTHROPIC_BASE_URL`, the Messages format that
`FakeModelApi` serves to Claude Code, so one script drives both agents), or else the calls given with
`--call` (one turn of calls, then the end). It prints Claude Code's stream-json events, which the
`command` adapter reads. Standard library only (its MCP client is the rehearsal agent's,
`ralph_desk.loop.rehearse`, which imports nothing else), so that it starts in a few tens of milliseconds.

    python stand_in_agent.py PROMPT_FILE MCP_CONFIG [--call 'done={"summary": "…"}' ...]

(`--call 'Write={"file_path": "…", "content": "…"}'` edits a file in the same turn.)

What a script can make it do: call any offered tool (`mcp__<server>__<tool>`), edit a file with the
local `Write`, `Read` and `Edit` tools (as Claude Code's), wait as long as the model does not
answer (killed by a stop or a timeout), and end with an error exit: an HTTP error from the model API
(429/529 printed as the rate-limit result Claude Code prints; a usage limit's reset time from the
anthropic-ratelimit-unified-* headers as its `rate_limit_event`).

With `STAND_IN_RENDEZVOUS=FOLDER:COUNT:HOLD_S` in its environment it first leaves a file in FOLDER,
waits (up to RENDEZVOUS_LIMIT_S) until COUNT agents have left theirs, then works HOLD_S seconds
longer: agents that run at once see each other, and each session takes a while, as a real one does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from ralph_desk.loop.rehearse import (
    HttpServer,
    Message,
    emit,
    exchange,
    initialize_params,
    result_of,
    tool_answer,
)

MODEL = "stand-in"
MAX_TURNS = 50
WRITE_TOOL: dict[str, Any] = {
    "name": "Write",
    "description": "Write a file in the working directory.",
    "input_schema": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
    },
}
READ_TOOL: dict[str, Any] = {
    "name": "Read",
    "description": "Read a file.",
    "input_schema": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}},
        "required": ["file_path"],
    },
}
EDIT_TOOL: dict[str, Any] = {
    "name": "Edit",
    "description": "Replace the one occurrence of old_string in a file by new_string.",
    "input_schema": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
        },
        "required": ["file_path", "old_string", "new_string"],
    },
}
LOCAL_TOOLS = ("Write", "Read", "Edit")
# Dollars per input and per output token, so that sessions cost something, as a real model's do.
PRICE = (3e-6, 15e-6)
RATE_LIMIT_STATUSES = (429, 529)
RENDEZVOUS_ENV = "STAND_IN_RENDEZVOUS"
RENDEZVOUS_LIMIT_S = 60.0
RENDEZVOUS_POLL_S = 0.02


class StdioServer:
    """An MCP server started from the config's command, spoken to in JSON lines."""

    def __init__(self, spec: Message) -> None:
        self._process = subprocess.Popen(
            [spec["command"], *spec.get("args", [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **spec.get("env", {})},
            text=True,
        )
        self._ids = 0
        self.call("initialize", initialize_params(MODEL))
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, document: Message) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(document) + "\n")
        self._process.stdin.flush()

    def call(self, method: str, params: Message) -> Message:
        """One request's result; an error answer raises."""
        self._ids += 1
        self._send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        assert self._process.stdout is not None
        for line in self._process.stdout:
            answer = json.loads(line)
            if answer.get("id") == self._ids and "method" not in answer:
                return result_of(method, answer)
        raise RuntimeError(f"{method}: the server exited")

    def close(self) -> None:
        """Stop the server."""
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(10)


class Tools:
    """Every tool the config's servers offer, named `mcp__<server>__<tool>` as Claude Code names them."""

    def __init__(self, config: Message) -> None:
        self.servers: dict[str, HttpServer | StdioServer] = {}
        self.offered: list[Message] = [WRITE_TOOL, READ_TOOL, EDIT_TOOL]
        for name, spec in config["mcpServers"].items():
            server = HttpServer(spec, MODEL) if "url" in spec else StdioServer(spec)
            self.servers[name] = server
            for tool in server.call("tools/list", {})["tools"]:
                self.offered.append(
                    {
                        "name": f"mcp__{name}__{tool['name']}",
                        "description": tool.get("description", ""),
                        "input_schema": tool["inputSchema"],
                    }
                )

    def call(self, name: str, arguments: Message) -> tuple[str, bool]:
        """A tool's answer as text, and whether it is an error."""
        if name in LOCAL_TOOLS:
            return local_tool(name, arguments)
        server, _, tool = name.removeprefix("mcp__").partition("__")
        if server not in self.servers or name not in {t["name"] for t in self.offered}:
            return f"Error: No such tool available: {name}", True
        return tool_answer(self.servers[server].call("tools/call", {"name": tool, "arguments": arguments}))

    def close(self) -> None:
        """End every server's session."""
        for server in self.servers.values():
            server.close()


def local_tool(name: str, arguments: Message) -> tuple[str, bool]:
    """Claude Code's file tools, as far as the tests use them: Write, Read and a unique-match Edit."""
    path = Path(arguments["file_path"])
    if name == "Write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(arguments["content"], encoding="utf-8")
        return f"wrote {path}", False
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        return f"Error: {error}", True
    if name == "Read":
        return text, False
    if text.count(arguments["old_string"]) != 1:
        return f"Error: old_string found {text.count(arguments['old_string'])} times in {path}", True
    path.write_text(text.replace(arguments["old_string"], arguments["new_string"]), encoding="utf-8")
    return f"edited {path}", False


class ModelApi:
    """The scripted Messages API: one POST per turn, no streaming."""

    def __init__(self, base_url: str) -> None:
        self._url = base_url.rstrip("/") + "/v1/messages"
        self._headers = {
            "content-type": "application/json",
            "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
            "anthropic-version": "2023-06-01",
        }

    def turn(self, messages: list[Message], tools: list[Message]) -> tuple[int, Message]:
        """The HTTP status and the answer (a message, or an error envelope)."""
        body = {"model": MODEL, "max_tokens": 4096, "messages": messages, "tools": tools}
        reply = exchange(self._url, "POST", body, self._headers)
        reset = reply.headers.get("anthropic-ratelimit-unified-reset")
        if reply.headers.get("anthropic-ratelimit-unified-status") == "rejected" and reset:
            # A usage limit with its reset time, as Claude Code reports one.
            info = {"status": "rejected", "resetsAt": int(reset), "rateLimitType": "five_hour"}
            emit({"type": "rate_limit_event", "rate_limit_info": info})
        answer: Message = json.loads(reply.text or "{}")
        return reply.status, answer


class GivenCalls:
    """The `--call` turns: every call in one turn, then a closing text."""

    def __init__(self, calls: list[tuple[str, Message]]) -> None:
        uses = [
            {"type": "tool_use", "id": f"call_{i}", "name": n, "input": a} for i, (n, a) in enumerate(calls)
        ]
        self._turns = [uses] if uses else []
        self._turns.append([{"type": "text", "text": "Session over."}])

    def turn(self, messages: list[Message], tools: list[Message]) -> tuple[int, Message]:
        """The next turn (the last one again once all were given)."""
        content = self._turns[min(len(messages) // 2, len(self._turns) - 1)]
        stop = "tool_use" if content[0]["type"] == "tool_use" else "end_turn"
        return 200, {
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }


def parse_call(text: str) -> tuple[str, Message]:
    """`verb={json arguments}` as a call of ralph's `verb` (or of the local `Write` tool)."""
    name, _, arguments = text.partition("=")
    tool = name if name in LOCAL_TOOLS else f"mcp__ralph__{name}"
    return tool, json.loads(arguments or "{}")


def run(prompt: str, tools: Tools, model: ModelApi | GivenCalls, session_id: str) -> int:
    """The agent loop, printing stream-json; the exit status."""
    messages: list[Message] = [{"role": "user", "content": prompt}]
    used = [0, 0]
    text = ""
    for turn in range(1, MAX_TURNS + 1):
        status, answer = model.turn(messages, tools.offered)
        if status >= 400:
            error = answer.get("error", {}).get("message", f"HTTP {status}")
            emit(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": True,
                    "api_error_status": status,
                    "num_turns": turn,
                    "result": f"API Error: {status} {error}",
                    "session_id": session_id,
                    "total_cost_usd": 0,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                }
            )
            return 1
        usage = answer.get("usage", {})
        used[0] += usage.get("input_tokens", 0)
        used[1] += usage.get("output_tokens", 0)
        content = answer.get("content", [])
        emit({"type": "assistant", "message": {"role": "assistant", "model": MODEL, "content": content}})
        messages.append({"role": "assistant", "content": content})
        calls = [block for block in content if block.get("type") == "tool_use"]
        if answer.get("stop_reason") != "tool_use" or not calls:
            text = "\n".join(block.get("text", "") for block in content if block.get("type") == "text")
            break
        results = []
        for block in calls:
            output, is_error = tools.call(block["name"], block.get("input", {}))
            results.append(
                {"type": "tool_result", "tool_use_id": block["id"], "content": output, "is_error": is_error}
            )
        emit({"type": "user", "message": {"role": "user", "content": results}})
        messages.append({"role": "user", "content": results})
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": turn,
            "result": text,
            "session_id": session_id,
            "total_cost_usd": used[0] * PRICE[0] + used[1] * PRICE[1],
            "usage": {"input_tokens": used[0], "output_tokens": used[1]},
        }
    )
    return 0


def rendezvous(spec: str) -> None:
    """Arrive in the folder, wait for the others (or the limit), then hold: `FOLDER:COUNT:HOLD_S`."""
    folder, count, hold = spec.rsplit(":", 2)
    arrivals = Path(folder)
    arrivals.mkdir(parents=True, exist_ok=True)
    (arrivals / f"{os.getpid()}-{uuid.uuid4().hex}").touch()
    deadline = time.monotonic() + RENDEZVOUS_LIMIT_S
    while len(list(arrivals.iterdir())) < int(count) and time.monotonic() < deadline:
        time.sleep(RENDEZVOUS_POLL_S)
    time.sleep(float(hold))


def main(argv: list[str] | None = None) -> int:
    """Run one session; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt_file", type=Path)
    parser.add_argument("mcp_config", type=Path)
    parser.add_argument("--call", action="append", default=[], type=parse_call, help="verb={json arguments}")
    args = parser.parse_args(argv)
    config = json.loads(args.mcp_config.read_text(encoding="utf-8"))
    base_url = os.environ.get("ANTHROPIC_BASE_URL")
    model = GivenCalls(args.call) if args.call or not base_url else ModelApi(base_url)
    session_id = str(uuid.uuid4())
    tools = Tools(config)
    emit(
        {
            "type": "system",
            "subtype": "init",
            "model": MODEL,
            "session_id": session_id,
            "mcp_servers": [{"name": name, "status": "connected"} for name in tools.servers],
            "tools": [tool["name"] for tool in tools.offered],
        }
    )
    try:
        if os.environ.get(RENDEZVOUS_ENV):
            rendezvous(os.environ[RENDEZVOUS_ENV])
        return run(args.prompt_file.read_text(encoding="utf-8"), tools, model, session_id)
    finally:
        tools.close()


if __name__ == "__main__":
    sys.exit(main())
