"""The project's services, opened on first use by whichever thread needs them first."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ralph_desk.project import ProjectPaths

if TYPE_CHECKING:
    from ralph_desk.services.container import Services


class ServicesOnFirstUse:
    """Opens the project's services once, when first called; later callers get them, or the same error.

    Opening imports SQLAlchemy and the store (~0.3 s on a 2-core machine): a process that can do
    useful work before it needs the database (a stdio server answering its handshake) calls this
    later, and may call it from several threads at once.
    """

    def __init__(self, paths: ProjectPaths, db_url: str | None = None) -> None:
        self.paths = paths
        self._db_url = db_url
        self._lock = threading.Lock()
        self._services: Services | None = None
        self._failure: Exception | None = None

    def __call__(self) -> Services:
        with self._lock:
            if self._failure is not None:
                raise self._failure
            if self._services is None:
                from ralph_desk.services.container import Services

                try:
                    self._services = Services.open(self.paths, self._db_url)
                except Exception as error:
                    self._failure = error
                    raise
            return self._services

    @property
    def db_url(self) -> str | None:
        """The database URL given (None: the project's own, or `RALPH_DB_URL`)."""
        return self._db_url

    @property
    def failure(self) -> Exception | None:
        """Why opening failed, if it did."""
        with self._lock:
            return self._failure

    def close(self) -> None:
        """Close the services if they were opened."""
        with self._lock:
            if self._services is not None:
                self._services.close()
                self._services = None
