"""What the window remembers: geometry, panes, splitters, recent projects, scheme, notifications, and the
files of a review marked viewed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 8
SYSTEM = "system"
SCHEMES = (SYSTEM, "light", "dark")


class DeskSettings:
    """Typed access to the window's QSettings."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else QSettings()

    def geometry(self) -> QByteArray | None:
        """The saved window geometry."""
        return self._bytes("window/geometry")

    def set_geometry(self, value: QByteArray) -> None:
        """Remember the window geometry."""
        self.store.setValue("window/geometry", value)

    def window_state(self) -> QByteArray | None:
        """The saved toolbar and dock state."""
        return self._bytes("window/state")

    def set_window_state(self, value: QByteArray) -> None:
        """Remember the toolbar and dock state."""
        self.store.setValue("window/state", value)

    def last_pane(self) -> str | None:
        """The pane shown when the window last closed."""
        value = self.store.value("window/pane")
        return str(value) if value else None

    def set_last_pane(self, key: str) -> None:
        """Remember the pane shown."""
        self.store.setValue("window/pane", key)

    def splitter(self, name: str) -> QByteArray | None:
        """The saved state of a named splitter."""
        return self._bytes(f"splitters/{name}")

    def set_splitter(self, name: str, value: QByteArray) -> None:
        """Remember a named splitter's state."""
        self.store.setValue(f"splitters/{name}", value)

    def viewed(self, project: Path, task_id: int) -> frozenset[str]:
        """The files of a task's review marked viewed (fingerprints of their changes)."""
        value = self.store.value(_viewed_key(project, task_id), "")
        return frozenset(str(value).split()) if value else frozenset()

    def set_viewed(self, project: Path, task_id: int, marks: Iterable[str]) -> None:
        """Remember the files of a task's review marked viewed."""
        self.store.setValue(_viewed_key(project, task_id), " ".join(sorted(marks)))

    def recent_projects(self) -> list[Path]:
        """Projects opened lately, newest first (those that still exist)."""
        value = self.store.value("projects/recent", [])
        items: list[object] = (
            [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []
        )
        paths = [Path(str(item)) for item in items]
        return [path for path in paths if path.is_dir()][:MAX_RECENT]

    def add_recent_project(self, root: Path) -> None:
        """Put `root` first in the recent projects."""
        resolved = root.resolve()
        kept = [path for path in self.recent_projects() if path.resolve() != resolved]
        self.store.setValue("projects/recent", [str(path) for path in [resolved, *kept][:MAX_RECENT]])

    def notification_on(self, topic: str) -> bool:
        """Whether notifications about `topic` are wanted (they are unless turned off)."""
        value = self.store.value(f"notifications/{topic}", True)
        return str(value).lower() not in ("false", "0")

    def set_notification(self, topic: str, on: bool) -> None:
        """Turn notifications about `topic` on or off."""
        self.store.setValue(f"notifications/{topic}", on)

    def scheme(self) -> str:
        """The chosen colour scheme: system, light or dark."""
        value = str(self.store.value("window/scheme", SYSTEM))
        return value if value in SCHEMES else SYSTEM

    def set_scheme(self, value: str) -> None:
        """Remember the colour scheme: system, light or dark."""
        self.store.setValue("window/scheme", value)

    def open_windows(self) -> list[str]:
        """The windows open now (by any process): `pid:token` each, as they registered."""
        self.store.sync()  # another process may have written since this one read
        value = self.store.value("windows/open", [])
        items = [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []
        return [str(item) for item in items]

    def set_open_windows(self, entries: list[str]) -> None:
        """Replace the list of open windows."""
        self.store.setValue("windows/open", entries)
        self.store.sync()

    def sync(self) -> None:
        """Write everything to disk now."""
        self.store.sync()

    def _bytes(self, key: str) -> QByteArray | None:
        value = self.store.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None


def _viewed_key(project: Path, task_id: int) -> str:
    """Per project (by its folder) and task: the window's settings are the user's, for every project."""
    folder = hashlib.sha1(str(project.resolve()).encode(), usedforsecurity=False).hexdigest()[:16]
    return f"reviews/viewed/{folder}/{task_id}"
