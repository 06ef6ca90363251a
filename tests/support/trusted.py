"""A copied project allowed as its person would allow it with `ralph-desk trust`."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from ralph_desk.loop.trust_check import trust_config
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services


def trust_copy(root: Path) -> None:
    """Allow the programs the copy at `root` names (a copy is a new folder: nothing of it is trusted yet)."""
    with closing(Services.open(ProjectPaths.at(root))) as services:
        trust_config(services.paths, services.disciplines.list())
