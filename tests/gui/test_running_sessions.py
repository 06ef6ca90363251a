"""The Loop pane's running sessions: the stream follows the oldest running session, then the next."""

from __future__ import annotations

from datetime import UTC, datetime

from ralph_desk.gui.panes.loop.running import RunningSession, RunningSessions

AT = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def test_the_stream_follows_the_first_session_and_names_the_others() -> None:
    running = RunningSessions()

    assert running.started(RunningSession("s1", "#1 Draw", AT))
    assert not running.started(RunningSession("s2", "#2 Label", AT))
    assert not running.started(RunningSession("s3", "#3 Colour", AT))

    assert running.shown("s1") and not running.shown("s2") and running.shown(None)
    assert running.others() == "also running: #2 Label, #3 Colour"


def test_when_the_followed_session_ends_the_next_running_one_is_followed() -> None:
    running = RunningSessions()
    for number in (1, 2, 3):
        running.started(RunningSession(f"s{number}", f"#{number}", AT))

    assert running.ended("s2") is None  # not the followed one: nothing to switch to
    following = running.ended("s1")

    assert following is not None and following.session_id == "s3"
    assert running.shown("s3") and running.others() == ""
    assert running.ended("s3") is None and running.followed is None and running.shown("s9")
