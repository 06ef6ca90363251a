"""The reference server: a bare `MCPServer` with one tool that reads a task from a SQLite file.

It is what any MCP server written with the Python SDK costs: the SDK, one tool, one query through
the standard library's `sqlite3` on the one connection the server keeps open (as a minimal server
would: opening one per call would flatter every ratio against it), answered with structured content.
The benchmarks serve it exactly as they serve ralph-desk's server
(the same stdio spawn, the same embedded HTTP host behind the same bearer gate), so that the ratio
between the two is ralph-desk's own cost.

    python bench/bare_server.py --db .ralph/db/ralph.db      # serves over stdio
    python bench/bare_server.py --db ... --import-sqlalchemy # the same, having imported SQLAlchemy's ORM

The second form is a floor, not a target: what any server built on SQLAlchemy (as the foundation
requires of ralph-desk's store) pays before its first answer.
"""

from __future__ import annotations

import argparse
import sqlite3
import threading
from typing import TypedDict

from mcp.server.mcpserver import MCPServer


class TaskRow(TypedDict):
    """The task's columns the tool answers with (its structured content)."""

    id: int
    title: str
    description: str | None
    status: str
    priority: str
    stuck_count: int


def build_bare_server(db_path: str) -> MCPServer:
    """An MCPServer with one SQLite-reading tool, `get_task(id)`, over one connection kept open."""
    server = MCPServer("bare", log_level="WARNING")
    # Sync tools run in the SDK's worker threads: the connection may be used from any, one at a time.
    connection = sqlite3.connect(db_path, timeout=15, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    lock = threading.Lock()

    @server.tool()
    def get_task(id: int) -> TaskRow:
        """Get one task by id."""
        with lock:
            row = connection.execute(
                "SELECT id, title, description, status, priority, stuck_count FROM tasks WHERE id = ?", (id,)
            ).fetchone()
        if row is None:
            raise ValueError(f"no task {id}")
        return TaskRow(**dict(row))  # type: ignore[typeddict-item]

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", required=True)
    parser.add_argument("--import-sqlalchemy", action="store_true")
    args = parser.parse_args()
    if args.import_sqlalchemy:
        import sqlalchemy.orm  # noqa: F401
    build_bare_server(args.db).run()


if __name__ == "__main__":
    main()
