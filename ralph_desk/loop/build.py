"""The one place a loop runner is built: from the services, the issuer, a settings snapshot and options."""

from __future__ import annotations

from dataclasses import dataclass

from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.loop.agent_processes import AgentProcesses
from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.model import LoopSettings, ReviewSettings
from ralph_desk.loop.run_parts import RunParts
from ralph_desk.loop.run_state import RunState
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.services.container import Services


@dataclass(frozen=True)
class RunOptions:
    """How a runner is used: whether its loop ends when nothing is runnable (else it waits for work)."""

    exit_when_idle: bool = False


def build_runner(
    services: Services, issuer: EndpointIssuer, settings: LoopSettings, options: RunOptions = RunOptions()
) -> LoopRunner:
    """A runner over `settings` and the project's review settings as they are now (one snapshot)."""
    state = RunState(services, settings)
    root = services.paths.root
    parts = RunParts(
        services=services,
        issuer=issuer,
        settings=settings,
        review=ReviewSettings.of(services.workspaces.config()),
        adapter=adapter_for(settings),
        repo_root=root,
        state=state,
        processes=AgentProcesses(state.emit, settings.session_timeout_s, root),
    )
    return LoopRunner(parts, exit_when_idle=options.exit_when_idle)
