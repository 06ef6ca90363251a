"""A project outside git: the Reviews tab says so and offers to make it a git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import REVIEWS
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import AlreadyRepositoryError, make_repository
from tests.support.git_changes import git

WAIT_MS = 10_000


def test_the_reviews_tab_of_a_plain_folder_makes_it_a_git_repository_on_request(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path
) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(REVIEWS)
    empty = window.inbox.reviews.empty
    qtbot.waitUntil(lambda: empty.button.isVisibleTo(window), timeout=WAIT_MS)
    assert empty.title.text() == "Not a git repository" and "git init" in empty.text.text()

    empty.button.click()

    qtbot.waitUntil(lambda: not empty.button.isVisibleTo(window), timeout=WAIT_MS)
    assert services.workspaces.is_git() and empty.title.text() == "Nothing to review"
    assert "git repository now" in window.message_bar.text
    tracked = git(project, "ls-files").splitlines()
    assert ".ralph/config.json" in tracked and not any(name.startswith(".ralph/db/") for name in tracked)
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    chosen = services.tasks.list()[0]
    assert services.workspaces.prepare(chosen.id, chosen.title) is not None  # tasks get branches now


def test_a_folder_that_is_a_repository_already_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    make_repository(tmp_path)
    head = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "b.txt").write_text("b\n")
    with pytest.raises(AlreadyRepositoryError, match="nothing was changed"):
        make_repository(tmp_path)
    assert git(tmp_path, "rev-parse", "HEAD") == head
