"""The sandbox of one session, check or setup run in this project: what it writes, reads and never sees.

One policy for everything the desk runs on an agent's behalf (DESIGN §15): it writes its working folder
(a task's worktree), the worktree's own git records and a private home and temporary folder; it reads the
project and the system; the person's home, /run/user, /var/tmp and /tmp are out of sight; the desk's
credentials (`.ralph/mcp`) and the other runs' private folders are masked, the session's own files shown.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.project import contained
from ralph_desk.project.config import ProjectConfig
from ralph_desk.project.contained import PRIVATE_DIR_MODE
from ralph_desk.project.paths import ProjectPaths
from ralph_desk.sandbox import Availability, Confined, Confinement, availability, confine
from ralph_desk.sandbox.exposure import toolchains
from ralph_desk.sandbox.policy import FileBinding
from ralph_desk.sandbox.wrap import OFF, unconfined

COPY_LIMIT = 1 << 20  # an agent CLI's settings file is small; a bigger one is not copied


@dataclass(frozen=True)
class HomeFile:
    """A file an agent CLI needs from the person's home: shown read-only, or copied for it to write."""

    relative: str
    copy: bool = False


@dataclass(frozen=True)
class SandboxRequest:
    """What one confined run needs besides the project's policy."""

    name: str  # its private folder's name under .ralph/sandbox/
    workdir: Path
    writable: tuple[Path, ...] = ()  # besides `workdir` (a worktree's git records)
    shown: tuple[Path, ...] = ()  # files of the masked `.ralph/mcp` it reads (its own MCP config, prompt)
    home_files: tuple[HomeFile, ...] = ()
    network: bool = True
    read_only: bool = False  # the working folder too is read-only (a session that may not edit)
    bound: tuple[FileBinding, ...] = ()  # more shown inside at a place of their own (the MCP relay's socket)


def hidden_folders(home: Path) -> tuple[Path, ...]:
    """The person's folders out of a confined run's sight: their home, their runtime folder, /var/tmp."""
    candidates = [home, Path(f"/run/user/{os.getuid()}") if hasattr(os, "getuid") else None, Path("/var/tmp")]
    return tuple(path for path in candidates if path is not None and path.is_dir() and path != Path("/"))


def policy(paths: ProjectPaths, request: SandboxRequest) -> Confinement:
    """The confinement of one run: its private folder made, the agent CLI's home files placed."""
    folder = contained.make_folder(paths.root, paths.sandbox_dir / request.name, PRIVATE_DIR_MODE)
    home = contained.make_folder(paths.root, folder / "home", PRIVATE_DIR_MODE)
    temp = contained.make_folder(paths.root, folder / "tmp", PRIVATE_DIR_MODE)
    person_home = Path.home()
    protected = [request.workdir / ".git"] if (request.workdir / ".git").is_file() else []
    if request.workdir == paths.root:  # outside git the agent edits the project itself, never `.ralph/`
        protected.append(paths.ralph)
    masked = (paths.mcp_dir, paths.sandbox_dir)
    return Confinement(
        workdir=request.workdir,
        writable=request.writable if request.read_only else (request.workdir, *request.writable),
        home=home,
        temp=temp,
        readable=(paths.root, *toolchains(person_home, os.environ.get("PATH"))),
        masked=tuple(path for path in masked if path.is_dir()),
        protected=tuple(protected),
        files=(
            *(FileBinding(path, path) for path in request.shown if path.is_file()),
            *_home_files(person_home, home, request.home_files),
            *request.bound,
        ),
        hidden=hidden_folders(person_home),
        network=request.network,
    )


def confined(
    paths: ProjectPaths,
    argv: list[str],
    request: SandboxRequest,
    enabled: bool,
    found: Availability | None = None,
) -> Confined:
    """`argv` as it will be started: inside the project's sandbox, or unconfined with the reason why."""
    if not enabled:
        return unconfined(argv, OFF)
    found = found or availability()
    if not found.confines:
        return unconfined(argv, found.reason)
    return confine(argv, policy(paths, request), found)


def release(paths: ProjectPaths, name: str) -> None:
    """Remove one run's private folder (its home's copies of settings, its temporary files)."""
    folder = paths.sandbox_dir / name
    with contextlib.suppress(OSError, contained.LinkRefusedError):
        contained.checked(paths.root, folder)
        if folder.is_dir():
            shutil.rmtree(folder)


def described(outcome: Confined) -> str:
    """One line on what a run could touch, or why it ran unconfined (the session record, the window)."""
    if not outcome.confined:
        return f"unconfined: {outcome.reason}"
    network = "network shared" if outcome.network else "no network"
    return f"{outcome.tool}: writes its worktree, its private home and temporary folder only; {network}"


def _home_files(person_home: Path, home: Path, wanted: Iterable[HomeFile]) -> Iterator[FileBinding]:
    """Copy the settings the CLI may write; show its credentials read-only in place (never copied)."""
    for item in wanted:
        source = person_home / item.relative
        target = home / item.relative
        if not source.is_file() or source.is_symlink():
            continue
        target.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        if item.copy:
            if source.stat().st_size <= COPY_LIMIT:
                shutil.copyfile(source, target)
                target.chmod(0o600)
            continue
        yield FileBinding(source, target)


@dataclass(frozen=True)
class SandboxState:
    """Whether this project's sessions, checks and setup would run confined here, and why not."""

    enabled: bool  # the project's sandbox setting
    tool: str | None  # the sandbox that would confine them (None: they run unconfined)
    reason: str  # why they run unconfined ("" when confined)
    network: bool  # a confined command agent, its checks and setup keep the network

    @property
    def confined(self) -> bool:
        """Whether sessions would run confined."""
        return self.tool is not None

    def line(self) -> str:
        """One line for `validate`, `status` and the Start confirmation."""
        if not self.confined:
            return f"NOT confined: {self.reason} — agents, checks and setup run as you"
        network = "network shared" if self.network else "no network for command agents, checks and setup"
        return f"{self.tool}: each session writes only its worktree; {network}"


def sandbox_state(config: ProjectConfig, found: Availability | None = None) -> SandboxState:
    """What the project's sandbox settings mean on this computer."""
    return sandbox_of(config.sandbox, config.sandbox_network, found)


def sandbox_of(enabled: bool, network: bool, found: Availability | None = None) -> SandboxState:
    """What the sandbox settings (`sandbox`, `sandbox_network`) mean on this computer."""
    if not enabled:
        return SandboxState(False, None, OFF, network)
    found = found or availability()
    return SandboxState(True, found.tool, found.reason, network)
