"""The `ralph-desk` command line: every subcommand a person may script without the window.

One module per command group (`project`, `reports`, `inbox`, `prd_files`, `features`, `disciplines`, `serve`,
`run`, `database`, `review`, `checks`, `companion`), each ending in the `Command`s it defines;
`parser.COMMANDS` lists them.
To add a subcommand, write a `_configure_x(parser)` and a `_run_x(args)` in its group's module, define
its `Command` there and add it to `COMMANDS`. Import heavy modules (the MCP SDK, the loop, Qt) inside
the configure and run functions: a command's configure function runs only when that command is
chosen, so that `--version` and quick commands such as `status` stay quick. A folder as the first
argument means `open` that folder.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ralph_desk.cli.command import log
from ralph_desk.cli.database import masked, read_db_url
from ralph_desk.cli.errors import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CommandFailed,
    UsageError,
    exit_code_of,
    fail,
    message_of,
    refuse_unstorable,
)
from ralph_desk.cli.parser import COMMANDS, build_parser, with_folder_as_open
from ralph_desk.cli.project import demo_home, launch, run_default

__all__ = [
    "COMMANDS",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROG",
    "CommandFailed",
    "UsageError",
    "build_parser",
    "demo_home",
    "exit_code_of",
    "launch",
    "main",
    "with_folder_as_open",
]

DEBUG_ENV = "RALPH_DEBUG"
REHEARSE = "rehearse"  # the rehearsal agent's hidden command (loop/agents/rehearsal.py starts it)
DEMO_CHECK = "demo-check"  # the demo's check, hidden too (demo.py names it in the demo's config)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; returns the exit code (0 ok, 1 failure, 2 usage or validation error)."""
    logging.basicConfig(level=logging.DEBUG if os.environ.get(DEBUG_ENV) else logging.WARNING)
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == [REHEARSE]:  # hidden: the rehearsal agent's process, started by the loop
        from ralph_desk.loop.rehearse import main as rehearse

        return rehearse(arguments[1:])
    if arguments[:1] == [DEMO_CHECK]:
        from ralph_desk.loop.rehearse import check_labels

        return check_labels(Path.cwd())
    try:
        refuse_unstorable(arguments)
        args = build_parser().parse_args(with_folder_as_open(arguments))
        read_db_url(args)
        arguments.append(getattr(args, "db_url", None) or "")  # a URL from a file: masked like the others
        if args.command is None:
            return run_default()
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:  # the reader (`| head`) took what it wanted and closed the pipe
        _discard_stdout()
        return EXIT_OK
    except Exception as error:  # the top of every command: one line ($RALPH_DEBUG logs the traceback)
        log.debug("command failed", exc_info=True)
        return fail(masked(message_of(error), arguments), exit_code_of(error))


def _discard_stdout() -> None:
    """Point stdout at the null device: the interpreter's last flush would hit the closed pipe again."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, sys.stdout.fileno())
    finally:
        os.close(null)
