"""Whether this computer can confine a process, with which tool, and why not when it cannot."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BUBBLEWRAP = "bubblewrap"
SEATBELT = "sandbox-exec"
SANDBOX_EXEC = Path("/usr/bin/sandbox-exec")
PROBE_TIMEOUT_S = 10
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`)"
)


@dataclass(frozen=True)
class Availability:
    """The sandbox this computer offers (`tool`), or None with the reason sessions run unconfined."""

    tool: str | None
    program: Path | None = None
    reason: str = ""

    @property
    def confines(self) -> bool:
        """Whether a process can be confined here."""
        return self.tool is not None


def availability() -> Availability:
    """This computer's sandbox, found once per process (a probe run of bubblewrap on Linux)."""
    if sys.platform == "darwin":
        if SANDBOX_EXEC.is_file():
            return Availability(SEATBELT, SANDBOX_EXEC)
        return Availability(None, reason=f"macOS's {SANDBOX_EXEC} is missing")
    if not sys.platform.startswith("linux"):
        return Availability(
            None, reason=f"ralph-desk has no sandbox for {sys.platform}: sessions run as you, unconfined"
        )
    found = shutil.which("bwrap")
    if found is None:
        return Availability(None, reason=f"bubblewrap (`bwrap`) is not installed: {INSTALL_HINT}")
    return _probe(found)


@functools.lru_cache(maxsize=4)
def _probe(program: str) -> Availability:
    """Start bubblewrap once with the options a session uses: user namespaces may be switched off."""
    argv = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user"]
    argv += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--die-with-parent", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Availability(None, reason=f"bubblewrap could not be started: {error}")
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return Availability(
            None,
            reason=f"bubblewrap cannot make a sandbox here ({said}); unprivileged user namespaces may be "
            "switched off (sysctl kernel.unprivileged_userns_clone, or AppArmor's "
            "kernel.apparmor_restrict_unprivileged_userns)",
        )
    return Availability(BUBBLEWRAP, Path(program))
