"""Loop settings from the project's config.json, with command-line or tool overrides on top."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.trust_check import require_trusted, require_trusted_servers
from ralph_desk.project import ProjectPaths, read_config
from ralph_desk.services.container import Services

CLAUDE_BIN_ENV = "RALPH_CLAUDE_BIN"  # read by the Claude adapter when no agent_bin is set


def load_settings(paths: ProjectPaths, **overrides: Any) -> LoopSettings:
    """The project's settings with the given overrides (None values are ignored).

    `UntrustedCommandError` when they would run a program the project folder named and nobody allowed.
    """
    config = read_config(paths)
    given = {key: value for key, value in overrides.items() if value is not None}
    settings = replace(LoopSettings.of(config), **given)
    require_trusted(paths, config, settings)
    return settings


def load_checked(services: Services, **overrides: Any) -> LoopSettings:
    """`load_settings`, also refused when a discipline in the database would start a server nobody allowed."""
    settings = load_settings(services.paths, **overrides)
    require_trusted_servers(services.paths, services.disciplines.list())
    return settings
