"""Guessing pairing codes is slow and soon stopped: wrong codes are counted and lock pairing for a while."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

WRONG_CODES = 10
WINDOW_S = 600.0
LOCKED_S = 900.0


class PairingLockout:
    """Ten wrong codes within ten minutes lock pairing for fifteen; a new code from the desk unlocks it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._wrong: deque[float] = deque()
        self._locked_until = 0.0
        self.locked_at: datetime | None = None
        """When pairing locked (wall clock, UTC): a code made after it, in any process, unlocks it."""

    def locked_for(self) -> float:
        """Seconds pairing stays locked (0: open)."""
        return max(0.0, self._locked_until - self._clock())

    def wrong(self) -> None:
        """Count a wrong code; the tenth in the window locks pairing."""
        now = self._clock()
        self._wrong.append(now)
        while self._wrong and self._wrong[0] < now - WINDOW_S:
            self._wrong.popleft()
        if len(self._wrong) >= WRONG_CODES:
            self._locked_until = now + LOCKED_S
            self.locked_at = datetime.now(UTC)
            self._wrong.clear()

    def reset(self) -> None:
        """Unlock (the person at the desk made a new code)."""
        self._wrong.clear()
        self._locked_until = 0.0
        self.locked_at = None
