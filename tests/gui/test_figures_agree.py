"""The Dashboard, `ralph-desk status --json` and the `get_project_progress` tool show the same figures."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.cli import main
from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.server import build_server
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.gui.conftest import settle

SESSIONS = 5000
STAMP = "2026-01-05 10:00:00.000000"


def _fill(paths: ProjectPaths) -> None:
    """Two features, tasks in several statuses, 5,000 sessions with odd costs, and inbox signals."""
    services = Services.open(paths)
    try:
        services.features.create("tides", "Tides")
        services.features.create("charts", "Charts")
        services.disciplines.create("backend", "Backend", "server", "#1f6feb")
        statuses = ("pending", "done", "done", "blocked", "skipped", "in_progress")
        tasks = [services.tasks.create(("tides", "charts")[n % 2], "backend", f"Task {n}") for n in range(12)]
        for n, task in enumerate(tasks):
            services.tasks.move(task.id, statuses[n % 6], Mover.IMPORT)
        first, second = tasks[0].id, tasks[1].id
        services.signals.record(first, "s-1", "ask", question="Metres?", blocking=True)
        services.signals.record(second, "s-2", "ask", question="Colours?", blocking=False)
        answered = services.signals.record(second, "s-2", "ask", question="Fonts?", blocking=False)
        services.inbox.answer(answered.id, "Serif.")
        services.signals.record(
            second, "s-2", "flag", what="Slow tide table.", severity="warning", category="performance"
        )
        services.signals.record(
            second, "s-2", "suggest", what="Split the chart.", why="Too big.", kind="refactor"
        )
    finally:
        services.close()
    rows = [
        (
            f"bulk-{n}",
            tasks_id,
            "task_execution",
            "command",
            STAMP,
            0.000137 * (n % 97 + 1),
            n % 7 + 1,
            10 * n,
            n,
            f"2026-01-05 {10 + n % 10}:00:00.000000",
            "done" if n % 3 == 0 else "stuck",
        )
        for n, tasks_id in ((n, (n % 12) + 1) for n in range(SESSIONS))
    ]
    connection = sqlite3.connect(paths.db_file)
    try:
        connection.executemany(
            "INSERT INTO agent_sessions (id, task_id, recipe, agent, started_at, cost_usd, turns,"
            " input_tokens, output_tokens, ended_at, outcome, changed_files)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]')",
            rows,
        )
        connection.commit()
    finally:
        connection.close()


@pytest.fixture
def big(tmp_path: Path) -> ProjectPaths:
    """A project with 5,000 agent sessions (more than any page of sessions the window reads)."""
    paths = init_project(tmp_path / "big", title="Big")
    _fill(paths)
    return paths


def _status(capsys: pytest.CaptureFixture[str], paths: ProjectPaths) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["status", "--json", "--root", str(paths.root)]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _tool(services: Services) -> dict[str, Any]:
    async def call() -> dict[str, Any]:
        server = build_server(services, SessionContext(recipe=Recipe.OPUS_REVIEW))
        async with Client(server, mode="legacy") as client:
            result = await client.call_tool("get_project_progress", {})
        assert not result.is_error and result.structured_content is not None
        return result.structured_content

    return anyio.run(call)


def test_the_dashboard_status_json_and_get_project_progress_agree_on_5000_sessions(
    qtbot: QtBot, big: ProjectPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = _status(capsys, big)
    services = Services.open(big)
    try:
        tool = _tool(services)
        window = build_window(
            services,
            settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
            use_tray=False,
            live=False,
        )
        qtbot.addWidget(window)
        window.show_pane("dashboard")
        settle(qtbot, window)
        shown = window.dashboard.data
        assert shown is not None
        totals = shown.totals
        expected_cost = round(sum(0.000137 * (n % 97 + 1) for n in range(SESSIONS)), 6)

        assert status["cost"]["sessions"] == tool["cost"]["sessions"] == totals.sessions.sessions == SESSIONS
        assert status["cost"]["turns"] == tool["cost"]["turns"] == totals.sessions.turns
        assert status["cost"]["turns"] == sum(n % 7 + 1 for n in range(SESSIONS))
        assert (
            status["cost"]["output_tokens"] == tool["cost"]["output_tokens"] == totals.sessions.output_tokens
        )
        assert status["cost"]["total_usd"] == pytest.approx(tool["cost"]["cost_usd"]) == expected_cost
        assert totals.sessions.cost_usd == pytest.approx(expected_cost)
        assert window.dashboard.cost.value.text() == f"${expected_cost:,.2f}"
        assert window.dashboard.cost.note.text().startswith("5,000 sessions")
        assert (
            status["inbox"]
            == tool["inbox"]
            == totals.inbox.as_dict()
            == {"asks": 2, "suggestions": 1, "flags": 1}
        )
        assert window.dashboard.questions.value.text() == "2"
        assert status["tasks"]["by_status"] == tool["by_status"] == totals.tasks.by_status
        assert status["tasks"]["total"] == tool["total"] == totals.tasks.total == 12
        assert status["tasks"]["done"] == tool["done"] == totals.tasks.done == 4
        assert window.dashboard.done.value.text() == "4 / 12"
        for span in ("recent", "overall"):
            rate = getattr(totals.throughput, span)
            assert status["throughput"][span]["tasks"] == tool["throughput"][span]["tasks"] == rate.tasks
            assert status["throughput"][span]["hours"] == pytest.approx(
                tool["throughput"][span]["hours"], abs=1e-4
            )
            assert tool["throughput"][span]["hours"] == rate.hours and rate.tasks > 0
        for name in ("tides", "charts"):
            assert status["tasks"]["by_feature"][name]["by_status"] == tool["by_feature"][name]["by_status"]
            assert tool["by_feature"][name]["by_status"] == totals.by_feature[name].by_status
        window.close()
    finally:
        services.close()
