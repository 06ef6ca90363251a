"""Session transcripts: the log of raw lines and events, the JSON summary, and no credential in either."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser
from ralph_desk.loop.model import AgentCommand, EventKind, LiveEvent, SessionPlan, StreamSummary
from ralph_desk.loop.transcript import Transcript, redact, shown_argv

TOKEN = "tok_ZYX-987_secret"
FIXTURES = Path(__file__).parent / "fixtures"
STARTED = datetime(2026, 11, 22, 14, 5, 9).astimezone()


def plan() -> SessionPlan:
    context = SessionContext(recipe=Recipe.TASK_EXECUTION, task_id=3, session_id="s-1")
    return SessionPlan("s-1", Recipe.TASK_EXECUTION, context, frozenset({"done", "stuck"}), iteration=2)


def endpoint() -> SessionEndpoint:
    return SessionEndpoint("http://127.0.0.1:1/mcp", TOKEN, SessionContext())


def test_files_are_named_by_start_time_and_name(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "logs", "s-1/../x y", started=STARTED)
    path = transcript.close()
    assert path == tmp_path / "logs" / "20261122-140509_s-1_.._x_y.log"
    assert transcript.summary_path == path.with_suffix(".json") and transcript.summary_path.exists()


def test_a_second_transcript_in_the_same_second_gets_its_own_files(tmp_path: Path) -> None:
    first = Transcript(tmp_path, "s", started=STARTED)
    second = Transcript(tmp_path, "s", started=STARTED)
    assert first.close() != second.close()
    assert second.log_path.name == "20261122-140509_s-2.log"


def test_raw_lines_and_events_are_kept_in_order(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path, "s")
    transcript.raw('{"type": "assistant"}\n')
    transcript.event(
        LiveEvent(EventKind.TOOL_CALL, "done {}\nsecond line", at=datetime(2026, 1, 1, tzinfo=UTC))
    )
    transcript.raw("not json")
    lines = transcript.close().read_text(encoding="utf-8").splitlines()
    assert lines[0] == '{"type": "assistant"}'
    assert (
        lines[1].startswith("# ") and "tool_call" in lines[1] and lines[1].endswith("done {} ⏎ second line")
    )
    assert lines[2] == "not json"


def test_a_whole_recorded_stream_can_be_read_back_from_the_log(tmp_path: Path) -> None:
    parser = ClaudeStreamParser()
    transcript = Transcript(tmp_path, "s")
    for line in (FIXTURES / "claude_success.jsonl").read_text(encoding="utf-8").splitlines():
        transcript.raw(line)
        for event in parser.feed(line):
            transcript.event(event)
    log = transcript.close(summary=parser.summary, exit_code=0).read_text(encoding="utf-8")
    document = json.loads(transcript.summary_path.read_text(encoding="utf-8"))
    first = json.loads((FIXTURES / "claude_success.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert document["agent_session_id"] == first["session_id"] == parser.agent_session_id
    assert document["agent_model"] == "claude-opus-5-5"
    again = ClaudeStreamParser()
    for line in log.splitlines():
        if not line.startswith("# "):
            again.feed(line)
    assert again.summary == parser.summary


def test_no_credential_reaches_the_log_or_the_summary(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path, "s")
    prompt = "Do the task."
    command = AgentCommand(
        argv=[
            "claude",
            "-p",
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "-c",
            f"token={TOKEN}",
            "--",
            prompt,
        ],
        cwd=tmp_path,
    )
    transcript.describe(
        plan(), agent="claude", model="opus", command=command, prompt=prompt, endpoint=endpoint()
    )
    transcript.raw(f'{{"headers": {{"Authorization": "Bearer {TOKEN}"}}}}')
    transcript.raw(f"[stderr] connecting with {TOKEN}")
    transcript.event(LiveEvent(EventKind.ERROR, f"401 for bearer {TOKEN}"))
    log = transcript.close(summary=StreamSummary(error=f"Bearer {TOKEN} refused"), exit_code=1)
    written = log.read_text(encoding="utf-8") + transcript.summary_path.read_text(encoding="utf-8")
    assert TOKEN not in written
    assert written.count("[redacted]") == 6


def test_an_unknown_bearer_token_is_redacted_too() -> None:
    assert redact("Authorization: Bearer abc.DEF_123-x~+/=") == "Authorization: Bearer [redacted]"
    assert redact('"authorization":"bearer q1"') == '"authorization":"bearer [redacted]"'
    assert redact("a bearer of news") == "a bearer [redacted] news"  # over-redacting is the safe side
    assert redact("no secrets here") == "no secrets here"


def test_the_summary_describes_the_session(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path, "s-1", started=STARTED)
    prompt = "x" * 50
    command = AgentCommand(argv=["claude", "-p", "--", prompt], cwd=tmp_path)
    transcript.describe(plan(), agent="claude", model="sonnet", command=command, prompt=prompt)
    summary = StreamSummary(
        cost_usd=0.25, turns=4, rate_limited=True, resets_at=datetime(2030, 1, 1, tzinfo=UTC)
    )
    summary.permission_denials.append("WebFetch")
    transcript.close(summary=summary, exit_code=1, outcome="rate_limited", loop="main")
    document = json.loads(transcript.summary_path.read_text(encoding="utf-8"))
    assert document["session_id"] == "s-1" and document["recipe"] == "task_execution"
    assert (document["agent"], document["model"], document["iteration"]) == ("claude", "sonnet", 2)
    assert document["task_id"] is None and document["tools"] == ["done", "stuck"]
    assert document["argv"] == ["claude", "-p", "--", "<prompt: 50 characters>"]
    assert document["prompt_on_stdin"] is False and document["prompt_characters"] == 50
    assert (document["exit_code"], document["outcome"], document["loop"]) == (1, "rate_limited", "main")
    assert document["stream"]["cost_usd"] == 0.25 and document["stream"]["turns"] == 4
    assert document["stream"]["resets_at"] == "2030-01-01T00:00:00+00:00"
    assert document["stream"]["permission_denials"] == ["WebFetch"]
    assert document["started_at"] == STARTED.isoformat() and document["duration_s"] >= 0
    assert document["log"] == "20261122-140509_s-1.log"


def test_closing_twice_keeps_the_first_summary(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path, "s")
    first = transcript.close(exit_code=0)
    assert transcript.close(exit_code=9) == first
    transcript.raw("late line")
    assert json.loads(transcript.summary_path.read_text(encoding="utf-8"))["exit_code"] == 0
    assert "late line" not in first.read_text(encoding="utf-8")


def test_the_elided_argv_keeps_everything_but_the_prompt() -> None:
    assert shown_argv(["a", "P", "b"], "P", [TOKEN]) == ["a", "<prompt: 1 characters>", "b"]
    assert shown_argv(["a", f"t={TOKEN}"], None, [TOKEN]) == ["a", "t=[redacted]"]


def test_a_transcript_used_as_a_context_records_the_error(tmp_path: Path) -> None:
    try:
        with Transcript(tmp_path, "s") as transcript:
            raise RuntimeError("agent vanished")
    except RuntimeError:
        pass
    assert json.loads(transcript.summary_path.read_text(encoding="utf-8"))["error"] == "agent vanished"
