"""Before a loop runs: a program that came with the project folder runs only once the person allowed it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ralph_desk.domain.checks import Check
from ralph_desk.domain.records import Discipline
from ralph_desk.loop.model import LoopSettings, command_template
from ralph_desk.project import ProjectConfig, ProjectPaths, read_config, trust
from ralph_desk.project.config import COMMAND_KEYS, command_fingerprint
from ralph_desk.project.untrusted import (
    FOLDER,
    OWN_DATABASE,
    SANDBOX_OFF,
    TRUST_HINT,
    Untrusted,
    UntrustedCommandError,
    config_commands,
    shown,
    untrusted_commands,
)
from ralph_desk.store.health import redacted
from ralph_desk.store.urls import sqlite_url

# The records and the error live with the project (the checks service asks them too); the loop's callers
# import them from here with the rest.
__all__ = [
    "TRUST_HINT",
    "Untrusted",
    "UntrustedCommandError",
    "require_trusted",
    "require_trusted_servers",
    "trust_config",
    "untrusted",
    "untrusted_servers",
    "untrusted_start",
]


def untrusted(paths: ProjectPaths, config: ProjectConfig, settings: LoopSettings) -> Untrusted | None:
    """What `settings` would run from `config` without the person's leave (its agent program, its checks
    and setup command, the rest in `also`); None when nothing is."""
    program = config_program(config, settings)
    return untrusted_commands(
        paths, config, ([program] if program is not None else []) + config_commands(config)
    )


def untrusted_servers(
    paths: ProjectPaths, disciplines: Iterable[Discipline], database_url: str | None = None
) -> Untrusted | None:
    """The disciplines' stdio MCP servers (from the database at `database_url`, the folder's own when
    None) when the person has not allowed them."""
    listed = list(disciplines)
    print_ = trust.servers_fingerprint(listed)
    if print_ is None or trust.is_trusted(paths.root, print_, trust.SERVERS):
        return None
    named = "; ".join(trust.shown_command(entry) for entry in trust.server_commands(listed))
    source, origin = database_origin(paths, database_url)
    return Untrusted("mcp_servers", named, print_, trust.SERVERS, source=source, origin=origin)


def database_origin(paths: ProjectPaths, database_url: str | None) -> tuple[str, str]:
    """The database in use as the person reads it (its password hidden), and what brought it here."""
    if database_url is None or database_url == sqlite_url(paths.db_file):
        return OWN_DATABASE, FOLDER
    return redacted(database_url), "the shared database (not the project folder)"


def untrusted_start(
    paths: ProjectPaths,
    config: ProjectConfig,
    settings: LoopSettings,
    disciplines: Iterable[Discipline],
    database_url: str | None = None,
) -> Untrusted | None:
    """Everything a start with `settings` would run without leave (the config's program, checks and setup,
    the servers of the database at `database_url`)."""
    asked = (untrusted(paths, config, settings), untrusted_servers(paths, disciplines, database_url))
    found = [item for each in asked if each is not None for item in (replace(each, also=()), *each.also)]
    return replace(found[0], also=tuple(found[1:])) if found else None


def require_trusted_servers(
    paths: ProjectPaths, disciplines: Iterable[Discipline], database_url: str | None = None
) -> None:
    """Raise `UntrustedCommandError` when a discipline would start a server program nobody allowed."""
    found = untrusted_servers(paths, disciplines, database_url)
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
            f"{paths.config_file} names no program (agent_bin, agent_command, checks and setup are empty) "
            f"and no discipline starts an MCP server command: nothing to trust"
        )
    named = [line for key in COMMAND_KEYS for line in _listed(key, getattr(config, key))]
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


def _listed(key: str, value: str | bool | tuple[str, ...] | tuple[Check, ...] | None) -> list[str]:
    """`trust`'s lines for one setting: each check on a line of its own, none when it is empty (or the
    sandbox is on)."""
    if isinstance(value, bool):
        return [] if value else [f"  {key}: {SANDBOX_OFF}"]
    if not value:
        return []
    if key == "checks":
        return [f"  check {item.name}: {item.run}" for item in value if isinstance(item, Check)]
    return [f"  {key}: {shown(value)}"]
