"""`ralph-desk` run as a process of its own, as a person runs it from a shell."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

CLI_TIMEOUT_S = 180


def ralph_desk_process(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = CLI_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """`ralph-desk ARGS` to its end, with no standard input; its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "ralph_desk", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=None if env is None else dict(env),
        check=False,
    )
