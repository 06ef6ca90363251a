"""A session's transcript opens in the window, rendered as the live view renders it, as it grows."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import SessionOutcome
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.stream import StreamLine, StreamModel
from ralph_desk.gui.panes.loop.stream import StreamView
from ralph_desk.gui.panes.loop.transcript_window import BATCH, ENDED, FOLLOWING, TranscriptWindow
from ralph_desk.gui.worker import Worker
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.replay import CHUNK_BYTES, TranscriptTail
from ralph_desk.services.container import Services
from tests.gui.conftest import settle
from tests.gui.test_loop_pane import embedded, finish, loop_window, qt_loop, wiring
from tests.gui.test_rehearsal_loop import REHEARSAL_MS, in_session

__all__ = ["embedded", "loop_window", "qt_loop"]

WAIT_MS = 5000


def said(text: str) -> str:
    """One line of Claude Code's stream-json output: the assistant says `text`."""
    return json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})


def texts(window: TranscriptWindow) -> list[str]:
    return [line.text for line in window.stream.model.lines if line.kind is EventKind.ASSISTANT_TEXT]


def only_window(main: MainWindow) -> TranscriptWindow:
    (shown,) = wiring(main).transcript_windows.values()
    return shown


def test_a_running_sessions_transcript_shows_lines_as_they_are_written_until_the_session_ends(
    qtbot: QtBot, window: MainWindow, services: Services, opened_files: list[str]
) -> None:
    log = services.paths.logs_dir / "20261126-150000_task-7.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"# 15:00:00 note              session started\n{said('Reading the tide tables.')}\n")
    services.sessions.start_session("s-live", 7, "task_execution", "claude", transcript_path=str(log))
    qtbot.waitUntil(lambda: window.loop.history.model.row_of("s-live") is not None, timeout=WAIT_MS)

    assert wiring(window).show_transcript(str(log))
    settle(qtbot, window)

    shown = only_window(window)
    qtbot.waitUntil(lambda: shown.status.text() == FOLLOWING, timeout=WAIT_MS)
    assert shown.isVisible() and texts(shown) == ["Reading the tide tables."]
    assert shown.status.text() == FOLLOWING and shown.stream.figures.started is not None
    with log.open("a", encoding="utf-8") as writing:
        writing.write(said("Half a line is not shown"))  # the agent is still writing this line
        writing.flush()
        qtbot.waitUntil(lambda: shown.tail.offset == log.stat().st_size, timeout=WAIT_MS)
        assert texts(shown) == ["Reading the tide tables."]
        writing.write(f"\n{said('Drawing the chart.')}\n")
    qtbot.waitUntil(lambda: len(texts(shown)) == 3, timeout=WAIT_MS)
    assert texts(shown)[1:] == ["Half a line is not shown", "Drawing the chart."]
    assert shown.stream.figures.messages == 3
    log.with_suffix(".json").write_text("{}\n")
    qtbot.waitUntil(lambda: shown.status.text() == ENDED, timeout=WAIT_MS)
    assert not shown.following and shown.stream.figures.started is None
    assert opened_files == []


def test_showing_the_same_transcript_again_raises_its_window(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    log = services.paths.logs_dir / "20261126-150500_task-7.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(said("Hello.") + "\n")
    services.sessions.start_session("s-again", 7, "task_execution", "claude", transcript_path=str(log))
    qtbot.waitUntil(lambda: window.loop.history.model.row_of("s-again") is not None, timeout=WAIT_MS)
    assert wiring(window).show_transcript(str(log))
    settle(qtbot, window)
    first = only_window(window)

    assert wiring(window).show_transcript(str(log))
    settle(qtbot, window)

    assert only_window(window) is first
    first.close()
    assert wiring(window).transcript_windows == {}


@pytest.mark.slow
def test_show_transcript_while_the_loop_runs_opens_the_window_not_the_file(
    qtbot: QtBot,
    qt_loop: qasync.QEventLoop,
    loop_window: MainWindow,
    services: Services,
    opened_files: list[str],
) -> None:
    history = loop_window.loop.history
    loop_window.loop.start.click()
    settle(qtbot, loop_window)
    in_session(qtbot, loop_window)
    running = next(s for s in services.sessions.list(limit=5) if s.outcome == SessionOutcome.RUNNING.value)
    assert running.transcript_path  # written from the session's start on
    qtbot.waitUntil(lambda: history.model.row_of(running.id) is not None, timeout=WAIT_MS)
    row = history.model.row_of(running.id)
    assert row is not None
    history.table.selectRow(row)

    history.show_button.click()
    settle(qtbot, loop_window)

    shown = only_window(loop_window)
    assert shown.isVisible() and opened_files == []
    qtbot.waitUntil(lambda: shown.status.text() == ENDED, timeout=REHEARSAL_MS)
    kinds = {line.kind for line in shown.stream.model.lines}
    assert {EventKind.ASSISTANT_TEXT, EventKind.TOOL_CALL, EventKind.TOOL_RESULT} <= kinds
    finish(qtbot, qt_loop, wiring(loop_window).shutdown(), timeout=REHEARSAL_MS)


def test_a_transcript_outside_the_logs_folder_is_refused(
    qtbot: QtBot, window: MainWindow, services: Services, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.log"
    outside.write_text(said("Not ours.") + "\n")
    services.sessions.start_session("s-outside", 7, "task_execution", "claude", transcript_path=str(outside))
    qtbot.waitUntil(lambda: window.loop.history.model.row_of("s-outside") is not None, timeout=WAIT_MS)

    assert wiring(window).show_transcript(str(outside))
    settle(qtbot, window)

    assert wiring(window).transcript_windows == {}
    assert window.message_bar.isVisible() and "Could not show the transcript" in window.message_bar.text


@pytest.fixture
def worker() -> Iterator[Worker]:
    """The one worker a window's transcript windows read through."""
    made = Worker()
    yield made
    made.shutdown()


def test_lines_read_at_once_go_into_the_view_in_one_insertion(
    qtbot: QtBot, tmp_path: Path, worker: Worker
) -> None:
    log = tmp_path / "session.log"
    log.write_text(f"{said('line 0')}\n")
    shown = TranscriptWindow(TranscriptTail(tmp_path, log, "claude"), "Tides", "s-many", worker)
    qtbot.addWidget(shown)
    qtbot.waitUntil(lambda: shown.status.text() == FOLLOWING, timeout=WAIT_MS)  # line 0 shown
    shown._timer.stop()
    insertions: list[tuple[int, int]] = []
    shown.stream.model.rowsInserted.connect(lambda _parent, first, last: insertions.append((first, last)))
    with log.open("a", encoding="utf-8") as writing:
        writing.writelines(f"{said(f'line {n}')}\n" for n in range(1, 400))

    shown.follow()  # row by row, each insertion laid the whole list out again: minutes for a long transcript
    qtbot.waitUntil(lambda: shown.stream.figures.messages == 400, timeout=WAIT_MS)

    assert insertions == [(1, 399)]
    assert texts(shown) == [f"line {n}" for n in range(400)]
    assert shown.stream.figures.messages == 400


def test_a_long_transcript_is_read_off_the_gui_thread_and_shown_in_short_batches(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: Worker
) -> None:
    log = tmp_path / "session.log"
    log.write_text("".join(f"{said(f'line {n}')}\n" for n in range(12_000)))
    log.with_suffix(".json").write_text("{}\n")
    readers: set[str] = set()
    read = TranscriptTail.read

    def watched(tail: TranscriptTail, limit: int = CHUNK_BYTES) -> list[LiveEvent]:
        readers.add(threading.current_thread().name)
        return read(tail, limit)

    monkeypatch.setattr(TranscriptTail, "read", watched)
    insertions: list[int] = []
    shown = TranscriptWindow(TranscriptTail(tmp_path, log, "claude"), "Tides", "s-long", worker)
    qtbot.addWidget(shown)
    shown.stream.model.rowsInserted.connect(lambda _parent, first, last: insertions.append(last - first + 1))

    qtbot.waitUntil(lambda: shown.status.text() == ENDED, timeout=60_000)

    # Before, each 256 KiB chunk was read and parsed on the GUI thread: 1.1 s held at a step.
    assert readers and threading.current_thread().name not in readers
    assert max(insertions) <= BATCH
    assert shown.stream.figures.messages == 12_000
    assert texts(shown)[-1] == "line 11999"


def test_lines_beyond_the_limit_push_the_oldest_out() -> None:
    model = StreamModel(limit=5)
    model.extend([StreamLine(EventKind.ASSISTANT_TEXT, f"a{n}", "") for n in range(3)])
    model.extend([StreamLine(EventKind.ASSISTANT_TEXT, f"b{n}", "") for n in range(4)])
    assert [line.text for line in model.lines] == ["a2", "b0", "b1", "b2", "b3"]
    model.extend([StreamLine(EventKind.ASSISTANT_TEXT, f"c{n}", "") for n in range(7)])
    assert [line.text for line in model.lines] == ["c2", "c3", "c4", "c5", "c6"]


def test_a_live_line_added_measures_that_line_not_every_line_shown(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []
    data = StreamModel.data

    def counted(model: StreamModel, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        asked.append(index.row())
        return data(model, index, role)

    monkeypatch.setattr(StreamModel, "data", counted)  # before the model is made: Qt calls it from then on
    view = StreamView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.start_session("Tides", "s-long", lines=[])
    view.show_events([LiveEvent(EventKind.ASSISTANT_TEXT, f"line {n} " * 30, {}) for n in range(500)])
    qtbot.waitUntil(view.at_end, timeout=WAIT_MS)
    asked.clear()

    view.show_event(LiveEvent(EventKind.ASSISTANT_TEXT, "one more line", {}))
    view.list.doItemsLayout()  # the layout the next paint does: every row is sized again

    # Before, each of the 501 rows was asked for its text, font, icon… again: ~8 × 501 calls per line added.
    assert asked and set(asked) <= {*range(480, 501)}
    assert view.model.lines[-1].text == "one more line"
