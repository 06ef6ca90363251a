"""TaskService: fields, filters and search, statuses, acyclic dependencies, the next task and its claim."""

from __future__ import annotations

import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, inspect, select, text, update
from sqlalchemy.engine import make_url

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Change, Task
from ralph_desk.services.comments import CommentService
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.features import FeatureService
from ralph_desk.services.signals import SignalService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store.database import Database
from ralph_desk.store.schema import TaskRow, TaskSignalRow
from ralph_desk.store.urls import sqlite_url

POSTGRES_URL = os.environ.get("RALPH_DESK_TEST_POSTGRES_URL")
ALL_STATUSES = "draft, pending, in_progress, in_review, done, blocked, needs_input, skipped, failed"


def _set_up_project(db: Database) -> None:
    features = FeatureService(db)
    features.create("core", "Core")
    features.create("ui", "User interface")
    disciplines = DisciplineService(db)
    disciplines.create("backend", "Backend", "server", "#10b981")
    disciplines.create("docs", "Documentation", "book", "#f59e0b")


@pytest.fixture(autouse=True)
def project(db: Database) -> None:
    """Two features (core, ui) and two disciplines (backend, docs)."""
    _set_up_project(db)


@pytest.fixture
def make(tasks: TaskService) -> Callable[..., Task]:
    """Create a task in core/backend, with any field overridden."""

    def make_task(title: str = "A task", **fields: Any) -> Task:
        fields.setdefault("feature", "core")
        fields.setdefault("discipline", "backend")
        return tasks.create(title=title, **fields)

    return make_task


def _age(db: Database, task: Task, days: int) -> None:
    """Pretend a task was created `days` ago (to test oldest-first without waiting)."""
    with db.write() as unit:
        unit.session.execute(
            update(TaskRow)
            .where(TaskRow.id == task.id)
            .values(created_at=datetime(2026, 1, 1) - timedelta(days=days))
        )


def _ids(summaries: Any) -> list[int]:
    return [item.id for item in summaries]


# --- create and get ---------------------------------------------------------------------------------


def test_a_created_task_keeps_every_field(tasks: TaskService, make: Callable[..., Task]) -> None:
    first = make("First")

    created = tasks.create(
        "ui",
        "docs",
        "Write the guide",
        description="For new users.",
        priority="high",
        status="draft",
        acceptance_criteria=["Covers install", "Covers first run"],
        depends_on=[first.id],
        tags=["guide", " docs ", "guide"],
        context_files=["docs\\index.md"],
        output_artifacts=["docs/guide.md"],
        hints="Keep it short.",
        estimated_turns=12,
        origin="agent",
        pseudocode="1. outline 2. write",
    )

    assert created == tasks.get(created.id)
    assert (created.feature, created.discipline, created.title) == ("ui", "docs", "Write the guide")
    assert (created.description, created.hints, created.pseudocode) == (
        "For new users.",
        "Keep it short.",
        "1. outline 2. write",
    )
    assert (created.priority, created.status, created.origin) == (
        Priority.HIGH,
        TaskStatus.DRAFT,
        TaskOrigin.AGENT,
    )
    assert created.acceptance_criteria == ("Covers install", "Covers first run")
    assert created.depends_on == (first.id,)
    assert created.tags == ("guide", "docs")
    assert created.context_files == ("docs/index.md",)
    assert created.output_artifacts == ("docs/guide.md",)
    assert (created.estimated_turns, created.stuck_count) == (12, 0)
    assert (created.started_at, created.completed_at) == (None, None)


def test_a_task_created_with_only_the_required_fields_gets_the_defaults(tasks: TaskService) -> None:
    created = tasks.create("core", "backend", "Do it")

    assert (created.priority, created.status, created.origin) == (
        Priority.MEDIUM,
        TaskStatus.PENDING,
        TaskOrigin.HUMAN,
    )
    assert (created.description, created.hints, created.estimated_turns) == (None, None, None)
    assert (created.acceptance_criteria, created.tags, created.depends_on, created.comments) == (
        (),
        (),
        (),
        (),
    )


def test_creating_a_task_notifies_tasks_and_with_dependencies_also_dependencies(
    make: Callable[..., Task], heard: list[Change]
) -> None:
    first = make("First")
    second = make("Second", depends_on=[first.id])

    assert heard == [
        Change("tasks", (first.id,)),
        Change("tasks", (second.id,)),
        Change("dependencies", (second.id,)),
    ]


def test_an_unknown_feature_or_discipline_is_not_found_listing_the_known_names(tasks: TaskService) -> None:
    with pytest.raises(NotFoundError, match="no feature 'auth'; known: core, ui"):
        tasks.create("auth", "backend", "x")
    with pytest.raises(NotFoundError, match="no discipline 'frontend'; known: backend, docs"):
        tasks.create("core", "frontend", "x")

    assert tasks.list() == []


def test_an_unknown_dependency_is_not_found_and_nothing_is_created(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    first = make("First")

    with pytest.raises(NotFoundError, match="no task 404"):
        make("Second", depends_on=[first.id, 404])

    assert _ids(tasks.list()) == [first.id]


@pytest.mark.parametrize(
    ("field", "overrides", "bad", "allowed"),
    [
        ("title", {"title": "  "}, "  ", "a non-empty text"),
        ("title", {"title": "x" * 501}, "<501 characters>", "at most 500 characters"),
        ("priority", {"priority": "urgent"}, "urgent", "one of low, medium, high, critical"),
        ("status", {"status": "in_progress"}, "in_progress", "one of draft, pending"),
        ("status", {"status": "done"}, "done", "one of draft, pending"),
        ("origin", {"origin": "robot"}, "robot", "one of human, agent, import"),
        ("estimated_turns", {"estimated_turns": 0}, 0, "a whole number from 1 to 1000"),
        ("estimated_turns", {"estimated_turns": 1001}, 1001, "a whole number from 1 to 1000"),
        ("estimated_turns", {"estimated_turns": True}, True, "a whole number from 1 to 1000"),
        ("estimated_turns", {"estimated_turns": "five"}, "five", "a whole number from 1 to 1000"),
        ("acceptance_criteria", {"acceptance_criteria": "works"}, "works", "a list of texts"),
        ("tags[1]", {"tags": ["ok", ""]}, "", "a non-empty text"),
        (
            "context_files[0]",
            {"context_files": ["/etc/passwd"]},
            "/etc/passwd",
            "relative to the project root",
        ),
        ("context_files[0]", {"context_files": ["C:\\x.py"]}, "C:\\x.py", "relative to the project root"),
        ("output_artifacts[0]", {"output_artifacts": ["../x.md"]}, "../x.md", "without '..'"),
        ("depends_on", {"depends_on": "1,2"}, "1,2", "a list of whole numbers"),
        ("depends_on[0]", {"depends_on": [True]}, True, "a whole number from 1"),
        ("depends_on[0]", {"depends_on": [0]}, 0, "a whole number from 1"),
        ("description", {"description": 42}, 42, "a text"),
        ("feature", {"feature": None}, None, "1-64 characters of a-z, 0-9, '-' and '_'"),
    ],
)
def test_an_invalid_field_is_refused_naming_field_value_and_what_is_allowed(
    tasks: TaskService,
    make: Callable[..., Task],
    field: str,
    overrides: dict[str, Any],
    bad: object,
    allowed: str,
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        make(**overrides)

    assert (caught.value.field, caught.value.value) == (field, bad)
    assert allowed in caught.value.allowed
    assert str(caught.value).startswith(f"invalid {field}: ")
    assert tasks.list() == []


def test_a_number_given_as_text_is_read_as_an_mcp_client_s_would_be(make: Callable[..., Task]) -> None:
    assert make(estimated_turns="5").estimated_turns == 5


def test_estimated_turns_may_be_anything_from_one_to_a_thousand(make: Callable[..., Task]) -> None:
    assert make(estimated_turns=1).estimated_turns == 1
    assert make(estimated_turns=1000).estimated_turns == 1000


def test_an_import_may_create_done_tasks_which_are_stamped_completed(make: Callable[..., Task]) -> None:
    imported = make(origin="import", status="done")

    assert imported.status is TaskStatus.DONE
    assert imported.completed_at is not None

    with pytest.raises(InvalidValueError, match="allowed: one of draft, pending, done"):
        make(origin="import", status="in_progress")


def test_getting_an_unknown_task_is_not_found(tasks: TaskService) -> None:
    with pytest.raises(NotFoundError, match="no task 99"):
        tasks.get(99)


@pytest.mark.parametrize("bad", [0, -1, "3", 2.0, None])
def test_a_task_id_must_be_a_positive_whole_number(tasks: TaskService, bad: Any) -> None:
    with pytest.raises(
        InvalidValueError, match=re.escape(f"invalid task_id: {bad!r}; allowed: a whole number")
    ):
        tasks.get(bad)


def test_a_task_comes_with_its_comments_and_dependencies(
    tasks: TaskService, comments: CommentService, make: Callable[..., Task]
) -> None:
    first, second = make("First"), make("Second")
    third = make("Third", depends_on=[second.id, first.id])
    note = comments.add(third.id, "human", "Mind the edge cases")

    fetched = tasks.get(third.id)

    assert fetched.depends_on == (first.id, second.id)
    assert fetched.comments == (note,)


# --- list, search and counts --------------------------------------------------------------------------


@pytest.fixture
def board(tasks: TaskService, make: Callable[..., Task]) -> dict[str, Task]:
    """Five tasks across features, disciplines, statuses and origins."""
    made = {
        "api": make("Build the API"),
        "docs": make("Write the docs", feature="ui", discipline="docs", status="draft"),
        "ui": make("Draw the screen", feature="ui", origin="agent"),
        "db": make("Design the schema", status="draft", origin="agent"),
        "old": make("Imported work", discipline="docs", origin="import", status="done"),
    }
    tasks.move(made["api"].id, "in_progress", Mover.IMPORT)
    return made


def test_tasks_are_listed_by_id(tasks: TaskService, board: dict[str, Task]) -> None:
    assert _ids(tasks.list()) == sorted(task.id for task in board.values())


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"status": "draft"}, ["docs", "db"]),
        ({"status": ["in_progress", "done"]}, ["api", "old"]),
        ({"status": TaskStatus.PENDING}, ["ui"]),
        ({"feature": "ui"}, ["docs", "ui"]),
        ({"feature": ["ui", "core"]}, ["api", "docs", "ui", "db", "old"]),
        ({"discipline": "docs"}, ["docs", "old"]),
        ({"origin": "agent"}, ["ui", "db"]),
        ({"origin": ["human", "import"]}, ["api", "docs", "old"]),
        ({"status": "draft", "feature": "core"}, ["db"]),
        ({"feature": "core", "discipline": "docs", "origin": "import"}, ["old"]),
        ({"status": []}, []),
        ({"search": "the", "status": "draft"}, ["docs", "db"]),
        ({"limit": 2}, ["api", "docs"]),
        ({"limit": 2, "offset": 3}, ["db", "old"]),
        ({"offset": 10}, []),
    ],
)
def test_filters_narrow_the_list(
    tasks: TaskService, board: dict[str, Task], filters: dict[str, Any], expected: list[str]
) -> None:
    assert _ids(tasks.list(**filters)) == [board[key].id for key in expected]


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"status": "finished"}, f"invalid status: 'finished'; allowed: one of {ALL_STATUSES}"),
        ({"status": ["done", "nope"]}, "invalid status[1]: 'nope'"),
        ({"origin": "robot"}, "invalid origin: 'robot'; allowed: one of human, agent, import"),
        ({"status": 3}, "invalid status: 3; allowed: a value or a list of values"),
        ({"limit": 0}, "invalid limit: 0; allowed: a whole number from 1"),
        ({"offset": -1}, "invalid offset: -1; allowed: a whole number from 0 up"),
        ({"search": " "}, "invalid search: ' '; allowed: a non-empty text"),
        ({"search": "x" * 501}, "invalid search: '<501 characters>'; allowed: at most 500 characters"),
    ],
)
def test_an_invalid_filter_is_refused_saying_what_is_allowed(
    tasks: TaskService, filters: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        tasks.list(**filters)


def test_filtering_by_an_unknown_feature_or_discipline_lists_the_known_ones(tasks: TaskService) -> None:
    with pytest.raises(NotFoundError, match="no feature 'auth'; known: core, ui"):
        tasks.list(feature=["core", "auth"])
    with pytest.raises(NotFoundError, match="no discipline 'qa'; known: backend, docs"):
        tasks.list(discipline="qa")


def test_search_ignores_case_and_looks_in_titles_descriptions_and_tags(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    in_title = make("Fix the LOGIN form")
    in_description = make("Tidy up", description="The login page flickers.")
    in_tags = make("Refactor", tags=["Login", "ui"])
    make("Unrelated", description="Nothing here", tags=["misc"])

    assert _ids(tasks.search("login")) == [in_title.id, in_description.id, in_tags.id]
    assert _ids(tasks.search("LoGiN")) == [in_title.id, in_description.id, in_tags.id]


def test_search_puts_title_matches_first(tasks: TaskService, make: Callable[..., Task]) -> None:
    described = make("Tidy up", description="Cache the results")
    titled = make("Cache warm-up")

    assert _ids(tasks.search("cache")) == [titled.id, described.id]


def test_search_returns_at_most_the_limit(tasks: TaskService, make: Callable[..., Task]) -> None:
    for number in range(5):
        make(f"Report {number}")

    assert len(tasks.search("report", limit=3)) == 3
    with pytest.raises(InvalidValueError, match="invalid limit: 201; allowed: a whole number from 1 to 200"):
        tasks.search("report", limit=201)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("%", ["percent"]),
        ("50%", ["percent"]),
        ("_", ["underscore"]),
        ("snake_case", ["underscore"]),
        ("e_c", ["underscore"]),
        ("\\", ["backslash"]),
        ("'", ["quote"]),
        ('say "hi', ["quoted_tag"]),
        ('", "', []),
        ("a%b", []),
    ],
)
def test_search_treats_wildcards_quotes_and_backslashes_as_plain_text(
    tasks: TaskService, make: Callable[..., Task], query: str, expected: list[str]
) -> None:
    made = {
        "percent": make("Reach 50% coverage"),
        "underscore": make("Rename to snake_case"),
        "backslash": make("Windows paths", description="Use C:\\temp"),
        "quote": make("Fix the user's name"),
        "quoted_tag": make("Greeting", tags=['say "hi"', "polite"]),
        "plain": make("Plain task", description="escape ecase"),
    }

    assert _ids(tasks.search(query)) == [made[key].id for key in expected]


def test_search_text_that_looks_like_sql_finds_nothing_and_harms_nothing(
    db: Database, tasks: TaskService, make: Callable[..., Task]
) -> None:
    made = [make("Build the API"), make("Write docs")]

    assert tasks.search("'; DROP TABLE tasks; --") == []
    assert tasks.list(search="' OR '1'='1") == []

    assert _ids(tasks.list()) == [task.id for task in made]
    assert "tasks" in inspect(db.engine).get_table_names()
    assert db.integrity_ok()


def test_search_finds_text_that_looks_like_sql_when_a_task_holds_it(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    make("Harmless")
    odd = make("Robert'); DROP TABLE tasks; --")

    assert _ids(tasks.search("'); drop table")) == [odd.id]


def test_an_empty_search_is_refused(tasks: TaskService) -> None:
    with pytest.raises(InvalidValueError, match="invalid query: '   '; allowed: a non-empty text"):
        tasks.search("   ")


def test_counts_by_status_include_every_status(tasks: TaskService, board: dict[str, Task]) -> None:
    assert tasks.count_by_status() == {
        "draft": 2,
        "pending": 1,
        "in_progress": 1,
        "in_review": 0,
        "done": 1,
        "blocked": 0,
        "needs_input": 0,
        "skipped": 0,
        "failed": 0,
    }


def test_counts_by_status_on_an_empty_project_are_all_zero(tasks: TaskService) -> None:
    assert tasks.count_by_status() == dict.fromkeys(ALL_STATUSES.split(", "), 0)


def test_counts_by_feature_cover_every_feature_and_status(
    tasks: TaskService, features: FeatureService, board: dict[str, Task]
) -> None:
    features.create("empty", "Empty")

    counts = tasks.count_by_feature()

    assert set(counts) == {"core", "ui", "empty"}
    assert counts["empty"] == dict.fromkeys(ALL_STATUSES.split(", "), 0)
    assert {status: n for status, n in counts["core"].items() if n} == {
        "in_progress": 1,
        "draft": 1,
        "done": 1,
    }
    assert {status: n for status, n in counts["ui"].items() if n} == {"draft": 1, "pending": 1}
    assert set(counts["ui"]) == set(ALL_STATUSES.split(", "))


# --- update ------------------------------------------------------------------------------------------


def test_updating_changes_only_the_given_fields(tasks: TaskService, make: Callable[..., Task]) -> None:
    task = make("Old title", description="Keep me", tags=["a"])

    updated = tasks.update(task.id, title="New title", priority="critical", tags=["b", "c"])

    assert (updated.title, updated.priority, updated.tags) == ("New title", Priority.CRITICAL, ("b", "c"))
    assert updated.description == "Keep me"
    assert tasks.get(task.id) == updated


def test_a_task_can_move_to_another_feature_and_discipline(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    task = make()

    moved = tasks.update(task.id, feature="ui", discipline="docs")

    assert (moved.feature, moved.discipline) == ("ui", "docs")
    assert _ids(tasks.list(feature="ui", discipline="docs")) == [task.id]


def test_updating_with_none_or_empty_clears_optional_fields(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    task = make(description="d", hints="h", estimated_turns=5, tags=["t"], acceptance_criteria=["c"])

    cleared = tasks.update(
        task.id, description=None, hints="", estimated_turns=None, tags=None, acceptance_criteria=[]
    )

    assert (cleared.description, cleared.hints, cleared.estimated_turns) == (None, None, None)
    assert (cleared.tags, cleared.acceptance_criteria) == ((), ())


def test_updating_an_unknown_field_lists_the_allowed_ones(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    task = make()

    with pytest.raises(InvalidValueError) as caught:
        tasks.update(task.id, status="done")

    assert str(caught.value).startswith(
        "invalid field: 'status'; allowed: one of title, description, priority"
    )
    assert "pseudocode" in caught.value.allowed


def test_an_invalid_update_changes_nothing(tasks: TaskService, make: Callable[..., Task]) -> None:
    task = make("Keep")

    with pytest.raises(InvalidValueError, match="invalid title: None"):
        tasks.update(task.id, priority="high", title=None)
    with pytest.raises(NotFoundError, match="no discipline 'qa'"):
        tasks.update(task.id, title="Changed", discipline="qa")

    assert tasks.get(task.id) == task


def test_updating_an_unknown_task_is_not_found(tasks: TaskService) -> None:
    with pytest.raises(NotFoundError, match="no task 7"):
        tasks.update(7, title="x")


def test_an_empty_update_changes_nothing_and_notifies_no_one(
    tasks: TaskService, make: Callable[..., Task], heard: list[Change]
) -> None:
    task = make()
    heard.clear()

    assert tasks.update(task.id) == task
    assert heard == []


def test_updating_dependencies_replaces_them_and_notifies_dependencies(
    tasks: TaskService, make: Callable[..., Task], heard: list[Change]
) -> None:
    first, second, third = make("1"), make("2"), make("3")
    task = make("4", depends_on=[first.id, second.id])
    heard.clear()

    updated = tasks.update(task.id, depends_on=[third.id, second.id])

    assert updated.depends_on == (second.id, third.id)
    assert tasks.dependents(first.id) == []
    assert Change("dependencies", (task.id,)) in heard


# --- statuses ----------------------------------------------------------------------------------------


def test_starting_a_task_stamps_started_at(tasks: TaskService, make: Callable[..., Task]) -> None:
    task = make()

    started = tasks.move(task.id, "in_progress", Mover.IMPORT)

    assert started.status is TaskStatus.IN_PROGRESS
    assert started.started_at is not None
    assert started.completed_at is None


def test_finishing_a_task_stamps_completed_at_and_reopening_clears_it(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    task = make()
    started = tasks.move(task.id, "in_progress", Mover.IMPORT)

    done = tasks.move(task.id, "done", Mover.IMPORT)
    assert done.completed_at is not None
    assert done.completed_at >= (started.started_at or datetime.max)

    reopened = tasks.move(task.id, "pending", Mover.IMPORT)
    assert reopened.completed_at is None
    assert reopened.started_at == started.started_at


@pytest.mark.parametrize("status", list(TaskStatus))
def test_a_task_can_be_set_to_any_status(
    tasks: TaskService, make: Callable[..., Task], status: TaskStatus
) -> None:
    assert tasks.move(make().id, status.value, Mover.IMPORT).status is status


def test_an_unknown_status_is_refused_listing_every_status(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    task = make()

    with pytest.raises(
        InvalidValueError, match=re.escape(f"invalid status: 'completed'; allowed: one of {ALL_STATUSES}")
    ):
        tasks.move(task.id, "completed", Mover.IMPORT)
    assert tasks.get(task.id) == task


def test_setting_the_same_status_again_notifies_no_one(
    tasks: TaskService, make: Callable[..., Task], heard: list[Change]
) -> None:
    task = make()
    tasks.move(task.id, "blocked", Mover.IMPORT)
    heard.clear()

    tasks.move(task.id, "blocked", Mover.IMPORT)

    assert heard == []


def test_enriching_a_draft_gives_it_pseudocode_and_makes_it_pending(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    draft = make(status="draft", acceptance_criteria=["old"], context_files=["a.py"])

    enriched = tasks.enrich(
        draft.id, "1. read\n2. write", acceptance_criteria=["new"], context_files=["b.py"]
    )

    assert enriched.status is TaskStatus.PENDING
    assert enriched.pseudocode == "1. read\n2. write"
    assert (enriched.acceptance_criteria, enriched.context_files) == (("new",), ("b.py",))


def test_enriching_without_criteria_or_files_keeps_the_existing_ones(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    draft = make(status="draft", acceptance_criteria=["keep"], context_files=["keep.py"])

    enriched = tasks.enrich(draft.id, "plan")

    assert (enriched.acceptance_criteria, enriched.context_files) == (("keep",), ("keep.py",))


def test_only_a_draft_can_be_enriched(tasks: TaskService, make: Callable[..., Task]) -> None:
    task = make()

    with pytest.raises(ConflictError, match=rf"task #{task.id} is not a draft \(its status is 'pending'\)"):
        tasks.enrich(task.id, "plan")

    assert tasks.get(task.id).pseudocode is None


def test_enriching_needs_pseudocode(tasks: TaskService, make: Callable[..., Task]) -> None:
    draft = make(status="draft")

    with pytest.raises(InvalidValueError, match="invalid pseudocode: ''; allowed: a non-empty text"):
        tasks.enrich(draft.id, "")

    assert tasks.get(draft.id).status is TaskStatus.DRAFT


def test_a_context_file_is_added_once_and_normalised(tasks: TaskService, make: Callable[..., Task]) -> None:
    task = make(context_files=["a.py"])

    tasks.add_context_file(task.id, "src\\b.py")
    again = tasks.add_context_file(task.id, "src/b.py")

    assert again.context_files == ("a.py", "src/b.py")


@pytest.mark.parametrize("path", ["/etc/passwd", "../secrets.txt", "src/../../x", ""])
def test_a_context_file_outside_the_project_is_refused(
    tasks: TaskService, make: Callable[..., Task], path: str
) -> None:
    task = make()

    with pytest.raises(InvalidValueError, match=re.escape(f"invalid file_path: {path!r}")):
        tasks.add_context_file(task.id, path)

    assert tasks.get(task.id).context_files == ()


def test_stuck_counts_go_up_one_at_a_time_and_back_to_zero(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    task = make()

    assert [tasks.increment_stuck(task.id) for _ in range(3)] == [1, 2, 3]
    assert tasks.get(task.id).stuck_count == 3

    tasks.reset_stuck(task.id)
    assert tasks.get(task.id).stuck_count == 0


def test_stuck_counts_of_an_unknown_task_are_not_found(tasks: TaskService) -> None:
    with pytest.raises(NotFoundError, match="no task 5"):
        tasks.increment_stuck(5)
    with pytest.raises(NotFoundError, match="no task 5"):
        tasks.reset_stuck(5)


# --- dependencies ------------------------------------------------------------------------------------


def test_dependencies_can_be_added_listed_and_removed(tasks: TaskService, make: Callable[..., Task]) -> None:
    base, task, other = make("Base"), make("Task"), make("Other")

    assert tasks.add_dependency(task.id, base.id).depends_on == (base.id,)
    assert tasks.add_dependency(task.id, base.id).depends_on == (base.id,)
    tasks.add_dependency(other.id, base.id)
    assert tasks.dependents(base.id) == [task.id, other.id]

    assert tasks.remove_dependency(task.id, base.id).depends_on == ()
    assert tasks.dependents(base.id) == [other.id]


def test_removing_a_dependency_that_is_not_there_is_not_found(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    base, other = make("Base"), make("Other")
    task = make("Task", depends_on=[base.id])

    with pytest.raises(NotFoundError, match=f"no dependency '#{task.id} → #{other.id}'"):
        tasks.remove_dependency(task.id, other.id)


def test_a_dependency_on_an_unknown_task_is_not_found(tasks: TaskService, make: Callable[..., Task]) -> None:
    task = make()

    with pytest.raises(NotFoundError, match="no task 404"):
        tasks.add_dependency(task.id, 404)
    with pytest.raises(NotFoundError, match="no task 404"):
        tasks.add_dependency(404, task.id)
    with pytest.raises(NotFoundError, match="no task 404"):
        tasks.dependents(404)


def test_a_task_cannot_depend_on_itself(tasks: TaskService, make: Callable[..., Task]) -> None:
    task = make()

    with pytest.raises(ConflictError, match=f"task #{task.id} cannot depend on itself"):
        tasks.add_dependency(task.id, task.id)
    with pytest.raises(ConflictError, match=f"task #{task.id} cannot depend on itself"):
        tasks.update(task.id, depends_on=[task.id])


def test_a_dependency_that_closes_a_cycle_is_refused_naming_the_cycle(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    first = make("First")
    second = make("Second", depends_on=[first.id])

    with pytest.raises(ConflictError, match=f"the cycle #{first.id} → #{second.id} → #{first.id}"):
        tasks.add_dependency(first.id, second.id)

    assert tasks.get(first.id).depends_on == ()


def test_a_long_cycle_is_named_step_by_step(tasks: TaskService, make: Callable[..., Task]) -> None:
    a = make("A")
    b = make("B", depends_on=[a.id])
    c = make("C", depends_on=[b.id])

    with pytest.raises(ConflictError) as caught:
        tasks.update(a.id, depends_on=[c.id])

    assert f"#{a.id} → #{c.id} → #{b.id} → #{a.id}" in str(caught.value)
    assert tasks.get(a.id).depends_on == ()


def test_replacing_dependencies_may_drop_an_edge_that_would_have_closed_a_cycle(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    a = make("A")
    b = make("B")
    a = tasks.add_dependency(a.id, b.id)

    swapped = tasks.update(a.id, depends_on=[])
    flipped = tasks.update(b.id, depends_on=[a.id])

    assert (swapped.depends_on, flipped.depends_on) == ((), (a.id,))


def test_dependency_changes_notify_tasks_and_dependencies(
    tasks: TaskService, make: Callable[..., Task], heard: list[Change]
) -> None:
    base, task = make("Base"), make("Task")
    heard.clear()

    tasks.add_dependency(task.id, base.id)
    tasks.remove_dependency(task.id, base.id)

    assert heard == [Change("tasks", (task.id,)), Change("dependencies", (task.id,))] * 2


# --- delete ------------------------------------------------------------------------------------------


def test_deleting_a_task_removes_it_its_comments_and_its_own_dependencies(
    tasks: TaskService, comments: CommentService, make: Callable[..., Task], heard: list[Change]
) -> None:
    base = make("Base")
    task = make("Task", depends_on=[base.id])
    comments.add(task.id, "human", "note")
    heard.clear()

    tasks.delete(task.id)

    with pytest.raises(NotFoundError):
        tasks.get(task.id)
    assert tasks.dependents(base.id) == []
    assert heard == [Change("tasks", (task.id,)), Change("dependencies", (task.id,))]
    tasks.delete(base.id)
    assert tasks.list() == []


def test_deleting_a_task_takes_its_signals_along_and_unlinks_learnings_found_on_it(
    db: Database, tasks: TaskService, features: FeatureService, make: Callable[..., Task]
) -> None:
    task = make()
    SignalService(db).record(task.id, "s-1", "flag", what="Flaky test", severity="info", category="bug")
    learning, _ = features.append_learning("core", "Use UTC everywhere", task_id=task.id)

    tasks.delete(task.id)

    with db.read() as unit:
        assert unit.session.scalar(select(func.count(TaskSignalRow.id))) == 0
    assert features.get("core").learnings[0].id == learning.id
    assert features.get("core").learnings[0].task_id is None


def test_deleting_a_task_others_depend_on_is_a_conflict_naming_them(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    base = make("Base")
    first = make("First", depends_on=[base.id])
    second = make("Second", depends_on=[base.id])

    with pytest.raises(
        ConflictError, match=rf"task #{base.id} is depended on by tasks #{first.id}, #{second.id};"
    ):
        tasks.delete(base.id)

    assert tasks.get(base.id).title == "Base"


def test_deleting_an_unknown_task_is_not_found(tasks: TaskService) -> None:
    with pytest.raises(NotFoundError, match="no task 3"):
        tasks.delete(3)


# --- the next task and its claim ---------------------------------------------------------------------


def test_only_pending_tasks_whose_dependencies_are_all_done_are_runnable(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    done = make("Done")
    tasks.move(done.id, "done", Mover.IMPORT)
    skipped = make("Skipped")
    tasks.move(skipped.id, "skipped", Mover.IMPORT)
    waiting = make("Waits for pending")
    ready = make("Ready", depends_on=[done.id])
    blocked_by_pending = make("Blocked by pending", depends_on=[done.id, waiting.id])
    blocked_by_skipped = make("Blocked by skipped", depends_on=[skipped.id])
    make("Draft", status="draft")
    running = make("Running")
    tasks.move(running.id, "in_progress", Mover.IMPORT)

    runnable = _ids(tasks.next_runnable(limit=10))

    assert runnable == [waiting.id, ready.id]
    assert blocked_by_pending.id not in runnable
    assert blocked_by_skipped.id not in runnable


def test_the_most_urgent_task_runs_first_then_the_oldest(
    db: Database, tasks: TaskService, make: Callable[..., Task]
) -> None:
    low = make("Low", priority="low")
    medium_new = make("Medium, newer", priority="medium")
    medium_old = make("Medium, older", priority="medium")
    critical = make("Critical", priority="critical")
    high = make("High", priority="high")
    _age(db, medium_new, days=1)
    _age(db, medium_old, days=2)

    assert _ids(tasks.next_runnable(limit=10)) == [critical.id, high.id, medium_old.id, medium_new.id, low.id]
    assert _ids(tasks.next_runnable()) == [critical.id]


def test_nothing_is_runnable_when_every_task_waits(tasks: TaskService, make: Callable[..., Task]) -> None:
    make("Draft", status="draft")
    base = make("Base")
    tasks.move(base.id, "needs_input", Mover.IMPORT)
    make("Dependent", depends_on=[base.id])

    assert tasks.next_runnable(limit=5) == []
    assert tasks.claim_next() is None


def test_claiming_marks_the_next_task_in_progress_and_stamps_it(
    tasks: TaskService, make: Callable[..., Task], heard: list[Change]
) -> None:
    later = make("Later", priority="low")
    first = make("First", priority="high")
    heard.clear()

    claimed = tasks.claim_next()

    assert claimed is not None
    assert claimed.id == first.id
    assert claimed.status is TaskStatus.IN_PROGRESS
    assert claimed.started_at is not None
    assert heard == [Change("tasks", (first.id,))]
    assert _ids(tasks.next_runnable(limit=5)) == [later.id]


def test_finishing_a_dependency_makes_its_dependent_claimable(
    tasks: TaskService, make: Callable[..., Task]
) -> None:
    base = make("Base", priority="low")
    dependent = make("Dependent", priority="critical", depends_on=[base.id])

    first = tasks.claim_next()
    assert first is not None and first.id == base.id
    assert tasks.claim_next() is None

    tasks.move(base.id, "done", Mover.IMPORT)
    second = tasks.claim_next()
    assert second is not None and second.id == dependent.id


def _claim_race(url: str, set_up: Callable[[TaskService], list[int]], claims_each: int) -> list[int]:
    """Two threads, each with its own database handle, claim `claims_each` times at once."""
    databases = [Database(url) for _ in range(2)]
    try:
        expected = set_up(TaskService(databases[0]))
        start = threading.Barrier(2, timeout=30)
        claimed: list[list[int]] = [[], []]
        errors: list[BaseException] = []

        def worker(index: int) -> None:
            service = TaskService(databases[index])
            try:
                start.wait()
                for _ in range(claims_each):
                    task = service.claim_next()
                    if task is not None:
                        claimed[index].append(task.id)
            except BaseException as error:  # reported to the test below
                errors.append(error)

        threads = [threading.Thread(target=worker, args=(index,)) for index in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []
        everything = claimed[0] + claimed[1]
        assert sorted(everything) == sorted(expected)
        return everything
    finally:
        for database in databases:
            database.dispose()


def _many_tasks(count: int) -> Callable[[TaskService], list[int]]:
    def set_up(service: TaskService) -> list[int]:
        priorities = list(Priority)
        return [
            service.create("core", "backend", f"Task {n}", priority=priorities[n % 4].value).id
            for n in range(count)
        ]

    return set_up


def test_two_threads_claiming_at_once_never_get_the_same_task(db_path: Path, tasks: TaskService) -> None:
    claimed = _claim_race(sqlite_url(db_path), _many_tasks(40), claims_each=25)

    assert len(claimed) == len(set(claimed)) == 40
    assert tasks.count_by_status()["in_progress"] == 40


# --- PostgreSQL (only when RALPH_DESK_TEST_POSTGRES_URL names a server to create databases on) ----------


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database, dropped afterwards."""
    if not POSTGRES_URL:
        pytest.skip("set RALPH_DESK_TEST_POSTGRES_URL to run the PostgreSQL tests")
    name = f"ralph_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def test_on_postgresql_two_threads_claiming_at_once_never_get_the_same_task(postgres_url: str) -> None:
    def set_up(service: TaskService) -> list[int]:
        database = service.db
        _set_up_project(database)
        return _many_tasks(40)(service)

    claimed = _claim_race(postgres_url, set_up, claims_each=25)

    assert len(claimed) == len(set(claimed)) == 40


def test_on_postgresql_search_filters_and_the_next_task_behave_as_on_sqlite(postgres_url: str) -> None:
    database = Database(postgres_url)
    try:
        _set_up_project(database)
        service = TaskService(database)
        percent = service.create("core", "backend", "Reach 50% coverage", priority="low")
        underscore = service.create("core", "backend", "snake_case names", tags=['say "hi"'], priority="high")
        dependent = service.create("ui", "docs", "Later", priority="critical", depends_on=[percent.id])

        assert _ids(service.search("%")) == [percent.id]
        assert _ids(service.search("_")) == [underscore.id]
        assert _ids(service.search('SAY "HI')) == [underscore.id]
        assert service.search("'; DROP TABLE tasks; --") == []
        assert _ids(service.list(feature="ui", discipline="docs")) == [dependent.id]
        assert _ids(service.next_runnable(limit=5)) == [underscore.id, percent.id]
        assert service.count_by_feature()["ui"]["pending"] == 1
        with pytest.raises(ConflictError, match=f"#{percent.id} → #{dependent.id} → #{percent.id}"):
            service.add_dependency(percent.id, dependent.id)
    finally:
        database.dispose()
