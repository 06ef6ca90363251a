"""A run's settings: the project's config, the run's typed overrides on top, one snapshot per run."""

from __future__ import annotations

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.build import build_runner
from ralph_desk.loop.model import ReviewSettings
from ralph_desk.loop.settings import RunOverrides, load_settings
from ralph_desk.project import update_config
from ralph_desk.services.container import Services


class NoIssuer:
    """An issuer for a runner that starts no session."""

    def open_session(self, context: SessionContext) -> SessionEndpoint:
        raise AssertionError("no session starts here")

    def close_session(self, endpoint: SessionEndpoint) -> None:
        raise AssertionError("no session starts here")


def test_a_run_override_replaces_only_what_it_sets(project: Services) -> None:
    update_config(project.paths, max_iterations=7, parallel=2)

    settings = load_settings(project.paths, RunOverrides(parallel=3, max_cost_usd=None))

    assert (settings.parallel, settings.max_iterations) == (3, 7)
    assert settings.max_cost_usd == load_settings(project.paths).max_cost_usd


def test_a_runner_keeps_the_review_settings_it_was_built_with(project: Services) -> None:
    update_config(project.paths, review_gate=True, review_skip_disciplines=["docs"], reviewer_agent=True)
    runner = build_runner(project, NoIssuer(), load_settings(project.paths))

    update_config(project.paths, review_gate=False, review_skip_disciplines=[], reviewer_agent=False)

    assert runner.parts.review == ReviewSettings(gate=True, skip_disciplines=("docs",), reviewer_agent=True)
    assert runner.parts.review.gate_applies("backend") and not runner.parts.review.gate_applies("docs")
