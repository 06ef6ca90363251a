"""Nothing outside the project folder: a link planted in `.ralph/` (a hostile clone) is never followed.

Each case replaces a file or folder that ralph-desk reads or writes with a symbolic link to a file in a
stand-in home folder, then drives the real thing (an MCP call to a `ralph-desk mcp` process, a
resource read, `connect`, `run`, `validate`, `init --force`) and checks that the outside file is
unchanged and unread, and that the refusal names the link.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

from ralph_desk import cli
from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.preview import preview_next_session
from ralph_desk.project import ProjectPaths, contained, init_project, validate_project
from ralph_desk.services.container import Services
from tests.hardening.support import Seeded, live_clients, refusal_text
from tests.support.stdio_wire import mcp_command

SECRET = "HOME-ONLY: the person's private notes\n"
RUN_TIMEOUT_S = 180

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links need POSIX here")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A stand-in for the person's home folder, outside the project."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def outside_file(home: Path, name: str) -> Path:
    """A file in the home folder that nothing may read or change."""
    path = home / name
    path.write_text(SECRET, encoding="utf-8")
    return path


def plant(link: Path, target: Path) -> Path:
    """Replace `link` (file or folder) with a symbolic link to `target`."""
    if link.is_dir() and not link.is_symlink():
        for child in sorted(link.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() else child.unlink()
        link.rmdir()
    elif link.exists() or link.is_symlink():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


def untouched(folder: Path) -> dict[str, str]:
    """Every file of the home folder and its text (to compare before and after)."""
    return {
        str(path): path.read_text(encoding="utf-8") for path in sorted(folder.rglob("*")) if path.is_file()
    }


# --- an agent's verbs, through a real `ralph-desk mcp` process ------------------------------------------


STATE_CALLS = {
    "progress": (lambda paths: paths.progress_file, ("append_progress", "read_progress")),
    "learnings": (lambda paths: paths.learnings_file, ("append_learning", "read_learnings")),
}


@pytest.mark.slow
@pytest.mark.parametrize("state", list(STATE_CALLS))
def test_an_agent_never_appends_or_reads_through_a_link(
    seeded: tuple[ProjectPaths, Seeded], home: Path, state: str
) -> None:
    paths, _ = seeded
    where, (append, read) = STATE_CALLS[state]
    link = plant(where(paths), outside_file(home, "bashrc"))
    before = untouched(home)
    params = StdioServerParameters(
        command=sys.executable,
        args=mcp_command(paths, "--recipe", "opus_review", "--session-id", "links")[1:],
        env=dict(os.environ),
    )
    with live_clients() as clients:
        clients.open("agent", params)
        appended = refusal_text(clients.call("agent", append, {"text": "hostile entry"}))
        read = refusal_text(clients.call("agent", read, {}))
        assert not clients.call("agent", "get_project_info", {}).is_error  # the server keeps serving
    assert untouched(home) == before, "the agent's call wrote outside the project"
    for message in (appended, read):
        assert str(link) in message and "symbolic link" in message, message
        assert SECRET.strip() not in message


@pytest.mark.slow
def test_the_stdio_server_refuses_to_log_through_a_linked_logs_folder(
    seeded: tuple[ProjectPaths, Seeded], home: Path
) -> None:
    paths, _ = seeded
    link = plant(paths.logs_dir, home)
    done = subprocess.run(
        mcp_command(paths), input="", capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )
    assert done.returncode == 2 and str(link) in done.stderr, done.stderr[-2000:]
    assert list(home.iterdir()) == []


# --- reads: resources a read-only session may fetch --------------------------------------------------

RESOURCES: dict[str, Callable[[ProjectPaths], Path]] = {
    "ralph://codebase_map": lambda paths: paths.codebase_map,
    "ralph://prompt": lambda paths: paths.mcp_dir / "prompt.md",
    "ralph://progress": lambda paths: paths.progress_file,
    "ralph://learnings": lambda paths: paths.learnings_file,
}


@pytest.mark.slow
def test_no_resource_is_read_through_a_link(seeded: tuple[ProjectPaths, Seeded], home: Path) -> None:
    paths, _ = seeded
    links = {
        uri: plant(where(paths), outside_file(home, uri.rsplit("/", 1)[1]))
        for uri, where in RESOURCES.items()
    }
    params = StdioServerParameters(
        command=sys.executable, args=mcp_command(paths, "--recipe", "understand")[1:], env=dict(os.environ)
    )
    with live_clients() as clients:
        clients.open("reader", params)
        client = clients._clients["reader"]
        for uri, link in links.items():
            with pytest.raises(MCPError) as refused:
                clients.portal.call(client.read_resource, uri)
            message = str(refused.value)
            assert SECRET.strip() not in message, uri
            assert str(link) in message and "symbolic link" in message, (uri, message)


# --- connect, run ------------------------------------------------------------------------------------


def test_connect_never_writes_a_client_config_through_a_link(
    seeded: tuple[ProjectPaths, Seeded], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    claude_link = plant(paths.clients_dir / "claude.mcp.json", outside_file(home, "claude.json"))
    before = untouched(home)
    argv = ["connect", "--root", str(paths.root), "--client", "claude"]
    assert cli.main(argv) == 2
    assert str(claude_link) in capsys.readouterr().err
    # The folder of the configs itself a link: refused too, and nothing lands in the home folder.
    claude_link.unlink()
    plant(paths.clients_dir, home)
    assert cli.main([*argv, "--transport", "http"]) == 2
    assert str(paths.clients_dir) in capsys.readouterr().err
    assert untouched(home) == before


@pytest.fixture
def ended_agent(tmp_path: Path) -> str:
    """A command agent that ends at once, as the `command` template runs it."""
    script = tmp_path / "agent.py"
    script.write_text("import sys\nprint('agent ran')\n", encoding="utf-8")
    return shlex.join([sys.executable, str(script)]) + " {prompt_file} {mcp_config}"


def run_once(paths: ProjectPaths, agent: str) -> subprocess.CompletedProcess[str]:
    """`ralph-desk run` for one session, as a person runs it."""
    return subprocess.run(
        [sys.executable, "-m", "ralph_desk", "run", "--root", str(paths.root), "--agent", "command",
         "--agent-command", agent, "--max-iterations", "1", "--exit-when-idle"],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
    )  # fmt: skip


RUN_LINKS: dict[str, Callable[[ProjectPaths], Path]] = {
    "prompt copy": lambda paths: paths.mcp_dir / "prompt.md",
    "session folder (credentials)": lambda paths: paths.sessions_dir,
    "context.json": lambda paths: paths.context_file,
}


@pytest.mark.slow
@pytest.mark.parametrize("what", list(RUN_LINKS))
def test_run_never_writes_through_a_link(
    seeded: tuple[ProjectPaths, Seeded], home: Path, ended_agent: str, what: str
) -> None:
    paths, _ = seeded
    where = RUN_LINKS[what](paths)
    link = plant(where, home if what.startswith("session folder") else outside_file(home, "target"))
    before = untouched(home)
    done = run_once(paths, ended_agent)
    assert untouched(home) == before, f"run wrote outside the project through {what}: {done.stderr[-2000:]}"
    logs = "".join(path.read_text(errors="replace") for path in paths.logs_dir.glob("*"))
    assert str(link) in done.stderr + done.stdout + logs, (done.stdout[-1000:], done.stderr[-2000:])


@pytest.mark.slow
def test_the_understand_run_never_writes_its_map_through_a_link(
    seeded: tuple[ProjectPaths, Seeded], home: Path, tmp_path: Path
) -> None:
    paths, _ = seeded
    link = plant(paths.codebase_map, outside_file(home, "map-target"))
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "# Map\nHOSTILE MAP",
              "num_turns": 1, "total_cost_usd": 0, "session_id": "u"}  # fmt: skip
    script = tmp_path / "mapper.py"
    script.write_text(f"print({json.dumps(json.dumps(result))})\n", encoding="utf-8")
    agent = shlex.join([sys.executable, str(script)]) + " {prompt_file}"
    done = subprocess.run(
        [sys.executable, "-m", "ralph_desk", "session", "--root", str(paths.root), "--recipe", "understand",
         "--agent", "command", "--agent-command", agent],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert (home / "map-target").read_text() == SECRET, done.stderr[-2000:]
    logs = "".join(path.read_text(errors="replace") for path in paths.logs_dir.glob("*"))
    assert str(link) in logs, (done.stdout[-1000:], done.stderr[-2000:])


# --- validate and init --force -----------------------------------------------------------------------

PLANTED: dict[str, Callable[[ProjectPaths], Path]] = {
    "progress.txt": lambda paths: paths.progress_file,
    "learnings.txt": lambda paths: paths.learnings_file,
    "config.json": lambda paths: paths.config_file,
    "codebase_map.md": lambda paths: paths.codebase_map,
    "mcp/context.json": lambda paths: paths.context_file,
    "logs/": lambda paths: paths.logs_dir,
    "db/ralph.db-wal": lambda paths: paths.db_dir / "ralph.db-wal",
    ".gitignore": lambda paths: paths.ralph / ".gitignore",
    "worktrees/3-task/": lambda paths: paths.worktrees_dir / "3-task",
}


@pytest.fixture
def hostile(
    seeded: tuple[ProjectPaths, Seeded], home: Path
) -> Iterator[tuple[ProjectPaths, dict[str, Path]]]:
    """The seeded project with every file of `PLANTED` replaced by a link into the home folder."""
    paths, _ = seeded
    links = {
        name: plant(where(paths), home if name.endswith("/") else outside_file(home, name.replace("/", "_")))
        for name, where in PLANTED.items()
    }
    yield paths, links


def test_validate_names_every_link_as_a_problem(
    hostile: tuple[ProjectPaths, dict[str, Path]], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, links = hostile
    before = untouched(home)
    problems = validate_project(paths.root)
    named = {Path(str(problem.path)) for problem in problems if "symbolic link" in problem.message}
    assert named == set(links.values()), problems
    assert cli.main(["validate", str(paths.root)]) == 2
    shown = capsys.readouterr()
    assert all(str(link) in shown.out + shown.err for link in links.values())
    assert untouched(home) == before


@pytest.mark.sqlite_only
def test_opening_the_database_refuses_a_linked_wal_file(
    hostile: tuple[ProjectPaths, dict[str, Path]],
) -> None:
    paths, links = hostile
    with pytest.raises(contained.LinkRefusedError, match=str(links["db/ralph.db-wal"])):
        Services.open(paths)


def test_init_force_replaces_every_link_with_a_plain_file(
    hostile: tuple[ProjectPaths, dict[str, Path]], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, links = hostile
    before = untouched(home)
    assert cli.main(["init", str(paths.root), "--force"]) == 0
    assert untouched(home) == before, "init --force wrote through a link"
    assert not any(link.is_symlink() for link in links.values())
    for plain in (paths.progress_file, paths.learnings_file, paths.config_file, paths.ralph / ".gitignore"):
        assert plain.is_file() and not plain.is_symlink()
        assert SECRET not in plain.read_text()
    assert paths.logs_dir.is_dir() and not paths.logs_dir.is_symlink()
    assert validate_project(paths.root) == []
    capsys.readouterr()


def test_a_linked_ralph_folder_is_refused_and_replaced_by_init_force(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "clone"
    root.mkdir()
    elsewhere = home / "dot-ralph"
    elsewhere.mkdir()
    (elsewhere / "progress.txt").write_text(SECRET, encoding="utf-8")
    paths = ProjectPaths.at(root)
    plant(paths.ralph, elsewhere)
    problems = validate_project(root)
    assert [str(problem.path) for problem in problems] == [str(paths.ralph)]
    with pytest.raises(contained.LinkRefusedError, match=str(paths.ralph)):
        contained.append_bytes(paths.root, paths.progress_file, b"x")
    assert cli.main(["init", str(root), "--force"]) == 0
    assert paths.ralph.is_dir() and not paths.ralph.is_symlink()
    assert (elsewhere / "progress.txt").read_text() == SECRET and len(list(elsewhere.iterdir())) == 1


# --- the helper itself: a folder swapped for a link between the check and the open --------------------


def test_a_folder_swapped_for_a_link_mid_path_is_refused(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "proj"
    (root / "a" / "b").mkdir(parents=True)
    target = outside_file(home, "swapped")
    (home / "b").mkdir()
    (home / "b" / "file").write_text(SECRET)
    plant(root / "a", home)  # root/a/b/file now reaches home/b/file
    for action in (
        lambda: contained.read_text(root, root / "a" / "b" / "file"),
        lambda: contained.append_bytes(root, root / "a" / "b" / "file", b"x"),
        lambda: contained.write_text(root, root / "a" / "b" / "file", "x"),
        lambda: contained.make_folder(root, root / "a" / "b" / "c"),
        lambda: contained.open_text(root, root / "a" / "b" / "new", "x"),
    ):
        with pytest.raises(contained.LinkRefusedError, match=str(root / "a")):
            action()
    assert (home / "b" / "file").read_text() == SECRET and target.read_text() == SECRET
    assert sorted(path.name for path in (home / "b").iterdir()) == ["file"]


# --- worktrees: git makes them and the sweep removes them, never where a link points ------------------

GIT = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]


def test_worktrees_are_never_made_or_removed_through_a_link(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "README.md").write_text("# repo\n")
    paths = init_project(root, title="Worktrees")
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "start"], cwd=root, check=True)
    precious = home / "1-precious"
    precious.mkdir()
    (precious / "keep.txt").write_text(SECRET)
    before = untouched(home)
    plant(paths.worktrees_dir, home)
    services = Services.open(paths)
    workspaces = services.workspaces
    with pytest.raises(contained.LinkRefusedError, match=str(paths.worktrees_dir)):
        workspaces.prepare(1, "Write the parser")
    assert workspaces.sweep(set) == []  # a linked worktrees folder is refused, never followed
    assert untouched(home) == before
    # A link inside worktrees/ is removed itself by the sweep; the folder it points to stays.
    paths.worktrees_dir.unlink()
    paths.worktrees_dir.mkdir()
    link = plant(paths.worktrees_dir / "2-link", precious)
    assert workspaces.sweep(set) == [f"removed the stale worktree folder {link}"]
    assert not link.is_symlink() and untouched(home) == before
    services.close()


def test_a_recorded_transcript_path_is_opened_only_inside_logs(
    seeded: tuple[ProjectPaths, Seeded], home: Path
) -> None:
    # The database travels with a clone too: its transcript paths may name any file.
    paths, _ = seeded
    secret = outside_file(home, "id_ed25519")
    link = plant(paths.logs_dir / "20261126-120000_s.log", secret)
    for recorded in (str(secret), "../../home/id_ed25519", str(link)):
        with pytest.raises(contained.LinkRefusedError):
            paths.transcript(recorded)
    plain = paths.logs_dir / "20261126-120001_s.log"
    plain.write_text("{}\n")
    assert paths.transcript(str(plain)) == plain
    assert paths.transcript(plain.relative_to(paths.root).as_posix()) == plain


# --- paths an agent or a config names ------------------------------------------------------------------


def test_paths_an_agent_or_a_config_names_never_lead_outside_through_a_link(
    seeded: tuple[ProjectPaths, Seeded], home: Path
) -> None:
    paths, ids = seeded
    outside_file(home, "notes.md")
    plant(paths.root / "docs", home)  # a folder of the project that is a link to the home folder
    (paths.root / "src").mkdir()
    (paths.root / "src" / "inside.md").write_text("inside\n", encoding="utf-8")
    before = untouched(home)
    with live_clients() as clients:
        for recipe in ("yap", "ramble"):
            command = mcp_command(paths, "--recipe", recipe)
            clients.open(
                recipe, StdioServerParameters(command=sys.executable, args=command[1:], env=dict(os.environ))
            )
        named = {"feature": "core", "discipline": "backend", "title": "Read the notes"}
        for recipe, tool, arguments, field in (
            (
                "yap",
                "create_task",
                {**named, "context_files": ["src/inside.md", "docs/notes.md"]},
                "context_files[1]",
            ),
            (
                "yap",
                "update_task",
                {"id": ids.parser, "output_artifacts": ["docs/out.md"]},
                "output_artifacts[0]",
            ),
            (
                "ramble",
                "add_feature_context_file",
                {"feature_name": "core", "file_path": "docs/notes.md"},
                "file_path",
            ),
        ):
            message = refusal_text(clients.call(recipe, tool, arguments))
            assert field in message and "no symlink out" in message, (tool, message)
        assert not clients.call("yap", "get_project_info", {}).is_error
    # A path stored by another tool (a clone's database) reaches a prompt only as "do not read".
    raw = sqlite3.connect(paths.db_file)
    try:
        raw.execute("UPDATE tasks SET context_files = ? WHERE id = ?", ('["docs/notes.md"]', ids.parser))
        raw.commit()
    finally:
        raw.close()
    services = Services.open(paths)
    try:
        shown = preview_next_session(services, LoopSettings(agent="command"), paths.root)
    finally:
        services.close()
    assert shown is not None and shown.task_id == ids.parser
    assert "`docs/notes.md` (leads outside the project through a link: do not read it)" in shown.prompt
    assert SECRET.strip() not in shown.prompt
    # allowed_paths (where agents may edit) take globs inside the project only.
    config = json.loads(paths.config_file.read_text(encoding="utf-8"))
    for escape in ("../home/**", "/etc/**", "~/notes/*"):
        paths.config_file.write_text(json.dumps({**config, "allowed_paths": [escape]}), encoding="utf-8")
        problems = [str(problem) for problem in validate_project(paths.root)]
        assert any("allowed_paths" in problem and "inside the project" in problem for problem in problems), (
            escape,
            problems,
        )
    assert untouched(home) == before
