"""Comments on tasks."""

from __future__ import annotations

import builtins

from ralph_desk.domain.enums import Priority
from ralph_desk.domain.records import Comment
from ralph_desk.services import validation as check
from ralph_desk.services.errors import InvalidValueError, NotFoundError
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


def _id(field: str, value: int) -> int:
    checked = check.positive_int(field, value)
    if checked is None:
        raise InvalidValueError(field, value, f"a whole number from 1 to {2**31 - 1}")
    return checked


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
        """Add a comment to a task, optionally speaking for a discipline and with a priority."""
        task_id = _id("task_id", task_id)
        fields: CommentWrite = {
            "author": check.required_text("author", author, limit=200).strip(),
            "body": check.required_text("body", body),
            "discipline": discipline,
            "priority": check.choice("priority", priority, Priority).value if priority is not None else None,
        }
        with self.db.write() as unit:
            self._require_task(unit, task_id)
            if discipline is not None and (
                not isinstance(discipline, str) or disciplines_store.id_of(unit, discipline) is None
            ):
                raise NotFoundError("discipline", discipline, disciplines_store.names(unit))
            return store.add(unit, task_id, fields)

    def update(self, task_id: int, comment_id: int, body: str) -> Comment:
        """Replace the text of one of a task's comments."""
        task_id = _id("task_id", task_id)
        comment_id = _id("comment_id", comment_id)
        checked = check.required_text("body", body)
        with self.db.write() as unit:
            self._require(unit, task_id, comment_id)
            comment = store.update(unit, comment_id, {"body": checked})
            assert comment is not None
            return comment

    def delete(self, task_id: int, comment_id: int) -> None:
        """Remove one of a task's comments."""
        task_id = _id("task_id", task_id)
        comment_id = _id("comment_id", comment_id)
        with self.db.write() as unit:
            self._require(unit, task_id, comment_id)
            store.delete(unit, comment_id)

    def list(self, task_id: int) -> builtins.list[Comment]:
        """A task's comments, oldest first."""
        task_id = _id("task_id", task_id)
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
