"""The Loop pane while a session's done runs the checks: which check runs, its output streaming in bounded,
and the result, from the loop's CHECK_* live events (handed to the pane's listener as the runner does)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.checks import OUTPUT_LINES
from ralph_desk.gui.panes.loop.wiring import LoopWiring
from ralph_desk.loop.model import EventKind, LiveEvent

WAIT_MS = 5000
LINES = 10_000


def listener(window: MainWindow) -> LoopWiring:
    found = window.findChild(LoopWiring)
    assert found is not None
    return found


def test_a_sessions_checks_stream_into_a_bounded_view_and_their_result_stays_shown(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.show_pane("loop")
    wiring, pane = listener(window), window.loop
    hear = wiring._on_event  # the listener the runner calls with each live event
    hear(LiveEvent(EventKind.SESSION_STARTED, "Chart the tides", {"task_id": 3}, "s1"))
    hear(LiveEvent(EventKind.CHECK_STARTED, "", {"checks": ["tests", "lint"]}, "s1"))

    panel = pane.stream.checks
    assert panel.isVisible() and panel.state.text() == "⟳ Running the checks"
    for number in range(LINES):
        hear(LiveEvent(EventKind.CHECK_OUTPUT, f"test_{number} PASSED\n", {"check": "tests"}, "s1"))
    assert panel.state.text() == "⟳ Running tests" and panel.detail.text() == "next: lint"
    qtbot.waitUntil(lambda: panel.text().endswith(f"test_{LINES - 1} PASSED\n"), timeout=WAIT_MS)
    hear(LiveEvent(EventKind.CHECK_OUTPUT, "lint: 1 error\n", {"check": "lint"}, "s1"))
    hear(
        LiveEvent(
            EventKind.CHECK_ENDED,
            "checks: tests passed (2.0 s), lint failed (0.3 s)",
            {"passed": False},
            "s1",
        )
    )

    assert panel.text().endswith("── lint ──\nlint: 1 error\n")
    assert panel.output.document().blockCount() <= OUTPUT_LINES
    assert panel.state.text() == "✗ Checks failed" and panel.detail.text().startswith("tests passed")
    lines = pane.stream.model.lines
    assert [line.kind for line in lines] == [
        EventKind.SESSION_STARTED,
        EventKind.CHECK_STARTED,
        EventKind.CHECK_ENDED,
    ]
    assert lines[1].text == "Running the checks after done: tests, lint"
    assert lines[2].error and lines[2].text.startswith("Checks failed — tests passed")
    kept = wiring.running_sessions.sessions["s1"].events
    assert all(
        event.kind is not EventKind.CHECK_OUTPUT for event in kept
    )  # the agent's stream is not pushed out
    assert wiring.running_sessions.rows()[0].state == "checks ended"


def test_check_output_of_a_session_not_shown_is_not_streamed(qtbot: QtBot, window: MainWindow) -> None:
    window.show_pane("loop")
    hear, panel = listener(window)._on_event, window.loop.stream.checks
    hear(LiveEvent(EventKind.SESSION_STARTED, "Chart the tides", {"task_id": 3}, "s1"))
    hear(LiveEvent(EventKind.SESSION_STARTED, "Draw the coast", {"task_id": 4}, "s2"))

    hear(LiveEvent(EventKind.CHECK_STARTED, "", {"checks": ["tests"]}, "s2"))
    hear(LiveEvent(EventKind.CHECK_OUTPUT, "elsewhere\n", {"check": "tests"}, "s2"))

    assert not panel.isVisible() and panel.text() == ""
