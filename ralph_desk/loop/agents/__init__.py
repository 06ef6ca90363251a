"""Agent adapters: Claude Code, Codex and a command template behind one interface."""

from __future__ import annotations

from ralph_desk.loop.agents.base import AgentAdapter, AgentUnavailableError
from ralph_desk.loop.agents.claude import ClaudeAdapter
from ralph_desk.loop.agents.codex import CodexAdapter
from ralph_desk.loop.agents.command import CommandTemplateAdapter
from ralph_desk.loop.model import LoopSettings

__all__ = [
    "AGENTS",
    "AgentAdapter",
    "AgentUnavailableError",
    "ClaudeAdapter",
    "CodexAdapter",
    "CommandTemplateAdapter",
    "adapter_for",
]

AGENTS = ("claude", "codex", "command")


def adapter_for(settings: LoopSettings) -> AgentAdapter:
    """The adapter `settings.agent` names; an unknown name raises `AgentUnavailableError`."""
    if settings.agent == "claude":
        return ClaudeAdapter()
    if settings.agent == "codex":
        return CodexAdapter()
    if settings.agent == "command":
        return CommandTemplateAdapter()
    raise AgentUnavailableError(f"unknown agent {settings.agent!r}; choose one of {', '.join(AGENTS)}")
