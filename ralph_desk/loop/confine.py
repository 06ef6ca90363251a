"""A session's agent command, confined by the project's sandbox policy (DESIGN §15)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ralph_desk.domain.session import safe_file_stem
from ralph_desk.loop.model import AgentCommand
from ralph_desk.loop.run_parts import Attempt, RunParts
from ralph_desk.project.confinement import SandboxRequest, confined
from ralph_desk.sandbox import Confined


def sandbox_name(session_id: str) -> str:
    """The name of a session's private folder under `.ralph/sandbox/`."""
    return f"session-{safe_file_stem(session_id)}"


def session_command(
    parts: RunParts, attempt: Attempt, command: AgentCommand
) -> tuple[AgentCommand, Confined]:
    """The agent's command inside the session's sandbox (or as it was, unconfined), and what became of it.

    The session writes its worktree and the worktree's own git records — never in a read-only session —
    and reads its own MCP config; its agent keeps the network when it needs it for its model API.
    """
    paths, adapter, settings = parts.services.paths, parts.adapter, parts.settings
    work = attempt.prepared
    stem = safe_file_stem(attempt.plan.session_id)
    own_files = tuple(sorted(paths.sessions_dir.glob(f"{stem}.*"))) + tuple(command.config_files)
    writable: tuple[Path, ...] = (attempt.git_admin,) if attempt.git_admin is not None else ()
    request = SandboxRequest(
        name=sandbox_name(attempt.plan.session_id),
        workdir=command.cwd or work.root,
        writable=writable,
        shown=own_files,
        home_files=adapter.home_files,
        network=settings.sandbox_network or adapter.needs_network,
        read_only=attempt.read_only,
    )
    outcome = confined(paths, command.argv, request, settings.sandbox)
    if not outcome.confined:
        return command, outcome
    env = {**command.env, **outcome.env}
    return replace(command, argv=outcome.argv, env=env, unset=outcome.unset), outcome
