"""Reading past text stored outside ralph-desk that is not UTF-8: an error for that item, never the list.

SQLite hands text back as it was written; sqlite3 refuses a whole query at the first value that is
not UTF-8. A list read runs as usual, and only when that happens runs again decoding such bytes as
lone surrogates (`surrogateescape`), keeping the rows that read and an `ItemError` for each other.
"""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy.exc import OperationalError

from ralph_desk.domain.listing import ItemError, Listing
from ralph_desk.domain.text import first_surrogate

log = logging.getLogger("ralph_desk.store")

R = TypeVar("R")
T = TypeVar("T")

_LENIENT = functools.partial(str, encoding="utf-8", errors="surrogateescape")


def undecodable_column(message: str) -> str | None:
    """The column named by SQLite's "Could not decode to UTF-8 column 'x'", else None."""
    found = re.match(r"Could not decode to UTF-8 column '([^']*)'", message)
    return found.group(1) if found else None


def undecodable_message(place: str) -> str:
    """What a person is told about a stored value that is not UTF-8 (`place`: its column)."""
    return (
        f"the stored {place} is not valid UTF-8 text (it was written outside ralph-desk); "
        "give it a new value with an SQLite tool, or restore the database from a backup"
    )


@contextmanager
def lenient_text(session: Any) -> Iterator[None]:
    """Within: text that is not UTF-8 reads as lone surrogates (U+DC80-U+DCFF) on the session's
    connection (SQLite's; other databases store only valid text)."""
    driver = session.connection().connection.driver_connection
    if not isinstance(driver, sqlite3.Connection):
        yield
        return
    driver.text_factory = _LENIENT
    try:
        yield
    finally:
        driver.text_factory = str


def listing(
    session: Any,
    fetch: Callable[[], Sequence[R]],
    make: Callable[[R], T],
    columns: Callable[[R], Mapping[str, Any]],
    key: Callable[[R], int | str],
    kind: str,
) -> Listing[T]:
    """`make` of each row `fetch` returns; a row holding text that is not UTF-8 is an error for its `key`.

    `session` is the unit's ORM session (its connection is the one `fetch` reads on); `columns` gives
    a row's values by column name, to find the one that does not read; `kind` names an item (`task`).
    """
    try:
        return Listing(make(row) for row in fetch())
    except OperationalError as error:
        if undecodable_column(str(error.orig)) is None:
            raise
    with lenient_text(session):
        rows = fetch()
    items: list[T] = []
    errors: list[ItemError] = []
    for row in rows:
        place = first_surrogate(dict(columns(row)))
        if place is None:
            items.append(make(row))
        else:
            errors.append(ItemError(kind, key(row), undecodable_message(place)))
    for unread in errors:
        log.info("a listed item could not be read and is left out: %s", unread)
    return Listing(items, errors)
