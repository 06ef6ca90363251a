"""Every tool called through an in-memory MCP client under a recipe that allows it: its result and effect."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.tools import ALL_TOOLS
from ralph_desk.mcp_server import handlers
from ralph_desk.mcp_server.binding import HANDLERS
from ralph_desk.services.container import Services
from tests.mcp_server.conftest import ClientFactory, Demo, ok

pytestmark = pytest.mark.anyio


def test_every_registry_tool_has_a_handler() -> None:
    handlers.load()
    assert set(HANDLERS) == ALL_TOOLS


# --- braindump: creating the skeleton ------------------------------------------------------------


async def test_braindump_creates_a_feature_a_discipline_and_a_task(
    connect: ClientFactory, services: Services
) -> None:
    async with connect(Recipe.BRAINDUMP) as client:
        feature = ok(
            await client.call_tool(
                "create_feature",
                {
                    "name": "billing",
                    "display_name": "Billing",
                    "description": "Invoices and payments.",
                    "acronym": "BILL",
                    "context_files": ["src/billing/./invoice.py"],
                    "dependencies": [],
                },
            )
        )
        discipline = ok(
            await client.call_tool(
                "create_discipline",
                {
                    "name": "qa",
                    "display_name": "Quality",
                    "icon": "check",
                    "color": "#00aa00",
                    "skills": ["pytest"],
                },
            )
        )
        task = ok(
            await client.call_tool(
                "create_task",
                {
                    "feature": "billing",
                    "discipline": "qa",
                    "title": "Test invoice totals",
                    "priority": "critical",
                    "status": "draft",
                    "acceptance_criteria": ["Totals round half up"],
                    "tags": ["money"],
                    "context_files": ["src/billing/invoice.py"],
                    "output_artifacts": ["tests/test_invoice.py"],
                    "hints": "See the VAT table.",
                    "estimated_turns": 12,
                },
            )
        )
    assert feature["name"] == "billing" and feature["context_files"] == ["src/billing/invoice.py"]
    assert feature["learnings"] == []
    assert discipline == {
        **discipline,
        "name": "qa",
        "skills": ["pytest"],
        "disabled_tools": [],
        "mcp_servers": [],
    }
    assert (
        task["title"] == "Test invoice totals"
        and task["status"] == "draft"
        and task["priority"] == "critical"
    )
    stored = services.tasks.get(task["id"])
    assert (stored.feature, stored.discipline, stored.tags, stored.estimated_turns) == (
        "billing",
        "qa",
        ("money",),
        12,
    )
    assert services.features.get("billing").acronym == "BILL"
    assert services.disciplines.get("qa").color == "#00aa00"


async def test_braindump_lists_and_reads_features_disciplines_tasks_and_the_project(
    connect: ClientFactory, demo: Demo
) -> None:
    async with connect(Recipe.BRAINDUMP) as client:
        features = ok(await client.call_tool("list_features", {}))
        disciplines = ok(await client.call_tool("list_disciplines", {}))
        tasks = ok(await client.call_tool("list_tasks", {"filter_feature": "auth"}))
        feature = ok(await client.call_tool("get_feature", {"name": "auth"}))
        discipline = ok(await client.call_tool("get_discipline", {"name": "docs"}))
        project = ok(await client.call_tool("get_project_info", {}))
    assert [item["name"] for item in features["features"]] == ["auth", "catalog"] and features["count"] == 2
    assert [item["name"] for item in disciplines["disciplines"]] == ["backend", "docs", "frontend"]
    assert [item["id"] for item in tasks["tasks"]] == [demo.login_api, demo.login_form] and tasks[
        "count"
    ] == 2
    assert set(tasks["tasks"][0]) == {"id", "title", "status", "priority", "feature", "discipline", "origin"}
    assert [learning["text"] for learning in feature["learnings"]] == ["Passwords are hashed with argon2id."]
    assert discipline["disabled_tools"] == ["create_task", "set_task_status", "append_progress"]
    assert discipline["mcp_servers"] == [
        {
            "name": "search",
            "command": "docs-search",
            "args": ["--stdio"],
            "url": None,
            "env_names": ["API_KEY"],
            "header_names": [],
        }
    ]
    assert "s3cret" not in str(discipline)
    assert (project["title"], project["description"]) == ("Shop", "A small web shop.")
    assert project["created_at"].endswith("Z")


async def test_list_tasks_filters_by_status_and_discipline(connect: ClientFactory, demo: Demo) -> None:
    async with connect(Recipe.YAP) as client:
        drafts = ok(await client.call_tool("list_tasks", {"filter_status": "draft"}))
        backend = ok(await client.call_tool("list_tasks", {"filter_discipline": "backend"}))
    assert [task["id"] for task in drafts["tasks"]] == [demo.search_draft]
    assert [task["id"] for task in backend["tasks"]] == [demo.login_api, demo.search_draft]


async def test_list_tasks_filters_work_in_review(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    services.tasks.move(demo.login_api, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
    async with connect(Recipe.YAP) as client:
        in_review = ok(await client.call_tool("list_tasks", {"filter_status": "in_review"}))
        pending = ok(await client.call_tool("list_tasks", {"filter_status": "pending"}))
    assert [(task["id"], task["status"]) for task in in_review["tasks"]] == [(demo.login_api, "in_review")]
    assert demo.login_api not in [task["id"] for task in pending["tasks"]]


# --- yap: refining tasks -------------------------------------------------------------------------


async def test_yap_reads_a_task_with_its_comments_and_dependencies(
    connect: ClientFactory, demo: Demo
) -> None:
    async with connect(Recipe.YAP) as client:
        task = ok(await client.call_tool("get_task", {"id": demo.login_form}))
        api = ok(await client.call_tool("get_task", {"id": demo.login_api}))
    assert task["depends_on"] == [demo.login_api] and task["feature"] == "auth"
    assert [comment["id"] for comment in api["comments"]] == [demo.comment]
    assert api["comments"][0]["body"] == "Use the existing session middleware."


async def test_update_task_changes_only_the_fields_given(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    before = services.tasks.get(demo.login_api)
    async with connect(Recipe.YAP) as client:
        updated = ok(
            await client.call_tool(
                "update_task",
                {
                    "id": demo.login_api,
                    "title": "Login endpoint",
                    "tags": ["api"],
                    "context_files": ["src/login.py"],
                },
            )
        )
    after = services.tasks.get(demo.login_api)
    assert updated["title"] == after.title == "Login endpoint"
    assert after.tags == ("api",) and after.context_files == ("src/login.py",)
    assert (after.description, after.priority, after.depends_on) == (
        before.description,
        before.priority,
        before.depends_on,
    )


async def test_update_task_clears_a_text_given_as_empty_and_replaces_dependencies(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.ENRICHMENT) as client:
        updated = ok(
            await client.call_tool(
                "update_task", {"id": demo.login_form, "description": "", "depends_on": [demo.docs_page]}
            )
        )
    assert updated["depends_on"] == [demo.docs_page]
    assert services.tasks.get(demo.login_form).description is None
    assert services.tasks.get(demo.login_form).depends_on == (demo.docs_page,)


async def test_set_task_status_moves_the_task(connect: ClientFactory, services: Services, demo: Demo) -> None:
    async with connect(Recipe.YAP) as client:
        brief = ok(await client.call_tool("set_task_status", {"id": demo.login_api, "status": "blocked"}))
    assert brief == {**brief, "id": demo.login_api, "status": "blocked"}
    assert "comments" not in brief
    assert services.tasks.get(demo.login_api).status is TaskStatus.BLOCKED


# --- enrichment ----------------------------------------------------------------------------------


async def test_enrichment_promotes_a_draft_with_pseudocode(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.ENRICHMENT) as client:
        enriched = ok(
            await client.call_tool(
                "enrich_task",
                {
                    "id": demo.search_draft,
                    "pseudocode": "1. index names\n2. query with LIKE",
                    "acceptance_criteria": ["Finds by prefix"],
                    "context_files": ["src/catalog/search.py"],
                },
            )
        )
    assert enriched["status"] == "pending" and enriched["pseudocode"].startswith("1. index names")
    task = services.tasks.get(demo.search_draft)
    assert task.status is TaskStatus.PENDING and task.acceptance_criteria == ("Finds by prefix",)
    assert task.context_files == ("src/catalog/search.py",)


# --- ramble: features ----------------------------------------------------------------------------


async def test_ramble_updates_a_feature_and_registers_a_context_file(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.RAMBLE) as client:
        updated = ok(
            await client.call_tool(
                "update_feature",
                {"name": "catalog", "architecture": "Postgres full-text search.", "boundaries": ""},
            )
        )
        added = ok(
            await client.call_tool(
                "add_feature_context_file",
                {"feature_name": "catalog", "file_path": "src\\catalog\\models.py"},
            )
        )
        again = ok(
            await client.call_tool(
                "add_feature_context_file", {"feature_name": "catalog", "file_path": "src/catalog/models.py"}
            )
        )
    assert updated["architecture"] == "Postgres full-text search." and updated["dependencies"] == ["auth"]
    assert added == {
        "kind": "feature",
        "key": "catalog",
        "file_path": "src/catalog/models.py",
        "context_files": ["src/catalog/models.py"],
    }
    assert again["context_files"] == ["src/catalog/models.py"]
    feature = services.features.get("catalog")
    assert feature.architecture == "Postgres full-text search." and feature.context_files == (
        "src/catalog/models.py",
    )


async def test_a_feature_learning_is_added_and_a_near_duplicate_raises_its_hit_count(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.RAMBLE) as client:
        new = ok(
            await client.call_tool(
                "append_feature_learning",
                {
                    "feature_name": "catalog",
                    "text": "Search results are paged by 20.",
                    "task_id": demo.docs_page,
                },
            )
        )
        duplicate = ok(
            await client.call_tool(
                "append_feature_learning",
                {"feature_name": "catalog", "text": "Search results are paged by 20", "source": "human"},
            )
        )
    assert new == {**new, "duplicate": False, "hit_count": 1, "feature_name": "catalog"}
    assert duplicate == {**duplicate, "duplicate": True, "hit_count": 2, "learning_id": new["learning_id"]}
    learnings = services.features.get("catalog").learnings
    assert [(item.text, item.hit_count, item.task_id) for item in learnings] == [
        ("Search results are paged by 20.", 2, demo.docs_page)
    ]


# --- discuss: disciplines ------------------------------------------------------------------------


async def test_discuss_updates_a_discipline(connect: ClientFactory, services: Services, demo: Demo) -> None:
    async with connect(Recipe.DISCUSS) as client:
        updated = ok(
            await client.call_tool(
                "update_discipline",
                {
                    "name": "frontend",
                    "system_prompt": "You write accessible React.",
                    "skills": ["react", "a11y"],
                },
            )
        )
    assert updated["system_prompt"] == "You write accessible React." and updated["skills"] == [
        "react",
        "a11y",
    ]
    stored = services.disciplines.get("frontend")
    assert stored.skills == ("react", "a11y") and stored.display_name == "Frontend"


# --- opus_review: comments, state files, progress ------------------------------------------------


async def test_opus_review_comments_and_writes_the_state_files(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.OPUS_REVIEW) as client:
        comment = ok(
            await client.call_tool(
                "add_task_comment",
                {
                    "task_id": demo.login_form,
                    "author": "opus",
                    "body": "Reuse the API's error codes.",
                    "discipline": "frontend",
                    "priority": "high",
                },
            )
        )
        learning = ok(
            await client.call_tool("append_learning", {"text": "Run the linter before committing."})
        )
        progress = ok(await client.call_tool("append_progress", {"text": "Reviewed auth: 1 of 2 done."}))
        learnings = ok(await client.call_tool("read_learnings", {}))
        log = ok(await client.call_tool("read_progress", {}))
    assert comment == {**comment, "task_id": demo.login_form, "author": "opus", "discipline": "frontend"}
    assert [item.body for item in services.comments.list(demo.login_form)] == ["Reuse the API's error codes."]
    assert learning["file"] == "learnings.txt" and learning["entry"].endswith(
        "Run the linter before committing.\n"
    )
    assert progress["file"] == "progress.txt"
    assert learnings == {"file": "learnings.txt", "text": services.state_files.read_learnings()}
    assert "Run the linter before committing." in learnings["text"]
    assert log == {"file": "progress.txt", "text": services.state_files.read_progress()}
    assert "Reviewed auth: 1 of 2 done." in log["text"]


async def test_opus_review_reads_the_project_progress(connect: ClientFactory, demo: Demo) -> None:
    async with connect(Recipe.OPUS_REVIEW) as client:
        progress = ok(await client.call_tool("get_project_progress", {}))
    assert (progress["total"], progress["done"], progress["percent_done"]) == (4, 1, 25.0)
    assert progress["by_status"]["draft"] == 1 and progress["by_status"]["pending"] == 2
    assert progress["by_feature"]["catalog"] == {**progress["by_feature"]["catalog"], "total": 2, "done": 1}


async def test_opus_review_may_change_the_priority_and_description_of_a_task(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.OPUS_REVIEW) as client:
        updated = ok(
            await client.call_tool(
                "update_task", {"id": demo.login_form, "priority": "critical", "description": "Now urgent."}
            )
        )
    assert (updated["priority"], updated["description"]) == ("critical", "Now urgent.")
    assert services.tasks.get(demo.login_form).priority.value == "critical"


# --- ide / understand: reads ---------------------------------------------------------------------


async def test_search_tasks_finds_by_title_and_description(connect: ClientFactory, demo: Demo) -> None:
    async with connect(Recipe.UNDERSTAND) as client:
        by_title = ok(await client.call_tool("search_tasks", {"query": "login"}))
        by_text = ok(await client.call_tool("search_tasks", {"query": "POST /login", "limit": 1}))
        nothing = ok(await client.call_tool("search_tasks", {"query": "payroll"}))
    assert [task["id"] for task in by_title["tasks"]] == [demo.login_api, demo.login_form]
    assert [task["id"] for task in by_text["tasks"]] == [demo.login_api] and by_text["count"] == 1
    assert nothing == {"tasks": [], "count": 0, "errors": []}


# --- the six tools no recipe of seed 000 allows (reached with a widened ide recipe) ------------


# --- task_execution: the eight verbs -------------------------------------------------------------

VERB_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("learned", {"text": "The API returns 401 on bad passwords.", "kind": "discovery", "scope": "project"}),
    ("flag", {"what": "No rate limit on /login.", "severity": "warning", "category": "security"}),
    (
        "ask",
        {"question": "JWT or cookie?", "options": ["jwt", "cookie"], "preferred": "cookie", "blocking": True},
    ),
    ("suggest", {"what": "Add a lockout", "kind": "new_task", "why": "Brute force", "feature": "auth"}),
    ("blocked", {"on": "SMTP credentials", "kind": "external", "detail": "No .env entry."}),
    ("partial", {"summary": "Endpoint written.", "remaining": "Tests."}),
    ("stuck", {"reason": "Cannot reach the database."}),
    ("done", {"summary": "Endpoint and tests written."}),
]


async def test_each_verb_stores_a_signal_for_the_session_task(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    async with connect(Recipe.TASK_EXECUTION, task_id=demo.login_api, session_id="s-1") as client:
        results = [ok(await client.call_tool(verb, arguments)) for verb, arguments in VERB_CALLS]
    assert [result["verb"] for result in results] == [verb for verb, _ in VERB_CALLS]
    assert {(result["task_id"], result["session_id"]) for result in results} == {(demo.login_api, "s-1")}
    signals = services.signals.for_session("s-1")
    assert [signal.id for signal in signals] == [result["signal_id"] for result in results]
    assert [signal.verb.value for signal in signals] == [verb for verb, _ in VERB_CALLS]
    assert signals[2].options == ("jwt", "cookie") and signals[2].blocking is True


# --- loop control --------------------------------------------------------------------------------


async def test_status_without_a_runner_reports_how_the_last_run_ended(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    run = services.sessions.start_loop_run("claude", max_iterations=3)
    services.sessions.update_loop_run(run.id, state="completed", iterations=2, cost_usd=0.5)
    async with connect(Recipe.IDE) as client:
        status = ok(await client.call_tool("ralph_status", {}))
    assert status["success"] is True and (status["status"], status["running"]) == ("completed", False)
    assert status["lastRun"] == {
        **status["lastRun"],
        "loopId": run.id,
        "status": "completed",
        "iterations": 2,
    }
    assert status["metrics"] == {
        "tasksCompleted": 1,
        "tasksFailed": 0,
        "tasksRemaining": 3,
        "tasksNeedingInput": 0,
    }


async def test_status_without_a_runner_reports_a_loop_another_process_runs(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    run = services.sessions.start_loop_run("claude")
    async with connect(Recipe.IDE) as client:
        status = ok(await client.call_tool("ralph_status", {}))
    assert (status["status"], status["loopId"], status["iterationNumber"]) == ("running", run.id, 0)


async def test_history_without_a_runner_pages_iterations_and_shows_one_in_full(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    run = services.sessions.start_loop_run("claude")
    for iteration, task_id in enumerate([demo.login_api, demo.login_form], start=1):
        session_id = f"s-{iteration}"
        services.sessions.start_session(
            session_id, task_id, "task_execution", "claude", loop_run_id=run.id, iteration=iteration
        )
        services.signals.record(task_id, session_id, "learned", text=f"Fact {iteration}.", kind="discovery")
        services.sessions.finish_session(
            session_id,
            outcome="done",
            closing_verb="done",
            cost_usd=0.25,
            turns=4,
            head_after=f"abc{iteration}",
            changed_files=["src/login.py"],
        )
    async with connect(Recipe.IDE) as client:
        page = ok(await client.call_tool("ralph_history", {"limit": 1}))
        second = ok(await client.call_tool("ralph_history", {"limit": 1, "offset": 1}))
        full = ok(await client.call_tool("ralph_history", {"iteration": 1}))
        learnings = ok(await client.call_tool("ralph_history", {"type": "learnings"}))
    assert (page["total"], page["hasMore"], second["hasMore"]) == (2, True, False)
    newest = page["iterations"][0]
    assert newest == {**newest, "iterationNumber": 2, "taskAttempted": demo.login_form, "result": "done"}
    assert newest["qualityMetrics"] == {
        **newest["qualityMetrics"],
        "costUsd": 0.25,
        "turns": 4,
        "changedFiles": 1,
    }
    assert second["iterations"][0]["iterationNumber"] == 1
    iteration = full["iteration"]
    assert iteration == {**iteration, "sessionId": "s-1", "commitHash": "abc1", "learnings": ["Fact 1."]}
    assert iteration["changedFiles"] == ["src/login.py"]
    assert [(item["text"], item["iterationNumber"]) for item in learnings["learnings"]] == [
        ("Fact 2.", 2),
        ("Fact 1.", 1),
    ]
    assert learnings["learnings"][0]["tags"] == ["discovery", "feature"]


async def test_validate_without_a_runner_reports_what_is_broken(
    connect: ClientFactory, services: Services
) -> None:
    async with connect(Recipe.IDE) as client:
        sound = ok(await client.call_tool("ralph_validate", {}))
        services.paths.progress_file.unlink()
        broken = ok(await client.call_tool("ralph_validate", {}))
    assert sound == {"success": True, "valid": True, "problems": []}
    assert broken["valid"] is False
    assert broken["problems"] == [{"path": ".ralph/progress.txt", "message": "missing file"}]


async def test_init_with_force_without_a_runner_recreates_the_config_and_writes_prd_json(
    connect: ClientFactory, services: Services, demo: Demo
) -> None:
    services.paths.config_file.unlink()
    services.state_files.append_progress("Kept across init.")
    async with connect(Recipe.IDE) as client:
        result = ok(await client.call_tool("ralph_init", {"force": True}))
    assert result == {
        "success": True,
        "taskCount": 4,
        "prdPath": str(services.paths.prd_file),
        "ralphDir": str(services.paths.ralph),
        "reinitialized": True,
    }
    assert services.paths.config_file.is_file()
    assert "Kept across init." in services.state_files.read_progress()
    document = json.loads(services.paths.prd_file.read_text(encoding="utf-8"))
    assert [story["title"] for story in document["userStories"]] == [
        "Login API",
        "Login form",
        "Catalog docs",
    ]
