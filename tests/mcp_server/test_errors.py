"""Refused calls: each is a tool error saying what was wrong and what is allowed, and changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.services.container import Services
from tests.mcp_server.conftest import ClientFactory, Demo, error_of, snapshot, structured_error_of

pytestmark = pytest.mark.anyio

LONG = "x" * 20_001
MANY = [f"tag {index}" for index in range(201)]

# (recipe, tool, arguments, texts the message must contain), with the demo project's ids:
# 1 login_api (pending), 2 login_form (depends on 1), 3 search_draft (draft), 4 docs_page (done).
REFUSALS = [
    pytest.param(
        Recipe.YAP, "get_task", {"id": "first"}, ["id:", "valid integer", "'first'"], id="wrong type"
    ),
    pytest.param(
        Recipe.YAP,
        "update_task",
        {"id": 1, "tags": "api"},
        ["tags:", "valid list"],
        id="wrong type in a list",
    ),
    pytest.param(Recipe.YAP, "get_task", {"id": 0}, ["id:", "greater than or equal to 1"], id="id below 1"),
    pytest.param(
        Recipe.YAP,
        "create_task",
        {"feature": "auth", "discipline": "backend"},
        ["title: Field required (Short title saying what to do.)"],
        id="missing field",
    ),
    pytest.param(
        Recipe.YAP,
        "set_task_status",
        {"id": 1},
        ["status: Field required (The new status.)"],
        id="missing enum field",
    ),
    pytest.param(
        Recipe.YAP,
        "get_task",
        {"id": 1, "verbose": True},
        ["verbose: unexpected argument", "allowed arguments: id"],
        id="extra field",
    ),
    pytest.param(
        Recipe.BRAINDUMP,
        "list_features",
        {"all": True},
        ["all: unexpected argument", "allowed arguments: none"],
        id="extra field on a verbless tool",
    ),
    pytest.param(
        Recipe.YAP,
        "set_task_status",
        {"id": 1, "status": "finished"},
        ["status:", "'draft'", "'skipped'", "'finished'"],
        id="unknown enum value",
    ),
    pytest.param(
        Recipe.YAP,
        "set_task_status",
        {"id": 1, "status": "needs_input"},
        ["status:", "'blocked'"],
        id="status a human sets",
    ),
    pytest.param(
        Recipe.YAP,
        "create_task",
        {"feature": "auth", "discipline": "backend", "title": "T", "priority": "urgent"},
        ["priority:", "'low'", "'critical'", "'urgent'"],
        id="unknown priority",
    ),
    pytest.param(
        Recipe.YAP,
        "list_tasks",
        {"filter_status": "todo"},
        ["filter_status:", "'needs_input'"],
        id="unknown filter status",
    ),
    pytest.param(
        Recipe.YAP,
        "get_task",
        {"id": 999},
        ["no task 999", "allowed: the id of an existing task", "list_tasks"],
        id="unknown id",
    ),
    pytest.param(
        Recipe.YAP,
        "update_task",
        {"id": 1, "depends_on": [4, 999]},
        ["no task 999"],
        id="unknown dependency id",
    ),
    pytest.param(
        Recipe.OPUS_REVIEW,
        "add_task_comment",
        {"task_id": 999, "author": "opus", "body": "Hi"},
        ["no task 999"],
        id="unknown comment task",
    ),
    pytest.param(
        Recipe.RAMBLE,
        "get_feature",
        {"name": "payments"},
        ["no feature 'payments'", "known: auth, catalog"],
        id="unknown feature name",
    ),
    pytest.param(
        Recipe.YAP,
        "create_task",
        {"feature": "payments", "discipline": "backend", "title": "Pay"},
        ["no feature 'payments'", "known: auth, catalog"],
        id="unknown feature of a task",
    ),
    pytest.param(
        Recipe.DISCUSS,
        "update_discipline",
        {"name": "design", "icon": "pen"},
        ["no discipline 'design'", "known: backend, docs, frontend"],
        id="unknown discipline name",
    ),
    pytest.param(
        Recipe.RAMBLE,
        "update_feature",
        {"name": "catalog", "dependencies": ["payments"]},
        ["no feature 'payments'"],
        id="unknown feature dependency",
    ),
    pytest.param(
        Recipe.OPUS_REVIEW,
        "add_task_comment",
        {"task_id": 1, "author": "opus", "body": "Hi", "discipline": "design"},
        ["no discipline 'design'"],
        id="unknown comment discipline",
    ),
    pytest.param(
        Recipe.BRAINDUMP,
        "create_feature",
        {"name": "Billing Stuff", "display_name": "Billing"},
        ["name:", "pattern"],
        id="bad name",
    ),
    pytest.param(
        Recipe.BRAINDUMP,
        "create_feature",
        {"name": "auth", "display_name": "Auth again"},
        ["already exists", "choose another name"],
        id="duplicate name",
    ),
    pytest.param(
        Recipe.OPUS_REVIEW,
        "add_task_comment",
        {"task_id": 1, "author": "opus", "body": LONG},
        ["body:", "at most 20000 characters"],
        id="text over 20,000 characters",
    ),
    pytest.param(
        Recipe.OPUS_REVIEW,
        "append_progress",
        {"text": LONG},
        ["text:", "at most 20000 characters"],
        id="state file entry over the limit",
    ),
    pytest.param(
        Recipe.YAP,
        "create_task",
        {"feature": "auth", "discipline": "backend", "title": "T", "tags": MANY},
        ["tags:", "at most 200 items"],
        id="list over 200 items",
    ),
    pytest.param(
        Recipe.ENRICHMENT,
        "enrich_task",
        {"id": 3, "pseudocode": "p", "acceptance_criteria": MANY},
        ["acceptance_criteria:", "at most 200 items"],
        id="criteria over 200 items",
    ),
    pytest.param(
        Recipe.OPUS_REVIEW, "append_learning", {"text": "   "}, ["text:", "pattern"], id="blank text"
    ),
    pytest.param(
        Recipe.YAP,
        "update_task",
        {"id": 1, "depends_on": [2]},
        ["cannot depend on #2", "cycle #1 → #2 → #1", "remove one of those dependencies"],
        id="dependency cycle",
    ),
    pytest.param(
        Recipe.YAP,
        "update_task",
        {"id": 1, "depends_on": [1]},
        ["task #1 cannot depend on itself"],
        id="self dependency",
    ),
    pytest.param(
        Recipe.ENRICHMENT,
        "enrich_task",
        {"id": 1, "pseudocode": "p"},
        ["not a draft", "'pending'", "only draft tasks"],
        id="enriching a task that is not a draft",
    ),
    pytest.param(
        Recipe.YAP,
        "update_task",
        {"id": 1},
        ["at least one of title, description"],
        id="update with nothing to change",
    ),
    pytest.param(
        Recipe.RAMBLE,
        "update_feature",
        {"name": "auth"},
        ["at least one of display_name"],
        id="feature update with nothing to change",
    ),
    pytest.param(
        Recipe.DISCUSS,
        "update_discipline",
        {"name": "docs"},
        ["at least one of display_name"],
        id="discipline update with nothing to change",
    ),
    pytest.param(
        Recipe.BRAINDUMP,
        "create_discipline",
        {"name": "qa", "display_name": "QA", "icon": "check", "color": "red"},
        ["color", "#rrggbb"],
        id="colour the discipline service refuses",
    ),
]


@pytest.mark.parametrize(("recipe", "tool", "arguments", "expected"), REFUSALS)
async def test_a_refused_call_says_what_was_wrong_and_what_is_allowed(
    connect: ClientFactory,
    services: Services,
    demo: Demo,
    recipe: Recipe,
    tool: str,
    arguments: dict[str, Any],
    expected: list[str],
) -> None:
    before = snapshot(services)
    async with connect(recipe) as client:
        message = error_of(await client.call_tool(tool, arguments))
    for text in expected:
        assert text in message
    assert len(message) < 2_000
    assert snapshot(services) == before


OUTSIDE = ["../secrets.txt", "/etc/passwd", "src/../../outside.py", "..\\..\\windows.ini", "link/passwd"]


@pytest.fixture
def link_out(services: Services, tmp_path: Path) -> Path:
    """`ROOT/link`, a symlink to a folder outside the project."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("secret", encoding="utf-8")
    link = services.paths.root / "link"
    link.symlink_to(outside, target_is_directory=True)
    return link


@pytest.mark.parametrize("path", OUTSIDE)
async def test_a_context_file_outside_the_project_root_is_refused(
    connect: ClientFactory, services: Services, demo: Demo, link_out: Path, path: str
) -> None:
    before = snapshot(services)
    async with connect(Recipe.RAMBLE) as client:
        message = error_of(
            await client.call_tool("add_feature_context_file", {"feature_name": "auth", "file_path": path})
        )
    assert "file_path" in message and "relative to the project root" in message
    assert snapshot(services) == before


@pytest.mark.parametrize(
    ("recipe", "tool", "arguments"),
    [
        (
            Recipe.YAP,
            "create_task",
            {
                "feature": "auth",
                "discipline": "backend",
                "title": "T",
                "context_files": ["ok.py", "link/passwd"],
            },
        ),
        (Recipe.YAP, "update_task", {"id": 1, "output_artifacts": ["/tmp/out.txt"]}),
        (Recipe.ENRICHMENT, "enrich_task", {"id": 3, "pseudocode": "p", "context_files": ["../x.py"]}),
        (
            Recipe.BRAINDUMP,
            "create_feature",
            {"name": "billing", "display_name": "Billing", "knowledge_paths": ["link/passwd"]},
        ),
        (Recipe.RAMBLE, "update_feature", {"name": "auth", "context_files": ["docs/../../x.md"]}),
    ],
    ids=["create_task", "update_task", "enrich_task", "create_feature", "update_feature"],
)
async def test_a_path_list_leading_outside_the_root_refuses_the_whole_call(
    connect: ClientFactory,
    services: Services,
    demo: Demo,
    link_out: Path,
    recipe: Recipe,
    tool: str,
    arguments: dict[str, Any],
) -> None:
    before = snapshot(services)
    async with connect(recipe) as client:
        message = error_of(await client.call_tool(tool, arguments))
    assert "[" in message and "relative to the project root" in message
    assert snapshot(services) == before


async def test_a_symlink_inside_the_root_that_stays_inside_is_accepted(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    (services.paths.root / "src").mkdir()
    (services.paths.root / "current").symlink_to(services.paths.root / "src", target_is_directory=True)
    async with connect(Recipe.RAMBLE) as client:
        result = await client.call_tool(
            "add_feature_context_file", {"feature_name": "auth", "file_path": "current/login.py"}
        )
    assert not result.is_error
    assert services.features.get("auth").context_files == ("current/login.py",)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("delete_task", {"id": 1}),
        ("delete_feature", {"name": "auth"}),
        ("delete_discipline", {"name": "backend"}),
        ("update_task_comment", {"task_id": 1, "comment_id": 1, "body": "x"}),
        ("delete_task_comment", {"task_id": 1, "comment_id": 1}),
        ("add_task_context_file", {"task_id": 1, "file_path": "a.py"}),
    ],
)
async def test_the_tools_no_recipe_allowed_are_unknown_and_change_nothing(
    connect: ClientFactory, services: Services, demo: Demo, tool: str, arguments: dict[str, Any]
) -> None:
    before = snapshot(services)
    async with connect(Recipe.IDE) as client:
        message = error_of(await client.call_tool(tool, arguments))
    assert f"unknown tool {tool!r}" in message
    assert snapshot(services) == before


# --- loop control: seed 003's structured errors ------------------------------------------------


@pytest.mark.parametrize("tool", ["ralph_run", "ralph_stop", "ralph_understand"])
async def test_loop_tools_without_a_runner_are_refused_with_a_structured_error(
    connect: ClientFactory, services: Services, tool: str
) -> None:
    before = snapshot(services)
    async with connect(Recipe.IDE) as client:
        error = structured_error_of(await client.call_tool(tool, {}))
    assert error["code"] == "execution_failed"
    assert error["message"].startswith("the loop runner is not available in this server")
    assert "ralph-desk run" in error["message"]
    details = error["details"]
    logged = {"logPath": details["logPath"]} if tool == "ralph_run" else {}  # a ralph_run's own log
    assert details == {"tool": tool, "reason": "no_loop_runner", **logged}
    assert snapshot(services) == before


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"max_iterations": -1}, "max_iterations: Input should be greater than or equal to 0"),
        ({"agent": "gpt"}, "agent: Input should be 'claude', 'codex' or 'command'"),
        ({"dry_run": "perhaps"}, "dry_run: Input should be a valid boolean"),
        ({"iterations": 3}, "iterations: unexpected argument (allowed arguments: max_iterations, dry_run"),
    ],
)
async def test_loop_tool_arguments_are_refused_as_invalid_argument(
    connect: ClientFactory, arguments: dict[str, Any], expected: str
) -> None:
    async with connect(Recipe.IDE) as client:
        error = structured_error_of(await client.call_tool("ralph_run", arguments))
    assert error["code"] == "invalid_argument" and expected in error["message"]
    assert error["details"] == {"tool": "ralph_run"}


async def test_history_of_an_iteration_that_never_ran_is_an_invalid_argument(connect: ClientFactory) -> None:
    async with connect(Recipe.IDE) as client:
        error = structured_error_of(await client.call_tool("ralph_history", {"iteration": 3}))
    assert error["code"] == "invalid_argument"
    assert error["message"] == "no iteration 3: no loop has run yet"


async def test_init_of_an_existing_project_without_force_is_an_invalid_argument(
    connect: ClientFactory, services: Services
) -> None:
    before = snapshot(services)
    async with connect(Recipe.IDE) as client:
        error = structured_error_of(await client.call_tool("ralph_init", {}))
    assert error["code"] == "invalid_argument" and "call ralph_init with force=true" in error["message"]
    assert snapshot(services) == before


async def test_a_loop_control_failure_is_an_execution_failure_naming_the_log_folder(
    connect: ClientFactory, services: Services
) -> None:
    services.paths.prd_file.mkdir()
    async with connect(Recipe.IDE) as client:
        error = structured_error_of(await client.call_tool("ralph_init", {"force": True}))
    assert error["code"] == "execution_failed"
    assert "prd.json" in error["message"]
    assert error["details"] == {"tool": "ralph_init", "logDir": str(services.paths.logs_dir)}


@pytest.mark.parametrize("status", ["done", "pending", "skipped"])
async def test_no_tool_decides_work_in_review(
    connect: ClientFactory, services: Services, demo: Demo, status: str
) -> None:
    services.tasks.move(demo.login_api, "in_review", Mover.IMPORT)
    before = snapshot(services)
    async with connect(Recipe.YAP) as client:
        message = error_of(
            await client.call_tool("set_task_status", {"id": demo.login_api, "status": status})
        )
    assert "review decisions are the human's" in message and "ralph-desk review approve" in message
    assert snapshot(services) == before
