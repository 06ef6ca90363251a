"""Scripted stand-in for the Anthropic Messages API on 127.0.0.1, for driving real agent CLIs in tests."""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "FakeModelApi",
    "Hang",
    "HttpError",
    "RecordedRequest",
    "Script",
    "Text",
    "ToolCalls",
    "Turn",
]


@dataclass(frozen=True)
class ToolCalls:
    """One assistant message made of one or more tool_use blocks (stop_reason tool_use)."""

    calls: Sequence[tuple[str, Mapping[str, Any]]]
    text: str | None = None  # optional text block before the tool calls


@dataclass(frozen=True)
class Text:
    """One assistant message with a single text block (stop_reason end_turn)."""

    text: str


_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class HttpError:
    """An HTTP error answer with Anthropic's error JSON body; consumes one turn per request."""

    status: int
    retry_after: int = 0  # seconds, sent as the retry-after header
    message: str | None = None
    resets_at: int | None = None  # epoch seconds, sent as anthropic-ratelimit-unified-reset (a usage limit)

    def body(self) -> dict[str, Any]:
        """The Anthropic error envelope for this status."""
        kind = _ERROR_TYPES.get(self.status, "api_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": self.message or f"Fake {kind} ({self.status})"},
        }


@dataclass(frozen=True)
class Hang:
    """Hold the request open (an agent that never gets an answer) until `release()` or stop."""

    timeout: float = 120.0


Turn = ToolCalls | Text | HttpError | Hang
Script = Sequence[Turn]
RequestKind = Literal["turn", "side", "count_tokens", "other"]

_FALLBACK = Text("done")


@dataclass
class RecordedRequest:
    """One HTTP request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: RequestKind
    script_key: str | None = None  # marker that selected the script, None for the default script
    turn_index: int | None = None  # index into that script, None for side requests and fallbacks
    answer: Turn | None = None


@dataclass
class _Cursor:
    turns: list[Turn]
    taken: int = 0  # turns handed to a request
    answered: int = 0  # turns whose answer was fully written


@dataclass
class _State:
    scripts: dict[str | None, _Cursor]
    log: list[RecordedRequest] = field(default_factory=list)
    turns_served: int = 0
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


class FakeModelApi:
    """Loopback Messages API that answers agent turns from a script; use as a context manager."""

    def __init__(
        self,
        script: Script = (),
        *,
        sessions: Mapping[str, Script] | None = None,
        side_text: str = "Fake title",
    ) -> None:
        """Serve `script` by default and `sessions[marker]` when the first user message contains marker."""
        self._state = _State(scripts={None: _Cursor(list(script))})
        for marker, turns in (sessions or {}).items():
            self._state.scripts[marker] = _Cursor(list(turns))
        self._markers = [m for m in self._state.scripts if m is not None]
        self._side_text = side_text
        self._cond = threading.Condition()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._released = threading.Event()

    def release(self) -> None:
        """Let every held (`Hang`) request finish."""
        self._released.set()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakeModelApi:
        """Bind an ephemeral port on 127.0.0.1 and serve in a daemon thread."""
        handler = type("_BoundHandler", (_Handler,), {"api": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-model-api",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self._released.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeModelApi:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise RuntimeError("FakeModelApi is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """Value for ANTHROPIC_BASE_URL."""
        return f"http://127.0.0.1:{self.port}"

    def env(self, api_key: str = "sk-ant-dummy") -> dict[str, str]:
        """Environment variables that point Claude Code at this fake and keep it offline."""
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": api_key,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            # Claude Code >= 2.1.3xx defers MCP tools behind ToolSearch (names only in the system prompt);
            # off, they are offered in `tools` like any other, so offered_tools() sees them.
            "ENABLE_TOOL_SEARCH": "false",
        }

    # -- inspection ------------------------------------------------------------------------------

    @property
    def log(self) -> list[RecordedRequest]:
        """Every HTTP request received, in order."""
        with self._cond:
            return list(self._state.log)

    @property
    def turn_requests(self) -> list[RecordedRequest]:
        """The agent-turn requests (scripted or fallback), in order."""
        return [r for r in self.log if r.kind == "turn"]

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Bodies of the agent-turn requests, in order."""
        return [r.body for r in self.turn_requests]

    @property
    def side_requests(self) -> list[dict[str, Any]]:
        """Bodies of side requests (titles, summaries, quota probes) that consumed no turn."""
        return [r.body for r in self.log if r.kind == "side"]

    def offered_tools(self, i: int) -> list[str]:
        """Tool names offered to the model in agent-turn request i (deferred placeholders excluded)."""
        return [t.get("name", "") for t in self.requests[i].get("tools") or [] if not t.get("defer_loading")]

    def user_text(self, i: int) -> str:
        """All text of the user messages of agent-turn request i, joined by newlines."""
        return "\n".join(
            _texts(m.get("content")) for m in self.requests[i].get("messages", []) if m.get("role") == "user"
        )

    def system_text(self, i: int) -> str:
        """The system prompt of agent-turn request i as plain text."""
        return _texts(self.requests[i].get("system"))

    def tool_results(self, i: int) -> list[dict[str, Any]]:
        """tool_result blocks in the last user message of agent-turn request i."""
        messages = self.requests[i].get("messages", [])
        if not messages or not isinstance(messages[-1].get("content"), list):
            return []
        return [b for b in messages[-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]

    def served(self, key: str | None = None) -> int:
        """Turns answered from one script, fallbacks included (None = the default script)."""
        with self._cond:
            return self._state.scripts[key].answered

    def wait_turns(self, n: int, timeout: float = 30.0, key: str | Literal["*"] | None = "*") -> None:
        """Block until n agent turns were answered (from script `key`, or any with "*"); raise on timeout."""

        def done() -> bool:
            if key == "*":
                return self._state.turns_served >= n
            return self._state.scripts[key].answered >= n

        with self._cond:
            if not self._cond.wait_for(done, timeout=timeout):
                raise TimeoutError(f"fake model API served fewer than {n} turns within {timeout}s")

    # -- request handling (called on server threads) ------------------------------------------

    def _is_agent_turn(self, body: Mapping[str, Any]) -> bool:
        # Side requests (title/summary/quota) carry no tools; the agent loop always offers some.
        return bool(body.get("tools"))

    def _script_key(self, body: Mapping[str, Any]) -> str | None:
        messages = body.get("messages") or []
        first = next((m for m in messages if m.get("role") == "user"), None)
        text = _texts(first.get("content")) if first else ""
        return next((m for m in self._markers if m in text), None)

    def _record(self, rec: RecordedRequest) -> None:
        with self._cond:
            self._state.log.append(rec)

    def _next_turn(self, rec: RecordedRequest) -> Turn:
        with self._cond:
            key = self._script_key(rec.body)
            cursor = self._state.scripts[key]
            rec.script_key = key
            if cursor.taken < len(cursor.turns):
                rec.turn_index = cursor.taken
                turn = cursor.turns[cursor.taken]
            else:
                turn = _FALLBACK
            cursor.taken += 1
            rec.answer = turn
            self._state.log.append(rec)
            return turn

    def _mark_served(self, key: str | None) -> None:
        with self._cond:
            self._state.scripts[key].answered += 1
            self._state.turns_served += 1
            self._cond.notify_all()

    def _new_id(self, prefix: str) -> str:
        with self._cond:
            return f"{prefix}_fake{next(self._state.ids):06d}"


def _texts(content: Any) -> str:
    """Plain text of a Messages API content value (string or list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_result":
                    parts.append(_texts(block.get("content")))
        return "\n".join(parts)
    return ""


def _blocks(turn: Text | ToolCalls, new_id: Callable[[str], str]) -> tuple[list[dict[str, Any]], str]:
    """Content blocks and stop reason for a turn."""
    if isinstance(turn, Text):
        return [{"type": "text", "text": turn.text}], "end_turn"
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for name, args in turn.calls:
        blocks.append({"type": "tool_use", "id": new_id("toolu"), "name": name, "input": dict(args)})
    return blocks, "tool_use"


def _usage(body: Any, output_tokens: int) -> dict[str, Any]:
    """Deterministic, plausible usage numbers (roughly 4 bytes per token)."""
    return {
        "input_tokens": max(1, len(json.dumps(body)) // 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def _sse(events: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n".encode() for e in events
    )


class _Handler(BaseHTTPRequestHandler):
    api: FakeModelApi
    protocol_version = "HTTP/1.1"  # keep-alive, as the CLIs expect; every answer has a Content-Length
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean; the API records requests instead

    def handle(self) -> None:
        # The CLI may hang up mid-answer (e.g. it exited); nothing to report then.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()

    def _send(
        self, status: int, payload: bytes, content_type: str, extra: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", self.api._new_id("req"))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()

    def _json(self, status: int, obj: Any, extra: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", extra)

    def _read_body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _rec(self, body: Any, kind: RequestKind) -> RecordedRequest:
        return RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            kind=kind,
        )

    def do_HEAD(self) -> None:
        self.api._record(self._rec(None, "other"))
        self._json(200, {})

    def do_GET(self) -> None:
        self.api._record(self._rec(None, "other"))
        self._json(200, {"data": [], "has_more": False} if urlsplit(self.path).path == "/v1/models" else {})

    def do_POST(self) -> None:
        body = self._read_body()
        path = urlsplit(self.path).path
        if path == "/v1/messages/count_tokens":
            self.api._record(self._rec(body, "count_tokens"))
            self._json(200, {"input_tokens": _usage(body, 0)["input_tokens"]})
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            self.api._record(self._rec(body, "other"))
            self._json(404, HttpError(404, message=f"fake API has no {path}").body())
            return
        if not self.api._is_agent_turn(body):
            rec = self._rec(body, "side")
            rec.answer = Text(self.api._side_text)
            self.api._record(rec)
            self._message(body, rec.answer)
            return
        rec = self._rec(body, "turn")
        turn = self.api._next_turn(rec)
        if isinstance(turn, Hang):
            self.api._mark_served(rec.script_key)
            self.api._released.wait(turn.timeout)
            self._message(body, Text("released"))
            return
        # Counted before the reply is written, so a client that has read it never sees it uncounted.
        self.api._mark_served(rec.script_key)
        if isinstance(turn, HttpError):
            headers = {"retry-after": str(turn.retry_after)}
            if turn.resets_at is not None:
                headers["anthropic-ratelimit-unified-status"] = "rejected"
                headers["anthropic-ratelimit-unified-reset"] = str(turn.resets_at)
            self._json(turn.status, turn.body(), headers)
        else:
            self._message(body, turn)

    def _message(self, body: dict[str, Any], turn: Text | ToolCalls) -> None:
        blocks, stop_reason = _blocks(turn, self.api._new_id)
        output_tokens = max(1, len(json.dumps(blocks)) // 4)
        message = {
            "id": self.api._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": _usage(body, output_tokens),
        }
        if not body.get("stream"):
            self._json(200, message)
            return
        events: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {
                    **message,
                    "content": [],
                    "stop_reason": None,
                    "usage": {**message["usage"], "output_tokens": 1},
                },
            },
        ]
        for index, block in enumerate(blocks):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                {"type": "content_block_start", "index": index, "content_block": start},
                {"type": "content_block_delta", "index": index, "delta": delta},
                {"type": "content_block_stop", "index": index},
            ]
        events += [
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
            {"type": "message_stop"},
        ]
        self._send(200, _sse(events), "text/event-stream", {"cache-control": "no-cache"})
