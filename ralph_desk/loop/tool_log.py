"""A loop-control tool's run log (seed 003): `YYYYMMDD-HHMMSS_<tool>.log` and its JSON summary beside it.

They go to the process's log folder (`--log-dir`, else `.ralph/logs/`), owner-only, never through a
link (a session's `Transcript` writes both). A loop's log follows the loop to its end.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ralph_desk.loop.model import LiveEvent
from ralph_desk.loop.transcript import Transcript
from ralph_desk.project import ProjectPaths
from ralph_desk.project.logs import log_folder


class ToolRunLog:
    """One tool run's log: its arguments, the loop's events while it runs, then how it ended."""

    def __init__(self, paths: ProjectPaths, tool: str, arguments: Mapping[str, Any]) -> None:
        folder = log_folder(paths.logs_dir).absolute()
        inside = folder.is_relative_to(paths.root)  # the project's own folder: no link on the way
        self._transcript = Transcript(folder, tool, root=paths.root if inside else None)
        self._lock = threading.Lock()  # the loop's events and the tool's thread both write
        self.path: Path = self._transcript.log_path
        self.note(f"{tool} {dict(arguments)}")

    def note(self, text: str) -> None:
        """A line of the tool's own."""
        with self._lock:
            self._transcript.note(text)

    def event(self, event: LiveEvent | None) -> None:
        """A live event of the loop it started (None: the loop has ended)."""
        if event is None:
            return
        with self._lock:
            self._transcript.event(event)

    def close(self, outcome: str, error: str | None = None, **extra: Any) -> None:
        """Write how the run ended, in the log and in its JSON summary."""
        with self._lock:
            self._transcript.note(f"{outcome}{f': {error}' if error else ''}")
            self._transcript.close(outcome=outcome, error=error, **extra)
