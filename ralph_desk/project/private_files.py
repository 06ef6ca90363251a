"""Secrets read from files only their owner may read (a token, a database URL with its password)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ralph_desk.project.errors import ProjectError

MOST_BYTES = 4096  # a URL or a token fits many times over; anything bigger is the wrong file
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def read_private_line(path: Path, what: str) -> str:
    """The one line of text in `path` (`what` names it: "the token"); refused when others may read it.

    A FIFO, a device or a file over `MOST_BYTES` is refused before anything is read from it."""
    try:
        _require_small_plain_file(path, path.stat(), what)  # a link to a plain file is fine
        descriptor = os.open(path, _FLAGS)  # O_NONBLOCK: a FIFO swapped in meanwhile cannot hold the open
        try:
            found = os.fstat(descriptor)
            _require_small_plain_file(path, found, what)
            _require_owner_only(path, found, what)
            data = os.read(descriptor, MOST_BYTES + 1)
        finally:
            os.close(descriptor)
        text = data.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise ProjectError(f"{path}: cannot read {what}: {error}") from None
    if len(data) > MOST_BYTES:
        raise _too_big(path, what)
    if not text or "\n" in text:
        raise ProjectError(f"{path}: holds no single line; allowed: one line, {what}")
    return text


def _require_small_plain_file(path: Path, found: os.stat_result, what: str) -> None:
    for is_kind, kind in _KINDS:
        if is_kind(found.st_mode):
            raise ProjectError(f"{path}: is {kind}, not a file; allowed: a plain file holding {what}")
    if found.st_size > MOST_BYTES:
        raise _too_big(path, what)


def _too_big(path: Path, what: str) -> ProjectError:
    return ProjectError(f"{path}: is over {MOST_BYTES} bytes; allowed: one line, {what}, in a smaller file")


def _require_owner_only(path: Path, found: os.stat_result, what: str) -> None:
    if found.st_mode & 0o077 and sys.platform != "win32":
        raise ProjectError(
            f"{path}: mode {found.st_mode & 0o777:04o} lets others read {what}; "
            f"allowed: a file only its owner may read (chmod 600 {path})"
        )
