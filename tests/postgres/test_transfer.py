"""`ralph-desk migrate`: a project's database copied between SQLite and PostgreSQL without losing a
row or a value, checked table by table, all or nothing, with clear errors for a wrong request."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, inspect, select
from sqlalchemy.engine import make_url

from ralph_desk.cli import main
from ralph_desk.demo import create_demo
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from ralph_desk.store import branches, merge_queue, transfer
from ralph_desk.store.engine import create_db_engine
from ralph_desk.store.health import redacted
from ralph_desk.store.schema import Base
from ralph_desk.store.urls import sqlite_url

Dump = dict[str, list[dict[str, Any]]]


def dump(url: str) -> Dump:
    """Every row of every table, as Python values, in primary-key order (ids included)."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            tables: Dump = {}
            for table in Base.metadata.sorted_tables:
                rows = [dict(row) for row in connection.execute(select(table)).mappings()]
                key = [column.name for column in table.primary_key.columns]
                tables[table.name] = sorted(rows, key=lambda row: tuple(row[name] for name in key))
            return tables
    finally:
        engine.dispose()


def counts(url: str) -> dict[str, int]:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table.name: connection.scalar(select(func.count()).select_from(table)) or 0
                for table in Base.metadata.sorted_tables
            }
    finally:
        engine.dispose()


PASSWORD_WARNING = "ralph-desk: warning: the password in "


def migrate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`migrate ARGV`: its exit code, output, and errors past the warning about a password in an argument."""
    code = main(["migrate", *argv])
    captured = capsys.readouterr()
    lines = captured.err.splitlines(keepends=True)
    warned = [line for line in lines if line.startswith(PASSWORD_WARNING)]
    assert len(warned) == sum(1 for value in argv if redacted(value) != value), captured.err
    return code, captured.out, "".join(line for line in lines if line not in warned)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[ProjectPaths]:
    """The Tidewater demo on SQLite, plus values that are easy to lose on the way: text with quotes,
    newlines and emoji, a float that is not a short decimal, every kind of boolean."""
    url = sqlite_url(tmp_path / "demo.db")
    paths = create_demo(tmp_path / "demo", db_url=url)
    services = Services.open(paths, url)
    try:
        task = services.tasks.create(
            services.features.list()[0].name,
            "backend",
            'Quote "it"; it\'s\nmulti-line — ✓ 🌊',
            tags=['say "hi"', "ünïcode"],
        )
        services.comments.add(task.id, "human", "0.1 + 0.2 is not 0.3\ttab")
        services.reviews.add_comment(task.id, "Line 3: say why ✓", file="src/tide.py", line=3)
        with services.db.write() as unit:  # an approval another checkout has still to merge
            merge_queue.enqueue(unit, task.id, "machine-b:/home/ana/tidewater ✓", "5" * 40)
            branches.record(unit, "machine-b:/home/ana/tidewater ✓", task.id, "refs/heads/ralph/26-quote-it")
            branches.mark_adopted(unit, "machine-b:/home/ana/tidewater ✓")
        services.signals.record(task.id, "s-edge", "ask", question="Blocking?", blocking=False)
        services.signals.record(task.id, "s-edge", "flag", what="No answer", severity="info", category="bug")
        session = services.sessions.start_session(
            "s-edge", task_id=task.id, recipe="task_execution", agent="x"
        )
        services.sessions.finish_session(session.id, outcome="done", cost_usd=0.1 + 0.2, turns=3)
        companion = services.companion(b"k" * 32)  # a paired phone ✓, and a code still to use
        companion.pair(companion.issue_code().code, "Ana's phone ✓")
        companion.issue_code()
    finally:
        services.close()
    yield paths


@pytest.fixture
def demo_url(demo: ProjectPaths, tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "demo.db")


def test_the_demo_goes_from_sqlite_to_postgresql_and_back_to_a_new_sqlite_file_unchanged(
    demo_url: str, pg_url: str, tmp_path: Path
) -> None:
    back_url = sqlite_url(tmp_path / "back" / "ralph.db")
    original = dump(demo_url)
    assert all(original.values()), "the demo should fill every table, so that every table is copied"

    there = transfer.copy_database(demo_url, pg_url)
    back = transfer.copy_database(pg_url, back_url)

    assert dump(pg_url) == original
    assert dump(back_url) == original
    assert there.ok and back.ok
    assert [check.table for check in there.tables] == list(original)
    assert there.rows == back.rows == sum(len(rows) for rows in original.values())


def test_after_a_copy_to_postgresql_new_rows_get_new_ids_and_every_service_works(
    demo: ProjectPaths, demo_url: str, pg_url: str
) -> None:
    before = dump(demo_url)
    report = transfer.copy_database(demo_url, pg_url)
    assert {"tasks", "task_comments", "task_signals", "change_log"} <= set(report.sequences_reset)

    services = Services.open(demo, pg_url)
    try:
        task = services.tasks.create(services.features.list()[0].name, "backend", "After the move")
        comment = services.comments.add(task.id, "human", "Still here.")
        signal = services.signals.record(task.id, "s-new", "done", summary="Moved.")
        newest_change = services.db.latest_change_id()
    finally:
        services.close()

    assert task.id == max(row["id"] for row in before["tasks"]) + 1
    assert comment.id == max(row["id"] for row in before["task_comments"]) + 1
    assert signal.id == max(row["id"] for row in before["task_signals"]) + 1
    assert newest_change > max(row["id"] for row in before["change_log"])


def test_a_target_holding_rows_is_refused_and_left_alone_unless_forced(
    demo: ProjectPaths, demo_url: str, pg_url: str
) -> None:
    transfer.copy_database(demo_url, pg_url)
    first_copy = dump(pg_url)
    services = Services.open(demo, demo_url)
    try:
        services.tasks.create(services.features.list()[0].name, "backend", "Added after the first copy")
    finally:
        services.close()

    with pytest.raises(transfer.TransferError, match=r"already holds \d+ rows .*pass --force"):
        transfer.copy_database(demo_url, pg_url)
    assert dump(pg_url) == first_copy

    transfer.copy_database(demo_url, pg_url, force=True)
    assert dump(pg_url) == dump(demo_url) != first_copy


def test_a_copy_that_differs_from_its_source_is_rolled_back_naming_the_table(
    demo_url: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_table = transfer._copy_table

    def lose_a_comment(source: Any, target: Any, table: Any) -> None:
        copy_table(source, target, table)
        if table.name == "task_comments":
            target.execute(table.delete().where(table.c.id == 1))

    monkeypatch.setattr(transfer, "_copy_table", lose_a_comment)

    with pytest.raises(
        transfer.TransferMismatchError, match=r"differs from the source in: task_comments$"
    ) as caught:
        transfer.copy_database(demo_url, pg_url)

    differing = [check for check in caught.value.report.tables if not check.ok]
    assert [(c.table, c.source_rows - c.target_rows) for c in differing] == [("task_comments", 1)]
    assert set(counts(pg_url).values()) == {0}


def test_a_row_postgresql_cannot_hold_stops_the_copy_naming_its_table(
    demo: ProjectPaths, demo_url: str, pg_url: str
) -> None:
    path = make_url(demo_url).database
    assert path is not None
    connection = sqlite3.connect(path)  # SQLite keeps a NUL in text; PostgreSQL cannot
    with connection:
        connection.execute("UPDATE task_comments SET body = ? WHERE id = 1", ("before\x00after",))
    connection.close()

    with pytest.raises(transfer.TransferError, match=r"copying task_comments failed.*NUL"):
        transfer.copy_database(demo_url, pg_url)

    assert set(counts(pg_url).values()) == {0}


def test_the_migrate_command_prints_the_comparison_and_how_to_use_the_copy(
    capsys: pytest.CaptureFixture[str], demo: ProjectPaths, demo_url: str, pg_url: str
) -> None:
    code, out, err = migrate(capsys, "--root", str(demo.root), "--db-url", demo_url, "--to", pg_url)

    assert (code, err) == (0, "")
    lines = out.splitlines()
    for table in Base.metadata.sorted_tables:
        [line] = [line for line in lines if line.split()[:1] == [table.name]]
        source_rows, target_rows, source_hash, target_hash, verdict = line.split()[1:]
        assert (source_rows, source_hash, verdict) == (target_rows, target_hash, "same")
    password = make_url(pg_url).password
    assert f":{password}@" not in out and ":***@" in out
    assert f"All {len(Base.metadata.sorted_tables)} tables match" in out
    assert "--db-url postgresql+psycopg://" not in out and "Use it with --db-url-file" in out


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_unreachable_target_is_one_line_naming_it_without_its_password(
    capsys: pytest.CaptureFixture[str], demo_url: str
) -> None:
    target = f"postgresql+psycopg://ralph:s3cret@127.0.0.1:{_closed_port()}/nowhere"

    code, _, err = migrate(capsys, "--from", demo_url, "--to", target)

    assert code == 1
    assert err.count("\n") == 1 and "s3cret" not in err
    assert err.startswith(
        "ralph-desk: error: cannot reach the target database postgresql+psycopg://ralph:***@"
    )


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        ("sqlite:///{tmp}/missing.db", "{pg}", "does not exist"),
        ("{pg}", "sqlite:///{tmp}/out.db", "holds no ralph-desk database"),
        ("not a url", "{pg}", "is not a database URL"),
        ("{pg}", "{pg}", "the same database"),
    ],
    ids=["missing sqlite source", "empty source", "malformed url", "same database"],
)
def test_a_wrong_request_is_a_one_line_usage_error_that_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_url: str, source: str, target: str, message: str
) -> None:
    def fill(url: str) -> str:
        return url.format(tmp=tmp_path, pg=pg_url)

    code, _, err = migrate(capsys, "--from", fill(source), "--to", fill(target))

    assert (code, err.count("\n")) == (2, 1)
    assert message in err
    assert not (tmp_path / "out.db").exists()
    assert counts_or_none(pg_url) is None


def counts_or_none(url: str) -> dict[str, int] | None:
    """The row counts of a database with the schema, None for one without."""
    engine = create_db_engine(url)
    try:
        if not inspect(engine).get_table_names():
            return None
    finally:
        engine.dispose()
    return counts(url)
