"""A new task worktree made ready (DESIGN §13): the listed ignored files copied in, the setup command run.

Both happen once per worktree folder: a marker in `.ralph/logs/setup/` names the folder it was done for (its
inode), so a worktree that is removed and made again is set up again.
"""

from __future__ import annotations

import json
import logging
import os

from ralph_desk.domain.checks import SETUP_NAME, Check, CheckPurpose
from ralph_desk.domain.setting_bounds import MAX_SESSION_TIMEOUT_S
from ralph_desk.loop.run_parts import Attempt, RunParts
from ralph_desk.project import contained
from ralph_desk.project.errors import ProjectError

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
        setup = Check(
            name=SETUP_NAME, run=settings.setup, timeout_s=int(MAX_SESSION_TIMEOUT_S), required=False
        )
        runs = services.checks.run(
            [setup],
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
    assert work.worktree is not None
    root = services.paths.root
    wanted = [path for path in parts.settings.worktree_files if not os.path.lexists(work.root / path)]
    ignored = services.workspaces.ignored(work.worktree, wanted)
    notes: list[str] = []
    for path in wanted:
        if path not in ignored:
            notes.append(
                f"worktree_files: {path} is not ignored by git, so a session would commit it: not copied"
            )
            continue
        try:
            data = contained.read_bytes(root, root / path)
        except FileNotFoundError:
            continue
        except (ProjectError, OSError) as error:
            notes.append(f"worktree_files: {path} not copied: {error}")
            continue
        descriptor = contained.open_descriptor(
            work.root, work.root / path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, contained.PRIVATE_FILE_MODE
        )
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        notes.append(f"worktree_files: copied {path} into the worktree")
    return notes
