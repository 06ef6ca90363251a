"""Tests of the recipes' allowed tools and the reductive discipline filter."""

from __future__ import annotations

import pytest

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.recipes import (
    FIELD_RESTRICTIONS,
    RECIPE_ALLOWED,
    check_fields,
    disabled_for,
    enabled_tools,
    hidden_reason,
    unknown_tools,
)
from ralph_desk.domain.tools import ALL_TOOLS, DATA_TOOLS
from tests.support.seed_000 import SEED_000_ALLOWED, VERBS

LOOP = {
    "ralph_init", "ralph_validate", "ralph_run", "ralph_status", "ralph_stop", "ralph_history",
    "ralph_understand",
}  # fmt: skip
READS = {
    "list_tasks", "get_task", "search_tasks", "get_task_checks", "list_features", "get_feature",
    "list_disciplines", "get_discipline", "get_project_info", "get_project_progress", "read_learnings",
    "read_progress",
}  # fmt: skip


@pytest.mark.parametrize("recipe", list(SEED_000_ALLOWED))
def test_interactive_recipes_allow_exactly_seed_000s_lists(recipe: Recipe) -> None:
    assert RECIPE_ALLOWED[recipe] == SEED_000_ALLOWED[recipe]
    assert RECIPE_ALLOWED[recipe] <= DATA_TOOLS


def test_task_execution_allows_the_eight_verbs_only() -> None:
    assert RECIPE_ALLOWED[Recipe.TASK_EXECUTION] == VERBS


def test_ide_allows_loop_control_and_reads() -> None:
    assert RECIPE_ALLOWED[Recipe.IDE] == LOOP | READS


def test_understand_allows_reads_only() -> None:
    assert RECIPE_ALLOWED[Recipe.UNDERSTAND] == READS


def test_every_recipe_has_an_allowed_list_of_registered_tools() -> None:
    assert set(RECIPE_ALLOWED) == set(Recipe)
    assert all(allowed and allowed <= ALL_TOOLS for allowed in RECIPE_ALLOWED.values())


def test_enabled_tools_without_a_discipline_are_the_recipes_allowed_tools() -> None:
    assert enabled_tools(Recipe.DISCUSS) == SEED_000_ALLOWED[Recipe.DISCUSS]


def test_a_discipline_removes_tools_from_its_recipe() -> None:
    enabled = enabled_tools(Recipe.TASK_EXECUTION, ["learned", "suggest"])
    assert enabled == VERBS - {"learned", "suggest"}


@pytest.mark.parametrize("recipe", list(Recipe))
def test_a_discipline_cannot_add_a_tool_its_recipe_does_not_allow(recipe: Recipe) -> None:
    disabled = ["create_discipline", "no_such_tool"]
    assert enabled_tools(recipe, disabled) == RECIPE_ALLOWED[recipe] - {"create_discipline"}
    assert enabled_tools(recipe, disabled) <= RECIPE_ALLOWED[recipe]


def test_a_discipline_may_disable_everything() -> None:
    assert enabled_tools(Recipe.YAP, ALL_TOOLS) == frozenset()


def test_unknown_tools_lists_names_outside_the_registry_sorted_once() -> None:
    assert unknown_tools(["done", "zap", "create_task", "bogus", "zap"]) == ["bogus", "zap"]
    assert unknown_tools(ALL_TOOLS) == []


def test_disabled_for_is_the_sorted_complement_of_the_enabled_tools() -> None:
    disabled = disabled_for(Recipe.TASK_EXECUTION, ["flag"])
    assert disabled == sorted(disabled)
    assert set(disabled) == ALL_TOOLS - (VERBS - {"flag"})
    assert "flag" in disabled and "create_discipline" in disabled and "done" not in disabled


def test_hidden_reason_is_none_for_an_enabled_tool() -> None:
    assert hidden_reason("done", Recipe.TASK_EXECUTION, "docs", ["learned"]) is None


def test_hidden_reason_names_the_recipe_and_its_allowed_tools() -> None:
    reason = hidden_reason("create_discipline", Recipe.TASK_EXECUTION, "docs", [])
    assert reason == (
        "tool 'create_discipline' is not available: recipe 'task_execution' does not allow it "
        "(allowed: done, partial, stuck, ask, flag, learned, suggest, blocked)"
    )


def test_hidden_reason_names_the_discipline_that_disables_a_tool() -> None:
    reason = hidden_reason("learned", Recipe.TASK_EXECUTION, "docs", ["learned"])
    assert reason == (
        "tool 'learned' is not available: discipline 'docs' disables it for recipe 'task_execution'"
    )


def test_hidden_reason_names_both_when_recipe_and_discipline_hide_a_tool() -> None:
    reason = hidden_reason("create_discipline", Recipe.YAP, "docs", ["create_discipline"])
    assert reason is not None
    assert "recipe 'yap' does not allow it" in reason
    assert reason.endswith("and discipline 'docs' disables it too")


def test_hidden_reason_without_a_discipline_name_still_says_the_discipline_hides_it() -> None:
    reason = hidden_reason("flag", Recipe.TASK_EXECUTION, None, ["flag"])
    assert reason == (
        "tool 'flag' is not available: the session's discipline disables it for recipe 'task_execution'"
    )


def test_hidden_reason_says_an_unknown_tool_is_unknown_and_suggests_enabled_tools() -> None:
    reason = hidden_reason("dnoe", Recipe.TASK_EXECUTION, None, [])
    assert reason == "unknown tool 'dnoe' (did you mean: done?)"
    assert hidden_reason("dnoe", Recipe.TASK_EXECUTION, None, ["done"]) == "unknown tool 'dnoe'"


def test_opus_review_may_update_only_priority_and_description() -> None:
    assert FIELD_RESTRICTIONS[Recipe.OPUS_REVIEW]["update_task"] == {"id", "priority", "description"}
    assert check_fields(Recipe.OPUS_REVIEW, "update_task", {"id", "priority", "description"}) is None
    assert check_fields(Recipe.OPUS_REVIEW, "update_task", {"id", "priority"}) is None


def test_check_fields_names_the_refused_and_the_allowed_fields() -> None:
    message = check_fields(Recipe.OPUS_REVIEW, "update_task", {"id", "title", "priority", "tags"})
    assert message == (
        "recipe 'opus_review' may not set title, tags through 'update_task' "
        "(allowed: id, description, priority)"
    )


def test_check_fields_leaves_other_recipes_and_tools_alone() -> None:
    assert check_fields(Recipe.YAP, "update_task", {"id", "title"}) is None
    assert check_fields(Recipe.OPUS_REVIEW, "update_feature", {"name", "architecture"}) is None
