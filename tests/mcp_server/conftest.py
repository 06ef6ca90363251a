"""A small project behind an in-memory MCP client: the fixtures every MCP server test shares."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.control import LoopController
from ralph_desk.mcp_server.binding import LoopControl
from ralph_desk.mcp_server.server import build_server
from ralph_desk.project import init_project
from ralph_desk.services.container import Services

DOCS_DISABLED = ("create_task", "set_task_status", "append_progress")


@dataclass(frozen=True)
class Demo:
    """The ids of what the demo project holds."""

    login_api: int  # auth / backend, pending
    login_form: int  # auth / frontend, pending, depends on login_api
    search_draft: int  # catalog / backend, draft
    docs_page: int  # catalog / docs, done
    comment: int  # on login_api


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    paths = init_project(tmp_path / "shop", title="Shop")
    opened = Services.open(paths)
    yield opened
    opened.close()


@pytest.fixture
def demo(services: Services) -> Demo:
    """Two features, three disciplines (docs takes tools away), four tasks, a comment and a learning."""
    services.project.set("Shop", "A small web shop.")
    services.features.create("auth", "Authentication", description="Sign-up and login.", acronym="AUTH")
    services.features.create("catalog", "Catalog", description="Products and search.", dependencies=["auth"])
    services.features.append_learning("auth", "Passwords are hashed with argon2id.", source="human")
    services.disciplines.create("backend", "Backend", "server", "#1f6feb", acronym="BE")
    services.disciplines.create("frontend", "Frontend", "browser", "#d29922", acronym="FE")
    services.disciplines.create(
        "docs",
        "Documentation",
        "book",
        "#8250df",
        disabled_tools=list(DOCS_DISABLED),
        mcp_servers={"search": {"command": "docs-search", "args": ["--stdio"], "env": {"API_KEY": "s3cret"}}},
    )
    login_api = services.tasks.create(
        "auth", "backend", "Login API", description="POST /login", priority="high"
    )
    login_form = services.tasks.create("auth", "frontend", "Login form", depends_on=[login_api.id])
    search_draft = services.tasks.create("catalog", "backend", "Product search", status="draft")
    docs_page = services.tasks.create("catalog", "docs", "Catalog docs")
    services.tasks.move(docs_page.id, "done", Mover.IMPORT)
    comment = services.comments.add(login_api.id, "human", "Use the existing session middleware.")
    return Demo(login_api.id, login_form.id, search_draft.id, docs_page.id, comment.id)


ClientFactory = Callable[..., Client]


@pytest.fixture
def connect(services: Services) -> ClientFactory:
    """`connect(recipe, loop=None, **context)`: an in-memory client of a fresh server for that session.

    Without `loop` the server's loop control is the real one of a process where no loop can run.
    """

    def make(recipe: Recipe = Recipe.IDE, loop: LoopControl | None = None, **context: Any) -> Client:
        if "discipline" in context and "discipline_disabled" not in context:
            disabled = services.disciplines.get(context["discipline"]).disabled_tools
            context["discipline_disabled"] = frozenset(disabled)
        control = loop or LoopController(services)
        server = build_server(services, SessionContext(recipe=recipe, **context), loop=control)
        return Client(server, mode="legacy")

    return make


def snapshot(services: Services) -> dict[str, Any]:
    """Everything a tool could change: every record, the state files and the change log's head."""
    tasks = [services.tasks.get(task.id) for task in services.tasks.list()]
    return {
        "change": services.db.latest_change_id(),
        "tasks": repr(tasks),
        "signals": repr([services.signals.for_task(task.id) for task in tasks]),
        "features": repr([services.features.get(feature.name) for feature in services.features.list()]),
        "disciplines": repr(services.disciplines.list()),
        "project": repr(services.project.get()),
        "learnings.txt": services.state_files.read_learnings(),
        "progress.txt": services.state_files.read_progress(),
    }


def text_of(result: CallToolResult) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert block.type == "text"
    return block.text


def error_of(result: CallToolResult) -> str:
    """The message of a tool error, checked to be one (and free of traceback text)."""
    assert result.is_error, f"expected a tool error, got {result.structured_content!r}"
    message = text_of(result)
    assert "Traceback" not in message and 'File "' not in message
    return message


def structured_error_of(result: CallToolResult) -> dict[str, Any]:
    """A loop-control tool error: seed 003's JSON document {code, message, details}."""
    document: dict[str, Any] = json.loads(error_of(result))
    assert set(document) == {"code", "message", "details"}
    return document


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, text_of(result)
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content
