"""Comments on tasks."""

from __future__ import annotations

import builtins

from ralph_desk.domain.records import Comment
from ralph_desk.domain.tools import AddTaskCommentInput, Text
from ralph_desk.services import validation as check
from ralph_desk.services.errors import NotFoundError
from ralph_desk.store import comments as store
from ralph_desk.store import disciplines as disciplines_store
from ralph_desk.store import tasks as tasks_store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.writes import CommentWrite


class CommentNotOnTaskError(NotFoundError):
    """A comment id that exists, but on another task than the one named."""

    def __init__(self, comment_id: int, task_id: int, owner_id: int) -> None:
        super().__init__("comment", comment_id)
        self.args = (
            f"comment {comment_id} belongs to task #{owner_id}, not to task #{task_id}; "
            f"name the task it belongs to",
        )


class CommentService:
    """Add, edit, delete and list the comments of a task."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(
        self,
        task_id: int,
        author: str,
        body: str,
        discipline: str | None = None,
        priority: str | None = None,
    ) -> Comment:
        """Add a comment from plain values (the window, the CLI), checked as add_task_comment's arguments."""
        given = {
            "task_id": task_id,
            "author": author,
            "body": body,
            "discipline": discipline,
            "priority": priority,
        }
        values = {key: value for key, value in given.items() if value is not None}
        return self.add_input(check.arguments(AddTaskCommentInput, values, "add_task_comment"))

    def add_input(self, args: AddTaskCommentInput) -> Comment:
        """Add a comment to a task, optionally speaking for a discipline and with a priority."""
        fields: CommentWrite = {
            "author": args.author,
            "body": args.body,
            "discipline": args.discipline,
            "priority": args.priority.value if args.priority is not None else None,
        }
        with self.db.write() as unit:
            self._require_task(unit, args.task_id)
            if args.discipline is not None and disciplines_store.id_of(unit, args.discipline) is None:
                raise NotFoundError("discipline", args.discipline, disciplines_store.names(unit))
            return store.add(unit, args.task_id, fields)

    def update(self, task_id: int, comment_id: int, body: str) -> Comment:
        """Replace the text of one of a task's comments (the window's edit; no tool does it)."""
        task_id = check.positive_int("task_id", task_id)
        comment_id = check.positive_int("comment_id", comment_id)
        checked = check.value(Text, "body", body)
        with self.db.write() as unit:
            self._require(unit, task_id, comment_id)
            comment = store.update(unit, comment_id, {"body": checked})
            assert comment is not None
            return comment

    def delete(self, task_id: int, comment_id: int) -> None:
        """Remove one of a task's comments."""
        task_id = check.positive_int("task_id", task_id)
        comment_id = check.positive_int("comment_id", comment_id)
        with self.db.write() as unit:
            self._require(unit, task_id, comment_id)
            store.delete(unit, comment_id)

    def list(self, task_id: int) -> builtins.list[Comment]:
        """A task's comments, oldest first."""
        task_id = check.positive_int("task_id", task_id)
        with self.db.read() as unit:
            self._require_task(unit, task_id)
            return store.list_for(unit, task_id)

    def _require_task(self, unit: UnitOfWork, task_id: int) -> None:
        if not tasks_store.exists(unit, task_id):
            raise NotFoundError("task", task_id)

    def _require(self, unit: UnitOfWork, task_id: int, comment_id: int) -> Comment:
        self._require_task(unit, task_id)
        comment = store.get(unit, comment_id)
        if comment is None:
            known = [comment.id for comment in store.list_for(unit, task_id)]
            raise NotFoundError("comment", comment_id, known)
        if comment.task_id != task_id:
            raise CommentNotOnTaskError(comment_id, task_id, comment.task_id)
        return comment
