"""Reading agent output: Claude Code stream-json and Codex `exec --json` lines become live events.

The parsers only report what the stream says. They have no notion of a task being done: that is decided
from the session's signals (the verbs it called), never from the agent's prose.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ralph_desk.loop.model import EventKind, LiveEvent, StreamSummary

log = logging.getLogger("ralph_desk.loop.streams")

RALPH_TOOL_PREFIX = "mcp__ralph__"
RATE_LIMIT_STATUSES = frozenset({429, 529})
MAX_EVENT_TEXT = 2_000  # live events carry a preview; the transcript keeps the raw line whole

Clock = Callable[[], datetime]


class StreamParser(Protocol):
    """Turns an agent's standard output, one line at a time, into live events; gathers a summary."""

    summary: StreamSummary

    def feed(self, line: str) -> list[LiveEvent]:
        """The events one line of output carries (none for blank or uninteresting lines); never raises."""
        ...


def _now() -> datetime:
    return datetime.now(UTC)


# --- loose readers for JSON values of unknown shape -------------------------------------------------


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def _preview(text: str, limit: int = MAX_EVENT_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _content_text(content: Any) -> str:
    """The text of a tool result's content: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in _list(content):
        item = _dict(block)
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif item.get("type"):
            parts.append(f"[{item['type']}]")
    return "\n".join(parts)


def tool_short_name(name: str) -> str:
    """A tool's name without Claude Code's `mcp__ralph__` prefix (other names are kept whole)."""
    return name[len(RALPH_TOOL_PREFIX) :] if name.startswith(RALPH_TOOL_PREFIX) else name


# --- when a usage or rate limit lifts ----------------------------------------------------------------


def epoch_to_datetime(value: Any) -> datetime | None:
    """An epoch time (seconds, or milliseconds when implausibly large) as an aware UTC datetime."""
    number = _float(value) if not isinstance(value, str) else _float(_int(value))
    if number is None or number <= 0:
        return None
    if number > 1e11:
        number /= 1000.0
    try:
        return datetime.fromtimestamp(number, UTC)
    except (OverflowError, OSError, ValueError):
        return None


_CLAUDE_LEGACY_LIMIT = re.compile(r"usage limit reached\|(\d{9,13})", re.IGNORECASE)
_USAGE_LIMIT_TEXT = re.compile(
    r"(you[’']ve hit your\b[^.\n]*\blimit|you[’']ve reached your\b[^.\n]*\blimit|usage limit reached"
    r"|you[’']re out of (?:extra )?usage)",
    re.IGNORECASE,
)
_RESETS_CLOCK = re.compile(
    r"\bresets\s+(?:(?:on|at)\s+)?"
    r"(?:(?P<month>[A-Z][a-z]{2,8})\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)"
    r"(?:\s*\((?P<zone>[^)]+)\))?",
    re.IGNORECASE,
)
_TRY_AGAIN_AT = re.compile(
    r"try again at\s+(?P<month>[A-Z][a-z]{2,8})\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<year>\d{4})\s+"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>[AP]M)",
    re.IGNORECASE,
)
_TRY_AGAIN_IN = re.compile(
    r"(?:try again|resets?) in\s+(?P<span>(?:\d+\s*[a-z]+[,\s]*(?:and\s+)?)+)", re.IGNORECASE
)
_SPAN_PART = re.compile(
    r"(\d+)\s*(d|day|days|h|hr|hrs|hour|hours|m|min|mins|minute|minutes|s|sec|secs|second|seconds)\b"
)
_MONTHS = {
    name: index
    for index, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1
    )
}


def _zone(name: str) -> tzinfo | None:
    if name.strip().upper() in ("UTC", "GMT"):
        return UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _hour24(hour: int, ampm: str) -> int:
    pm = ampm.lower().startswith("p")
    return (hour % 12) + (12 if pm else 0)


def parse_resets_at(text: str, now: datetime | None = None) -> datetime | None:
    """When a limit message says the limit lifts, as aware UTC; None when it does not say (or not clearly).

    Reads `Claude AI usage limit reached|<epoch>`, `resets 3pm (Europe/Berlin)`, `resets Nov 22, 3:30pm`,
    Codex's `try again at Mar 17th, 2030 5:46 PM` (local time) and `try again in 2 hours 5 minutes`.
    """
    now = now or _now()
    legacy = _CLAUDE_LEGACY_LIMIT.search(text)
    if legacy:
        return epoch_to_datetime(int(legacy.group(1)))
    absolute = _TRY_AGAIN_AT.search(text)
    if absolute:
        month = _MONTHS.get(absolute["month"][:3].lower())
        if month is None:
            return None
        try:
            # Naive means local time; astimezone() applies the offset in force on that date.
            local = datetime(
                int(absolute["year"]),
                month,
                int(absolute["day"]),
                _hour24(int(absolute["hour"]), absolute["ampm"]),
                int(absolute["minute"]),
            )
        except ValueError:
            return None
        return local.astimezone(UTC)
    relative = _TRY_AGAIN_IN.search(text)
    if relative:
        seconds = 0
        units = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}
        for amount, unit in _SPAN_PART.findall(relative["span"].lower()):
            seconds += int(amount) * units[unit[0]]
        return now + timedelta(seconds=seconds) if seconds else None
    clock = _RESETS_CLOCK.search(text)
    if clock:
        return _next_clock_time(clock, now)
    return None


def _next_clock_time(match: re.Match[str], now: datetime) -> datetime | None:
    """The next moment at the message's clock time: in its zone, or local (naive) time without one."""
    hour = int(match["hour"])
    if not 1 <= hour <= 12:
        return None
    if match["zone"]:
        zone = _zone(match["zone"])
        if zone is None:
            return None
        local_now = now.astimezone(zone)
    else:
        local_now = now.astimezone().replace(tzinfo=None)
    try:
        if match["month"]:
            month = _MONTHS.get(match["month"][:3].lower())
            if month is None:
                return None
            candidate = local_now.replace(month=month, day=int(match["day"]))
        else:
            candidate = local_now
        candidate = candidate.replace(
            hour=_hour24(hour, match["ampm"]), minute=int(match["minute"] or 0), second=0, microsecond=0
        )
    except ValueError:
        return None
    if candidate <= local_now:
        candidate = (
            candidate.replace(year=candidate.year + 1) if match["month"] else candidate + timedelta(days=1)
        )
    return candidate.astimezone(UTC)


def is_usage_limit_text(text: str) -> bool:
    """Whether an agent CLI's own error text says a usage limit was hit."""
    return bool(_USAGE_LIMIT_TEXT.search(text))


def _mark_rate_limited(summary: StreamSummary, resets_at: datetime | None) -> None:
    # The first time heard wins: streams say it first as an epoch (rate_limit_event), later as text.
    summary.rate_limited = True
    if summary.resets_at is None:
        summary.resets_at = resets_at


class _JsonLinesParser:
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
            return [self._event(EventKind.STDERR, _preview(text), {"raw": True})]
        if not isinstance(document, dict) or not isinstance(document.get("type"), str):
            return [self._event(EventKind.STDERR, _preview(text), {"raw": True})]
        try:
            return self.handle(document)
        except Exception:  # one odd event must not end the reading of a session
            log.exception("could not read a %s event: %.200s", self.agent, text)
            return [self._event(EventKind.STDERR, _preview(text), {"raw": True, "unreadable": True})]

    def handle(self, event: dict[str, Any]) -> list[LiveEvent]:
        """The live events of one parsed event object."""
        raise NotImplementedError

    def _event(self, kind: EventKind, text: str, data: dict[str, Any] | None = None) -> LiveEvent:
        return LiveEvent(kind, text, data or {}, at=self._clock())


# --- Claude Code stream-json -------------------------------------------------------------------------


class ClaudeStreamParser(_JsonLinesParser):
    """Claude Code's `--output-format stream-json --verbose` events (checked against 2.1.330).

    Event keys are not ordered (the `result` event's `type` comes late), so each line is parsed as JSON.
    """

    agent = "Claude Code"

    def __init__(self, summary: StreamSummary | None = None, clock: Clock = _now) -> None:
        super().__init__(summary, clock)
        self.model: str | None = None
        self.agent_session_id: str | None = None
        self._tool_names: dict[str, str] = {}  # tool_use id -> full tool name
        self._denied: set[str] = set()  # tool_use ids already reported as denied
        self._retry_status: int | None = None

    def handle(self, event: dict[str, Any]) -> list[LiveEvent]:
        """The events of one parsed stream-json object."""
        kind = event.get("type")
        if kind == "system":
            return self._system(event)
        if kind == "assistant":
            return self._assistant(event)
        if kind == "user":
            return self._user(event)
        if kind == "result":
            return self._result(event)
        if kind == "rate_limit_event":
            return self._rate_limit(event)
        return []

    # system ------------------------------------------------------------------------------------------

    def _system(self, event: dict[str, Any]) -> list[LiveEvent]:
        subtype = event.get("subtype")
        if subtype == "init":
            return self._init(event)
        if subtype == "api_retry":
            return [self._retry(event)]
        if subtype == "permission_denied":
            denial = self._denial(
                _str(event.get("tool_name")) or "?",
                _str(event.get("tool_use_id")),
                _str(event.get("message")),
            )
            return [denial] if denial else []
        return []

    def _init(self, event: dict[str, Any]) -> list[LiveEvent]:
        self.model = _str(event.get("model"))
        self.agent_session_id = _str(event.get("session_id"))
        servers = [
            {"name": _str(item.get("name")) or "?", "status": _str(item.get("status")) or "?"}
            for item in map(_dict, _list(event.get("mcp_servers")))
        ]
        tools = [name for name in _list(event.get("tools")) if isinstance(name, str)]
        shown = ", ".join(f"{s['name']} {s['status']}" for s in servers) or "none"
        events = [
            self._event(
                EventKind.INIT,
                f"model {self.model or '?'}; MCP servers: {shown}",
                {
                    "model": self.model,
                    "session_id": self.agent_session_id,
                    "mcp_servers": servers,
                    "tools": tools,
                    "permission_mode": _str(event.get("permissionMode")),
                    "version": _str(event.get("claude_code_version")),
                },
            )
        ]
        for server in servers:
            if server["status"] == "failed":
                message = f"MCP server {server['name']!r} failed to connect"
                self.summary.error = self.summary.error or message
                events.append(self._event(EventKind.ERROR, message, {"mcp_server": server["name"]}))
        return events

    def _retry(self, event: dict[str, Any]) -> LiveEvent:
        status = _int(event.get("error_status"))
        attempt = _int(event.get("attempt"))
        retries = _int(event.get("max_retries"))
        delay_ms = _float(event.get("retry_delay_ms"))
        error = _str(event.get("error"))
        if status is not None:
            self._retry_status = status
        delay_s = round(delay_ms / 1000.0, 3) if delay_ms is not None else None
        shown_status = f"API error {status}" if status is not None else "API unreachable"
        return self._event(
            EventKind.RETRY,
            f"{shown_status} ({error or 'unknown'}): retry {attempt or '?'}/{retries or '?'}"
            + (f" in {delay_s:g} s" if delay_s is not None else ""),
            {
                "status": status,
                "attempt": attempt,
                "max_retries": retries,
                "delay_s": delay_s,
                "error": error,
                "rate_limit": status in RATE_LIMIT_STATUSES,
            },
        )

    def _denial(self, tool: str, tool_use_id: str | None, message: str | None) -> LiveEvent | None:
        if tool_use_id is not None:
            if tool_use_id in self._denied:
                return None
            self._denied.add(tool_use_id)
        self.summary.permission_denials.append(tool)
        return self._event(
            EventKind.PERMISSION_DENIED,
            f"{tool_short_name(tool)} was denied",
            {"tool": tool_short_name(tool), "name": tool, "tool_use_id": tool_use_id, "message": message},
        )

    # rate limits ------------------------------------------------------------------------------------

    def _rate_limit(self, event: dict[str, Any]) -> list[LiveEvent]:
        info = _dict(event.get("rate_limit_info"))
        status = _str(info.get("status")) or "?"
        resets_at = epoch_to_datetime(info.get("resetsAt"))
        limit_type = _str(info.get("rateLimitType"))
        data = {
            "status": status,
            "resets_at": resets_at.isoformat() if resets_at else None,
            "limit": limit_type,
            "rejected": status == "rejected",
        }
        if status == "rejected":
            _mark_rate_limited(self.summary, resets_at)
            when = f"; resets {resets_at:%Y-%m-%d %H:%M} UTC" if resets_at else ""
            return [
                self._event(
                    EventKind.RATE_LIMIT, f"usage limit reached ({limit_type or 'unknown'}){when}", data
                )
            ]
        if status == "allowed_warning":
            return [self._event(EventKind.RATE_LIMIT, f"approaching the {limit_type or 'usage'} limit", data)]
        return []

    def _api_error_limit(self, event: dict[str, Any], text: str) -> tuple[bool, datetime | None]:
        """For a synthetic API-error message: whether it is a rate or usage limit, and when it lifts."""
        info = _dict(_dict(event.get("api_error_params")).get("rate_limit_info"))
        if event.get("api_error") == "usage_limit_reached" or info or is_usage_limit_text(text):
            return True, epoch_to_datetime(info.get("resetsAt")) or parse_resets_at(text, self._clock())
        status = _int(event.get("api_error_status"))
        return status in RATE_LIMIT_STATUSES or event.get("error") == "rate_limit", None

    # messages ---------------------------------------------------------------------------------------

    def _assistant(self, event: dict[str, Any]) -> list[LiveEvent]:
        message = _dict(event.get("message"))
        subagent = event.get("parent_tool_use_id") is not None
        api_error = bool(event.get("is_api_error_message")) or message.get("model") == "<synthetic>"
        events: list[LiveEvent] = []
        for block in map(_dict, _list(message.get("content"))):
            block_type = block.get("type")
            if block_type == "text" and isinstance(block.get("text"), str):
                events.append(self._text(event, block["text"], api_error, subagent))
            elif block_type == "tool_use":
                name = _str(block.get("name")) or "?"
                call_id = _str(block.get("id"))
                if call_id:
                    self._tool_names[call_id] = name
                arguments = _dict(block.get("input"))
                events.append(
                    self._event(
                        EventKind.TOOL_CALL,
                        f"{tool_short_name(name)} {_preview(json.dumps(arguments, ensure_ascii=False), 300)}",
                        {
                            "tool": tool_short_name(name),
                            "name": name,
                            "input": arguments,
                            "tool_use_id": call_id,
                            "ralph": name.startswith(RALPH_TOOL_PREFIX),
                            "subagent": subagent,
                        },
                    )
                )
        return events

    def _text(self, event: dict[str, Any], text: str, api_error: bool, subagent: bool) -> LiveEvent:
        if not api_error:
            return self._event(EventKind.ASSISTANT_TEXT, _preview(text), {"subagent": subagent})
        status = _int(event.get("api_error_status"))
        limited, resets_at = self._api_error_limit(event, text)
        if limited:
            _mark_rate_limited(self.summary, resets_at)
        return self._event(
            EventKind.ERROR,
            _preview(text),
            {
                "status": status,
                "error": _str(event.get("error")),
                "api_error": _str(event.get("api_error")),
                "rate_limit": limited,
            },
        )

    def _user(self, event: dict[str, Any]) -> list[LiveEvent]:
        message = _dict(event.get("message"))
        events: list[LiveEvent] = []
        for block in map(_dict, _list(message.get("content"))):
            if block.get("type") != "tool_result":
                continue
            call_id = _str(block.get("tool_use_id"))
            name = self._tool_names.get(call_id or "", "?")
            is_error = block.get("is_error") is True
            content = _content_text(block.get("content"))
            events.append(
                self._event(
                    EventKind.TOOL_RESULT,
                    ("error: " if is_error else "") + _preview(content, 500),
                    {
                        "tool": tool_short_name(name),
                        "name": name,
                        "tool_use_id": call_id,
                        "is_error": is_error,
                        "content": _preview(content),
                    },
                )
            )
        return events

    # the end ----------------------------------------------------------------------------------------

    def _result(self, event: dict[str, Any]) -> list[LiveEvent]:
        summary = self.summary
        summary.saw_result = True
        subtype = _str(event.get("subtype"))
        summary.is_error = event.get("is_error") is True or (
            subtype is not None and subtype.startswith("error")
        )
        summary.api_error_status = _int(event.get("api_error_status"))
        cost = _float(event.get("total_cost_usd"))
        if cost is not None:
            summary.cost_usd = cost
        turns = _int(event.get("num_turns"))
        if turns is not None:
            summary.turns = turns
        usage = _dict(event.get("usage"))
        # Input counts every prompt token the model read, cached or not; cost is the figure to budget on.
        summary.input_tokens = sum(
            _int(usage.get(key)) or 0
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        summary.output_tokens = _int(usage.get("output_tokens")) or 0
        result_text = _str(event.get("result"))
        summary.result_text = result_text
        errors = [str(item) for item in _list(event.get("errors"))]
        if summary.is_error:
            summary.error = "; ".join(errors) or result_text or subtype or "the agent reported an error"
        if self._result_is_limit(summary, result_text or ""):
            _mark_rate_limited(summary, parse_resets_at(result_text or "", self._clock()))

        events: list[LiveEvent] = []
        for denial in map(_dict, _list(event.get("permission_denials"))):
            found = self._denial(_str(denial.get("tool_name")) or "?", _str(denial.get("tool_use_id")), None)
            if found:
                events.append(found)
        outcome = "error" if summary.is_error else "finished"
        events.append(
            self._event(
                EventKind.RESULT,
                f"{outcome} ({subtype or '?'}) after {summary.turns} turns"
                + (f": {_preview(summary.error, 300)}" if summary.is_error and summary.error else ""),
                {
                    "subtype": subtype,
                    "is_error": summary.is_error,
                    "api_error_status": summary.api_error_status,
                    "rate_limited": summary.rate_limited,
                    "resets_at": summary.resets_at.isoformat() if summary.resets_at else None,
                    "terminal_reason": _str(event.get("terminal_reason")),
                    "result": _preview(result_text) if result_text else None,
                    "errors": errors,
                },
            )
        )
        events.append(self._cost_event())
        return events

    def _result_is_limit(self, summary: StreamSummary, result_text: str) -> bool:
        if summary.api_error_status in RATE_LIMIT_STATUSES:
            return True
        if not summary.is_error:
            return False
        # Usage limits end with the CLI's own text; a run that gave up retrying 429s may carry no status.
        gave_up = summary.api_error_status is None and self._retry_status in RATE_LIMIT_STATUSES
        return is_usage_limit_text(result_text) or gave_up

    def _cost_event(self) -> LiveEvent:
        s = self.summary
        return self._event(
            EventKind.COST,
            f"${s.cost_usd:.4f}, {s.turns} turns, {s.input_tokens} in / {s.output_tokens} out tokens",
            {
                "cost_usd": s.cost_usd,
                "turns": s.turns,
                "input_tokens": s.input_tokens,
                "output_tokens": s.output_tokens,
            },
        )


# --- Codex exec --json ------------------------------------------------------------------------------

_RECONNECTING = re.compile(r"^Reconnecting\.\.\.\s*(?:(?P<attempt>\d+)/(?P<retries>\d+))?", re.IGNORECASE)
_HTTP_STATUS = re.compile(r"\b(?:status:?|status code)\s*(?P<status>[1-5]\d\d)\b", re.IGNORECASE)
_CODEX_LIMIT = re.compile(
    r"\b429\b|too many requests|rate limit|usage limit|overloaded|\b529\b", re.IGNORECASE
)


def _status_in(message: str) -> int | None:
    found = _HTTP_STATUS.search(message)
    return int(found["status"]) if found else None


class CodexStreamParser(_JsonLinesParser):
    """Codex's `exec --json` events (checked against codex-cli 0.169.0): items, turns, errors; no cost."""

    agent = "Codex"

    def __init__(self, summary: StreamSummary | None = None, clock: Clock = _now) -> None:
        super().__init__(summary, clock)
        self.thread_id: str | None = None
        self._started: set[str] = set()  # item ids whose start was reported

    def handle(self, event: dict[str, Any]) -> list[LiveEvent]:
        """The events of one parsed Codex JSON object."""
        kind = event.get("type")
        if kind == "thread.started":
            self.thread_id = _str(event.get("thread_id"))
            return [
                self._event(EventKind.INIT, f"thread {self.thread_id or '?'}", {"thread_id": self.thread_id})
            ]
        if kind == "item.started":
            return self._item_started(_dict(event.get("item")))
        if kind == "item.completed":
            return self._item_completed(_dict(event.get("item")))
        if kind == "turn.completed":
            return self._turn_completed(_dict(event.get("usage")))
        if kind == "turn.failed":
            return self._turn_failed(_str(_dict(event.get("error")).get("message")) or "the turn failed")
        if kind == "error":
            return [self._error(_str(event.get("message")) or "error")]
        return []

    def _tool_call(self, item: dict[str, Any]) -> LiveEvent:
        tool = _str(item.get("tool")) or "?"
        server = _str(item.get("server"))
        arguments = item.get("arguments")
        shown = json.dumps(arguments, ensure_ascii=False) if arguments is not None else ""
        return self._event(
            EventKind.TOOL_CALL,
            f"{tool} {_preview(shown, 300)}".rstrip(),
            {
                "tool": tool if server in (None, "ralph") else f"mcp__{server}__{tool}",
                "name": f"mcp__{server}__{tool}" if server else tool,
                "server": server,
                "input": _dict(arguments),
                "tool_use_id": _str(item.get("id")),
                "ralph": server == "ralph",
            },
        )

    def _command(self, item: dict[str, Any]) -> LiveEvent:
        command = _str(item.get("command")) or ""
        return self._event(
            EventKind.TOOL_CALL,
            f"shell {_preview(command, 300)}",
            {
                "tool": "shell",
                "name": "shell",
                "input": {"command": command},
                "tool_use_id": _str(item.get("id")),
                "ralph": False,
            },
        )

    def _item_started(self, item: dict[str, Any]) -> list[LiveEvent]:
        item_id = _str(item.get("id")) or ""
        item_type = item.get("type")
        if item_type == "mcp_tool_call":
            self._started.add(item_id)
            return [self._tool_call(item)]
        if item_type == "command_execution":
            self._started.add(item_id)
            return [self._command(item)]
        return []

    def _item_completed(self, item: dict[str, Any]) -> list[LiveEvent]:
        item_id = _str(item.get("id")) or ""
        item_type = item.get("type")
        if item_type == "agent_message":
            text = _str(item.get("text")) or ""
            self.summary.result_text = text
            return [self._event(EventKind.ASSISTANT_TEXT, _preview(text))]
        if item_type == "error":
            return [self._error(_str(item.get("message")) or "error")]
        if item_type == "mcp_tool_call":
            events = [] if item_id in self._started else [self._tool_call(item)]
            return [*events, self._tool_result(item)]
        if item_type == "command_execution":
            events = [] if item_id in self._started else [self._command(item)]
            exit_code = _int(item.get("exit_code"))
            output = _str(item.get("aggregated_output")) or ""
            failed = item.get("status") == "failed" or (exit_code is not None and exit_code != 0)
            return [
                *events,
                self._event(
                    EventKind.TOOL_RESULT,
                    ("error: " if failed else "") + _preview(output, 500),
                    {
                        "tool": "shell",
                        "name": "shell",
                        "tool_use_id": item_id,
                        "is_error": failed,
                        "exit_code": exit_code,
                        "content": _preview(output),
                    },
                ),
            ]
        if item_type == "file_change":
            changes = [_dict(change) for change in _list(item.get("changes"))]
            paths = ", ".join(_str(change.get("path")) or "?" for change in changes)
            return [
                self._event(
                    EventKind.TOOL_RESULT,
                    f"changed {paths}",
                    {
                        "tool": "file_change",
                        "name": "file_change",
                        "tool_use_id": item_id,
                        "is_error": item.get("status") == "failed",
                        "content": paths,
                    },
                )
            ]
        return []

    def _tool_result(self, item: dict[str, Any]) -> LiveEvent:
        result = _dict(item.get("result"))
        error = _dict(item.get("error"))
        error_text = _str(error.get("message")) or _str(item.get("error"))
        content = error_text or _content_text(result.get("content"))
        is_error = (
            item.get("status") == "failed"
            or bool(error_text)
            or result.get("is_error") is True
            or result.get("isError") is True
        )
        tool = _str(item.get("tool")) or "?"
        server = _str(item.get("server"))
        return self._event(
            EventKind.TOOL_RESULT,
            ("error: " if is_error else "") + _preview(content, 500),
            {
                "tool": tool if server in (None, "ralph") else f"mcp__{server}__{tool}",
                "name": f"mcp__{server}__{tool}" if server else tool,
                "tool_use_id": _str(item.get("id")),
                "is_error": is_error,
                "content": _preview(content),
            },
        )

    def _turn_completed(self, usage: dict[str, Any]) -> list[LiveEvent]:
        s = self.summary
        s.saw_result = True
        s.turns += 1
        s.input_tokens += _int(usage.get("input_tokens")) or 0
        s.output_tokens += _int(usage.get("output_tokens")) or 0
        return [
            self._event(
                EventKind.RESULT,
                f"turn completed ({s.turns})",
                {"is_error": False, "rate_limited": s.rate_limited, "result": s.result_text},
            ),
            self._event(
                EventKind.COST,
                f"${s.cost_usd:.4f} (Codex reports no cost), {s.turns} turns, "
                f"{s.input_tokens} in / {s.output_tokens} out tokens",
                {
                    "cost_usd": s.cost_usd,
                    "turns": s.turns,
                    "input_tokens": s.input_tokens,
                    "output_tokens": s.output_tokens,
                },
            ),
        ]

    def _limit(self, message: str) -> bool:
        if not _CODEX_LIMIT.search(message):
            return False
        status = _status_in(message)
        if status is not None and status not in (429, 503, 529):
            return False
        _mark_rate_limited(self.summary, parse_resets_at(message, self._clock()))
        if status is not None:
            self.summary.api_error_status = status
        elif re.search(r"\b429\b|too many requests|rate limit|usage limit", message, re.IGNORECASE):
            self.summary.api_error_status = 429
        return True

    def _error(self, message: str) -> LiveEvent:
        retry = _RECONNECTING.match(message)
        status = _status_in(message)
        if retry:
            return self._event(
                EventKind.RETRY,
                _preview(message, 500),
                {
                    "status": status,
                    "attempt": _int(retry["attempt"]),
                    "max_retries": _int(retry["retries"]),
                    "delay_s": None,
                    "error": message,
                    "rate_limit": status in (429, 529),
                },
            )
        limited = self._limit(message)
        resets_at = self.summary.resets_at if limited else None
        return self._event(
            EventKind.RATE_LIMIT if limited else EventKind.ERROR,
            _preview(message),
            {
                "status": status,
                "rate_limit": limited,
                "resets_at": resets_at.isoformat() if resets_at else None,
            },
        )

    def _turn_failed(self, message: str) -> list[LiveEvent]:
        s = self.summary
        s.saw_result = True
        s.is_error = True
        s.error = message
        self._limit(message)
        return [
            self._event(
                EventKind.RESULT,
                f"error: {_preview(message, 300)}",
                {
                    "is_error": True,
                    "api_error_status": s.api_error_status,
                    "rate_limited": s.rate_limited,
                    "resets_at": s.resets_at.isoformat() if s.resets_at else None,
                    "result": None,
                },
            )
        ]


# --- a command template's output: Claude or Codex JSON when it is, plain text otherwise -----------------

CODEX_EVENT_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)


class AutoStreamParser:
    """For a command template's agent: each JSON line with a `type` is read as Claude Code stream-json
    (or Codex JSON, by its event names); any other line is the agent's plain text."""

    def __init__(self, clock: Clock = _now) -> None:
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
            LiveEvent(EventKind.ASSISTANT_TEXT, _preview(line.rstrip()), {"plain": True}, at=self._clock())
        ]
