"""The dry run: the next session's prompt, MCP config and tools, without claiming or starting anything."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.loop.agents.base import mcp_config
from ralph_desk.loop.gather import gather_inputs
from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.planner import peek_next_task
from ralph_desk.loop.prompt import render_prompt
from ralph_desk.services.container import Services

CREDENTIAL_PLACEHOLDER = "<issued when the session starts>"
URL_PLACEHOLDER = "http://127.0.0.1:<port>/mcp"


@dataclass(frozen=True)
class SessionPreview:
    """What the next session would get."""

    task_id: int | None
    prompt: str
    tools: frozenset[str]
    mcp_config: dict[str, Any]


def preview_next_session(
    services: Services, settings: LoopSettings, repo_root: Path
) -> SessionPreview | None:
    """The next task session's prompt, tools and MCP config (None when nothing is runnable)."""
    plan = peek_next_task(services)
    if plan is None:
        return None
    prompt = render_prompt(gather_inputs(services, plan, repo_root, settings.allowed_paths, settings.checks))
    endpoint = SessionEndpoint(URL_PLACEHOLDER, CREDENTIAL_PLACEHOLDER, plan.context)
    return SessionPreview(
        task_id=plan.task.id if plan.task else None,
        prompt=prompt,
        tools=plan.enabled_tools,
        mcp_config=mcp_config(endpoint, plan.discipline),
    )
