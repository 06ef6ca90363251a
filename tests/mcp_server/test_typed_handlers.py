"""Each handler takes its tool's input model, validated once from the wire: `ToolCall[X]`, never untyped."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralph_desk.domain.tools import REGISTRY, GetTaskInput, ListTasksInput
from ralph_desk.mcp_server import handlers
from ralph_desk.mcp_server.binding import HANDLERS, ToolCall, handles
from ralph_desk.mcp_server.results import TaskDetail

PACKAGE = Path(handlers.__file__).resolve().parents[1]


def test_every_handler_is_bound_to_its_tools_input_model() -> None:
    handlers.load()
    for name, bound in HANDLERS.items():
        assert bound.input_model is REGISTRY[name].input_model, name


def test_a_handler_taking_another_tools_input_is_refused_at_import() -> None:
    def wrong(call: ToolCall[ListTasksInput]) -> TaskDetail:
        raise AssertionError("never called")

    with pytest.raises(TypeError, match=r"ToolCall\[GetTaskInput\]"):
        handles("get_task")(wrong)


def test_binding_validates_the_arguments_into_the_input_model() -> None:
    handlers.load()
    args, _ = HANDLERS["get_task"].bind({"id": 3}, lambda: None, None, None)  # type: ignore[arg-type,return-value]
    assert isinstance(args, GetTaskInput) and args.id == 3


def test_no_module_of_the_server_names_an_untyped_call() -> None:
    untyped = "ToolCall[" + "Any]"
    assert not [path for path in PACKAGE.rglob("*.py") if untyped in path.read_text(encoding="utf-8")]


def test_statuses_arrive_as_the_domain_enum_and_are_described_as_before() -> None:
    from ralph_desk.domain.enums import TaskStatus
    from ralph_desk.domain.tools import CreateTaskInput, SetTaskStatusInput

    assert SetTaskStatusInput.model_validate({"id": 1, "status": "done"}).status is TaskStatus.DONE
    created = CreateTaskInput.model_validate(
        {"feature": "a", "discipline": "b", "title": "t", "status": "draft"}
    )
    assert created.status is TaskStatus.DRAFT
    assert SetTaskStatusInput.model_json_schema()["properties"]["status"] == {
        "description": "The new status.",
        "enum": ["draft", "pending", "in_progress", "done", "blocked", "skipped"],
        "title": "Status",
        "type": "string",
    }
    with pytest.raises(ValueError, match=r"Input should be 'draft' or 'pending'"):
        CreateTaskInput.model_validate({"feature": "a", "discipline": "b", "title": "t", "status": "done"})
