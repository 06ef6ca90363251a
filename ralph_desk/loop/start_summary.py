"""What a loop run would do, said before it starts: agent and program, model, budget, work, the folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ralph_desk.domain.enums import Recipe
from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.model import LoopSettings
from ralph_desk.project.confinement import sandbox_of
from ralph_desk.services.container import Services
from ralph_desk.vcs import work_state

QUEUE_LIMIT = 200  # the most the service lists at once; more shows as "200 or more"
FREE_AGENTS = frozenset({"rehearsal"})
OWN_COMMAND_AGENTS = frozenset({"command"})  # agents whose model and spend only their own command knows


@dataclass(frozen=True)
class StartSummary:
    """The facts a person confirms before a loop run spends anything."""

    agent: str
    program: str
    model: str | None
    max_cost_usd: float | None
    max_iterations: int | None
    runnable: int
    repository: bool
    tracked_files: int
    sandbox: str = ""  # whether the sessions run confined, or why not (the row warns when they are not)

    @property
    def costs_money(self) -> bool:
        """Whether the agent asks a paid model (the rehearsal does not)."""
        return self.agent not in FREE_AGENTS

    def lines(self) -> list[tuple[str, str]]:
        """The summary as (label, text) rows."""
        if self.agent in OWN_COMMAND_AGENTS:  # the command chooses its model; its cost counts if it says it
            model = "chosen by the command (ralph-desk does not know it)"
            budget = (
                f"stops at ${self.max_cost_usd:.2f} of the cost the command reports (it may report none)"
                if self.max_cost_usd
                else "no budget: no limit"
            )
        elif self.costs_money:
            model = self.model or "the agent's default model"
            budget = (
                f"stops at ${self.max_cost_usd:.2f} per run" if self.max_cost_usd else "no budget: no limit"
            )
        else:
            model, budget = "none: scripted sessions", "free: no model is asked"
        sessions = f"at most {self.max_iterations}" if self.max_iterations else "no limit"
        if not self.repository:
            folder = "not a git repository: changes are found by comparing files"
        elif self.tracked_files:
            folder = (
                f"a git repository with {self.tracked_files} tracked file{'s' * (self.tracked_files != 1)}"
            )
        else:
            folder = "a git repository without code yet"
        return [
            ("Agent", f"{self.agent} — {self.program}"),
            ("Model", model),
            ("Budget", budget),
            ("Sessions", sessions),
            (
                "Runnable tasks",
                f"{self.runnable} or more" if self.runnable >= QUEUE_LIMIT else str(self.runnable),
            ),
            ("Folder", folder),
            *([("Sandbox", self.sandbox)] if self.sandbox else []),
        ]


def summarise_start(services: Services, settings: LoopSettings, root: Path) -> StartSummary:
    """The summary of a run with these settings; `AgentUnavailableError` when the agent is not there."""
    program = adapter_for(settings).program(settings)
    repository = work_state.is_work_tree(root)
    return StartSummary(
        agent=settings.agent,
        program=program,
        model=settings.model_for(Recipe.TASK_EXECUTION),
        max_cost_usd=settings.max_cost_usd,
        max_iterations=settings.max_iterations,
        runnable=len(services.tasks.next_runnable(limit=QUEUE_LIMIT)),
        repository=repository,
        tracked_files=work_state.tracked_files(root) if repository else 0,
        sandbox=sandbox_of(settings.sandbox, settings.sandbox_network).line(),
    )
