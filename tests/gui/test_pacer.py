"""Paced reads: one at a time, at most one per spacing, asks meanwhile kept as one read after."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.gui.pacer import ReadPacer
from ralph_desk.gui.worker import Worker

WAIT_MS = 10_000
SPACING_MS = 3000  # longer than a read's round trip on a busy machine: the second ask must wait


class Reads:
    """A pane's reads: each runs on the worker and is shown, in order; `gate` holds a read under way."""

    def __init__(self, worker: Worker, spacing_ms: int) -> None:
        self.worker = worker
        self.started = 0
        self.shown: list[int] = []
        self.gate = threading.Event()
        self.gate.set()
        self.fail = False
        self.show_fails = False
        self.pacer = ReadPacer(worker, self.start, spacing_ms)

    def start(self) -> None:
        self.started += 1
        number, gate, fail = self.started, self.gate, self.fail

        def read() -> int:
            gate.wait(10)
            if fail:
                raise OSError("the database went away")
            return number

        self.worker.submit("read the test pane", read, self.pacer.then(self.show), self.pacer.finished)

    def show(self, number: int) -> None:
        self.shown.append(number)
        if self.show_fails:
            raise RuntimeError("the pane could not show the read")


@pytest.fixture
def worker(qtbot: QtBot) -> Iterator[Worker]:
    worker = Worker()
    yield worker
    worker.shutdown()


def test_asks_while_a_read_is_under_way_make_one_more_read_after_it(qtbot: QtBot, worker: Worker) -> None:
    reads = Reads(worker, spacing_ms=0)
    reads.gate.clear()
    reads.pacer.request()
    for _ in range(5):
        reads.pacer.request()
    assert reads.started == 1 and reads.pacer.waiting and not worker.idle

    reads.gate.set()
    qtbot.waitUntil(lambda: worker.idle, timeout=WAIT_MS)

    assert reads.shown == [1, 2]
    assert not reads.pacer.waiting


def test_asks_within_the_spacing_wait_for_it_and_the_worker_is_not_idle_meanwhile(
    qtbot: QtBot, worker: Worker
) -> None:
    reads = Reads(worker, spacing_ms=SPACING_MS)
    reads.pacer.request()
    qtbot.waitUntil(lambda: reads.shown == [1], timeout=WAIT_MS)

    reads.pacer.request()
    reads.pacer.request()
    assert reads.started == 1, "a second read began inside the spacing"
    assert not worker.idle, "settling on an idle worker would miss the read still due"
    with qtbot.waitSignal(worker.sig_idle, timeout=WAIT_MS):
        pass

    assert reads.shown == [1, 2]
    assert worker.idle


def test_an_ask_made_now_does_not_wait_for_the_spacing(qtbot: QtBot, worker: Worker) -> None:
    reads = Reads(worker, spacing_ms=SPACING_MS)
    reads.pacer.request()
    qtbot.waitUntil(lambda: reads.shown == [1], timeout=WAIT_MS)
    reads.pacer.request()
    assert reads.started == 1

    reads.pacer.request(now=True)  # a person pressed Refresh

    assert reads.started == 2
    qtbot.waitUntil(lambda: worker.idle, timeout=WAIT_MS)
    assert reads.shown == [1, 2]


def test_a_read_that_cannot_start_leaves_the_next_ask_free_to_read(qtbot: QtBot, worker: Worker) -> None:
    reads = Reads(worker, spacing_ms=0)
    starts = 0

    def start_or_fail() -> None:
        nonlocal starts
        starts += 1
        if starts == 1:
            raise RuntimeError("the pane was closed")
        reads.start()

    pacer = ReadPacer(worker, start_or_fail, 0)
    reads.pacer = pacer
    with pytest.raises(RuntimeError):
        pacer.request()
    assert not pacer.waiting and worker.idle

    pacer.request()
    qtbot.waitUntil(lambda: reads.shown == [1], timeout=WAIT_MS)


def test_a_failed_read_lets_the_next_ask_read_again(qtbot: QtBot, worker: Worker) -> None:
    reads = Reads(worker, spacing_ms=0)
    reads.fail = True
    with qtbot.waitSignal(worker.sig_failed, timeout=WAIT_MS):
        reads.pacer.request()
    qtbot.waitUntil(lambda: worker.idle, timeout=WAIT_MS)
    assert reads.shown == [] and not reads.pacer.waiting

    reads.fail = False
    reads.pacer.request()
    qtbot.waitUntil(lambda: reads.shown == [2], timeout=WAIT_MS)


def test_a_read_whose_showing_fails_does_not_stop_the_reads_after_it(qtbot: QtBot, worker: Worker) -> None:
    reads = Reads(worker, spacing_ms=0)
    reads.show_fails = True
    with qtbot.captureExceptions() as raised:
        reads.pacer.request()
        qtbot.waitUntil(lambda: worker.idle, timeout=WAIT_MS)
    assert [str(error) for _, error, _ in raised] == ["the pane could not show the read"]
    assert not reads.pacer.waiting

    reads.show_fails = False
    reads.pacer.request()
    qtbot.waitUntil(lambda: reads.shown == [1, 2], timeout=WAIT_MS)


def test_a_handler_that_raises_does_not_keep_the_worker_busy(qtbot: QtBot, worker: Worker) -> None:
    def show(_result: int) -> None:
        raise RuntimeError("the pane could not show the read")

    with qtbot.captureExceptions() as raised, qtbot.waitSignal(worker.sig_idle, timeout=WAIT_MS):
        worker.submit("read", lambda: 1, show)
    assert len(raised) == 1
    assert worker.idle


def test_the_worker_hands_over_one_outcome_a_turn_of_the_event_loop(qtbot: QtBot, worker: Worker) -> None:
    all_done = threading.Barrier(2)
    delivered: list[int] = []
    for number in range(3):
        worker.submit("read", lambda number=number: number, delivered.append)
    worker.submit("the last read", lambda: all_done.wait(10))
    all_done.wait(10)  # every outcome waits in the queue, the delivery timer overdue

    deadline = time.monotonic() + WAIT_MS / 1000
    while not delivered and time.monotonic() < deadline:
        QApplication.processEvents()  # one turn: the delivery timer fires at most once

    assert delivered == [0], "one turn of the event loop handed over more than one outcome"
    qtbot.waitUntil(lambda: worker.idle, timeout=WAIT_MS)
    assert delivered == [0, 1, 2]
