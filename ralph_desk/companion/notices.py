"""What a decision did, said once on the next page the device loads (nothing of it rides in the URL)."""

from __future__ import annotations

import threading

MAX_SHOWN = 500


class Notices:
    """One pending notice per device; `take` hands it out once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._said: dict[int, str] = {}

    def say(self, device_id: int, text: str) -> None:
        """Keep `text` for the device's next page."""
        with self._lock:
            self._said[device_id] = text[:MAX_SHOWN]

    def take(self, device_id: int) -> str:
        """The device's notice, once ("" when none)."""
        with self._lock:
            return self._said.pop(device_id, "")
