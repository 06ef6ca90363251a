"""The eight verbs: each records one `task_signals` row for the session's task."""

from __future__ import annotations

from typing import TypeVar

from ralph_desk.domain.enums import Verb
from ralph_desk.domain.tools import (
    AskInput,
    BlockedInput,
    DoneInput,
    FlagInput,
    LearnedInput,
    PartialInput,
    StuckInput,
    SuggestInput,
    VerbInput,
)
from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import SignalRecorded
from ralph_desk.services.errors import ServiceError

VerbT = TypeVar("VerbT", bound=VerbInput)

NEXT_STEP: dict[Verb, str] = {
    Verb.DONE: "Task marked for completion. End the session now.",
    Verb.PARTIAL: "Progress recorded; the task will be re-queued with what remains. End the session now.",
    Verb.STUCK: "Recorded as stuck. End the session now.",
    Verb.ASK: "Question queued for the human. If it blocks you, call partial or stuck and end the session.",
    Verb.FLAG: "Flag recorded for the human reviewer. Continue your task.",
    Verb.LEARNED: "Learning recorded for future sessions. Continue your task.",
    Verb.SUGGEST: "Suggestion recorded for human review. Continue your task.",
    Verb.BLOCKED: "Blocker recorded. Call partial or stuck to close the session unless you worked around it.",
}


def record(verb: Verb, call: ToolCall[VerbT]) -> SignalRecorded:
    """Store the verb for the session's task; refuse when the session serves no task."""
    task_id = call.context.task_id
    if task_id is None:
        raise ServiceError(
            f"{verb.value!r} needs a session that serves a task; this session has none "
            "(start it with --task-id, RALPH_TASK_ID or a context file naming task_id)"
        )
    signal = call.services.signals.record_input(task_id, call.context.session_id, call.args)
    return SignalRecorded(
        signal_id=signal.id,
        verb=verb.value,
        task_id=task_id,
        session_id=signal.session_id,
        next=NEXT_STEP[verb],
    )


@handles("done")
def done(call: ToolCall[DoneInput]) -> SignalRecorded:
    """Signal that the task is complete."""
    return record(Verb.DONE, call)


@handles("partial")
def partial(call: ToolCall[PartialInput]) -> SignalRecorded:
    """Signal progress with work remaining."""
    return record(Verb.PARTIAL, call)


@handles("stuck")
def stuck(call: ToolCall[StuckInput]) -> SignalRecorded:
    """Signal that no meaningful progress is possible."""
    return record(Verb.STUCK, call)


@handles("ask")
def ask(call: ToolCall[AskInput]) -> SignalRecorded:
    """Ask the human a question."""
    return record(Verb.ASK, call)


@handles("flag")
def flag(call: ToolCall[FlagInput]) -> SignalRecorded:
    """Report a problem."""
    return record(Verb.FLAG, call)


@handles("learned")
def learned(call: ToolCall[LearnedInput]) -> SignalRecorded:
    """Record knowledge for future tasks."""
    return record(Verb.LEARNED, call)


@handles("suggest")
def suggest(call: ToolCall[SuggestInput]) -> SignalRecorded:
    """Recommend out-of-scope work."""
    return record(Verb.SUGGEST, call)


@handles("blocked")
def blocked(call: ToolCall[BlockedInput]) -> SignalRecorded:
    """Report an outside blocker."""
    return record(Verb.BLOCKED, call)
