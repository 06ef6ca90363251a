"""The command line's errors, exit codes and the one-line messages they become."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from ralph_desk.domain.listing import ItemError
from ralph_desk.domain.text import STORABLE_WORDING, unstorable
from ralph_desk.project import ProjectError

PROG = "ralph-desk"
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """The command line was wrong, or what it names does not fit; exit code 2."""


class CommandFailed(Exception):
    """The command was understood but could not be carried out; exit code 1."""


def fail(message: str, code: int) -> int:
    """Write `ralph-desk: error: MESSAGE` as one line on stderr; return `code`."""
    sys.stderr.write(f"{PROG}: error: {' '.join(message.split())}\n")
    return code


def left_out(errors: Iterable[ItemError]) -> int:
    """Say on stderr which items could not be read and were left out: exit 1 if any, else 0."""
    code = EXIT_OK
    for error in errors:
        code = fail(
            f"{error.kind} #{error.id} could not be read and is left out: {error.message}", EXIT_FAILURE
        )
    return code


def exit_code_of(error: BaseException) -> int:
    """The exit code of an error: 2 when the request or the project is wrong, 1 when doing it failed."""
    from ralph_desk.services.errors import ConflictError, ServiceError

    if isinstance(error, UsageError | ProjectError):
        return EXIT_USAGE
    if isinstance(error, ServiceError) and not isinstance(error, ConflictError):
        return EXIT_USAGE
    return EXIT_FAILURE


def message_of(error: Exception) -> str:
    """The error's own words when it is one we raise on purpose; its type too when it is unexpected."""
    from ralph_desk.services.errors import ServiceError
    from ralph_desk.store.errors import StoreError
    from ralph_desk.store.migrate import SchemaTooNewError

    known = (
        UsageError,
        ProjectError,
        ServiceError,
        CommandFailed,
        OSError,
        StoreError,
        SchemaTooNewError,
    )
    return str(error) if isinstance(error, known) else f"{type(error).__name__}: {error}"


def refuse_unstorable(argv: Sequence[str]) -> None:
    """Refuse an argument that holds text UTF-8 cannot store (bytes that are not UTF-8), naming it."""
    for index, argument in enumerate(argv):
        if (why := unstorable(argument)) is None:
            continue
        option = argument.split("=", 1)[0] if argument.startswith("--") and "=" in argument else None
        before = argv[index - 1] if index else ""
        if option is None and before.startswith("-") and "=" not in before:
            option = before
        place = f"the value of {option}" if option else f"argument {index + 1}"
        raise UsageError(f"{place} ({argument!a}) holds {why}; allowed: {STORABLE_WORDING}")
