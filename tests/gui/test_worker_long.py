"""A long operation (checks running for minutes) runs beside the worker's reads, and ends when the window
closes; text it streams is shown a few times a second, in order, bounded."""

from __future__ import annotations

import threading

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.gui.coalesce import CUT_NOTE, TextFeed
from ralph_desk.gui.worker import Worker

WAIT_MS = 10_000
WAIT_S = 10.0


def test_reads_go_on_while_a_long_operation_runs_and_closing_asks_it_to_stop(
    qtbot: QtBot, qapp: QApplication
) -> None:
    worker = Worker()
    stopped = threading.Event()
    results: list[str] = []
    worker.submit(
        "run the checks", lambda: stopped.wait(WAIT_S) and "stopped", results.append, stop=stopped.set
    )

    worker.submit("read the tasks", lambda: "read", results.append)
    qtbot.waitUntil(lambda: results == ["read"], timeout=WAIT_MS)  # not behind the long one

    assert not worker.idle and not stopped.is_set()
    worker.shutdown()
    assert stopped.is_set()


def test_text_from_another_thread_is_shown_in_order_and_the_oldest_dropped_past_the_bound(
    qtbot: QtBot, qapp: QApplication
) -> None:
    shown: list[str] = []
    feed = TextFeed(shown.append, interval_ms=20, limit=1000)
    feed.hold()
    writer = threading.Thread(target=lambda: [feed.add(f"{n}\n") for n in range(5000)])
    writer.start()
    writer.join(WAIT_S)
    feed.release()

    text = "".join(shown)
    assert text.endswith("4998\n4999\n") and CUT_NOTE in text
    numbers = [int(line) for line in text.replace(CUT_NOTE, "").splitlines() if line.isdigit()]
    assert numbers == sorted(numbers) and len(numbers) < 5000
    feed.deleteLater()
