"""Binding registry tools to handlers: the handler table and the call a handler receives."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, get_args, get_type_hints

from pydantic import BaseModel

from ralph_desk.domain.loop_results import (
    ErrorCode,
    LoopErrorInfo,
    Progress,
    RalphHistoryResult,
    RalphInitResult,
    RalphRunResult,
    RalphStatusResult,
    RalphStopResult,
    RalphUnderstandResult,
    RalphValidateResult,
)
from ralph_desk.domain.session import SessionContext
from ralph_desk.domain.tools import REGISTRY, ToolInput
from ralph_desk.project import contained
from ralph_desk.services.errors import InvalidValueError, ServiceError

if TYPE_CHECKING:
    from ralph_desk.services.container import Services

ArgsT = TypeVar("ArgsT", bound=ToolInput)


class LoopControl(Protocol):
    """What the loop-control tools ask: `ralph_desk.loop.control.LoopController` is the one implementation."""

    def init(self, force: bool) -> RalphInitResult: ...
    def validate(self) -> RalphValidateResult: ...
    def run(
        self,
        max_iterations: int | None,
        dry_run: bool,
        agent: str | None,
        allow_edits: bool,
        parallel: int | None = None,
        allowed_paths: list[str] | None = None,
        wait: bool = False,
        progress: Progress | None = None,
    ) -> RalphRunResult: ...
    def status(self, loop_id: int | None = None) -> RalphStatusResult: ...
    def stop(self) -> RalphStopResult: ...
    def history(
        self, limit: int, offset: int, iteration: int | None, kind: str, loop_id: int | None = None
    ) -> RalphHistoryResult: ...
    def understand(self) -> RalphUnderstandResult: ...
    async def client_gone(self, now: bool = False) -> None: ...


@dataclass(frozen=True)
class ToolCall(Generic[ArgsT]):
    """One tool call, its arguments validated once into the tool's input model; the services and session."""

    open_services: ServicesSource
    context: SessionContext
    args: ArgsT
    loop: LoopControl | None = None
    progress: Progress | None = None

    @property
    def services(self) -> Services:
        """The project's services, opened on first use (ralph_init runs before there is a database)."""
        return self.open_services()

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

    def paths_inside_root(self, fields: Sequence[str]) -> ArgsT:
        """The arguments, with each given path list of `fields` refused if a path leads outside the root."""
        paths = {
            field: self.all_inside_root(field, getattr(self.args, field, None))
            for field in fields
            if getattr(self.args, field, None) is not None
        }
        return self.args.model_copy(update=paths)

    def require_changes(self, key: str) -> None:
        """Refuse an update that names its record (`key`) but no field to change."""
        if not self.changes(key):
            fields = [name for name in type(self.args).model_fields if name != key]
            shown = {key: getattr(self.args, key)}
            raise InvalidValueError("arguments", shown, "at least one of " + ", ".join(fields))


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
    if not contained.resolves_inside(root, normal):
        raise InvalidValueError(field, path, OUTSIDE_ROOT)
    return normal


ContextResolver = Callable[[Any], SessionContext]
# The services a tool reaches: already open (the window, HTTP) or opened on first use (a staged stdio start).
ServicesSource = Callable[[], "Services"]
HandlerT = TypeVar("HandlerT", bound=Callable[..., BaseModel])


@dataclass(frozen=True)
class BoundTool(Generic[ArgsT]):
    """A handler, the input model its call carries, and the model of what it returns."""

    input_model: type[ArgsT]
    handler: Callable[[ToolCall[ArgsT]], BaseModel]
    result_model: type[BaseModel]

    def bind(
        self,
        arguments: Mapping[str, Any],
        services: ServicesSource,
        context: SessionContext,
        loop: LoopControl | None,
        progress: Progress | None = None,
    ) -> tuple[ArgsT, Callable[[], BaseModel]]:
        """The arguments validated (the one validation of a call), and the handler ready to run on them."""
        call = ToolCall(services, context, self.input_model.model_validate(arguments), loop, progress)
        return call.args, partial(self.handler, call)


# Each registry tool's bound handler; the input model differs per tool, hence Any here only.
HANDLERS: dict[str, BoundTool[Any]] = {}


def handles(name: str) -> Callable[[HandlerT], HandlerT]:
    """Register the decorated function as the handler of registry tool `name`.

    The handler takes `ToolCall[X]`, X being the tool's registry input model, and is annotated to return
    a pydantic model (the tool's output schema): both are checked here, once, at import.
    """
    if name not in REGISTRY:
        raise KeyError(f"no registry tool {name!r} to bind")
    input_model = REGISTRY[name].input_model

    def register(handler: HandlerT) -> HandlerT:
        hints = get_type_hints(handler)
        result_model = hints["return"]
        if not (isinstance(result_model, type) and issubclass(result_model, BaseModel)):
            raise TypeError(f"handler of {name!r} must be annotated to return a pydantic model")
        first = next(iter(inspect.signature(handler).parameters))
        if get_args(hints.get(first)) != (input_model,):
            raise TypeError(f"handler of {name!r} must take ToolCall[{input_model.__name__}]")
        HANDLERS[name] = BoundTool(input_model, handler, result_model)
        return handler

    return register
