"""How times read in the window: the clock today, the weekday this past week, the date before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ralph_desk.gui import fmt

# A Monday afternoon, in the local time zone like every time the window shows.
NOW = datetime(2026, 11, 23, 17, 58).astimezone()


def at(day: int, hour: int, minute: int, month: int = 11, year: int = 2026) -> datetime:
    """A local time."""
    return datetime(year, month, day, hour, minute).astimezone()


@pytest.mark.parametrize(
    ("moment", "shown"),
    [
        (at(23, 0, 1), "00:01"),
        (at(23, 14, 5), "14:05"),
        (at(22, 23, 59), "Sun 23:59"),
        (at(17, 9, 53), "Tue 09:53"),
        (at(16, 9, 53), "16 Nov 09:53"),
        (at(18, 9, 53, month=1), "18 Jan 09:53"),
        (at(18, 9, 53, year=2025), "18 Nov 2025 09:53"),
        (at(24, 8, 0), "24 Nov 08:00"),
    ],
)
def test_a_time_shows_the_clock_today_the_weekday_this_week_and_the_date_before(
    moment: datetime, shown: str
) -> None:
    assert fmt.when(moment, now=NOW) == shown


def test_a_stored_time_is_naive_utc_and_shown_in_local_time() -> None:
    stored = (NOW - timedelta(days=10)).astimezone(UTC).replace(tzinfo=None)

    assert fmt.when(stored, now=NOW) == fmt.when(NOW - timedelta(days=10), now=NOW) == "13 Nov 17:58"


def test_no_time_shows_nothing() -> None:
    assert fmt.when(None, now=NOW) == ""
    assert fmt.full(None) == ""


def test_the_full_time_for_tooltips_has_the_date_and_seconds() -> None:
    assert fmt.full(at(18, 9, 53)).startswith("2026-11-18 09:53:00")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0 s"),
        (42, "42 s"),
        (60, "1 min"),
        (185, "3 min 5 s"),
        (3600 * 3, "3 h"),
        (3600 + 12 * 60 + 59, "1 h 12 min"),
    ],
)
def test_a_span_leaves_out_a_zero_part_after_the_first(seconds: int, shown: str) -> None:
    assert fmt.span(seconds) == shown
