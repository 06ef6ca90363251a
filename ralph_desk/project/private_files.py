"""Secrets read from files only their owner may read (a token, a database URL with its password)."""

from __future__ import annotations

import sys
from pathlib import Path

from ralph_desk.project.errors import ProjectError


def read_private_line(path: Path, what: str) -> str:
    """The one line of text in `path` (`what` names it: "the token"); refused when others may read it."""
    try:
        found = path.stat()
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise ProjectError(f"{path}: cannot read {what}: {error}") from None
    if found.st_mode & 0o077 and sys.platform != "win32":
        raise ProjectError(
            f"{path}: mode {found.st_mode & 0o777:04o} lets others read {what}; "
            f"allowed: a file only its owner may read (chmod 600 {path})"
        )
    if not text or "\n" in text:
        raise ProjectError(f"{path}: holds no single line; allowed: one line, {what}")
    return text
