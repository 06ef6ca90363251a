"""The loop's shared vocabulary: settings, the session plan, live events and what a session's stream said."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from ralph_desk.domain.checks import Check
from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.records import Discipline, Feature, Task
from ralph_desk.domain.session import SessionContext
from ralph_desk.project.config import ProjectConfig

_CONFIG = ProjectConfig()

IDLE_POLL_S = 1.0
NOTHING_RUNNABLE = "nothing is runnable"
ALL_DONE = "all work is done: every task is done or skipped (add tasks, then Start again)"
# A session whose task reached one of these finished its work (merged, or waiting for review).
FINISHED = frozenset({TaskStatus.DONE, TaskStatus.IN_REVIEW})


def command_template(words: Sequence[str] | None) -> str | None:
    """config.json keeps an agent command as a list of words; the adapter takes one template string."""
    return shlex.join(words) if words else None


@dataclass(frozen=True)
class LoopSettings:
    """What a loop run may do: the loop's view of the project's config, whose defaults are its own."""

    agent: str = _CONFIG.agent
    agent_command: str | None = command_template(_CONFIG.agent_command)
    agent_bin: str | None = _CONFIG.agent_bin
    # Empty, not the config's: without a project the agent keeps its own model (Codex knows no "sonnet").
    models: Mapping[str, str | None] = field(default_factory=dict)
    max_iterations: int | None = _CONFIG.max_iterations or None  # None: no limit
    parallel: int = _CONFIG.parallel
    max_cost_usd: float | None = _CONFIG.max_cost_usd
    session_timeout_s: float = _CONFIG.session_timeout_s
    stuck_threshold: int = _CONFIG.stuck_threshold
    max_turns: int = _CONFIG.max_turns
    opus_review_every: int = _CONFIG.opus_review_every
    allow_edits: bool = _CONFIG.allow_edits
    rate_limit_wait_s: float = _CONFIG.rate_limit_wait_s
    rate_limit_max_wait_s: float = _CONFIG.rate_limit_max_wait_s
    allowed_paths: tuple[str, ...] = _CONFIG.allowed_paths  # empty: edits anywhere in the project
    checks: tuple[Check, ...] = _CONFIG.checks  # run after a task's done, before it may enter review
    setup: str | None = _CONFIG.setup  # run once in each new task worktree
    worktree_files: tuple[str, ...] = _CONFIG.worktree_files  # untracked files copied into new worktrees
    sandbox: bool = _CONFIG.sandbox  # sessions, checks and setup run confined where the computer can
    sandbox_network: bool = _CONFIG.sandbox_network  # False: a confined command agent has no network
    when_all_done: str = _CONFIG.when_all_done  # the window's loop: "stop" or "wait" once all work is done

    @classmethod
    def of(cls, config: ProjectConfig) -> LoopSettings:
        """The settings of the loop that a project's config describes."""
        shared = {setting.name: getattr(config, setting.name) for setting in fields(cls)}
        shared["agent_command"] = command_template(config.agent_command)
        shared["max_iterations"] = config.max_iterations or None
        return cls(**shared)

    def model_for(self, recipe: Recipe) -> str | None:
        """The model configured for a recipe, or the default one (key `default`)."""
        return self.models.get(recipe.value) or self.models.get("default")


@dataclass(frozen=True)
class ReviewSettings:
    """The project's review settings as a run found them at its start (not re-read at each use)."""

    gate: bool = _CONFIG.review_gate
    skip_disciplines: tuple[str, ...] = _CONFIG.review_skip_disciplines
    reviewer_agent: bool = _CONFIG.reviewer_agent

    @classmethod
    def of(cls, config: ProjectConfig) -> ReviewSettings:
        """The review settings of a project's config."""
        return cls(config.review_gate, tuple(config.review_skip_disciplines), config.reviewer_agent)

    def gate_applies(self, discipline: str) -> bool:
        """Whether done work of this discipline waits for a person."""
        return self.gate and discipline not in self.skip_disciplines


@dataclass(frozen=True)
class SessionPlan:
    """One agent session, planned: shared by the prompt builder, the MCP endpoint and the agent command."""

    session_id: str
    recipe: Recipe
    context: SessionContext
    enabled_tools: frozenset[str]
    task: Task | None = None
    feature: Feature | None = None
    discipline: Discipline | None = None
    iteration: int | None = None
    loop_run_id: int | None = None
    extra_input: str | None = None
    read_only: bool = False  # no file edits whatever the settings say (a reviewer agent's session)


class EventKind(StrEnum):
    """What happened in a session's stream (or around it)."""

    SESSION_STARTED = "session_started"
    INIT = "init"
    ASSISTANT_TEXT = "assistant_text"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    COST = "cost"
    RETRY = "retry"
    RATE_LIMIT = "rate_limit"
    PERMISSION_DENIED = "permission_denied"
    RESULT = "result"
    ERROR = "error"
    STDERR = "stderr"
    SESSION_ENDED = "session_ended"
    LOOP_STATE = "loop_state"
    CHECK_STARTED = "check_started"
    CHECK_OUTPUT = "check_output"
    CHECK_ENDED = "check_ended"


@dataclass(frozen=True)
class LiveEvent:
    """One thing to show live and to keep in the transcript."""

    kind: EventKind
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    at: datetime | None = None


@dataclass
class StreamSummary:
    """What an agent's JSON stream said about its session, gathered while reading it."""

    cost_usd: float = 0.0
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    is_error: bool = False
    api_error_status: int | None = None
    rate_limited: bool = False
    resets_at: datetime | None = None
    permission_denials: list[str] = field(default_factory=list)
    result_text: str | None = None
    error: str | None = None
    saw_result: bool = False


@dataclass(frozen=True)
class AgentCommand:
    """How to start one agent process: argv (never a shell), environment additions, files written for it."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    stdin_text: str | None = None
    config_files: tuple[Path, ...] = ()
    unset: tuple[str, ...] = ()  # inherited variables the process must not see (the sandbox's doors out)


@dataclass(frozen=True)
class SessionLaunch:
    """What an agent adapter builds one session's command from."""

    plan: SessionPlan
    prompt: str
    endpoint: SessionEndpoint
    settings: LoopSettings
    workdir: Path  # the session's working folder (the project, or the task's worktree)
    session_dir: Path  # where the session's files go (MCP config, prompt)
    read_only: bool
