"""The `sandbox-exec` profile and command line that run a process inside its `Confinement` (macOS)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ralph_desk.sandbox.policy import Confinement

# What every process writes that is not a file of anyone's: the null device, terminals, descriptors.
DEVICES = (
    '(literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper") (regex #"^/dev/tty") '
    '(subpath "/dev/fd")'
)


def quoted(path: Path) -> str:
    """A path as a profile string literal."""
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpaths(paths: Iterable[Path]) -> str:
    return " ".join(f"(subpath {quoted(path)})" for path in paths)


def profile(confinement: Confinement) -> str:
    """The Seatbelt profile: later rules win, so the order is the policy (as with bubblewrap's mounts)."""
    rules = ["(version 1)", "(allow default)", "(deny file-write*)", f"(allow file-write* {DEVICES})"]
    hidden = (*confinement.hidden, Path("/private/tmp"), Path("/private/var/tmp"))
    rules.append(f"(deny file-read* file-write* {_subpaths(hidden)})")
    if confinement.readable:
        rules.append(f"(allow file-read* {_subpaths(confinement.readable)})")
    if confinement.writable:
        rules.append(f"(allow file-read* file-write* {_subpaths(confinement.writable)})")
    if confinement.protected:
        rules.append(f"(deny file-write* {_subpaths(confinement.protected)})")
    if confinement.masked:
        rules.append(f"(deny file-read* file-write* {_subpaths(confinement.masked)})")
    private = (confinement.home, confinement.temp)
    rules.append(f"(allow file-read* file-write* {_subpaths(private)})")
    for binding in confinement.files:
        access = "file-read* file-write*" if binding.writable else "file-read*"
        rules.append(f"(allow {access} (literal {quoted(binding.source)}))")
    if not confinement.network:  # no network, but the desk's MCP server on this computer's loopback
        rules += ["(deny network*)", '(allow network-outbound (remote ip "localhost:*"))']
    return "\n".join(rules) + "\n"


def command(program: Path, confinement: Confinement, argv: Sequence[str]) -> list[str]:
    """`sandbox-exec -p PROFILE argv` (the working folder is set by whoever starts it)."""
    return [str(program), "-p", profile(confinement), *argv]
