"""Loop settings from the project's config.json, with a run's typed overrides on top."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.trust_check import require_trusted, require_trusted_servers
from ralph_desk.project import ProjectPaths, read_config
from ralph_desk.services.container import Services

CLAUDE_BIN_ENV = "RALPH_CLAUDE_BIN"  # read by the Claude adapter when no agent_bin is set


@dataclass(frozen=True)
class RunOverrides:
    """What one run changes of the project's settings (the CLI's flags, a tool's arguments); None keeps it."""

    agent: str | None = None
    agent_command: str | None = None
    agent_bin: str | None = None
    models: Mapping[str, str | None] | None = None
    max_iterations: int | None = None
    max_cost_usd: float | None = None
    parallel: int | None = None
    session_timeout_s: float | None = None
    allow_edits: bool | None = None
    allowed_paths: tuple[str, ...] | None = None

    def applied_to(self, settings: LoopSettings) -> LoopSettings:
        """`settings` with every override that is set."""
        given = {field.name: getattr(self, field.name) for field in fields(self)}
        return replace(settings, **{name: value for name, value in given.items() if value is not None})


NO_OVERRIDES = RunOverrides()


def load_settings(paths: ProjectPaths, overrides: RunOverrides = NO_OVERRIDES) -> LoopSettings:
    """The project's settings with the run's overrides.

    `UntrustedCommandError` when they would run a program the project folder named and nobody allowed.
    """
    config = read_config(paths)
    settings = overrides.applied_to(LoopSettings.of(config))
    require_trusted(paths, config, settings)
    return settings


def load_checked(services: Services, overrides: RunOverrides = NO_OVERRIDES) -> LoopSettings:
    """`load_settings`, also refused when a discipline in the database would start a server nobody allowed."""
    settings = load_settings(services.paths, overrides)
    require_trusted_servers(services.paths, services.disciplines.list(), services.db.url)
    return settings
