"""The `.ralph/` folder: init creates it as DESIGN §3 says, --force keeps data, validate names problems."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.tools import RalphRunInput
from ralph_desk.project import (
    CONFIG_VERSION,
    DEFAULT_MODELS,
    ConfigError,
    Problem,
    ProjectConfig,
    ProjectError,
    ProjectExistsError,
    ProjectPaths,
    default_config,
    init_project,
    read_config,
    update_config,
    validate_project,
    write_config,
)
from ralph_desk.project import config as config_module
from ralph_desk.project.init import checked_out_branch
from ralph_desk.services.container import Services


@pytest.fixture(autouse=True)
def _no_database_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RALPH_DB_URL", raising=False)


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    return init_project(tmp_path / "harbour", title="Harbour")


@pytest.fixture
def services(project: ProjectPaths) -> Iterator[Services]:
    opened = Services.open(project)
    yield opened
    opened.close()


def _messages(problems: list[Problem]) -> list[str]:
    return [str(problem) for problem in problems]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- init ----------------------------------------------------------------------------------------


def test_init_creates_every_folder_and_file_of_the_layout(project: ProjectPaths) -> None:
    for folder in (
        project.db_dir,
        project.mcp_dir,
        project.sessions_dir,
        project.clients_dir,
        project.logs_dir,
    ):
        assert folder.is_dir(), folder
    for file in (project.db_file, project.learnings_file, project.progress_file, project.config_file):
        assert file.is_file(), file
    assert project.learnings_file.read_text() == ""
    assert project.progress_file.read_text() == ""


def test_the_sessions_folder_is_private_to_its_owner(project: ProjectPaths) -> None:
    assert stat.S_IMODE(project.sessions_dir.stat().st_mode) == 0o700


def test_the_gitignore_keeps_runtime_state_out_of_version_control(project: ProjectPaths) -> None:
    ignored = (project.ralph / ".gitignore").read_text().split()

    assert {"db/", "logs/", "mcp/sessions/", "mcp/context.json", "mcp/prompt.md", "progress.txt"} <= set(
        ignored
    )


def test_init_writes_the_default_settings(project: ProjectPaths) -> None:
    config = json.loads(project.config_file.read_text())

    assert config == default_config()
    assert config["agent"] == "claude"
    assert config["stuck_threshold"] == 3
    assert config["opus_review_every"] == 0
    assert set(config["models"]) == set(DEFAULT_MODELS)
    assert {"max_iterations", "max_cost_usd", "session_timeout_s", "allow_edits"} <= set(config)


def test_init_titles_the_project_as_asked(services: Services) -> None:
    assert services.project.get().title == "Harbour"


def test_init_titles_the_project_after_its_folder_by_default(tmp_path: Path) -> None:
    paths = init_project(tmp_path / "tidewater")
    services = Services.open(paths)
    try:
        assert services.project.get().title == "tidewater"
    finally:
        services.close()


def test_init_makes_a_missing_project_folder(tmp_path: Path) -> None:
    paths = init_project(tmp_path / "a" / "b")

    assert paths.ralph.is_dir()


def test_init_refuses_a_file_as_the_project_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")

    with pytest.raises(ProjectError, match="not a folder"):
        init_project(tmp_path / "file")


def test_init_refuses_an_existing_project_without_force(project: ProjectPaths) -> None:
    with pytest.raises(ProjectExistsError, match="--force"):
        init_project(project.root)


@pytest.mark.parametrize("title", ["", "   ", "x" * 201])
def test_init_refuses_a_bad_title_and_creates_nothing(tmp_path: Path, title: str) -> None:
    with pytest.raises(ProjectError, match="invalid title"):
        init_project(tmp_path, title=title)

    assert not (tmp_path / ".ralph").exists()


def test_force_keeps_the_database_progress_and_learnings(project: ProjectPaths, services: Services) -> None:
    services.features.create("tides", "Tides")
    services.state_files.append_progress("half-way")
    services.state_files.append_learning("chart datum")
    progress, learnings = project.progress_file.read_text(), project.learnings_file.read_text()
    services.close()

    init_project(project.root, force=True)

    reopened = Services.open(project)
    try:
        assert [feature.name for feature in reopened.features.list()] == ["tides"]
        assert reopened.project.get().title == "Harbour"
    finally:
        reopened.close()
    assert project.progress_file.read_text() == progress
    assert project.learnings_file.read_text() == learnings


def test_force_re_creates_broken_configuration(project: ProjectPaths) -> None:
    project.config_file.write_text("{broken")
    (project.ralph / ".gitignore").unlink()
    project.clients_dir.rmdir()

    init_project(project.root, force=True)

    assert validate_project(project.root) == []
    assert json.loads(project.config_file.read_text()) == default_config()


def test_force_with_a_title_renames_the_project(project: ProjectPaths) -> None:
    init_project(project.root, title="Harbour Master", force=True)

    services = Services.open(project)
    try:
        assert services.project.get().title == "Harbour Master"
    finally:
        services.close()


def test_force_recreates_a_missing_database(project: ProjectPaths) -> None:
    project.db_file.unlink()

    init_project(project.root, force=True)

    assert validate_project(project.root) == []


def test_init_can_put_the_database_at_another_url(tmp_path: Path) -> None:
    elsewhere = tmp_path / "shared.db"
    paths = init_project(tmp_path / "p", title="Shared", db_url=f"sqlite:///{elsewhere}")

    assert elsewhere.is_file()
    assert not paths.db_file.exists()
    assert validate_project(paths.root, db_url=f"sqlite:///{elsewhere}") == []


# --- settings ------------------------------------------------------------------------------------


def test_read_config_fills_in_defaults_for_missing_keys(project: ProjectPaths) -> None:
    project.config_file.write_text(json.dumps({"agent": "codex", "models": {"yap": "opus"}}))

    config = read_config(project)

    assert config.agent == "codex"
    assert config.models["yap"] == "opus"
    assert config.models["opus_review"] == DEFAULT_MODELS["opus_review"]
    assert config.stuck_threshold == 3


def test_read_config_names_every_bad_key(project: ProjectPaths) -> None:
    project.config_file.write_text(json.dumps({"agent": "gpt", "allow_edits": "yes"}))

    with pytest.raises(ProjectError) as raised:
        read_config(project)

    assert 'agent: "gpt" is not allowed; allowed: one of claude, codex, command, rehearsal' in str(
        raised.value
    )
    assert 'allow_edits: "yes" is not allowed; allowed: true or false' in str(raised.value)


def test_an_unknown_key_is_refused_with_the_list_of_known_ones(project: ProjectPaths) -> None:
    project.config_file.write_text(json.dumps({"max_turn": 5}))

    with pytest.raises(ProjectError) as raised:
        read_config(project)

    message = str(raised.value)
    assert message.startswith(f"{project.config_file}: unknown key 'max_turn'; known keys: version, agent,")
    for key in ("agent_bin", "max_turns", "rate_limit_wait_s", "base_branch", "session_timeout_s"):
        assert key in message


def test_update_config_refuses_invalid_settings_and_writes_nothing(project: ProjectPaths) -> None:
    before = project.config_file.read_bytes()

    with pytest.raises(
        ProjectError, match="stuck_threshold: 0 is not allowed; allowed: a whole number from 1 to 50"
    ):
        update_config(project, stuck_threshold=0)
    with pytest.raises(ProjectError, match="unknown key 'stuck'; known keys: version, agent"):
        update_config(project, stuck=4)

    assert project.config_file.read_bytes() == before


def test_update_config_changes_only_what_it_is_given(project: ProjectPaths) -> None:
    update_config(project, max_turns=9)
    updated = update_config(project, rate_limit_wait_s=2.5, agent_bin="/opt/claude")

    assert (updated.max_turns, updated.rate_limit_wait_s, updated.agent_bin) == (9, 2.5, "/opt/claude")
    assert read_config(project) == updated


def test_a_broken_config_file_is_named_and_kept_as_it_was(project: ProjectPaths) -> None:
    project.config_file.write_text('{"agent": "claude", ')

    with pytest.raises(ProjectError, match=r"config\.json: not valid JSON"):
        update_config(project, max_turns=3)

    assert project.config_file.read_text() == '{"agent": "claude", '


def test_the_config_model_refuses_invalid_values_when_made() -> None:
    with pytest.raises(ConfigError) as raised:
        ProjectConfig(max_turns=0, rate_limit_wait_s=-1, agent_bin=" ")

    assert [problem.split(":")[0] for problem in raised.value.problems] == [
        "agent_bin",
        "max_turns",
        "rate_limit_wait_s",
    ]


def test_every_setting_round_trips_through_the_file(project: ProjectPaths) -> None:
    config = ProjectConfig(
        agent="command",
        agent_bin="/opt/agent",
        agent_command=("my-agent", "{prompt_file}"),
        models={**DEFAULT_MODELS, "yap": "haiku"},
        max_turns=7,
        max_iterations=3,
        max_cost_usd=None,
        session_timeout_s=60,
        stuck_threshold=2,
        rate_limit_wait_s=0.5,
        opus_review_every=4,
        allow_edits=False,
        base_branch="trunk",
    )

    write_config(project, config)

    assert read_config(project) == config
    assert validate_project(project.root) == []


def test_a_version_1_file_with_branch_name_still_loads_and_is_valid(project: ProjectPaths) -> None:
    old = {**default_config(), "version": 1, "branch_name": "ralph/tides"}
    for key in ("base_branch", "agent_bin", "max_turns", "rate_limit_wait_s"):
        del old[key]
    project.config_file.write_text(json.dumps(old))

    assert validate_project(project.root) == []
    assert read_config(project).base_branch == "ralph/tides"

    update_config(project, max_turns=5)

    saved = json.loads(project.config_file.read_text())
    assert (saved["version"], saved["base_branch"], saved["max_turns"]) == (CONFIG_VERSION, "ralph/tides", 5)
    assert "branch_name" not in saved


def test_a_version_2_file_must_name_the_newer_keys(project: ProjectPaths) -> None:
    config = default_config()
    del config["max_turns"]
    project.config_file.write_text(json.dumps(config))

    assert _messages(validate_project(project.root)) == [f"{project.config_file}: max_turns: missing"]


def test_the_old_and_new_name_of_the_base_branch_together_are_refused(project: ProjectPaths) -> None:
    project.config_file.write_text(json.dumps({"base_branch": "main", "branch_name": "dev"}))

    with pytest.raises(ProjectError, match="branch_name: the old name of base_branch; keep only base_branch"):
        read_config(project)


def test_init_takes_the_checked_out_branch_as_the_base_branch(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run([git, "init", "-q", "-b", "trunk", str(root)], check=True)

    paths = init_project(root)

    assert read_config(paths).base_branch == "trunk"


def test_outside_git_there_is_no_base_branch(project: ProjectPaths) -> None:
    assert read_config(project).base_branch is None


def test_the_base_branch_is_read_through_a_worktrees_git_file_and_a_detached_head_has_none(
    tmp_path: Path,
) -> None:
    real = tmp_path / "main-repo" / ".git" / "worktrees" / "task"
    real.mkdir(parents=True)
    (real / "HEAD").write_text("ref: refs/heads/ralph/7-tides\n")
    tree = tmp_path / "task"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {real}\n")
    detached = tmp_path / "detached"
    (detached / ".git").mkdir(parents=True)
    (detached / ".git" / "HEAD").write_text("3f5edee0a1b2c3d4e5f60718293a4b5c6d7e8f90\n")

    assert checked_out_branch(tree / "sub") == "ralph/7-tides"
    assert checked_out_branch(detached) is None


# --- validate ------------------------------------------------------------------------------------


def test_a_fresh_project_is_valid(project: ProjectPaths) -> None:
    assert validate_project(project.root) == []


def test_a_folder_without_ralph_is_reported(tmp_path: Path) -> None:
    problems = validate_project(tmp_path)

    assert problems == [Problem(tmp_path.resolve() / ".ralph", problems[0].message)]
    assert "not a ralph-desk project" in problems[0].message


@pytest.mark.parametrize("name", ["logs", "mcp/clients", "mcp/sessions", "db"])
def test_a_missing_folder_is_named(project: ProjectPaths, name: str) -> None:
    folder = project.ralph / name
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()

    messages = _messages(validate_project(project.root))

    assert f"{folder}: missing folder" in messages


@pytest.mark.parametrize("name", ["learnings.txt", "progress.txt", ".gitignore"])
def test_a_missing_file_is_named(project: ProjectPaths, name: str) -> None:
    (project.ralph / name).unlink()

    assert _messages(validate_project(project.root)) == [f"{project.ralph / name}: missing file"]


def test_a_sessions_folder_others_can_read_is_reported(project: ProjectPaths) -> None:
    project.sessions_dir.chmod(0o755)

    [problem] = validate_project(project.root)

    assert problem.path == project.sessions_dir
    assert "0755" in problem.message and "0700" in problem.message


def test_missing_settings_are_reported(project: ProjectPaths) -> None:
    project.config_file.unlink()

    [problem] = validate_project(project.root)

    assert problem.path == project.config_file
    assert problem.message.startswith("missing file")


def test_settings_that_are_not_json_are_reported(project: ProjectPaths) -> None:
    project.config_file.write_text('{"agent": ')

    [problem] = validate_project(project.root)

    assert problem.path == project.config_file
    assert problem.message.startswith("not valid JSON")


@pytest.mark.parametrize(
    ("key", "too_big"),
    [
        ("parallel", 65),
        ("max_iterations", 10_001),
        ("session_timeout_s", 86_401),
        ("max_cost_usd", 100_000.5),
    ],
)
def test_a_setting_above_its_bound_is_refused_by_the_one_rule(
    project: ProjectPaths, key: str, too_big: float
) -> None:
    assert config_module.problem(key, config_module.bounds(key)[1]) is None
    assert config_module.problem(key, too_big) is not None
    with pytest.raises(ProjectError, match=f"{key}: {json.dumps(too_big)} is not allowed"):
        update_config(project, **{key: too_big})


def test_the_tools_take_the_bounds_of_the_config() -> None:
    schema = RalphRunInput.model_json_schema()["properties"]
    maxima = {
        name: next(option["maximum"] for option in schema[name]["anyOf"] if "maximum" in option)
        for name in ("parallel", "max_iterations")
    }
    assert maxima == {name: config_module.bounds(name)[1] for name in maxima}


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "max_iterations",
            "ten",
            'max_iterations: "ten" is not allowed; allowed: a whole number from 0 to 10000 (0: no limit)',
        ),
        ("max_iterations", True, "max_iterations: true is not allowed"),
        (
            "max_cost_usd",
            -1,
            "max_cost_usd: -1 is not allowed; allowed: null (no budget) or a number ≥ 0 and ≤ 100000",
        ),
        (
            "session_timeout_s",
            0,
            "session_timeout_s: 0 is not allowed; allowed: a whole number from 1 to 86400",
        ),
        ("stuck_threshold", 2.5, "stuck_threshold: 2.5 is not allowed"),
        ("opus_review_every", -3, "opus_review_every: -3 is not allowed"),
        ("allow_edits", 1, "allow_edits: 1 is not allowed; allowed: true or false"),
        (
            "agent",
            "gemini",
            'agent: "gemini" is not allowed; allowed: one of claude, codex, command, rehearsal',
        ),
        ("agent_command", [], "agent_command: [] is not allowed"),
        (
            "models",
            ["opus"],
            'models: ["opus"] is not allowed; allowed: an object of recipe name to model name',
        ),
        ("version", 99, "version: 99 is not allowed"),
        (
            "max_turns",
            0,
            "max_turns: 0 is not allowed; allowed: a whole number from 1 to 1000 (agent turns per session)",
        ),
        (
            "rate_limit_wait_s",
            0,
            "rate_limit_wait_s: 0 is not allowed; allowed: a number > 0 and ≤ 86400 (seconds",
        ),
        ("agent_bin", "", 'agent_bin: "" is not allowed; allowed: null or the path of the agent\'s program'),
        ("base_branch", 3, "base_branch: 3 is not allowed; allowed: null or a branch name"),
    ],
)
def test_a_setting_of_the_wrong_type_is_named_with_its_value_and_what_is_allowed(
    project: ProjectPaths, key: str, value: object, expected: str
) -> None:
    write = {**default_config(), key: value}
    project.config_file.write_text(json.dumps(write))

    [problem] = validate_project(project.root)

    assert problem.path == project.config_file
    assert problem.message.startswith(expected)


def test_unknown_and_missing_settings_are_named(project: ProjectPaths) -> None:
    config = default_config()
    del config["agent"]
    config["max_iteration"] = 5
    config["models"]["jam"] = "opus"
    project.config_file.write_text(json.dumps(config))

    messages = [problem.message for problem in validate_project(project.root)]

    assert any(message.startswith("unknown key 'max_iteration'") for message in messages)
    assert "agent: missing" in messages
    assert any(message.startswith("models: unknown recipe 'jam'") for message in messages)


def test_settings_that_are_not_an_object_are_reported(project: ProjectPaths) -> None:
    project.config_file.write_text("[1, 2]")

    [problem] = validate_project(project.root)

    assert problem.message == "must be a JSON object, not list"


def test_a_missing_database_is_reported(project: ProjectPaths) -> None:
    project.db_file.unlink()

    [problem] = validate_project(project.root)

    assert problem.path == project.db_file
    assert problem.message.startswith("missing database")


def test_a_file_that_is_not_a_database_is_reported_as_unreadable(project: ProjectPaths) -> None:
    project.db_file.write_bytes(b"this is not sqlite at all" * 100)

    [problem] = validate_project(project.root)

    assert problem.path == project.db_file
    assert problem.message.startswith("unreadable")


def test_an_empty_database_is_reported(project: ProjectPaths) -> None:
    project.db_file.unlink()
    project.db_file.write_bytes(b"")

    [problem] = validate_project(project.root)

    assert "without the ralph-desk schema" in problem.message


def test_a_database_of_another_program_is_reported(project: ProjectPaths) -> None:
    project.db_file.unlink()
    with sqlite3.connect(project.db_file) as connection:
        connection.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)")
    connection.close()

    [problem] = validate_project(project.root)

    assert problem.message.startswith("not a ralph-desk database")


def _make_newer(db_file: Path) -> None:
    connection = sqlite3.connect(db_file)
    with connection:
        connection.execute("UPDATE alembic_version SET version_num = 'f00d_from_the_future'")
    connection.close()


def test_a_database_from_a_newer_ralph_desk_is_reported_and_left_untouched(project: ProjectPaths) -> None:
    _make_newer(project.db_file)
    before = _digest(project.db_file)

    [problem] = validate_project(project.root)

    assert problem.path == project.db_file
    assert "'f00d_from_the_future' is newer than this ralph-desk knows" in problem.message
    assert _digest(project.db_file) == before


def test_a_malformed_context_file_is_reported(project: ProjectPaths) -> None:
    project.context_file.write_text("{nope")

    [problem] = validate_project(project.root)

    assert problem.path == project.context_file
    assert problem.message.startswith("not valid JSON")


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ([], "must be a JSON object, not list"),
        ({"task_id": "7"}, 'task_id: "7" is not allowed; allowed: int or null'),
        ({"recipe": "party"}, "recipe: 'party' is not a recipe"),
        ({"disabled_tools": "done"}, 'disabled_tools: "done" is not allowed; allowed: list'),
        ({"disabled_tools": [1]}, "disabled_tools: every item must be a tool name (text)"),
    ],
)
def test_a_context_file_with_wrong_fields_is_reported(
    project: ProjectPaths, context: object, expected: str
) -> None:
    project.context_file.write_text(json.dumps(context))

    [problem] = validate_project(project.root)

    assert problem.message.startswith(expected)


def test_a_well_formed_context_file_is_fine(project: ProjectPaths) -> None:
    project.context_file.write_text(
        json.dumps(
            {
                "session_id": "s1",
                "recipe": "task_execution",
                "discipline": "backend",
                "feature": None,
                "task_id": 7,
                "disabled_tools": ["learned"],
            }
        )
    )

    assert validate_project(project.root) == []


def test_every_problem_is_reported_at_once(project: ProjectPaths) -> None:
    project.config_file.write_text("nope")
    project.progress_file.unlink()
    project.logs_dir.rmdir()

    assert len(validate_project(project.root)) == 3


def test_an_unreachable_database_url_is_reported(project: ProjectPaths) -> None:
    url = "postgresql+psycopg://ralph:secret@127.0.0.1:1/ralph"

    problems = validate_project(project.root, db_url=url)

    assert len(problems) == 1
    assert "cannot open the database" in problems[0].message
    assert "secret" not in str(problems[0])


OLD_GITIGNORE = "# Written by ralph-desk: old.\ndb/\nlogs/\nmcp/sessions/\nworktrees/"


def test_opening_an_older_project_adds_the_ignore_lines_its_gitignore_lacks(project: ProjectPaths) -> None:
    gitignore = project.ralph / ".gitignore"
    gitignore.write_text(OLD_GITIGNORE + "\nmine/\n")  # written before `*.lock`, and the person's own line
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    (project.ralph / "merge.lock").write_text("")
    (project.ralph / "merge-journal.json").write_text("{}")

    Services.open(project).close()

    lines = gitignore.read_text().splitlines()
    assert lines[:6] == [*OLD_GITIGNORE.splitlines(), "mine/"]  # nothing lost
    assert lines[6:] == [
        "mcp/context.json",
        "mcp/prompt.md",
        "sandbox/",
        "*.lock",
        "merge-journal.json",
        "progress.txt",
        "learnings.txt",
    ]
    status = subprocess.run(
        ["git", "-C", str(project.root), "status", "--porcelain", "--untracked-files=all", "--", ".ralph"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "merge.lock" not in status and "merge-journal" not in status and ".gitignore" in status
    assert "progress.txt" not in status and "learnings.txt" not in status
    Services.open(project).close()
    assert gitignore.read_text().count("*.lock") == 1  # once


def test_a_gitignore_that_is_a_link_is_not_followed_on_opening(project: ProjectPaths, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(OLD_GITIGNORE)
    gitignore = project.ralph / ".gitignore"
    gitignore.unlink()
    gitignore.symlink_to(outside)

    Services.open(project).close()

    assert outside.read_text() == OLD_GITIGNORE and gitignore.is_symlink()
