"""Launching the window from the command line: `ralph-desk DIR`, `open DIR`, plain and broken folders."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from ralph_desk import app as desk_app
from ralph_desk.cli import main
from ralph_desk.gui.dialogs import initialise
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.project import DB_URL_ENV, ProjectPaths, init_project
from ralph_desk.store.urls import sqlite_url

TICK_MS = 10
GIVE_UP_TICKS = 3000  # 30 s: the window has long been shown or never will be


@dataclass
class Seen:
    """What the window showed before the test closed it."""

    root: Path | None = None
    title: str = ""
    db_url: str = ""
    gave_up: bool = False
    messages: list[tuple[str, str]] = field(default_factory=list)


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Default QSettings in the test's folder, and no database URL from the developer's shell."""
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "config"))
    yield
    QSettings.setDefaultFormat(QSettings.Format.NativeFormat)


@pytest.fixture
def seen(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seen]:
    """Close the first window the app shows, noting what it shows; message boxes are recorded."""
    record = Seen()
    monkeypatch.setattr(desk_app, "_critical", lambda title, text: record.messages.append((title, text)))
    ticks = 0
    timer = QTimer()
    timer.setInterval(TICK_MS)

    def look() -> None:
        nonlocal ticks
        ticks += 1
        window = next(
            (w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()), None
        )
        if window is not None and window.controller is not None and window.controller.worker.idle:
            record.root, record.title = window.root, window.project_title
            record.db_url = window.controller.services.db.url
            timer.stop()
            window.close()
        elif ticks > GIVE_UP_TICKS:
            record.gave_up = True
            timer.stop()
            asyncio.get_event_loop().stop()

    timer.timeout.connect(look)
    timer.start()
    yield record
    timer.stop()
    asyncio.set_event_loop(None)


def test_a_folder_argument_opens_the_window_on_that_project(project: Path, seen: Seen) -> None:
    code = main([str(project)])

    assert (code, seen.root, seen.title) == (0, project, "Tidewater")
    assert seen.db_url == sqlite_url(ProjectPaths.at(project).db_file)


def test_open_offers_to_initialise_a_plain_folder_then_opens_it(
    tmp_path: Path, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Path] = []
    monkeypatch.setattr(initialise, "ask_to_initialise", lambda root, *_: asked.append(root) or True)
    folder = tmp_path / "harbour"
    folder.mkdir()

    code = main(["open", str(folder)])

    assert (code, asked, seen.root) == (0, [folder], folder)
    assert ProjectPaths.at(folder).db_file.is_file()


def test_cancelling_the_offer_leaves_the_folder_alone_and_exits_non_zero(
    tmp_path: Path, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(initialise, "ask_to_initialise", lambda *_: False)

    code = main([str(tmp_path)])

    assert code != 0
    assert seen.root is None
    assert not (tmp_path / ".ralph").exists()


def test_a_broken_project_is_refused_with_the_validation_message_and_a_non_zero_exit(
    project: Path, seen: Seen
) -> None:
    ProjectPaths.at(project).config_file.write_text("{ not json", encoding="utf-8")

    code = main(["open", str(project)])

    assert code == 2
    assert seen.root is None
    ((title, text),) = seen.messages
    assert "is not sound" in title
    assert "config.json" in text and "not valid JSON" in text


@pytest.fixture
def elsewhere(tmp_path: Path) -> str:
    """The URL of another SQLite database, whose project is titled 'Elsewhere'."""
    return sqlite_url(init_project(tmp_path / "other", title="Elsewhere").db_file)


@pytest.mark.sqlite_only
def test_open_runs_the_window_on_the_database_url_given(project: Path, elsewhere: str, seen: Seen) -> None:
    code = main(["open", str(project), "--db-url", elsewhere])

    assert (code, seen.db_url, seen.title) == (0, elsewhere, "Elsewhere")


@pytest.mark.sqlite_only
def test_the_window_runs_on_the_database_url_from_the_environment(
    project: Path, elsewhere: str, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DB_URL_ENV, elsewhere)

    code = main([str(project)])

    assert (code, seen.db_url, seen.title) == (0, elsewhere, "Elsewhere")


@pytest.mark.sqlite_only
def test_a_plain_folder_is_initialised_on_the_database_url_given(
    tmp_path: Path, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(initialise, "ask_to_initialise", lambda *_: True)
    url = sqlite_url(tmp_path / "shared.db")
    folder = tmp_path / "harbour"
    folder.mkdir()

    code = main(["open", str(folder), "--db-url", url])

    assert (code, seen.db_url, seen.title) == (0, url, "harbour")
    assert (tmp_path / "shared.db").is_file()
    assert not ProjectPaths.at(folder).db_file.exists()


# --- the question itself -------------------------------------------------------------------------


def answer_with(qapp: QApplication, text: str) -> None:
    """Click the button labelled `text` of the question once it is shown."""

    def click() -> None:
        box = qapp.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(TICK_MS, click)
            return
        (button,) = (b for b in box.buttons() if b.text().replace("&", "") == text)
        button.click()

    QTimer.singleShot(0, click)


@pytest.mark.parametrize(("choice", "agreed"), [("Initialise", True), ("Cancel", False)])
def test_the_question_offers_initialise_or_cancel(
    qapp: QApplication, tmp_path: Path, choice: str, agreed: bool
) -> None:
    answer_with(qapp, choice)

    assert initialise.ask_to_initialise(tmp_path) is agreed


def test_the_question_names_the_folder(tmp_path: Path) -> None:
    assert str(tmp_path) in initialise.question_text(tmp_path)
    assert "not a ralph-desk project yet" in initialise.question_text(tmp_path)
    assert "does not exist yet" in initialise.question_text(tmp_path / "new")
