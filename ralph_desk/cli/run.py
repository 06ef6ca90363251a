"""Commands that run agents: `run` (the loop, headless), `session` (one session) and `trust`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ralph_desk.cli.command import Command, project_root, project_services
from ralph_desk.cli.errors import EXIT_OK
from ralph_desk.project import ProjectPaths


def _configure_run(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.loop.headless import configure_run
    from ralph_desk.mcp_server.commands import add_log_dir

    configure_run(parser)
    add_log_dir(parser)


def _run_run(args: argparse.Namespace) -> int:
    from ralph_desk.cli.companion import served_beside
    from ralph_desk.loop.headless import run_loop_command
    from ralph_desk.mcp_server.calllog import beside, in_project
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.mcp_server.standalone import setup_logging

    # Only when asked: the log's INFO lines would otherwise join the run's own output on stderr.
    paths, log_dir = ProjectPaths.at(project_root(args)), Path(args.log_dir) if args.log_dir else None
    call_log = beside(setup_logging(paths, "run", log_dir=log_dir)) if log_dir else in_project(paths, "run")
    with project_services(args) as services:
        page = None if args.dry_run else served_beside(services, args.json)
        return run_loop_command(
            args,
            services,
            lambda services, control: EmbeddedMcp(services, loop=control, call_log=call_log),
            page,
        )


def _configure_trust(parser: argparse.ArgumentParser) -> None:
    """`trust` takes only --root."""


def _run_trust(args: argparse.Namespace) -> int:
    from ralph_desk.loop.trust_check import trust_config

    with project_services(args) as services:  # the disciplines' server commands live in the database
        print(trust_config(services.paths, services.disciplines.list()))
    return EXIT_OK


def _configure_session(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.loop.headless import configure_session

    configure_session(parser)


def _run_session(args: argparse.Namespace) -> int:
    from ralph_desk.loop.headless import run_session_command
    from ralph_desk.mcp_server.embedded import EmbeddedMcp

    with project_services(args) as services:
        return run_session_command(
            args, services, lambda services, control: EmbeddedMcp(services, loop=control)
        )


RUN = Command(
    "run", "run the Ralph loop headless until a limit, a stop or idleness", _configure_run, _run_run
)
TRUST = Command(
    "trust",
    "allow the agent program the project's config.json names (asked again when it changes)",
    _configure_trust,
    _run_trust,
)
SESSION = Command("session", "run one agent session with a recipe's tools", _configure_session, _run_session)
