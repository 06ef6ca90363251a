"""Tool handlers, one module per registry category; importing them fills the handler table."""

from __future__ import annotations

import importlib

MODULES = ("signals", "tasks", "comments", "features", "disciplines", "project", "state", "loop")


def load() -> None:
    """Import every handler module (idempotent)."""
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
