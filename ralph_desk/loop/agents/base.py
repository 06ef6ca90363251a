"""The agent adapter interface, and what adapters share: finding programs, the MCP config, the allow-list."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Protocol

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.records import Discipline, McpServerSpec
from ralph_desk.domain.session import safe_file_stem
from ralph_desk.loop.model import AgentCommand, LoopSettings, SessionLaunch, SessionPlan
from ralph_desk.loop.streams import StreamParser
from ralph_desk.project import contained
from ralph_desk.project.confinement import HomeFile
from ralph_desk.project.contained import PRIVATE_DIR_MODE

RALPH_SERVER = "ralph"
MCP_TOOL_TIMEOUT_MS = 600_000  # a verb may wait on the database; the agent must not give up sooner
# Linux refuses a single argv string over 128 KiB (MAX_ARG_STRLEN); longer prompts go through stdin.
MAX_ARGV_PROMPT_BYTES = 100_000


class AgentUnavailableError(RuntimeError):
    """The agent's program cannot be found or used; raised by `check_available`, before anything changes."""

    def __init__(self, message: str, program_missing: bool = False) -> None:
        super().__init__(message)
        self.program_missing = program_missing
        """The agent's program was not found (the window points to its Program field)."""


class AgentAdapter(Protocol):
    """One agent CLI: how to check it is there, how to start a session, how to read what it prints."""

    name: str
    home_files: tuple[HomeFile, ...]  # what the CLI needs from the person's home inside its sandbox
    needs_network: bool  # it reaches a model API itself: a sandbox never takes its network away

    def check_available(self, settings: LoopSettings) -> None:
        """Raise `AgentUnavailableError` saying where the program was looked for and how to point at it."""
        ...

    def program(self, settings: LoopSettings) -> str:
        """The program a session would run, as shown to a person before starting; may raise as above."""
        ...

    def build(self, launch: SessionLaunch) -> AgentCommand:
        """The command of one session; writes its files (MCP config, prompt) into `launch.session_dir`."""
        ...

    def parser(self) -> StreamParser:
        """A fresh parser for one session's standard output."""
        ...


class LocatedAdapter:
    """What adapters share whose program is one executable that `locate` finds."""

    def locate(self, settings: LoopSettings) -> Path:
        """The executable; raises `AgentUnavailableError` saying where it was looked for."""
        raise NotImplementedError

    def check_available(self, settings: LoopSettings) -> None:
        """Raise `AgentUnavailableError` when the executable cannot be found."""
        self.locate(settings)

    def program(self, settings: LoopSettings) -> str:
        """The executable's path."""
        return str(self.locate(settings))


def given_program(settings: LoopSettings, setting: str, env_name: str) -> tuple[str, str] | None:
    """The executable a person named, and where: the agent_bin setting (`setting`), else `$env_name`."""
    if settings.agent_bin:
        return settings.agent_bin, setting
    if os.environ.get(env_name):
        return os.environ[env_name], env_name
    return None


def find_program(program: str) -> Path | None:
    """`program` as an executable path: a path as given, or a bare name looked up on PATH."""
    found = shutil.which(program)
    return Path(found) if found else None


def search_path_text() -> str:
    """PATH as shown in error messages."""
    return os.environ.get("PATH") or "(PATH is empty)"


def locate_program(label: str, program: str, given: tuple[str, str] | None, install: str, how: str) -> Path:
    """An agent's executable: the path `given` as (path, where it came from), else `program` on PATH."""
    found = find_program(given[0] if given else program)
    if found is not None:
        return found
    if given is not None:
        raise AgentUnavailableError(
            f"{label} was not found at {given[0]!r} (given by {given[1]}): no such executable file "
            f"(relative names are looked up on PATH: {search_path_text()}); {how}",
            program_missing=True,
        )
    raise AgentUnavailableError(
        f"{label} was not found: no executable `{program}` on PATH ({search_path_text()}); "
        f"install it ({install}) or {how}",
        program_missing=True,
    )


def write_private_text(path: Path, text: str) -> Path:
    """Write a file only its owner may read (it may hold a credential), never through a link.

    The session folder itself is checked by the runner (`contained.make_folder` from the project root).
    """
    if not path.parent.exists():
        path.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    return contained.write_private_text(path.parent, path, text)


def session_file(launch: SessionLaunch, suffix: str, text: str) -> Path:
    """Write the session's `<session>.<suffix>` file into its session folder, owner-only."""
    return write_private_text(launch.session_dir / f"{safe_file_stem(launch.plan.session_id)}.{suffix}", text)


def extra_servers(discipline: Discipline | None) -> tuple[McpServerSpec, ...]:
    """The discipline's own MCP servers; none may take the name of ralph-desk's server."""
    if discipline is None:
        return ()
    return tuple(spec for spec in discipline.mcp_servers if spec.name != RALPH_SERVER)


def mcp_config(endpoint: SessionEndpoint, discipline: Discipline | None) -> dict[str, Any]:
    """The session's MCP config in the `mcpServers` format: ralph over HTTP, then the discipline's servers."""
    servers: dict[str, Any] = {
        RALPH_SERVER: {
            "type": "http",
            "url": endpoint.url,
            "headers": dict(endpoint.headers),
            "timeout": MCP_TOOL_TIMEOUT_MS,
        }
    }
    for spec in extra_servers(discipline):
        servers[spec.name] = spec.to_json()
    return {"mcpServers": servers}


def write_mcp_config(launch: SessionLaunch) -> Path:
    """Write `<session>.mcp.json` (mode 0600: it holds the session's credential) and return its path."""
    config = mcp_config(launch.endpoint, launch.plan.discipline)
    return session_file(launch, "mcp.json", json.dumps(config, indent=2) + "\n")


def ralph_tool_names(plan: SessionPlan) -> list[str]:
    """The plan's enabled ralph tools, sorted."""
    return sorted(plan.enabled_tools)


def allowed_mcp_tools(plan: SessionPlan) -> list[str]:
    """Claude Code's names for what the session may call: each enabled ralph tool, each extra server whole."""
    names = [f"mcp__{RALPH_SERVER}__{tool}" for tool in ralph_tool_names(plan)]
    names += [f"mcp__{spec.name}" for spec in extra_servers(plan.discipline)]
    return names


def prompt_fits_argv(prompt: str) -> bool:
    """Whether the prompt may be passed as one command-line argument."""
    return len(prompt.encode("utf-8")) <= MAX_ARGV_PROMPT_BYTES
