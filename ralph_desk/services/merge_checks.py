"""A green base (DESIGN §13): with checks configured, an approval merged with the base is checked in a trial
worktree, and the base moves to exactly the commit checked, only when its required checks pass."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ralph_desk.domain.checks import (
    REPORT_LIMIT,
    Check,
    CheckPurpose,
    CheckRun,
    failure_phrase,
    setup_check,
)
from ralph_desk.project.config import ProjectConfig
from ralph_desk.services import worktree_files
from ralph_desk.services.checks import CheckService
from ralph_desk.services.workspaces import WorkspaceService
from ralph_desk.vcs import merge_trial
from ralph_desk.vcs.merging import Planned

log = logging.getLogger("ralph_desk.reviews")

NAMED = 10
UNTRUSTED = (
    "the checks .ralph/config.json names are not allowed on this computer yet, so the merged result cannot "
    "be checked: allow them (`ralph-desk trust`, or start the loop in the window), then approve again"
)


def required(config: ProjectConfig) -> list[Check]:
    """The checks a merged result must pass (none: the queue merges without a trial)."""
    return [check for check in config.checks if check.required]


def run(
    checks: CheckService,
    workspaces: WorkspaceService,
    config: ProjectConfig,
    task_id: int,
    planned: Planned,
) -> list[CheckRun]:
    """Run the required checks on the planned merge's commit in a trial worktree (removed afterwards) made
    ready as a task's is (its worktree files copied in, the setup command run first); the runs, recorded
    for the task as merge runs of that commit."""
    root, wanted = workspaces.root, required(config)
    setup = [setup_check(config.setup)] if config.setup else []
    with merge_trial.checked_out(root, workspaces.worktrees_dir, planned.new) as folder:
        notes = worktree_files.copy_into(
            root, folder, config.worktree_files, lambda paths: merge_trial.ignored(root, folder, paths)
        )
        for note in notes:
            log.info("merge of task #%s: %s", task_id, note)
        runs = checks.run(
            [*setup, *wanted], folder, purpose=CheckPurpose.MERGE, task_id=task_id, commit=planned.new
        )
    return runs[len(setup) :]


def collided(workspaces: WorkspaceService, branch_tip: str, planned: Planned, task_id: int) -> list[int]:
    """The tasks merged into the base since the task's branch left it (the merged result's other half)."""
    found = merge_trial.tasks_merged(workspaces.root, branch_tip, planned.old)
    return [other for other in found if other != task_id]


def failure_flag(task_id: int, planned: Planned, failed: Sequence[CheckRun], others: Sequence[str]) -> str:
    """The flag that returns the task to its agent: the checks that failed on the merged result, what they
    said, the tasks it collides with, and what to do."""
    names = ", ".join(failure_phrase(run) for run in failed)
    shown = ", ".join(others[:NAMED]) + (f" and {len(others) - NAMED} more" if len(others) > NAMED else "")
    since = (
        f"It collides with what was merged into {planned.base!r} since this task's branch left it: {shown}."
        if others
        else f"No task's merge into {planned.base!r} since this task's branch left it was found."
    )
    parts = [
        f"Merging task #{task_id} into {planned.base!r} was refused: on the merged result (commit "
        f"{planned.new}) its required checks failed ({names}), so the base was not moved. {since} "
        f"Its next session starts with {planned.base!r} merged into the branch: make the checks pass on "
        "that, keeping the task's intent and what the base has, run them yourself, then call done again.",
        *(_output(run) for run in failed if run.tail.strip()),
    ]
    text = "\n\n".join(parts)
    return text if len(text) <= REPORT_LIMIT else text[:REPORT_LIMIT] + "\n… (the rest is in .ralph/logs/)"


def _output(run: CheckRun) -> str:
    fenced = run.tail.strip().replace("```", "ʼʼʼ")
    return f"{run.name}: `{run.command}`\n```text\n{fenced}\n```"
