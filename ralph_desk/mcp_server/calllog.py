"""One JSON line per tool call (seed 003): time, session, tool, duration and outcome — never the arguments.

Arguments and results may hold secrets (a token pasted into a task, a file's content); the line says
only which tool a session called, when, for how long and how it ended, so that the file can be
shared to debug a client. It sits beside the human-readable log of the same process, or, for a
server without one (the window's, a run's without `--log-dir`), in the project's `.ralph/logs/`:
every ralph server logs its calls through this one middleware.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from ralph_desk.mcp_server.binding import ContextResolver
from ralph_desk.project import ProjectError, ProjectPaths, contained

log = logging.getLogger("ralph_desk.mcp")

SUFFIX = ".tools.jsonl"


def open_log(root: Path, path: Path) -> TextIO:
    """A log file opened to append: inside the project without following links, elsewhere as named."""
    if path.is_absolute() and path.is_relative_to(root):
        return contained.open_text(root, path, "a", contained.PRIVATE_FILE_MODE)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("a", encoding="utf-8")


def stamped(folder: Path, name: str, suffix: str) -> Path:
    """`folder/YYYYMMDD-HHMMSS_<name><suffix>`: a log file of a process started now."""
    return folder / f"{datetime.now():%Y%m%d-%H%M%S}_{name}{suffix}"


def in_project(paths: ProjectPaths, name: str) -> Path:
    """The tool-call log of a server with no log file of its own, in the project's `.ralph/logs/`."""
    return stamped(paths.logs_dir, name, SUFFIX)


def beside(log_file: Path) -> Path:
    """The tool-call log next to a human-readable log: `…_mcp.log` → `…_mcp.tools.jsonl`."""
    return log_file.with_suffix(SUFFIX)


class ToolCallLog:
    """Middleware: appends one line per `tools/call` to `path` once the call has ended."""

    def __init__(self, path: Path, resolve: ContextResolver, root: Path) -> None:
        self.path = path
        self.resolve = resolve
        self.root = root  # the project's folder: a log inside it is written without following links
        self._lock = threading.Lock()  # servers of one process may share a file
        self._stream: TextIO | None = None  # opened at the first call, kept for the next ones
        self._warned = False  # a log that cannot be written (read-only project…) is said once, not per call

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        started = time.perf_counter()
        outcome = "exception"
        try:
            result = await call_next(ctx)
            outcome = "error" if _is_error(result) else "ok"
            return result
        finally:
            self._write(ctx, outcome, time.perf_counter() - started)

    def _write(self, ctx: ServerRequestContext[Any, Any], outcome: str, seconds: float) -> None:
        name = (ctx.params or {}).get("name")
        try:
            session = self.resolve(ctx.request).session_id
        except Exception:  # a request without a session (refused before it had one) is still logged
            session = None
        line = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "session": session,
            "tool": name if isinstance(name, str) else None,
            "duration_ms": round(seconds * 1000, 3),
            "outcome": outcome,
        }
        try:
            self._append(json.dumps(line) + "\n")
        except (OSError, ProjectError):
            if not self._warned:
                self._warned = True
                log.warning("could not write the tool-call log %s", self.path, exc_info=True)

    def _append(self, text: str) -> None:
        """Write and flush one line; a stream that failed is dropped, to be opened afresh next time."""
        with self._lock:
            if self._stream is None:
                self._stream = open_log(self.root, self.path)
            try:
                self._stream.write(text)
                self._stream.flush()
            except OSError:
                stream, self._stream = self._stream, None
                with contextlib.suppress(OSError):
                    stream.close()
                raise


def _is_error(result: Any) -> bool:
    if isinstance(result, dict):
        return bool(result.get("isError"))
    return bool(getattr(result, "is_error", False))
