"""The `checks` command: list the project's checks, or run them (in a task's worktree, or the project)."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TYPE_CHECKING, Any

from ralph_desk.cli.command import Command, Parser, project_services
from ralph_desk.cli.errors import EXIT_FAILURE, EXIT_OK, PROG, UsageError
from ralph_desk.cli.output import print_json, table
from ralph_desk.project import ProjectPaths, read_config

if TYPE_CHECKING:  # importing the services at start-up would slow down `--help`
    from ralph_desk.services.container import Services


def _configure_checks(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)
    # The project options again, after the action, without overriding those given before it.
    common = Parser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS, metavar="DIR", help="the project folder")
    common.add_argument("--db-url", default=argparse.SUPPRESS, metavar="URL", help="database URL")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    actions.add_parser(
        "list", help="list the checks, the setup command and the worktree files", parents=[common]
    )
    run = actions.add_parser(
        "run", help="run the checks (exit 1 when a required one fails); output on stderr", parents=[common]
    )
    run.add_argument("--task", metavar="ID", type=int, help="in this task's worktree, kept as its evidence")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _run_checks(args: argparse.Namespace) -> int:
    with project_services(args) as services:
        if args.action == "list":
            return _list(args, services)
        return _run(args, services)


def _list(args: argparse.Namespace, services: Services) -> int:
    settings = check_settings(services.paths)
    if args.json:
        print_json(settings)
    else:
        print("\n".join(check_settings_lines(settings)))
    return EXIT_OK


def check_settings(paths: ProjectPaths) -> dict[str, Any]:
    """The checks, setup command and worktree files config.json names, and whether the person trusts them."""
    from ralph_desk.project.untrusted import config_commands, untrusted_commands

    config = read_config(paths)
    return {
        "checks": config.checks,
        "setup": config.setup,
        "worktree_files": config.worktree_files,
        "trusted": untrusted_commands(paths, config, config_commands(config)) is None,
    }


def check_settings_lines(settings: dict[str, Any]) -> list[str]:
    """`check_settings` as text."""
    rows = [
        (check.name, "required" if check.required else "advisory", f"{check.timeout_s} s", check.run)
        for check in settings["checks"]
    ]
    lines = [f"Checks ({len(rows)})  — {PROG} checks run [--task ID]", *(table(rows) or ["  (none)"])]
    lines.append(f"Setup: {settings['setup'] or '(none)'}")
    lines.append(f"Worktree files: {', '.join(settings['worktree_files']) or '(none)'}")
    if not settings["trusted"]:
        lines.append(f"Not trusted yet: they came with the project folder; allow them with `{PROG} trust`")
    return lines


def _run(args: argparse.Namespace, services: Services) -> int:
    from ralph_desk.domain.checks import CheckPurpose, required_failures

    checks = services.checks.configured()  # refuses checks the person has not trusted
    if not checks:
        raise UsageError(
            f'{services.paths.config_file} names no checks; add them under "checks" '
            '([{"name": "tests", "run": "pytest -q"}]), see the README'
        )
    if args.task is not None:
        services.tasks.get(args.task)  # an unknown task is named before anything runs
        folder, commit = services.workspaces.checked_folder(args.task)
        purpose = CheckPurpose.RERUN
    else:
        folder, commit, purpose = services.paths.root, None, CheckPurpose.PROJECT
    runs = services.checks.run(
        checks, folder, purpose=purpose, task_id=args.task, commit=commit, on_output=_Echo()
    )
    if args.json:
        print_json(runs)
    else:
        rows = [
            (
                run.name,
                run.status.value,
                f"exit {run.exit_code}",
                f"{run.duration_s or 0:.1f} s",
                run.log_path,
            )
            for run in runs
        ]
        print("\n".join([f"Checks in {folder}", *table(rows)]))
    failed = required_failures(runs)
    if failed:
        sys.stderr.write(f"{PROG}: required checks failed: {', '.join(run.name for run in failed)}\n")
    return EXIT_FAILURE if failed else EXIT_OK


class _Echo:
    """Each check's output on stderr as it arrives, under a line naming the check."""

    def __init__(self) -> None:
        self.current: str | None = None
        self.lock = threading.Lock()

    def __call__(self, name: str, text: str) -> None:
        with self.lock:
            if name != self.current:
                self.current = name
                sys.stderr.write(f"── {name}\n")
            sys.stderr.write(text)
            sys.stderr.flush()


CHECKS = Command("checks", "list or run the project's checks (tests, lint)", _configure_checks, _run_checks)
