"""DisciplineService: fields, the tools a discipline takes away, extra MCP servers, conflicts."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import select

from ralph_desk.domain.records import Change, McpServerSpec
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.features import FeatureService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store.database import Database
from ralph_desk.store.schema import DisciplineRow

SHADCN: dict[str, Any] = {"command": "npx", "args": ["-y", "@shadcn/mcp"], "env": {"NODE_ENV": "production"}}
URL = "https://a.dev"
DOCS: dict[str, Any] = {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer abc"}}


def _create(disciplines: DisciplineService, name: str = "frontend", **extra: Any) -> Any:
    return disciplines.create(name, name.title(), "palette", "#FF8800", **extra)


def _stored_servers(db: Database, name: str) -> dict[str, Any]:
    with db.read() as unit:
        row = unit.session.scalar(select(DisciplineRow).where(DisciplineRow.name == name))
        assert row is not None
        return dict(row.mcp_servers)


def test_a_created_discipline_keeps_every_field(disciplines: DisciplineService) -> None:
    created = disciplines.create(
        "frontend",
        "Frontend",
        "palette",
        "#FF8800",
        acronym="FE",
        system_prompt="You build UIs.",
        skills=["react", " css ", "react"],
        conventions="Use hooks.",
        disabled_tools=["set_task_status", "create_task", "set_task_status"],
        mcp_servers={"shadcn": SHADCN, "docs": DOCS},
    )

    assert created == disciplines.get("frontend")
    assert (created.display_name, created.icon, created.acronym) == ("Frontend", "palette", "FE")
    assert created.color == "#ff8800"
    assert (created.system_prompt, created.conventions) == ("You build UIs.", "Use hooks.")
    assert created.skills == ("react", "css")
    assert created.disabled_tools == ("create_task", "set_task_status")
    assert created.mcp_servers == (
        McpServerSpec("docs", url=DOCS["url"], headers={"Authorization": "Bearer abc"}),
        McpServerSpec("shadcn", command="npx", args=("-y", "@shadcn/mcp"), env={"NODE_ENV": "production"}),
    )


def test_extra_mcp_servers_are_stored_as_the_json_handed_to_agents(
    db: Database, disciplines: DisciplineService
) -> None:
    _create(disciplines, mcp_servers={"shadcn": SHADCN, "docs": DOCS})

    assert _stored_servers(db, "frontend") == {
        "shadcn": SHADCN,
        "docs": {"type": "http", **DOCS},
    }


def test_mcp_servers_read_back_can_be_written_back_unchanged(
    db: Database, disciplines: DisciplineService
) -> None:
    servers = {"shadcn": SHADCN, "docs": {"type": "http", "url": DOCS["url"]}}
    created = _create(disciplines, mcp_servers=servers)

    updated = disciplines.update("frontend", mcp_servers=created.mcp_servers)

    assert updated.mcp_servers == created.mcp_servers
    assert _stored_servers(db, "frontend")["docs"] == {"type": "http", "url": DOCS["url"]}


def test_disciplines_are_listed_by_name(disciplines: DisciplineService) -> None:
    _create(disciplines, "qa")
    _create(disciplines, "backend")

    assert [discipline.name for discipline in disciplines.list()] == ["backend", "qa"]


def test_an_unknown_discipline_is_not_found_with_the_known_names(disciplines: DisciplineService) -> None:
    _create(disciplines, "backend")

    with pytest.raises(NotFoundError, match="no discipline 'docs'; known: backend"):
        disciplines.get("docs")


def test_a_second_discipline_with_the_same_name_is_a_conflict(disciplines: DisciplineService) -> None:
    _create(disciplines)

    with pytest.raises(ConflictError, match="a discipline named 'frontend' already exists"):
        _create(disciplines)


@pytest.mark.parametrize(
    ("field", "kwargs", "bad", "allowed"),
    [
        ("name", {"name": "Front End"}, "Front End", "1-64 characters of a-z"),
        ("display_name", {"display_name": ""}, "", "a non-empty text"),
        ("icon", {"icon": "two words"}, "two words", "an icon name"),
        ("icon", {"icon": ""}, "", "an icon name"),
        ("color", {"color": "red"}, "red", "a hex colour '#rrggbb'"),
        ("color", {"color": "#abc"}, "#abc", "a hex colour '#rrggbb'"),
        ("color", {"color": "#12345g"}, "#12345g", "a hex colour '#rrggbb'"),
        ("acronym", {"acronym": "FRONT-END"}, "FRONT-END", "1-10 letters or digits"),
        ("skills", {"skills": "react"}, "react", "a list of texts"),
        ("skills[1]", {"skills": ["react", " "]}, " ", "a non-empty text"),
        ("system_prompt", {"system_prompt": "x" * 20_001}, "<20001 characters>", "at most 20000 characters"),
        ("disabled_tools", {"disabled_tools": ["craete_task"]}, "craete_task", "did you mean: create_task"),
        (
            "disabled_tools",
            {"disabled_tools": ["nope", "create_task", "zilch"]},
            ["nope", "zilch"],
            "names of registered tools",
        ),
    ],
)
def test_an_invalid_discipline_field_is_refused_naming_field_value_and_what_is_allowed(
    disciplines: DisciplineService, field: str, kwargs: dict[str, Any], bad: object, allowed: str
) -> None:
    arguments: dict[str, Any] = {"name": "frontend", "display_name": "Frontend", "icon": "palette"}
    arguments["color"] = "#ff8800"
    arguments.update(kwargs)

    with pytest.raises(InvalidValueError) as caught:
        disciplines.create(**arguments)

    assert (caught.value.field, caught.value.value) == (field, bad)
    assert allowed in caught.value.allowed
    assert str(caught.value).startswith(f"invalid {field}: ")
    assert disciplines.list() == []


@pytest.mark.parametrize(
    ("servers", "field", "allowed"),
    [
        ({"both": {"command": "npx", "url": "https://x.dev"}}, "mcp_servers['both']", "exactly one of"),
        ({"neither": {"args": ["-y"]}}, "mcp_servers['neither']", "exactly one of"),
        ({"ralph": SHADCN}, "mcp_servers name", "any name but 'ralph'"),
        ({"Bad Name": SHADCN}, "mcp_servers name", "1-64 characters of a-z"),
        ({"x": "npx -y thing"}, "mcp_servers['x']", "{'command': str"),
        ({"x": {"cmd": "npx"}}, "mcp_servers['x'] key", "command, args, env, url, headers"),
        ({"x": {"command": ""}}, "mcp_servers['x'].command", "a non-empty text"),
        ({"x": {"command": "npx\nrm -rf /"}}, "mcp_servers['x'].command", "one line of text"),
        ({"x": {"command": "npx", "args": "-y"}}, "mcp_servers['x'].args", "a list of texts"),
        ({"x": {"command": "npx", "args": [3]}}, "mcp_servers['x'].args[0]", "a text"),
        ({"x": {"command": "npx", "env": {"1BAD": "v"}}}, "mcp_servers['x'].env key", "a variable name"),
        ({"x": {"command": "npx", "env": {"OK": 1}}}, "mcp_servers['x'].env['OK']", "a text"),
        ({"x": {"command": "npx", "headers": {}}}, "mcp_servers['x']", "only command, args and env"),
        ({"x": {"command": "npx", "type": "http"}}, "mcp_servers['x'].type", "'stdio'"),
        ({"x": {"url": "ftp://files.example.com"}}, "mcp_servers['x'].url", "an http:// or https:// URL"),
        ({"x": {"url": "https://"}}, "mcp_servers['x'].url", "with a host"),
        ({"x": {"url": "https://a.dev", "args": ["-y"]}}, "mcp_servers['x']", "only url and headers"),
        ({"x": {"url": "https://a.dev", "type": "sse"}}, "mcp_servers['x'].type", "'http'"),
        ({"x": {"url": URL, "headers": {"Bad Header": "v"}}}, "mcp_servers['x'].headers key", "header"),
        (
            {"x": {"url": URL, "headers": {"X-A": "v\r\nX-B: w"}}},
            "mcp_servers['x'].headers['X-A']",
            "one line",
        ),
        (["not", "specs"], "mcp_servers", "a mapping of server name"),
    ],
)
def test_an_invalid_mcp_server_is_refused_naming_where_and_what_is_allowed(
    disciplines: DisciplineService, servers: Any, field: str, allowed: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"invalid {re.escape(field)}: ") as caught:
        _create(disciplines, mcp_servers=servers)

    assert allowed in caught.value.allowed
    assert disciplines.list() == []


def test_a_server_spec_with_both_a_command_and_a_url_is_refused_not_trimmed(
    disciplines: DisciplineService,
) -> None:
    spec = McpServerSpec("mixed", command="npx", url="https://a.dev")

    with pytest.raises(InvalidValueError, match="exactly one of 'command' or 'url'"):
        _create(disciplines, mcp_servers=[spec])


def test_updating_changes_only_the_given_fields(disciplines: DisciplineService) -> None:
    _create(disciplines, system_prompt="Old", conventions="Keep")

    updated = disciplines.update("frontend", system_prompt="New", color="#000000", skills=["vue"])

    assert (updated.system_prompt, updated.conventions) == ("New", "Keep")
    assert (updated.color, updated.skills) == ("#000000", ("vue",))
    assert disciplines.get("frontend") == updated


def test_updating_with_none_or_blank_clears_an_optional_text(disciplines: DisciplineService) -> None:
    _create(disciplines, system_prompt="Old", conventions="Old", acronym="FE")

    updated = disciplines.update("frontend", system_prompt=None, conventions="  ", acronym=None)

    assert (updated.system_prompt, updated.conventions, updated.acronym) == (None, None, None)


def test_updating_an_unknown_field_lists_the_allowed_ones(disciplines: DisciplineService) -> None:
    _create(disciplines)

    with pytest.raises(InvalidValueError, match="invalid field: 'title'; allowed: one of display_name, icon"):
        disciplines.update("frontend", title="x")


def test_an_invalid_update_changes_nothing(disciplines: DisciplineService) -> None:
    before = _create(disciplines)

    with pytest.raises(InvalidValueError, match="invalid color"):
        disciplines.update("frontend", display_name="Renamed", color="blue")

    assert disciplines.get("frontend") == before


def test_updating_an_unknown_discipline_is_not_found(disciplines: DisciplineService) -> None:
    with pytest.raises(NotFoundError, match="no discipline 'ghost'"):
        disciplines.update("ghost", icon="x")


def test_an_empty_update_changes_nothing_and_notifies_no_one(
    db: Database, disciplines: DisciplineService
) -> None:
    before = _create(disciplines)
    heard: list[Change] = []
    db.subscribe(heard.extend)

    assert disciplines.update("frontend") == before
    assert heard == []


def test_set_disabled_tools_replaces_the_whole_set_in_registry_order(disciplines: DisciplineService) -> None:
    _create(disciplines, disabled_tools=["set_task_status"])

    updated = disciplines.set_disabled_tools("frontend", ["update_task", "list_tasks"])

    assert updated.disabled_tools == ("list_tasks", "update_task")
    assert disciplines.set_disabled_tools("frontend", []).disabled_tools == ()


def test_set_disabled_tools_with_an_unknown_tool_changes_nothing(disciplines: DisciplineService) -> None:
    _create(disciplines, disabled_tools=["set_task_status"])

    with pytest.raises(InvalidValueError, match="invalid disabled_tools: 'delete_everything'"):
        disciplines.set_disabled_tools("frontend", ["create_task", "delete_everything"])

    assert disciplines.get("frontend").disabled_tools == ("set_task_status",)


def test_deleting_an_unused_discipline_removes_it(disciplines: DisciplineService) -> None:
    _create(disciplines)

    disciplines.delete("frontend")

    assert disciplines.list() == []
    with pytest.raises(NotFoundError):
        disciplines.delete("frontend")


def test_deleting_a_discipline_used_by_tasks_is_a_conflict_naming_them(
    disciplines: DisciplineService, features: FeatureService, tasks: TaskService
) -> None:
    features.create("core", "Core")
    _create(disciplines, "docs")
    _create(disciplines, "backend")
    first = tasks.create("core", "docs", "Write the README")
    tasks.create("core", "backend", "Build the API")
    third = tasks.create("core", "docs", "Write the guide")

    with pytest.raises(ConflictError, match=rf"discipline 'docs' is used by tasks #{first.id}, #{third.id};"):
        disciplines.delete("docs")

    assert disciplines.get("docs").name == "docs"


def test_every_change_notifies_the_disciplines_topic(db: Database, disciplines: DisciplineService) -> None:
    heard: list[Change] = []
    db.subscribe(heard.extend)

    created = _create(disciplines)
    disciplines.update("frontend", icon="brush")
    disciplines.set_disabled_tools("frontend", ["create_task"])
    disciplines.delete("frontend")

    assert heard == [Change("disciplines", (created.id,))] * 4
