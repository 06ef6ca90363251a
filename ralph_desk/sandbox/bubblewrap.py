"""The bubblewrap command line that runs a process inside its `Confinement` (Linux)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ralph_desk.sandbox.policy import Confinement

PRIVATE_TMP = "/tmp"  # a tmpfs of the sandbox's own


def command(program: Path, confinement: Confinement, argv: Sequence[str]) -> list[str]:
    """`bwrap …options… -- argv`: the system read-only, the hidden folders empty, the writable ones bound.

    Later mounts cover earlier ones, so the order is the policy: hide; show again what is needed; bind
    what may be written, then what inside it may not; mask what must stay out of sight whatever came
    before; last the run's private home and temporary folder, and the files shown in them.
    """
    # Every namespace but the cgroup one (it isolates nothing a session could misuse, and costs a start).
    words = [str(program), "--die-with-parent", "--unshare-user", "--unshare-ipc", "--unshare-pid"]
    words.append("--unshare-uts")
    if not confinement.network:
        words.append("--unshare-net")
    words += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm"]
    words += ["--tmpfs", PRIVATE_TMP]  # the project may live under /tmp: it is shown again below
    for folder in confinement.hidden:
        words += ["--tmpfs", str(folder)]
    for path in confinement.readable:
        words += ["--ro-bind", str(path), str(path)]
    for folder in confinement.writable:
        words += ["--bind", str(folder), str(folder)]
    for path in confinement.protected:
        words += ["--ro-bind", str(path), str(path)]
    for folder in confinement.masked:
        words += ["--tmpfs", str(folder)]
    for folder in (confinement.home, confinement.temp):
        words += ["--bind", str(folder), str(folder)]
    for binding in confinement.files:
        words += ["--bind" if binding.writable else "--ro-bind", str(binding.source), str(binding.target)]
    for folder in (*confinement.hidden, *confinement.masked):  # empty and read-only: nothing lands there
        words += ["--remount-ro", str(folder)]
    words += ["--chdir", str(confinement.workdir), "--", *argv]
    return words
