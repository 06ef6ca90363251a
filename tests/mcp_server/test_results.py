"""Results read from the domain records: every field a result carries is what its record holds."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from ralph_desk.mcp_server.results import (
    BRIEF_TEXT,
    CommentResult,
    DisciplineDetail,
    FeatureBrief,
    FeatureDetail,
    LearningResult,
    McpServerInfo,
    ProjectInfo,
    TaskBrief,
    TaskDetail,
)
from ralph_desk.services.container import Services
from tests.mcp_server.conftest import Demo


def _as_result(value: Any) -> Any:
    """A record's value as a result holds it: tuples as lists, stored (naive UTC) times as aware UTC."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC)
    if isinstance(value, tuple | list):
        return [_as_result(item) for item in value]
    return value


def assert_carries(result: BaseModel, record: object, *derived: str) -> None:
    """Each field of `result` (but the `derived` ones) equals the record's attribute of that name."""
    assert is_dataclass(record)
    names = {field.name for field in fields(record)}
    for name, value in result:
        if name in derived:
            continue
        assert name in names, f"{type(result).__name__}.{name} is no field of {type(record).__name__}"
        if isinstance(value, list) and value and isinstance(value[0], BaseModel):
            for item, source in zip(value, getattr(record, name), strict=True):
                assert_carries(item, source)
            continue
        assert value == _as_result(getattr(record, name)), name


def test_a_task_detail_is_the_task_record_with_its_comments(services: Services, demo: Demo) -> None:
    task = services.tasks.get(demo.login_api)

    detail = TaskDetail.model_validate(task)

    assert_carries(detail, task)
    assert [comment.id for comment in detail.comments] == [demo.comment]
    assert detail.created_at.tzinfo is UTC
    assert_carries(TaskBrief.model_validate(task), task)
    summary = services.tasks.list()[0]
    assert_carries(TaskBrief.model_validate(summary), summary)


def test_a_comment_result_is_the_comment_record(services: Services, demo: Demo) -> None:
    comment = services.tasks.get(demo.login_api).comments[0]
    assert_carries(CommentResult.model_validate(comment), comment)


def test_a_feature_detail_is_the_feature_record_with_its_learnings(services: Services, demo: Demo) -> None:
    feature = services.features.get("auth")

    detail = FeatureDetail.model_validate(feature)

    assert_carries(detail, feature)
    assert [learning.text for learning in detail.learnings] == ["Passwords are hashed with argon2id."]
    assert_carries(LearningResult.model_validate(feature.learnings[0]), feature.learnings[0])


def test_a_feature_brief_cuts_a_long_description(services: Services, demo: Demo) -> None:
    services.features.update("catalog", description="word " * 200)
    feature = services.features.get("catalog")

    brief = FeatureBrief.model_validate(feature)

    assert_carries(brief, feature, "description")
    assert brief.description is not None and len(brief.description) == BRIEF_TEXT
    assert feature.description is not None and feature.description.startswith(brief.description[:-1])


def test_a_discipline_detail_withholds_the_values_of_environments_and_headers(
    services: Services, demo: Demo
) -> None:
    discipline = services.disciplines.get("docs")

    detail = DisciplineDetail.model_validate(discipline)

    assert_carries(detail, discipline, "mcp_servers")
    (server,) = detail.mcp_servers
    assert server == McpServerInfo(name="search", command="docs-search", args=["--stdio"], env=["API_KEY"])
    assert "s3cret" not in detail.model_dump_json()


def test_the_project_info_is_the_project_record(services: Services, demo: Demo) -> None:
    project = services.project.get()
    assert_carries(ProjectInfo.model_validate(project), project)
