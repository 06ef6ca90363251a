"""Any other agent, from a command template such as `tool --prompt {prompt_file} --mcp {mcp_config}`."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path

from ralph_desk.loop.agents.base import (
    AgentUnavailableError,
    find_program,
    search_path_text,
    session_file,
    write_mcp_config,
)
from ralph_desk.loop.agents.command_stream import AutoStreamParser
from ralph_desk.loop.model import AgentCommand, LoopSettings, SessionLaunch
from ralph_desk.loop.streams import StreamParser
from ralph_desk.project.confinement import HomeFile

PLACEHOLDERS = ("prompt_file", "mcp_config", "session_id", "workdir")
# `{name}` is a placeholder; `{{name}}` stands for a literal `{name}`. Other braces (JSON…) are left alone.
_PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
EXAMPLE = "--agent-command 'tool --prompt {prompt_file} --mcp {mcp_config}'"


def _braced(names: Iterable[str]) -> str:
    return ", ".join("{" + name + "}" for name in names)


def template_words(template: str | None) -> list[str]:
    """The template split into words, before any substitution; `AgentUnavailableError` when unusable."""
    if not template or not template.strip():
        raise AgentUnavailableError(
            f"the command agent needs a command template: {EXAMPLE} (placeholders: {_braced(PLACEHOLDERS)})"
        )
    try:
        words = shlex.split(template)
    except ValueError as error:
        raise AgentUnavailableError(
            f"the agent command {template!r} cannot be split into words: {error}"
        ) from None
    named = {match.group(2) for word in words for match in _PLACEHOLDER.finditer(word) if match.group(2)}
    unknown = sorted(named - set(PLACEHOLDERS))
    if unknown:
        raise AgentUnavailableError(
            f"the agent command {template!r} has unknown placeholders {_braced(unknown)}; "
            f"known: {_braced(PLACEHOLDERS)}"
        )
    if any(match.group(2) for match in _PLACEHOLDER.finditer(words[0])):
        raise AgentUnavailableError(
            f"the agent command {template!r} must start with a program name or path, not a placeholder"
        )
    return words


def substitute(word: str, values: dict[str, str]) -> str:
    """One word with its placeholders replaced in a single pass (a value is never substituted again)."""
    return _PLACEHOLDER.sub(lambda m: "{" + m.group(1) + "}" if m.group(1) else values[m.group(2)], word)


class CommandTemplateAdapter:
    """Runs a command template as argv (never through a shell): task text reaches the agent as data only."""

    name = "command"
    home_files: tuple[HomeFile, ...] = ()
    needs_network = False  # the sandbox_network setting decides

    def locate(self, settings: LoopSettings) -> tuple[Path, list[str]]:
        """The template's program and its words."""
        words = template_words(settings.agent_command)
        program = find_program(words[0])
        if program is None:
            raise AgentUnavailableError(
                f"the agent command's program {words[0]!r} was not found (relative names are looked up on "
                f"PATH: {search_path_text()}); fix the first word of --agent-command"
            )
        return program, words

    def check_available(self, settings: LoopSettings) -> None:
        """Raise `AgentUnavailableError` for a missing or malformed template or a program not found."""
        self.locate(settings)

    def program(self, settings: LoopSettings) -> str:
        """The template's program, found, with the rest of the template."""
        program, words = self.locate(settings)
        return shlex.join([str(program), *words[1:]])

    def build(self, launch: SessionLaunch) -> AgentCommand:
        """The template with its placeholders filled in, word by word; prompt and MCP config as files."""
        program, words = self.locate(launch.settings)
        prompt_file = session_file(launch, "prompt.md", launch.prompt)
        config = write_mcp_config(launch)
        values = {
            "prompt_file": str(prompt_file),
            "mcp_config": str(config),
            "session_id": launch.plan.session_id,
            "workdir": str(launch.workdir),
        }
        argv = [str(program), *(substitute(word, values) for word in words[1:])]
        return AgentCommand(argv=argv, cwd=launch.workdir, config_files=(config, prompt_file))

    def parser(self) -> StreamParser:
        """Claude or Codex JSON when a line is such an event, plain text otherwise."""
        return AutoStreamParser()
