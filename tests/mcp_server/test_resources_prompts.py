"""The `ralph://` resources (readable whatever the recipe) and the IDE prompts, over the wire."""

from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from ralph_desk.domain.enums import Recipe
from ralph_desk.services.container import Services
from tests.mcp_server.conftest import ClientFactory, Demo

pytestmark = pytest.mark.anyio

STATIC = {"ralph://progress", "ralph://learnings", "ralph://prd", "ralph://codebase_map", "ralph://prompt"}
TEMPLATES = {"ralph://tasks/{task_id}", "ralph://features/{name}", "ralph://disciplines/{name}"}


async def test_resources_and_templates_are_listed(connect: ClientFactory) -> None:
    async with connect(Recipe.TASK_EXECUTION, task_id=1) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
    assert {str(resource.uri) for resource in resources} == STATIC
    assert {template.uri_template for template in templates} == TEMPLATES
    assert all(resource.description for resource in resources)
    assert all(template.mime_type == "application/json" for template in templates)


async def test_a_task_execution_session_reads_tasks_features_and_disciplines(
    connect: ClientFactory, demo: Demo
) -> None:
    async with connect(Recipe.TASK_EXECUTION, task_id=demo.login_form) as client:
        task = await client.read_resource(f"ralph://tasks/{demo.login_form}")
        feature = await client.read_resource("ralph://features/auth")
        discipline = await client.read_resource("ralph://disciplines/docs")
    task_json = json.loads(task.contents[0].text)  # type: ignore[union-attr]
    assert task.contents[0].mime_type == "application/json"
    assert (task_json["id"], task_json["title"], task_json["depends_on"]) == (
        demo.login_form,
        "Login form",
        [1],
    )
    feature_json = json.loads(feature.contents[0].text)  # type: ignore[union-attr]
    assert feature_json["learnings"][0]["text"] == "Passwords are hashed with argon2id."
    discipline_json = json.loads(discipline.contents[0].text)  # type: ignore[union-attr]
    assert discipline_json["disabled_tools"] == ["create_task", "set_task_status", "append_progress"]
    assert "s3cret" not in discipline.contents[0].text  # type: ignore[union-attr]


async def test_state_files_prd_and_placeholders_are_readable_under_any_recipe(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    services.state_files.append_progress("Login API done.")
    services.state_files.append_learning("Run migrations first.")
    services.paths.codebase_map.write_text("# Map\n\nsrc/ holds the app.\n", encoding="utf-8")
    async with connect(Recipe.DISCUSS) as client:
        progress = (await client.read_resource("ralph://progress")).contents[0]
        learnings = (await client.read_resource("ralph://learnings")).contents[0]
        prd = (await client.read_resource("ralph://prd")).contents[0]
        codebase_map = (await client.read_resource("ralph://codebase_map")).contents[0]
        prompt = (await client.read_resource("ralph://prompt")).contents[0]
    assert "Login API done." in progress.text  # type: ignore[union-attr]
    assert "Run migrations first." in learnings.text  # type: ignore[union-attr]
    stories = json.loads(prd.text)["userStories"]  # type: ignore[union-attr]
    assert [story["title"] for story in stories] == ["Login API", "Login form", "Catalog docs"]
    assert codebase_map.text == "# Map\n\nsrc/ holds the app.\n"  # type: ignore[union-attr]
    assert codebase_map.mime_type == "text/markdown"
    assert prompt.text.startswith("No session prompt yet")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("ralph://tasks/999", "no task 999"),
        ("ralph://tasks/first", "no task 'first'; allowed: a task id"),
        ("ralph://features/payments", "no feature 'payments'; known: auth, catalog"),
        ("ralph://disciplines/design", "no discipline 'design'; known: backend, docs, frontend"),
        ("ralph://nothing", "Unknown resource: ralph://nothing"),
    ],
)
async def test_an_unknown_resource_is_an_invalid_params_error_naming_it(
    connect: ClientFactory, demo: Demo, uri: str, message: str
) -> None:
    async with connect(Recipe.YAP) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(uri)
    assert raised.value.error.code == INVALID_PARAMS
    assert raised.value.error.message.startswith(message)
    assert raised.value.error.data == {"uri": uri}


async def test_the_three_prompts_are_listed_with_their_arguments(connect: ClientFactory) -> None:
    async with connect(Recipe.IDE) as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
    assert set(prompts) == {"run_ralph", "init_ralph", "understand_ralph"}
    assert prompts["run_ralph"].title == "Run Ralph with the current prompt"
    assert prompts["init_ralph"].title == "Initialize Ralph scaffolding"
    assert prompts["understand_ralph"].title == "Run understanding loop"
    arguments = prompts["run_ralph"].arguments or []
    assert [(argument.name, argument.required) for argument in arguments] == [
        ("max_iterations", False),
        ("allow_edits", False),
    ]
    assert all(argument.description for argument in arguments)


async def test_the_run_prompt_maps_to_loop_tool_calls_with_its_arguments(connect: ClientFactory) -> None:
    async with connect(Recipe.IDE) as client:
        result = await client.get_prompt("run_ralph", {"max_iterations": "3", "allow_edits": "TRUE"})
        defaults = await client.get_prompt("init_ralph", {})
        understand = await client.get_prompt("understand_ralph", {})
    text = result.messages[0].content.text  # type: ignore[union-attr]
    assert result.messages[0].role == "user"
    assert "`ralph_validate`" in text and "`ralph_history`" in text
    assert "`ralph_run` with max_iterations=3, dry_run=false, allow_edits=true, wait=true" in text
    assert "`ralph_init` with force=false" in defaults.messages[0].content.text  # type: ignore[union-attr]
    assert "`ralph_understand`" in understand.messages[0].content.text  # type: ignore[union-attr]
    assert "ralph://codebase_map" in understand.messages[0].content.text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        (
            "run_ralph",
            {"max_iterations": "many"},
            "invalid max_iterations: 'many'; allowed: a whole number from 0 to 10000 (0: no limit)",
        ),
        (
            "run_ralph",
            {"max_iterations": "9" * 5_000},  # past int()'s 4,300 digits: no bare "Error rendering prompt"
            f"invalid max_iterations: {'9' * 40!r}… (5,000 characters); "
            "allowed: a whole number from 0 to 10000 (0: no limit)",
        ),
        ("run_ralph", {"allow_edits": "yes"}, "invalid allow_edits: 'yes'; allowed: true or false"),
        ("init_ralph", {"force": "maybe"}, "invalid force: 'maybe'; allowed: true or false"),
    ],
)
async def test_a_prompt_argument_out_of_range_is_refused(
    connect: ClientFactory, name: str, arguments: dict[str, str], message: str
) -> None:
    async with connect(Recipe.IDE) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt(name, arguments)
    assert raised.value.error.code == INVALID_PARAMS and raised.value.error.message == message
