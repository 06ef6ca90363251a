"""Faults that must not cost data or lie: a full disk, a folder removed under a server, broken storage.

A full disk cannot be made without root (no tmpfs here), so it is simulated at the OS boundary two
honest ways: `RLIMIT_FSIZE` on a real `ralph-desk mcp` process (the kernel cuts the write short and
then refuses it, EFBIG, as a full disk does with ENOSPC), and a wrapper at the one append function
whose `os.write` writes half an entry and then raises ENOSPC.
"""

from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import event, text

from ralph_desk import cli
from ralph_desk.project import ProjectError, ProjectPaths, contained
from ralph_desk.services.container import Services
from ralph_desk.store.database import Database
from ralph_desk.store.errors import StoreError
from tests.hardening.support import (
    INIT_PARAMS,
    Seeded,
    assert_unchanged,
    connect_raw,
    db_state,
    seed_project,
)
from tests.support.jsonrpc import tool_call
from tests.support.stdio_wire import StdioWire, mcp_command

pytestmark = pytest.mark.sqlite_only  # the snapshots read the SQLite file itself

PADDING = 8 * 1024 * 1024  # progress.txt grows past the database and its WAL, so only it meets the limit
ROOM = 10  # bytes of room left under the limit: less than any entry


def file_size_limit(limit: int) -> Callable[[], None]:
    """For a child process: files may grow to `limit` bytes; past it a write fails (EFBIG), no signal."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an ignored signal stays ignored across exec
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_an_append_the_kernel_cuts_short_leaves_no_torn_entry(seeded: tuple[ProjectPaths, Seeded]) -> None:
    paths, ids = seeded
    with paths.progress_file.open("a", encoding="utf-8") as progress:
        progress.write("#" * PADDING + "\n")
    before = db_state(paths)
    size = paths.progress_file.stat().st_size
    wire = StdioWire(
        mcp_command(paths, "--recipe", "opus_review", "--task-id", str(ids.parser)),
        preexec=file_size_limit(size + ROOM),
    )
    try:
        wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
        assert "result" in wire.answer(0, timeout=60)
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send(tool_call(1, "append_progress", {"text": "An entry longer than the room that is left."}))
        result = wire.answer(1, timeout=60)["result"]
        message = result["content"][0]["text"]
        assert result["isError"] and "could not add to progress.txt: the file has reached" in message, message
        assert "nothing of the entry was written" in message
        wire.send(tool_call(2, "get_task", {"id": ids.parser}))
        assert wire.answer(2, timeout=60)["result"]["structuredContent"]["id"] == ids.parser  # still serving
        assert wire.close() == 0
    finally:
        wire.kill()
    assert paths.progress_file.stat().st_size == size
    assert_unchanged(paths, before, "an append the kernel cut short")


def test_an_append_on_a_full_disk_lands_whole_or_not_at_all_and_says_the_disk_is_full(
    seeded: tuple[ProjectPaths, Seeded], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, _ = seeded
    real_write = os.write

    def half_then_full(descriptor: int, data: bytes) -> int:
        if len(data) > 1:
            return real_write(descriptor, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    services = Services.open(paths)
    try:
        for append, file in (
            (services.state_files.append_progress, paths.progress_file),
            (services.state_files.append_learning, paths.learnings_file),
        ):
            before = db_state(paths)
            text_before = file.read_bytes()
            monkeypatch.setattr(contained.os, "write", half_then_full)
            with pytest.raises(ProjectError) as refused:
                append("An entry the disk has no room for.")
            monkeypatch.setattr(contained.os, "write", real_write)
            assert f"could not add to {file.name}: the disk is full" in str(refused.value)
            assert file.read_bytes() == text_before
            assert_unchanged(paths, before, f"a refused append to {file.name}")
            entry = append("Room again.")
            assert file.read_text(encoding="utf-8").endswith(entry)
    finally:
        services.close()


@pytest.mark.parametrize("removed", [".ralph/db", ".ralph"])
def test_a_database_removed_under_a_running_server_refuses_calls_never_acknowledging_them(
    seeded: tuple[ProjectPaths, Seeded], removed: str
) -> None:
    paths, ids = seeded
    flags = ("--task-id", str(ids.parser), "--session-id", "removed")
    arguments = {"what": "a flag", "severity": "info", "category": "bug"}
    wire = StdioWire(mcp_command(paths, *flags))
    try:
        wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
        assert "result" in wire.answer(0, timeout=60)
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send(tool_call(1, "flag", arguments))
        assert not wire.answer(1, timeout=60)["result"]["isError"]
        shutil.rmtree(paths.root / removed)
        ask = {"question": "Which one?", "blocking": False}
        calls = [("flag", arguments), ("ask", ask), ("flag", arguments)]
        for request_id, (tool, given) in enumerate(calls, start=2):
            wire.send(tool_call(request_id, tool, given))
            result = wire.answer(request_id, timeout=60)["result"]
            message = result["content"][0]["text"]
            assert result["isError"] and "was removed or replaced" in message, (tool, message)
            assert "nothing was written" in message
        wire.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert wire.answer(9, timeout=60) == {"jsonrpc": "2.0", "id": 9, "result": {}}
        assert wire.close() == 0
    finally:
        wire.kill()
    assert not paths.db_file.exists(), "a refused call brought a new database file into being"


def test_a_damaged_database_is_named_with_a_repair_path_that_works(
    seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    root = ("--root", str(paths.root))
    with paths.db_file.open("r+b") as database:
        database.seek(4096)
        database.write(b"damaged " * 512)
    for leftover in (paths.db_file.with_name("ralph.db-wal"), paths.db_file.with_name("ralph.db-shm")):
        leftover.unlink(missing_ok=True)

    code = cli.main(["status", *root])
    err = capsys.readouterr().err
    assert code == 2 and "damaged" in err and "to repair it" in err, err
    for internal in ("sqlalche", "Background on this error", "OperationalError", "Traceback"):
        assert internal not in err, err
    # The repair path as the message gives it: move the file aside, then `init --force`.
    paths.db_file.rename(paths.db_file.with_name("ralph.db.damaged"))
    assert cli.main(["init", "--force", str(paths.root)]) == 0
    assert cli.main(["status", *root]) == 0
    assert paths.db_file.with_name("ralph.db.damaged").exists()


def test_a_read_only_database_is_said_to_be_read_only_not_damaged(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    # Root writes a file whatever its mode, so SQLite is told the file is read-only (`query_only`):
    # it answers as for a read-only file or folder, with SQLITE_READONLY.
    paths, _ = seeded
    database = Database(paths.db_url(), migrate_on_open=False)
    event.listen(database.engine, "connect", lambda connection, _: connection.execute("PRAGMA query_only=ON"))
    database.engine.dispose()  # the connection opened before the listener goes
    try:
        with pytest.raises(StoreError) as refused, database.write() as unit:
            unit.execute(text("UPDATE project SET title = 'x'"))
    finally:
        database.dispose()
    message = str(refused.value)
    assert "read-only (not damaged)" in message and "sqlalche" not in message, message


# --- a folder that is really read-only: the commands run as user nobody ----------------------------

NOBODY = 65534


@pytest.fixture
def as_nobody() -> list[str]:
    """The command prefix that runs a program as user nobody, without root's power over file modes."""
    if os.geteuid() != 0:
        pytest.skip("running a command as user nobody (uid 65534) needs root; this test runs as another user")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed, so no command can be run as user nobody")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@pytest.fixture
def nobodys_project() -> Iterator[tuple[ProjectPaths, Seeded]]:
    """A seeded project owned by nobody, in a folder every user can reach (the test's own is root's)."""
    home = Path(tempfile.mkdtemp(prefix="ralph-read-only-"))
    try:
        home.chmod(0o755)
        seeded = seed_project(home / "proj")
        for folder, _, files in os.walk(home / "proj"):
            for name in (folder, *(os.path.join(folder, file) for file in files)):
                os.chown(name, NOBODY, NOBODY)
        yield seeded
    finally:
        shutil.rmtree(home)


def take_write_away(*places: Path) -> None:
    for place in places:
        place.chmod(place.stat().st_mode & ~0o222)


def said_read_only(message: str) -> None:
    assert "read-only" in message and "damaged" not in message.replace("nothing is damaged", "").replace(
        "not damaged", ""
    ), message
    for internal in ("sqlalche", "Background on this error", "OperationalError", "Traceback"):
        assert internal not in message, message


def test_a_project_nobody_may_write_is_said_to_be_read_only_by_every_command(
    as_nobody: list[str], nobodys_project: tuple[ProjectPaths, Seeded]
) -> None:
    paths, _ = nobodys_project
    before = db_state(paths)
    for folder, _, files in os.walk(paths.root):
        take_write_away(Path(folder), *(Path(folder, file) for file in files))
    for command in (["status"], ["answer", "1", "yes"], ["import-prd", str(paths.root / "absent.json")]):
        finished = subprocess.run(
            [*as_nobody, sys.executable, "-m", "ralph_desk", *command, "--root", str(paths.root)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert finished.returncode == 2, (command, finished.stderr)
        said_read_only(finished.stderr)
    assert_unchanged(paths, before, "commands in a read-only project")
    assert connect_raw(paths).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_database_nobody_may_write_refuses_writes_as_read_only_and_the_server_keeps_serving(
    as_nobody: list[str], nobodys_project: tuple[ProjectPaths, Seeded]
) -> None:
    paths, _ = nobodys_project
    before = db_state(paths)
    take_write_away(paths.db_file)
    wire = StdioWire([*as_nobody, *mcp_command(paths, "--recipe", "braindump")])
    try:
        wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
        assert "result" in wire.answer(0, timeout=120)
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send(tool_call(1, "create_task", {"feature": "core", "discipline": "backend", "title": "New"}))
        refused = wire.answer(1, timeout=120)["result"]
        assert refused["isError"], refused
        said_read_only(refused["content"][0]["text"])
        wire.send(tool_call(2, "get_project_info", {}))
        assert wire.answer(2, timeout=120)["result"]["structuredContent"]["title"] == "Hardening"
        assert wire.close() == 0
    finally:
        wire.kill()
    prd = paths.root / "prd.json"
    prd.write_text('{"userStories": [{"id": "US-1", "title": "One"}]}', encoding="utf-8")
    prd.chmod(0o644)
    finished = subprocess.run(
        [*as_nobody, sys.executable, "-m", "ralph_desk", "import-prd", str(prd), "--root", str(paths.root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 1, finished.stderr  # the command failed; it was not misused
    said_read_only(finished.stderr)
    assert_unchanged(paths, before, "writes refused by a read-only database")
