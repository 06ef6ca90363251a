"""Claude Code's `--output-format stream-json --verbose` events as live events (checked against 2.1.330)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ralph_desk.loop.limits import (
    RATE_LIMIT_STATUSES,
    epoch_to_datetime,
    is_usage_limit_text,
    mark_rate_limited,
    parse_resets_at,
)
from ralph_desk.loop.model import EventKind, LiveEvent, StreamSummary
from ralph_desk.loop.streams import (
    Clock,
    JsonLinesParser,
    as_dict,
    as_float,
    as_int,
    as_list,
    as_str,
    content_text,
    now_utc,
    preview,
)

RALPH_TOOL_PREFIX = "mcp__ralph__"


def tool_short_name(name: str) -> str:
    """A tool's name without Claude Code's `mcp__ralph__` prefix (other names are kept whole)."""
    return name[len(RALPH_TOOL_PREFIX) :] if name.startswith(RALPH_TOOL_PREFIX) else name


class ClaudeStreamParser(JsonLinesParser):
    """Claude Code's `--output-format stream-json --verbose` events (checked against 2.1.330).

    Event keys are not ordered (the `result` event's `type` comes late), so each line is parsed as JSON.
    """

    agent = "Claude Code"

    def __init__(self, summary: StreamSummary | None = None, clock: Clock = now_utc) -> None:
        super().__init__(summary, clock)
        self.model: str | None = None
        self.agent_session_id: str | None = None
        self._tool_names: dict[str, str] = {}  # tool_use id -> full tool name
        self._denied: set[str] = set()  # tool_use ids already reported as denied
        self._retry_status: int | None = None

    def handle(self, event: dict[str, Any]) -> list[LiveEvent]:
        """The events of one parsed stream-json object."""
        kind = event.get("type")
        if kind == "system":
            return self._system(event)
        if kind == "assistant":
            return self._assistant(event)
        if kind == "user":
            return self._user(event)
        if kind == "result":
            return self._result(event)
        if kind == "rate_limit_event":
            return self._rate_limit(event)
        return []

    # system ------------------------------------------------------------------------------------------

    def _system(self, event: dict[str, Any]) -> list[LiveEvent]:
        subtype = event.get("subtype")
        if subtype == "init":
            return self._init(event)
        if subtype == "api_retry":
            return [self._retry(event)]
        if subtype == "permission_denied":
            denial = self._denial(
                as_str(event.get("tool_name")) or "?",
                as_str(event.get("tool_use_id")),
                as_str(event.get("message")),
            )
            return [denial] if denial else []
        return []

    def _init(self, event: dict[str, Any]) -> list[LiveEvent]:
        self.model = as_str(event.get("model"))
        self.agent_session_id = as_str(event.get("session_id"))
        servers = [
            {"name": as_str(item.get("name")) or "?", "status": as_str(item.get("status")) or "?"}
            for item in map(as_dict, as_list(event.get("mcp_servers")))
        ]
        tools = [name for name in as_list(event.get("tools")) if isinstance(name, str)]
        shown = ", ".join(f"{s['name']} {s['status']}" for s in servers) or "none"
        events = [
            self._event(
                EventKind.INIT,
                f"model {self.model or '?'}; MCP servers: {shown}",
                {
                    "model": self.model,
                    "session_id": self.agent_session_id,
                    "mcp_servers": servers,
                    "tools": tools,
                    "permission_mode": as_str(event.get("permissionMode")),
                    "version": as_str(event.get("claude_code_version")),
                },
            )
        ]
        for server in servers:
            if server["status"] == "failed":
                message = f"MCP server {server['name']!r} failed to connect"
                self.summary.error = self.summary.error or message
                events.append(self._event(EventKind.ERROR, message, {"mcp_server": server["name"]}))
        return events

    def _retry(self, event: dict[str, Any]) -> LiveEvent:
        status = as_int(event.get("error_status"))
        attempt = as_int(event.get("attempt"))
        retries = as_int(event.get("max_retries"))
        delay_ms = as_float(event.get("retry_delay_ms"))
        error = as_str(event.get("error"))
        if status is not None:
            self._retry_status = status
        delay_s = round(delay_ms / 1000.0, 3) if delay_ms is not None else None
        shown_status = f"API error {status}" if status is not None else "API unreachable"
        return self._event(
            EventKind.RETRY,
            f"{shown_status} ({error or 'unknown'}): retry {attempt or '?'}/{retries or '?'}"
            + (f" in {delay_s:g} s" if delay_s is not None else ""),
            {
                "status": status,
                "attempt": attempt,
                "max_retries": retries,
                "delay_s": delay_s,
                "error": error,
                "rate_limit": status in RATE_LIMIT_STATUSES,
            },
        )

    def _denial(self, tool: str, tool_use_id: str | None, message: str | None) -> LiveEvent | None:
        if tool_use_id is not None:
            if tool_use_id in self._denied:
                return None
            self._denied.add(tool_use_id)
        self.summary.permission_denials.append(tool)
        return self._event(
            EventKind.PERMISSION_DENIED,
            f"{tool_short_name(tool)} was denied",
            {"tool": tool_short_name(tool), "name": tool, "tool_use_id": tool_use_id, "message": message},
        )

    # rate limits ------------------------------------------------------------------------------------

    def _rate_limit(self, event: dict[str, Any]) -> list[LiveEvent]:
        info = as_dict(event.get("rate_limit_info"))
        status = as_str(info.get("status")) or "?"
        resets_at = epoch_to_datetime(info.get("resetsAt"))
        limit_type = as_str(info.get("rateLimitType"))
        data = {
            "status": status,
            "resets_at": resets_at.isoformat() if resets_at else None,
            "limit": limit_type,
            "rejected": status == "rejected",
        }
        if status == "rejected":
            mark_rate_limited(self.summary, resets_at)
            when = f"; resets {resets_at:%Y-%m-%d %H:%M} UTC" if resets_at else ""
            return [
                self._event(
                    EventKind.RATE_LIMIT, f"usage limit reached ({limit_type or 'unknown'}){when}", data
                )
            ]
        if status == "allowed_warning":
            return [self._event(EventKind.RATE_LIMIT, f"approaching the {limit_type or 'usage'} limit", data)]
        return []

    def _api_error_limit(self, event: dict[str, Any], text: str) -> tuple[bool, datetime | None]:
        """For a synthetic API-error message: whether it is a rate or usage limit, and when it lifts."""
        info = as_dict(as_dict(event.get("api_error_params")).get("rate_limit_info"))
        if event.get("api_error") == "usage_limit_reached" or info or is_usage_limit_text(text):
            return True, epoch_to_datetime(info.get("resetsAt")) or parse_resets_at(text, self._clock())
        status = as_int(event.get("api_error_status"))
        return status in RATE_LIMIT_STATUSES or event.get("error") == "rate_limit", None

    # messages ---------------------------------------------------------------------------------------

    def _assistant(self, event: dict[str, Any]) -> list[LiveEvent]:
        message = as_dict(event.get("message"))
        subagent = event.get("parent_tool_use_id") is not None
        api_error = bool(event.get("is_api_error_message")) or message.get("model") == "<synthetic>"
        events: list[LiveEvent] = []
        for block in map(as_dict, as_list(message.get("content"))):
            block_type = block.get("type")
            if block_type == "text" and isinstance(block.get("text"), str):
                events.append(self._text(event, block["text"], api_error, subagent))
            elif block_type == "tool_use":
                name = as_str(block.get("name")) or "?"
                call_id = as_str(block.get("id"))
                if call_id:
                    self._tool_names[call_id] = name
                arguments = as_dict(block.get("input"))
                events.append(
                    self._event(
                        EventKind.TOOL_CALL,
                        f"{tool_short_name(name)} {preview(json.dumps(arguments, ensure_ascii=False), 300)}",
                        {
                            "tool": tool_short_name(name),
                            "name": name,
                            "input": arguments,
                            "tool_use_id": call_id,
                            "ralph": name.startswith(RALPH_TOOL_PREFIX),
                            "subagent": subagent,
                        },
                    )
                )
        return events

    def _text(self, event: dict[str, Any], text: str, api_error: bool, subagent: bool) -> LiveEvent:
        if not api_error:
            return self._event(EventKind.ASSISTANT_TEXT, preview(text), {"subagent": subagent})
        status = as_int(event.get("api_error_status"))
        limited, resets_at = self._api_error_limit(event, text)
        if limited:
            mark_rate_limited(self.summary, resets_at)
        return self._event(
            EventKind.ERROR,
            preview(text),
            {
                "status": status,
                "error": as_str(event.get("error")),
                "api_error": as_str(event.get("api_error")),
                "rate_limit": limited,
            },
        )

    def _user(self, event: dict[str, Any]) -> list[LiveEvent]:
        message = as_dict(event.get("message"))
        events: list[LiveEvent] = []
        for block in map(as_dict, as_list(message.get("content"))):
            if block.get("type") != "tool_result":
                continue
            call_id = as_str(block.get("tool_use_id"))
            name = self._tool_names.get(call_id or "", "?")
            is_error = block.get("is_error") is True
            content = content_text(block.get("content"))
            events.append(
                self._event(
                    EventKind.TOOL_RESULT,
                    ("error: " if is_error else "") + preview(content, 500),
                    {
                        "tool": tool_short_name(name),
                        "name": name,
                        "tool_use_id": call_id,
                        "is_error": is_error,
                        "content": preview(content),
                    },
                )
            )
        return events

    # the end ----------------------------------------------------------------------------------------

    def _result(self, event: dict[str, Any]) -> list[LiveEvent]:
        summary = self.summary
        summary.saw_result = True
        subtype = as_str(event.get("subtype"))
        summary.is_error = event.get("is_error") is True or (
            subtype is not None and subtype.startswith("error")
        )
        summary.api_error_status = as_int(event.get("api_error_status"))
        cost = as_float(event.get("total_cost_usd"))
        if cost is not None:
            summary.cost_usd = cost
        turns = as_int(event.get("num_turns"))
        if turns is not None:
            summary.turns = turns
        usage = as_dict(event.get("usage"))
        # Input counts every prompt token the model read, cached or not; cost is the figure to budget on.
        summary.input_tokens = sum(
            as_int(usage.get(key)) or 0
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        summary.output_tokens = as_int(usage.get("output_tokens")) or 0
        result_text = as_str(event.get("result"))
        summary.result_text = result_text
        errors = [str(item) for item in as_list(event.get("errors"))]
        if summary.is_error:
            summary.error = "; ".join(errors) or result_text or subtype or "the agent reported an error"
        if self._result_is_limit(summary, result_text or ""):
            mark_rate_limited(summary, parse_resets_at(result_text or "", self._clock()))

        events: list[LiveEvent] = []
        for denial in map(as_dict, as_list(event.get("permission_denials"))):
            found = self._denial(
                as_str(denial.get("tool_name")) or "?", as_str(denial.get("tool_use_id")), None
            )
            if found:
                events.append(found)
        outcome = "error" if summary.is_error else "finished"
        events.append(
            self._event(
                EventKind.RESULT,
                f"{outcome} ({subtype or '?'}) after {summary.turns} turns"
                + (f": {preview(summary.error, 300)}" if summary.is_error and summary.error else ""),
                {
                    "subtype": subtype,
                    "is_error": summary.is_error,
                    "api_error_status": summary.api_error_status,
                    "rate_limited": summary.rate_limited,
                    "resets_at": summary.resets_at.isoformat() if summary.resets_at else None,
                    "terminal_reason": as_str(event.get("terminal_reason")),
                    "result": preview(result_text) if result_text else None,
                    "errors": errors,
                },
            )
        )
        events.append(self._cost_event())
        return events

    def _result_is_limit(self, summary: StreamSummary, result_text: str) -> bool:
        if summary.api_error_status in RATE_LIMIT_STATUSES:
            return True
        if not summary.is_error:
            return False
        # Usage limits end with the CLI's own text; a run that gave up retrying 429s may carry no status.
        gave_up = summary.api_error_status is None and self._retry_status in RATE_LIMIT_STATUSES
        return is_usage_limit_text(result_text) or gave_up

    def _cost_event(self) -> LiveEvent:
        s = self.summary
        return self._event(
            EventKind.COST,
            f"${s.cost_usd:.4f}, {s.turns} turns, {s.input_tokens} in / {s.output_tokens} out tokens",
            {
                "cost_usd": s.cost_usd,
                "turns": s.turns,
                "input_tokens": s.input_tokens,
                "output_tokens": s.output_tokens,
            },
        )
