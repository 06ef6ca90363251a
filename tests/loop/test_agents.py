"""Agent adapters: the command lines, environment and files of Claude Code, Codex and a command template."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import stat
import subprocess
import threading
import tomllib
from dataclasses import replace
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.records import Discipline, McpServerSpec
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.agents import (
    AgentUnavailableError,
    ClaudeAdapter,
    CodexAdapter,
    CommandTemplateAdapter,
    adapter_for,
)
from ralph_desk.loop.agents.base import MAX_ARGV_PROMPT_BYTES, mcp_config
from ralph_desk.loop.agents.claude import OWN_SANDBOX
from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser
from ralph_desk.loop.agents.codex import CODEX_BIN_ENV, TOKEN_ENV, server_override, toml_string
from ralph_desk.loop.agents.codex_stream import CodexStreamParser
from ralph_desk.loop.agents.command_stream import AutoStreamParser
from ralph_desk.loop.model import LoopSettings, SessionLaunch, SessionPlan
from ralph_desk.loop.settings import CLAUDE_BIN_ENV
from tests.support.npm_tools import codex_bin, missing_reason

SESSION_ID = "3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b"
TOKEN = "tok_s3cr3t-Abc_123"
URL = "http://127.0.0.1:8766/mcp"
TASK_TOOLS = ["ask", "blocked", "done", "flag", "partial", "stuck", "suggest"]  # `learned` is disabled
SHADCN = McpServerSpec("shadcn-ui", command="npx", args=("-y", "@x/shadcn ui"), env={"API_KEY": 'a"b\\c'})
DOCS = McpServerSpec("docs", url="http://127.0.0.1:9/mcp", headers={"X-Key": "k"})


def discipline(*servers: McpServerSpec) -> Discipline:
    return Discipline(
        id=1,
        name="frontend",
        display_name="Frontend",
        icon="browser",
        color="#d29922",
        acronym="FE",
        system_prompt=None,
        skills=(),
        conventions=None,
        disabled_tools=("learned",),
        mcp_servers=servers,
        created_at=datetime(2026, 1, 1),
    )


def make_plan(
    *servers: McpServerSpec, recipe: Recipe = Recipe.TASK_EXECUTION, session_id: str = SESSION_ID
) -> SessionPlan:
    context = SessionContext(
        recipe=recipe,
        discipline="frontend",
        task_id=7,
        session_id=session_id,
        discipline_disabled=frozenset({"learned"}),
    )
    return SessionPlan(
        session_id=session_id,
        recipe=recipe,
        context=context,
        enabled_tools=context.enabled_tools,
        discipline=discipline(*servers),
    )


@pytest.fixture
def endpoint() -> SessionEndpoint:
    return SessionEndpoint(URL, TOKEN, SessionContext(recipe=Recipe.TASK_EXECUTION))


def executable(folder: Path, name: str) -> Path:
    """A harmless program that exits 0."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    return executable(tmp_path / "bin", "claude")


@pytest.fixture
def codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = executable(tmp_path / "bin", "codex")
    monkeypatch.setenv(CODEX_BIN_ENV, str(path))
    return path


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def build_claude(
    tmp_path: Path,
    endpoint: SessionEndpoint,
    claude: Path,
    prompt: str = "Work on task 7.",
    read_only: bool = False,
    plan: SessionPlan | None = None,
    **settings: Any,
) -> tuple[list[str], Any]:
    command = ClaudeAdapter().build(
        SessionLaunch(
            plan or make_plan(SHADCN, DOCS),
            prompt,
            endpoint,
            LoopSettings(agent_bin=str(claude), **settings),
            tmp_path / "repo",
            tmp_path / "sessions",
            read_only,
        )
    )
    return command.argv, command


# --- Claude Code -------------------------------------------------------------------------------------


def test_claude_argv_with_edits_allowed(tmp_path: Path, endpoint: SessionEndpoint, claude: Path) -> None:
    argv, command = build_claude(tmp_path, endpoint, claude, max_turns=12, models={"task_execution": "opus"})
    config = tmp_path / "sessions" / f"{SESSION_ID}.mcp.json"
    allowed = [f"mcp__ralph__{tool}" for tool in TASK_TOOLS] + ["mcp__shadcn-ui", "mcp__docs"]
    assert argv == [
        str(claude), "-p",
        "--output-format", "stream-json", "--verbose",
        "--mcp-config", str(config), "--strict-mcp-config",
        "--allowedTools", ",".join([*allowed, "Read", "Edit", "Write", "Bash", "Glob", "Grep"]),
        "--tools", "Read,Edit,Write,Bash,Glob,Grep",
        "--permission-mode", "acceptEdits",
        "--max-turns", "12",
        "--settings", OWN_SANDBOX,  # Claude Code's own sandbox, inside the session's (on by default)
        "--model", "opus",
        "--session-id", SESSION_ID,
        "--", "Work on task 7.",
    ]  # fmt: skip
    assert command.cwd == tmp_path / "repo"
    assert command.stdin_text is None and command.env == {}
    assert command.config_files == (config,)
    assert TOKEN not in " ".join(argv)


def test_claude_read_only_gets_dont_ask_and_only_the_reading_tools(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    argv, _ = build_claude(tmp_path, endpoint, claude, read_only=True)
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert argv[argv.index("--tools") + 1] == "Read,Glob,Grep"
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert allowed[-3:] == ["Read", "Glob", "Grep"]
    assert not {"Bash", "Edit", "Write"} & set(allowed)


def test_claude_with_allowed_paths_may_edit_only_there(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    argv, _ = build_claude(tmp_path, endpoint, claude, allowed_paths=("src/**", "./docs/*.md"))
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert allowed[-6:] == ["Read", "Bash", "Glob", "Grep", "Edit(src/**)", "Edit(docs/*.md)"]
    assert not {"Edit", "Write"} & set(allowed)
    read_only, _ = build_claude(tmp_path, endpoint, claude, read_only=True, allowed_paths=("src/**",))
    assert not any(
        rule.startswith("Edit") for rule in read_only[read_only.index("--allowedTools") + 1].split(",")
    )


def test_the_allow_list_holds_only_the_plans_enabled_tools_and_the_extra_servers(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    plan = make_plan(SHADCN)
    plan = replace(plan, enabled_tools=frozenset({"done", "stuck"}))
    argv, _ = build_claude(tmp_path, endpoint, claude, plan=plan)
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert [name for name in allowed if name.startswith("mcp__")] == [
        "mcp__ralph__done",
        "mcp__ralph__stuck",
        "mcp__shadcn-ui",
    ]


def test_the_mcp_config_file_is_private_and_merges_the_disciplines_servers(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    _, command = build_claude(tmp_path, endpoint, claude)
    (config,) = command.config_files
    assert mode_of(config) == 0o600 and mode_of(config.parent) == 0o700
    assert json.loads(config.read_text(encoding="utf-8")) == {
        "mcpServers": {
            "ralph": {
                "type": "http",
                "url": URL,
                "headers": {"Authorization": f"Bearer {TOKEN}"},
                "timeout": 600000,
            },
            "shadcn-ui": {"command": "npx", "args": ["-y", "@x/shadcn ui"], "env": {"API_KEY": 'a"b\\c'}},
            "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}},
        }
    }


def test_an_existing_config_file_is_made_private_again(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    stale = sessions / f"{SESSION_ID}.mcp.json"
    stale.write_text("{}", encoding="utf-8")
    stale.chmod(0o644)
    build_claude(tmp_path, endpoint, claude)
    assert mode_of(stale) == 0o600 and "Bearer" in stale.read_text(encoding="utf-8")


def test_a_discipline_server_named_ralph_never_replaces_ralphs_own(endpoint: SessionEndpoint) -> None:
    impostor = McpServerSpec("ralph", command="evil")
    servers = mcp_config(endpoint, discipline(impostor, DOCS))["mcpServers"]
    assert servers["ralph"]["url"] == URL and list(servers) == ["ralph", "docs"]


def test_the_model_follows_the_recipe_then_the_default(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    models = {"opus_review": "opus", "default": "sonnet"}
    review, _ = build_claude(
        tmp_path, endpoint, claude, models=models, plan=make_plan(recipe=Recipe.OPUS_REVIEW)
    )
    task, _ = build_claude(tmp_path, endpoint, claude, models=models)
    unset, _ = build_claude(tmp_path, endpoint, claude)
    assert review[review.index("--model") + 1] == "opus"
    assert task[task.index("--model") + 1] == "sonnet"
    assert "--model" not in unset


def test_only_a_uuid_session_id_is_passed_to_claude(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    argv, command = build_claude(tmp_path, endpoint, claude, plan=make_plan(session_id="loop-3-task-7"))
    assert "--session-id" not in argv
    assert command.config_files[0].name == "loop-3-task-7.mcp.json"


def test_a_prompt_that_looks_like_an_option_follows_the_double_dash(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    argv, _ = build_claude(tmp_path, endpoint, claude, prompt="--help; $(rm -rf /)")
    assert argv[-2:] == ["--", "--help; $(rm -rf /)"]


def test_a_very_long_prompt_goes_through_stdin(
    tmp_path: Path, endpoint: SessionEndpoint, claude: Path
) -> None:
    prompt = "é" * (MAX_ARGV_PROMPT_BYTES // 2 + 1)  # few characters, too many bytes
    argv, command = build_claude(tmp_path, endpoint, claude, prompt=prompt)
    assert command.stdin_text == prompt
    assert prompt not in argv and "--" not in argv
    assert argv[-2] == "--session-id"
    fits = "x" * MAX_ARGV_PROMPT_BYTES
    argv, command = build_claude(tmp_path, endpoint, claude, prompt=fits)
    assert argv[-1] == fits and command.stdin_text is None


def test_claude_is_found_through_the_env_variable_then_path(
    tmp_path: Path, claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = ClaudeAdapter()
    monkeypatch.setenv(CLAUDE_BIN_ENV, str(claude))
    assert adapter.locate(LoopSettings()) == claude
    monkeypatch.delenv(CLAUDE_BIN_ENV)
    monkeypatch.setenv("PATH", str(claude.parent))
    assert adapter.locate(LoopSettings()) == claude
    other = executable(tmp_path / "other", "claude-2")
    assert adapter.locate(LoopSettings(agent_bin=str(other))) == other


def test_a_missing_claude_says_where_it_looked_and_how_to_point_at_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CLAUDE_BIN_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(AgentUnavailableError) as on_path:
        ClaudeAdapter().check_available(LoopSettings())
    message = str(on_path.value)
    assert "`claude` on PATH" in message and str(tmp_path / "empty") in message
    assert "--claude-bin" in message and CLAUDE_BIN_ENV in message
    with pytest.raises(
        AgentUnavailableError, match=r"not found at '/nowhere/claude' \(given by --claude-bin"
    ):
        ClaudeAdapter().check_available(LoopSettings(agent_bin="/nowhere/claude"))
    monkeypatch.setenv(CLAUDE_BIN_ENV, "/nowhere/else")
    with pytest.raises(
        AgentUnavailableError, match=rf"not found at '/nowhere/else' \(given by {CLAUDE_BIN_ENV}\)"
    ):
        ClaudeAdapter().check_available(LoopSettings())


def test_a_file_that_is_not_executable_is_not_taken_for_claude(tmp_path: Path) -> None:
    plain = tmp_path / "claude"
    plain.write_text("not a program", encoding="utf-8")
    with pytest.raises(AgentUnavailableError, match="no such executable file"):
        ClaudeAdapter().check_available(LoopSettings(agent_bin=str(plain)))


def test_a_missing_binary_fails_before_any_file_is_written(tmp_path: Path, endpoint: SessionEndpoint) -> None:
    with pytest.raises(AgentUnavailableError):
        ClaudeAdapter().build(
            SessionLaunch(
                make_plan(),
                "p",
                endpoint,
                LoopSettings(agent_bin="/nowhere/claude"),
                tmp_path,
                tmp_path / "s",
                False,
            )
        )
    assert not (tmp_path / "s").exists()


# --- Codex -------------------------------------------------------------------------------------------


def build_codex(
    tmp_path: Path,
    endpoint: SessionEndpoint,
    prompt: str = "Work on task 7.",
    read_only: bool = False,
    **kw: Any,
) -> Any:
    return CodexAdapter().build(
        SessionLaunch(
            make_plan(SHADCN, DOCS),
            prompt,
            endpoint,
            LoopSettings(**kw),
            tmp_path,
            tmp_path / "sessions",
            read_only,
        )
    )


def overrides(argv: list[str]) -> dict[str, Any]:
    """Every `-c key=value`, its value parsed as TOML the way codex parses it."""
    found: dict[str, Any] = {}
    for flag, value in itertools.pairwise(argv):
        if flag == "-c":
            key, _, toml_value = value.partition("=")
            found[key] = tomllib.loads(f"v = {toml_value}")["v"]
    return found


def test_codex_argv_sets_the_sandbox_and_ralphs_server_by_overrides(
    tmp_path: Path, endpoint: SessionEndpoint, codex: Path
) -> None:
    command = build_codex(tmp_path, endpoint, models={"default": "gpt-5"})
    argv = command.argv
    assert argv[:6] == [str(codex), "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"]
    assert argv[-4:] == ["--model", "gpt-5", "--", "Work on task 7."]
    assert overrides(argv) == {
        "approval_policy": "never",
        "mcp_servers.ralph.url": URL,
        "mcp_servers.ralph.bearer_token_env_var": TOKEN_ENV,
        "mcp_servers.ralph.enabled_tools": TASK_TOOLS,
        "mcp_servers.ralph.tool_timeout_sec": 600,
        "mcp_servers.shadcn-ui": {"command": "npx", "args": ["-y", "@x/shadcn ui"], "env_vars": ["API_KEY"]},
        "mcp_servers.docs": {
            "url": "http://127.0.0.1:9/mcp",
            "env_http_headers": {"X-Key": "RALPH_MCP_DOCS_HEADER_0"},
        },
    }
    # The servers' secrets travel in the environment, like the credential: never on the command line.
    assert command.env == {TOKEN_ENV: TOKEN, "API_KEY": 'a"b\\c', "RALPH_MCP_DOCS_HEADER_0": "k"}
    assert TOKEN not in " ".join(argv) and 'a"b' not in " ".join(argv)
    assert command.stdin_text is None and command.cwd == tmp_path
    assert not (tmp_path / "sessions").exists()  # Codex takes its config on the command line


def test_codex_read_only_uses_the_read_only_sandbox(
    tmp_path: Path, endpoint: SessionEndpoint, codex: Path
) -> None:
    argv = build_codex(tmp_path, endpoint, read_only=True).argv
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert "--model" not in argv


def test_codex_long_prompt_is_read_from_stdin(tmp_path: Path, endpoint: SessionEndpoint, codex: Path) -> None:
    prompt = "y" * (MAX_ARGV_PROMPT_BYTES + 1)
    command = build_codex(tmp_path, endpoint, prompt=prompt)
    assert command.argv[-1] == "-" and command.stdin_text == prompt


@pytest.mark.parametrize(
    "text", ["plain", 'quote " and \\ backslash', "new\nline\ttab", "bell\x07 del\x7f", "ünïcødé 🙂", ""]
)
def test_toml_strings_round_trip(text: str) -> None:
    assert tomllib.loads(f"v = {toml_string(text)}")["v"] == text


def test_a_missing_codex_names_the_env_variable_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CODEX_BIN_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AgentUnavailableError) as error:
        CodexAdapter().check_available(LoopSettings(agent="codex"))
    assert "`codex` on PATH" in str(error.value) and CODEX_BIN_ENV in str(error.value)
    monkeypatch.setenv(CODEX_BIN_ENV, str(tmp_path / "codex"))
    with pytest.raises(AgentUnavailableError, match=f"given by {CODEX_BIN_ENV}"):
        CodexAdapter().check_available(LoopSettings(agent="codex"))
    with pytest.raises(
        AgentUnavailableError, match="not found at '/nowhere/codex' \\(given by the agent_bin setting"
    ):
        CodexAdapter().check_available(LoopSettings(agent="codex", agent_bin="/nowhere/codex"))


def test_codex_is_the_program_the_agent_bin_setting_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CODEX_BIN_ENV, str(tmp_path / "elsewhere"))
    mine = executable(tmp_path / "mine", "my-codex")

    assert CodexAdapter().locate(LoopSettings(agent="codex", agent_bin=str(mine))) == mine


@pytest.fixture
def real_codex(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real Codex CLI (tools/npm installs it), which the adapter then finds through $RALPH_CODEX_BIN."""
    found = codex_bin()
    if found is None:
        pytest.skip(missing_reason("Codex"))
    monkeypatch.setenv(CODEX_BIN_ENV, str(found))
    return found


@pytest.mark.slow
def test_the_real_codex_reads_the_overrides_as_meant(
    tmp_path: Path, endpoint: SessionEndpoint, real_codex: Path
) -> None:
    real = str(real_codex)
    argv = build_codex(tmp_path, endpoint).argv
    pairs = [arg for flag, value in itertools.pairwise(argv) if flag == "-c" for arg in ("-c", value)]
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    listed = subprocess.run(
        [real, "mcp", "list", "--json", *pairs],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    servers = {server["name"]: server for server in json.loads(listed.stdout)}
    assert servers["ralph"]["transport"]["url"] == URL
    assert servers["ralph"]["transport"]["bearer_token_env_var"] == TOKEN_ENV
    assert servers["ralph"]["tool_timeout_sec"] == 600
    assert servers["shadcn-ui"]["transport"]["args"] == ["-y", "@x/shadcn ui"]
    assert servers["shadcn-ui"]["transport"]["env_vars"] == ["API_KEY"]
    assert servers["docs"]["transport"]["env_http_headers"] == {"X-Key": "RALPH_MCP_DOCS_HEADER_0"}


class _RefusingResponsesApi(BaseHTTPRequestHandler):
    """A stand-in for the OpenAI Responses API that keeps each request body and answers 429."""

    bodies: list[Any]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.bodies.append(json.loads(raw) if raw.startswith(b"{") else raw.decode(errors="replace"))
        answer = (
            b'{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}'
        )
        self.send_response(429)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@pytest.mark.slow
def test_the_real_codex_reaches_ralph_with_the_credential_from_its_environment(
    tmp_path: Path, real_codex: Path
) -> None:
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from tests.loop.fixtures.record import make_project

    class Handler(_RefusingResponsesApi):
        bodies: list[Any] = []

    model_api = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=model_api.serve_forever, daemon=True).start()
    project = make_project(tmp_path)
    home = tmp_path / "home" / ".codex"
    home.mkdir(parents=True)
    provider = (
        f'model_providers.fake={{name="fake", base_url="http://127.0.0.1:{model_api.server_address[1]}/v1", '
        'wire_api="responses", request_max_retries=0, stream_max_retries=0}'
    )

    async def session() -> tuple[int | None, str]:
        embedded = EmbeddedMcp(project.services)
        await embedded.start()
        endpoint = embedded.open_session(project.plan.context)
        try:
            command = CodexAdapter().build(
                SessionLaunch(
                    project.plan,
                    "Work.",
                    endpoint,
                    LoopSettings(agent="codex"),
                    project.paths.root,
                    tmp_path,
                    False,
                )
            )
            argv = [*command.argv[:2], "-c", 'model_provider="fake"', "-c", provider, *command.argv[2:]]
            env = {
                "PATH": os.environ.get("PATH", ""),
                "HOME": str(home.parent),
                "CODEX_HOME": str(home),
                "OPENAI_API_KEY": "sk-dummy",
                **command.env,
            }
            process = await asyncio.create_subprocess_exec(
                *argv, cwd=command.cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
        finally:
            embedded.close_session(endpoint)
            await embedded.stop()
        return process.returncode, out.decode()

    try:
        returncode, out = asyncio.run(session())
    finally:
        model_api.shutdown()
        model_api.server_close()
        project.services.close()
    first_request = json.dumps(Handler.bodies[0])
    # The namespaces offered to the model name ralph's server only when its bearer check passed. (The
    # discipline's own stdio server, a Python process, takes about a second to start and Codex does not
    # wait for it before its first request; its configuration is checked by the test above.)
    assert "mcp__ralph: ralph_desk project server" in first_request
    parser = CodexStreamParser()
    for line in out.splitlines():
        parser.feed(line)
    assert returncode == 1 and parser.summary.rate_limited and parser.summary.api_error_status == 429


# --- a command template --------------------------------------------------------------------------------


def command_settings(template: str) -> LoopSettings:
    return LoopSettings(agent="command", agent_command=template)


def test_placeholders_are_filled_word_by_word(tmp_path: Path, endpoint: SessionEndpoint) -> None:
    # `{{x}}` stands for a literal `{x}`; other braces, as in JSON, are kept as they are.
    tool = executable(tmp_path / "bin", "tool")
    template = str(tool) + """ --prompt={prompt_file} --mcp {mcp_config} 'id {session_id}' {workdir} {{x}}"""
    template += """ '{"k": {"n": 1}}'"""
    command = CommandTemplateAdapter().build(
        SessionLaunch(
            make_plan(DOCS),
            "the prompt",
            endpoint,
            command_settings(template),
            tmp_path,
            tmp_path / "s",
            False,
        )
    )
    prompt_file = tmp_path / "s" / f"{SESSION_ID}.prompt.md"
    config = tmp_path / "s" / f"{SESSION_ID}.mcp.json"
    assert command.argv == [
        str(tool), f"--prompt={prompt_file}", "--mcp", str(config), f"id {SESSION_ID}", str(tmp_path),
        "{x}", '{"k": {"n": 1}}',
    ]  # fmt: skip
    assert prompt_file.read_text(encoding="utf-8") == "the prompt" and mode_of(prompt_file) == 0o600
    assert mode_of(config) == 0o600
    assert json.loads(config.read_text(encoding="utf-8")) == mcp_config(endpoint, discipline(DOCS))
    assert command.stdin_text is None and command.cwd == tmp_path


def test_task_text_reaches_the_agent_as_data_only(tmp_path: Path, endpoint: SessionEndpoint) -> None:
    workdir = tmp_path / "w $(touch PWNED1); `touch PWNED2` & x"
    workdir.mkdir()
    prompt = "Fix the bug; $(touch PWNED3) `touch PWNED4` && touch PWNED5 | cat > PWNED6 \"'"
    script = 'printf %s "$1" > out_arg; cat "$2" > out_prompt'
    template = f"sh -c '{script}' ralph-agent {{workdir}} {{prompt_file}}"
    command = CommandTemplateAdapter().build(
        SessionLaunch(
            make_plan(), prompt, endpoint, command_settings(template), workdir, tmp_path / "s", False
        )
    )
    assert command.argv[1:4] == ["-c", script, "ralph-agent"]
    subprocess.run(command.argv, cwd=command.cwd, stdin=subprocess.DEVNULL, timeout=30, check=True)
    assert (workdir / "out_arg").read_text(encoding="utf-8") == str(workdir)
    assert (workdir / "out_prompt").read_text(encoding="utf-8") == prompt
    assert not [path for path in tmp_path.rglob("PWNED*")]


@pytest.mark.parametrize(
    ("template", "complaint"),
    [
        (None, "needs a command template"),
        ("   ", "needs a command template"),
        ("tool 'unbalanced", "cannot be split into words"),
        ("sh {prompt} {mcp_config}", "unknown placeholders {prompt}"),
        ("{workdir}/tool {prompt_file}", "must start with a program name or path"),
        ("no-such-tool-here {prompt_file}", "program 'no-such-tool-here' was not found"),
    ],
)
def test_an_unusable_template_is_refused_before_anything_changes(
    tmp_path: Path, endpoint: SessionEndpoint, template: str | None, complaint: str
) -> None:
    settings = command_settings(template) if template is not None else LoopSettings(agent="command")
    with pytest.raises(AgentUnavailableError, match=complaint.replace("{", r"\{").replace("}", r"\}")):
        CommandTemplateAdapter().check_available(settings)
    with pytest.raises(AgentUnavailableError):
        CommandTemplateAdapter().build(
            SessionLaunch(make_plan(), "p", endpoint, settings, tmp_path, tmp_path / "s", False)
        )
    assert not (tmp_path / "s").exists()


# --- the factory ---------------------------------------------------------------------------------------


def test_the_factory_picks_the_adapter_and_its_parser() -> None:
    claude = adapter_for(LoopSettings(agent="claude"))
    codex = adapter_for(LoopSettings(agent="codex"))
    command = adapter_for(LoopSettings(agent="command", agent_command="sh x"))
    assert (claude.name, codex.name, command.name) == ("claude", "codex", "command")
    assert isinstance(claude.parser(), ClaudeStreamParser)
    assert isinstance(codex.parser(), CodexStreamParser)
    assert isinstance(command.parser(), AutoStreamParser)
    assert claude.parser() is not claude.parser()


def test_an_unknown_agent_is_refused_with_the_choices() -> None:
    with pytest.raises(
        AgentUnavailableError, match="unknown agent 'gemini'; choose one of claude, codex, command, rehearsal"
    ):
        adapter_for(LoopSettings(agent="gemini"))


def test_codex_refuses_a_server_variable_that_would_change_codex_itself(
    tmp_path: Path, endpoint: SessionEndpoint, codex: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Codex forwards a server's variables from its own environment: one Codex reads itself may not differ.
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.invalid/v1")
    for name, value in (("PATH", "/evil/bin"), ("OPENAI_BASE_URL", "http://127.0.0.1:1/"), (TOKEN_ENV, "x")):
        spec = McpServerSpec("tool", command="tool-mcp", env={name: value})
        with pytest.raises(ValueError, match=f"MCP server 'tool' sets {name}, which Codex itself reads"):
            server_override(spec)
    same = McpServerSpec(
        "tool", command="tool-mcp", env={"OPENAI_BASE_URL": "https://api.example.invalid/v1"}
    )
    assert server_override(same)[1] == {"OPENAI_BASE_URL": "https://api.example.invalid/v1"}
