"""What the hardening tests share: a seeded project, database snapshots, and clients driven from sync code.

Everything here waits with a bound: a call that does not answer in time fails the test instead of
hanging it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import sqlite3
import subprocess
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.types import CallToolResult

from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.support.jsonrpc import PROTOCOL_VERSION
from tests.support.stdio_wire import mcp_command

CALL_TIMEOUT_S = 60.0
ACCEPT = "application/json, text/event-stream"
INIT_PARAMS = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "hardening", "version": "1"},
}
# What docs sessions lose: tools of several recipes, so that "disabled by the discipline" shows up widely.
DOCS_DISABLED = ("create_task", "set_task_status", "append_progress", "learned", "get_feature", "list_tasks")


@dataclass(frozen=True)
class Seeded:
    """The ids of what `seed_project` creates."""

    parser: int  # core / backend, pending
    parser_ui: int  # core / frontend, pending, depends on parser
    draft: int  # ui / backend, draft
    docs: int  # ui / docs, pending
    comment: int  # on parser


def seed_project(root: Path) -> tuple[ProjectPaths, Seeded]:
    """A project with two features, three disciplines (docs disables tools), four tasks and a comment."""
    paths = init_project(root, title="Hardening")
    services = Services.open(paths)
    try:
        services.features.create("core", "Core", description="The core.", acronym="CORE")
        services.features.create("ui", "UI", dependencies=["core"])
        services.disciplines.create("backend", "Backend", "server", "#336699", acronym="BE")
        services.disciplines.create("frontend", "Frontend", "browser", "#996633")
        services.disciplines.create("docs", "Docs", "book", "#339966", disabled_tools=list(DOCS_DISABLED))
        parser = services.tasks.create("core", "backend", "Write the parser", description="Parse input")
        parser_ui = services.tasks.create("core", "frontend", "Parser form", depends_on=[parser.id])
        draft = services.tasks.create("ui", "backend", "Search draft", status="draft")
        docs = services.tasks.create("ui", "docs", "Document the parser")
        comment = services.comments.add(parser.id, "human", "Keep it small.")
        services.state_files.append_progress("Seeded the project.")
        services.state_files.append_learning("Parsers live in core.")
    finally:
        services.close()
    return paths, Seeded(parser.id, parser_ui.id, draft.id, docs.id, comment.id)


# --- the database, read without the application ---------------------------------------------------


def connect_raw(paths: ProjectPaths) -> sqlite3.Connection:
    """A plain sqlite3 connection to the project's database (no pragmas, no migrations)."""
    return sqlite3.connect(paths.db_file, timeout=30)


def integrity(paths: ProjectPaths) -> str:
    """`PRAGMA integrity_check` of the project's database, read by a fresh connection."""
    connection = connect_raw(paths)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


@dataclass(frozen=True)
class DbState:
    """Every table's row count and content hash, the change log's head, and the state files."""

    counts: Mapping[str, int]
    digests: Mapping[str, str]
    change_head: int
    files: Mapping[str, str]

    def differences(self, other: DbState) -> list[str]:
        """What differs, readably (for assertion messages)."""
        found = [
            f"{table}: {self.counts.get(table)} rows -> {other.counts.get(table)} rows"
            for table in sorted(set(self.digests) | set(other.digests))
            if self.digests.get(table) != other.digests.get(table)
        ]
        if self.change_head != other.change_head:
            found.append(f"change log head {self.change_head} -> {other.change_head}")
        found += [name for name in self.files if self.files[name] != other.files.get(name)]
        return found


def db_state(paths: ProjectPaths) -> DbState:
    """A snapshot of everything a tool could change."""
    connection = connect_raw(paths)
    try:
        tables = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        counts: dict[str, int] = {}
        digests: dict[str, str] = {}
        for table in tables:
            rows = connection.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
            counts[table] = len(rows)
            digests[table] = hashlib.sha256(repr(rows).encode("utf-8", "surrogatepass")).hexdigest()
        head = connection.execute("SELECT coalesce(max(id), 0) FROM change_log").fetchone()[0]
    finally:
        connection.close()
    files = {
        path.name: path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        for path in (paths.learnings_file, paths.progress_file)
    }
    return DbState(counts, digests, int(head), files)


def assert_unchanged(paths: ProjectPaths, before: DbState, what: str) -> None:
    """Fail naming what changed since `before`."""
    after = db_state(paths)
    assert after == before, f"{what} changed the project: {before.differences(after)}"


# --- tool results ---------------------------------------------------------------------------------

TRACEBACK_MARKERS = ("Traceback (most recent call last)", 'File "', "site-packages", "sqlalchemy.")


def text_of(result: CallToolResult) -> str:
    """The text of a result's content blocks."""
    return "\n".join(block.text for block in result.content if block.type == "text")


def refusal_text(result: CallToolResult) -> str:
    """The message of a refused call, checked to be a tool error that gives a reason and no traceback."""
    message = text_of(result)
    assert result.is_error, f"expected a refusal, got a success: {message[:300]!r}"
    for marker in TRACEBACK_MARKERS:
        assert marker not in message, f"the refusal shows internals ({marker!r}): {message[:500]!r}"
    prefix = re.match(r"Error executing tool \w+:?\s*", message)
    if prefix is not None:
        assert len(message) - prefix.end() >= 10, f"a refusal without a reason: {message!r}"
    return message


# --- in-process and stdio clients, driven from synchronous test code ---------------------------------


async def _call(client: Client, tool: str, arguments: Any) -> CallToolResult:
    with anyio.fail_after(CALL_TIMEOUT_S):
        return await client.call_tool(tool, arguments)


async def _tool_names(client: Client) -> set[str]:
    with anyio.fail_after(CALL_TIMEOUT_S):
        return {tool.name for tool in (await client.list_tools()).tools}


class LiveClients:
    """MCP clients that stay connected across many calls, on an event loop in a background thread."""

    def __init__(self, portal: BlockingPortal) -> None:
        self.portal = portal
        self._clients: dict[str, Client] = {}
        self._exits: list[AbstractContextManager[Any]] = []

    def open(self, key: str, target: Any) -> None:
        """Connect a client to `target` (a server object or stdio parameters) under `key`."""
        manager = self.portal.wrap_async_context_manager(Client(target, mode="legacy"))
        self._clients[key] = manager.__enter__()
        self._exits.append(manager)

    def call(self, key: str, tool: str, arguments: Any) -> CallToolResult:
        """One tools/call on the client `key`."""
        return self.portal.call(_call, self._clients[key], tool, arguments)

    def tool_names(self, key: str) -> set[str]:
        """The tools the session `key` lists."""
        return self.portal.call(_tool_names, self._clients[key])

    def close(self) -> None:
        for manager in reversed(self._exits):
            manager.__exit__(None, None, None)
        self._exits.clear()
        self._clients.clear()


@contextmanager
def live_clients() -> Iterator[LiveClients]:
    """`LiveClients` on their own event loop; everything is closed on the way out."""
    with start_blocking_portal("asyncio") as portal:
        clients = LiveClients(portal)
        try:
            yield clients
        finally:
            clients.close()


# --- raw JSON-RPC over HTTP ------------------------------------------------------------------------


def sse_messages(body: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response body: a JSON document, or the data lines of an SSE stream."""
    text = body.strip()
    if text.startswith("{"):
        return [json.loads(text)]
    return [
        json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()
    ]


class RawHttpSession:
    """One legacy Streamable HTTP session made of plain POSTs, so every status code is visible."""

    def __init__(self, http: httpx2.AsyncClient, url: str, token: str | None) -> None:
        self.http = http
        self.url = url
        self.headers = {"Accept": ACCEPT}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        self.session_id: str | None = None
        self._next_id = 1

    async def post(self, body: Any, **headers: str) -> httpx2.Response:
        """POST one JSON-RPC message (or raw bytes) with the session's headers."""
        sent = {**self.headers, **headers}
        if self.session_id is not None:
            sent.setdefault("mcp-session-id", self.session_id)
            sent.setdefault("mcp-protocol-version", PROTOCOL_VERSION)
        if isinstance(body, bytes):
            return await self.http.post(
                self.url, content=body, headers={**sent, "Content-Type": "application/json"}
            )
        return await self.http.post(self.url, json=body, headers=sent)

    async def initialize(self) -> None:
        """The handshake; raises unless the server accepted it."""
        response = await self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
        response.raise_for_status()
        self.session_id = response.headers["mcp-session-id"]
        (await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})).raise_for_status()

    async def request(self, method: str, params: Any) -> tuple[int, dict[str, Any] | None]:
        """A request: the HTTP status and the JSON-RPC answer (None when there is none)."""
        self._next_id += 1
        response = await self.post(
            {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        )
        messages = sse_messages(response.text) if response.status_code == 200 else []
        answer = next((m for m in messages if m.get("id") == self._next_id), None)
        return response.status_code, answer

    async def call(self, tool: str, arguments: Any) -> tuple[int, dict[str, Any] | None]:
        """A tools/call: the HTTP status and the JSON-RPC answer."""
        return await self.request("tools/call", {"name": tool, "arguments": arguments})


def result_text(answer: Mapping[str, Any] | None) -> str:
    """The text of a JSON-RPC tools/call answer."""
    if answer is None or "result" not in answer:
        return ""
    return "\n".join(block.get("text", "") for block in answer["result"].get("content", []))


def succeeded(answer: Mapping[str, Any] | None) -> bool:
    """Whether a JSON-RPC tools/call answer is a successful tool result."""
    return answer is not None and "result" in answer and not answer["result"].get("isError", False)


# --- processes ---------------------------------------------------------------------------------------


class StderrWatch:
    """Drains a process's stderr in a thread (a full pipe would block the server) and finds lines in it."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self._stream = process.stderr
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        for line in self._stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._done = True
            self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str] | None:
        """The first match of `pattern` in a line; None when the stream ends or time runs out first."""
        regex = re.compile(pattern)
        with self._changed:
            seen = 0
            while True:
                for line in self.lines[seen:]:
                    match = regex.search(line)
                    if match:
                        return match
                seen = len(self.lines)
                if self._done or not self._changed.wait(timeout):
                    return None

    def text(self, timeout: float = 30) -> str:
        """Everything the process wrote, once its stream has ended (or time ran out)."""
        self._thread.join(timeout)
        with self._changed:
            return "".join(self.lines)


@contextmanager
def http_process(
    paths: ProjectPaths, *extra: str, env: Mapping[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str, StderrWatch]]:
    """`ralph-desk mcp --transport http` as a process: (process, announced url, stderr)."""
    process = subprocess.Popen(
        mcp_command(paths, "--transport", "http", *extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env) if env is not None else None,
    )
    watch = StderrWatch(process)
    try:
        match = watch.wait_for(r"ralph MCP server: (http://\S+)")
        assert match is not None, f"the server did not announce its endpoint: {watch.text(5)}"
        yield process, match.group(1), watch
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=20)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on `port`, from /proc/net/tcp and tcp6."""
    found: set[str] = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, _, port_hex = fields[1].partition(":")
            if fields[3] == "0A" and int(port_hex, 16) == port:
                found.add(_address(address, width))
    return found


def _address(hex_address: str, width: int) -> str:
    raw = bytes.fromhex(hex_address)
    if width == 8:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    # tcp6 stores four little-endian 32-bit words.
    words = b"".join(raw[index : index + 4][::-1] for index in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def mode_of(path: Path) -> int:
    """The permission bits of a file."""
    return path.stat().st_mode & 0o777


@contextmanager
def umask(mask: int) -> Iterator[None]:
    """Run with a process umask (so a file's mode cannot come from a restrictive umask by luck)."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)
