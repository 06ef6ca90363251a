"""Loop settings from the project's config.json, with command-line or tool overrides on top."""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from typing import Any

from ralph_desk.loop.model import LoopSettings
from ralph_desk.project import ProjectPaths, read_config

CLAUDE_BIN_ENV = "RALPH_CLAUDE_BIN"


def _template(command: Any) -> str | None:
    """config.json keeps the command template as a list of words; the adapter takes one string."""
    if isinstance(command, list):
        return shlex.join(str(word) for word in command)
    return str(command) if command else None


def settings_from_config(config: dict[str, Any]) -> LoopSettings:
    """The settings a config.json describes."""
    return LoopSettings(
        agent=str(config.get("agent") or "claude"),
        agent_command=_template(config.get("agent_command")),
        agent_bin=config.get("agent_bin")
        or (os.environ.get(CLAUDE_BIN_ENV) if config.get("agent", "claude") == "claude" else None),
        models=dict(config.get("models") or {}),
        max_iterations=config.get("max_iterations") or None,
        max_cost_usd=config.get("max_cost_usd"),
        session_timeout_s=float(config.get("session_timeout_s") or 1800),
        stuck_threshold=int(config.get("stuck_threshold") or 3),
        max_turns=int(config.get("max_turns") or 50),
        opus_review_every=int(config.get("opus_review_every") or 0),
        allow_edits=bool(config.get("allow_edits", True)),
        rate_limit_wait_s=float(config.get("rate_limit_wait_s") or 60.0),
    )


def load_settings(paths: ProjectPaths, **overrides: Any) -> LoopSettings:
    """The project's settings with the given overrides (None values are ignored)."""
    settings = settings_from_config(read_config(paths))
    given = {key: value for key, value in overrides.items() if value is not None}
    return replace(settings, **given)
