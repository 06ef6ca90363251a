"""State-file tools: append to and read `.ralph/learnings.txt` and `.ralph/progress.txt`."""

from __future__ import annotations

from ralph_desk.domain.tools import (
    AppendLearningInput,
    AppendProgressInput,
    ReadLearningsInput,
    ReadProgressInput,
)
from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import Appended, StateFileText


@handles("append_learning")
def append_learning(call: ToolCall[AppendLearningInput]) -> Appended:
    """The entry appended to learnings.txt."""
    return Appended(file="learnings.txt", entry=call.services.state_files.append_learning(call.args.text))


@handles("read_learnings")
def read_learnings(call: ToolCall[ReadLearningsInput]) -> StateFileText:
    """The whole of learnings.txt."""
    return StateFileText(file="learnings.txt", text=call.services.state_files.read_learnings())


@handles("append_progress")
def append_progress(call: ToolCall[AppendProgressInput]) -> Appended:
    """The entry appended to progress.txt."""
    return Appended(file="progress.txt", entry=call.services.state_files.append_progress(call.args.text))


@handles("read_progress")
def read_progress(call: ToolCall[ReadProgressInput]) -> StateFileText:
    """The whole of progress.txt."""
    return StateFileText(file="progress.txt", text=call.services.state_files.read_progress())
