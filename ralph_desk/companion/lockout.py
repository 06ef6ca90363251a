"""Guessing pairing codes is slow and soon stopped: tries are counted per client and in all, and lock pairing.

A try is counted before its code is checked (and forgiven when the code was right), so tries sent at once
cannot all slip in before the count says stop.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

WRONG_CODES = 10
"""Wrong codes from one client within WINDOW_S that lock pairing for it."""
ALL_WRONG_CODES = 100
"""Wrong codes from all clients within WINDOW_S that lock pairing for everyone."""
WINDOW_S = 600.0
LOCKED_S = 900.0
EVERYONE = ""


class PairingLockout:
    """Ten wrong codes from a client within ten minutes lock it out for fifteen (a hundred from all
    clients lock everyone out); a new code from the desk unlocks."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tries: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}
        self.locked_at: datetime | None = None
        """When pairing last locked (wall clock, UTC): a code made after it, in any process, unlocks."""

    def locked_for(self, client: str) -> float:
        """Seconds pairing stays locked for `client` (0: open)."""
        now = self._clock()
        ends = max(self._locked_until.get(client, 0.0), self._locked_until.get(EVERYONE, 0.0))
        return max(0.0, ends - now)

    def attempt(self, client: str) -> float:
        """Count a try from `client` before its code is checked; returns the seconds it is locked for
        (0: the try may go on, and stays counted as wrong unless `forgive` is called)."""
        locked = self.locked_for(client)
        if locked:
            return locked
        now = self._clock()
        for key, most in ((client, WRONG_CODES), (EVERYONE, ALL_WRONG_CODES)):
            tries = self._tries.setdefault(key, deque())
            while tries and tries[0] < now - WINDOW_S:
                tries.popleft()
            tries.append(now)
            if len(tries) == most:  # the last try allowed: the lockout is due from here on
                self.locked_at = datetime.now(UTC)
            elif len(tries) > most:
                self._locked_until[key] = now + LOCKED_S
                tries.clear()
        return self.locked_for(client)

    def forgive(self, client: str) -> None:
        """The try was right (or refused for another reason): it does not count."""
        for key in (client, EVERYONE):
            tries = self._tries.get(key)
            if tries:
                tries.pop()

    def reset(self) -> None:
        """Unlock everyone (the person at the desk made a new code)."""
        self._tries.clear()
        self._locked_until.clear()
        self.locked_at = None
