"""The append-only state files of a project: `.ralph/learnings.txt` and `.ralph/progress.txt`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.tools import Text
from ralph_desk.project import ProjectPaths, contained
from ralph_desk.services import validation as check
from ralph_desk.store.database import Database, UnitOfWork

TOPIC = ChangeTopic.STATE_FILES
LEARNINGS = "learnings"
PROGRESS = "progress"

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def format_entry(text: str, when: datetime) -> str:
    """One entry as appended: a `## YYYY-MM-DD HH:MM UTC` heading, then the text."""
    stamp = when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"## {stamp}\n{text.rstrip(chr(10))}\n"


class StateFileService:
    """Append timestamped entries to, and read, the project's learnings and progress files."""

    def __init__(self, paths: ProjectPaths, db: Database, clock: Clock = _utc_now) -> None:
        self.paths = paths
        self.db = db
        self.clock = clock

    def append_learning(self, text: str) -> str:
        """Add a timestamped entry to `learnings.txt`; returns the entry as written."""
        return self._append(LEARNINGS, text)

    def read_learnings(self) -> str:
        """The whole of `learnings.txt` (empty when there is none yet)."""
        return self._read(self.paths.learnings_file)

    def append_progress(self, text: str) -> str:
        """Add a timestamped entry to `progress.txt`; returns the entry as written."""
        return self._append(PROGRESS, text)

    def read_progress(self) -> str:
        """The whole of `progress.txt` (empty when there is none yet)."""
        return self._read(self.paths.progress_file)

    def progress_tail(self, lines: int = 40) -> str:
        """The last `lines` lines of `progress.txt`."""
        count = check.positive_int("lines", lines)
        assert count is not None
        kept = self.read_progress().splitlines(keepends=True)[-count:]
        return "".join(kept)

    def append_within(self, unit: UnitOfWork, name: str, text: str) -> str:
        """Append an entry to `learnings` or `progress` as part of a write unit that holds the write lock."""
        path = self.paths.learnings_file if name == LEARNINGS else self.paths.progress_file
        entry = format_entry(check.value(Text, "text", text), self.clock())
        # Take the write lock before the file changes: a busy database then leaves the file untouched.
        unit.session.connection()
        unit.touch(TOPIC, name)
        contained.append_bytes(self.paths.root, path, entry.encode("utf-8"))
        return entry

    def _append(self, name: str, text: str) -> str:
        with self.db.write() as unit:
            return self.append_within(unit, name, text)

    def _read(self, path: Path) -> str:
        return contained.read_text(self.paths.root, path, missing="")
