"""The merge queue (DESIGN §12): approved tasks merge one at a time, in the order they were approved.

Every approval in this process (the window, the loop with the review gate off, the command line run in
the window's process) takes a ticket for its repository and merges when its turn comes, so that each
merge is checked against the base as it is then, and a conflict sends only its own task back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class MergeQueue:
    """First come, first served turns at merging into one repository's base branches."""

    def __init__(self) -> None:
        self._turns = threading.Condition()
        self._issued = 0
        self._serving = 0

    @property
    def waiting(self) -> int:
        """How many approvals hold a ticket, the one merging included."""
        with self._turns:
            return self._issued - self._serving

    @contextmanager
    def turn(self) -> Iterator[int]:
        """Wait for this approval's turn and hold it while the body merges; the ticket number."""
        with self._turns:
            ticket = self._issued
            self._issued += 1
            self._turns.notify_all()
            self._turns.wait_for(lambda: self._serving == ticket)
        try:
            yield ticket
        finally:
            with self._turns:
                self._serving += 1
                self._turns.notify_all()


_QUEUES: dict[Path, MergeQueue] = {}
_QUEUES_LOCK = threading.Lock()


def queue_for(repo: Path) -> MergeQueue:
    """The one merge queue of a repository in this process."""
    key = repo.resolve()
    with _QUEUES_LOCK:
        return _QUEUES.setdefault(key, MergeQueue())
