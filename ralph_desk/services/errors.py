"""Errors the services raise: each says what was wrong and what is allowed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ralph_desk.domain.loop_results import ErrorCode


class ServiceError(Exception):
    """A request the services refused; the message is meant for the person or agent who made it."""


class InvalidValueError(ServiceError):
    """A field had a value that is not allowed."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"invalid {field}: {shown}; allowed: {allowed}")
        self.field = field
        self.value = value
        self.allowed = allowed


class NotFoundError(ServiceError):
    """An id or name that names nothing."""

    def __init__(self, kind: str, key: object, known: Iterable[object] = ()) -> None:
        known_list = [str(k) for k in known]
        hint = f"; known: {', '.join(known_list[:20])}" if known_list else ""
        super().__init__(f"no {kind} {key!r}{hint}")
        self.kind = kind
        self.key = key


class ConflictError(ServiceError):
    """The change would break a rule of the data: a duplicate, a cycle, a row others still use."""


class ControlError(ServiceError):
    """A loop-control request that failed; structured as seed 003 asks (code, message, details)."""

    def __init__(self, code: ErrorCode, message: str, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
