"""Where the files of a project's `.ralph/` folder live (DESIGN §3)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.project import contained
from ralph_desk.store.urls import sqlite_url

RALPH_DIR = ".ralph"
DB_URL_ENV = "RALPH_DB_URL"


@dataclass(frozen=True)
class ProjectPaths:
    """Every path of one project's `.ralph/` folder (DESIGN §3)."""

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> ProjectPaths:
        """The paths of the project rooted at `root` (made absolute)."""
        return cls(Path(root).expanduser().resolve())

    @property
    def ralph(self) -> Path:
        return self.root / RALPH_DIR

    @property
    def db_dir(self) -> Path:
        return self.ralph / "db"

    @property
    def db_file(self) -> Path:
        return self.db_dir / "ralph.db"

    @property
    def mcp_dir(self) -> Path:
        return self.ralph / "mcp"

    @property
    def context_file(self) -> Path:
        return self.mcp_dir / "context.json"

    @property
    def sessions_dir(self) -> Path:
        return self.mcp_dir / "sessions"

    @property
    def clients_dir(self) -> Path:
        return self.mcp_dir / "clients"

    @property
    def sandbox_dir(self) -> Path:
        """Each confined process's private home and temporary folder, removed when it ends."""
        return self.ralph / "sandbox"

    @property
    def learnings_file(self) -> Path:
        return self.ralph / "learnings.txt"

    @property
    def progress_file(self) -> Path:
        return self.ralph / "progress.txt"

    @property
    def logs_dir(self) -> Path:
        return self.ralph / "logs"

    @property
    def codebase_map(self) -> Path:
        return self.ralph / "codebase_map.md"

    @property
    def prd_file(self) -> Path:
        return self.ralph / "prd.json"

    @property
    def worktrees_dir(self) -> Path:
        return self.ralph / "worktrees"

    @property
    def config_file(self) -> Path:
        return self.ralph / "config.json"

    def transcript(self, recorded: str) -> Path:
        """A session's recorded transcript path, refused (`LinkRefusedError`) unless a plain file in logs/."""
        path = self.root / recorded
        contained.parts_below(self.logs_dir, path)
        return contained.checked(self.root, path)

    def db_url(self, override: str | None = None) -> str:
        """The database URL: an explicit one, else `RALPH_DB_URL`, else the project's SQLite file.

        The project's own file is refused (`LinkRefusedError`) when `.ralph/`, `db/` or anything in it
        is a link: SQLite would write the database, its `-wal` and `-shm` files through it.
        """
        given = override or os.environ.get(DB_URL_ENV)
        if given:
            return given
        contained.checked(self.root, self.db_file)
        for link in contained.links_below(self.db_dir) if self.db_dir.is_dir() else ():
            raise contained.LinkRefusedError(link, self.root)
        return sqlite_url(self.db_file)
