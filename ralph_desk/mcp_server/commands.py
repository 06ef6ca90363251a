"""The `mcp` and `connect` subcommands of the CLI (refusals raise ProjectError: exit code 2)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ralph_desk.mcp_server import clients, collection
from ralph_desk.project import DB_URL_ENV, ProjectError, ProjectPaths, contained

if TYPE_CHECKING:
    from ralph_desk.mcp_server.binding import LoopControl
    from ralph_desk.services.opening import ServicesOnFirstUse


def configure_mcp(parser: argparse.ArgumentParser) -> None:
    """Arguments of `mcp` (besides the common --root and --db-url)."""
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=0, help="HTTP port (default: any free port)")
    parser.add_argument(
        "--token-file",
        default=None,
        help=f"read the HTTP bearer token from this owner-only file (or set ${clients.TOKEN_ENV}; "
        "default: a random one, printed on stderr)",
    )
    parser.add_argument("--token", default=None, help=argparse.SUPPRESS)  # on the command line, others see it
    parser.add_argument(
        "--recipe", default=None, help="tool recipe (default: ide, or task_execution with a task)"
    )
    parser.add_argument("--discipline", default=None)
    parser.add_argument("--task-id", type=int, default=None)
    parser.add_argument("--session-id", default=None)
    parser.add_argument(
        "--context", default=None, help="a session context file (seed 000's context.json shape)"
    )
    add_log_dir(parser)


def add_log_dir(parser: argparse.ArgumentParser) -> None:
    """`--log-dir`: where the human-readable log and, beside it, the tool-call JSON lines go."""
    parser.add_argument(
        "--log-dir",
        default=None,
        metavar="DIR",
        help="the log and one JSON line per tool call beside it (default: .ralph/logs)",
    )


def configure_connect(parser: argparse.ArgumentParser) -> None:
    """Arguments of `connect`."""
    parser.add_argument("--client", choices=clients.CLIENTS, required=True)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--port", type=int, default=clients.DEFAULT_HTTP_PORT)
    parser.add_argument(
        "--token-file",
        default=None,
        help=f"the bearer token, from an owner-only file (or ${clients.TOKEN_ENV}; default: the project's "
        f"kept token, else a new one)",
    )
    parser.add_argument("--token", default=None, help=argparse.SUPPRESS)  # on the command line, others see it


def given_token(args: argparse.Namespace) -> str | None:
    """The token a command was given: `--token-file`, `$RALPH_DESK_TOKEN`, or (not advertised) `--token`."""
    if args.token_file:
        return clients.read_token_file(Path(args.token_file))
    return os.environ.get(clients.TOKEN_ENV) or args.token


def _paths(root: str) -> ProjectPaths:
    paths = ProjectPaths.at(root)
    if not paths.ralph.is_dir():
        raise ProjectError(f"{paths.root} has no .ralph/ folder; run `ralph-desk init {paths.root}` first")
    return paths


def run_mcp(
    args: argparse.Namespace, make_loop: Callable[[ServicesOnFirstUse], LoopControl] | None = None
) -> int:
    """Serve until the client goes away (stdio) or a signal arrives (HTTP).

    A folder with no `.ralph/` is served too (the `ide` recipe's init and validate), so that an IDE
    can make it a project with ralph_init.
    """
    with collection.paused_while_starting():  # resumed when serving starts
        return _serve(args, make_loop)


def _serve(args: argparse.Namespace, make_loop: Callable[[ServicesOnFirstUse], LoopControl] | None) -> int:
    # The SDK takes most of a second to import; only this command pays for it.
    from ralph_desk.domain.session import ContextError
    from ralph_desk.mcp_server.calllog import beside
    from ralph_desk.mcp_server.config import (
        ContextFlags,
        complete_context,
        db_url_from_env,
        needs_database,
        resolve_context,
    )
    from ralph_desk.mcp_server.standalone import serve_http, serve_stdio, setup_logging
    from ralph_desk.project.logs import log_to_stderr
    from ralph_desk.services.opening import ServicesOnFirstUse

    paths = ProjectPaths.at(args.root)
    flags = ContextFlags(args.recipe, args.discipline, args.task_id, args.session_id, args.context)
    try:
        context = resolve_context(flags)
    except ContextError as error:
        raise ProjectError(f"refusing to start: {error}") from None
    initialised = paths.ralph.is_dir()
    if not initialised and needs_database(context):
        _paths(args.root)  # a task's or a discipline's session needs a project: refused, saying how
    if not paths.root.is_dir():
        raise ProjectError(f"{paths.root} is not a folder; --root names the project's folder")
    log_dir = Path(args.log_dir) if args.log_dir else None
    call_log: Path | None = None
    if initialised or log_dir is not None:
        call_log = beside(setup_logging(paths, "mcp", log_dir=log_dir))
    else:
        log_to_stderr()  # no .ralph/logs/ before ralph_init: that would make the folder look initialised
    services = ServicesOnFirstUse(paths, args.db_url or db_url_from_env(os.environ))
    try:
        # A session whose tools depend on the database (its task's discipline, a discipline's
        # disabled tools) is checked before anything is served, so that an unknown task or
        # discipline is refused before the protocol starts; an HTTP server opens it before listening.
        if (args.transport == "http" and initialised) or needs_database(context):
            try:
                context = complete_context(context, services())
            except ContextError as error:
                raise ProjectError(f"refusing to start: {error}") from None
        loop = make_loop(services) if make_loop is not None else None
        if args.transport == "http":
            serve_http(services, context, args.host, args.port, given_token(args), loop, call_log, log_dir)
        elif (failure := serve_stdio(services, context, loop, call_log, log_dir)) is not None:
            raise failure  # after the client has gone: the exit code and message of an eager start
    finally:
        services.close()
    return 0


def run_connect(args: argparse.Namespace) -> int:
    """Write `.ralph/mcp/clients/<file>` (owner-only: it may hold a token) and print it."""
    paths = _paths(args.root)
    db_url = paths.db_url(args.db_url)
    url_file = Path(args.db_url_file).resolve() if args.db_url_file else None
    launch = (
        clients.http_launch(args.port, clients.project_token(paths, given_token(args)))
        if args.transport == "http"
        else clients.stdio_launch(paths.root, db_url, url_file)
    )
    config = clients.render(args.client, launch)
    target = paths.clients_dir / config.file_name
    contained.write_private_text(paths.root, target, config.text)
    sys.stdout.write(config.text)
    print(f"# written to {target}; use it as {config.where}", file=sys.stderr)
    if launch.is_http:
        server = shlex.join(["ralph-desk", *clients.mcp_command(paths.root, db_url, url_file)])
        if url_file is None and clients.secret_db_url(paths.root, db_url):
            server = f"{DB_URL_ENV}=<the database URL> {server}"
        print(
            f"# start the server with: {server} --transport http --port {args.port} "
            f"--token-file {shlex.quote(str(clients.token_file(paths)))}",
            file=sys.stderr,
        )
    return 0
