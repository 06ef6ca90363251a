"""The Loop pane's running sessions: which one the stream follows, and what each has done so far."""

from __future__ import annotations

from datetime import UTC, datetime

from ralph_desk.gui.panes.loop.running import RunningSession, RunningSessions
from ralph_desk.loop.model import EventKind, LiveEvent

AT = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def test_the_stream_follows_the_first_session_and_counts_the_others() -> None:
    running = RunningSessions()

    assert running.started(RunningSession("s1", "#1 Draw", AT))
    assert not running.started(RunningSession("s2", "#2 Label", AT))
    assert not running.started(RunningSession("s3", "#3 Colour", AT))

    assert running.shown("s1") and not running.shown("s2") and running.shown(None)
    assert running.others() == "also running: 2 other sessions"  # the table names them
    running.ended("s3")
    assert running.others() == "also running: #2 Label"


def test_when_the_followed_session_ends_the_next_running_one_is_followed() -> None:
    running = RunningSessions()
    for number in (1, 2, 3):
        running.started(RunningSession(f"s{number}", f"#{number}", AT))

    assert running.ended("s2") is None  # not the followed one: nothing to switch to
    following = running.ended("s1")

    assert following is not None and following.session_id == "s3"
    assert running.shown("s3") and running.others() == ""
    assert running.ended("s3") is None and running.kept is not None  # the last one stays shown
    assert running.started(RunningSession("s9", "#9", AT)) and running.shown("s9")


def test_a_picked_session_stays_shown_when_it_ends_while_others_run() -> None:
    running = RunningSessions()
    for number in (1, 2, 3):
        running.started(RunningSession(f"s{number}", f"#{number}", AT))

    assert running.choose("s2") is not None and running.chosen
    assert running.choose("s2") is None  # shown already: nothing to switch
    assert running.ended("s2") is None  # the person's pick stays shown (others run)
    assert running.followed == "s2" and running.kept is not None and running.shown("s2")
    assert not running.shown("s1")
    assert not running.started(RunningSession("s4", "#4", AT))  # a new session does not take over

    chosen = running.choose("s4")
    assert chosen is not None and chosen.session_id == "s4" and running.kept is None


def test_when_the_kept_session_is_the_last_the_next_session_is_followed_again() -> None:
    running = RunningSessions()
    running.started(RunningSession("s1", "#1", AT))
    running.started(RunningSession("s2", "#2", AT))
    running.choose("s2")
    running.ended("s2")
    running.ended("s1")  # nothing runs beside the kept session any more

    assert running.started(RunningSession("s3", "#3", AT))
    assert running.followed == "s3" and not running.chosen


def test_each_session_counts_its_own_turns_cost_and_last_action() -> None:
    running = RunningSessions()
    running.started(RunningSession("s1", "#1 Draw", AT, agent="command"))
    running.started(RunningSession("s2", "#2 Label", AT, agent="command"))
    events = [
        LiveEvent(EventKind.ASSISTANT_TEXT, "Reading the chart", session_id="s1"),
        LiveEvent(EventKind.TOOL_CALL, "Write chart.py", session_id="s1"),
        LiveEvent(EventKind.TOOL_RESULT, "ok", session_id="s1"),
        LiveEvent(EventKind.TOOL_CALL, "done  wrote it", session_id="s1"),
        LiveEvent(EventKind.COST, "", {"cost_usd": 0.25, "turns": 3}, session_id="s2"),
    ]
    for event in events:
        running.take(event)

    first, second = running.rows()
    assert (first.turns, first.cost_usd, first.last_action, first.agent) == (
        2,
        0.0,
        "done wrote it",
        "command",
    )
    assert (second.turns, second.cost_usd, second.last_action) == (3, 0.25, "")
    assert (first.state, second.state) == ("calling a tool", "finishing")
    running.take(LiveEvent(EventKind.TOOL_RESULT, "ok", session_id="s1"))
    assert running.rows()[0].state == "waiting for the model"
    assert len(running.sessions["s1"].events) == 5
