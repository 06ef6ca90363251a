"""Tests of the tool registry: names, annotations and the limits of every input model."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ralph_desk.domain import tools
from ralph_desk.domain.enums import (
    BlockerKind,
    FlagCategory,
    LearningKind,
    LearningScope,
    Severity,
    SuggestionKind,
    TaskStatus,
    Verb,
)
from ralph_desk.domain.tools import (
    ALL_TOOLS,
    DATA_TOOLS,
    LOOP_TOOLS,
    MAX_ITEMS,
    MAX_TEXT,
    READ_ONLY_TOOLS,
    REGISTRY,
    VERB_TOOLS,
    ToolCategory,
    ToolInput,
    UnknownToolError,
    tool,
    tools_in,
)

SEED_000_TOOLS = [
    "list_tasks", "get_task", "create_task", "update_task", "set_task_status", "enrich_task",
    "add_task_comment",
    "list_features", "get_feature", "create_feature", "update_feature",
    "append_feature_learning", "add_feature_context_file",
    "list_disciplines", "get_discipline", "create_discipline", "update_discipline",
    "get_project_info", "get_project_progress",
    "append_learning", "read_learnings", "append_progress", "read_progress",
]  # fmt: skip
SEED_001_TOOLS = ["search_tasks"]
DESK_TOOLS = ["get_task_checks"]
NO_RECIPE = [
    "delete_task", "update_task_comment", "delete_task_comment", "delete_feature", "delete_discipline",
    "add_task_context_file",
]  # fmt: skip
VERBS = ["done", "partial", "stuck", "ask", "flag", "learned", "suggest", "blocked"]
LOOP = [
    "ralph_init", "ralph_validate", "ralph_run", "ralph_status", "ralph_stop", "ralph_history",
    "ralph_understand",
]  # fmt: skip

VALID_ARGS: dict[str, dict[str, Any]] = {
    "list_tasks": {},
    "get_task": {"id": 1},
    "create_task": {"feature": "auth", "discipline": "backend", "title": "Add login"},
    "update_task": {"id": 1},
    "set_task_status": {"id": 1, "status": "done"},
    "enrich_task": {"id": 1, "pseudocode": "1. read\n2. write"},
    "search_tasks": {"query": "login"},
    "get_task_checks": {"task_id": 1},
    "add_task_comment": {"task_id": 1, "author": "human", "body": "Looks good."},
    "list_features": {},
    "get_feature": {"name": "auth"},
    "create_feature": {"name": "auth", "display_name": "Authentication"},
    "update_feature": {"name": "auth"},
    "append_feature_learning": {"feature_name": "auth", "text": "Tokens expire after an hour."},
    "add_feature_context_file": {"feature_name": "auth", "file_path": "src/auth.py"},
    "list_disciplines": {},
    "get_discipline": {"name": "backend"},
    "create_discipline": {"name": "backend", "display_name": "Backend", "icon": "server", "color": "#3b82f6"},
    "update_discipline": {"name": "backend"},
    "get_project_info": {},
    "get_project_progress": {},
    "append_learning": {"text": "Run the tests with -q."},
    "read_learnings": {},
    "append_progress": {"text": "Task 3 done."},
    "read_progress": {},
    "done": {"summary": "Implemented login."},
    "partial": {"summary": "Form done.", "remaining": "Validation."},
    "stuck": {"reason": "No GPU host."},
    "ask": {"question": "Sync or async?", "blocking": True},
    "flag": {"what": "Middleware and scopes disagree.", "severity": "warning", "category": "bug"},
    "learned": {"text": "Use SELECT FOR UPDATE.", "kind": "decision"},
    "suggest": {"what": "Add a verify endpoint.", "kind": "new_task", "why": "Too big for this task."},
    "blocked": {"on": "Redis credentials", "kind": "external"},
    "ralph_init": {},
    "ralph_validate": {},
    "ralph_run": {},
    "ralph_status": {},
    "ralph_stop": {},
    "ralph_history": {},
    "ralph_understand": {},
}

Schema = dict[str, Any]


def _branches(prop: Schema, defs: Schema) -> list[Schema]:
    """The non-null alternatives of a property schema, with $refs resolved."""
    options = prop.get("anyOf", [prop])
    resolved = [defs[o["$ref"].rsplit("/", 1)[-1]] if "$ref" in o else o for o in options]
    return [o for o in resolved if o.get("type") != "null"]


def _fields(kind: str) -> list[tuple[str, str, Schema]]:
    """(tool, field, schema) for every field of every tool whose schema is of this kind."""
    found = []
    for name, spec in REGISTRY.items():
        schema = spec.input_model.model_json_schema()
        defs = schema.get("$defs", {})
        for field, prop in schema["properties"].items():
            for branch in _branches(prop, defs):
                is_enum = "enum" in branch
                if (kind == "enum" and is_enum) or (not is_enum and branch.get("type") == kind):
                    found.append((name, field, branch))
    return found


def _accepts(tool_name: str, **changes: Any) -> bool:
    """Whether the tool's input model accepts valid arguments with these changes."""
    try:
        tool(tool_name).input_model.model_validate({**VALID_ARGS[tool_name], **changes})
    except ValidationError:
        return False
    return True


def _ids(rows: list[tuple[str, str, Schema]]) -> list[str]:
    """Test ids for (tool, field, schema) rows."""
    return [f"{name}.{field}" for name, field, _ in rows]


TEXT_FIELDS = _fields("string")
LIST_FIELDS = _fields("array")
ENUM_FIELDS = _fields("enum")
ID_FIELDS = [row for row in _fields("integer") if row[1] == "id" or row[1].endswith("_id")]


def test_registry_holds_seed_000s_data_tools_then_seed_001s_and_the_desks_then_verbs_then_loop_tools() -> (
    None
):
    assert set(SEED_000_TOOLS) == DATA_TOOLS
    assert set(SEED_001_TOOLS) == tools.SEED_001_TOOLS
    assert set(DESK_TOOLS) == tools.DESK_TOOLS
    assert set(VERB_TOOLS) == set(VERBS)
    assert set(LOOP_TOOLS) == set(LOOP)
    assert set(SEED_000_TOOLS + SEED_001_TOOLS + DESK_TOOLS + VERBS + LOOP) == ALL_TOOLS
    assert len(ALL_TOOLS) == 23 + 1 + 1 + 8 + 7 <= 40  # seed 001's cap


def test_the_tools_no_recipe_of_the_seeds_allows_are_not_tools() -> None:
    assert not set(NO_RECIPE) & ALL_TOOLS


def test_registry_is_ordered_by_category_then_seed_order() -> None:
    expected = SEED_000_TOOLS[:6] + SEED_001_TOOLS + DESK_TOOLS + SEED_000_TOOLS[6:] + VERBS + LOOP
    assert list(REGISTRY) == expected
    categories = [spec.category for spec in REGISTRY.values()]
    assert categories == sorted(categories, key=list(ToolCategory).index)


def test_tool_names_are_unique_and_match_their_keys() -> None:
    names = [spec.name for spec in tools._SPECS]
    assert len(names) == len(set(names)) == len(REGISTRY)
    assert all(key == spec.name for key, spec in REGISTRY.items())


def test_verb_tools_are_the_verbs_of_the_enum() -> None:
    assert {verb.value for verb in Verb} == VERB_TOOLS
    assert {spec.name for spec in tools_in(ToolCategory.SIGNAL)} == VERB_TOOLS


def test_tools_in_lists_a_category_in_registry_order() -> None:
    assert [spec.name for spec in tools_in(ToolCategory.COMMENT)] == ["add_task_comment"]
    assert [spec.name for spec in tools_in(ToolCategory.LOOP)] == LOOP
    assert all(tools_in(category) for category in ToolCategory)


def test_read_only_tools_are_the_lists_gets_reads_search_and_loop_queries() -> None:
    assert {
        "list_tasks", "get_task", "search_tasks", "get_task_checks", "list_features", "get_feature",
        "list_disciplines", "get_discipline", "get_project_info", "get_project_progress",
        "read_learnings", "read_progress", "ralph_status", "ralph_validate", "ralph_history",
    } == READ_ONLY_TOOLS  # fmt: skip


def test_no_tool_is_destructive_now_that_the_deletes_are_gone() -> None:
    assert not [spec.name for spec in REGISTRY.values() if spec.destructive]


def test_tool_returns_the_spec_of_a_known_name() -> None:
    assert tool("get_task").input_model is tools.GetTaskInput
    assert tool("get_task").category is ToolCategory.TASK


def test_tool_raises_a_key_error_naming_the_closest_tools_for_an_unknown_name() -> None:
    with pytest.raises(KeyError) as caught:
        tool("creat_task")
    assert isinstance(caught.value, UnknownToolError)
    message = str(caught.value)
    prefix = "unknown tool 'creat_task' (did you mean: "
    assert message.startswith(prefix) and message.endswith("?)")
    suggested = message.removeprefix(prefix).removesuffix("?)").split(", ")
    assert suggested[0] == "create_task"
    assert 1 <= len(suggested) <= 3 and set(suggested) <= ALL_TOOLS


def test_tool_error_for_a_name_like_no_tool_suggests_nothing() -> None:
    with pytest.raises(KeyError) as caught:
        tool("zzzzzz")
    assert str(caught.value) == "unknown tool 'zzzzzz'"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_description_is_one_nonempty_sentence(name: str) -> None:
    description = tool(name).description
    assert "\n" not in description
    assert description[0].isupper()
    assert description.endswith(".")
    assert description == (tool(name).input_model.__doc__ or "").strip()


def test_every_tool_has_valid_sample_arguments() -> None:
    assert set(VALID_ARGS) == ALL_TOOLS


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_input_model_accepts_its_valid_arguments(name: str) -> None:
    assert _accepts(name)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_input_model_forbids_extra_fields(name: str) -> None:
    model = tool(name).input_model
    assert issubclass(model, ToolInput)
    assert model.model_config.get("extra") == "forbid"
    assert model.model_json_schema()["additionalProperties"] is False
    assert not _accepts(name, unexpected="x")


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_field_has_a_description(name: str) -> None:
    fields = tool(name).input_model.model_fields
    undescribed = [field for field, info in fields.items() if not info.description]
    assert undescribed == []


@pytest.mark.parametrize(("name", "field", "schema"), TEXT_FIELDS, ids=_ids(TEXT_FIELDS))
def test_every_text_field_rejects_20001_characters(name: str, field: str, schema: Schema) -> None:
    assert not _accepts(name, **{field: "a" * (MAX_TEXT + 1)})
    if schema.get("maxLength") == MAX_TEXT:
        assert _accepts(name, **{field: "a" * MAX_TEXT})


@pytest.mark.parametrize(("name", "field", "schema"), LIST_FIELDS, ids=_ids(LIST_FIELDS))
def test_every_list_field_rejects_201_items(name: str, field: str, schema: Schema) -> None:
    item: object = 1 if schema["items"].get("type") == "integer" else "a"
    assert _accepts(name, **{field: [item] * MAX_ITEMS})
    assert not _accepts(name, **{field: [item] * (MAX_ITEMS + 1)})


@pytest.mark.parametrize(("name", "field", "schema"), LIST_FIELDS, ids=_ids(LIST_FIELDS))
def test_every_list_item_rejects_20001_characters(name: str, field: str, schema: Schema) -> None:
    if schema["items"].get("type") == "integer":
        assert not _accepts(name, **{field: [0]})
    else:
        assert not _accepts(name, **{field: ["a" * (MAX_TEXT + 1)]})


@pytest.mark.parametrize(("name", "field", "schema"), ENUM_FIELDS, ids=_ids(ENUM_FIELDS))
def test_every_enum_field_rejects_an_unknown_value(name: str, field: str, schema: Schema) -> None:
    assert all(_accepts(name, **{field: value}) for value in schema["enum"])
    assert not _accepts(name, **{field: "not-a-value"})


@pytest.mark.parametrize(("name", "field", "schema"), ID_FIELDS, ids=_ids(ID_FIELDS))
def test_every_id_rejects_zero_negatives_and_more_than_32_bits(name: str, field: str, schema: Schema) -> None:
    assert _accepts(name, **{field: 1}) and _accepts(name, **{field: 2**31 - 1})
    assert not _accepts(name, **{field: 0})
    assert not _accepts(name, **{field: -5})
    assert not _accepts(name, **{field: 2**31})


def test_the_field_lists_found_in_the_schemas_are_not_empty() -> None:
    assert len(TEXT_FIELDS) > 60
    assert len(LIST_FIELDS) > 15
    assert {("flag", "severity"), ("create_task", "status"), ("ralph_history", "type")} <= {
        (name, field) for name, field, _ in ENUM_FIELDS
    }
    assert ("add_task_comment", "task_id") in {(name, field) for name, field, _ in ID_FIELDS}


def test_create_task_accepts_only_draft_or_pending_status() -> None:
    assert _accepts("create_task", status="draft")
    assert _accepts("create_task", status="pending")
    assert not _accepts("create_task", status="done")
    assert not _accepts("create_task", status="in_progress")


def test_set_task_status_accepts_the_six_statuses_of_seed_000() -> None:
    allowed = {"draft", "pending", "in_progress", "done", "blocked", "skipped"}
    assert {status for status in TaskStatus if _accepts("set_task_status", status=status.value)} == allowed


def test_verb_enum_fields_are_the_enums_of_the_domain() -> None:
    flag = tools.FlagInput.model_validate(VALID_ARGS["flag"])
    assert flag.severity is Severity.WARNING and flag.category is FlagCategory.BUG
    learned = tools.LearnedInput.model_validate(VALID_ARGS["learned"])
    assert learned.kind is LearningKind.DECISION
    assert tools.SuggestInput.model_validate(VALID_ARGS["suggest"]).kind is SuggestionKind.NEW_TASK
    assert tools.BlockedInput.model_validate(VALID_ARGS["blocked"]).kind is BlockerKind.EXTERNAL


def test_learned_scope_defaults_to_feature() -> None:
    assert tools.LearnedInput.model_validate(VALID_ARGS["learned"]).scope is LearningScope.FEATURE


@pytest.mark.parametrize("name", VERBS)
def test_verbs_take_no_task_id(name: str) -> None:
    fields = set(tool(name).input_model.model_fields)
    assert not any(field == "id" or field.endswith("_id") for field in fields)
    assert not _accepts(name, task_id=1)


def test_blocked_takes_its_blocker_as_on() -> None:
    assert tools.BlockedInput.model_validate(VALID_ARGS["blocked"]).on == "Redis credentials"


def test_required_text_rejects_empty_and_blank_strings() -> None:
    assert not _accepts("done", summary="")
    assert not _accepts("done", summary="   \n")


def test_update_fields_may_be_emptied_to_clear_them() -> None:
    assert _accepts("update_task", description="")
    assert _accepts("update_task", tags=[])


def test_ask_options_are_one_line_each() -> None:
    assert _accepts("ask", options=["keep sync", "go async"])
    assert not _accepts("ask", options=["keep\nsync"])


def test_names_are_lowercase_slugs() -> None:
    assert _accepts("get_feature", name="audit-log_2")
    assert not _accepts("get_feature", name="Audit Log")
    assert not _accepts("get_feature", name="-auth")
    assert not _accepts("get_feature", name="a" * 65)


def test_search_tasks_limit_defaults_to_20_within_1_to_200() -> None:
    assert tools.SearchTasksInput.model_validate(VALID_ARGS["search_tasks"]).limit == 20
    assert not _accepts("search_tasks", limit=0)
    assert not _accepts("search_tasks", limit=201)


def test_ralph_run_defaults_to_no_edits_and_bounds_iterations() -> None:
    run = tools.RalphRunInput.model_validate({})
    assert (run.max_iterations, run.dry_run, run.agent, run.allow_edits) == (None, False, None, False)
    assert _accepts("ralph_run", max_iterations=0) and _accepts("ralph_run", max_iterations=10_000)
    assert not _accepts("ralph_run", max_iterations=-1)
    assert not _accepts("ralph_run", max_iterations=10_001)
    assert not _accepts("ralph_run", agent="gpt")


def test_ralph_history_pages_through_iterations_by_default() -> None:
    history = tools.RalphHistoryInput.model_validate({})
    assert (history.limit, history.offset, history.iteration, history.type) == (10, 0, None, "iterations")
    assert _accepts("ralph_history", type="learnings", iteration=3)
    assert not _accepts("ralph_history", offset=-1)
    assert not _accepts("ralph_history", iteration=0)
    assert not _accepts("ralph_history", limit=201)
