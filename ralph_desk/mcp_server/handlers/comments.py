"""Comment tools: add a comment to a task."""

from __future__ import annotations

from ralph_desk.domain.tools import AddTaskCommentInput
from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import CommentResult


@handles("add_task_comment")
def add_task_comment(call: ToolCall[AddTaskCommentInput]) -> CommentResult:
    """The new comment."""
    return CommentResult.model_validate(call.services.comments.add_input(call.args))
