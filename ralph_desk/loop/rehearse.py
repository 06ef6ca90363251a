"""The rehearsal agent's process: plays a scripted session through ralph's MCP server (standard library only),
and the demo's check it is checked by.

Run as `ralph-desk rehearse SCRIPT MCP_CONFIG` (the frozen app is its own interpreter), it reads the
script the rehearsal adapter wrote — what to say and which verbs to call — speaks MCP over streamable
HTTP to the `ralph` server of the session's config with the session's credential, and prints Claude
Code's stream-json events, so the loop reads it exactly as it reads a real agent. No model, no cost.
Only the ralph server is contacted: a rehearsal never starts the programs a discipline names.

Its MCP client (`HttpServer`, `exchange`, the handshake) is also the tests' stand-in agent's: one
stdlib MCP client.
"""

from __future__ import annotations

import http.client
import json
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PROTOCOL = "2025-11-25"
MODEL = "rehearsal"
SERVER = "ralph"
HTTP_TIMEOUT_S = 600.0

Message = dict[str, Any]


def emit(event: Message) -> None:
    """Print one stream-json event."""
    print(json.dumps(event), flush=True)


@dataclass(frozen=True)
class Reply:
    """An HTTP answer, read whole."""

    status: int
    headers: dict[str, str]  # names in lower case
    text: str


def exchange(url: str, method: str, body: Message | None, headers: dict[str, str]) -> Reply:
    """One HTTP request on a connection of its own (a server may close a kept-alive one while idle)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=HTTP_TIMEOUT_S)
    try:
        connection.request(method, parts.path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        text = response.read().decode()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
    finally:
        connection.close()


def initialize_params(client: str) -> Message:
    """The `initialize` request's parameters for a client of this name."""
    return {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": client, "version": "1"}}


def result_of(method: str, answer: Message) -> Message:
    """The result of a JSON-RPC answer; an error answer raises."""
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    result: Message = answer.get("result", {})
    return result


def tool_answer(result: Message) -> tuple[str, bool]:
    """A `tools/call` result as its text, and whether it is an error."""
    text = "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")
    return text, bool(result.get("isError"))


class HttpServer:
    """An MCP server over streamable HTTP (JSON or SSE answers), with the config's headers."""

    def __init__(self, spec: Message, client: str = MODEL) -> None:
        self._url: str = spec["url"]
        self._headers = {
            **spec.get("headers", {}),
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        self._ids = 0
        self.call("initialize", initialize_params(client))
        self._headers["MCP-Protocol-Version"] = PROTOCOL
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _post(self, document: Message) -> Message:
        reply = exchange(self._url, "POST", document, self._headers)
        if "mcp-session-id" in reply.headers:
            self._headers["Mcp-Session-Id"] = reply.headers["mcp-session-id"]
        if reply.status >= 400:
            raise RuntimeError(f"HTTP {reply.status}: {reply.text[:300]}")
        if reply.headers.get("content-type", "").startswith("application/json"):
            answer: Message = json.loads(reply.text) if reply.text else {}
            return answer
        answers = [json.loads(line[5:]) for line in reply.text.splitlines() if line.startswith("data:")]
        return next((a for a in answers if "id" in a), {})

    def call(self, method: str, params: Message) -> Message:
        """One request's result; an error answer raises."""
        self._ids += 1
        return result_of(
            method, self._post({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        )

    def tool(self, name: str, arguments: Message) -> tuple[str, bool]:
        """A tool's answer as text, and whether it is an error."""
        return tool_answer(self.call("tools/call", {"name": name, "arguments": arguments}))

    def close(self) -> None:
        """End the MCP session."""
        exchange(self._url, "DELETE", None, self._headers)


def _assistant(content: list[Message]) -> None:
    emit({"type": "assistant", "message": {"role": "assistant", "model": MODEL, "content": content}})


def write_files(files: dict[str, str], number: int) -> None:
    """Write a step's files in the working folder, shown as the Write calls a real agent makes."""
    for count, (name, text) in enumerate(files.items(), start=1):
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"a rehearsal writes only below its working folder, not {name}")
        path = Path.cwd() / name
        tool_id = f"toolu_rehearsal_{number}_write_{count}"
        _assistant([{"type": "tool_use", "id": tool_id, "name": "Write", "input": {"file_path": name}}])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        result = {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": f"Wrote {name}",
            "is_error": False,
        }
        emit({"type": "user", "message": {"role": "user", "content": [result]}})


def play(script: Message, server: HttpServer) -> int:
    """Say each step's words and make its call, as stream-json; the number of turns."""
    offered = {tool["name"] for tool in server.call("tools/list", {}).get("tools", [])}
    pause_s = float(script.get("pause_s", 0.0))
    turns = 0
    for number, step in enumerate(script.get("steps", []), start=1):
        turns += 1
        time.sleep(pause_s)  # a rehearsal is watched: a person reads each step as it comes
        content: list[Message] = [{"type": "text", "text": step["say"]}] if step.get("say") else []
        verb = step.get("verb")
        if verb and verb not in offered:
            content.append({"type": "text", "text": f"(This session has no `{verb}` tool; skipping it.)"})
            verb = None
        tool_id = f"toolu_rehearsal_{number}"
        if step.get("files"):  # the words, then the edits, then the verb: as an agent works
            _assistant(content)
            content = []
            write_files(step["files"], number)
        if verb:
            content.append(
                {"type": "tool_use", "id": tool_id, "name": f"mcp__{SERVER}__{verb}", "input": step["params"]}
            )
        if content or not step.get("files"):
            _assistant(content)
        if verb:
            output, is_error = server.tool(verb, step["params"])
            result = {"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": is_error}
            emit({"type": "user", "message": {"role": "user", "content": [result]}})
    return turns


def main(argv: list[str]) -> int:
    """Play one session: `rehearse SCRIPT MCP_CONFIG`; the exit status."""
    if len(argv) != 2:
        sys.stderr.write("usage: ralph-desk rehearse SCRIPT MCP_CONFIG\n")
        return 2
    script = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    config = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    session_id = str(uuid.uuid4())
    server = HttpServer(config["mcpServers"][SERVER])
    emit(
        {
            "type": "system",
            "subtype": "init",
            "model": MODEL,
            "session_id": session_id,
            "mcp_servers": [{"name": SERVER, "status": "connected"}],
            "tools": [],
        }
    )
    try:
        turns = play(script, server)
    finally:
        server.close()
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": turns,
            "result": script.get("closing", "Rehearsal over."),
            "session_id": session_id,
            "total_cost_usd": 0,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
    )
    return 0


LABELS_FILE = "chart/labels.json"


def check_labels(folder: Path) -> int:
    """The demo's check (`ralph-desk demo-check`): each high water is labelled above the curve and each low
    water below it, in the chart's labels file; the exit status (no file yet: nothing to check)."""
    path = folder / LABELS_FILE
    if not path.is_file():
        print(f"collected 0 labels: no {LABELS_FILE} yet, nothing to check")
        return 0
    labels = json.loads(path.read_text(encoding="utf-8"))
    print(f"collected {len(labels)} labels from {LABELS_FILE}")
    wrong = [label for label in labels if (label["kind"] == "high") != (label["place"] == "above")]
    for label in wrong:
        side = "above" if label["kind"] == "high" else "below"
        print(
            f"FAILED check_labels::{label['kind']}_water_{label['time']} - "
            f"labelled {label['place']} the curve, expected {side}"
        )
    if wrong:
        print(f"{len(wrong)} failed, {len(labels) - len(wrong)} passed")
        return 1
    print(f"{len(labels)} passed")
    return 0
