"""Storage faults in plain words (issue 23, item 8), each made for real: a full disk (a small tmpfs), a
read-only file system (a read-only bind mount), a damaged file. Never SQL, a driver's class or a link to
SQLAlchemy's site; never "damaged" for what is only read-only; nothing lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ralph_desk import cli
from ralph_desk.project import ProjectPaths
from ralph_desk.store.errors import REPAIR
from tests.hardening.support import INIT_PARAMS, Seeded, assert_unchanged, db_state, seed_project
from tests.support.jsonrpc import tool_call
from tests.support.stdio_wire import StdioWire, mcp_command

pytestmark = pytest.mark.sqlite_only  # about the SQLite file, its folder and its disk

INTERNALS = ("sqlalche", "Background on this error", "OperationalError", "DatabaseError", "Traceback", "[SQL")
NEW_TASK = {"feature": "core", "discipline": "backend", "title": "New", "description": "x" * 19_000}


def plain(message: str) -> None:
    """One line, no SQL, no driver class, no link."""
    assert "\n" not in message.strip(), message
    for internal in INTERNALS:
        assert internal not in message, message


def read_only_words(message: str) -> None:
    plain(message)
    assert "read-only" in message, message
    assert "damaged" not in message.replace("not damaged", "").replace("nothing is damaged", ""), message
    assert "move it aside" not in message, message


@contextmanager
def mounted(*command: str) -> Iterator[None]:
    """Run `mount` as given (skipping the test where this machine does not allow it), unmount after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root; this test runs as another user")
    done = subprocess.run(["mount", *command], capture_output=True, text=True, check=False, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"this machine does not allow `mount {' '.join(command)}`: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", command[-1]], check=True, timeout=30)


def ralph_desk(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ralph_desk", *argv], capture_output=True, text=True, timeout=120, check=False
    )


def served(paths: ProjectPaths) -> StdioWire:
    """A `ralph-desk mcp` process for the project, past its handshake."""
    wire = StdioWire(mcp_command(paths, "--recipe", "braindump"))
    wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
    assert "result" in wire.answer(0, timeout=120)
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return wire


def fill(folder: Path) -> Path:
    """Write a file in `folder` until its file system has no room left; the file."""
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(descriptor, b"\0" * 65536)
    except OSError as error:
        assert error.errno == 28, error  # ENOSPC: the disk is full
    finally:
        os.close(descriptor)
    return filler


# --- a full disk ----------------------------------------------------------------------------------


def test_a_full_disk_refuses_create_task_saying_the_disk_is_full_and_loses_nothing(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    with mounted("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)):
        paths, _ = seed_project(disk / "proj")
        before = db_state(paths)
        wire = served(paths)
        try:
            wire.send(tool_call(1, "get_project_info", {}))  # the database is open before the disk fills
            assert wire.answer(1, timeout=120)["result"]["structuredContent"]["title"] == "Hardening"
            filler = fill(disk)
            wire.send(tool_call(2, "create_task", NEW_TASK))
            refused = wire.answer(2, timeout=120)["result"]
            filler.unlink()
            assert refused["isError"], refused
            message = refused["content"][0]["text"]
            plain(message)
            assert "the disk holding the database is full" in message and "nothing was written" in message
            assert_unchanged(paths, before, "a create_task refused on a full disk")
            wire.send(tool_call(3, "create_task", NEW_TASK))  # room again: the same server writes it
            assert not wire.answer(3, timeout=120)["result"]["isError"]
            assert wire.close() == 0
        finally:
            wire.kill()


def test_a_database_opened_on_a_full_disk_is_refused_in_one_line_naming_the_disk(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    with mounted("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)):
        paths, _ = seed_project(disk / "proj")
        before = db_state(paths)
        filler = fill(disk)
        wire = served(paths)
        try:
            wire.send(tool_call(1, "create_task", NEW_TASK))
            error = wire.answer(1, timeout=120)["error"]
            plain(error["message"])
            assert error["message"].startswith("opening the project's database failed: the disk holding the")
        finally:
            wire.kill()
        filler.unlink()
        assert_unchanged(paths, before, "a server that could not open its database")


# --- a read-only file system ----------------------------------------------------------------------


def test_a_database_on_a_read_only_mount_is_read_only_never_damaged(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, _ = seeded
    before = db_state(paths)
    prd = paths.root / "prd.json"
    prd.write_text('{"userStories": [{"id": "US-1", "title": "One"}]}', encoding="utf-8")
    with mounted("--bind", "-o", "ro", str(paths.db_dir), str(paths.db_dir)):
        for command in (["status"], ["import-prd", str(prd)]):
            finished = ralph_desk(*command, "--root", str(paths.root))
            assert finished.returncode == 2, (command, finished.stderr)
            read_only_words(finished.stderr)
        validated = ralph_desk("validate", "--json", "--root", str(paths.root))
        [problem] = json.loads(validated.stdout)["problems"]
        assert problem["path"] == str(paths.db_file)
        read_only_words(problem["message"])
        wire = served(paths)
        try:
            wire.send(tool_call(1, "create_task", NEW_TASK))
            message = wire.answer(1, timeout=120)["error"]["message"]
        finally:
            wire.kill()
        read_only_words(message)
        assert message.startswith("opening the project's database failed: ")
    assert_unchanged(paths, before, "commands on a read-only mount")


# --- a damaged file -------------------------------------------------------------------------------


def damage_an_index(paths: ProjectPaths) -> None:
    """Overwrite half of a tasks index's page: the file opens and counts read, but it is damaged."""
    import sqlite3

    connection = sqlite3.connect(paths.db_file)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'ix_tasks_status_priority'"
        ).fetchone()
    finally:
        connection.close()
    with paths.db_file.open("r+b") as database:
        database.seek((root - 1) * page_size + page_size // 2)
        database.write(b"\x07" * (page_size // 2))


def test_status_on_a_damaged_database_says_so_instead_of_printing_figures(
    seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    damage_an_index(paths)
    damaged = paths.db_file.read_bytes()

    code = cli.main(["status", "--root", str(paths.root)])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    plain(err)
    assert "the database is damaged" in err and REPAIR in err, err
    assert paths.db_file.read_bytes() == damaged


def test_init_force_on_a_corrupt_database_explains_and_leaves_the_file(
    seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    with paths.db_file.open("r+b") as database:
        database.write(b"not a database at all " * 8)
    for leftover in (paths.db_file.with_name("ralph.db-wal"), paths.db_file.with_name("ralph.db-shm")):
        leftover.unlink(missing_ok=True)
    corrupt = paths.db_file.read_bytes()

    code = cli.main(["init", "--force", str(paths.root)])

    out, err = capsys.readouterr()
    assert code == 2 and "Kept" not in out
    plain(err)
    assert "the database was left as it is: the database is damaged (file is not a database)" in err, err
    assert REPAIR in err
    assert paths.db_file.read_bytes() == corrupt


def test_init_force_without_a_database_says_it_made_one_instead_of_keeping_it(
    seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RALPH_DB_URL", raising=False)
    paths, _ = seeded
    for leftover in paths.db_dir.iterdir():
        leftover.unlink()

    assert cli.main(["init", "--force", str(paths.root)]) == 0

    out = capsys.readouterr().out
    assert "Kept progress.txt, learnings.txt and logs." in out and "the database" not in out.split("\n")[1]
    assert f"There was no database: made a new, empty one at {paths.db_file}." in out
    assert cli.main(["init", "--force", str(paths.root)]) == 0
    assert "Kept the database, progress.txt, learnings.txt and logs." in capsys.readouterr().out


def test_an_mcp_error_on_opening_a_damaged_database_names_the_cause_in_one_line(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, _ = seeded
    with paths.db_file.open("r+b") as database:
        database.write(b"not a database at all " * 8)
    wire = served(paths)
    try:
        wire.send(tool_call(1, "list_tasks", {}))
        error: dict[str, Any] = wire.answer(1, timeout=120)["error"]
    finally:
        wire.kill()
    plain(error["message"])
    assert error["message"].startswith("opening the project's database failed: ")
    assert "damaged" in error["message"] and REPAIR in error["message"]
