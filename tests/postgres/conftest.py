"""Fixtures of the PostgreSQL tests: fresh, empty databases on the test server, dropped afterwards.

These tests need `RALPH_DESK_TEST_POSTGRES_URL` (`.ci/postgres` starts a server and prints it) and
are skipped without it. They name their databases explicitly (`--db-url`, `db_url=`), so they behave
the same whichever backend the rest of the run uses.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ralph_desk.project import ProjectPaths, init_project
from tests.postgres import server

GIT = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]

NewDatabase = Callable[[], str]


@pytest.fixture
def new_database() -> Iterator[NewDatabase]:
    """`new_database()`: the URL of a new, empty database (as many as a test wants)."""
    if server.admin_url() is None:
        pytest.skip(f"set {server.ADMIN_URL_ENV} to run the PostgreSQL tests (.ci/postgres starts a server)")
    made: list[str] = []

    def make() -> str:
        made.append(server.create_database())
        return made[-1]

    yield make
    for url in made:
        server.drop_database(url)


@pytest.fixture
def pg_url(new_database: NewDatabase) -> str:
    """One new, empty database."""
    return new_database()


def git_project(root: Path, db_url: str, title: str = "Harbour") -> ProjectPaths:
    """A git repository with one commit and a ralph-desk project whose database is at `db_url`."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "README.md").write_text("# harbour\n")
    paths = init_project(root, title=title, db_url=db_url)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "start"], cwd=root, check=True)
    return paths


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Return once `condition()` holds; fail the test naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout_s:g} s waiting for {what}")
        time.sleep(0.02)  # a poll interval, not a guess at how long anything takes
