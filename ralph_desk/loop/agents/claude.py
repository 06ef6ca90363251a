"""Claude Code (`claude -p … --output-format stream-json`), checked against 2.1.330."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path

from ralph_desk.loop.agents.base import (
    LocatedAdapter,
    allowed_mcp_tools,
    given_program,
    locate_program,
    prompt_fits_argv,
    write_mcp_config,
)
from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser
from ralph_desk.loop.model import AgentCommand, LoopSettings, SessionLaunch
from ralph_desk.loop.settings import CLAUDE_BIN_ENV
from ralph_desk.loop.streams import StreamParser
from ralph_desk.project.confinement import HomeFile

CLAUDE_PROGRAM = "claude"
EDIT_TOOLS = ("Read", "Edit", "Write", "Bash", "Glob", "Grep")
READ_ONLY_TOOLS = ("Read", "Glob", "Grep")
# Claude Code's own Bash sandbox, with no command let out of it (it warns and goes on where it cannot start).
# Inside the session's sandbox it cannot mount a /proc of its own: its weaker nested mode runs.
OWN_SANDBOX = json.dumps(
    {"sandbox": {"enabled": True, "allowUnsandboxedCommands": False, "enableWeakerNestedSandbox": True}}
)
HOW_TO_POINT = f"pass --claude-bin PATH, set {CLAUDE_BIN_ENV}, or put `{CLAUDE_PROGRAM}` on PATH"


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False


def permission_rules(built_in: Sequence[str], allowed_paths: Sequence[str]) -> tuple[list[str], str]:
    """The allow rules for the built-in tools and the permission mode that enforces them.

    Without `allowed_paths` every offered tool is allowed and edits are accepted anywhere. With them,
    Claude Code denies what no rule allows (`dontAsk`), and `Edit(glob)` rules — which cover every
    built-in tool that edits files — allow editing only there (globs relative to the working folder).
    """
    if not allowed_paths:
        return list(built_in), "acceptEdits"
    editing = {"Edit", "Write"}
    rules = [tool for tool in built_in if tool not in editing]
    rules += [f"Edit({glob.removeprefix('./')})" for glob in allowed_paths]
    return rules, "dontAsk"


class ClaudeAdapter(LocatedAdapter):
    """Runs Claude Code headless with the session's MCP config, allow-list, permission mode and turn limit."""

    name = "claude"
    # Credentials read-only in place (a refreshed login is the person's, not a copy's); settings copied.
    home_files: tuple[HomeFile, ...] = (
        HomeFile(".claude/.credentials.json"),
        HomeFile(".claude/settings.json", copy=True),
    )
    needs_network = True

    def locate(self, settings: LoopSettings) -> Path:
        """The Claude Code executable: `--claude-bin` (settings), else `$RALPH_CLAUDE_BIN`, else PATH."""
        given = given_program(settings, "--claude-bin (the agent_bin setting)", CLAUDE_BIN_ENV)
        return locate_program(
            "Claude Code", CLAUDE_PROGRAM, given, "npm install -g @anthropic-ai/claude-code", HOW_TO_POINT
        )

    def build(self, launch: SessionLaunch) -> AgentCommand:
        """`claude -p` with stream-json output; the prompt is the last argument, or stdin when very long."""
        plan, prompt, settings, read_only = launch.plan, launch.prompt, launch.settings, launch.read_only
        program = self.locate(settings)
        config = write_mcp_config(launch)
        built_in = READ_ONLY_TOOLS if read_only else EDIT_TOOLS
        allowed, mode = permission_rules(built_in, () if read_only else settings.allowed_paths)
        argv = [
            str(program), "-p",
            "--output-format", "stream-json", "--verbose",
            "--mcp-config", str(config), "--strict-mcp-config",
            "--allowedTools", ",".join([*allowed_mcp_tools(plan), *allowed]),
            # Only the built-in tools it may use are offered at all: no turn is spent on a denial, and
            # nothing like EnterWorktree can move the session's edits away from the repository.
            "--tools", ",".join(built_in),
            "--permission-mode", "dontAsk" if read_only else mode,
            "--max-turns", str(settings.max_turns),
        ]  # fmt: skip
        if settings.sandbox:  # Claude Code's own sandbox for its Bash commands, inside the session's
            argv += ["--settings", OWN_SANDBOX]
        model = settings.model_for(plan.recipe)
        if model:
            argv += ["--model", model]
        if _is_uuid(plan.session_id):
            argv += ["--session-id", plan.session_id.lower()]
        if prompt_fits_argv(prompt):
            # After `--`, a prompt that starts with '-' is not read as an option.
            return AgentCommand(argv=[*argv, "--", prompt], cwd=launch.workdir, config_files=(config,))
        # `claude -p` without a prompt argument reads it from standard input.
        return AgentCommand(argv=argv, cwd=launch.workdir, stdin_text=prompt, config_files=(config,))

    def parser(self) -> StreamParser:
        """A stream-json parser."""
        return ClaudeStreamParser()
