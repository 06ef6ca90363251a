"""Where the files of a project's `.ralph/` folder live (DESIGN §3), and writing one of them whole."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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

    def db_url(self, override: str | None = None) -> str:
        """The database URL: an explicit one, else `RALPH_DB_URL`, else the project's SQLite file."""
        return override or os.environ.get(DB_URL_ENV) or sqlite_url(self.db_file)


def write_atomically(path: Path, text: str) -> None:
    """Replace a file's text at once: a reader sees the old text or the new, never half of it."""
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
