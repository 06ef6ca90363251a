"""Loop tools for IDE clients (seeds 003, 004): each asks the server's loop control and returns its answer.

The loop control (`ralph_desk.loop.control.LoopController`, handed to the server by whoever builds
it) is the one implementation; failures become tool errors whose text is seed 003's structured
error: `{"code", "message", "details"}`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from ralph_desk.domain.loop_results import (
    LoopResult,
    RalphHistoryResult,
    RalphInitResult,
    RalphRunResult,
    RalphStatusResult,
    RalphStopResult,
    RalphUnderstandResult,
    RalphValidateResult,
)
from ralph_desk.domain.tools import (
    RalphHistoryInput,
    RalphInitInput,
    RalphRunInput,
    RalphStatusInput,
    RalphStopInput,
    RalphUnderstandInput,
    RalphValidateInput,
    ToolInput,
)
from ralph_desk.mcp_server.binding import LoopControl, StructuredToolError, ToolCall, handles
from ralph_desk.project import ProjectPaths
from ralph_desk.project.logs import log_details
from ralph_desk.services.errors import ControlError, InvalidValueError, ServiceError

log = logging.getLogger("ralph_desk.mcp")

ResultT = TypeVar("ResultT", bound=LoopResult)
InputT = TypeVar("InputT", bound=ToolInput)

NO_CONTROL = "this server has no loop control; the loop-control tools are served by `ralph-desk mcp`"


class LoopToolError(StructuredToolError):
    """A loop-control failure, sent as seed 003's structured error."""


def _ask(call: ToolCall[InputT], tool: str, request: Callable[[LoopControl], ResultT]) -> ResultT:
    """Ask the loop control, mapping whatever it raises onto a structured error."""
    if call.loop is None:
        raise LoopToolError("execution_failed", NO_CONTROL, {"tool": tool, "reason": "no_loop_control"})
    try:
        return request(call.loop)
    except ControlError as error:
        raise LoopToolError(error.code, error.message, error.details) from None
    except InvalidValueError as error:
        raise LoopToolError("invalid_argument", str(error), {"tool": tool}) from None
    except ServiceError as error:
        raise LoopToolError("execution_failed", str(error), _log_details(call, tool)) from None
    except Exception as error:  # the top of a request: report, never a traceback to the client
        log.exception("loop control failed in %s", tool)
        raise LoopToolError(
            "execution_failed",
            f"the loop runner failed: {type(error).__name__}: {error}",
            _log_details(call, tool),
        ) from None


def _log_details(call: ToolCall[InputT], tool: str) -> dict[str, object]:
    """The tool and the log file to read (found without opening the project's database)."""
    paths = getattr(call.open_services, "paths", None)
    if not isinstance(paths, ProjectPaths):
        return {"tool": tool}
    return log_details(paths.logs_dir, tool)


@handles("ralph_init")
def ralph_init(call: ToolCall[RalphInitInput]) -> RalphInitResult:
    """Create the .ralph/ folder (or, with force, re-create its configuration) and write prd.json."""
    return _ask(call, "ralph_init", lambda loop: loop.init(bool(call.args.force)))


@handles("ralph_validate")
def ralph_validate(call: ToolCall[RalphValidateInput]) -> RalphValidateResult:
    """What is missing or broken in the project folder."""
    return _ask(call, "ralph_validate", lambda loop: loop.validate())


@handles("ralph_run")
def ralph_run(call: ToolCall[RalphRunInput]) -> RalphRunResult:
    """Start the loop (it runs on) or preview it."""
    args = call.args
    try:  # refused on every server, before the loop control is asked for
        allowed_paths = call.all_inside_root("allowed_paths", args.allowed_paths)
    except InvalidValueError as error:
        raise LoopToolError("invalid_argument", str(error), {"tool": "ralph_run"}) from None
    return _ask(
        call,
        "ralph_run",
        lambda loop: loop.run(
            args.max_iterations,
            args.dry_run,
            args.agent,
            args.allow_edits,
            args.parallel,
            allowed_paths,
            args.wait,
            call.progress,
        ),
    )


@handles("ralph_status")
def ralph_status(call: ToolCall[RalphStatusInput]) -> RalphStatusResult:
    """Whether the loop runs, where it is, and task counts."""
    return _ask(call, "ralph_status", lambda loop: loop.status(call.args.loop_id))


@handles("ralph_stop")
def ralph_stop(call: ToolCall[RalphStopInput]) -> RalphStopResult:
    """Ask the running loop to stop."""
    return _ask(call, "ralph_stop", lambda loop: loop.stop())


@handles("ralph_understand")
def ralph_understand(call: ToolCall[RalphUnderstandInput]) -> RalphUnderstandResult:
    """Start the read-only run that writes .ralph/codebase_map.md."""
    return _ask(call, "ralph_understand", lambda loop: loop.understand())


@handles("ralph_history")
def ralph_history(call: ToolCall[RalphHistoryInput]) -> RalphHistoryResult:
    """A page of past iterations, one iteration in full, or the learnings agents recorded."""
    args = call.args
    return _ask(
        call,
        "ralph_history",
        lambda loop: loop.history(args.limit, args.offset, args.iteration, args.type, args.loop_id),
    )
