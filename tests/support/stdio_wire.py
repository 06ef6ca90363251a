"""A process spoken to in JSON-RPC lines over its stdin and stdout, without an SDK client in between."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from ralph_desk.project import ProjectPaths


def mcp_command(paths: ProjectPaths, *extra: str) -> list[str]:
    """`ralph-desk mcp` for the project, as this interpreter runs it."""
    return [sys.executable, "-m", "ralph_desk", "mcp", "--root", str(paths.root), *extra]


class StdioWire:
    """A `ralph-desk mcp` process (or any stdio server) spoken to line by line."""

    def __init__(
        self,
        command: list[str],
        stderr: IO[bytes] | int = subprocess.DEVNULL,
        preexec: Callable[[], None] | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, preexec_fn=preexec
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, *frames: bytes | dict[str, Any]) -> None:
        """Write the frames, one line each, in a single write."""
        data = b"".join((f if isinstance(f, bytes) else json.dumps(f).encode()) + b"\n" for f in frames)
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def next_message(self, timeout: float = 30) -> dict[str, Any]:
        """The next message the server writes."""
        message: dict[str, Any] = json.loads(self.lines.get(timeout=timeout))
        return message

    def answer(self, request_id: int, timeout: float = 30) -> dict[str, Any]:
        """The response to `request_id`, skipping anything else the server wrote first."""
        while True:
            message = self.next_message(timeout)
            if message.get("id") == request_id:
                return message

    def close(self) -> int:
        """Close stdin (the client leaves) and wait for the exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)

    def kill(self) -> None:
        """Stop the process if it still runs."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
