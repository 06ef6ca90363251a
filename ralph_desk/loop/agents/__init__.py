"""Agent adapters: Claude Code, Codex, a command template and the built-in rehearsal behind one interface."""

from __future__ import annotations

from ralph_desk.loop.agents.base import AgentAdapter, AgentUnavailableError
from ralph_desk.loop.agents.claude import ClaudeAdapter
from ralph_desk.loop.agents.codex import CodexAdapter
from ralph_desk.loop.agents.command import CommandTemplateAdapter
from ralph_desk.loop.agents.rehearsal import RehearsalAdapter
from ralph_desk.loop.model import LoopSettings
from ralph_desk.project.config import AGENTS

__all__ = [
    "AGENTS",
    "AgentAdapter",
    "AgentUnavailableError",
    "ClaudeAdapter",
    "CodexAdapter",
    "CommandTemplateAdapter",
    "RehearsalAdapter",
    "adapter_for",
]


def adapter_for(settings: LoopSettings) -> AgentAdapter:
    """The adapter `settings.agent` names; an unknown name raises `AgentUnavailableError`."""
    if settings.agent == "claude":
        return ClaudeAdapter()
    if settings.agent == "codex":
        return CodexAdapter()
    if settings.agent == "command":
        return CommandTemplateAdapter()
    if settings.agent == "rehearsal":
        return RehearsalAdapter()
    raise AgentUnavailableError(f"unknown agent {settings.agent!r}; choose one of {', '.join(AGENTS)}")
