"""`ralph-desk checks`: the project's checks listed and run from the command line, trusted first."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from ralph_desk.cli import main
from ralph_desk.domain.checks import Check
from ralph_desk.project import ProjectPaths, init_project, update_config
from ralph_desk.services.container import Services
from tests.support.git_repo import commit_all, make_repo
from tests.support.review_project import task_in_review

MARKS = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran'); print('marked')"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def marking(marker: Path, name: str = "mark", **more: Any) -> dict[str, Any]:
    """A check that leaves `marker` behind when it runs."""
    return {"name": name, "run": shlex.join([sys.executable, "-c", MARKS, str(marker)]), **more}


def cloned_checks(paths: ProjectPaths, *checks: dict[str, Any], setup: str | None = None) -> None:
    """Write config.json's checks as a cloned repository brings them (not through ralph-desk), with the
    sandbox off: the checks mark files outside the project (the sandbox off is asked about with them)."""
    raw = json.loads(paths.config_file.read_text(encoding="utf-8"))
    raw.update(checks=list(checks), setup=setup, sandbox=False)
    paths.config_file.write_text(json.dumps(raw), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return init_project(tmp_path / "project", title="Checked").root


def test_cloned_checks_run_nothing_until_trusted(
    capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    cloned_checks(ProjectPaths.at(project), marking(marker), setup="echo ready")

    code, _, err = run(capsys, "checks", "run", "--root", str(project))

    assert code == 2 and not marker.exists()
    assert "ralph-desk trust" in err and str(marker) in err and "setup: echo ready" in err
    trusted = run(capsys, "trust", "--root", str(project))
    assert (
        trusted[0] == 0
        and f"check mark: {sys.executable}" in trusted[1]
        and "setup: echo ready" in trusted[1]
    )
    code, out, err = run(capsys, "checks", "run", "--root", str(project))
    assert code == 0, err
    assert marker.read_text() == "ran"
    assert "── mark" in err and "marked" in err and "mark  passed  exit 0" in out


def test_a_failing_required_check_exits_1_and_an_advisory_one_does_not(
    capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path
) -> None:
    paths = ProjectPaths.at(project)
    fails = {"name": "lint", "run": "echo no good; exit 3", "required": False}
    update_config(paths, checks=[marking(tmp_path / "m"), fails], sandbox=False)  # it marks outside

    code, out, _ = run(capsys, "checks", "run", "--json", "--root", str(project))

    assert code == 0
    runs = json.loads(out)
    assert [(r["name"], r["status"], r["exit_code"], r["purpose"]) for r in runs] == [
        ("mark", "passed", 0, "project"),
        ("lint", "failed", 3, "project"),
    ]
    assert "no good" in runs[1]["tail"] and Path(runs[1]["log_path"]).is_file()
    update_config(paths, checks=[{**fails, "required": True}])
    code, _, err = run(capsys, "checks", "run", "--root", str(project))
    assert code == 1 and "required checks failed: lint" in err


def test_checks_run_names_what_is_missing(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, _, err = run(capsys, "checks", "run", "--root", str(project))
    assert code == 2 and "names no checks" in err

    update_config(ProjectPaths.at(project), checks=[{"name": "ok", "run": "echo ok"}])
    code, _, err = run(capsys, "checks", "run", "--task", "42", "--root", str(project))
    assert code == 2 and "no task 42" in err


def test_checks_list_and_validate_show_the_settings(
    capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path
) -> None:
    paths = ProjectPaths.at(project)
    update_config(paths, checks=[marking(tmp_path / "m", timeout_s=30)], setup="echo ready")
    update_config(paths, worktree_files=[".env"])

    code, out, _ = run(capsys, "checks", "list", "--json", "--root", str(project))
    listed = json.loads(out)
    assert code == 0 and listed["trusted"] is True
    assert [(c["name"], c["timeout_s"], c["required"]) for c in listed["checks"]] == [("mark", 30, True)]
    assert (listed["setup"], listed["worktree_files"]) == ("echo ready", [".env"])

    code, out, _ = run(capsys, "validate", str(project))
    assert code == 0 and "mark  required  30 s" in out and "Setup: echo ready" in out and ".env" in out
    code, out, _ = run(capsys, "validate", "--json", str(project))
    assert json.loads(out)["checks"]["checks"][0]["name"] == "mark"

    cloned_checks(paths, marking(tmp_path / "other"))
    code, out, _ = run(capsys, "checks", "list", "--root", str(project))
    assert code == 0 and "Not trusted yet" in out


@pytest.fixture
def task_project(tmp_path: Path) -> Path:
    """A git project whose task #1 has a worktree, and a check reading a file of the worktree."""
    root = make_repo(tmp_path / "repo", {"tide.txt": "low\n"})
    paths = init_project(root, title="Tides")
    check = Check(name="tide", run=shlex.join([sys.executable, "-c", "print(open('tide.txt').read())"]))
    update_config(paths, checks=[check.model_dump()])
    commit_all(root, "ralph-desk project")
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        task_in_review(services, "Raise the tide", {"tide.txt": "high\n"}, "Raised.")
    finally:
        services.close()
    return root


def test_checks_run_for_a_task_runs_in_its_worktree_and_is_its_evidence(
    capsys: pytest.CaptureFixture[str], task_project: Path
) -> None:
    code, out, err = run(capsys, "checks", "run", "--task", "1", "--json", "--root", str(task_project))

    assert code == 0, err
    (ran,) = json.loads(out)
    assert (ran["task_id"], ran["purpose"], ran["status"]) == (1, "rerun", "passed")
    assert "high" in ran["tail"] and ran["commit"]
    status = json.loads(run(capsys, "status", "--json", "--root", str(task_project))[1])
    assert [c["name"] for c in status["checks"]["configured"]] == ["tide"]
    (task,) = status["checks"]["tasks"]
    assert (task["task_id"], task["verdict"]) == (1, "passed")
    (latest,) = task["latest"]
    assert {"name", "status", "exit_code", "duration_s", "required", "tail", "log_path"} <= set(latest)
    shown = json.loads(run(capsys, "review", "show", "1", "--json", "--root", str(task_project))[1])
    assert shown["checks"]["verdict"] == "passed" and shown["checks"]["latest"][0]["tail"] == ran["tail"]
    code, out, _ = run(capsys, "review", "show", "1", "--root", str(task_project))
    assert "checks: passed" in out and "tide: passed, exit 0" in out


def test_a_task_whose_check_fails_merges_only_with_anyway(
    capsys: pytest.CaptureFixture[str], task_project: Path
) -> None:
    low = Check(
        name="tide", run=shlex.join([sys.executable, "-c", "assert open('tide.txt').read() == 'low\\n'"])
    )
    update_config(ProjectPaths.at(task_project), checks=[low.model_dump()])
    root = str(task_project)

    assert run(capsys, "checks", "run", "--task", "1", "--root", root)[0] == 1
    tip = json.loads(run(capsys, "review", "show", "1", "--json", "--root", root)[1])["pin"]["tip"]
    code, _, err = run(capsys, "review", "approve", "1", "--commit", tip, "--root", root)
    assert code != 0 and "--anyway" in err
    code, out, err = run(capsys, "review", "approve", "1", "--commit", tip, "--anyway", "--root", root)
    assert code == 0, err
    assert "(now done)" in out
