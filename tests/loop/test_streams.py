"""Stream parsers over recorded Claude Code and Codex output (see fixtures/README.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser, tool_short_name
from ralph_desk.loop.agents.codex_stream import CodexStreamParser
from ralph_desk.loop.agents.command_stream import AutoStreamParser
from ralph_desk.loop.limits import is_usage_limit_text, limit_in_error_text, parse_resets_at
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.streams import StreamParser

FIXTURES = Path(__file__).parent / "fixtures"
RESET_EPOCH = 1_900_000_000
RESET = datetime.fromtimestamp(RESET_EPOCH, UTC)
NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


def feed_file(parser: StreamParser, name: str) -> list[LiveEvent]:
    events: list[LiveEvent] = []
    for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
        events += parser.feed(line)
    return events


def kinds(events: list[LiveEvent]) -> list[EventKind]:
    return [event.kind for event in events]


def of_kind(events: list[LiveEvent], kind: EventKind) -> list[LiveEvent]:
    return [event for event in events if event.kind is kind]


# --- Claude Code ------------------------------------------------------------------------------------


def test_a_successful_session_yields_its_calls_results_and_cost_in_order() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_success.jsonl")
    assert kinds(events) == [
        EventKind.INIT,
        EventKind.ASSISTANT_TEXT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_CALL,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.ASSISTANT_TEXT,
        EventKind.RESULT,
        EventKind.COST,
    ]
    calls = of_kind(events, EventKind.TOOL_CALL)
    assert [call.data["tool"] for call in calls] == ["mcp__notes__note", "learned", "done", "done"]
    assert calls[-1].data["input"] == {"summary": "Parser written and tested."}
    assert calls[-1].data["name"] == "mcp__ralph__done" and calls[-1].data["ralph"] is True
    assert calls[0].data["ralph"] is False
    results = of_kind(events, EventKind.TOOL_RESULT)
    assert [(r.data["tool"], r.data["is_error"]) for r in results] == [
        ("mcp__notes__note", False),
        ("learned", True),
        ("done", True),
        ("done", False),
    ]
    assert "No such tool available" in results[1].data["content"]
    assert "summary: Field required" in results[2].text
    summary = parser.summary
    assert summary.saw_result and not summary.is_error and not summary.rate_limited
    assert summary.turns == 5 and summary.cost_usd == pytest.approx(0.087108)
    assert summary.input_tokens > 0 and summary.output_tokens > 0
    assert summary.result_text == "All done." and summary.error is None
    assert summary.permission_denials == []


def test_init_reports_model_servers_and_tools() -> None:
    parser = ClaudeStreamParser()
    init = feed_file(parser, "claude_success.jsonl")[0]
    assert init.data["model"] == parser.model == "claude-opus-5-5"
    assert init.data["mcp_servers"] == [
        {"name": "ralph", "status": "connected"},
        {"name": "notes", "status": "connected"},
    ]
    assert "mcp__ralph__done" in init.data["tools"] and "mcp__ralph__learned" not in init.data["tools"]
    assert init.data["permission_mode"] == "acceptEdits"
    assert "ralph connected" in init.text


def test_a_failed_mcp_server_is_an_error_event_and_the_session_error() -> None:
    parser = ClaudeStreamParser()
    line = json.dumps(
        {
            "type": "system",
            "subtype": "init",
            "model": "m",
            "mcp_servers": [{"name": "ralph", "status": "failed"}],
        }
    )
    events = parser.feed(line)
    assert kinds(events) == [EventKind.INIT, EventKind.ERROR]
    assert parser.summary.error == "MCP server 'ralph' failed to connect"


def test_a_429_is_a_retry_then_a_rate_limited_error_result() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_429.jsonl")
    assert kinds(events) == [
        EventKind.INIT,
        EventKind.RETRY,
        EventKind.ERROR,
        EventKind.RESULT,
        EventKind.COST,
    ]
    retry = events[1]
    assert retry.data["status"] == 429 and retry.data["attempt"] == 1 and retry.data["max_retries"] == 1
    assert retry.data["rate_limit"] is True and 0 < retry.data["delay_s"] < 5
    assert events[2].data["status"] == 429 and events[2].data["rate_limit"] is True
    assert "429" in events[2].text
    summary = parser.summary
    assert summary.is_error and summary.api_error_status == 429 and summary.rate_limited
    assert summary.resets_at is None  # an API 429 says nothing about when; the loop waits its setting
    assert summary.cost_usd == 0


def test_a_529_counts_as_rate_limited_too() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_529.jsonl")
    assert of_kind(events, EventKind.RETRY)[0].data["status"] == 529
    assert parser.summary.api_error_status == 529 and parser.summary.rate_limited and parser.summary.is_error


def test_max_turns_is_an_error_result_that_is_not_a_rate_limit() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_max_turns.jsonl")
    result = of_kind(events, EventKind.RESULT)[0]
    assert result.data["subtype"] == "error_max_turns" and result.data["is_error"] is True
    summary = parser.summary
    assert summary.is_error and not summary.rate_limited and summary.api_error_status is None
    assert summary.error == "Reached maximum number of turns (1)"
    assert summary.result_text is None and summary.turns == 2


def test_read_only_session_shows_the_refused_edit_tools() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_read_only.jsonl")
    results = of_kind(events, EventKind.TOOL_RESULT)
    assert [(r.data["tool"], r.data["is_error"]) for r in results] == [
        ("Bash", True),
        ("Write", True),
        ("stuck", False),
    ]
    assert events[0].data["permission_mode"] == "dontAsk"
    assert not {"Bash", "Edit", "Write"} & set(events[0].data["tools"])


def test_a_permission_denial_is_reported_once_though_two_events_carry_it() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_denied.jsonl")
    denials = of_kind(events, EventKind.PERMISSION_DENIED)
    assert len(denials) == 1
    assert denials[0].data["tool"] == "flag" and denials[0].data["name"] == "mcp__ralph__flag"
    assert "haven't granted" in (denials[0].data["message"] or "")
    assert parser.summary.permission_denials == ["mcp__ralph__flag"]


def test_a_denial_only_in_the_result_is_reported_there() -> None:
    parser = ClaudeStreamParser()
    result = {
        "is_error": False,
        "permission_denials": [{"tool_name": "WebFetch", "tool_use_id": "t1", "tool_input": {}}],
        "type": "result",
        "subtype": "success",
    }
    events = parser.feed(json.dumps(result))
    assert kinds(events) == [EventKind.PERMISSION_DENIED, EventKind.RESULT, EventKind.COST]
    assert parser.summary.permission_denials == ["WebFetch"]


def test_a_usage_limit_event_gives_the_time_it_resets() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_usage_limit.jsonl")
    assert kinds(events)[:3] == [EventKind.INIT, EventKind.RATE_LIMIT, EventKind.ERROR]
    limit = events[1]
    assert limit.data["rejected"] is True and limit.data["limit"] == "five_hour"
    assert limit.data["resets_at"] == RESET.isoformat()
    assert parser.summary.rate_limited and parser.summary.resets_at == RESET
    assert parser.summary.api_error_status == 429


def test_the_legacy_usage_limit_text_alone_marks_the_session_rate_limited() -> None:
    parser = ClaudeStreamParser()
    events = feed_file(parser, "claude_usage_limit_legacy.jsonl")
    assert parser.summary.api_error_status is None
    assert parser.summary.rate_limited and parser.summary.resets_at == RESET
    assert of_kind(events, EventKind.ERROR)[0].data["rate_limit"] is True


def test_a_warning_about_a_coming_limit_does_not_stop_the_session() -> None:
    parser = ClaudeStreamParser()
    info = {"status": "allowed_warning", "resetsAt": RESET_EPOCH, "rateLimitType": "seven_day"}
    events = parser.feed(json.dumps({"type": "rate_limit_event", "rate_limit_info": info}))
    assert kinds(events) == [EventKind.RATE_LIMIT] and events[0].data["rejected"] is False
    assert not parser.summary.rate_limited
    assert (
        parser.feed(json.dumps({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}})) == []
    )


def test_the_agent_quoting_a_limit_message_is_not_a_limit() -> None:
    parser = ClaudeStreamParser()
    said = "The docs say: You've hit your session limit · resets 3pm"
    message = {"type": "assistant", "message": {"model": "m", "content": [{"type": "text", "text": said}]}}
    result = {"type": "result", "subtype": "success", "is_error": False, "result": said}
    events = parser.feed(json.dumps(message)) + parser.feed(json.dumps(result))
    assert kinds(events)[0] is EventKind.ASSISTANT_TEXT
    assert not parser.summary.rate_limited


def test_a_run_that_gave_up_retrying_429s_without_a_status_is_still_rate_limited() -> None:
    parser = ClaudeStreamParser()
    retry = {"type": "system", "subtype": "api_retry", "attempt": 10, "max_retries": 10, "error_status": 429}
    parser.feed(json.dumps(retry))
    parser.feed(json.dumps({"type": "result", "subtype": "success", "is_error": True, "result": "API Error"}))
    assert parser.summary.rate_limited


def test_network_retries_have_no_status_and_are_not_rate_limits() -> None:
    parser = ClaudeStreamParser()
    retry = {"type": "system", "subtype": "api_retry", "attempt": 2, "error_status": None, "error": "unknown"}
    (event,) = parser.feed(json.dumps(retry))
    assert (
        event.kind is EventKind.RETRY and event.data["status"] is None and event.data["rate_limit"] is False
    )
    assert "unreachable" in event.text


def test_malformed_and_foreign_lines_become_raw_events_and_never_raise() -> None:
    parser = ClaudeStreamParser()
    lines = [
        "not json at all",
        '{"type": "assistant", "message": ',
        "[1, 2, 3]",
        '{"no_type": true}',
        '{"type": "assistant", "message": {"content": "a string, not blocks"}}',
        '{"type": "user", "message": {"content": [{"type": "tool_result", "content": 4, "is_error": "y"}]}}',
        '{"type": "result", "num_turns": "9", "total_cost_usd": "x", "usage": [], "permission_denials": 7}',
        '{"type": "something_new", "subtype": "x"}',
        "",
        "   ",
    ]
    events = [event for line in lines for event in parser.feed(line)]
    raw = of_kind(events, EventKind.STDERR)
    assert [event.text for event in raw] == [line.strip() for line in lines[:4]]
    assert all(event.data["raw"] for event in raw)
    result = of_kind(events, EventKind.TOOL_RESULT)[0]
    assert result.data["is_error"] is False and result.data["tool"] == "?"
    assert parser.summary.saw_result and parser.summary.turns == 9 and parser.summary.cost_usd == 0


def test_result_keys_in_any_order_are_read() -> None:
    parser = ClaudeStreamParser()
    line = (
        '{"total_cost_usd": 1.5, "num_turns": 3, "is_error": false, "subtype": "success", "type": "result"}'
    )
    parser.feed(line)
    assert (parser.summary.cost_usd, parser.summary.turns, parser.summary.saw_result) == (1.5, 3, True)


def test_a_parser_never_decides_that_a_task_is_done() -> None:
    parser = ClaudeStreamParser()
    prose = "DONE. The task is complete. <promise>COMPLETE</promise>"
    message = {"type": "assistant", "message": {"content": [{"type": "text", "text": prose}]}}
    parser.feed(json.dumps(message))
    parser.feed(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": prose}))
    fields = set(vars(parser.summary))
    assert not {name for name in fields if "done" in name or "complete" in name}
    assert parser.summary.result_text == prose  # reported, not interpreted


def test_tool_names_lose_only_the_ralph_prefix() -> None:
    assert tool_short_name("mcp__ralph__done") == "done"
    assert tool_short_name("mcp__notes__note") == "mcp__notes__note"
    assert tool_short_name("Bash") == "Bash"


# --- limit texts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Claude AI usage limit reached|1900000000", RESET),
        ("Claude AI usage limit reached|1900000000000", RESET),
        ("You've hit your limit · resets 3pm (UTC)", datetime(2026, 11, 22, 15, 0, tzinfo=UTC)),
        ("You've hit your limit · resets 9:30am (UTC)", datetime(2026, 11, 23, 9, 30, tzinfo=UTC)),
        ("You've hit your limit · resets 3pm (Europe/Berlin)", datetime(2026, 11, 22, 14, 0, tzinfo=UTC)),
        (
            "You've hit your weekly limit · resets Nov 25, 3pm (UTC)",
            datetime(2026, 11, 25, 15, 0, tzinfo=UTC),
        ),
        ("You've hit your weekly limit · resets Jan 2 at 1am (UTC)", datetime(2027, 1, 2, 1, 0, tzinfo=UTC)),
        ("try again in 2 hours 5 minutes", NOW + timedelta(hours=2, minutes=5)),
        ("Try again in 3 days", NOW + timedelta(days=3)),
        ("You've hit your limit · resets 3pm (Not/AZone)", None),
        ("You've hit your limit", None),
        ("resets 13pm (UTC)", None),
    ],
)
def test_reset_times_are_read_from_limit_messages(text: str, expected: datetime | None) -> None:
    assert parse_resets_at(text, NOW) == expected


def test_a_clock_time_without_a_zone_is_local_time() -> None:
    found = parse_resets_at("You've hit your limit · resets 11pm", NOW)
    assert found is not None
    assert (found.astimezone().hour, found.astimezone().minute) == (23, 0)
    assert timedelta(0) < found - NOW <= timedelta(days=1)


def test_codex_absolute_reset_time_is_local_time() -> None:
    local = datetime(2030, 3, 17, 17, 46).astimezone()
    found = parse_resets_at("…or try again at Mar 17th, 2030 5:46 PM.", NOW)
    assert found == local.astimezone(UTC)


@pytest.mark.parametrize(
    ("text", "is_limit"),
    [
        ("You've hit your session limit · resets 3pm", True),
        ("You’ve hit your usage limit. Upgrade to Pro", True),
        ("Claude AI usage limit reached|1", True),
        ("You're out of extra usage · resets 4pm", True),
        ("API Error: 500 Internal server error", False),
        ("Reached maximum number of turns (3)", False),
    ],
)
def test_usage_limit_texts_are_recognised(text: str, is_limit: bool) -> None:
    assert is_usage_limit_text(text) is is_limit


# --- Codex -------------------------------------------------------------------------------------------


def test_a_codex_session_yields_calls_results_text_and_usage() -> None:
    parser = CodexStreamParser()
    events = feed_file(parser, "codex_success.jsonl")
    assert kinds(events) == [
        EventKind.INIT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_RESULT,
        EventKind.ASSISTANT_TEXT,
        EventKind.RESULT,
        EventKind.COST,
    ]
    assert parser.thread_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    calls = of_kind(events, EventKind.TOOL_CALL)
    assert [c.data["tool"] for c in calls] == ["shell", "flag", "done", "done"]
    assert calls[1].data["input"] == {"what": "odd input", "severity": "info", "category": "ambiguity"}
    results = of_kind(events, EventKind.TOOL_RESULT)
    assert [(r.data["tool"], r.data["is_error"]) for r in results] == [
        ("shell", False),
        ("flag", False),
        ("done", True),
        ("done", False),
        ("file_change", False),
    ]
    assert "summary: Field required" in results[2].text and "src/parser.py" in results[4].text
    summary = parser.summary
    assert (summary.turns, summary.input_tokens, summary.output_tokens, summary.cost_usd) == (1, 246, 90, 0.0)
    assert summary.saw_result and not summary.is_error and not summary.rate_limited
    assert summary.result_text == "I am done with the parser."


def test_codex_429_is_a_rate_limited_failed_turn() -> None:
    parser = CodexStreamParser()
    events = feed_file(parser, "codex_429.jsonl")
    assert kinds(events) == [EventKind.INIT, EventKind.RATE_LIMIT, EventKind.RESULT]
    summary = parser.summary
    assert summary.is_error and summary.rate_limited and summary.api_error_status == 429
    assert summary.error == "exceeded retry limit, last status: 429 Too Many Requests"


def test_codex_overload_retries_then_fails_rate_limited() -> None:
    parser = CodexStreamParser()
    events = feed_file(parser, "codex_503.jsonl")
    assert kinds(events) == [EventKind.INIT, EventKind.RETRY, EventKind.RATE_LIMIT, EventKind.RESULT]
    assert events[1].data["attempt"] == 1 and events[1].data["max_retries"] == 1
    assert events[1].data["status"] == 503
    assert parser.summary.rate_limited and parser.summary.api_error_status == 503


def test_codex_usage_limit_gives_the_time_it_resets() -> None:
    parser = CodexStreamParser()
    feed_file(parser, "codex_usage_limit.jsonl")
    expected = datetime(2030, 3, 17, 17, 46).astimezone().astimezone(UTC)
    assert parser.summary.rate_limited and parser.summary.resets_at == expected
    assert parser.summary.api_error_status == 429


def test_codex_other_errors_are_errors_not_limits() -> None:
    parser = CodexStreamParser()
    events = parser.feed(json.dumps({"type": "error", "message": "unexpected status 401 Unauthorized"}))
    events += parser.feed(
        json.dumps({"type": "item.completed", "item": {"type": "error", "message": "boom"}})
    )
    assert kinds(events) == [EventKind.ERROR, EventKind.ERROR]
    assert not parser.summary.rate_limited


def test_codex_malformed_lines_become_raw_events() -> None:
    parser = CodexStreamParser()
    events = parser.feed("Reading additional input from stdin...") + parser.feed('{"type": "item.completed"}')
    assert kinds(events) == [EventKind.STDERR]
    assert parser.feed('{"type": "turn.completed", "usage": "none"}')[0].kind is EventKind.RESULT


# --- a command template's output ---------------------------------------------------------------------


def test_plain_text_lines_are_assistant_text() -> None:
    parser = AutoStreamParser()
    events = parser.feed("Working on it; $(not run)") + parser.feed("") + parser.feed("{not json")
    assert [(e.kind, e.text) for e in events] == [
        (EventKind.ASSISTANT_TEXT, "Working on it; $(not run)"),
        (EventKind.ASSISTANT_TEXT, "{not json"),
    ]
    assert not parser.summary.saw_result


def test_json_lines_are_read_as_claude_or_codex_events_into_one_summary() -> None:
    parser = AutoStreamParser()
    events: list[LiveEvent] = []
    for line in (FIXTURES / "claude_max_turns.jsonl").read_text(encoding="utf-8").splitlines():
        events += parser.feed(line)
    assert parser.summary.error == "Reached maximum number of turns (1)"
    events += parser.feed('{"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 2}}')
    assert of_kind(events, EventKind.TOOL_CALL)[0].data["tool"] == "flag"
    assert parser.summary.output_tokens > 2 and parser.summary.turns == 3
    assert parser.feed('{"type": 1}')[0].kind is EventKind.ASSISTANT_TEXT


def test_a_bug_in_reading_one_event_is_logged_and_the_line_kept(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(ClaudeStreamParser):
        def handle(self, event: dict[str, object]) -> list[LiveEvent]:
            raise KeyError("surprise")

    parser = Broken()
    (event,) = parser.feed('{"type": "assistant"}')
    assert event.kind is EventKind.STDERR and event.data == {"raw": True, "unreadable": True}
    assert event.text == '{"type": "assistant"}'
    assert "could not read a Claude Code event" in caplog.text and "KeyError" in caplog.text


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("unexpected status 429 Too Many Requests: slow down", (True, 429)),
        ("status 503 Service Unavailable: the model is overloaded", (True, 503)),
        ("You've hit your usage limit. Upgrade to Pro or try again in 2 hours", (True, 429)),
        ("the model is overloaded", (True, None)),
        ("rate limit mentioned but status 500 internal error", (False, 500)),
        ("stream disconnected before completion", (False, None)),
    ],
)
def test_an_error_text_says_whether_it_is_a_limit_and_its_status(
    message: str, expected: tuple[bool, int | None]
) -> None:
    assert limit_in_error_text(message) == expected
