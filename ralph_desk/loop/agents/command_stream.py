"""A command template's output: Claude Code or Codex JSON when a line is one, plain text otherwise."""

from __future__ import annotations

import json
from typing import Any

from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser
from ralph_desk.loop.agents.codex_stream import CODEX_EVENT_TYPES, CodexStreamParser
from ralph_desk.loop.model import EventKind, LiveEvent, StreamSummary
from ralph_desk.loop.streams import Clock, now_utc, preview


class AutoStreamParser:
    """For a command template's agent: each JSON line with a `type` is read as Claude Code stream-json
    (or Codex JSON, by its event names); any other line is the agent's plain text."""

    def __init__(self, clock: Clock = now_utc) -> None:
        self.summary = StreamSummary()
        self._clock = clock
        self._claude = ClaudeStreamParser(self.summary, clock)
        self._codex = CodexStreamParser(self.summary, clock)

    def feed(self, line: str) -> list[LiveEvent]:
        """The events of one stdout line."""
        text = line.strip()
        if not text:
            return []
        document: Any = None
        if text.startswith("{"):
            try:
                document = json.loads(text)
            except ValueError:
                document = None
        if isinstance(document, dict) and isinstance(document.get("type"), str):
            if document["type"] in CODEX_EVENT_TYPES:
                return self._codex.feed(text)
            return self._claude.feed(text)
        return [
            LiveEvent(EventKind.ASSISTANT_TEXT, preview(line.rstrip()), {"plain": True}, at=self._clock())
        ]
