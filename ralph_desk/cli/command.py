"""What every subcommand is: its table entry, its parser, and the project it opens."""

from __future__ import annotations

import argparse
import dataclasses
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ralph_desk.cli.errors import PROG, CommandFailed, UsageError
from ralph_desk.project import ProjectPaths, validate_project

if TYPE_CHECKING:  # importing the services at start-up would slow down `--help`
    from ralph_desk.services.container import Services

log = logging.getLogger("ralph_desk.cli")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors become one `ralph-desk: error: …` line, not usage text."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


@dataclasses.dataclass(frozen=True)
class Command:
    """One subcommand: its name, one-line help, how it reads its arguments and what it does."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def project_root(args: argparse.Namespace) -> Path:
    """The project folder `--root` names."""
    return Path(args.root)


@contextmanager
def project_services(args: argparse.Namespace) -> Iterator[Services]:
    """The services of the project at `--root`, closed afterwards; a broken project is a clean error."""
    from ralph_desk.services.container import Services
    from ralph_desk.store.errors import in_words
    from ralph_desk.store.migrate import SchemaTooNewError

    paths = ProjectPaths.at(project_root(args))
    if not paths.ralph.is_dir():
        raise UsageError(
            f"no ralph-desk project at {paths.root} (no .ralph/ folder); "
            f"run `{PROG} init {paths.root}` or pass --root"
        )
    try:
        services = Services.open(paths, args.db_url)
    except SchemaTooNewError as error:
        raise CommandFailed(str(error)) from None
    except Exception as error:  # a damaged project: say what validate finds rather than a traceback
        log.debug("opening %s failed", paths.root, exc_info=True)
        problems = validate_project(paths.root, args.db_url)
        detail = str(problems[0]) if problems else in_words(error)
        raise UsageError(f"cannot open the project at {paths.root}: {detail}") from None
    try:
        yield services
    finally:
        services.close()
