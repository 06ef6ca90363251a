"""A new task worktree made ready (DESIGN §13): the listed ignored files copied in, the setup command run.

Both happen once per worktree folder: a marker in `.ralph/logs/setup/` names the folder it was done for (its
inode), so a worktree that is removed and made again is set up again.
"""

from __future__ import annotations

import json
import logging
import os

from ralph_desk.domain.checks import CheckPurpose, setup_check
from ralph_desk.loop.run_parts import Attempt, RunParts
from ralph_desk.project import contained
from ralph_desk.project.errors import ProjectError
from ralph_desk.services import worktree_files

log = logging.getLogger("ralph_desk.loop")

MARKERS = "setup"


def set_up(parts: RunParts, attempt: Attempt) -> None:
    """Off the event loop: copy the worktree files and run the setup command in a worktree not set up yet."""
    settings, work = parts.settings, attempt.prepared
    if work.worktree is None or attempt.plan.task is None or not (settings.setup or settings.worktree_files):
        return
    services = parts.services
    marker = services.paths.logs_dir / MARKERS / f"{work.worktree.path.name}.json"
    identity = {"inode": os.stat(work.root).st_ino}
    try:
        if json.loads(contained.read_text(services.paths.root, marker)) == identity:
            return
    except (FileNotFoundError, ValueError, ProjectError):
        pass
    for note in copy_files(parts, attempt):
        attempt.transcript.note(note)
    if settings.setup:
        runs = services.checks.run(
            [setup_check(settings.setup)],
            work.root,
            purpose=CheckPurpose.SESSION,
            task_id=attempt.plan.task.id,
            session_id=attempt.plan.session_id,
            stop=parts.state.checks_stop,
        )
        attempt.transcript.note(f"setup: {runs[0].status.value} (exit {runs[0].exit_code})")
        if runs[0].failing:  # tried again in the next session's worktree; the agent may also fix it
            return
    contained.write_text(services.paths.root, marker, json.dumps(identity))


def copy_files(parts: RunParts, attempt: Attempt) -> list[str]:
    """Copy each listed file git ignores from the project into the worktree (never over one there); notes."""
    services, work = parts.services, attempt.prepared
    worktree = work.worktree
    assert worktree is not None
    return worktree_files.copy_into(
        services.paths.root,
        work.root,
        parts.settings.worktree_files,
        lambda wanted: services.workspaces.ignored(worktree, wanted),
    )
