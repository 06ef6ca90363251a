"""The `ralph-desk` command line: every subcommand, its output, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import types
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from ralph_desk import __version__, cli
from ralph_desk.cli import main
from ralph_desk.demo import create_demo
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services import reports
from ralph_desk.services.container import Services
from tests.support.trusted import trust_copy

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_database_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RALPH_DB_URL", raising=False)
    monkeypatch.delenv("RALPH_DEBUG", raising=False)


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One demo project, built once; tests that change it work on a copy."""
    root = tmp_path_factory.mktemp("template") / "tidewater"
    create_demo(root)
    return root


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "tidewater"
    shutil.copytree(demo_template, copy)
    trust_copy(copy)
    return copy


@pytest.fixture
def empty_project(tmp_path: Path) -> Path:
    return init_project(tmp_path / "empty", title="Empty").root


@pytest.fixture
def services_of() -> Iterator[Any]:
    opened: list[Services] = []

    def open_services(root: Path) -> Services:
        services = Services.open(ProjectPaths.at(root))
        opened.append(services)
        return services

    yield open_services
    for services in opened:
        services.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    return json.loads(out)


def assert_one_line_error(err: str, fragment: str) -> None:
    assert err.startswith("ralph-desk: error: ")
    assert err.count("\n") == 1
    assert fragment in err
    assert "Traceback" not in err


def spawn(
    *argv: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    environment.pop("RALPH_DB_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "ralph_desk", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=120,
        check=False,
    )


# --- end to end, as a separate process ------------------------------------------------------------


def test_python_dash_m_prints_the_version() -> None:
    result = spawn("--version")

    assert (result.returncode, result.stdout) == (0, f"ralph-desk {__version__}\n")


def test_init_then_status_json_in_a_separate_process(tmp_path: Path) -> None:
    created = spawn("init", str(tmp_path / "p"), "--title", "Harbour")
    status = spawn("status", "--json", cwd=tmp_path / "p")

    assert created.returncode == 0, created.stderr
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["project"]["title"] == "Harbour"
    assert report["tasks"]["total"] == 0


def test_a_command_outside_a_project_fails_with_one_line_and_exit_code_2(tmp_path: Path) -> None:
    result = spawn("status", "--root", str(tmp_path))

    assert result.returncode == 2
    assert result.stdout == ""
    assert_one_line_error(result.stderr, "no ralph-desk project at")


def test_the_demo_command_builds_a_project_in_a_separate_process(tmp_path: Path) -> None:
    result = spawn("demo", str(tmp_path / "demo"))

    assert result.returncode == 0, result.stderr
    assert (tmp_path / "demo" / ".ralph" / "db" / "ralph.db").is_file()


# --- usage ---------------------------------------------------------------------------------------


def test_an_unknown_command_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "fly")

    assert (code, out) == (2, "")
    assert_one_line_error(err, "invalid choice: 'fly'")


def test_a_missing_argument_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str], demo: Path) -> None:
    code, _, err = run(capsys, "reject", "21", "--root", str(demo))

    assert code == 2
    assert_one_line_error(err, "--reason")


def test_a_non_numeric_id_is_a_usage_error(capsys: pytest.CaptureFixture[str], demo: Path) -> None:
    code, _, err = run(capsys, "approve", "twenty", "--root", str(demo))

    assert code == 2
    assert_one_line_error(err, "invalid int value: 'twenty'")


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])

    out = capsys.readouterr().out
    assert exited.value.code == 0
    for command in cli.COMMANDS:
        assert command.name in out


ARGUMENTS = {
    "init": ["d"],
    "validate": [],
    "status": [],
    "demo": ["d"],
    "open": [],
    "inbox": [],
    "answer": ["1", "text"],
    "approve": ["1"],
    "reject": ["1", "--reason", "r"],
    "triage": ["1", "--resolution", "resolved"],
    "delete": ["1"],
    "import-prd": ["f"],
    "export-prd": ["f"],
    "discipline": ["disable", "docs", "learned"],
    "checks": ["run", "--task", "1"],
}


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_every_command_takes_root_and_db_url(name: str) -> None:
    args = cli.build_parser().parse_args([name, *ARGUMENTS[name], "--root", "/x", "--db-url", "sqlite://"])

    assert (args.root, args.db_url) == ("/x", "sqlite://")


# --- init and validate ---------------------------------------------------------------------------


def test_init_creates_a_project(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "init", str(tmp_path / "p"), "--title", "Harbour")

    assert code == 0
    assert out.startswith(f"Created {tmp_path / 'p' / '.ralph'}")
    assert (tmp_path / "p" / ".ralph" / "config.json").is_file()


def test_init_refuses_an_existing_project(capsys: pytest.CaptureFixture[str], empty_project: Path) -> None:
    code, _, err = run(capsys, "init", str(empty_project))

    assert code == 2
    assert_one_line_error(err, "already exists; use --force")


def test_init_force_keeps_the_data(capsys: pytest.CaptureFixture[str], demo: Path, services_of: Any) -> None:
    progress = (demo / ".ralph" / "progress.txt").read_text()
    (demo / ".ralph" / "config.json").write_text("broken")

    code, out, _ = run(capsys, "init", str(demo), "--force")

    assert code == 0
    assert "Kept the database, progress.txt, learnings.txt" in out
    assert (demo / ".ralph" / "progress.txt").read_text() == progress
    assert len(services_of(demo).tasks.list()) == 25


def test_validate_says_ok_for_a_sound_project(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    code, out, err = run(capsys, "validate", str(empty_project))

    assert (code, err) == (0, "")
    assert out.startswith("OK: ")


def test_validate_defaults_to_the_root_option(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    code, _, _ = run(capsys, "validate", "--root", str(empty_project))

    assert code == 0


def test_validate_lists_each_problem_and_exits_2(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    ralph = empty_project / ".ralph"
    (ralph / "progress.txt").unlink()
    (ralph / "config.json").write_text('{"agent": 7}')

    code, out, err = run(capsys, "validate", str(empty_project))

    assert code == 2
    assert f"{ralph / 'progress.txt'}: missing file" in out.splitlines()
    assert any(
        line.startswith(f"{ralph / 'config.json'}: agent: 7 is not allowed") for line in out.splitlines()
    )
    assert_one_line_error(err, "problems in")


def test_validate_json_lists_the_problems(capsys: pytest.CaptureFixture[str], empty_project: Path) -> None:
    (empty_project / ".ralph" / "learnings.txt").unlink()

    code, out, _ = run(capsys, "validate", str(empty_project), "--json")

    assert code == 2
    said = json.loads(out)
    assert said.pop("sandbox").startswith(("bubblewrap: ", "NOT confined: "))
    assert said == {
        "ok": False,
        "problems": [{"path": str(empty_project / ".ralph" / "learnings.txt"), "message": "missing file"}],
        "checks": {"checks": [], "setup": None, "worktree_files": [], "trusted": True},
    }


# --- status --------------------------------------------------------------------------------------


# Every task status, in the order reports list them.
STATUSES = [
    "draft", "pending", "in_progress", "in_review", "done", "blocked", "needs_input", "skipped", "failed"
]  # fmt: skip


def test_status_json_has_the_documented_shape(
    capsys: pytest.CaptureFixture[str], demo_template: Path
) -> None:
    report = run_json(capsys, "status", "--json", "--root", str(demo_template))

    assert set(report) == {"project", "tasks", "inbox", "cost", "throughput", "checks", "sandbox"}
    assert report["sandbox"]["enabled"] is True and "summary" in report["sandbox"]
    assert report["project"]["title"] == "Tidewater"
    assert report["tasks"]["total"] == sum(report["tasks"]["by_status"].values())
    assert set(report["tasks"]["by_status"]) == set(STATUSES)
    assert set(report["inbox"]) == {"asks", "suggestions", "flags"}
    assert report["tasks"]["by_feature"]["tide-data"]["total"] >= 1
    assert report["cost"]["total_usd"] > 0
    assert report["cost"]["sessions"] >= 2
    assert set(report["throughput"]) == {"window_hours", "recent", "overall"}
    assert set(report["throughput"]["overall"]) == {"tasks", "hours", "per_hour"}
    assert report["throughput"]["overall"]["tasks"] >= 1


def test_status_text_is_aligned(capsys: pytest.CaptureFixture[str], demo_template: Path) -> None:
    code, out, _ = run(capsys, "status", "--root", str(demo_template))

    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "Tidewater"
    start = lines.index("Tasks (25)") + 1
    counts = lines[start : start + 9]
    assert [line.split()[0] for line in counts] == STATUSES
    assert len({line.index(line.split()[1], len(line.split()[0]) + 2) for line in counts}) == 1
    assert "  questions    3" in lines
    assert any(line.startswith("  cost") and "$" in line for line in lines)


def test_status_of_an_empty_project_shows_zeroes(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    report = run_json(capsys, "status", "--json", "--root", str(empty_project))

    assert report["tasks"]["total"] == 0
    assert report["inbox"] == {"asks": 0, "suggestions": 0, "flags": 0}
    assert report["cost"]["total_usd"] == 0


def test_status_of_a_broken_database_is_one_line(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    (empty_project / ".ralph" / "db" / "ralph.db").write_bytes(b"garbage" * 500)

    code, _, err = run(capsys, "status", "--root", str(empty_project))

    assert code == 2
    assert_one_line_error(err, "cannot open the project")


def test_status_of_a_database_from_a_newer_version_fails_with_exit_code_1(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    connection = sqlite3.connect(empty_project / ".ralph" / "db" / "ralph.db")
    with connection:
        connection.execute("UPDATE alembic_version SET version_num = 'beyond'")
    connection.close()

    code, _, err = run(capsys, "status", "--root", str(empty_project))

    assert code == 1
    assert_one_line_error(err, "upgrade ralph-desk")


def test_the_database_url_option_and_variable_choose_the_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    assert run(capsys, "init", str(tmp_path / "p"), "--title", "Shared", "--db-url", url)[0] == 0

    by_option = run_json(capsys, "status", "--json", "--root", str(tmp_path / "p"), "--db-url", url)
    monkeypatch.setenv("RALPH_DB_URL", url)
    by_variable = run_json(capsys, "status", "--json", "--root", str(tmp_path / "p"))

    assert by_option["project"]["title"] == by_variable["project"]["title"] == "Shared"
    assert not (tmp_path / "p" / ".ralph" / "db" / "ralph.db").exists()


# --- inbox and its actions -----------------------------------------------------------------------


def test_inbox_json_lists_asks_suggestions_and_flags(
    capsys: pytest.CaptureFixture[str], demo_template: Path
) -> None:
    report = run_json(capsys, "inbox", "--json", "--root", str(demo_template))

    assert report["counts"] == {"asks": 3, "suggestions": 3, "flags": 5}
    assert len(report["asks"]) == 3 and len(report["suggestions"]) == 3 and len(report["flags"]) == 5
    ask = report["asks"][0]
    assert {"id", "task_id", "question", "options", "preferred", "blocking"} <= set(ask)
    assert all(item["suggested_task"]["status"] == "draft" for item in report["suggestions"])
    assert all(flag["resolution"] == "open" for flag in report["flags"])


def test_inbox_text_shows_ids_to_act_on(capsys: pytest.CaptureFixture[str], demo_template: Path) -> None:
    code, out, _ = run(capsys, "inbox", "--root", str(demo_template))

    assert code == 0
    assert "Questions (3)" in out and "Suggestions (3)" in out and "Flags (5)" in out
    assert "(preferred)" in out
    with closing(Services.open(ProjectPaths.at(demo_template))) as services:
        drafts = [item.created_task_id for item in services.inbox.suggestions()]
    assert drafts and all(f"task #{draft}" in out for draft in drafts)


def test_inbox_of_an_empty_project_says_none(capsys: pytest.CaptureFixture[str], empty_project: Path) -> None:
    code, out, _ = run(capsys, "inbox", "--root", str(empty_project))

    assert code == 0
    assert out.count("(none)") == 3


def _first(capsys: pytest.CaptureFixture[str], root: Path, kind: str) -> dict[str, Any]:
    item: dict[str, Any] = run_json(capsys, "inbox", "--json", "--root", str(root))[kind][0]
    return item


def test_answer_puts_the_task_back_to_pending(
    capsys: pytest.CaptureFixture[str], demo: Path, services_of: Any
) -> None:
    ask = _first(capsys, demo, "asks")

    code, out, _ = run(capsys, "answer", str(ask["id"]), "station local time", "--root", str(demo))

    assert code == 0
    assert f"task #{ask['task_id']} is pending again" in out
    assert services_of(demo).tasks.get(ask["task_id"]).status.value == "pending"


def test_answering_twice_fails_with_exit_code_1(capsys: pytest.CaptureFixture[str], demo: Path) -> None:
    ask = _first(capsys, demo, "asks")
    run(capsys, "answer", str(ask["id"]), "yes", "--root", str(demo))

    code, _, err = run(capsys, "answer", str(ask["id"]), "again", "--root", str(demo))

    assert code == 1
    assert_one_line_error(err, "already answered")


def test_answering_an_unknown_question_fails_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], demo: Path
) -> None:
    code, _, err = run(capsys, "answer", "9999", "yes", "--root", str(demo))

    assert code == 2
    assert_one_line_error(err, "no ask 9999")


def test_approve_makes_a_suggested_task_pending(
    capsys: pytest.CaptureFixture[str], demo: Path, services_of: Any
) -> None:
    task_id = _first(capsys, demo, "suggestions")["suggested_task"]["id"]

    code, out, _ = run(capsys, "approve", str(task_id), "--root", str(demo))

    assert code == 0
    assert out.startswith(f"Approved task #{task_id}")
    assert services_of(demo).tasks.get(task_id).status.value == "pending"


def test_approving_a_human_task_is_refused(capsys: pytest.CaptureFixture[str], demo: Path) -> None:
    code, _, err = run(capsys, "approve", "1", "--root", str(demo))

    assert code == 1
    assert_one_line_error(err, "was not suggested by an agent")


def test_reject_skips_the_task_and_keeps_the_reason(
    capsys: pytest.CaptureFixture[str], demo: Path, services_of: Any
) -> None:
    task_id = _first(capsys, demo, "suggestions")["suggested_task"]["id"]

    code, _, _ = run(capsys, "reject", str(task_id), "--reason", "out of scope", "--root", str(demo))

    task = services_of(demo).tasks.get(task_id)
    assert code == 0
    assert task.status.value == "skipped"
    assert any("out of scope" in comment.body for comment in task.comments)


def test_triage_sets_the_resolution_of_a_flag(capsys: pytest.CaptureFixture[str], demo: Path) -> None:
    flag = _first(capsys, demo, "flags")

    code, out, _ = run(capsys, "triage", str(flag["id"]), "--resolution", "dismissed", "--root", str(demo))

    assert (code, out) == (0, f"Flag #{flag['id']} is now dismissed\n")
    assert run_json(capsys, "status", "--json", "--root", str(demo))["inbox"]["flags"] == 4


def test_triage_convert_creates_a_task(capsys: pytest.CaptureFixture[str], demo: Path) -> None:
    flag = _first(capsys, demo, "flags")

    code, out, _ = run(capsys, "triage", str(flag["id"]), "--resolution", "convert", "--root", str(demo))

    assert code == 0
    assert "is now converted" in out
    created = re.search(r"Created task #(\d+)", out)
    assert created is not None
    with closing(Services.open(ProjectPaths.at(demo))) as services:
        assert int(created[1]) == max(task.id for task in services.tasks.list())
        assert services.signals.get(flag["id"]).resolution == "converted"


def test_triage_with_an_unknown_resolution_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], demo: Path
) -> None:
    flag = _first(capsys, demo, "flags")

    code, _, err = run(capsys, "triage", str(flag["id"]), "--resolution", "ignore", "--root", str(demo))

    assert code == 2
    assert_one_line_error(err, "invalid resolution: 'ignore'")


# --- demo, prd.json ------------------------------------------------------------------------------


def test_demo_refuses_a_folder_that_holds_a_project(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    code, _, err = run(capsys, "demo", str(empty_project))

    assert code == 2
    assert_one_line_error(err, "already exists")


PRD = {
    "project": "Harbour",
    "branchName": "ralph/harbour",
    "description": "Tide tables",
    "userStories": [
        {
            "id": "US-001",
            "title": "Show tides",
            "description": "As a sailor…",
            "acceptanceCriteria": ["a"],
            "priority": 1,
            "passes": False,
        },
        {
            "id": "US-002",
            "title": "Alert me",
            "description": "",
            "acceptanceCriteria": [],
            "priority": 2,
            "passes": True,
        },
    ],
}


def test_import_then_export_prd(
    capsys: pytest.CaptureFixture[str], empty_project: Path, tmp_path: Path
) -> None:
    source = tmp_path / "prd.json"
    source.write_text(json.dumps(PRD))

    code, out, _ = run(capsys, "import-prd", str(source), "--root", str(empty_project))
    again = run(capsys, "import-prd", str(source), "--root", str(empty_project))[1]
    exported = run(capsys, "export-prd", str(tmp_path / "out.json"), "--root", str(empty_project))

    assert code == 0
    assert "2 created, 0 updated, 0 unchanged" in out
    assert "0 created, 0 updated, 2 unchanged" in again
    assert exported[0] == 0
    stories = json.loads((tmp_path / "out.json").read_text())["userStories"]
    assert [story["id"] for story in stories] == ["US-001", "US-002"]


def test_export_prd_to_standard_output(capsys: pytest.CaptureFixture[str], demo_template: Path) -> None:
    document = run_json(capsys, "export-prd", "-", "--root", str(demo_template))

    assert document["project"] == "Tidewater"
    assert len(document["userStories"]) == 21


def test_a_malformed_prd_names_the_place_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], empty_project: Path, tmp_path: Path, services_of: Any
) -> None:
    broken = json.loads(json.dumps(PRD))
    del broken["userStories"][1]["title"]
    source = tmp_path / "prd.json"
    source.write_text(json.dumps(broken))

    code, _, err = run(capsys, "import-prd", str(source), "--root", str(empty_project))

    assert code == 2
    assert_one_line_error(err, "userStories[1].title: missing")
    assert services_of(empty_project).tasks.list() == []


def test_importing_into_an_unknown_feature_is_refused(
    capsys: pytest.CaptureFixture[str], empty_project: Path, tmp_path: Path
) -> None:
    source = tmp_path / "prd.json"
    source.write_text(json.dumps(PRD))

    code, _, err = run(capsys, "import-prd", str(source), "--feature", "nope", "--root", str(empty_project))

    assert code == 2
    assert_one_line_error(err, "--feature 'nope': no such feature")


def test_importing_a_missing_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], empty_project: Path
) -> None:
    code, _, err = run(capsys, "import-prd", "nowhere.json", "--root", str(empty_project))

    assert code == 2
    assert_one_line_error(err, "nowhere.json: no such file")


# --- the window ----------------------------------------------------------------------------------


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "ralph-desk" / "demo"


def test_no_command_creates_the_demo_and_says_when_there_is_no_window(
    capsys: pytest.CaptureFixture[str], data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ralph_desk.app", None)

    code, out, _ = run(capsys)

    assert code == 0
    assert cli.demo_home() == data_home
    assert (data_home / ".ralph" / "db" / "ralph.db").is_file()
    assert out.startswith(f"the window is not available in this build; the project is at {data_home}")


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str | None]]:
    """The (folder, database URL) of each window a command opened, through a stand-in window module."""
    opened: list[tuple[Path, str | None]] = []

    def launch_window(root: Path, db_url: str | None = None) -> int:
        opened.append((root, db_url))
        return 3

    app = types.ModuleType("ralph_desk.app")
    app.launch_window = launch_window  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ralph_desk.app", app)
    return opened


def test_no_command_opens_the_window_on_the_demo(
    capsys: pytest.CaptureFixture[str], data_home: Path, windows: list[tuple[Path, str | None]]
) -> None:
    first = run(capsys)[0]
    second = run(capsys)[0]

    assert (first, second) == (3, 3)
    assert windows == [(data_home, None), (data_home, None)]


ELSEWHERE = "sqlite:////elsewhere/ralph.db"


@pytest.mark.parametrize(
    ("before", "after", "url"),
    [
        (["open"], [], None),
        ([], [], None),
        ([], ["--db-url", ELSEWHERE], ELSEWHERE),
        (["open"], ["--db-url", ELSEWHERE], ELSEWHERE),
    ],
    ids=["open", "a folder alone", "a folder with --db-url", "open with --db-url"],
)
def test_open_or_a_folder_alone_launches_the_window_on_it_with_the_database_url(
    capsys: pytest.CaptureFixture[str],
    empty_project: Path,
    windows: list[tuple[Path, str | None]],
    before: list[str],
    after: list[str],
    url: str | None,
) -> None:
    code, _, _ = run(capsys, *before, str(empty_project), *after)

    assert code == 3
    assert windows == [(empty_project, url)]


def test_open_leaves_a_plain_folder_to_the_window_which_offers_to_initialise_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, windows: list[tuple[Path, str | None]]
) -> None:
    code, _, _ = run(capsys, "open", str(tmp_path))

    assert code == 3
    assert windows == [(tmp_path, None)]


def test_a_missing_folder_says_the_folder_does_not_exist_and_makes_no_project(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, windows: list[tuple[Path, str | None]]
) -> None:
    code, _, err = run(capsys, str(tmp_path / "stauts"))

    assert code == 2
    assert_one_line_error(err, f"the folder {tmp_path / 'stauts'} does not exist")
    assert "invalid choice" not in err
    assert windows == []
    assert not (tmp_path / "stauts").exists()


def test_open_on_a_missing_folder_says_it_does_not_exist(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, windows: list[tuple[Path, str | None]]
) -> None:
    code, _, err = run(capsys, "open", str(tmp_path / "gone"))

    assert code == 2
    assert_one_line_error(err, "does not exist")
    assert windows == []


def test_a_mistyped_command_word_stays_an_invalid_choice(
    capsys: pytest.CaptureFixture[str], windows: list[tuple[Path, str | None]]
) -> None:
    code, _, err = run(capsys, "stauts")

    assert code == 2
    assert_one_line_error(err, "invalid choice")
    assert windows == []


def test_commands_are_not_taken_for_folders(
    capsys: pytest.CaptureFixture[str],
    empty_project: Path,
    windows: list[tuple[Path, str | None]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (empty_project / "status").mkdir()
    monkeypatch.chdir(empty_project)

    code, out, _ = run(capsys, "status")

    assert (code, windows) == (0, [])
    assert out.startswith("Empty")


def test_open_refuses_a_folder_without_a_project_when_there_is_no_window(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ralph_desk.app", None)

    code, _, err = run(capsys, "open", str(tmp_path))

    assert code == 2
    assert_one_line_error(err, "no ralph-desk project")


def test_parsing_loads_no_command_modules_before_a_command_runs() -> None:
    probe = (
        "import sys; from ralph_desk import cli; "
        "cli.build_parser().parse_args(['status']); "
        "print(sorted(m for m in sys.modules if m.startswith(('ralph_desk.loop', 'ralph_desk.mcp_server', "
        "'ralph_desk.services', 'PySide6', 'mcp'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
        check=False,
    )

    assert (result.returncode, result.stdout) == (0, "[]\n"), result.stderr


def test_a_command_gets_its_own_arguments_when_it_is_chosen() -> None:
    parser = cli.build_parser()

    args = parser.parse_args(["run", "--max-iterations", "2", "--root", "/x"])
    again = parser.parse_args(["run", "--dry-run"])

    assert (args.max_iterations, args.root, again.dry_run) == (2, "/x", True)


def test_run_parallel_takes_a_whole_number_of_at_least_one_and_names_what_is_allowed() -> None:
    parser = cli.build_parser()

    assert parser.parse_args(["run", "--parallel", "4"]).parallel == 4
    for bad in ("0", "-2", "four", "65"):
        with pytest.raises(
            cli.UsageError, match=f"--parallel: {bad!r} is not allowed: a whole number from 1 to 64"
        ):
            parser.parse_args(["run", "--parallel", bad])


def test_an_unexpected_error_is_one_line_with_exit_code_1(
    capsys: pytest.CaptureFixture[str], empty_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(_: Any) -> dict[str, Any]:
        raise RuntimeError("the tide went out")

    monkeypatch.setattr(reports, "status_report", explode)

    code, _, err = run(capsys, "status", "--root", str(empty_project))

    assert code == 1
    assert_one_line_error(err, "RuntimeError: the tide went out")


# --- discipline ----------------------------------------------------------------------------------


def test_discipline_disable_and_enable_change_only_what_the_window_changes(
    capsys: pytest.CaptureFixture[str], empty_project: Path, services_of: Any
) -> None:
    services = services_of(empty_project)
    services.disciplines.create("docs", "Docs", "book", "#996633", disabled_tools=["suggest"])
    root = ["--root", str(empty_project)]
    code, out, _ = run(capsys, "discipline", "disable", "docs", "learned", "create_task", *root)
    assert code == 0 and out.startswith("docs: Docs\ntakes away: ")
    assert set(services.disciplines.get("docs").disabled_tools) == {"suggest", "learned", "create_task"}
    code, out, _ = run(capsys, "discipline", "enable", "docs", "suggest", *root)
    assert code == 0
    assert set(services.disciplines.get("docs").disabled_tools) == {"learned", "create_task"}
    shown = run_json(capsys, "discipline", "show", "docs", "--json", *root)
    assert "learned" not in shown["tools_by_recipe"]["task_execution"]
    assert "done" in shown["tools_by_recipe"]["task_execution"]
    listed = run_json(capsys, "discipline", "list", "--json", *root)
    assert [(item["name"], sorted(item["disabled_tools"])) for item in listed] == [
        ("docs", ["create_task", "learned"])
    ]


def test_discipline_refuses_an_unknown_tool_naming_the_known_ones(
    capsys: pytest.CaptureFixture[str], empty_project: Path, services_of: Any
) -> None:
    services = services_of(empty_project)
    services.disciplines.create("docs", "Docs", "book", "#996633")
    code, _, err = run(capsys, "discipline", "disable", "docs", "dnoe", "--root", str(empty_project))
    assert code == 2
    assert_one_line_error(err, "'dnoe'")
    assert "did you mean: done" in err and "known: list_tasks" in err and "blocked" in err
    assert services.disciplines.get("docs").disabled_tools == ()
    code, _, err = run(capsys, "discipline", "enable", "docs", "--root", str(empty_project))
    assert code == 2
    assert_one_line_error(err, "discipline enable takes NAME TOOL")


# --- plumbing: pipes, features and disciplines ----------------------------------------------------


def test_status_into_a_closed_pipe_ends_quietly(demo: Path) -> None:
    """`ralph-desk status | head -0`: the reader is gone before the first line; no error, no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # closed before the command writes: its first write meets a broken pipe
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    environment.pop("RALPH_DB_URL", None)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "ralph_desk", "status", "--root", str(demo)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)

    assert (result.returncode, result.stderr) == (0, "")


def test_feature_and_discipline_made_on_the_command_line_take_an_import(
    capsys: pytest.CaptureFixture[str], empty_project: Path, tmp_path: Path, services_of: Any
) -> None:
    root = ["--root", str(empty_project)]
    source = tmp_path / "prd.json"
    source.write_text(json.dumps({"userStories": [{"id": "US-1", "title": "Chart the tides"}]}))
    code, _, err = run(capsys, "import-prd", str(source), "--feature", "tides", *root)
    assert code == 2 and "'tides': no such feature" in err

    code, out, _ = run(capsys, "feature", "add", "tides", "Tide tables", "--description", "Heights", *root)
    assert (code, out) == (0, "tides: Tide tables\nHeights\n")
    code, out, _ = run(capsys, "discipline", "add", "docs", "Docs", "--color", "#996633", *root)
    assert code == 0 and out.startswith("docs: Docs\ntakes away: (none)")
    code, _, err = run(capsys, "import-prd", str(source), "--feature", "tides", "--discipline", "docs", *root)

    assert (code, err) == (0, "")
    services = services_of(empty_project)
    [task] = services.tasks.list()
    assert (task.feature, task.discipline) == ("tides", "docs")
    assert services.disciplines.get("docs").color == "#996633"
    listed = run_json(capsys, "feature", "list", "--json", *root)
    assert [(item["name"], item["display_name"]) for item in listed] == [("tides", "Tide tables")]
    code, out, _ = run(capsys, "discipline", "list", *root)
    assert code == 0 and "docs" in out


def test_adding_a_feature_twice_or_a_bad_colour_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], empty_project: Path, services_of: Any
) -> None:
    root = ["--root", str(empty_project)]
    assert run(capsys, "feature", "add", "tides", *root)[0] == 0
    code, _, err = run(capsys, "feature", "add", "tides", *root)
    assert code == 1
    assert_one_line_error(err, "a feature named 'tides' already exists")
    code, _, err = run(capsys, "discipline", "add", "docs", "--color", "brown", *root)
    assert code == 2
    assert_one_line_error(err, "#rrggbb")
    code, _, err = run(capsys, "feature", "add", *root)
    assert code == 2
    assert_one_line_error(err, "feature add takes NAME [DISPLAY_NAME]")
    assert [item.name for item in services_of(empty_project).disciplines.list()] == []
