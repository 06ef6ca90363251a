"""Binding registry tools to handlers: the handler table and the call a handler receives."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Generic, Protocol, TypeVar, get_type_hints

from pydantic import BaseModel

from ralph_desk.domain.session import SessionContext
from ralph_desk.domain.tools import REGISTRY
from ralph_desk.mcp_server.results import ErrorCode, LoopErrorInfo
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError, ServiceError

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class LoopControl(Protocol):
    """What the loop-control tools need from a loop runner (the loop issue provides one)."""

    def init(self, force: bool) -> dict[str, Any]: ...
    def validate(self) -> dict[str, Any]: ...
    def run(
        self, max_iterations: int | None, dry_run: bool, agent: str | None, allow_edits: bool
    ) -> dict[str, Any]: ...
    def status(self) -> dict[str, Any]: ...
    def stop(self) -> dict[str, Any]: ...
    def history(self, limit: int, offset: int, iteration: int | None, kind: str) -> dict[str, Any]: ...
    def understand(self) -> dict[str, Any]: ...


class DeferredLoopControl:
    """A `LoopControl` built on its first use.

    The loop runner and the agents' adapters take ~50 ms to import; a server whose session never
    calls a loop-control tool (most stdio ones) should not pay that before its first answer.
    """

    def __init__(self, build: Callable[[], LoopControl]) -> None:
        self._build = build
        self._built: LoopControl | None = None
        self._lock = threading.Lock()

    @property
    def control(self) -> LoopControl:
        """The loop control, built now if this is the first use."""
        with self._lock:
            if self._built is None:
                self._built = self._build()
            return self._built

    def init(self, force: bool) -> dict[str, Any]:
        return self.control.init(force)

    def validate(self) -> dict[str, Any]:
        return self.control.validate()

    def run(
        self, max_iterations: int | None, dry_run: bool, agent: str | None, allow_edits: bool
    ) -> dict[str, Any]:
        return self.control.run(max_iterations, dry_run, agent, allow_edits)

    def status(self) -> dict[str, Any]:
        return self.control.status()

    def stop(self) -> dict[str, Any]:
        return self.control.stop()

    def history(self, limit: int, offset: int, iteration: int | None, kind: str) -> dict[str, Any]:
        return self.control.history(limit, offset, iteration, kind)

    def understand(self) -> dict[str, Any]:
        return self.control.understand()


@dataclass(frozen=True)
class ToolCall(Generic[ArgsT]):
    """One validated tool call: the services, the caller's session context and the arguments."""

    services: Services
    context: SessionContext
    args: ArgsT
    loop: LoopControl | None = None

    def provided(self) -> dict[str, Any]:
        """The arguments the caller actually set."""
        return self.args.model_dump(exclude_unset=True)

    def changes(self, *keys: str) -> dict[str, Any]:
        """The arguments set to a value (not None), without `keys`, the ones naming what to change."""
        provided = self.provided().items()
        return {name: value for name, value in provided if value is not None and name not in keys}

    def inside_root(self, field: str, path: str) -> str:
        """`path`, refused unless it stays inside the project root once normalised and symlinks followed."""
        return checked_project_path(self.services.paths.root, field, path)

    def all_inside_root(self, field: str, paths: Sequence[str] | None) -> list[str] | None:
        """`inside_root` for each path of an optional list."""
        if paths is None:
            return None
        return [self.inside_root(f"{field}[{index}]", path) for index, path in enumerate(paths)]


class StructuredToolError(ServiceError):
    """A refusal sent as seed 003's structured error: the tool error's whole text is JSON."""

    def __init__(self, code: ErrorCode, message: str, details: Mapping[str, Any] | None = None) -> None:
        self.info = LoopErrorInfo(code=code, message=message, details=dict(details or {}))
        super().__init__(json.dumps(self.info.model_dump(mode="json"), ensure_ascii=False))


OUTSIDE_ROOT = (
    "a path relative to the project root that stays inside it (no '..', no absolute path, no symlink out)"
)


def checked_project_path(root: Path, field: str, path: str) -> str:
    """`path` normalised (forward slashes) if `root/path` resolves inside `root`; refused otherwise."""
    normal = str(PurePosixPath(path.replace("\\", "/")))
    base = root.resolve()
    try:
        resolved = (base / normal).resolve()
    except (OSError, RuntimeError):  # a symlink loop, or a path the OS cannot resolve
        raise InvalidValueError(field, path, OUTSIDE_ROOT) from None
    if not resolved.is_relative_to(base):
        raise InvalidValueError(field, path, OUTSIDE_ROOT)
    return normal


Handler = Callable[[ToolCall[Any]], BaseModel]
ContextResolver = Callable[[Any], SessionContext]


@dataclass(frozen=True)
class BoundTool:
    """A handler and the model of what it returns."""

    handler: Handler
    result_model: type[BaseModel]


HANDLERS: dict[str, BoundTool] = {}


def handles(name: str) -> Callable[[Callable[[ToolCall[Any]], Any]], Callable[[ToolCall[Any]], Any]]:
    """Register the decorated function as the handler of registry tool `name`."""
    if name not in REGISTRY:
        raise KeyError(f"no registry tool {name!r} to bind")

    def register(handler: Callable[[ToolCall[Any]], Any]) -> Callable[[ToolCall[Any]], Any]:
        result_model = get_type_hints(handler)["return"]
        if not (isinstance(result_model, type) and issubclass(result_model, BaseModel)):
            raise TypeError(f"handler of {name!r} must be annotated to return a pydantic model")
        HANDLERS[name] = BoundTool(handler, result_model)
        return handler

    return register
