"""What one confined process may see and touch: the folders it writes, what it reads, what it never sees."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class FileBinding:
    """A file of the person's shown inside the sandbox at another place (an agent CLI's credentials)."""

    source: Path
    target: Path
    writable: bool = False


@dataclass(frozen=True)
class Confinement:
    """One process's sandbox: everything is read-only but `writable`; `hidden` folders are empty.

    `home` (a private folder, writable) stands in for the person's home, which is hidden with the
    private temporary folder over /tmp. `readable` names what a hidden folder holds that the process
    still needs (the project, the agent's program): shown read-only again, in order, after hiding.
    `masked` folders (other sessions' credentials) are hidden inside what is readable.
    """

    workdir: Path
    writable: tuple[Path, ...]
    home: Path
    temp: Path
    readable: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    protected: tuple[Path, ...] = ()  # read-only inside what is writable (a worktree's `.git`, `.ralph/`)
    files: tuple[FileBinding, ...] = ()
    hidden: tuple[Path, ...] = ()  # the person's home and other folders out of sight (besides /tmp)
    network: bool = True
    env: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        """The variables the confined process gets on top of its own: its home and temporary folder."""
        return {
            "HOME": str(self.home),
            "TMPDIR": str(self.temp),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            **self.env,
        }
