"""A session's live events read back from its transcript, also while the session still writes it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.transcript import PROBLEM, STDERR_PREFIX
from ralph_desk.project import contained

CHUNK_BYTES = 256 * 1024
"""At most this much is read at once, so that a long transcript is shown in steps."""
REPLAY_LIMIT = 2000
_PROBLEM = re.compile(rf"^# \d\d:\d\d:\d\d {PROBLEM} +(.*)$")


class TranscriptTail:
    """Reads the agent output lines added to a transcript since the last read, as live events."""

    def __init__(self, root: Path, path: Path, agent: str) -> None:
        self.root = root
        self.path = path
        self.parser = adapter_for(LoopSettings(agent=agent)).parser()
        self.offset = 0
        self.more = False
        """Whether the last read stopped at `CHUNK_BYTES` with more already written."""
        self._partial = b""

    def read(self, limit: int = CHUNK_BYTES) -> list[LiveEvent]:
        """The events of the complete lines written since the last read (a line still being written waits)."""
        descriptor = contained.open_descriptor(self.root, self.path, os.O_RDONLY)
        with os.fdopen(descriptor, "rb") as stream:
            stream.seek(self.offset)
            data = stream.read(limit + 1)
        self.more = len(data) > limit
        data = data[:limit]
        self.offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        events: list[LiveEvent] = []
        for raw in lines:
            line = raw.decode("utf-8", errors="replace")
            if line.startswith("{"):
                events.extend(self.parser.feed(line))
            elif line.startswith(STDERR_PREFIX):
                events.append(LiveEvent(EventKind.STDERR, line.removeprefix(STDERR_PREFIX)))
            elif problem := _PROBLEM.match(line):
                events.append(LiveEvent(EventKind.ERROR, problem.group(1).replace(" ⏎ ", "\n")))
        return events


def replay(root: Path, path: Path, agent: str, limit: int = REPLAY_LIMIT) -> list[LiveEvent]:
    """The live events of a finished session, read back from the agent's output in its transcript."""
    tail = TranscriptTail(root, path, agent)
    events = tail.read()
    while tail.more and len(events) < limit:
        events.extend(tail.read())
    return events[:limit]


def ended(path: Path) -> bool:
    """Whether the session that writes this transcript ended (its summary is written beside it)."""
    return path.with_suffix(".json").is_file()
