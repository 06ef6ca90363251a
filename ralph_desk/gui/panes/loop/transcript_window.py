"""A session's transcript in a window of its own, rendered as the live view renders it, as it grows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from PySide6.QtCore import QTimer
from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from ralph_desk.gui.panes.loop.stream import StreamView
from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.worker import Worker
from ralph_desk.loop.model import LiveEvent
from ralph_desk.loop.replay import TranscriptTail, ended

POLL_MS = 500
DELIVERY_MS = 10
BATCH = 1000
"""Events shown per GUI step: a step of a long transcript stays short."""
FOLLOWING = "Following the session: new lines appear as the agent writes them."
ENDED = "The session ended; this is its whole transcript."


@dataclass(frozen=True)
class _Step:
    """One read off the GUI thread: its events, whether more is written, whether the session ended."""

    events: list[LiveEvent]
    more: bool
    done: bool


def _read(tail: TranscriptTail) -> _Step:
    """On the worker: the next chunk's events (no Qt object is touched here)."""
    done = ended(tail.path)  # before reading: the last lines are written before the summary
    events = tail.read()
    return _Step(events, tail.more, done)


class TranscriptWindow(QDialog):
    """One session's stream, read from its transcript; while the session runs, new lines keep coming."""

    def __init__(
        self,
        tail: TranscriptTail,
        title: str,
        session_id: str,
        worker: Worker,
        started: datetime | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Transcript — {title}")
        self.resize(900, 640)
        self.tail = tail
        self.stream = StreamView()
        self.stream.start_session(title, session_id, started=started)
        self.status = label(name="muted", wrap=True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.stream, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.follow)
        self.worker = worker
        self._closed = False
        self._reading = False
        self._step: _Step | None = None
        self._delivery = QTimer(self)
        self._delivery.setInterval(DELIVERY_MS)
        self._delivery.timeout.connect(self._deliver)
        self.follow()

    @property
    def following(self) -> bool:
        """Whether the window still reads, shows or waits for more lines."""
        return self._reading or self._timer.isActive() or self._delivery.isActive()

    def follow(self) -> None:
        """Read the lines written since the last look on the window's worker; they are shown as they come."""
        if self._closed or self._reading:
            return
        self._reading = True
        tail = self.tail
        self.worker.submit(
            f"read the transcript {tail.path.name}", lambda: _read(tail), self._read, self._not_read
        )

    def _read(self, step: _Step) -> None:
        self._reading = False
        if self._closed:
            return
        self._step = step
        self._delivery.start()

    def _not_read(self) -> None:
        self._reading = False
        if self._closed:
            return
        self.status.setText(f"Could not read the transcript {self.tail.path.name}: the window says why")
        self.stream.end_session()

    def _deliver(self) -> None:
        """Show the next batch of what was read; when all is shown, read on, wait, or stop."""
        step = self._step
        if step is None:
            self._delivery.stop()
            return
        batch, rest = step.events[:BATCH], step.events[BATCH:]
        self.stream.show_events(batch)  # one insertion: a row at a time lays the whole view out each time
        if rest:
            self._step = _Step(rest, step.more, step.done)
            return
        self._step = None
        self._delivery.stop()
        self._then(step)

    def _then(self, step: _Step) -> None:
        if step.more:
            self.follow()  # a long transcript is read in steps
        elif step.done:
            self.status.setText(ENDED)
            self.stream.end_session()
        else:
            self.status.setText(FOLLOWING)
            self._timer.start(POLL_MS)

    def hideEvent(self, event: QHideEvent) -> None:
        """Stop following when the window closes."""
        self._closed = True
        self._timer.stop()
        self._delivery.stop()
        super().hideEvent(event)


def started_at(naive_utc: datetime) -> datetime:
    """A session's recorded start (naive UTC in the store) as the live view's clock takes it."""
    return naive_utc.replace(tzinfo=UTC)
