"""CommentService: comments on a task, kept to the task they belong to."""

from __future__ import annotations

import re

import pytest

from ralph_desk.domain.records import Change, Task
from ralph_desk.services.comments import CommentService
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.errors import InvalidValueError, NotFoundError
from ralph_desk.services.features import FeatureService
from ralph_desk.services.tasks import TaskService


@pytest.fixture
def task(features: FeatureService, disciplines: DisciplineService, tasks: TaskService) -> Task:
    features.create("core", "Core")
    disciplines.create("backend", "Backend", "server", "#10b981")
    return tasks.create("core", "backend", "Build the API")


@pytest.fixture
def other_task(tasks: TaskService, task: Task) -> Task:
    return tasks.create("core", "backend", "Write the docs")


def test_an_added_comment_keeps_its_author_body_discipline_and_priority(
    comments: CommentService, tasks: TaskService, task: Task
) -> None:
    added = comments.add(task.id, " opus ", "Check the error paths.", discipline="backend", priority="high")

    assert (added.task_id, added.author, added.body) == (task.id, "opus", "Check the error paths.")
    assert (added.discipline, added.priority) == ("backend", "high")
    assert comments.list(task.id) == [added]
    assert tasks.get(task.id).comments == (added,)


def test_comments_are_listed_oldest_first_per_task(
    comments: CommentService, task: Task, other_task: Task
) -> None:
    first = comments.add(task.id, "human", "one")
    comments.add(other_task.id, "human", "elsewhere")
    second = comments.add(task.id, "human", "two")

    assert comments.list(task.id) == [first, second]


def test_adding_a_comment_notifies_comments_and_its_task(
    comments: CommentService, task: Task, heard: list[Change]
) -> None:
    added = comments.add(task.id, "human", "hello")

    assert heard == [Change("comments", (added.id,)), Change("tasks", (task.id,))]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"author": " "}, "invalid author: ' '; allowed: a non-empty text"),
        ({"author": "x" * 201}, "invalid author: '<201 characters>'; allowed: at most 200 characters"),
        ({"body": ""}, "invalid body: ''; allowed: a non-empty text"),
        ({"body": None}, "invalid body: None; allowed: a non-empty text"),
        ({"priority": "urgent"}, "invalid priority: 'urgent'; allowed: one of low, medium, high, critical"),
        ({"task_id": 0}, "invalid task_id: 0; allowed: a whole number from 1"),
    ],
)
def test_an_invalid_comment_is_refused_naming_field_value_and_what_is_allowed(
    comments: CommentService, task: Task, kwargs: dict[str, object], message: str
) -> None:
    arguments: dict[str, object] = {"task_id": task.id, "author": "human", "body": "text", **kwargs}

    with pytest.raises(InvalidValueError, match=re.escape(message)):
        comments.add(**arguments)  # type: ignore[arg-type]

    assert comments.list(task.id) == []


def test_a_comment_for_an_unknown_discipline_lists_the_known_ones(
    comments: CommentService, task: Task
) -> None:
    with pytest.raises(NotFoundError, match="no discipline 'qa'; known: backend"):
        comments.add(task.id, "human", "text", discipline="qa")


def test_a_comment_on_an_unknown_task_is_not_found(comments: CommentService, task: Task) -> None:
    with pytest.raises(NotFoundError, match="no task 404"):
        comments.add(404, "human", "text")
    with pytest.raises(NotFoundError, match="no task 404"):
        comments.list(404)


def test_a_comment_can_be_edited(comments: CommentService, task: Task, heard: list[Change]) -> None:
    added = comments.add(task.id, "human", "draft")
    heard.clear()

    edited = comments.update(task.id, added.id, "final")

    assert edited.body == "final"
    assert (edited.id, edited.author, edited.created_at) == (added.id, added.author, added.created_at)
    assert edited.updated_at >= added.updated_at
    assert comments.list(task.id) == [edited]
    assert heard == [Change("comments", (added.id,)), Change("tasks", (task.id,))]


def test_an_edit_to_an_empty_body_is_refused(comments: CommentService, task: Task) -> None:
    added = comments.add(task.id, "human", "keep")

    with pytest.raises(InvalidValueError, match="invalid body: '  '; allowed: a non-empty text"):
        comments.update(task.id, added.id, "  ")

    assert comments.list(task.id) == [added]


def test_a_comment_can_be_deleted(comments: CommentService, task: Task, heard: list[Change]) -> None:
    kept = comments.add(task.id, "human", "keep")
    gone = comments.add(task.id, "human", "drop")
    heard.clear()

    comments.delete(task.id, gone.id)

    assert comments.list(task.id) == [kept]
    assert heard == [Change("comments", (gone.id,)), Change("tasks", (task.id,))]


def test_an_unknown_comment_is_not_found_listing_the_tasks_comments(
    comments: CommentService, task: Task
) -> None:
    added = comments.add(task.id, "human", "only one")

    with pytest.raises(NotFoundError, match=f"no comment 999; known: {added.id}"):
        comments.update(task.id, 999, "x")
    with pytest.raises(NotFoundError, match="no comment 999"):
        comments.delete(task.id, 999)


def test_a_comment_of_another_task_is_not_found_saying_whose_it_is(
    comments: CommentService, task: Task, other_task: Task
) -> None:
    theirs = comments.add(other_task.id, "human", "not yours")
    expected = f"comment {theirs.id} belongs to task #{other_task.id}, not to task #{task.id}"

    with pytest.raises(NotFoundError, match=expected):
        comments.update(task.id, theirs.id, "hijacked")
    with pytest.raises(NotFoundError, match=expected):
        comments.delete(task.id, theirs.id)

    assert comments.list(other_task.id) == [theirs]


def test_editing_a_comment_of_an_unknown_task_is_not_found(comments: CommentService, task: Task) -> None:
    added = comments.add(task.id, "human", "text")

    with pytest.raises(NotFoundError, match="no task 404"):
        comments.update(404, added.id, "x")
