"""Prompts for IDE clients (seed 003), each mapping to loop-control tool calls and resources."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from ralph_desk.domain.setting_bounds import MAX_ITERATIONS

Iterations = Annotated[str, Field(description="Most iterations to run: a whole number, 0 for no limit.")]
AllowEdits = Annotated[str, Field(description="true lets the agents change files; false puts changes aside.")]
Force = Annotated[str, Field(description="true re-creates the configuration, keeping the database.")]

# Each prompt's arguments, as `register` declares them (a test holds the two together).
PROMPT_ARGUMENTS: Mapping[str, tuple[str, ...]] = {
    "run_ralph": ("max_iterations", "allow_edits"),
    "init_ralph": ("force",),
    "understand_ralph": (),
}


class PromptCheck:
    """Middleware: `prompts/get` of an unknown prompt or argument is refused saying what is allowed."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "prompts/get":
            _check(ctx.params or {})
        return await call_next(ctx)


def _check(params: Mapping[str, Any]) -> None:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name not in PROMPT_ARGUMENTS:
        known = ", ".join(PROMPT_ARGUMENTS)
        raise MCPError(code=INVALID_PARAMS, message=f"no prompt {name!r}; allowed: one of {known}")
    allowed = PROMPT_ARGUMENTS[str(name)]
    for argument, value in dict(arguments).items() if isinstance(arguments, Mapping) else ():
        if argument not in allowed:
            shown = ", ".join(allowed) or "none"
            message = f"prompt {name} has no argument {argument!r}; allowed: {shown}"
            raise MCPError(code=INVALID_PARAMS, message=message)
        if not isinstance(value, str):
            message = f"invalid {argument}: {value!r}; allowed: a text (prompt arguments are texts)"
            raise MCPError(code=INVALID_PARAMS, message=message)


def _flag(name: str, value: str) -> str:
    """A true/false prompt argument (prompt arguments are texts), refused if it is neither."""
    cleaned = value.strip().lower()
    if cleaned not in ("true", "false"):
        raise MCPError(code=INVALID_PARAMS, message=f"invalid {name}: {value!r}; allowed: true or false")
    return cleaned


def _count(name: str, value: str) -> int:
    """A whole-number prompt argument, refused if it is not one from 0 to MAX_ITERATIONS."""
    # Without leading zeros, its length first: int() of more than 4,300 digits raises, which the SDK
    # would answer as a bare "Error rendering prompt".
    cleaned = value.strip().lstrip("0") or ("0" if value.strip() else "")
    too_long = len(cleaned) > len(str(MAX_ITERATIONS))
    if too_long or not (cleaned.isascii() and cleaned.isdigit()) or int(cleaned) > MAX_ITERATIONS:
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"invalid {name}: {_shown(value)}; "
            f"allowed: a whole number from 0 to {MAX_ITERATIONS} (0: no limit)",
        )
    return int(cleaned)


def _shown(value: str, limit: int = 40) -> str:
    """A given value as a message quotes it: whole when short, else its start and its length."""
    return repr(value) if len(value) <= limit else f"{value[:limit]!r}… ({len(value):,} characters)"


def register(server: MCPServer) -> None:
    """Add the three built-in prompts."""

    @server.prompt(name="run_ralph", title="Run Ralph with the current prompt")
    def run_ralph(max_iterations: Iterations = "5", allow_edits: AllowEdits = "false") -> str:
        """Start the Ralph loop on this project and report what it did."""
        iterations = _count("max_iterations", max_iterations)
        edits = _flag("allow_edits", allow_edits)
        return (
            "Run the Ralph loop on this project.\n"
            "1. Call `ralph_validate`; if it reports problems, show them and stop.\n"
            f"2. Call `ralph_run` with max_iterations={iterations}, dry_run=false, allow_edits={edits}, "
            "wait=true. It runs the loop to its end, reporting progress per session, and returns its "
            "summary: sessions run, tasks completed, failed and waiting, exit code, files changed, log "
            "path and cost.\n"
            "3. Report that summary; call `ralph_history` with limit=10 and summarise each iteration "
            "(task, closing verb, outcome, cost), and `ralph_history` with its iteration number (and "
            "loop_id) for one agent's final text and signals.\n"
            "4. Read `ralph://progress` and list any questions waiting for the human."
        )

    @server.prompt(name="init_ralph", title="Initialize Ralph scaffolding")
    def init_ralph(force: Force = "false") -> str:
        """Create (or re-create) the project's .ralph/ folder."""
        return (
            "Initialise Ralph for this project.\n"
            f"1. Call `ralph_init` with force={_flag('force', force)}.\n"
            "2. Call `ralph_validate` and report what it says.\n"
            "3. Read `ralph://prd` and summarise the tasks it holds."
        )

    @server.prompt(name="understand_ralph", title="Run understanding loop")
    def understand_ralph() -> str:
        """Map the codebase read-only into .ralph/codebase_map.md."""
        return (
            "Run the understanding loop on this project (read-only: it changes no files but the map).\n"
            "1. Call `ralph_understand`.\n"
            "2. Call `ralph_status` until it has finished.\n"
            "3. Read `ralph://codebase_map` and summarise the architecture it describes."
        )
