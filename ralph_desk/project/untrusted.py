"""What the project folder names to run and the person has not allowed yet (trust on first use).

The programs config.json names (the agent program, the checks, the setup command) share one fingerprint;
whatever runs one of them asks here first, so a cloned folder runs nothing of its own unasked.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from ralph_desk.domain.checks import Check
from ralph_desk.project import trust
from ralph_desk.project.config import ProjectConfig, command_fingerprint
from ralph_desk.project.errors import ProjectError
from ralph_desk.project.paths import ProjectPaths

TRUST_HINT = "ralph-desk trust"
OWN_DATABASE = ".ralph/db/ralph.db"  # the folder's own database, as the person reads it
FOLDER = "the project folder"


@dataclass(frozen=True)
class Untrusted:
    """A program named by the project's config.json that this computer has not allowed yet."""

    setting: str  # agent_bin, agent_command, checks, setup, sandbox or mcp_servers
    command: str  # the program (agent_bin), command line (agent_command, setup), the checks or servers, shown
    fingerprint: str
    part: str = trust.PROGRAMS  # which of the project's trusted settings this is
    source: str = ".ralph/config.json"  # the file (or database) that named it, as the person reads it
    origin: str = FOLDER  # what brought it to this computer
    also: tuple[Untrusted, ...] = ()  # more that the same start would run, shown and allowed with it

    @property
    def origins(self) -> str:
        """What brought it and what came `also`, each once ("the project folder and the shared database…")."""
        return " and ".join(dict.fromkeys(item.origin for item in (self, *self.also)))

    def allow(self, root: Path) -> None:
        """Remember that the person allowed it (and what came `also`) for the project at `root`."""
        for found in (self, *self.also):
            trust.record(root, found.fingerprint, found.part)


class UntrustedCommandError(ProjectError):
    """Something would run a program the project folder named and the person has not allowed."""

    def __init__(self, paths: ProjectPaths, found: Untrusted) -> None:
        source: object = paths.config_file
        if found.part == trust.SERVERS:
            source = paths.db_file if found.source == OWN_DATABASE else found.source
        named = "; ".join(f"{item.setting}: {item.command}" for item in (found, *found.also))
        super().__init__(
            f"{source} names the programs to run ({named}) — they came with {found.origins} and this "
            f"computer has not allowed them, so nothing was run. Check them, then allow them with "
            f"`{TRUST_HINT} --root {shlex.quote(str(paths.root))}` "
            f"(asked again whenever a command or a value of its env changes)"
        )
        self.untrusted = found


def untrusted_commands(
    paths: ProjectPaths, config: ProjectConfig, named: list[tuple[str, str]]
) -> Untrusted | None:
    """The `named` settings of `config` (setting, command shown) when not allowed, the rest in `also`."""
    if not named:
        return None
    print_ = command_fingerprint(config)
    assert print_ is not None  # a program came from the config, so the config names one
    if trust.is_trusted(paths.root, print_):
        return None
    first, *more = (Untrusted(setting, command, print_) for setting, command in named)
    return replace(first, also=tuple(more))


SANDBOX_OFF = "false: sessions, checks and setup run as you, unconfined"


def config_commands(config: ProjectConfig) -> list[tuple[str, str]]:
    """The checks and the setup command `config` names, each as its setting and the commands shown, and
    the sandbox when the folder switched it off (what runs then runs as the person)."""
    named = [("checks", shown(config.checks))] if config.checks else []
    named += [("setup", config.setup)] if config.setup else []
    return named + ([] if config.sandbox else [("sandbox", SANDBOX_OFF)])


def require_trusted_checks(paths: ProjectPaths, config: ProjectConfig) -> None:
    """Raise `UntrustedCommandError` when `config`'s checks or setup command are not the person's."""
    found = untrusted_commands(paths, config, config_commands(config))
    if found is not None:
        raise UntrustedCommandError(paths, found)


def shown(value: str | tuple[str, ...] | tuple[Check, ...]) -> str:
    """A command-bearing setting as the person reads it (checks as `name: command; …`)."""
    if isinstance(value, str):
        return value
    checks = [item for item in value if isinstance(item, Check)]
    if checks:
        return "; ".join(f"{item.name}: {item.run}" for item in checks)
    return shlex.join(item for item in value if isinstance(item, str))
