"""How commands print: records as JSON, rows as aligned columns, short text."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel


def jsonable(value: Any) -> Any:
    """Records, models, enums, dates and paths as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: jsonable(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(item) for item in value]
    return value


def print_json(value: Any, out: TextIO | None = None) -> None:
    """Write `value` as indented JSON (on stdout by default)."""
    stream = out or sys.stdout
    stream.write(json.dumps(jsonable(value), indent=2, ensure_ascii=False) + "\n")


def table(rows: Sequence[Sequence[object]], indent: str = "  ") -> list[str]:
    """Rows of cells as left-aligned columns (the last column is not padded)."""
    cells = [[str(cell) for cell in row] for row in rows]
    if not cells:
        return []
    widths = [max(len(row[index]) for row in cells if index < len(row)) for index in range(len(cells[0]))]
    lines = []
    for row in cells:
        padded = [cell.ljust(widths[index]) for index, cell in enumerate(row[:-1])] + row[-1:]
        lines.append((indent + "  ".join(padded)).rstrip())
    return lines


def shorten(text: str | None, limit: int = 72) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def money(amount: float) -> str:
    """Dollars with two decimals and thousands separators."""
    return f"${amount:,.2f}"
