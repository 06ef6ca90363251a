"""The learnings and progress files: timestamped appends, reads, the tail, limits and notices."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralph_desk.domain.records import Change
from ralph_desk.project import ProjectPaths
from ralph_desk.services.errors import InvalidValueError
from ralph_desk.services.state_files import StateFileService, format_entry
from ralph_desk.store.database import Database

NOON = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    return ProjectPaths.at(tmp_path)


@pytest.fixture
def db(paths: ProjectPaths) -> Iterator[Database]:
    database = Database(paths.db_url())
    yield database
    database.dispose()


@pytest.fixture
def state(paths: ProjectPaths, db: Database) -> StateFileService:
    return StateFileService(paths, db, clock=lambda: NOON)


def test_an_appended_learning_is_a_timestamped_entry(state: StateFileService, paths: ProjectPaths) -> None:
    entry = state.append_learning("Tide heights come in metres above chart datum.")

    assert entry == "## 2026-11-22 10:00 UTC\nTide heights come in metres above chart datum.\n"
    assert paths.learnings_file.read_text(encoding="utf-8") == entry


def test_entries_are_appended_in_order(state: StateFileService) -> None:
    state.append_progress("first")
    state.append_progress("second\n\n")

    assert state.read_progress() == "## 2026-11-22 10:00 UTC\nfirst\n## 2026-11-22 10:00 UTC\nsecond\n"


def test_the_files_are_created_when_missing(state: StateFileService, paths: ProjectPaths) -> None:
    assert not paths.progress_file.exists()

    state.append_progress("started")

    assert paths.progress_file.is_file()


def test_reading_a_missing_file_gives_empty_text(state: StateFileService) -> None:
    assert state.read_learnings() == ""
    assert state.read_progress() == ""


def test_timestamps_are_written_in_utc() -> None:
    evening = datetime.fromisoformat("2026-11-22T23:30:00-02:00")

    assert format_entry("x", evening).startswith("## 2026-11-23 01:30 UTC\n")


def test_the_progress_tail_keeps_the_last_lines(state: StateFileService) -> None:
    for number in range(30):
        state.append_progress(f"entry {number}")

    tail = state.progress_tail(lines=4)

    assert tail == "## 2026-11-22 10:00 UTC\nentry 28\n## 2026-11-22 10:00 UTC\nentry 29\n"


def test_a_tail_of_zero_lines_is_refused(state: StateFileService) -> None:
    with pytest.raises(InvalidValueError, match="lines"):
        state.progress_tail(lines=0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", "non-empty"), ("   ", "non-empty"), ("a\x00b", "NUL"), ("x" * 20_001, "at most 20000")],
)
def test_bad_text_is_refused_and_nothing_is_written(
    state: StateFileService, paths: ProjectPaths, text: str, expected: str
) -> None:
    with pytest.raises(InvalidValueError, match=expected):
        state.append_learning(text)

    assert not paths.learnings_file.exists()


def test_text_of_exactly_the_limit_is_accepted(state: StateFileService) -> None:
    state.append_learning("x" * 20_000)

    assert len(state.read_learnings()) == len("## 2026-11-22 10:00 UTC\n\n") + 20_000


def test_an_append_publishes_a_state_files_notice(state: StateFileService, db: Database) -> None:
    heard: list[list[Change]] = []
    db.subscribe(heard.append)

    state.append_learning("learned")
    state.append_progress("progressed")

    assert heard == [[Change("state_files", ("learnings",))], [Change("state_files", ("progress",))]]


def test_an_append_is_seen_by_other_processes_through_the_change_log(
    state: StateFileService, db: Database
) -> None:
    before = db.latest_change_id()

    state.append_progress("progressed")

    _, changes = db.changes_since(before)
    assert Change("state_files", ("progress",)) in changes


def _append_many(root: str, marker: str, count: int) -> None:
    paths = ProjectPaths.at(root)
    database = Database(paths.db_url())
    try:
        service = StateFileService(paths, database)
        for number in range(count):
            service.append_progress(f"{marker} {number} " + marker * 2000)
    finally:
        database.dispose()


def test_appends_from_several_processes_never_interleave(paths: ProjectPaths, db: Database) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(paths.root), marker, 15)) for marker in "ABC"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0

    entries = StateFileService(paths, db).read_progress().split("## ")[1:]
    assert len(entries) == 45
    for entry in entries:
        body = entry.split("\n", 1)[1]
        marker = body[0]
        assert body == f"{marker} {body.split()[1]} {marker * 2000}\n"
