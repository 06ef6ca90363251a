"""The server factory: every registry tool bound to its handler, filtered per session, as an `MCPServer`."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.from_thread
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ValidationError

from ralph_desk.domain.arguments import problems as argument_problems
from ralph_desk.domain.loop_results import Progress
from ralph_desk.domain.recipes import check_fields
from ralph_desk.domain.session import SessionContext
from ralph_desk.domain.tools import REGISTRY, ToolCategory, ToolSpec
from ralph_desk.mcp_server import handlers, sdk_compat
from ralph_desk.mcp_server.binding import (
    HANDLERS,
    BoundTool,
    ContextResolver,
    LoopControl,
    ServicesSource,
    StructuredToolError,
)
from ralph_desk.mcp_server.calllog import ToolCallLog
from ralph_desk.mcp_server.identity import server_options
from ralph_desk.mcp_server.prompts import PromptCheck
from ralph_desk.project import ProjectError, ProjectPaths
from ralph_desk.services.errors import NotFoundError, ServiceError
from ralph_desk.store.errors import StoreError

if TYPE_CHECKING:
    from ralph_desk.services.container import Services

log = logging.getLogger("ralph_desk.mcp")

CONTEXT_STATE_KEY = "ralph_context"
Middleware = ServerMiddleware[Any]


def context_from_request(request: Any, default: SessionContext) -> SessionContext:
    """The session context an HTTP gate attached to the request, or the server's default."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, Mapping):
        state = scope.get("state")
        if isinstance(state, Mapping) and isinstance(state.get(CONTEXT_STATE_KEY), SessionContext):
            return state[CONTEXT_STATE_KEY]  # type: ignore[no-any-return]
    return default


def describe_validation_error(tool_name: str, error: ValidationError, model: type[BaseModel]) -> str:
    """A short message naming each bad field, what it got and what is allowed (as the services word it)."""
    problems = []
    items = error.errors(include_url=False)
    for item, problem in zip(items, argument_problems(error, model, tool_name), strict=True):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "extra_forbidden":
            allowed = ", ".join(model.model_fields) or "none"
            problems.append(f"{where}: unexpected argument (allowed arguments: {allowed})")
            continue
        field = model.model_fields.get(str(item["loc"][0])) if item["loc"] else None
        if item["type"] == "missing":
            described = f" ({field.description})" if field is not None and field.description else ""
            problems.append(f"{where}: Field required{described}; allowed: {problem.allowed}")
            continue
        got = repr(item.get("input"))
        if len(got) > 60:
            got = got[:57] + "..."
        problems.append(f"{where}: {item['msg']} (got {got}); allowed: {problem.allowed}")
    return f"invalid arguments for {tool_name!r}: " + "; ".join(problems)


def error_result_model(message: str) -> CallToolResult:
    """A tool-error result with a message meant for the caller."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def error_result(message: str) -> dict[str, Any]:
    """A tool-error result on the wire, with a message meant for the caller."""
    return error_result_model(message).model_dump(by_alias=True, mode="json", exclude_none=True)


class SessionGate:
    """Middleware: each session sees only its enabled tools, and calls are checked before they run."""

    def __init__(self, resolve: ContextResolver) -> None:
        self.resolve = resolve
        # The whole tool list on the wire, per protocol version: the server's tool table is fixed once
        # built, and shaping all of it (every schema validated and dumped) costs ~8 ms per tools/list
        # for 45 tools, of which a session keeps a handful.
        self._listed: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize":
            return await call_next(ctx)
        if ctx.method == "tools/list":
            return await self._list_tools(ctx, call_next)
        if ctx.method == "tools/call":
            refusal = self._refusal(ctx)
            if refusal is not None:
                log.info("refused call: %s", refusal)
                return error_result(refusal)
        return await call_next(ctx)

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """The session's enabled tools, cut from the whole list (shaped once per protocol version)."""
        enabled = self.resolve(ctx.request).enabled_tools
        paginated = bool(ctx.params and ctx.params.get("cursor") is not None)
        cached = None if paginated else self._listed.get(ctx.protocol_version)
        if cached is None:
            result = await call_next(ctx)
            if not isinstance(result, dict):
                return result
            tools = result.get("tools")
            if paginated or result.get("nextCursor") or not isinstance(tools, list):
                result["tools"] = [tool for tool in tools or [] if tool.get("name") in enabled]
                return result
            envelope = {key: value for key, value in result.items() if key != "tools"}
            cached = self._listed[ctx.protocol_version] = (envelope, list(tools))
        envelope, tools = cached
        return {**envelope, "tools": [dict(tool) for tool in tools if tool.get("name") in enabled]}

    def _refusal(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """Why the call may not reach its tool: no name, a tool the session hides, or no named arguments.

        The arguments themselves are validated once, by the tool (`_tool_function`).
        """
        params = ctx.params or {}
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if not isinstance(name, str):
            return "a tools/call needs a tool name"
        hidden = self.resolve(ctx.request).refusal(name)
        if hidden is not None:
            return hidden
        if not isinstance(arguments, dict):
            return f"invalid arguments for {name!r}: expected an object of named arguments"
        return None


def argument_error(spec: ToolSpec, message: str) -> str:
    """The text of an argument error: seed 003's structured error for loop-control tools, else plain."""
    if spec.category is not ToolCategory.LOOP:
        return message
    return str(StructuredToolError("invalid_argument", message, {"tool": spec.name}))


def not_found_message(error: NotFoundError, spec: ToolSpec, session: SessionContext) -> str:
    """A not-found message that also says what is allowed, and which tool lists it."""
    message = str(error)
    if error.kind != "task" or "known:" in message:
        return message
    if spec.category is ToolCategory.SIGNAL:
        return f"{message}: the session's task does not exist; start the session for an existing task"
    lister = next((tool for tool in ("list_tasks", "search_tasks") if tool in session.enabled_tools), None)
    return f"{message}; allowed: the id of an existing task" + (f" ({lister} shows them)" if lister else "")


def refused(message: str) -> CallToolResult:
    """A call refused before its handler ran, said to the caller and logged."""
    log.info("refused call: %s", message)
    return error_result_model(message)


def _tool_function(
    spec: ToolSpec,
    bound: BoundTool[Any],
    services: ServicesSource,
    resolve: ContextResolver,
    loop: LoopControl | None,
) -> Callable[..., BaseModel]:
    """The function the SDK calls for one tool; sync, so the SDK runs it in a worker thread.

    The arguments arrive as sent (`sdk_compat.AS_SENT`) and are validated here, once, into the tool's
    input model; the session's recipe is checked against the fields set, then the handler runs.
    """

    def run_tool(ctx: Context, **arguments: Any) -> BaseModel:
        session = resolve(ctx.request_context.request)
        try:
            args, handle = bound.bind(arguments, services, session, loop, progress_of(ctx))
        except ValidationError as error:
            return refused(
                argument_error(spec, describe_validation_error(spec.name, error, spec.input_model))
            )
        provided = {name for name, value in args if value is not None}
        refusal = check_fields(session.recipe, spec.name, provided)
        if refusal is not None:
            return refused(refusal)
        try:
            return handle()
        except StructuredToolError as error:
            # Sent as is, so that the text stays one JSON document (no "Error executing tool" prefix).
            return error_result_model(str(error))
        except ValidationError as error:  # a handler's own check of values built from the arguments
            message = describe_validation_error(spec.name, error, spec.input_model)
            raise ToolError(argument_error(spec, message)) from None
        except NotFoundError as error:
            raise ToolError(not_found_message(error, spec, session)) from None
        except (ServiceError, ProjectError, StoreError, ValueError) as error:
            raise ToolError(str(error)) from None

    run_tool.__name__ = spec.name
    run_tool.__doc__ = spec.description
    return run_tool


def progress_of(ctx: Context) -> Progress:
    """Progress notifications to the caller of this request, sent from the tool's worker thread.

    A no-op when the caller gave no progress token; a notification that cannot be sent (the client
    went away) is dropped: progress is a courtesy, the result still comes.
    """

    def report(done: float, total: float | None, message: str) -> None:
        try:
            anyio.from_thread.run(ctx.report_progress, done, total, message)
        except Exception as error:
            log.debug("a progress notification was not sent: %s", error)

    return report


def _tool(spec: ToolSpec, function: Callable[..., BaseModel], result_model: type[BaseModel]) -> Tool:
    """The SDK's tool for a registry entry: the input model's schema; the SDK derives the output schema."""
    return Tool(
        fn=function,
        name=spec.name,
        title=spec.name.replace("_", " ").capitalize(),
        description=spec.description,
        parameters=spec.input_model.model_json_schema(by_alias=True),
        fn_metadata=sdk_compat.tool_metadata(result_model),
        is_async=False,
        context_kwarg="ctx",
        annotations=ToolAnnotations(
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


def tool_table(
    services: ServicesSource,
    resolve: ContextResolver,
    loop: LoopControl | None = None,
    only: frozenset[str] | None = None,
) -> list[Tool]:
    """The SDK's tools for every registry tool with a handler (or just those in `only`)."""
    handlers.load()
    tools: list[Tool] = []
    for spec in REGISTRY.values():
        bound = HANDLERS.get(spec.name)
        if bound is None or (only is not None and spec.name not in only):
            continue
        tools.append(_tool(spec, _tool_function(spec, bound, services, resolve, loop), bound.result_model))
    return tools


def add_resources_and_prompts(server: MCPServer, paths: ProjectPaths, services: ServicesSource) -> None:
    """The project's `ralph://` resources, and the IDE prompts."""
    from ralph_desk.mcp_server import prompts, resources

    resources.register(server, paths, services)
    prompts.register(server)


def fixed_context(context: SessionContext) -> ContextResolver:
    """A resolver giving every request the same context (a process that serves one session)."""
    return lambda request: context


def make_server(
    services: ServicesSource,
    paths: ProjectPaths,
    resolve: ContextResolver,
    loop: LoopControl | None = None,
    only: frozenset[str] | None = None,
    middleware: Sequence[Middleware] = (),
    call_log: Path | None = None,
) -> MCPServer:
    """A `ralph` MCP server: the tool table given at construction, sessions checked by `SessionGate`.

    `only` registers just those tools: a process that serves one fixed context (`ralph-desk mcp`)
    never lists or runs any other, and each registration costs a few milliseconds of schema
    building at start-up. Calls of other tools are refused by the gate as before. `middleware` runs
    before the gate; with `call_log`, every tool call (refused ones too) gets a line in that file.
    """
    logged = [ToolCallLog(call_log, resolve, paths.root)] if call_log is not None else []
    server = MCPServer(
        **server_options(),
        middleware=[*logged, *middleware, PromptCheck(), SessionGate(resolve)],
        tools=tool_table(services, resolve, loop, only),
    )
    add_resources_and_prompts(server, paths, services)
    return server


def build_server(
    services: Services,
    default_context: SessionContext | None = None,
    loop: LoopControl | None = None,
    resolve: ContextResolver | None = None,
    only: frozenset[str] | None = None,
    call_log: Path | None = None,
) -> MCPServer:
    """A fresh `ralph` MCP server over these open services; sessions come from `resolve` or the default."""
    fallback = default_context or SessionContext()
    resolver = resolve or (lambda request: context_from_request(request, fallback))

    def source() -> Services:
        return services

    return make_server(source, services.paths, resolver, loop, only, call_log=call_log)


def dump(model: BaseModel) -> str:
    """Compact JSON of a result model (for resources and logs)."""
    return json.dumps(model.model_dump(mode="json"), ensure_ascii=False)
