"""The demo's rows looked up by what they say, so that no test depends on the order the demo inserts them."""

from __future__ import annotations

from ralph_desk.domain.records import Signal
from ralph_desk.services.container import Services

__all__ = ["flag_about", "suggestion_about", "task_id"]


def task_id(services: Services, title: str) -> int:
    """The id of the one task whose title starts with `title`."""
    found = [task.id for task in services.tasks.list() if task.title.startswith(title)]
    if len(found) != 1:
        raise LookupError(f"{len(found)} tasks are titled {title!r}…; expected one")
    return found[0]


def flag_about(services: Services, text: str) -> Signal:
    """The one open flag whose text starts with `text`."""
    found = [flag for flag in services.inbox.flags() if (flag.what or "").startswith(text)]
    if len(found) != 1:
        raise LookupError(f"{len(found)} flags start with {text!r}; expected one")
    return found[0]


def suggestion_about(services: Services, text: str) -> Signal:
    """The one pending suggestion whose text starts with `text`."""
    found = [item for item in services.inbox.suggestions() if (item.what or "").startswith(text)]
    if len(found) != 1:
        raise LookupError(f"{len(found)} suggestions start with {text!r}; expected one")
    return found[0]
