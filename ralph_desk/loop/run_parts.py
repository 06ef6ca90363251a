"""What a loop run's sessions work with, and one session under way."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.loop import branches, git
from ralph_desk.loop.agent_processes import AgentProcesses
from ralph_desk.loop.agents.base import AgentAdapter
from ralph_desk.loop.model import LoopSettings, ReviewSettings, SessionPlan, StreamSummary
from ralph_desk.loop.run_state import RunState
from ralph_desk.loop.transcript import Transcript
from ralph_desk.services.container import Services

STDERR_LINES = 20  # the last lines of an agent's standard error kept to say why it crashed


@dataclass(frozen=True)
class RunParts:
    """The services, the endpoint issuer, the run's settings snapshot, its agent, state and processes."""

    services: Services
    issuer: EndpointIssuer
    settings: LoopSettings
    review: ReviewSettings
    adapter: AgentAdapter
    repo_root: Path
    state: RunState
    processes: AgentProcesses
    # Git work of parallel sessions (worktrees, session commits, merges) goes one at a time.
    git: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class Attempt:
    """One session under way: its plan, transcript and place, and what its agent said so far."""

    plan: SessionPlan
    transcript: Transcript
    read_only: bool
    work: branches.SessionWork | None = None
    git_before: git.GitState | None = None
    git_admin: Path | None = None  # the worktree's own records in the repository's .git (its index, HEAD)
    relay_folder: Path | None = None  # the socket of an agent without a network to the desk's MCP server
    fingerprint_before: str | None = None
    summary: StreamSummary = field(default_factory=StreamSummary)
    exit_code: int | None = None
    timed_out: bool = False
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    crash: str | None = None  # why the agent's process failed (its exit code, its last stderr lines)

    @property
    def prepared(self) -> branches.SessionWork:
        """The session's work (its worktree, or the project), once prepared."""
        assert self.work is not None
        return self.work
