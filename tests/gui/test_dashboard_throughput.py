"""The Dashboard's throughput and spend per session: the database's figures, as `status` prints them."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.cli import main
from ralph_desk.domain.totals import Rate
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.gui.conftest import settle

START = datetime(2026, 1, 5, 10, 0)
SESSIONS = 60  # more than the spend table lists (the latest 50)
FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def _fill(paths: ProjectPaths) -> None:
    """Six tasks; a session every 30 minutes for 20 minutes, every other one `done`, odd costs and turns."""
    services = Services.open(paths)
    try:
        services.features.create("tides", "Tides")
        services.disciplines.create("backend", "Backend", "server", "#1f6feb")
        for n in range(6):
            services.tasks.create("tides", "backend", f"Task {n}")
    finally:
        services.close()
    rows = []
    for n in range(SESSIONS):
        started = START + timedelta(minutes=30 * n)
        outcome = "done" if n % 2 == 0 else "stuck"
        ended = started + timedelta(minutes=20)
        rows.append(
            (
                f"s-{n:03}",
                n % 6 + 1,
                started.strftime(FORMAT),
                ended.strftime(FORMAT),
                outcome,
                0.013 * (n % 7 + 1),
                n % 9 + 1,
            )
        )
    connection = sqlite3.connect(paths.db_file)
    try:
        connection.executemany(
            "INSERT INTO agent_sessions (id, task_id, recipe, agent, started_at, ended_at, outcome, cost_usd,"
            " turns, input_tokens, output_tokens, changed_files) VALUES (?, ?, 'task_execution', 'command',"
            " ?, ?, ?, ?, ?, 0, 0, '[]')",
            rows,
        )
        connection.commit()
    finally:
        connection.close()


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    """A project with a day and a half of agent sessions."""
    made = init_project(tmp_path / "tides", title="Tides")
    _fill(made)
    return made


def _sql(paths: ProjectPaths, query: str, *arguments: Any) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(paths.db_file)
    try:
        return connection.execute(query, arguments).fetchall()
    finally:
        connection.close()


def _dashboard(qtbot: QtBot, services: Services, tmp_path: Path) -> MainWindow:
    window = build_window(
        services,
        settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
        use_tray=False,
        live=False,
    )
    qtbot.addWidget(window)
    window.show_pane("dashboard")
    settle(qtbot, window)
    return window


def test_throughput_counts_tasks_finished_over_the_last_three_hours_and_overall(
    qtbot: QtBot, paths: ProjectPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The last session ends 29 h 50 min after the first starts; the last 3 h begin 2 h 50 min before.
    last_end = START + timedelta(minutes=30 * (SESSIONS - 1) + 20)
    since = last_end - timedelta(hours=3)
    ((finished,),) = _sql(paths, "SELECT COUNT(DISTINCT task_id) FROM agent_sessions WHERE outcome = 'done'")
    ((recent,),) = _sql(
        paths,
        "SELECT COUNT(DISTINCT task_id) FROM agent_sessions WHERE outcome = 'done' AND ended_at >= ?",
        since.strftime(FORMAT),
    )
    assert (finished, recent) == (3, 3)  # tasks 1, 3, 5 (each done several times, counted once)
    overall_hours = (last_end - START).total_seconds() / 3600
    capsys.readouterr()
    assert main(["status", "--json", "--root", str(paths.root)]) == 0
    status = json.loads(capsys.readouterr().out)["throughput"]
    services = Services.open(paths)
    try:
        window = _dashboard(qtbot, services, tmp_path)
        pane = window.dashboard
        assert pane.data is not None
        throughput = pane.data.totals.throughput

        assert throughput.recent == Rate(recent, 3.0)
        assert throughput.overall.tasks == finished
        assert throughput.overall.hours == pytest.approx(overall_hours)
        assert status["recent"] == {"tasks": 3, "hours": 3.0, "per_hour": 1.0}
        assert status["overall"] == {"tasks": 3, "hours": round(overall_hours, 4), "per_hour": 0.1}
        assert pane.recent_rate.text() == "1.0 tasks / h"
        assert pane.recent_note.text() == "over the last 3 h of agent work · 3 tasks"
        assert pane.overall_rate.text() == f"{finished / overall_hours:.2f} tasks / h" == "0.10 tasks / h"
        assert pane.overall_note.text() == "overall · 3 tasks in 29 h 50 min"
        window.close()
    finally:
        services.close()


def test_spend_per_session_lists_the_latest_sessions_with_their_cost_turns_and_duration(
    qtbot: QtBot, paths: ProjectPaths, tmp_path: Path
) -> None:
    latest = _sql(paths, "SELECT id, cost_usd, turns FROM agent_sessions ORDER BY started_at DESC LIMIT 50")
    ((count, total),) = _sql(paths, "SELECT COUNT(*), SUM(cost_usd) FROM agent_sessions")
    services = Services.open(paths)
    try:
        window = _dashboard(qtbot, services, tmp_path)
        pane = window.dashboard
        model = pane.spend_model

        shown = {row.session.id: (row.session.cost_usd, row.session.turns) for row in model.items}
        assert shown == {session: (cost, turns) for session, cost, turns in latest}
        costs = [model.record(row).session.cost_usd for row in range(model.rowCount())]
        assert costs == sorted(costs, reverse=True)  # the dearest first
        assert model.index(0, 6).data() == "20 min" and model.record(0).task_title.startswith("Task ")
        summary = pane.spend_summary.text()
        assert summary.startswith(f"{count} sessions · ${total:,.2f} · ${total / count:,.2f} a session")
        assert f"${total / 3:,.2f} a finished task" in summary and "(the latest 50 below)" in summary
        window.close()
    finally:
        services.close()
