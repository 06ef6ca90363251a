"""What goes wrong with a project folder: errors that stop a command, problems that `validate` lists."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class ProjectError(Exception):
    """The project folder cannot be used as asked; the message says why and what to do."""


class ProjectExistsError(ProjectError):
    """`init` found a `.ralph/` folder and was not told to re-create it."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a project folder: the path it concerns and what is wrong."""

    path: Path | str  # a file or folder, or a database URL (its password hidden)
    message: str
    blocks_opening: bool = True  # False: the window opens (to fix it there); only a loop start is refused

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"
