"""What Start says before a run: the agent and its program, the model, the budget, the work, the folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralph_desk.loop.agents import AgentUnavailableError
from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.start_summary import summarise_start
from ralph_desk.services.container import Services


def test_a_git_repository_with_code_and_a_paid_agent_are_named(project: Services, tmp_path: Path) -> None:
    program = tmp_path / "claude"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    project.tasks.create(feature="core", discipline="backend", title="One", status="pending")
    settings = LoopSettings(
        agent="claude", agent_bin=str(program), models={"default": "opus"}, max_cost_usd=3.0
    )

    summary = dict(summarise_start(project, settings, project.paths.root).lines())

    assert summary["Agent"] == f"claude — {program}"
    assert summary["Model"] == "opus" and summary["Budget"] == "stops at $3.00 per run"
    assert summary["Runnable tasks"] == "1"
    assert summary["Folder"].startswith("a git repository with ") and "tracked file" in summary["Folder"]


def test_the_rehearsal_costs_nothing_and_a_plain_folder_is_said_to_be_one(
    tmp_path: Path, project: Services
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()

    summary = summarise_start(project, LoopSettings(agent="rehearsal", max_iterations=None), plain)

    assert not summary.costs_money
    lines = dict(summary.lines())
    assert lines["Budget"] == "free: no model is asked" and lines["Sessions"] == "no limit"
    assert lines["Folder"].startswith("not a git repository")


def test_a_missing_program_is_refused_before_anything_is_shown(project: Services, tmp_path: Path) -> None:
    settings = LoopSettings(agent="codex", agent_bin=str(tmp_path / "no-codex"))

    with pytest.raises(AgentUnavailableError, match="no-codex"):
        summarise_start(project, settings, project.paths.root)


def test_start_says_the_sessions_run_unconfined_when_the_sandbox_is_off(project: Services) -> None:
    on = dict(summarise_start(project, LoopSettings(agent="rehearsal"), project.paths.root).lines())
    off = dict(
        summarise_start(project, LoopSettings(agent="rehearsal", sandbox=False), project.paths.root).lines()
    )

    assert off["Sandbox"] == "NOT confined: the sandbox setting is off — agents, checks and setup run as you"
    assert on["Sandbox"].startswith(("bubblewrap: each session writes only its worktree", "NOT confined: "))
