"""Codex's `exec --json` events as live events (checked against codex-cli 0.169.0)."""

from __future__ import annotations

import json
import re
from typing import Any

from ralph_desk.loop.limits import (
    RATE_LIMIT_STATUSES,
    http_status_in,
    limit_in_error_text,
    mark_rate_limited,
    parse_resets_at,
)
from ralph_desk.loop.model import EventKind, LiveEvent, StreamSummary
from ralph_desk.loop.streams import (
    Clock,
    JsonLinesParser,
    as_dict,
    as_int,
    as_list,
    as_str,
    content_text,
    now_utc,
    preview,
)

_RECONNECTING = re.compile(r"^Reconnecting\.\.\.\s*(?:(?P<attempt>\d+)/(?P<retries>\d+))?", re.IGNORECASE)


class CodexStreamParser(JsonLinesParser):
    """Codex's `exec --json` events (checked against codex-cli 0.169.0): items, turns, errors; no cost."""

    agent = "Codex"

    def __init__(self, summary: StreamSummary | None = None, clock: Clock = now_utc) -> None:
        super().__init__(summary, clock)
        self.thread_id: str | None = None
        self._started: set[str] = set()  # item ids whose start was reported

    def handle(self, event: dict[str, Any]) -> list[LiveEvent]:
        """The events of one parsed Codex JSON object."""
        kind = event.get("type")
        if kind == "thread.started":
            self.thread_id = as_str(event.get("thread_id"))
            return [
                self._event(EventKind.INIT, f"thread {self.thread_id or '?'}", {"thread_id": self.thread_id})
            ]
        if kind == "item.started":
            return self._item_started(as_dict(event.get("item")))
        if kind == "item.completed":
            return self._item_completed(as_dict(event.get("item")))
        if kind == "turn.completed":
            return self._turn_completed(as_dict(event.get("usage")))
        if kind == "turn.failed":
            return self._turn_failed(as_str(as_dict(event.get("error")).get("message")) or "the turn failed")
        if kind == "error":
            return [self._error(as_str(event.get("message")) or "error")]
        return []

    def _tool_call(self, item: dict[str, Any]) -> LiveEvent:
        tool = as_str(item.get("tool")) or "?"
        server = as_str(item.get("server"))
        arguments = item.get("arguments")
        shown = json.dumps(arguments, ensure_ascii=False) if arguments is not None else ""
        return self._event(
            EventKind.TOOL_CALL,
            f"{tool} {preview(shown, 300)}".rstrip(),
            {
                "tool": tool if server in (None, "ralph") else f"mcp__{server}__{tool}",
                "name": f"mcp__{server}__{tool}" if server else tool,
                "server": server,
                "input": as_dict(arguments),
                "tool_use_id": as_str(item.get("id")),
                "ralph": server == "ralph",
            },
        )

    def _command(self, item: dict[str, Any]) -> LiveEvent:
        command = as_str(item.get("command")) or ""
        return self._event(
            EventKind.TOOL_CALL,
            f"shell {preview(command, 300)}",
            {
                "tool": "shell",
                "name": "shell",
                "input": {"command": command},
                "tool_use_id": as_str(item.get("id")),
                "ralph": False,
            },
        )

    def _item_started(self, item: dict[str, Any]) -> list[LiveEvent]:
        item_id = as_str(item.get("id")) or ""
        item_type = item.get("type")
        if item_type == "mcp_tool_call":
            self._started.add(item_id)
            return [self._tool_call(item)]
        if item_type == "command_execution":
            self._started.add(item_id)
            return [self._command(item)]
        return []

    def _item_completed(self, item: dict[str, Any]) -> list[LiveEvent]:
        item_id = as_str(item.get("id")) or ""
        item_type = item.get("type")
        if item_type == "agent_message":
            text = as_str(item.get("text")) or ""
            self.summary.result_text = text
            return [self._event(EventKind.ASSISTANT_TEXT, preview(text))]
        if item_type == "error":
            return [self._error(as_str(item.get("message")) or "error")]
        if item_type == "mcp_tool_call":
            events = [] if item_id in self._started else [self._tool_call(item)]
            return [*events, self._tool_result(item)]
        if item_type == "command_execution":
            events = [] if item_id in self._started else [self._command(item)]
            exit_code = as_int(item.get("exit_code"))
            output = as_str(item.get("aggregated_output")) or ""
            failed = item.get("status") == "failed" or (exit_code is not None and exit_code != 0)
            return [
                *events,
                self._event(
                    EventKind.TOOL_RESULT,
                    ("error: " if failed else "") + preview(output, 500),
                    {
                        "tool": "shell",
                        "name": "shell",
                        "tool_use_id": item_id,
                        "is_error": failed,
                        "exit_code": exit_code,
                        "content": preview(output),
                    },
                ),
            ]
        if item_type == "file_change":
            changes = [as_dict(change) for change in as_list(item.get("changes"))]
            paths = ", ".join(as_str(change.get("path")) or "?" for change in changes)
            return [
                self._event(
                    EventKind.TOOL_RESULT,
                    f"changed {paths}",
                    {
                        "tool": "file_change",
                        "name": "file_change",
                        "tool_use_id": item_id,
                        "is_error": item.get("status") == "failed",
                        "content": paths,
                    },
                )
            ]
        return []

    def _tool_result(self, item: dict[str, Any]) -> LiveEvent:
        result = as_dict(item.get("result"))
        error = as_dict(item.get("error"))
        error_text = as_str(error.get("message")) or as_str(item.get("error"))
        content = error_text or content_text(result.get("content"))
        is_error = (
            item.get("status") == "failed"
            or bool(error_text)
            or result.get("is_error") is True
            or result.get("isError") is True
        )
        tool = as_str(item.get("tool")) or "?"
        server = as_str(item.get("server"))
        return self._event(
            EventKind.TOOL_RESULT,
            ("error: " if is_error else "") + preview(content, 500),
            {
                "tool": tool if server in (None, "ralph") else f"mcp__{server}__{tool}",
                "name": f"mcp__{server}__{tool}" if server else tool,
                "tool_use_id": as_str(item.get("id")),
                "is_error": is_error,
                "content": preview(content),
            },
        )

    def _turn_completed(self, usage: dict[str, Any]) -> list[LiveEvent]:
        s = self.summary
        s.saw_result = True
        s.turns += 1
        s.input_tokens += as_int(usage.get("input_tokens")) or 0
        s.output_tokens += as_int(usage.get("output_tokens")) or 0
        return [
            self._event(
                EventKind.RESULT,
                f"turn completed ({s.turns})",
                {"is_error": False, "rate_limited": s.rate_limited, "result": s.result_text},
            ),
            self._event(
                EventKind.COST,
                f"${s.cost_usd:.4f} (Codex reports no cost), {s.turns} turns, "
                f"{s.input_tokens} in / {s.output_tokens} out tokens",
                {
                    "cost_usd": s.cost_usd,
                    "turns": s.turns,
                    "input_tokens": s.input_tokens,
                    "output_tokens": s.output_tokens,
                },
            ),
        ]

    def _limit(self, message: str) -> bool:
        limited, status = limit_in_error_text(message)
        if not limited:
            return False
        mark_rate_limited(self.summary, parse_resets_at(message, self._clock()))
        if status is not None:
            self.summary.api_error_status = status
        return True

    def _error(self, message: str) -> LiveEvent:
        retry = _RECONNECTING.match(message)
        status = http_status_in(message)
        if retry:
            return self._event(
                EventKind.RETRY,
                preview(message, 500),
                {
                    "status": status,
                    "attempt": as_int(retry["attempt"]),
                    "max_retries": as_int(retry["retries"]),
                    "delay_s": None,
                    "error": message,
                    "rate_limit": status in RATE_LIMIT_STATUSES,
                },
            )
        limited = self._limit(message)
        resets_at = self.summary.resets_at if limited else None
        return self._event(
            EventKind.RATE_LIMIT if limited else EventKind.ERROR,
            preview(message),
            {
                "status": status,
                "rate_limit": limited,
                "resets_at": resets_at.isoformat() if resets_at else None,
            },
        )

    def _turn_failed(self, message: str) -> list[LiveEvent]:
        s = self.summary
        s.saw_result = True
        s.is_error = True
        s.error = message
        self._limit(message)
        return [
            self._event(
                EventKind.RESULT,
                f"error: {preview(message, 300)}",
                {
                    "is_error": True,
                    "api_error_status": s.api_error_status,
                    "rate_limited": s.rate_limited,
                    "resets_at": s.resets_at.isoformat() if s.resets_at else None,
                    "result": None,
                },
            )
        ]


CODEX_EVENT_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
