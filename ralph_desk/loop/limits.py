"""When a usage or rate limit lifts, read from what an agent CLI says (epoch times, clock times, spans)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ralph_desk.loop.model import StreamSummary
from ralph_desk.loop.streams import as_float, as_int

RATE_LIMIT_STATUSES = frozenset({429, 529})
ERROR_LIMIT_STATUSES = frozenset({429, 503, 529})  # an error text with one of these is a limit to wait out

_HTTP_STATUS = re.compile(r"\b(?:status:?|status code)\s*(?P<status>[1-5]\d\d)\b", re.IGNORECASE)
_RATE_LIMIT_WORDS = re.compile(r"\b429\b|too many requests|rate limit|usage limit", re.IGNORECASE)
_LIMIT_WORDS = re.compile(_RATE_LIMIT_WORDS.pattern + r"|overloaded|\b529\b", re.IGNORECASE)


def epoch_to_datetime(value: Any) -> datetime | None:
    """An epoch time (seconds, or milliseconds when implausibly large) as an aware UTC datetime."""
    number = as_float(value) if not isinstance(value, str) else as_float(as_int(value))
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
    now = now or datetime.now(UTC)
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


def http_status_in(message: str) -> int | None:
    """The HTTP status an error message names (`status 429`, `status code: 503`), if any."""
    found = _HTTP_STATUS.search(message)
    return int(found["status"]) if found else None


def limit_in_error_text(message: str) -> tuple[bool, int | None]:
    """Whether an error message reports a rate or usage limit (or an overload), and its HTTP status.

    The status is the one the message names, else 429 when it speaks of a rate or usage limit.
    """
    if not _LIMIT_WORDS.search(message):
        return False, None
    status = http_status_in(message)
    if status is not None:
        return status in ERROR_LIMIT_STATUSES, status
    return True, 429 if _RATE_LIMIT_WORDS.search(message) else None


def mark_rate_limited(summary: StreamSummary, resets_at: datetime | None) -> None:
    """Record in `summary` that the session hit a limit, and when it lifts if not known yet."""
    # The first time heard wins: streams say it first as an epoch (rate_limit_event), later as text.
    summary.rate_limited = True
    if summary.resets_at is None:
        summary.resets_at = resets_at


class Backoff:
    """The wait on a rate limit that names no reset time: doubled after each limit in a row, up to a cap."""

    def __init__(self, first_s: float, cap_s: float) -> None:
        self.first_s = first_s
        self.cap_s = max(cap_s, first_s)
        self._next_s = first_s

    def next_wait(self) -> float:
        """The wait for this limit; the one after it is twice as long (within the cap)."""
        wait = self._next_s
        self._next_s = min(self._next_s * 2, self.cap_s)
        return wait

    def reset(self) -> None:
        """A session went through: the next limit waits the first wait again."""
        self._next_s = self.first_s
