"""The table of subcommands and the parser that reads a command line into one of them."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ralph_desk import __version__
from ralph_desk.cli import (
    checks,
    companion,
    database,
    disciplines,
    features,
    inbox,
    prd_files,
    project,
    reports,
    review,
    run,
    serve,
)
from ralph_desk.cli.command import Command, Parser
from ralph_desk.cli.errors import PROG, UsageError
from ralph_desk.project import DB_URL_ENV

COMMANDS: list[Command] = [
    project.INIT,
    project.VALIDATE,
    reports.STATUS,
    project.DEMO,
    project.OPEN,
    reports.INBOX,
    inbox.ANSWER,
    inbox.APPROVE,
    inbox.REJECT,
    inbox.TRIAGE,
    inbox.DELETE,
    prd_files.IMPORT_PRD,
    prd_files.EXPORT_PRD,
    features.FEATURE,
    disciplines.DISCIPLINE,
    serve.MCP,
    serve.CONNECT,
    run.RUN,
    run.TRUST,
    run.SESSION,
    database.MIGRATE,
    review.REVIEW,
    checks.CHECKS,
    companion.COMPANION,
]
"""Every subcommand, in the order `--help` lists them."""


class CommandParser(Parser):
    """A subcommand's parser that adds its own arguments when first used, so their modules load late."""

    pending: Callable[[argparse.ArgumentParser], None] | None = None

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """Add the command's arguments the first time, then parse."""
        configure, self.pending = self.pending, None
        if configure is not None:
            configure(self)
        return super().parse_known_args(*args, **kwargs)


def _common_options() -> CommandParser:
    common = CommandParser(add_help=False)
    common.add_argument("--root", default=".", metavar="DIR", help="the project folder (default: current)")
    common.add_argument(
        "--db-url",
        default=None,
        metavar="URL",
        help=f"database URL instead of .ralph/db/ralph.db (default: ${DB_URL_ENV}); give a password "
        f"through --db-url-file, ${DB_URL_ENV} or libpq's PGPASSWORD / ~/.pgpass, never here: every "
        "local user can read a command line",
    )
    common.add_argument(
        "--db-url-file",
        default=None,
        metavar="FILE",
        help="read the database URL from this file, which only its owner may read (chmod 600)",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command of `COMMANDS` (each configured when it is chosen)."""
    parser = Parser(
        prog=PROG,
        usage=f"{PROG} [-h] [--version] [DIR | COMMAND ...]",
        description="Run a Ralph loop of coding agents and review what they signal. "
        "With a folder, opens the window on that project; without arguments, on the demo project.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    common = _common_options()
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", prog=PROG, parser_class=CommandParser)
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help, parents=[common])
        sub.pending = command.configure
        sub.set_defaults(run=command.run)
    return parser


def with_folder_as_open(argv: Sequence[str]) -> list[str]:
    """`ralph-desk DIR …` as `ralph-desk open DIR …`; commands and options pass unchanged."""
    arguments = list(argv)
    if not arguments or arguments[0].startswith("-") or arguments[0] in {c.name for c in COMMANDS}:
        return arguments
    # Only an existing folder: a mistyped command stays an "invalid choice", never a new project.
    if Path(arguments[0]).is_dir():
        return ["open", *arguments]
    if _looks_like_a_path(arguments[0]):
        raise UsageError(
            f"the folder {arguments[0]} does not exist; `{PROG} DIR` opens an existing folder "
            f"(`{PROG} init DIR` makes a new project)"
        )
    return arguments


def _looks_like_a_path(argument: str) -> bool:
    """A path, not a mistyped command: it has a separator, or starts with `.` or `~`."""
    return any(mark in argument for mark in ("/", "\\", os.sep)) or argument.startswith((".", "~"))
