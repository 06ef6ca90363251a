"""The project's checks (DESIGN §13): what a check is, what its run came to, and what the agent is told.

A check is a command the project names (tests, lint, a type check). After a session's `done` the desk
runs the required ones in the task's worktree; the task enters review only when they pass. Pure: the
runner lives in `ralph_desk.checks`, the records in the store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.domain.postprocess import Decision
from ralph_desk.domain.setting_bounds import MAX_CHECK_TIMEOUT_S, MAX_COMMAND_TEXT, MAX_SESSION_TIMEOUT_S
from ralph_desk.domain.tools import NAME_PATTERN

DEFAULT_TIMEOUT_S = 600
SETUP_NAME = "setup"
"""The name the setup command's runs are recorded under (no check may take it)."""
TAIL_LIMIT = 4_000
"""The most of a check's output kept in the database and put in a prompt (the log file has it all)."""
TAIL_LINES = 40
MAX_NAMED_FAILURES = 20
FIRST_ERROR_LINES = 15
FAILED_HEADING = "# CHECKS FAILED after your last session"
"""How a prompt opens when the task's required checks failed after its last done."""
REPORT_LIMIT = 12_000
"""The most the opening of a prompt says about failed checks, whatever their number."""


class Check(BaseModel):
    """One check: a named command run through the platform's shell in the task's worktree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="a name: 1-64 characters of a-z, 0-9, '-', '_'")
    run: str = Field(min_length=1, max_length=MAX_COMMAND_TEXT, description="the command line")
    timeout_s: int = Field(DEFAULT_TIMEOUT_S, ge=1, le=MAX_CHECK_TIMEOUT_S, strict=True)
    required: bool = Field(True, strict=True)

    @field_validator("run")
    @classmethod
    def _one_command_line(cls, value: str) -> str:
        if not value.strip() or "\x00" in value:
            raise ValueError("a command line: not blank, no NUL character")
        return value


def setup_check(command: str) -> Check:
    """The setup command run like a check: advisory, with as long as a session may take."""
    return Check(name=SETUP_NAME, run=command, timeout_s=int(MAX_SESSION_TIMEOUT_S), required=False)


class CheckStatus(StrEnum):
    """Where one run of one check stands."""

    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    ERROR = "error"
    """It could not be started (no shell, no folder)."""
    STOPPED = "stopped"
    """The loop was stopped while it ran: it says nothing about the work."""


FAILING = frozenset({CheckStatus.FAILED, CheckStatus.TIMED_OUT, CheckStatus.ERROR})


class CheckPurpose(StrEnum):
    """Why a check ran."""

    SESSION = "session"
    """After a session's `done`, in the task's worktree: the gate before review."""
    RERUN = "rerun"
    """Run again by a person (the window, `ralph-desk checks run --task`)."""
    MERGE = "merge"
    """On the task's work merged with the current base, before the merge queue moves the base."""
    PROJECT = "project"
    """In the project folder, for no task (`ralph-desk checks run`)."""


class Verdict(StrEnum):
    """What a task's latest check runs say about its work."""

    NONE = "none"
    """The project has no required checks."""
    NOT_RUN = "not_run"
    PASSED = "passed"
    FAILED = "failed"


@dataclass(frozen=True)
class CheckRun:
    """One run of one check, as recorded: the evidence shown wherever the task's review is."""

    id: int
    task_id: int | None
    session_id: str | None
    name: str
    command: str
    required: bool
    purpose: CheckPurpose
    status: CheckStatus
    exit_code: int | None
    duration_s: float | None
    tail: str
    log_path: str | None
    started_at: datetime
    commit: str | None = None
    """The commit whose tree was checked (the merged result's, for a merge-queue run)."""

    @property
    def failing(self) -> bool:
        """Whether this run failed, timed out or could not start."""
        return self.status in FAILING

    @property
    def finished(self) -> bool:
        """Whether the run has ended."""
        return self.status is not CheckStatus.RUNNING


@dataclass(frozen=True)
class Outcome:
    """How one check's process ended, before it is recorded."""

    status: CheckStatus
    exit_code: int | None
    duration_s: float
    tail: str


def required_failures(runs: Iterable[CheckRun]) -> list[CheckRun]:
    """The runs of required checks that failed, in their order."""
    return [run for run in runs if run.required and run.failing]


def verdict(checks: Sequence[Check], latest: Sequence[CheckRun]) -> Verdict:
    """What the latest run of each required check says (a check never run: NOT_RUN)."""
    required = [check.name for check in checks if check.required]
    if not required:
        return Verdict.NONE
    by_name = {run.name: run for run in latest}
    runs = [by_name.get(name) for name in required]
    if any(run is not None and run.failing for run in runs):
        return Verdict.FAILED
    if any(run is None or run.status is not CheckStatus.PASSED for run in runs):
        return Verdict.NOT_RUN
    return Verdict.PASSED


def gate(decision: Decision, failed: Sequence[CheckRun], stuck_threshold: int) -> Decision:
    """A `done` whose required checks failed is re-queued as stuck (`failed` at the threshold)."""
    if not failed or decision.status not in (TaskStatus.DONE, TaskStatus.IN_REVIEW):
        return decision
    stuck_count = decision.stuck_count + 1
    names = ", ".join(failure_phrase(run) for run in failed)
    if stuck_count >= stuck_threshold:
        status = TaskStatus.FAILED
        reason = f"checks failed after done ({names}): stuck {stuck_count} times in a row, so the task failed"
    else:
        status = TaskStatus.PENDING
        reason = (
            f"checks failed after done ({names}): re-queued as pending with the failures in its next prompt"
        )
    return replace(
        decision,
        status=status,
        outcome=SessionOutcome.CHECKS_FAILED,
        stuck_count=stuck_count,
        counts_as_stuck=True,
        reasons=(*decision.reasons, reason),
    )


def failure_phrase(run: CheckRun) -> str:
    """How a run failed, in a few words (`tests exit 1`, `lint timed out`)."""
    if run.status is CheckStatus.TIMED_OUT:
        return f"{run.name} timed out"
    if run.status is CheckStatus.ERROR:
        return f"{run.name} could not start"
    return f"{run.name} exit {run.exit_code}"


def failure_report(failed: Sequence[CheckRun]) -> str:
    """The next prompt's opening: each failed check, its command, exit and the useful tail of its output."""
    parts = [
        FAILED_HEADING,
        "You called done, and the desk ran the project's checks in your worktree. These required checks "
        "failed, so the task came back to you. Fix what they report, run them yourself, and only then call "
        "done again.",
    ]
    for run in failed:
        how = {
            CheckStatus.TIMED_OUT: f"timed out after {run.duration_s or 0:.0f} s and was killed",
            CheckStatus.ERROR: "could not be started",
        }.get(run.status, f"exit code {run.exit_code}")
        block = f"## {run.name}: `{run.command}` — {how}"
        if run.tail.strip():
            block += "\n\n```text\n" + run.tail.replace("```", "ʼʼʼ") + "\n```"
        parts.append(block)
    text = "\n\n".join(parts)
    return text if len(text) <= REPORT_LIMIT else text[:REPORT_LIMIT] + "\n… (the rest is in .ralph/logs/)"


def listing(checks: Sequence[Check]) -> str:
    """The prompt's list of the checks the desk runs after `done`, so the agent runs them first."""
    if not checks:
        return ""
    lines = [
        "## Checks",
        "After you call done, the desk runs these commands in your working directory; the task goes to "
        "review only when every required one passes. Run them yourself before calling done.",
    ]
    for check in checks:
        kind = "required" if check.required else "advisory"
        lines.append(f"- {check.name} ({kind}, {check.timeout_s} s): `{check.run}`")
    return "\n".join(lines)


_FAILURE_LINE = re.compile(
    r"^(FAILED |FAIL[: ]|ERROR |not ok |✗|×|\s*●|--- FAIL|.*\bfailed\b.*::)", re.IGNORECASE
)
_ERROR_START = re.compile(
    r"(Traceback \(most recent call last\)|\berror\b[:\[]|\bError:|^E\s{3}|AssertionError|panicked at)",
    re.IGNORECASE,
)


def useful_tail(output: str, limit: int = TAIL_LIMIT) -> str:
    """What of a check's output helps: the failing tests it named, its first error, and its last lines."""
    lines = [_clip(line) for line in output.splitlines()]
    cut = max(0, len(lines) - TAIL_LINES)
    earlier = lines[:cut]
    head: list[str] = []
    failures = [line for line in earlier if _FAILURE_LINE.match(line)][:MAX_NAMED_FAILURES]
    if failures:
        head += ["[failures named earlier]", *failures]
    first_error = next((index for index, line in enumerate(earlier) if _ERROR_START.search(line)), None)
    if first_error is not None:
        head += ["[first error]", *lines[first_error : min(first_error + FIRST_ERROR_LINES, cut)]]
    if head:
        head.append("[last lines]")
    front = "\n".join(head)[: limit // 2]
    back = "\n".join(lines[cut:])
    room = limit - len(front) - 1
    if len(back) > room:
        back = "…" + back[-(room - 1) :]
    return f"{front}\n{back}" if front else back


def _clip(line: str, width: int = 400) -> str:
    return line if len(line) <= width else line[:width] + " …"
