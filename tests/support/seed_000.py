"""Seed 000's verbs and ALLOWED lists, transcribed: tests check the recipes against the seed, not the code."""

from __future__ import annotations

from ralph_desk.domain.enums import Recipe

__all__ = ["SEED_000_ALLOWED", "VERBS"]

VERBS = {"done", "partial", "stuck", "ask", "flag", "learned", "suggest", "blocked"}

SEED_000_ALLOWED: dict[Recipe, set[str]] = {
    Recipe.BRAINDUMP: {
        "create_feature", "create_discipline", "create_task",
        "list_features", "list_disciplines", "list_tasks",
        "get_feature", "get_discipline",
        "get_project_info",
    },
    Recipe.YAP: {
        "list_tasks", "get_task", "create_task", "update_task",
        "list_features", "list_disciplines",
        "set_task_status",
        "get_project_info",
    },
    Recipe.RAMBLE: {
        "list_features", "get_feature", "create_feature", "update_feature",
        "append_feature_learning", "add_feature_context_file",
        "list_tasks",
        "get_project_info",
    },
    Recipe.DISCUSS: {
        "list_disciplines", "get_discipline", "update_discipline",
        "get_project_info",
    },
    Recipe.OPUS_REVIEW: {
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
    },
    Recipe.ENRICHMENT: {
        "list_tasks", "get_task",
        "enrich_task",
        "update_task",
        "create_task",
        "list_features", "get_feature",
        "list_disciplines",
        "get_project_info",
    },
}  # fmt: skip
