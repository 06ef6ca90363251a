"""Comment tools: add, edit and delete the comments of a task."""

from __future__ import annotations

from typing import Any

from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import CommentResult, Deleted


@handles("add_task_comment")
def add_task_comment(call: ToolCall[Any]) -> CommentResult:
    """The new comment."""
    args = call.args
    return CommentResult.model_validate(
        call.services.comments.add(
            args.task_id, args.author, args.body, discipline=args.discipline, priority=args.priority
        )
    )


@handles("update_task_comment")
def update_task_comment(call: ToolCall[Any]) -> CommentResult:
    """The comment with its new text."""
    args = call.args
    return CommentResult.model_validate(
        call.services.comments.update(args.task_id, args.comment_id, args.body)
    )


@handles("delete_task_comment")
def delete_task_comment(call: ToolCall[Any]) -> Deleted:
    """Delete one of a task's comments."""
    call.services.comments.delete(call.args.task_id, call.args.comment_id)
    return Deleted(kind="comment", key=call.args.comment_id)
