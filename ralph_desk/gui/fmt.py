"""How times, money and durations read in the window (Qt-free)."""

from __future__ import annotations

from datetime import UTC, datetime


def local(moment: datetime) -> datetime:
    """A stored naive-UTC time in the local time zone."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone()


def when(moment: datetime | None, now: datetime | None = None) -> str:
    """A short local time: `14:05` today, `Nov 18 14:05` this year, else `2025-11-18 14:05`."""
    if moment is None:
        return ""
    shown = local(moment)
    today = (now or datetime.now().astimezone()).astimezone(shown.tzinfo)
    if shown.date() == today.date():
        return shown.strftime("%H:%M")
    if shown.year == today.year:
        return shown.strftime("%b %d %H:%M")
    return shown.strftime("%Y-%m-%d %H:%M")


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
    """A span as `42 s`, `3 min 5 s` or `1 h 12 min` (empty while unfinished)."""
    if start is None or end is None:
        return ""
    seconds = max(0, int((end - start).total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 task`, `3 tasks`."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def one_line(text: str | None, limit: int = 120) -> str:
    """`text` on one line, cut with an ellipsis after `limit` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
