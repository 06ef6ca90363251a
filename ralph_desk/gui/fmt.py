"""How times, money and durations read in the window (Qt-free)."""

from __future__ import annotations

from datetime import UTC, datetime

WEEKDAY_DAYS = 6
"""Times up to this many days back show their weekday; older ones their date."""
# English like the rest of the window, whatever locale Qt set for strftime.
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def local(moment: datetime) -> datetime:
    """A stored naive-UTC time in the local time zone."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone()


def when(moment: datetime | None, now: datetime | None = None) -> str:
    """Local time, short: `14:05` today, `Mon 14:05` up to six days back, else `18 Nov 09:53` (+ year)."""
    if moment is None:
        return ""
    shown = local(moment)
    today = (now or datetime.now().astimezone()).astimezone(shown.tzinfo).date()
    days = (today - shown.date()).days
    if days == 0:
        return f"{shown:%H:%M}"
    if 0 < days <= WEEKDAY_DAYS:
        return f"{WEEKDAYS[shown.weekday()]} {shown:%H:%M}"
    month = MONTHS[shown.month - 1]
    if shown.year == today.year:
        return f"{shown.day} {month} {shown:%H:%M}"
    return f"{shown.day} {month} {shown.year} {shown:%H:%M}"


def full(moment: datetime | None) -> str:
    """A complete local time with seconds and zone, for tooltips."""
    return "" if moment is None else local(moment).strftime("%Y-%m-%d %H:%M:%S %Z")


def ago(moment: datetime | None, now: datetime | None = None) -> str:
    """How long ago: `just now`, `5 min ago`, `3 h ago`, `2 days ago`."""
    if moment is None:
        return ""
    current = now or datetime.now(UTC)
    seconds = (current - local(moment)).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    return f"{days} day{'s' if days != 1 else ''} ago"


def money(amount: float) -> str:
    """US dollars: `$5.09` (`$0.004` below a cent)."""
    if 0 < amount < 0.01:
        return f"${amount:.3f}"
    return f"${amount:,.2f}"


def duration(start: datetime | None, end: datetime | None) -> str:
    """A span as `42 s`, `3 min 5 s`, `1 h 12 min` or `3 h` (empty while unfinished)."""
    if start is None or end is None:
        return ""
    return span((end - start).total_seconds())


def span(seconds: float) -> str:
    """Seconds as `42 s`, `3 min 5 s`, `3 min`, `1 h 12 min` or `3 h` (no zero part after the first)."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        big, small = f"{seconds // 60} min", seconds % 60
        return f"{big} {small} s" if small else big
    big, small = f"{seconds // 3600} h", seconds % 3600 // 60
    return f"{big} {small} min" if small else big


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 task`, `3 tasks`."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def one_line(text: str | None, limit: int = 120) -> str:
    """`text` on one line, cut with an ellipsis after `limit` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


DESK = "desk"


def maker(by: str | None) -> str:
    """Who made a decision, as the window names it: the paired device's name, or `desk` (the window, CLI)."""
    return by or DESK
