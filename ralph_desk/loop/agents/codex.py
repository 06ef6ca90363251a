"""OpenAI Codex (`codex exec --json`), checked against codex-cli 0.169.0."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.records import McpServerSpec
from ralph_desk.loop.agents.base import (
    MCP_TOOL_TIMEOUT_MS,
    RALPH_SERVER,
    extra_servers,
    locate_program,
    prompt_fits_argv,
    ralph_tool_names,
)
from ralph_desk.loop.agents.codex_stream import CodexStreamParser
from ralph_desk.loop.model import AgentCommand, LoopSettings, SessionPlan
from ralph_desk.loop.streams import StreamParser

CODEX_PROGRAM = "codex"
CODEX_BIN_ENV = "RALPH_CODEX_BIN"
# Codex reads the bearer credential from this variable: it stays out of argv, which other users can list.
TOKEN_ENV = "RALPH_MCP_TOKEN"
HOW_TO_POINT = f"set agent_bin in config.json or {CODEX_BIN_ENV}, or put `{CODEX_PROGRAM}` on PATH"
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # codex splits `-c` paths on dots and takes no quoted keys


def toml_string(text: str) -> str:
    """A TOML basic string (control characters escaped, other Unicode kept as is)."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_array(items: Iterable[str]) -> str:
    """A TOML array of strings."""
    return "[" + ", ".join(toml_string(item) for item in items) + "]"


def toml_table(entries: Mapping[str, str]) -> str:
    """A TOML inline table of strings, every key quoted."""
    return (
        "{" + ", ".join(f"{toml_string(key)} = {toml_string(value)}" for key, value in entries.items()) + "}"
    )


def server_override(spec: McpServerSpec) -> str:
    """One `-c` value that defines a discipline's extra server as an inline table."""
    if not _BARE_KEY.match(spec.name):
        raise ValueError(
            f"MCP server name {spec.name!r} cannot be given to Codex (letters, digits, '-', '_')"
        )
    if spec.url is not None:
        fields = [f"url = {toml_string(spec.url)}"]
        if spec.headers:
            fields.append(f"http_headers = {toml_table(spec.headers)}")
    else:
        fields = [f"command = {toml_string(spec.command or '')}", f"args = {toml_array(spec.args)}"]
        if spec.env:
            fields.append(f"env = {toml_table(spec.env)}")
    return f"mcp_servers.{spec.name}={{{', '.join(fields)}}}"


class CodexAdapter:
    """Runs `codex exec --json` in a sandbox, with ralph's and the discipline's servers as `-c` overrides."""

    name = "codex"

    def locate(self, settings: LoopSettings) -> Path:
        """The Codex executable: the agent_bin setting, else `$RALPH_CODEX_BIN`, else `codex` on PATH."""
        given: tuple[str, str] | None = None
        if settings.agent_bin:
            given = (settings.agent_bin, "the agent_bin setting")
        elif os.environ.get(CODEX_BIN_ENV):
            given = (os.environ[CODEX_BIN_ENV], CODEX_BIN_ENV)
        return locate_program("Codex", CODEX_PROGRAM, given, "npm install -g @openai/codex", HOW_TO_POINT)

    def check_available(self, settings: LoopSettings) -> None:
        """Raise `AgentUnavailableError` when the executable cannot be found."""
        self.locate(settings)

    def build(
        self,
        plan: SessionPlan,
        prompt: str,
        endpoint: SessionEndpoint,
        settings: LoopSettings,
        workdir: Path,
        session_dir: Path,
        read_only: bool,
    ) -> AgentCommand:
        """`codex exec --json`; the credential travels in the environment, the prompt last or on stdin."""
        program = self.locate(settings)
        ralph = f"mcp_servers.{RALPH_SERVER}"
        argv = [
            str(program), "exec", "--json", "--skip-git-repo-check",
            "--sandbox", "read-only" if read_only else "workspace-write",
            "-c", 'approval_policy="never"',
            "-c", f"{ralph}.url={toml_string(endpoint.url)}",
            "-c", f"{ralph}.bearer_token_env_var={toml_string(TOKEN_ENV)}",
            "-c", f"{ralph}.enabled_tools={toml_array(ralph_tool_names(plan))}",
            "-c", f"{ralph}.tool_timeout_sec={MCP_TOOL_TIMEOUT_MS // 1000}",
        ]  # fmt: skip
        for spec in extra_servers(plan.discipline):
            argv += ["-c", server_override(spec)]
        model = settings.model_for(plan.recipe)
        if model:
            argv += ["--model", model]
        env = {TOKEN_ENV: endpoint.token}
        if prompt_fits_argv(prompt):
            return AgentCommand(argv=[*argv, "--", prompt], env=env, cwd=workdir)
        # `codex exec -` reads the prompt from standard input.
        return AgentCommand(argv=[*argv, "-"], env=env, cwd=workdir, stdin_text=prompt)

    def parser(self) -> StreamParser:
        """A Codex JSON-lines parser."""
        return CodexStreamParser()
