"""A session's transcript in a window of its own, rendered as the live view renders it, as it grows."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QTimer
from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from ralph_desk.gui.panes.loop.stream import StreamView
from ralph_desk.gui.widgets.common import label
from ralph_desk.loop.replay import TranscriptTail, ended
from ralph_desk.project import ProjectError

POLL_MS = 500
FOLLOWING = "Following the session: new lines appear as the agent writes them."
ENDED = "The session ended; this is its whole transcript."


class TranscriptWindow(QDialog):
    """One session's stream, read from its transcript; while the session runs, new lines keep coming."""

    def __init__(
        self,
        tail: TranscriptTail,
        title: str,
        session_id: str,
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
        self.follow()

    @property
    def following(self) -> bool:
        """Whether the window still waits for more lines."""
        return self._timer.isActive()

    def follow(self) -> None:
        """Show the lines written since the last look; look again soon unless the session ended."""
        done = ended(self.tail.path)  # before reading: the last lines are written before the summary
        try:
            events = self.tail.read()
        except (OSError, ProjectError) as error:
            self.status.setText(f"Could not read the transcript {self.tail.path.name}: {error}")
            self.stream.end_session()
            return
        self.stream.show_events(events)  # one insertion: a row at a time lays the whole view out each time
        if self.tail.more:
            self._timer.start(0)  # a long transcript is shown in steps; the window stays responsive
        elif done:
            self.status.setText(ENDED)
            self.stream.end_session()
        else:
            self.status.setText(FOLLOWING)
            self._timer.start(POLL_MS)

    def hideEvent(self, event: QHideEvent) -> None:
        """Stop following when the window closes."""
        self._timer.stop()
        super().hideEvent(event)


def started_at(naive_utc: datetime) -> datetime:
    """A session's recorded start (naive UTC in the store) as the live view's clock takes it."""
    return naive_utc.replace(tzinfo=UTC)
