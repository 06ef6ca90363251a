"""An MCP server process serving over HTTP (`ralph-desk mcp --transport http`), found by the endpoint it
announces on stderr and stopped at the end."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["announced_url", "serving"]

ANNOUNCEMENT = re.compile(r"ralph MCP server: (http://\S+)")


def announced_url(process: subprocess.Popen[str]) -> str:
    """The endpoint an HTTP server process prints on stderr when it listens."""
    assert process.stderr is not None
    for line in process.stderr:
        match = ANNOUNCEMENT.search(line)
        if match:
            return match.group(1)
    raise AssertionError("the server did not announce its endpoint")


@contextmanager
def serving(command: list[str]) -> Iterator[str]:
    """Start the server `command` names; its endpoint while it serves; then stop it."""
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        yield announced_url(process)
    finally:
        process.terminate()
        process.wait(timeout=20)
