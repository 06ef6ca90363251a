"""What each session sees on the wire: its recipe's tools minus its discipline's, each fully described."""

from __future__ import annotations

import pytest

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.recipes import RECIPE_ALLOWED
from ralph_desk.domain.tools import ALL_TOOLS, REGISTRY
from ralph_desk.services.container import Services
from tests.mcp_server.conftest import DOCS_DISABLED, ClientFactory, Demo, error_of, ok, snapshot
from tests.support.seed_000 import SEED_000_ALLOWED, VERBS

pytestmark = pytest.mark.anyio


async def listed(connect: ClientFactory, recipe: Recipe, **context: object) -> set[str]:
    async with connect(recipe, **context) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize("recipe", list(Recipe), ids=str)
async def test_tools_list_of_each_recipe_is_exactly_what_the_recipe_allows(
    connect: ClientFactory, recipe: Recipe
) -> None:
    assert await listed(connect, recipe) == set(RECIPE_ALLOWED[recipe])


@pytest.mark.parametrize("recipe", list(SEED_000_ALLOWED), ids=str)
async def test_tools_list_of_each_interactive_recipe_matches_seed_000(
    connect: ClientFactory, recipe: Recipe
) -> None:
    assert await listed(connect, recipe) == SEED_000_ALLOWED[recipe]


async def test_task_execution_lists_the_eight_verbs_and_nothing_else(connect: ClientFactory) -> None:
    assert await listed(connect, Recipe.TASK_EXECUTION, task_id=1) == VERBS


async def test_understand_lists_only_read_only_tools(connect: ClientFactory) -> None:
    names = await listed(connect, Recipe.UNDERSTAND)
    assert names and all(REGISTRY[name].read_only for name in names)
    assert not any(name.startswith("ralph_") for name in names)


async def test_a_discipline_override_removes_its_tools_from_the_list(
    connect: ClientFactory, demo: Demo
) -> None:
    names = await listed(connect, Recipe.YAP, discipline="docs")
    assert names == SEED_000_ALLOWED[Recipe.YAP] - set(DOCS_DISABLED)
    assert "create_task" not in names and "set_task_status" not in names and "list_tasks" in names


async def test_a_discipline_override_never_adds_a_tool(connect: ClientFactory) -> None:
    names = await listed(connect, Recipe.DISCUSS, discipline="x", discipline_disabled=frozenset({"get_task"}))
    assert names == SEED_000_ALLOWED[Recipe.DISCUSS]


async def test_a_tool_the_discipline_disables_is_refused_naming_the_discipline(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    before = snapshot(services)
    async with connect(Recipe.YAP, discipline="docs") as client:
        result = await client.call_tool(
            "create_task", {"feature": "auth", "discipline": "docs", "title": "Document login"}
        )
    message = error_of(result)
    assert "create_task" in message and "discipline 'docs'" in message and "recipe 'yap'" in message
    assert snapshot(services) == before


async def test_a_tool_the_recipe_does_not_allow_is_refused_listing_what_it_allows(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    before = snapshot(services)
    async with connect(Recipe.BRAINDUMP) as client:
        result = await client.call_tool("set_task_status", {"id": demo.login_api, "status": "done"})
    message = error_of(result)
    assert "recipe 'braindump' does not allow it" in message
    assert "(allowed: list_tasks, create_task," in message and "get_project_info)" in message
    assert snapshot(services) == before


async def test_a_verb_is_refused_outside_task_execution(connect: ClientFactory, services: Services) -> None:
    before = snapshot(services)
    async with connect(Recipe.IDE) as client:
        message = error_of(await client.call_tool("done", {"summary": "All done."}))
    assert "'done'" in message and "recipe 'ide'" in message
    assert snapshot(services) == before


async def test_task_execution_refuses_data_tools(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.TASK_EXECUTION, task_id=demo.login_api) as client:
        message = error_of(await client.call_tool("get_task", {"id": demo.login_api}))
    assert "recipe 'task_execution' does not allow it" in message and "allowed: done, partial" in message


async def test_a_verb_without_a_task_in_the_session_is_refused_clearly(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    before = snapshot(services)
    async with connect(Recipe.TASK_EXECUTION, session_id="s-9") as client:
        message = error_of(
            await client.call_tool("learned", {"text": "Something useful.", "kind": "discovery"})
        )
    assert "needs a session that serves a task" in message and "task_id" in message
    assert snapshot(services) == before


async def test_opus_review_may_not_change_a_task_title(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    before = snapshot(services)
    async with connect(Recipe.OPUS_REVIEW) as client:
        result = await client.call_tool(
            "update_task", {"id": demo.login_api, "title": "Renamed", "priority": "low"}
        )
    message = error_of(result)
    assert (
        "recipe 'opus_review' may not set title" in message
        and "allowed: id, description, priority" in message
    )
    assert snapshot(services) == before


async def test_an_unknown_tool_name_is_refused_with_the_closest_names(connect: ClientFactory) -> None:
    async with connect(Recipe.YAP) as client:
        message = error_of(await client.call_tool("get_tasks", {"id": 1}))
    assert "unknown tool 'get_tasks'" in message and "get_task" in message


async def test_every_listed_tool_has_annotations_a_description_and_both_schemas(
    connect: ClientFactory,
) -> None:
    seen: set[str] = set()
    for recipe in Recipe:
        async with connect(recipe, task_id=1) as client:
            for tool in (await client.list_tools()).tools:
                spec = REGISTRY[tool.name]
                assert tool.description == spec.description and len(tool.description) > 20
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is spec.read_only
                assert tool.annotations.destructive_hint is spec.destructive
                assert tool.input_schema["type"] == "object"
                assert set(tool.input_schema.get("properties", {})) == set(spec.input_model.model_fields)
                assert tool.output_schema is not None and tool.output_schema["type"] == "object"
                assert tool.output_schema.get("properties")
                seen.add(tool.name)
    union = set().union(*RECIPE_ALLOWED.values())
    assert seen == union
    assert union == ALL_TOOLS  # every tool has a recipe that reaches it


async def test_destructive_tools_say_so_and_reads_say_they_are_read_only(connect: ClientFactory) -> None:
    async with connect(Recipe.IDE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["get_task"].annotations is not None and tools["get_task"].annotations.read_only_hint is True
    assert (
        tools["ralph_run"].annotations is not None and tools["ralph_run"].annotations.read_only_hint is False
    )


async def test_a_structured_result_matches_its_output_schema(connect: ClientFactory, demo: Demo) -> None:
    async with connect(Recipe.YAP) as client:
        tool = next(tool for tool in (await client.list_tools()).tools if tool.name == "get_task")
        task = ok(await client.call_tool("get_task", {"id": demo.login_api}))
    assert tool.output_schema is not None
    assert set(tool.output_schema["required"]) <= set(task)
    assert set(task) == set(tool.output_schema["properties"])


async def test_a_verb_for_a_session_task_that_does_not_exist_is_refused_naming_it(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    before = snapshot(services)
    async with connect(Recipe.TASK_EXECUTION, task_id=404, session_id="s-404") as client:
        message = error_of(await client.call_tool("done", {"summary": "Finished."}))
    assert "no task 404: the session's task does not exist" in message
    assert snapshot(services) == before
