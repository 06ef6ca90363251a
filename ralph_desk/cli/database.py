"""The database a command uses: `migrate`, URLs read from owner-only files, passwords kept out of sight."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ralph_desk.cli.command import Command, project_root
from ralph_desk.cli.errors import EXIT_OK, PROG, CommandFailed, UsageError
from ralph_desk.project import DB_URL_ENV, ProjectPaths


def _configure_migrate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from", dest="source", metavar="URL", help="the database to copy (default: the project's)"
    )
    parser.add_argument(
        "--to",
        dest="target",
        metavar="URL",
        help="the database to fill (its password from PGPASSWORD or ~/.pgpass, not in the URL)",
    )
    parser.add_argument(
        "--to-file",
        dest="target_file",
        metavar="FILE",
        help="read the URL of the database to fill from this owner-only file (chmod 600)",
    )
    parser.add_argument("--force", action="store_true", help="replace the rows a target already holds")


def _run_migrate(args: argparse.Namespace) -> int:
    from ralph_desk.store import transfer

    if (args.target is None) == (args.target_file is None):
        raise UsageError("give the database to fill once: --to URL or --to-file FILE")
    if args.target_file is not None:
        args.target = url_from_file(Path(args.target_file))
    source = args.source or ProjectPaths.at(project_root(args)).db_url(args.db_url)
    print(f"Copying {transfer.shown(source)}\n     to {transfer.shown(args.target)}", flush=True)
    try:
        report = transfer.copy_database(source, args.target, force=args.force)
    except transfer.TransferMismatchError as error:
        print("\n".join(transfer.report_lines(error.report)))
        raise CommandFailed(f"{error}; nothing was copied") from None
    except transfer.TransferRequestError as error:
        raise UsageError(str(error)) from None
    except transfer.TransferError as error:
        raise CommandFailed(str(error)) from None
    print("\n".join(transfer.report_lines(report)))
    print(f"All {len(report.tables)} tables match: {report.rows} rows copied, ids kept.")
    if report.sequences_reset:
        print(f"Id sequences moved past the copied ids: {', '.join(report.sequences_reset)}.")
    if holds_password(args.target):  # never suggest a password on a command line
        print(f"Use it with --db-url-file FILE (the URL, in a file only you may read) or set {DB_URL_ENV}.")
    else:
        print(f"Use it with --db-url {transfer.shown(args.target)} (or set {DB_URL_ENV}).")
    return EXIT_OK


def url_from_file(path: Path) -> str:
    """The database URL in an owner-only file; a line that is not one is refused, never shown."""
    from ralph_desk.project.private_files import read_private_line
    from ralph_desk.store.urls import URL_EXAMPLES, looks_like_url

    url = read_private_line(path, "the database URL")
    if not looks_like_url(url):
        raise UsageError(
            f"{path}: its line is not a database URL (not shown: it may be a secret); "
            f"allowed: one line such as {URL_EXAMPLES}"
        )
    return url


def read_db_url(args: argparse.Namespace) -> None:
    """Take `--db-url-file`'s URL as `--db-url`; warn about a password given on the command line."""
    given_file = getattr(args, "db_url_file", None)
    if given_file is not None and getattr(args, "db_url", None):
        raise UsageError("give the database URL once: --db-url or --db-url-file, not both")
    given = (("--db-url", "db_url"), ("--from", "source"), ("--to", "target"))
    for option, name in given:
        url = getattr(args, name, None)
        if url and holds_password(url):
            sys.stderr.write(
                f"{PROG}: warning: the password in {option} is visible to every local user "
                f"(/proc/PID/cmdline, `ps`); give it through --db-url-file, ${DB_URL_ENV}, or libpq's "
                "PGPASSWORD / ~/.pgpass instead\n"
            )
    if given_file is not None:
        args.db_url = url_from_file(Path(given_file))


def masked(message: str, arguments: Sequence[str]) -> str:
    """`message` without the password of any database URL the command line or $RALPH_DB_URL gave."""
    from ralph_desk.store.health import passwords_in

    for password in passwords_in(" ".join([*arguments, os.environ.get(DB_URL_ENV, "")])):
        # Where a URL holds it, not everywhere: a password such as "ralph" is also a word of the message.
        message = message.replace(f":{password}@", ":***@").replace(f"password={password}", "password=***")
    return message


def holds_password(url: str) -> bool:
    """Whether the URL carries a password."""
    from ralph_desk.store.health import redacted

    return redacted(url) != url


MIGRATE = Command(
    "migrate", "copy a project's database to another URL, checked", _configure_migrate, _run_migrate
)
