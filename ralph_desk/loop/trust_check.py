"""Before a loop runs: a program that came with the project folder runs only once the person allowed it."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ralph_desk.domain.records import Discipline
from ralph_desk.loop.model import LoopSettings, command_template
from ralph_desk.project import ProjectConfig, ProjectError, ProjectPaths, read_config, trust
from ralph_desk.project.config import COMMAND_KEYS, command_fingerprint

TRUST_HINT = "ralph-desk trust"


@dataclass(frozen=True)
class Untrusted:
    """A program named by the project's config.json that this computer has not allowed yet."""

    setting: str  # agent_bin, agent_command or mcp_servers
    command: str  # the exact program (agent_bin), command line (agent_command) or server commands, as shown
    fingerprint: str
    part: str = trust.PROGRAMS  # which of the project's trusted settings this is
    source: str = ".ralph/config.json"  # the file that named it, as the person reads it
    also: tuple[Untrusted, ...] = ()  # more that the same start would run, shown and allowed with it

    def allow(self, root: Path) -> None:
        """Remember that the person allowed it (and what came `also`) for the project at `root`."""
        for found in (self, *self.also):
            trust.record(root, found.fingerprint, found.part)


class UntrustedCommandError(ProjectError):
    """The loop would run a program the project folder named and the person has not allowed."""

    def __init__(self, paths: ProjectPaths, found: Untrusted) -> None:
        source = paths.db_file if found.part == trust.SERVERS else paths.config_file
        super().__init__(
            f"{source} names the program to run ({found.setting}): {found.command} — "
            f"it came with the project folder and this computer has not allowed it, so nothing was run. "
            f"Check it, then allow it with `{TRUST_HINT} --root {shlex.quote(str(paths.root))}` "
            f"(asked again whenever the command or a value of its env changes)"
        )
        self.untrusted = found


def untrusted(paths: ProjectPaths, config: ProjectConfig, settings: LoopSettings) -> Untrusted | None:
    """What `settings` would run from `config` without the person's leave; None when nothing is."""
    found = config_program(config, settings)
    if found is None:
        return None
    setting, command = found
    print_ = command_fingerprint(config)
    assert print_ is not None  # a program came from the config, so the config names one
    if trust.is_trusted(paths.root, print_):
        return None
    return Untrusted(setting, command, print_)


def untrusted_servers(paths: ProjectPaths, disciplines: Iterable[Discipline]) -> Untrusted | None:
    """The disciplines' stdio MCP servers (from the database) when the person has not allowed them."""
    listed = list(disciplines)
    print_ = trust.servers_fingerprint(listed)
    if print_ is None or trust.is_trusted(paths.root, print_, trust.SERVERS):
        return None
    shown = "; ".join(trust.shown_command(entry) for entry in trust.server_commands(listed))
    return Untrusted("mcp_servers", shown, print_, trust.SERVERS, source=".ralph/db/ralph.db")


def untrusted_start(
    paths: ProjectPaths, config: ProjectConfig, settings: LoopSettings, disciplines: Iterable[Discipline]
) -> Untrusted | None:
    """Everything a start with `settings` would run without leave (the config's program, the servers)."""
    checks = (untrusted(paths, config, settings), untrusted_servers(paths, disciplines))
    found = [item for item in checks if item is not None]
    return replace(found[0], also=tuple(found[1:])) if found else None


def require_trusted_servers(paths: ProjectPaths, disciplines: Iterable[Discipline]) -> None:
    """Raise `UntrustedCommandError` when a discipline would start a server program nobody allowed."""
    found = untrusted_servers(paths, disciplines)
    if found is not None:
        raise UntrustedCommandError(paths, found)


def config_program(config: ProjectConfig, settings: LoopSettings) -> tuple[str, str] | None:
    """The setting and program the config names that `settings` would run (not one given elsewhere)."""
    if settings.agent == "command":
        if settings.agent_command and settings.agent_command == command_template(config.agent_command):
            return "agent_command", settings.agent_command
        return None
    if (
        settings.agent in ("claude", "codex")
        and settings.agent_bin
        and settings.agent_bin == config.agent_bin
    ):
        return "agent_bin", settings.agent_bin
    return None


def require_trusted(paths: ProjectPaths, config: ProjectConfig, settings: LoopSettings) -> None:
    """Raise `UntrustedCommandError` when `settings` would run a program the person has not allowed."""
    found = untrusted(paths, config, settings)
    if found is not None:
        raise UntrustedCommandError(paths, found)


def trust_config(paths: ProjectPaths, disciplines: Iterable[Discipline] = ()) -> str:
    """Allow the programs the project's config.json and the disciplines' stdio MCP servers name now
    (`ralph-desk trust`); what was allowed."""
    config = read_config(paths)
    listed = list(disciplines)
    print_ = command_fingerprint(config)
    servers = trust.servers_fingerprint(listed)
    if print_ is None and servers is None:
        return (
            f"{paths.config_file} names no program (agent_bin and agent_command are null) and no discipline "
            f"starts an MCP server command: nothing to trust"
        )
    named = [f"  {key}: {_shown(getattr(config, key))}" for key in COMMAND_KEYS if getattr(config, key)]
    if servers is not None:
        named += [f"  mcp server: {trust.shown_command(entry)}" for entry in trust.server_commands(listed)]
        where = trust.record(paths.root, servers, trust.SERVERS)
    if print_ is not None:
        where = trust.record(paths.root, print_)
    return "\n".join(
        [
            f"Trusted for {paths.root} (kept in {where}):",
            *named,
            "ralph-desk asks again if these settings (or a server's env values) change.",
        ]
    )


def _shown(value: str | tuple[str, ...]) -> str:
    return value if isinstance(value, str) else shlex.join(value)
