"""The project row and the progress report."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Change
from ralph_desk.services.errors import InvalidValueError, NotFoundError
from ralph_desk.services.project_info import ProjectInfoService
from ralph_desk.store.database import Database
from ralph_desk.store.schema import ProjectRow
from tests.services.conftest import Desk

ALL_ZERO = {status.value: 0 for status in TaskStatus}


@pytest.fixture
def project(db: Database) -> ProjectInfoService:
    return ProjectInfoService(db)


def test_a_database_without_project_says_to_run_init(project: ProjectInfoService) -> None:
    with pytest.raises(NotFoundError) as caught:
        project.get()
    assert str(caught.value) == (
        "this database has no project yet; run `ralph-desk init` in the project folder to create it"
    )


def test_setting_the_project_creates_it_once_and_then_changes_it(
    project: ProjectInfoService, db: Database, changes: list[Change]
) -> None:
    created = project.set("Tide Tables", "Charts of the tides.")
    assert (created.title, created.description) == ("Tide Tables", "Charts of the tides.")
    assert project.get() == created

    changed = project.set("Tide Tables 2")

    assert (changed.title, changed.description) == ("Tide Tables 2", "")
    assert changed.created_at == created.created_at
    with db.read() as unit:
        assert unit.session.scalar(select(func.count(ProjectRow.id))) == 1
    assert [change.topic for change in changes] == ["project", "project"]


@pytest.mark.parametrize(
    ("title", "description", "message"),
    [
        ("", "", "invalid title: ''; allowed: a non-empty text"),
        ("t" * 201, "", "invalid title: '<201 characters>'; allowed: at most 200 characters"),
        ("Tides", "nul\x00", "invalid description: 'nul\\x00'; allowed: a text without NUL characters"),
        ("Tides", 5, "invalid description: 5; allowed: a text"),
    ],
)
def test_a_bad_title_or_description_is_refused(
    project: ProjectInfoService, title: str, description: object, message: str
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        project.set(title, description)  # type: ignore[arg-type]
    assert str(caught.value) == message
    with pytest.raises(NotFoundError):
        project.get()


def test_sql_in_the_title_is_kept_as_text(project: ProjectInfoService) -> None:
    title = "Tides'; DROP TABLE project; --"
    project.set(title)
    assert project.get().title == title


def test_progress_of_an_empty_project_is_zero_everywhere(project: ProjectInfoService, desk: Desk) -> None:
    assert project.progress() == {
        "total": 0,
        "done": 0,
        "by_status": ALL_ZERO,
        "by_feature": {
            "charts": {"total": 0, "done": 0, "by_status": ALL_ZERO},
            "tides": {"total": 0, "done": 0, "by_status": ALL_ZERO},
        },
        "percent_done": 0.0,
    }


def test_progress_counts_every_status_overall_and_per_feature(
    project: ProjectInfoService, desk: Desk
) -> None:
    done_chart = desk.task("Chart", feature="charts")
    desk.task("Legend", feature="charts")
    blocked_tide = desk.task("Tides", feature="tides")
    desk.tasks.move(done_chart.id, TaskStatus.DONE.value, Mover.IMPORT)
    desk.tasks.move(blocked_tide.id, TaskStatus.BLOCKED.value, Mover.IMPORT)

    progress = project.progress()

    assert (progress["total"], progress["done"], progress["percent_done"]) == (3, 1, 33.3)
    assert progress["by_status"] == {**ALL_ZERO, "done": 1, "pending": 1, "blocked": 1}
    assert progress["by_feature"]["charts"] == {
        "total": 2,
        "done": 1,
        "by_status": {**ALL_ZERO, "done": 1, "pending": 1},
    }
    assert progress["by_feature"]["tides"] == {"total": 1, "done": 0, "by_status": {**ALL_ZERO, "blocked": 1}}


def test_a_project_with_every_task_done_is_one_hundred_percent_done(
    project: ProjectInfoService, desk: Desk
) -> None:
    for title in ("Chart", "Legend"):
        desk.tasks.move(desk.task(title).id, TaskStatus.DONE.value, Mover.IMPORT)
    assert project.progress()["percent_done"] == 100.0
