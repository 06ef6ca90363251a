"""Fixtures for the window tests: the demo project copied per test, real services, the built window."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.demo import create_demo
from ralph_desk.gui.collector import GuiThreadCollector
from ralph_desk.gui.controller import Controller
from ralph_desk.gui.focus_style import app_style
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from tests.gui.guard import GuiThreadGuard
from tests.support.trusted import trust_copy

# Offscreen Qt says this about every top-level window; it is not a problem of the window.
OFFSCREEN_NOISE = "This plugin does not support"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Qt warnings fail the window tests (except the offscreen platform's own notes)."""
    for item in items:
        if "tests/gui/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def gui_thread_collection(qapp: object) -> Iterator[None]:
    """Garbage collection on the GUI thread only, as the app has it (`prepare_application`)."""
    collector = GuiThreadCollector()
    yield
    collector.stop()
    collector.deleteLater()


@pytest.fixture
def fusion(qapp: QApplication) -> Iterator[None]:
    """The Fusion style, as the app sets it (for tests that measure what a person sees)."""
    before = qapp.style().name()
    style = app_style()
    assert style is not None
    qapp.setStyle(style)
    yield
    qapp.setStyle(before)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Tidewater demo project, built once per test run."""
    return create_demo(tmp_path_factory.mktemp("template") / "demo").root


@pytest.fixture
def project(tmp_path: Path, demo_template: Path) -> Path:
    """A fresh copy of the demo project for one test."""
    root = tmp_path / "demo"
    shutil.copytree(demo_template, root)
    trust_copy(root)
    return root


@pytest.fixture
def services(project: Path) -> Iterator[Services]:
    """The services of the test's demo project."""
    opened = Services.open(ProjectPaths.at(project))
    yield opened
    opened.close()


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Window settings in the test's folder (never the user's)."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def opened_files() -> list[str]:
    """Files the window asked the desktop to open."""
    return []


@pytest.fixture
def gui_thread_guard(services: Services) -> Iterator[GuiThreadGuard]:
    """The services guarded: the test fails if window code calls one on the GUI thread."""
    guard = GuiThreadGuard(services)
    yield guard
    assert guard.faults == [], "window code called the services on the GUI thread"


@pytest.fixture
def window(
    qtbot: QtBot,
    services: Services,
    settings: QSettings,
    opened_files: list[str],
    gui_thread_guard: GuiThreadGuard,
) -> MainWindow:
    """The main window on the demo project, shown and following changes (its service calls guarded)."""

    def open_file(path: str) -> bool:
        opened_files.append(path)
        return True

    built = build_window(services, settings=settings, mcp_url=None, use_tray=False, open_file=open_file)
    # pytest-qt closes and deletes the window before any fixture's teardown: stop the feed first.
    qtbot.addWidget(built, before_close_func=lambda shown: controller(shown).feed.stop())
    built.resize(1400, 900)
    built.show()
    qtbot.waitExposed(built)
    settle(qtbot, built)
    return built


def controller(window: MainWindow) -> Controller:
    """The window's controller."""
    assert window.controller is not None
    return window.controller


def settle(qtbot: QtBot, window: MainWindow, timeout: int = 5000) -> None:
    """Wait until the window's worker has finished and delivered every operation handed to it."""
    worker = controller(window).worker
    qtbot.waitUntil(lambda: worker.idle, timeout=timeout)


def add_tasks(project: Path, count: int) -> None:
    """Insert `count` generated tasks straight into the demo database (fast, for scale tests)."""
    connection = sqlite3.connect(ProjectPaths.at(project).db_file)
    try:
        features = [row[0] for row in connection.execute("SELECT id FROM features ORDER BY id")]
        disciplines = [row[0] for row in connection.execute("SELECT id FROM disciplines ORDER BY id")]
        statuses = ("draft", "pending", "in_progress", "done", "blocked", "needs_input", "skipped", "failed")
        priorities = ("low", "medium", "high", "critical")
        origins = ("human", "agent", "import")
        stamp = "2026-01-05 10:00:00.000000"
        rows = [
            (
                features[number % len(features)],
                disciplines[number % len(disciplines)],
                f"Generated task {number}: tune the harbour model {number % 97}",
                priorities[number % 4],
                statuses[number % 8],
                origins[number % 3],
                stamp,
                stamp,
            )
            for number in range(count)
        ]
        connection.executemany(
            "INSERT INTO tasks (feature_id, discipline_id, title, priority, status, origin, created_at,"
            " updated_at, acceptance_criteria, tags, context_files, output_artifacts, stuck_count)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, '[]', '[]', '[]', '[]', 0)",
            rows,
        )
        connection.commit()
    finally:
        connection.close()
