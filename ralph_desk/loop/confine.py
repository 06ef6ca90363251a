"""A session's agent command, confined by the project's sandbox policy (DESIGN §15)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

from ralph_desk.domain.session import safe_file_stem
from ralph_desk.loop.model import AgentCommand
from ralph_desk.loop.run_parts import Attempt, RunParts
from ralph_desk.project.confinement import SandboxRequest, confined
from ralph_desk.sandbox import Confined, availability
from ralph_desk.sandbox.availability import BUBBLEWRAP
from ralph_desk.sandbox.policy import FileBinding
from ralph_desk.sandbox.relay import INNER_FOLDER, SOCKET_NAME, inner_command, relayed


def sandbox_name(session_id: str) -> str:
    """The name of a session's private folder under `.ralph/sandbox/`."""
    return f"session-{safe_file_stem(session_id)}"


def session_command(
    parts: RunParts, attempt: Attempt, command: AgentCommand, mcp_url: str
) -> tuple[AgentCommand, Confined]:
    """The agent's command inside the session's sandbox (or as it was, unconfined), and what became of it.

    The session writes its worktree and the worktree's own git records — never in a read-only session —
    and reads its own MCP config; its agent keeps the network when it needs it for its model API. One
    without a network reaches the desk's MCP server through a relay (`attempt.relay_folder`).
    """
    paths, adapter, settings = parts.services.paths, parts.adapter, parts.settings
    work = attempt.prepared
    stem = safe_file_stem(attempt.plan.session_id)
    own_files = tuple(sorted(paths.sessions_dir.glob(f"{stem}.*"))) + tuple(command.config_files)
    writable: tuple[Path, ...] = (attempt.git_admin,) if attempt.git_admin is not None else ()
    network = settings.sandbox_network or adapter.needs_network
    argv = command.argv
    bound: tuple[FileBinding, ...] = ()
    if settings.sandbox and not network and availability().tool == BUBBLEWRAP:
        # A short folder of its own: a Unix socket's path has room for 107 bytes only.
        attempt.relay_folder = Path(tempfile.mkdtemp(prefix="ralph-desk-mcp-"))
        argv = inner_command(INNER_FOLDER / SOCKET_NAME, mcp_url, command.argv)
        bound = (FileBinding(attempt.relay_folder, INNER_FOLDER, writable=True),)
    request = SandboxRequest(
        name=sandbox_name(attempt.plan.session_id),
        workdir=command.cwd or work.root,
        writable=writable,
        shown=own_files,
        home_files=adapter.home_files,
        network=network,
        read_only=attempt.read_only,
        bound=bound,
    )
    outcome = confined(paths, argv, request, settings.sandbox)
    if not outcome.confined:
        return command, outcome
    env = {**command.env, **outcome.env}
    return replace(command, argv=outcome.argv, env=env, unset=outcome.unset), outcome


@contextlib.asynccontextmanager
async def agent_relay(attempt: Attempt, mcp_url: str) -> AsyncIterator[None]:
    """While the agent runs, its relay to the desk's MCP server (when it has no network); then its folder
    goes."""
    folder = attempt.relay_folder
    if folder is None:
        yield
        return
    try:
        async with relayed(folder / SOCKET_NAME, mcp_url):
            yield
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        attempt.relay_folder = None
