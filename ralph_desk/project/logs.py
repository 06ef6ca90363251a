"""Where this process logs: stderr, and the log file an execution error names."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_log_files: dict[Path, Path] = {}
"""The human-readable log file this process writes for a project, by the project's log folder."""


def remember_log_file(logs_dir: Path, path: Path) -> None:
    """Note the file this process logs to for the project of `logs_dir` (an execution error names it)."""
    _log_files[logs_dir] = path


def log_folder(logs_dir: Path) -> Path:
    """Where a tool run's log goes: beside this process's own log (its `--log-dir`), else `logs_dir`."""
    log_file = _log_files.get(logs_dir)
    return log_file.parent if log_file is not None else logs_dir


def log_to_stderr(level: int = logging.INFO) -> None:
    """Log to stderr only (a folder that is no project yet gets no `.ralph/logs/`)."""
    root = logging.getLogger()
    root.setLevel(level)
    if not any(type(h) is logging.StreamHandler for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)


def log_details(logs_dir: Path, tool: str) -> dict[str, object]:
    """The details of an execution error: the tool, and the log file (else the log folder) to read."""
    # Keyed by project: a process that served another project first must not name that one's log.
    log_file = _log_files.get(logs_dir)
    if log_file is not None:
        return {"tool": tool, "logFile": str(log_file)}
    return {"tool": tool, "logDir": str(logs_dir)}
