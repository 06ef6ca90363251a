"""prd.json: checking, importing (and re-importing) user stories, exporting tasks, the round trip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ralph_desk import prd
from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.project import ProjectPaths, init_project, read_config
from ralph_desk.services.container import Services

pytestmark = pytest.mark.usefixtures("no_database_url_from_the_environment")


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    opened = Services.open(init_project(tmp_path / "harbour", title="Harbour"))
    yield opened
    opened.close()


def story(number: int, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": f"US-{number:03d}",
        "title": f"Story {number}",
        "description": f"As a sailor I want thing {number}",
        "acceptanceCriteria": [f"criterion {number}a", f"criterion {number}b"],
        "priority": number,
        "passes": False,
    }
    base.update(fields)
    return base


def document(*stories: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "project": "Harbour",
        "branchName": "ralph/harbour",
        "description": "Tides",
        "userStories": list(stories),
        **top,
    }


def import_data(services: Services, data: Any, **options: Any) -> prd.ImportResult:
    return prd.import_document(services, prd.parse(data), **options)


# --- parsing -------------------------------------------------------------------------------------


def test_a_story_without_optional_fields_gets_defaults() -> None:
    parsed = prd.parse({"userStories": [{"id": "A", "title": "Only a title"}]})

    assert parsed.stories == (prd.Story(id="A", title="Only a title"),)
    assert (parsed.project, parsed.branch_name, parsed.description) == (None, None, None)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([], "(top level): must be an object with userStories, not a list"),
        ({}, "userStories: missing"),
        ({"userStories": {}}, "userStories: must be a list, not an object"),
        ({"userStories": ["x"]}, "userStories[0]: must be an object, not a text"),
        ({"userStories": [story(1), story(2), story(3), {"id": "US-4"}]}, "userStories[3].title: missing"),
        ({"userStories": [story(1, title="  ")]}, "userStories[0].title: must not be empty"),
        ({"userStories": [story(1, title=7)]}, "userStories[0].title: must be a text, not a number"),
        ({"userStories": [story(1, id="US 1")]}, "userStories[0].id: 'US 1' must not contain spaces"),
        (
            {"userStories": [story(1, priority=0)]},
            "userStories[0].priority: 0 is not allowed; allowed: a whole number ≥ 1",
        ),
        ({"userStories": [story(1, priority=True)]}, "userStories[0].priority: true is not allowed"),
        ({"userStories": [story(1, priority="high")]}, 'userStories[0].priority: "high" is not allowed'),
        (
            {"userStories": [story(1, passes="yes")]},
            'userStories[0].passes: "yes" is not allowed; allowed: true or false',
        ),
        (
            {"userStories": [story(1, acceptanceCriteria="all")]},
            "userStories[0].acceptanceCriteria: must be a list of texts",
        ),
        (
            {"userStories": [story(1, acceptanceCriteria=["ok", ""])]},
            "userStories[0].acceptanceCriteria[1]: must not be empty",
        ),
        (
            {"userStories": [story(1, title="x" * 501)]},
            "userStories[0].title: has 501 characters; at most 500 allowed",
        ),
        (
            {"userStories": [story(1, description="a\x00b")]},
            "userStories[0].description: contains a NUL character",
        ),
        ({"userStories": [story(1), story(1)]}, "userStories[1].id: 'US-001' repeats userStories[0].id"),
        ({"branchName": 3, "userStories": []}, "branchName: must be a text, not a number"),
    ],
)
def test_a_malformed_document_names_the_place_of_the_problem(data: Any, expected: str) -> None:
    with pytest.raises(prd.PrdError) as raised:
        prd.parse(data, source="prd.json")

    assert str(raised.value).startswith("prd.json: ")
    assert expected in str(raised.value)


def test_every_problem_is_reported_at_once() -> None:
    data = {"userStories": [{"id": "A"}, {"title": "B"}, story(3, passes=1)]}

    with pytest.raises(prd.PrdError) as raised:
        prd.parse(data)

    message = str(raised.value)
    assert "userStories[0].title: missing" in message
    assert "userStories[1].id: missing" in message
    assert "userStories[2].passes: 1 is not allowed" in message


def test_loading_a_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(prd.PrdError, match=r"nothing\.json: no such file"):
        prd.load(tmp_path / "nothing.json")


def test_loading_invalid_json_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "prd.json"
    path.write_text('{\n  "userStories": [,]\n}')

    with pytest.raises(prd.PrdError, match=r"prd.json: not valid JSON: .* at line 2, column 19"):
        prd.load(path)


def test_priority_levels_map_both_ways() -> None:
    assert [prd.level_of(rank) for rank in (1, 2, 3, 4, 9)] == [
        Priority.CRITICAL,
        Priority.HIGH,
        Priority.MEDIUM,
        Priority.LOW,
        Priority.LOW,
    ]
    assert [prd.rank_of(level) for level in Priority] == [4, 3, 2, 1]


# --- import --------------------------------------------------------------------------------------


def test_import_creates_a_task_per_story(services: Services) -> None:
    result = import_data(services, document(story(1), story(2, passes=True, notes="see the almanac")))

    assert len(result.created) == 2 and not result.updated and not result.unchanged
    first, second = (services.tasks.get(task_id) for task_id in result.created)
    assert first.title == "Story 1"
    assert first.description == "As a sailor I want thing 1"
    assert first.acceptance_criteria == ("criterion 1a", "criterion 1b")
    assert first.priority is Priority.CRITICAL
    assert first.status is TaskStatus.PENDING
    assert first.origin is TaskOrigin.IMPORT
    assert first.tags == ("prd:US-001",)
    assert second.status is TaskStatus.DONE
    assert second.priority is Priority.HIGH
    assert second.hints == "see the almanac"


def test_import_creates_the_general_feature_and_discipline_when_needed(services: Services) -> None:
    import_data(services, document(story(1)))

    task = services.tasks.get(services.tasks.list()[0].id)
    assert (task.feature, task.discipline) == ("general", "general")
    assert services.features.get("general").display_name == "General"
    assert services.disciplines.get("general").display_name == "General"


def test_import_puts_tasks_in_the_feature_and_discipline_asked_for(services: Services) -> None:
    services.features.create("tides", "Tides")
    services.disciplines.create("backend", "Backend", icon="server", color="#10b981")

    import_data(services, document(story(1)), feature="tides", discipline="backend")

    task = services.tasks.get(services.tasks.list()[0].id)
    assert (task.feature, task.discipline) == ("tides", "backend")
    assert [feature.name for feature in services.features.list()] == ["tides"]


def test_import_into_an_unknown_discipline_writes_nothing(services: Services) -> None:
    with pytest.raises(prd.PrdError, match="--discipline 'ops': no such discipline"):
        import_data(services, document(story(1)), discipline="ops")

    assert services.tasks.list() == []
    assert services.features.list() == []


def test_stories_are_created_in_priority_order(services: Services) -> None:
    result = import_data(services, document(story(3), story(1), story(2, priority=1)))

    titles = [services.tasks.get(task_id).title for task_id in sorted(result.created)]
    assert titles == ["Story 1", "Story 2", "Story 3"]


def test_importing_twice_updates_instead_of_duplicating(services: Services) -> None:
    import_data(services, document(story(1), story(2)))

    result = import_data(services, document(story(1, title="Story one, renamed"), story(2), story(3)))

    assert len(services.tasks.list()) == 3
    assert (len(result.created), len(result.updated), len(result.unchanged)) == (1, 1, 1)
    assert services.tasks.get(result.updated[0]).title == "Story one, renamed"


def test_a_story_that_now_passes_marks_its_task_done_and_back(services: Services) -> None:
    [task_id] = import_data(services, document(story(1))).created

    import_data(services, document(story(1, passes=True)))
    done = services.tasks.get(task_id).status
    import_data(services, document(story(1, passes=False)))

    assert done is TaskStatus.DONE
    assert services.tasks.get(task_id).status is TaskStatus.PENDING


def test_a_story_that_does_not_pass_leaves_a_task_in_progress_alone(services: Services) -> None:
    [task_id] = import_data(services, document(story(1))).created
    services.tasks.move(task_id, "needs_input", Mover.IMPORT)

    result = import_data(services, document(story(1)))

    assert result.unchanged == [task_id]
    assert services.tasks.get(task_id).status is TaskStatus.NEEDS_INPUT


def test_import_takes_the_description_and_branch_when_the_project_has_none(services: Services) -> None:
    import_data(
        services, document(story(1), description="Tide tables for harbours", branchName="ralph/tides")
    )

    assert services.project.get().description == "Tide tables for harbours"
    assert read_config(services.paths).base_branch == "ralph/tides"


def test_import_keeps_an_existing_project_description(services: Services) -> None:
    services.project.set("Harbour", "Our own words")

    import_data(services, document(story(1)))

    assert services.project.get().description == "Our own words"


# --- export --------------------------------------------------------------------------------------


def test_export_writes_every_task_but_drafts_most_urgent_first(services: Services) -> None:
    services.features.create("tides", "Tides")
    services.disciplines.create("backend", "Backend", icon="server", color="#10b981")
    low = services.tasks.create("tides", "backend", "Low one", priority="low")
    services.tasks.create("tides", "backend", "A draft", priority="critical", status="draft")
    high = services.tasks.create("tides", "backend", "High one", priority="high", hints="be quick")
    later_high = services.tasks.create("tides", "backend", "High two", priority="high")
    services.tasks.move(later_high.id, "done", Mover.IMPORT)

    exported = prd.export_document(services)

    assert exported["project"] == "Harbour"
    assert exported["branchName"] == "ralph/harbour"
    assert exported["userStories"] == [
        {
            "id": f"T-{high.id:03d}",
            "title": "High one",
            "description": "",
            "acceptanceCriteria": [],
            "priority": 2,
            "passes": False,
            "notes": "be quick",
        },
        {
            "id": f"T-{later_high.id:03d}",
            "title": "High two",
            "description": "",
            "acceptanceCriteria": [],
            "priority": 2,
            "passes": True,
            "notes": "",
        },
        {
            "id": f"T-{low.id:03d}",
            "title": "Low one",
            "description": "",
            "acceptanceCriteria": [],
            "priority": 4,
            "passes": False,
            "notes": "",
        },
    ]


def test_importing_an_export_matches_the_tasks_back(services: Services) -> None:
    services.features.create("tides", "Tides")
    services.disciplines.create("backend", "Backend", icon="server", color="#10b981")
    task = services.tasks.create("tides", "backend", "Keep me", priority="high")

    exported = prd.export_document(services)
    exported["userStories"][0]["title"] = "Keep me, edited"
    result = import_data(services, exported)

    assert result.updated == [task.id]
    assert len(services.tasks.list()) == 1
    assert services.tasks.get(task.id).tags == ()  # its exported id finds it again; no tag to add


def test_import_export_round_trip_keeps_the_stories(services: Services, tmp_path: Path) -> None:
    stories = [
        story(1, notes="start here"),
        story(2, passes=True),
        story(3, acceptanceCriteria=[]),
        story(4, description=""),
        {**story(5, priority=4), "id": "US-005"},
    ]
    source = tmp_path / "prd.json"
    source.write_text(json.dumps(document(*stories)))
    import_data(services, json.loads(source.read_text()))

    target = tmp_path / "out.json"
    prd.write(target, prd.export_document(services))
    exported = json.loads(target.read_text())

    assert exported["userStories"] == [{"notes": "", **given} for given in stories]
    assert exported["description"] == "Tides"
    assert exported["branchName"] == "ralph/harbour"


# The shape of snarktank/ralph's prd.json.example: every story has `notes`, empty ones "".
PEERS_EXAMPLE: dict[str, Any] = {
    "project": "MyApp",
    "branchName": "ralph/task-priority",
    "description": "Task Priority System - Add priority levels to tasks",
    "userStories": [
        {
            "id": "US-001",
            "title": "Add priority field to database",
            "description": "As a developer, I need to store task priority so it persists across sessions.",
            "acceptanceCriteria": [
                "Add priority column to tasks table: 'high' | 'medium' | 'low' (default 'medium')",
                "Generate and run migration successfully",
                "Typecheck passes",
            ],
            "priority": 1,
            "passes": True,
            "notes": "",
        },
        {
            "id": "US-002",
            "title": "Display priority indicator on task cards",
            "description": "As a user, I want to see task priority at a glance.",
            "acceptanceCriteria": ["Each task card shows colored priority badge", "Typecheck passes"],
            "priority": 2,
            "passes": False,
            "notes": "",
        },
        {
            "id": "US-003",
            "title": "Add priority selector to task edit",
            "description": "As a user, I want to change a task's priority when editing it.",
            "acceptanceCriteria": ["Priority dropdown in task edit modal", "Typecheck passes"],
            "priority": 3,
            "passes": False,
            "notes": "Reuse the existing dropdown component",
        },
    ],
}


def test_the_peers_example_comes_back_field_for_field(tmp_path: Path) -> None:
    # A project made by `init` without a title: its title is the folder's name until a prd.json names it.
    opened = Services.open(init_project(tmp_path / "myapp"))
    try:
        source = tmp_path / "prd.json"
        source.write_text(json.dumps(PEERS_EXAMPLE, indent=2))
        prd.import_document(opened, prd.load(source))
        target = tmp_path / "out.json"
        prd.write(target, prd.export_document(opened))
    finally:
        opened.close()

    assert json.loads(target.read_text()) == PEERS_EXAMPLE


def test_import_keeps_a_title_the_person_gave(services: Services) -> None:
    import_data(services, document(story(1), project="MyApp"))

    assert services.project.get().title == "Harbour"


def test_the_demo_exports_every_non_draft_task(tmp_path: Path) -> None:
    from ralph_desk.demo import create_demo

    paths = create_demo(tmp_path / "demo")
    services = Services.open(ProjectPaths.at(paths.root))
    try:
        exported = prd.export_document(services)
        drafts = len(services.tasks.list(status="draft"))
        total = len(services.tasks.list())
    finally:
        services.close()

    assert len(exported["userStories"]) == total - drafts
    ranks = [story["priority"] for story in exported["userStories"]]
    assert ranks == sorted(ranks)


def test_naming_the_general_feature_creates_it_too(services: Services) -> None:
    import_data(services, document(story(1)), feature="general", discipline="general")

    assert [feature.name for feature in services.features.list()] == ["general"]
