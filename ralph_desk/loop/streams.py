"""Reading agent output: what every stream parser shares (the protocol, JSON lines, loose readers).

The parsers only report what the stream says. They have no notion of a task being done: that is decided
from the session's signals (the verbs it called), never from the agent's prose. One parser per agent sits
beside its adapter in `ralph_desk.loop.agents`; when a limit lifts is read by `ralph_desk.loop.limits`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from ralph_desk.loop.model import EventKind, LiveEvent, StreamSummary

log = logging.getLogger("ralph_desk.loop.streams")

MAX_EVENT_TEXT = 2_000  # live events carry a preview; the transcript keeps the raw line whole

Clock = Callable[[], datetime]


class StreamParser(Protocol):
    """Turns an agent's standard output, one line at a time, into live events; gathers a summary."""

    summary: StreamSummary

    def feed(self, line: str) -> list[LiveEvent]:
        """The events one line of output carries (none for blank or uninteresting lines); never raises."""
        ...


def now_utc() -> datetime:
    """The current time, aware UTC: the parsers' default clock."""
    return datetime.now(UTC)


# --- loose readers for JSON values of unknown shape -------------------------------------------------


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    """`value` if it is a string."""
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """`value` as an int: an int, a whole float or a string of digits (never a bool)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def as_float(value: Any) -> float | None:
    """`value` as a float when it is a number (never a bool)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def preview(text: str, limit: int = MAX_EVENT_TEXT) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def content_text(content: Any) -> str:
    """The text of a tool result's content: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in as_list(content):
        item = as_dict(block)
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif item.get("type"):
            parts.append(f"[{item['type']}]")
    return "\n".join(parts)


class JsonLinesParser:
    """One JSON object a line: blank lines are skipped, anything else that is no event comes back raw."""

    agent = "agent"

    def __init__(self, summary: StreamSummary | None, clock: Clock) -> None:
        self.summary = summary if summary is not None else StreamSummary()
        self._clock = clock

    def feed(self, line: str) -> list[LiveEvent]:
        """The events of one stdout line; a line that is not an event comes back as a STDERR-kind event."""
        text = line.strip()
        if not text:
            return []
        try:
            document = json.loads(text)
        except ValueError:
            return [self._event(EventKind.STDERR, preview(text), {"raw": True})]
        if not isinstance(document, dict) or not isinstance(document.get("type"), str):
            return [self._event(EventKind.STDERR, preview(text), {"raw": True})]
        try:
            return self.handle(document)
        except Exception:  # one odd event must not end the reading of a session
            log.exception("could not read a %s event: %.200s", self.agent, text)
            return [self._event(EventKind.STDERR, preview(text), {"raw": True, "unreadable": True})]

    def handle(self, event: dict[str, Any]) -> list[LiveEvent]:
        """The live events of one parsed event object."""
        raise NotImplementedError

    def _event(self, kind: EventKind, text: str, data: dict[str, Any] | None = None) -> LiveEvent:
        return LiveEvent(kind, text, data or {}, at=self._clock())
