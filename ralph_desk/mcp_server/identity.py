"""What the server says it is in its `initialize` answer, without loading its tools."""

from __future__ import annotations

from typing import Any

import ralph_desk

SERVER_NAME = "ralph"
INSTRUCTIONS = (
    "ralph_desk project server. Tools are filtered per session: you see only the tools your "
    "recipe and discipline allow. Task-execution sessions signal back with the verbs "
    "done, partial, stuck, ask, flag, learned, suggest and blocked."
)


def server_options() -> dict[str, Any]:
    """The `MCPServer` arguments every ralph server is built with."""
    # The SDK configures root logging when nothing else has; the app's own setup decides the level.
    return {
        "name": SERVER_NAME,
        "version": ralph_desk.__version__,
        "instructions": INSTRUCTIONS,
        "log_level": "WARNING",
    }
