"""No input that poisons a project: text UTF-8 cannot store is refused at every boundary, naming its place.

The boundaries are real: `ralph-desk import-prd`/`export-prd` and other commands as processes or
through `cli.main`, `ralph-desk mcp` over stdio with hand-written frames, and the services the window
calls. Bad data already in the database is written with plain sqlite3, as another tool would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import StdioServerParameters

from ralph_desk import cli, prd
from ralph_desk.mcp_server.clients import TOKEN_ENV
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError
from tests.hardening.support import (
    INIT_PARAMS,
    TRACEBACK_MARKERS,
    RawHttpSession,
    Seeded,
    assert_unchanged,
    connect_raw,
    db_state,
    http_process,
    integrity,
    live_clients,
    sse_messages,
    succeeded,
)
from tests.support.jsonrpc import request, tool_call
from tests.support.stdio_wire import StdioWire, mcp_command

pytestmark = pytest.mark.sqlite_only  # the cases read and write the SQLite file itself

SURROGATE = "\ud800"
STORABLE = "text that can be stored as UTF-8"


@pytest.fixture(autouse=True)
def _no_database_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RALPH_DB_URL", raising=False)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`ralph-desk ARGV` in this process: the exit code and what it wrote to stderr."""
    code = cli.main(list(argv))
    return code, capsys.readouterr().err


def story(number: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"US-{number}", "title": f"Story {number}", **fields}


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")  # ensure_ascii: a surrogate as "\ud800"
    return path


def assert_no_internals(message: str) -> None:
    for marker in (*TRACEBACK_MARKERS, "sqlalche.me", "(Background on this error"):
        assert marker not in message, f"the message shows internals ({marker!r}): {message[:500]!r}"


# --- import-prd ---------------------------------------------------------------------------------------

POISONED_PLACES: list[tuple[str, dict[str, Any]]] = [
    ("userStories[2].title", {"userStories": [story(1), story(2), story(3, title=f"bad{SURROGATE}")]}),
    ("userStories[0].id", {"userStories": [story(1, id=f"US-{SURROGATE}")]}),
    ("userStories[1].description", {"userStories": [story(1), story(2, description=SURROGATE)]}),
    ("userStories[0].notes", {"userStories": [story(1, notes=f"n{SURROGATE}")]}),
    (
        "userStories[0].acceptanceCriteria[1]",
        {"userStories": [story(1, acceptanceCriteria=["fine", f"x{SURROGATE}y"])]},
    ),
    ("description", {"description": f"d{SURROGATE}", "userStories": [story(1)]}),
    ("project", {"project": SURROGATE, "userStories": [story(1)]}),
    ("branchName", {"branchName": f"ralph/{SURROGATE}", "userStories": [story(1)]}),
]


@pytest.mark.parametrize(("place", "document"), POISONED_PLACES, ids=[place for place, _ in POISONED_PLACES])
def test_import_prd_refuses_a_lone_surrogate_naming_its_place_and_writes_nothing(
    seeded: tuple[ProjectPaths, Seeded],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    place: str,
    document: dict[str, Any],
) -> None:
    paths, _ = seeded
    before = db_state(paths)
    file = write_json(tmp_path / "prd.json", document)

    code, err = run_cli(capsys, "import-prd", str(file), "--root", str(paths.root))

    assert code == 2, err
    assert f"{place}: holds a lone surrogate U+D800" in err and STORABLE in err, err
    assert_no_internals(err)
    assert_unchanged(paths, before, "a refused import")
    code, _ = run_cli(capsys, "export-prd", str(tmp_path / "out.json"), "--root", str(paths.root))
    assert code == 0


def test_an_import_that_fails_on_its_third_story_writes_none_of_them(tmp_path: Path) -> None:
    # The document is built past the parser, as a caller of the API could: the refusal comes from the
    # services while stories 1 and 2 are already written in the transaction.
    paths = init_project(tmp_path / "fresh", title="Fresh")
    before = db_state(paths)
    stories = (prd.Story("US-1", "one"), prd.Story("US-2", "two"), prd.Story("US-3", f"bad{SURROGATE}"))
    services = Services.open(paths)
    try:
        with pytest.raises(InvalidValueError, match="title"):
            prd.import_document(services, prd.PrdDocument(None, None, "Adopted", stories))
        assert services.tasks.list() == []
        assert [feature.name for feature in services.features.list()] == []
    finally:
        services.close()
    assert_unchanged(paths, before, "an import that failed on its third story")


def test_concurrent_imports_into_a_fresh_project_all_succeed_with_one_default_feature(
    tmp_path: Path,
) -> None:
    paths = init_project(tmp_path / "fresh", title="Fresh")
    importers = 4
    start = threading.Barrier(importers)
    failures: list[BaseException] = []

    def run(number: int) -> None:
        services = Services.open(paths)
        try:
            document = prd.parse({"userStories": [story(number * 10 + i) for i in range(3)]})
            start.wait(timeout=60)
            prd.import_document(services, document)
        except BaseException as error:  # reported below, with the others
            failures.append(error)
        finally:
            services.close()

    threads = [threading.Thread(target=run, args=(number,)) for number in range(importers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert failures == []
    services = Services.open(paths)
    try:
        assert [feature.name for feature in services.features.list()] == ["general"]
        assert [discipline.name for discipline in services.disciplines.list()] == ["general"]
        assert len(services.tasks.list()) == importers * 3
    finally:
        services.close()


def test_a_deeply_nested_document_is_refused_cleanly(
    seeded: tuple[ProjectPaths, Seeded], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    before = db_state(paths)
    file = tmp_path / "deep.json"
    file.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")

    code, err = run_cli(capsys, "import-prd", str(file), "--root", str(paths.root))

    assert code == 2
    assert "nest too deeply" in err and str(file) in err
    assert_no_internals(err)
    assert_unchanged(paths, before, "a deeply nested document")


def hostile_tags(paths: ProjectPaths) -> None:
    """Tasks whose tags no import would take as story ids, or that claim one another's ids."""
    services = Services.open(paths)
    try:
        untagged = services.tasks.create("core", "backend", "Untagged")
        claims = [f"prd:T-{untagged.id:03d}"]
        for title, tags in [
            ("Spaced", ["prd:has space"]),
            ("Twin one", ["prd:TWIN"]),
            ("Twin two", ["prd:TWIN"]),
            ("Claims another's id", claims),
            ("Long id", ["prd:" + "x" * 120]),
            ("Empty id", ["prd:"]),
        ]:
            services.tasks.create("core", "backend", title, tags=tags, hints="h" if "Twin" in title else None)
    finally:
        services.close()


def test_every_export_imports_back_into_the_same_project_changing_nothing(
    seeded: tuple[ProjectPaths, Seeded], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    hostile_tags(paths)
    root = ("--root", str(paths.root))
    exported = tmp_path / "prd.json"
    assert run_cli(capsys, "export-prd", str(exported), *root)[0] == 0
    before = db_state(paths)

    code, err = run_cli(capsys, "import-prd", str(exported), *root)

    assert code == 0, err
    assert_unchanged(paths, before, "importing the project's own export")
    again = tmp_path / "again.json"
    assert run_cli(capsys, "export-prd", str(again), *root)[0] == 0
    assert json.loads(again.read_text()) == json.loads(exported.read_text())
    # Every export is a file import-prd accepts, into a fresh project too.
    fresh = init_project(tmp_path / "fresh", title="Fresh")
    code, err = run_cli(capsys, "import-prd", str(exported), "--root", str(fresh.root))
    assert code == 0, err


# --- the command line and the window's services ---------------------------------------------------------


def test_command_line_arguments_that_are_not_utf8_are_refused_naming_them(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, _ = seeded
    before = db_state(paths)
    cases = [
        ([b"answer", b"1", b"bad\xff"], "argument 3"),
        ([b"import-prd", b"--feature", b"x\xfe", b"prd.json"], "the value of --feature"),
        ([b"approve", b"1", b"--note=\xc3("], "the value of --note"),
    ]
    for argv, place in cases:
        command: list[str | bytes] = [sys.executable, "-m", "ralph_desk", *argv, b"--root", bytes(paths.root)]
        finished = subprocess.run(command, capture_output=True, timeout=120, check=False)
        err = finished.stderr.decode("utf-8", "replace")
        assert finished.returncode == 2, err
        assert f"{place} (" in err and "which is not UTF-8" in err and STORABLE in err, err
        assert_no_internals(err)
    assert_unchanged(paths, before, "refused command lines")


def test_the_services_the_window_calls_refuse_unstorable_text_naming_the_field(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, ids = seeded
    before = db_state(paths)
    services = Services.open(paths)
    try:
        attempts = {
            "description": lambda: services.project.set("Hardening", f"x{SURROGATE}"),
            "title": lambda: services.tasks.update(ids.parser, title=f"t{SURROGATE}"),
            "body": lambda: services.comments.add(ids.parser, "human", SURROGATE),
            "acceptance_criteria[0]": lambda: services.tasks.create(
                "core", "backend", "New", acceptance_criteria=[SURROGATE]
            ),
        }
        for field, attempt in attempts.items():
            with pytest.raises(InvalidValueError) as refused:
                attempt()
            assert refused.value.field == field and STORABLE in str(refused.value), str(refused.value)
    finally:
        services.close()
    assert_unchanged(paths, before, "refused window edits")


# --- the MCP server over stdio -----------------------------------------------------------------------------


@contextmanager
def initialized_wire(paths: ProjectPaths, *flags: str) -> Iterator[StdioWire]:
    """A `ralph-desk mcp` process past its handshake; killed on the way out if it still runs."""
    wire = StdioWire(mcp_command(paths, *flags))
    try:
        wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
        assert "result" in wire.answer(0, timeout=60)
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield wire
    finally:
        wire.kill()


@pytest.fixture
def braindump_wire(seeded: tuple[ProjectPaths, Seeded]) -> Iterator[StdioWire]:
    with initialized_wire(seeded[0], "--recipe", "braindump") as wire:
        yield wire


def raw_frame(request_id: int, params: str) -> bytes:
    """A tools/call frame whose params are given as JSON text (so `\\ud800` escapes stay as written)."""
    frame = b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": %s}'
    return frame % (request_id, params.encode())


SURROGATE_FRAMES = {
    "params.arguments.title": '{"name": "create_task", "arguments": '
    '{"feature": "core", "discipline": "backend", "title": "a\\ud800"}}',
    "params.arguments.acceptance_criteria[1]": '{"name": "create_task", "arguments": {"feature": "core", '
    '"discipline": "backend", "title": "ok", "acceptance_criteria": ["fine", "\\udfff"]}}',
    "params.arguments.text": '{"name": "append_progress", "arguments": {"text": "\\ud83d"}}',
    "params.name": '{"name": "get_\\ud800", "arguments": {}}',
}
"""Request params as JSON text, each with the place of its lone surrogate."""


def assert_names_the_place(error: dict[str, Any], place: str) -> None:
    assert error["code"] == -32602 and error["message"].startswith(f"{place}: "), error
    assert STORABLE in error["message"]


def test_lone_surrogates_in_mcp_arguments_are_refused_over_stdio_naming_the_place(
    braindump_wire: StdioWire, seeded: tuple[ProjectPaths, Seeded]
) -> None:
    paths, _ = seeded
    before = db_state(paths)
    for index, (place, params) in enumerate(SURROGATE_FRAMES.items(), start=1):
        braindump_wire.send(raw_frame(index, params))
        assert_names_the_place(braindump_wire.answer(index, timeout=60)["error"], place)
    braindump_wire.send(tool_call(99, "get_project_info", {}))
    assert braindump_wire.answer(99)["result"]["structuredContent"]["title"] == "Hardening"
    assert braindump_wire.process.poll() is None
    assert_unchanged(paths, before, "refused frames")


@pytest.mark.anyio
async def test_lone_surrogates_in_mcp_arguments_are_refused_over_http_naming_the_place(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, _ = seeded
    before = db_state(paths)
    token = "t0k3n-for-surrogates"
    environment = {**os.environ, TOKEN_ENV: token}
    with http_process(paths, "--recipe", "braindump", env=environment) as (process, url, _):
        async with httpx2.AsyncClient(timeout=60) as http:
            session = RawHttpSession(http, url, token)
            await session.initialize()
            for index, (place, params) in enumerate(SURROGATE_FRAMES.items(), start=1):
                response = await session.post(raw_frame(index, params))
                assert response.status_code == 200, response.text
                answer = response.json()
                assert answer["id"] == index
                assert_names_the_place(answer["error"], place)
            # A body that only spells a backslash before `ud800` is no surrogate: it is served.
            spelled = raw_frame(50, '{"name": "get_project_info", "arguments": {"x": "\\\\ud800"}}')
            served = sse_messages((await session.post(spelled)).text)
            assert served[0]["id"] == 50 and "error" not in served[0], served
            status, answer = await session.call("get_project_info", {})
            assert status == 200 and succeeded(answer), answer
            assert process.poll() is None
    assert_unchanged(paths, before, "refused HTTP requests")


def test_bad_stored_text_answers_an_error_for_that_item_and_the_stdio_server_keeps_serving(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, ids = seeded
    raw = connect_raw(paths)
    try:  # bytes that are not UTF-8 (a UTF-8-encoded lone surrogate among them), as another tool wrote them
        raw.execute("UPDATE tasks SET title = CAST(X'41EDA08042FF' AS TEXT) WHERE id = ?", (ids.docs,))
        raw.commit()
    finally:
        raw.close()
    with initialized_wire(paths) as wire:
        wire.send(tool_call(1, "get_task", {"id": ids.docs}))
        result = wire.answer(1, timeout=60)["result"]
        assert result["isError"]
        message = result["content"][0]["text"]
        assert "title is not valid UTF-8" in message and "get_task" in message, message
        assert_no_internals(message)
        wire.send(request(2, "resources/read", {"uri": f"ralph://tasks/{ids.docs}"}))
        error = wire.answer(2, timeout=60)["error"]
        assert "title is not valid UTF-8" in error["message"], error
        assert_no_internals(error["message"])
        wire.send(request(3, "resources/read", {"uri": "ralph://prd"}))  # a list: the others, and an error
        document = json.loads(wire.answer(3, timeout=60)["result"]["contents"][0]["text"])
        assert [error["id"] for error in document["errors"]] == [ids.docs]
        # `ralph://tasks/{id}` takes ASCII digits only: an Arabic-Indic one (U+0661) names no task.
        wire.send(request(4, "resources/read", {"uri": "ralph://tasks/\u0661"}))
        assert "digits 0-9" in wire.answer(4, timeout=60)["error"]["message"]
        wire.send(tool_call(5, "get_task", {"id": ids.parser}))
        assert wire.answer(5, timeout=60)["result"]["structuredContent"]["title"] == "Write the parser"
        assert wire.process.poll() is None
        assert wire.close() == 0
    assert integrity(paths) == "ok"


# Bytes that are not UTF-8 (a UTF-8-encoded lone surrogate among them), as another tool could write them.
NOT_UTF8 = "CAST(X'41EDA08042FF' AS TEXT)"
UNREADABLE = "is not valid UTF-8 text (it was written outside ralph-desk)"


def poison_one_of_each(paths: ProjectPaths, ids: Seeded) -> None:
    """One task, one feature and one discipline whose stored text is not UTF-8."""
    raw = connect_raw(paths)
    try:
        raw.execute(f"UPDATE tasks SET title = {NOT_UTF8} WHERE id = ?", (ids.docs,))
        raw.execute(f"UPDATE tasks SET description = {NOT_UTF8} WHERE id = ?", (ids.parser_ui,))
        raw.execute(f"UPDATE features SET description = {NOT_UTF8} WHERE name = 'ui'")
        raw.execute(f"UPDATE disciplines SET conventions = {NOT_UTF8} WHERE name = 'docs'")
        raw.commit()
    finally:
        raw.close()


def id_of(paths: ProjectPaths, table: str, name: str) -> int:
    raw = connect_raw(paths)
    try:
        return int(raw.execute(f"SELECT id FROM {table} WHERE name = ?", (name,)).fetchone()[0])
    finally:
        raw.close()


def assert_left_out(errors: list[dict[str, Any]], item_id: int, column: str) -> None:
    assert [error["id"] for error in errors] == [item_id], errors
    assert f"the stored {column} {UNREADABLE}" in errors[0]["message"], errors
    assert_no_internals(errors[0]["message"])


def test_one_unreadable_row_leaves_every_list_serving_the_others_with_an_error_for_it_over_stdio(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, ids = seeded
    poison_one_of_each(paths, ids)
    with initialized_wire(paths) as wire:
        wire.send(tool_call(1, "list_tasks", {}))
        listed = wire.answer(1, timeout=60)["result"]["structuredContent"]
        assert [task["id"] for task in listed["tasks"]] == [ids.parser, ids.parser_ui, ids.draft]
        assert listed["count"] == 3
        assert_left_out(listed["errors"], ids.docs, "title")
        wire.send(tool_call(2, "list_features", {}))
        features = wire.answer(2, timeout=60)["result"]["structuredContent"]
        assert [feature["name"] for feature in features["features"]] == ["core"]
        assert_left_out(features["errors"], id_of(paths, "features", "ui"), "description")
        wire.send(tool_call(3, "list_disciplines", {}))
        disciplines = wire.answer(3, timeout=60)["result"]["structuredContent"]
        assert [item["name"] for item in disciplines["disciplines"]] == ["backend", "frontend"]
        assert_left_out(disciplines["errors"], id_of(paths, "disciplines", "docs"), "conventions")
        wire.send(tool_call(4, "search_tasks", {"query": "parser"}))
        found = wire.answer(4, timeout=60)["result"]["structuredContent"]
        assert [task["id"] for task in found["tasks"]] == [ids.parser, ids.parser_ui] and found[
            "errors"
        ] == []
        # The prd: the task whose title cannot be read is left out of the summaries, the one whose
        # description cannot be read out of the stories; each with its error.
        wire.send(request(5, "resources/read", {"uri": "ralph://prd"}))
        document = json.loads(wire.answer(5, timeout=60)["result"]["contents"][0]["text"])
        assert [story["title"] for story in document["userStories"]] == ["Write the parser"]
        assert sorted(error["id"] for error in document["errors"]) == sorted([ids.docs, ids.parser_ui])
        wire.send(tool_call(6, "get_task", {"id": ids.parser}))
        assert wire.answer(6, timeout=60)["result"]["structuredContent"]["title"] == "Write the parser"
        assert wire.process.poll() is None
        assert wire.close() == 0
    assert integrity(paths) == "ok"


def test_ralph_history_over_one_unreadable_session_and_signal_lists_the_others_with_an_error_for_each(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, ids = seeded
    services = Services.open(paths)
    try:
        run = services.sessions.start_loop_run("claude")
        for iteration in (1, 2):
            session = f"s-{iteration}"
            services.sessions.start_session(
                session, ids.parser, "task_execution", "claude", None, run.id, iteration
            )
            services.signals.record(
                ids.parser, session, "learned", text=f"Fact {iteration}.", kind="discovery"
            )
            services.sessions.finish_session(session, outcome="done")
    finally:
        services.close()
    raw = connect_raw(paths)
    try:
        raw.execute(f"UPDATE agent_sessions SET error = {NOT_UTF8} WHERE id = 's-2'")
        raw.execute(
            f"UPDATE task_signals SET text = {NOT_UTF8} WHERE session_id = 's-1' AND verb = 'learned'"
        )
        raw.commit()
        session_one_learned = raw.execute("SELECT id FROM task_signals WHERE session_id = 's-1'").fetchone()[
            0
        ]
    finally:
        raw.close()
    with initialized_wire(paths) as wire:
        wire.send(tool_call(1, "ralph_history", {"limit": 10}))
        page = wire.answer(1, timeout=60)["result"]["structuredContent"]
        assert [entry["iterationNumber"] for entry in page["iterations"]] == [1], page
        assert_left_out(page["errors"], "s-2", "error")
        wire.send(tool_call(2, "ralph_history", {"iteration": 1}))
        detail = wire.answer(2, timeout=60)["result"]["structuredContent"]
        assert detail["iteration"]["iterationNumber"] == 1 and detail["iteration"]["signals"] == [], detail
        assert [error["id"] for error in detail["errors"]] == ["s-2", session_one_learned], detail
        wire.send(tool_call(3, "ralph_history", {"type": "learnings"}))
        learnings = wire.answer(3, timeout=60)["result"]["structuredContent"]
        assert [entry["text"] for entry in learnings["learnings"]] == ["Fact 2."], learnings
        assert [error["id"] for error in learnings["errors"]] == [session_one_learned, "s-2"], learnings
        assert wire.process.poll() is None
        assert wire.close() == 0
    assert integrity(paths) == "ok"


def test_one_unreadable_row_leaves_the_lists_of_an_sdk_client_serving(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, ids = seeded
    poison_one_of_each(paths, ids)
    params = StdioServerParameters(command=sys.executable, args=mcp_command(paths)[1:], env=dict(os.environ))
    with live_clients() as clients:
        clients.open("ide", params)
        listed = clients.call("ide", "list_tasks", {"filter_status": "pending"})
        assert not listed.is_error and listed.structured_content is not None
        assert [task["id"] for task in listed.structured_content["tasks"]] == [ids.parser, ids.parser_ui]
        assert_left_out(listed.structured_content["errors"], ids.docs, "title")
        features = clients.call("ide", "list_features", {})
        assert features.structured_content is not None
        assert_left_out(features.structured_content["errors"], id_of(paths, "features", "ui"), "description")
        assert not clients.call("ide", "get_project_info", {}).is_error


def test_the_command_line_lists_the_readable_items_and_names_each_one_left_out(
    seeded: tuple[ProjectPaths, Seeded], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, ids = seeded
    poison_one_of_each(paths, ids)
    root = ("--root", str(paths.root))
    out = tmp_path / "prd.json"
    code, err = run_cli(capsys, "export-prd", str(out), *root)
    assert code == 1, err
    assert [story["title"] for story in json.loads(out.read_text())["userStories"]] == ["Write the parser"]
    for task_id, column in ((ids.docs, "title"), (ids.parser_ui, "description")):
        assert f"task #{task_id} could not be read and is left out: the stored {column} {UNREADABLE}" in err
    code, err = run_cli(capsys, "discipline", "list", *root)
    assert code == 1 and f"discipline #{id_of(paths, 'disciplines', 'docs')} could not be read" in err, err
    assert_no_internals(err)
    services = Services.open(paths)
    try:
        listed = services.tasks.list()
        assert [task.id for task in listed] == [ids.parser, ids.parser_ui, ids.draft]
        assert [(error.kind, error.id) for error in listed.errors] == [("task", ids.docs)]
    finally:
        services.close()


def test_requests_in_flight_when_stdin_closes_are_answered_never_carried_out_silently(
    braindump_wire: StdioWire, seeded: tuple[ProjectPaths, Seeded]
) -> None:
    paths, _ = seeded
    titles = {request_id: f"in flight {request_id}" for request_id in range(1, 21)}
    braindump_wire.send(
        *(
            tool_call(request_id, "create_task", {"feature": "core", "discipline": "backend", "title": title})
            for request_id, title in titles.items()
        )
    )
    answered = {braindump_wire.next_message(timeout=60).get("id")}  # the server is working on them
    assert braindump_wire.close() == 0
    while not braindump_wire.lines.empty():
        answered.add(json.loads(braindump_wire.lines.get()).get("id"))
    raw = connect_raw(paths)
    try:
        stored = {row[0] for row in raw.execute("SELECT title FROM tasks")}
    finally:
        raw.close()
    carried_out = {request_id for request_id, title in titles.items() if title in stored}
    assert carried_out - answered == set(), "carried out without an answer"


# --- client configs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", ["codex", "claude"])
def test_client_configs_stay_valid_for_a_project_path_beyond_the_bmp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], client: str
) -> None:
    paths = init_project(tmp_path / 'tides \U0001f30a \u2028 "quoted" back\\slash', title="Tides")
    assert cli.main(["connect", "--client", client, "--root", str(paths.root)]) == 0
    written = {path.suffix: path for path in (paths.ralph / "mcp" / "clients").iterdir()}
    if client == "codex":
        document = tomllib.loads(written[".toml"].read_text(encoding="utf-8"))
        args = document["mcp_servers"]["ralph"]["args"]
    else:
        document = json.loads(written[".json"].read_text(encoding="utf-8"))
        args = document["mcpServers"]["ralph"]["args"]
    assert str(paths.root) in args
    capsys.readouterr()


def test_the_loop_passes_over_a_task_it_cannot_read_and_runs_the_others(
    seeded: tuple[ProjectPaths, Seeded], tmp_path: Path
) -> None:
    paths, ids = seeded
    raw = connect_raw(paths)
    try:  # the task the loop would take first
        raw.execute(
            f"UPDATE tasks SET description = {NOT_UTF8}, priority = 'critical' WHERE id = ?", (ids.docs,)
        )
        raw.commit()
    finally:
        raw.close()
    agent = tmp_path / "agent.py"
    agent.write_text("print('agent ran')\n", encoding="utf-8")
    root = ("--root", str(paths.root))
    dry = subprocess.run(
        [sys.executable, "-m", "ralph_desk", "run", *root, "--dry-run"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert f"passes over task #{ids.docs}" in dry.stderr and "description" in dry.stderr
    ran = subprocess.run(
        [sys.executable, "-m", "ralph_desk", "run", *root, "--agent", "command", "--agent-command",
         f"{sys.executable} {agent} {{prompt_file}}", "--max-iterations", "1", "--exit-when-idle", "--json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert f"task #{ids.docs}: the stored description {UNREADABLE}" in ran.stderr, ran.stderr[-3000:]
    services = Services.open(paths)
    try:
        statuses = {task.id: task.status.value for task in services.tasks.list()}
    finally:
        services.close()
    assert statuses[ids.docs] == "pending"  # left as it was, for the person to repair
    raw = connect_raw(paths)
    try:
        sessions = [row[0] for row in raw.execute("SELECT task_id FROM agent_sessions")]
    finally:
        raw.close()
    assert sessions and ids.docs not in sessions, (sessions, ran.stdout[-2000:], ran.stderr[-2000:])


def test_an_import_into_a_project_with_an_unreadable_task_writes_nothing_and_names_it(
    seeded: tuple[ProjectPaths, Seeded], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, ids = seeded
    raw = connect_raw(paths)
    try:
        raw.execute(f"UPDATE tasks SET title = {NOT_UTF8} WHERE id = ?", (ids.docs,))
        raw.commit()
    finally:
        raw.close()

    def counts() -> tuple[int, ...]:
        raw = connect_raw(paths)
        try:
            tables = ("tasks", "features", "disciplines", "change_log")
            return tuple(raw.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in tables)
        finally:
            raw.close()

    before = counts()
    file = write_json(tmp_path / "prd.json", {"userStories": [story(1)]})
    code, err = run_cli(capsys, "import-prd", str(file), "--root", str(paths.root))
    assert code == 1 and f"task #{ids.docs}: the stored title {UNREADABLE}" in err, err
    assert_no_internals(err)
    assert counts() == before
