"""OpenAI Codex (`codex exec --json`), checked against codex-cli 0.169.0."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from ralph_desk.domain.records import McpServerSpec
from ralph_desk.domain.toml_text import toml_array, toml_string, toml_table
from ralph_desk.loop.agents.base import (
    MCP_TOOL_TIMEOUT_MS,
    RALPH_SERVER,
    LocatedAdapter,
    extra_servers,
    given_program,
    locate_program,
    prompt_fits_argv,
    ralph_tool_names,
)
from ralph_desk.loop.agents.codex_stream import CodexStreamParser
from ralph_desk.loop.model import AgentCommand, LoopSettings, SessionLaunch
from ralph_desk.loop.streams import StreamParser
from ralph_desk.project.confinement import HomeFile

CODEX_PROGRAM = "codex"
CODEX_BIN_ENV = "RALPH_CODEX_BIN"
# Codex reads the bearer credential from this variable: it stays out of argv, which other users can list.
TOKEN_ENV = "RALPH_MCP_TOKEN"
HOW_TO_POINT = f"set agent_bin in config.json or {CODEX_BIN_ENV}, or put `{CODEX_PROGRAM}` on PATH"
# Variables Codex reads for itself: a server may not give them another value (they would reach Codex too).
_CODEX_READS = frozenset(
    {"PATH", "HOME", "USER", "SHELL", "TMPDIR", TOKEN_ENV, "SSL_CERT_FILE", "SSL_CERT_DIR"}
)
_CODEX_READS_PREFIXES = (
    "CODEX_",
    "OPENAI_",
    "RUST_",
    "LD_",
    "DYLD_",
    "HTTP_",
    "HTTPS_",
    "ALL_PROXY",
    "NO_PROXY",
)
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # codex splits `-c` paths on dots and takes no quoted keys


def server_override(
    spec: McpServerSpec, environ: Mapping[str, str] = os.environ
) -> tuple[str, dict[str, str]]:
    """One `-c` value that defines a discipline's extra server, and the environment its secrets travel in.

    Env values and header values never reach the command line (every local user can read it in
    /proc/PID/cmdline): Codex forwards the named variables from its own environment (`env_vars`,
    `env_http_headers`), which only the owner can read.
    """
    if not _BARE_KEY.match(spec.name):
        raise ValueError(
            f"MCP server name {spec.name!r} cannot be given to Codex (letters, digits, '-', '_')"
        )
    secrets: dict[str, str] = {}
    if spec.url is not None:
        fields = [f"url = {toml_string(spec.url)}"]
        if spec.headers:
            names = {header: header_variable(spec.name, index) for index, header in enumerate(spec.headers)}
            secrets.update((names[header], value) for header, value in spec.headers.items())
            fields.append(f"env_http_headers = {toml_table(names)}")
    else:
        fields = [f"command = {toml_string(spec.command or '')}", f"args = {toml_array(spec.args)}"]
        if spec.env:
            for name, value in spec.env.items():
                _check_forwardable(spec.name, name, value, environ)
            secrets.update(spec.env)
            fields.append(f"env_vars = {toml_array(spec.env)}")
    return f"mcp_servers.{spec.name}={{{', '.join(fields)}}}", secrets


def header_variable(server: str, index: int) -> str:
    """The environment variable that carries the `index`th header of `server` to Codex."""
    return f"RALPH_MCP_{server.upper().replace('-', '_')}_HEADER_{index}"


def _check_forwardable(server: str, name: str, value: str, environ: Mapping[str, str]) -> None:
    """Refuse a variable Codex itself reads whose value would change Codex, not only the server."""
    reserved = name in _CODEX_READS or name.startswith(_CODEX_READS_PREFIXES)
    if reserved and environ.get(name) != value:
        raise ValueError(
            f"MCP server {server!r} sets {name}, which Codex itself reads: Codex passes a server's "
            "variables from its own environment, so give it the value Codex runs with or another name"
        )


class CodexAdapter(LocatedAdapter):
    """Runs `codex exec --json` in a sandbox, with ralph's and the discipline's servers as `-c` overrides."""

    name = "codex"
    home_files: tuple[HomeFile, ...] = (
        HomeFile(".codex/auth.json"),
        HomeFile(".codex/config.toml", copy=True),
    )
    needs_network = True

    def locate(self, settings: LoopSettings) -> Path:
        """The Codex executable: the agent_bin setting, else `$RALPH_CODEX_BIN`, else `codex` on PATH."""
        given = given_program(settings, "the agent_bin setting", CODEX_BIN_ENV)
        return locate_program("Codex", CODEX_PROGRAM, given, "npm install -g @openai/codex", HOW_TO_POINT)

    def build(self, launch: SessionLaunch) -> AgentCommand:
        """`codex exec --json`; credentials and secrets go in the environment, the prompt last or on stdin."""
        plan, prompt, endpoint, settings = launch.plan, launch.prompt, launch.endpoint, launch.settings
        program = self.locate(settings)
        ralph = f"mcp_servers.{RALPH_SERVER}"
        argv = [
            str(program), "exec", "--json", "--skip-git-repo-check",
            "--sandbox", "read-only" if launch.read_only else "workspace-write",
            "-c", 'approval_policy="never"',
            "-c", f"{ralph}.url={toml_string(endpoint.url)}",
            "-c", f"{ralph}.bearer_token_env_var={toml_string(TOKEN_ENV)}",
            "-c", f"{ralph}.enabled_tools={toml_array(ralph_tool_names(plan))}",
            "-c", f"{ralph}.tool_timeout_sec={MCP_TOOL_TIMEOUT_MS // 1000}",
        ]  # fmt: skip
        env = {TOKEN_ENV: endpoint.token}
        for spec in extra_servers(plan.discipline):
            override, secrets = server_override(spec)
            argv += ["-c", override]
            env.update(secrets)
        model = settings.model_for(plan.recipe)
        if model:
            argv += ["--model", model]
        if prompt_fits_argv(prompt):
            return AgentCommand(argv=[*argv, "--", prompt], env=env, cwd=launch.workdir)
        # `codex exec -` reads the prompt from standard input.
        return AgentCommand(argv=[*argv, "-"], env=env, cwd=launch.workdir, stdin_text=prompt)

    def parser(self) -> StreamParser:
        """A Codex JSON-lines parser."""
        return CodexStreamParser()
