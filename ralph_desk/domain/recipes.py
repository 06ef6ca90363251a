"""Which tools each recipe allows, and the reductive discipline filter on top (no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from types import MappingProxyType

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.tools import (
    ALL_TOOLS,
    LOOP_TOOLS,
    READ_ONLY_TOOLS,
    REGISTRY,
    VERB_TOOLS,
    in_registry_order,
    unknown_tool_message,
)

RECIPE_ALLOWED: Mapping[Recipe, frozenset[str]] = MappingProxyType(
    {
        Recipe.BRAINDUMP: frozenset(
            {
                "create_feature", "create_discipline", "create_task",
                "list_features", "list_disciplines", "list_tasks",
                "get_feature", "get_discipline",
                "get_project_info",
            }
        ),
        Recipe.YAP: frozenset(
            {
                "list_tasks", "get_task", "create_task", "update_task",
                "list_features", "list_disciplines",
                "set_task_status",
                "get_project_info",
            }
        ),
        Recipe.RAMBLE: frozenset(
            {
                "list_features", "get_feature", "create_feature", "update_feature",
                "append_feature_learning", "add_feature_context_file",
                "list_tasks",
                "get_project_info",
            }
        ),
        Recipe.DISCUSS: frozenset(
            {
                "list_disciplines", "get_discipline", "update_discipline",
                "get_project_info",
            }
        ),
        Recipe.TASK_EXECUTION: VERB_TOOLS,
        Recipe.OPUS_REVIEW: frozenset(
            {
                "list_tasks", "get_task",
                "set_task_status",
                "update_task",
                "create_task",
                "add_task_comment",
                "list_features", "get_feature", "update_feature",
                "append_feature_learning",
                "append_learning", "append_progress",
                "read_learnings", "read_progress",
                "get_project_info", "get_project_progress",
            }
        ),
        Recipe.ENRICHMENT: frozenset(
            {
                "list_tasks", "get_task",
                "enrich_task",
                "update_task",
                "create_task",
                "list_features", "get_feature",
                "list_disciplines",
                "get_project_info",
            }
        ),
        Recipe.IDE: LOOP_TOOLS | READ_ONLY_TOOLS,
        Recipe.UNDERSTAND: READ_ONLY_TOOLS - LOOP_TOOLS,
    }
)  # fmt: skip

FIELD_RESTRICTIONS: Mapping[Recipe, Mapping[str, frozenset[str]]] = MappingProxyType(
    {Recipe.OPUS_REVIEW: MappingProxyType({"update_task": frozenset({"id", "priority", "description"})})}
)


def _in_field_order(tool_name: str, fields: Iterable[str]) -> list[str]:
    """Field names in the order the tool's input model declares them; others last, alphabetically."""
    spec = REGISTRY.get(tool_name)
    declared = list(spec.input_model.model_fields) if spec else []
    return sorted(
        fields, key=lambda name: (declared.index(name) if name in declared else len(declared), name)
    )


def check_fields(recipe: Recipe, tool_name: str, provided_fields: AbstractSet[str]) -> str | None:
    """Why a call may not set these fields under this recipe, or None if it may.

    provided_fields are the arguments the call actually sets (those not left at None).
    """
    allowed = FIELD_RESTRICTIONS.get(recipe, {}).get(tool_name)
    if allowed is None:
        return None
    refused = provided_fields - allowed
    if not refused:
        return None
    return (
        f"recipe {recipe.value!r} may not set {', '.join(_in_field_order(tool_name, refused))} "
        f"through {tool_name!r} (allowed: {', '.join(_in_field_order(tool_name, allowed))})"
    )


def enabled_tools(recipe: Recipe, disabled: Iterable[str] = ()) -> frozenset[str]:
    """The tools a session of this recipe gets once a discipline's disabled tools are taken away."""
    return RECIPE_ALLOWED[recipe] - frozenset(disabled)


def unknown_tools(names: Iterable[str]) -> list[str]:
    """The names that are no registered tool, sorted and without repeats."""
    return sorted(set(names) - ALL_TOOLS)


def hidden_reason(
    tool_name: str, recipe: Recipe, discipline_name: str | None, disabled: Iterable[str]
) -> str | None:
    """Why a session of this recipe and discipline cannot use a tool, or None if it can."""
    disabled_set = frozenset(disabled)
    allowed = RECIPE_ALLOWED[recipe]
    if tool_name not in ALL_TOOLS:
        return unknown_tool_message(tool_name, among=allowed - disabled_set)
    by_recipe = tool_name not in allowed
    by_discipline = tool_name in disabled_set
    if not (by_recipe or by_discipline):
        return None
    who = f"discipline {discipline_name!r}" if discipline_name else "the session's discipline"
    if not by_recipe:
        return f"tool {tool_name!r} is not available: {who} disables it for recipe {recipe.value!r}"
    reason = f"recipe {recipe.value!r} does not allow it (allowed: {', '.join(in_registry_order(allowed))})"
    also = f", and {who} disables it too" if by_discipline else ""
    return f"tool {tool_name!r} is not available: {reason}{also}"


def disabled_for(recipe: Recipe, disabled: Iterable[str] = ()) -> list[str]:
    """Every registered tool a session of this recipe does not get, sorted (context.json's disabled_tools)."""
    return sorted(ALL_TOOLS - enabled_tools(recipe, disabled))
