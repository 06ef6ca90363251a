"""Read-only resources, readable whatever the session's recipe (DESIGN §2.8).

Tasks, features and disciplines read as the same JSON the tools return (`get_task`, `get_feature`,
`get_discipline`); a name or id that names nothing is a JSON-RPC "invalid params" error naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from pydantic import BaseModel

from ralph_desk import prd as prd_format
from ralph_desk.mcp_server.binding import ServicesSource
from ralph_desk.mcp_server.results import DisciplineDetail, FeatureDetail, TaskDetail
from ralph_desk.project import ProjectError, ProjectPaths, contained
from ralph_desk.services.errors import NotFoundError, ServiceError
from ralph_desk.store.errors import StoreError

PROMPT_FILE_NAME = "prompt.md"
NO_CODEBASE_MAP = "No codebase map yet: run `ralph_understand` or `ralph-desk session --recipe understand`."
NO_PROMPT = (
    "No session prompt yet: `ralph-desk run --dry-run` or `ralph_run(dry_run=true)` writes the next one."
)


def to_json(model: BaseModel) -> str:
    """A result model as indented JSON, as its tool would return it."""
    return json.dumps(model.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False)


@contextmanager
def resource_errors() -> Iterator[None]:
    """Service refusals as resource errors: not found → invalid params (-32602), others → -32603."""
    try:
        yield
    except NotFoundError as error:
        raise ResourceNotFoundError(str(error)) from None
    except (ServiceError, ProjectError, StoreError) as error:
        raise ResourceError(str(error)) from None


def task_id_of(text: str) -> int:
    """The task id of a `ralph://tasks/{task_id}` URI."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 2**31 - 1:
        raise ResourceNotFoundError(
            f"no task {text!r}; allowed: a task id, a whole number from 1 in digits 0-9"
        )
    return int(text)


def read_file(paths: ProjectPaths, path: Path, missing: str) -> str:
    """A text file of the project (never read through a link), or a note saying what writes it."""
    return contained.read_text(paths.root, path, missing=missing)


def register(server: MCPServer, paths: ProjectPaths, services: ServicesSource) -> None:
    """Add every `ralph://` resource of the project to the server."""
    text_resources: dict[str, tuple[str, str, Callable[[], str]]] = {
        "progress": (
            "text/plain",
            "The project's progress log (progress.txt).",
            lambda: services().state_files.read_progress(),
        ),
        "learnings": (
            "text/plain",
            "The project's learnings (learnings.txt).",
            lambda: services().state_files.read_learnings(),
        ),
        "codebase_map": (
            "text/markdown",
            "The map of the codebase written by the understand run.",
            lambda: read_file(paths, paths.codebase_map, NO_CODEBASE_MAP),
        ),
        "prompt": (
            "text/markdown",
            "The prompt of the current (or next planned) agent session.",
            lambda: read_file(paths, paths.mcp_dir / PROMPT_FILE_NAME, NO_PROMPT),
        ),
    }

    @server.resource("ralph://tasks/{task_id}", name="task", mime_type="application/json")
    def task(task_id: str) -> str:
        """One task with every field, its dependencies and comments."""
        with resource_errors():
            return to_json(TaskDetail.model_validate(services().tasks.get(task_id_of(task_id))))

    @server.resource("ralph://features/{name}", name="feature", mime_type="application/json")
    def feature(name: str) -> str:
        """One feature with its learnings and context files."""
        with resource_errors():
            return to_json(FeatureDetail.model_validate(services().features.get(name)))

    @server.resource("ralph://disciplines/{name}", name="discipline", mime_type="application/json")
    def discipline(name: str) -> str:
        """One discipline with its persona, disabled tools and extra MCP servers."""
        with resource_errors():
            return to_json(DisciplineDetail.model_validate(services().disciplines.get(name)))

    @server.resource("ralph://prd", name="prd", mime_type="application/json")
    def prd() -> str:
        """The project's tasks as a prd.json document (userStories); a task whose stored text cannot be
        read is left out, with an entry {id, message} in "errors" (present only then)."""
        with resource_errors():
            document, errors = prd_format.export(services())
        if errors:
            document["errors"] = [{"id": error.id, "message": error.message} for error in errors]
        return json.dumps(document, indent=2, ensure_ascii=False)

    for name, (mime_type, description, read) in text_resources.items():
        server.resource(f"ralph://{name}", name=name, mime_type=mime_type, description=description)(
            _text_reader(name, read)
        )


def _text_reader(name: str, read: Callable[[], str]) -> Callable[[], str]:
    """A static resource function (no parameters) reading one text."""

    def run() -> str:
        with resource_errors():
            return read()

    run.__name__ = name
    return run
