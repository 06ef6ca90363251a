"""Commands about a project folder: `init`, `validate`, `demo`, `open`, and the window with no command."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ralph_desk.cli.checks import check_settings, check_settings_lines
from ralph_desk.cli.command import Command, project_root
from ralph_desk.cli.errors import EXIT_OK, PROG, UsageError
from ralph_desk.cli.output import print_json
from ralph_desk.project import (
    DB_URL_ENV,
    ProjectError,
    ProjectPaths,
    init_project,
    read_config,
    validate_project,
)
from ralph_desk.project.checks import base_branch_problems
from ralph_desk.project.confinement import sandbox_state


def _configure_init(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the project folder (created if missing)")
    parser.add_argument("--title", help="the project title (default: the folder name)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="re-create the configuration of an existing .ralph/, keeping the database, "
        "progress.txt and learnings.txt",
    )


def _run_init(args: argparse.Namespace) -> int:
    before = ProjectPaths.at(args.dir)
    existed = before.ralph.is_dir()
    # What was there to keep: a shared database (--db-url, $RALPH_DB_URL) is always kept.
    shared = bool(args.db_url or os.environ.get(DB_URL_ENV))
    kept = [
        name
        for name, there in (
            ("the database", shared or before.db_file.is_file()),
            ("progress.txt", before.progress_file.is_file()),
            ("learnings.txt", before.learnings_file.is_file()),
            ("logs", before.logs_dir.is_dir()),
        )
        if there
    ]
    paths = init_project(args.dir, title=args.title, force=args.force, db_url=args.db_url)
    if existed:
        print(f"Re-created the configuration of {paths.ralph}")
        if kept:
            print(f"Kept {', '.join(kept[:-1])}{' and ' if len(kept) > 1 else ''}{kept[-1]}.")
        if "the database" not in kept:
            print(f"There was no database: made a new, empty one at {paths.db_file}.")
    else:
        print(f"Created {paths.ralph}")
    for problem in base_branch_problems(paths):  # the project opens, but no task can start yet
        sys.stderr.write(f"{PROG}: warning: {problem.message}\n")
    return EXIT_OK


def _configure_validate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", nargs="?", help="the project folder (default: --root)")
    parser.add_argument("--json", action="store_true", help="print the problems as JSON")


def _run_validate(args: argparse.Namespace) -> int:
    root = Path(args.dir) if args.dir is not None else project_root(args)
    problems = validate_project(root, args.db_url)
    settings = _check_settings(ProjectPaths.at(root))
    sandbox = _sandbox_line(ProjectPaths.at(root))
    if args.json:
        print_json(
            {
                "ok": not problems,
                "problems": [{"path": p.path, "message": p.message} for p in problems],
                "checks": settings,
                "sandbox": sandbox,
            }
        )
    else:
        if not problems:
            print(f"OK: {ProjectPaths.at(root).ralph} is a sound ralph-desk project")
        for problem in problems:
            print(f"{problem.path}: {problem.message}")
        if settings is not None:
            print("\n".join(check_settings_lines(settings)))
        if sandbox is not None:
            print(f"Sandbox: {sandbox}")
    if problems:
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        raise UsageError(f"{count} in {ProjectPaths.at(root).ralph}")
    return EXIT_OK


def _sandbox_line(paths: ProjectPaths) -> str | None:
    """Whether the project's sessions run confined on this computer (None when its config is unreadable)."""
    try:
        return sandbox_state(read_config(paths)).line()
    except ProjectError:
        return None


def _check_settings(paths: ProjectPaths) -> dict[str, Any] | None:
    """The check settings validate reports; None when config.json cannot be read (a problem listed)."""
    try:
        return check_settings(paths)
    except ProjectError:
        return None


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the folder to create the demo project in")


def _run_demo(args: argparse.Namespace) -> int:
    from ralph_desk.demo import create_demo

    paths = create_demo(args.dir, db_url=args.db_url)
    print(f"Created the demo project in {paths.root}")
    print(f"  {PROG} status --root {paths.root}")
    return EXIT_OK


def _configure_open(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", nargs="?", help="the project folder (default: --root)")


def _run_open(args: argparse.Namespace) -> int:
    folder = Path(args.dir if args.dir is not None else project_root(args))
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"the folder {folder} {what}; `{PROG} init {folder}` makes a new project there")
    return launch(folder, args.db_url)


def demo_home() -> Path:
    """Where the no-argument command keeps its demo project: the user's data folder."""
    import platformdirs

    return Path(platformdirs.user_data_dir("ralph-desk")) / "demo"


def run_default() -> int:
    """`ralph-desk` alone: the window on the demo project, created on first use."""
    from ralph_desk.demo import create_demo

    root = demo_home()
    if not ProjectPaths.at(root).ralph.is_dir():
        create_demo(root)
    return launch(root)


def _window_launcher() -> Callable[..., object] | None:
    """`ralph_desk.app.launch_window`, or None when this build has no window."""
    try:
        app = importlib.import_module("ralph_desk.app")
    except ImportError as error:
        if error.name != "ralph_desk.app":
            raise
        return None
    launch_window: Callable[..., object] | None = getattr(app, "launch_window", None)
    return launch_window


def launch(root: Path, db_url: str | None = None) -> int:
    """Open the window on the project at `root`, which offers to initialise a plain folder."""
    launch_window = _window_launcher()
    if launch_window is None:
        paths = ProjectPaths.at(root)
        if not paths.ralph.is_dir():
            raise UsageError(f"no ralph-desk project at {paths.root}; run `{PROG} init {paths.root}` first")
        print(f"the window is not available in this build; the project is at {root}")
        print(f"  {PROG} status --root {root}")
        return EXIT_OK
    result = launch_window(root, db_url=db_url)
    return result if isinstance(result, int) else EXIT_OK


INIT = Command("init", "create a project's .ralph/ folder", _configure_init, _run_init)
VALIDATE = Command("validate", "check a project's .ralph/ folder", _configure_validate, _run_validate)
DEMO = Command("demo", "create the demo project (Tidewater) in a folder", _configure_demo, _run_demo)
OPEN = Command("open", "open the window on a project", _configure_open, _run_open)
