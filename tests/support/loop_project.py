"""A small git project the loop can run on: feature `core`, discipline `backend`, everything committed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from tests.support.git_repo import commit_all


def open_loop_project(root: Path, title: str) -> Services:
    """Make the repository at `root` (a README, the project, one commit) and open its services."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "README.md").write_text("# repo\n")
    paths = init_project(root, title=title)
    commit_all(root, "start")
    services = Services.open(paths)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    return services
