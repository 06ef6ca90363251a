"""The official MCP conformance suite against the HTTP server (see tests/hardening/conformance.py)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from ralph_desk.domain.enums import Recipe
from ralph_desk.project import ProjectPaths
from tests.hardening.conformance import FIXTURE, GENERIC, open_gate_server, run_suite, table
from tests.hardening.support import INIT_PARAMS, Seeded
from tests.support.npm_tools import conformance_cmd, missing_reason

# Protocol conformance does not depend on the database: the SQLite run is enough.
pytestmark = [pytest.mark.slow, pytest.mark.sqlite_only]


@pytest.fixture
def suite() -> None:
    if conformance_cmd() is None:
        pytest.skip(missing_reason("the MCP conformance suite (Node 22)"))


def test_the_generic_conformance_scenarios_pass(
    suite: None, seeded: tuple[ProjectPaths, Seeded], tmp_path: Path
) -> None:
    paths, _ = seeded
    with open_gate_server(paths) as url:
        # The gate is open for the suite only because it cannot send a token; nothing else differs.
        answer = httpx2.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS},
            headers={"Accept": "application/json, text/event-stream", "Host": "evil.example"},
            timeout=30,
        )
        assert answer.status_code == 421
        outcomes, console = run_suite(url, tmp_path / "results")
    print(table(outcomes))
    ran = {outcome.scenario: outcome for outcome in outcomes}
    assert set(GENERIC) <= set(ran), (
        f"generic scenarios that did not run: {set(GENERIC) - set(ran)}\n{console}"
    )
    failed = {name: ran[name].detail for name in GENERIC if not ran[name].passed}
    assert failed == {}, f"generic scenarios failed: {failed}"
    unclassified = set(ran) - set(GENERIC) - set(FIXTURE)
    assert unclassified == set(), (
        f"new scenarios to classify in tests/hardening/conformance.py: {unclassified}"
    )


# The first test lists the ide recipe's tools; these add every other tool a recipe allows
# (understand's tools are a subset of ide's).
@pytest.mark.parametrize("recipe", [r.value for r in Recipe if r not in (Recipe.IDE, Recipe.UNDERSTAND)])
def test_every_recipes_tool_list_passes_the_tools_list_scenario(
    suite: None, seeded: tuple[ProjectPaths, Seeded], tmp_path: Path, recipe: str
) -> None:
    paths, ids = seeded
    flags = ["--recipe", recipe] + (["--task-id", str(ids.parser)] if recipe == "task_execution" else [])
    with open_gate_server(paths, *flags) as url:
        outcomes, console = run_suite(url, tmp_path / "results", scenario="tools-list")
    assert [(o.scenario, o.passed, o.detail) for o in outcomes] == [("tools-list", True, "")], console
