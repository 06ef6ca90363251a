"""Agent sessions and loop runs: what the loop started, what it cost and how it ended."""

from __future__ import annotations

import builtins
import json
import math
import os
import socket
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ralph_desk.domain.enums import CLOSING_VERBS, LoopState, Recipe, SessionOutcome, Verb
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import AgentSession, LoopRun
from ralph_desk.domain.tools import MAX_TEXT
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.store import sessions as store
from ralph_desk.store.database import Database
from ralph_desk.store.writes import LoopRunWrite, SessionWrite, checked

MAX_ID_TEXT = 128
MAX_AGENT = 32
MAX_NAME = 64
MAX_HEAD = 64
MAX_PATH = 4_096
MAX_CHANGED_FILES = 10_000
MAX_LIST = 1_000
TRUNCATED = "\n… (truncated)"

SESSION_FIELDS = (
    "ended_at",
    "exit_code",
    "closing_verb",
    "outcome",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "turns",
    "transcript_path",
    "changed_files",
    "head_after",
    "error",
)
LOOP_RUN_FIELDS = (
    "state",
    "ended_at",
    "iterations",
    "cost_usd",
    "stop_reason",
    "max_iterations",
    "max_cost_usd",
    "settings",
)
CLOSING_ORDER = [verb for verb in Verb if verb in CLOSING_VERBS]
FINAL_LOOP_STATES = frozenset({LoopState.COMPLETED, LoopState.STOPPED, LoopState.FAILED})
LOOP_RUN_LEASE_S = 60.0
MAX_HOST = 255


@dataclass(frozen=True)
class Orphans:
    """What start-up recovery takes back: tasks in_progress and open sessions whose loop is dead."""

    task_ids: list[int]
    session_ids: list[str]


def this_host() -> str:
    """The name this machine records on its loop runs."""
    return socket.gethostname()[:MAX_HOST] or "localhost"


def process_exists(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    if sys.platform == "win32":
        return _windows_process_exists(pid)  # os.kill(pid, 0) would end the process there, not probe it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


if sys.platform == "win32":

    def _windows_process_exists(pid: int) -> bool:
        """Whether OpenProcess finds the process and it has not exited yet."""
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it exists, owned by another user
        try:
            code = ctypes.c_ulong()
            still_active = 259
            return not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)) or code.value == still_active
        finally:
            kernel32.CloseHandle(handle)


def loop_run_is_dead(
    lease: store.LoopRunLease,
    stale_before: datetime,
    host: str,
    running_here: Collection[int] = (),
) -> bool:
    """A loop run is dead when it ended, when its lease ran out, or when its process on this host is gone.

    A run of this very process is alive only while its runner is (`running_here`).
    """
    if lease.ended_at is not None or lease.state in FINAL_LOOP_STATES:
        return True
    if lease.last_seen < stale_before:
        return True
    if lease.host != host or lease.pid is None:
        return False
    if lease.pid == os.getpid():
        return lease.id not in running_here
    return not process_exists(lease.pid)


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _count(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**63 - 1:
        raise InvalidValueError(field, value, "a whole number of 0 or more")
    return value


def _money(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InvalidValueError(field, value, "an amount in US dollars of 0 or more")
    return float(value)


def _exit_code(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise InvalidValueError("exit_code", value, "a whole number (a process exit status)")
    return value


def _changed_files(values: Any) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidValueError("changed_files", values, "a list of file paths")
    if len(values) > MAX_CHANGED_FILES:
        raise InvalidValueError(
            "changed_files", f"<{len(values)} items>", f"at most {MAX_CHANGED_FILES} paths"
        )
    return [
        check.required_text(f"changed_files[{index}]", item, limit=MAX_PATH)
        for index, item in enumerate(values)
    ]


def _error(value: Any) -> str | None:
    """An error text; a very long one (a whole traceback) is cut rather than refused."""
    if isinstance(value, str) and len(value) > MAX_TEXT:
        value = value[: MAX_TEXT - len(TRUNCATED)] + TRUNCATED
    return check.text("error", value)


def _settings(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidValueError("settings", value, "a mapping of setting names to JSON values")
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise InvalidValueError("settings", value, "a mapping of setting names to JSON values") from None
    return dict(value)


def _session_field(key: str, value: Any) -> Any:
    if key == "ended_at":
        return check.moment(key, value)
    if key == "exit_code":
        return _exit_code(value)
    if key == "closing_verb":
        if value is None:
            return None
        return check.choice(key, value, Verb, allowed=CLOSING_ORDER).value
    if key == "outcome":
        return None if value is None else check.choice(key, value, SessionOutcome).value
    if key == "cost_usd":
        return _money(key, value)
    if key in ("input_tokens", "output_tokens", "turns"):
        return _count(key, value)
    if key == "transcript_path":
        return check.text(key, value, limit=MAX_PATH)
    if key == "changed_files":
        return _changed_files(value)
    if key == "head_after":
        return check.text(key, value, limit=MAX_HEAD)
    return _error(value)


def _loop_run_field(key: str, value: Any) -> Any:
    if key == "state":
        return check.choice(key, value, LoopState).value
    if key == "ended_at":
        return None if value is None else check.moment(key, value)
    if key == "iterations":
        return _count(key, value)
    if key == "cost_usd":
        return _money(key, value)
    if key == "max_cost_usd":
        return None if value is None else _money(key, value)
    if key == "max_iterations":
        return check.positive_int(key, value)
    if key == "stop_reason":
        return check.text(key, value)
    return _settings(value)


def _fields(changes: Mapping[str, Any], allowed: Sequence[str], convert: Any) -> dict[str, Any]:
    unknown = sorted(set(changes) - set(allowed))
    if unknown:
        raise InvalidValueError("field", unknown[0], "one of " + ", ".join(allowed))
    return {key: convert(key, value) for key, value in changes.items()}


def _limit(limit: Any, offset: Any = 0) -> tuple[int, int]:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
        raise InvalidValueError("limit", limit, f"a whole number from 1 to {MAX_LIST}")
    return limit, _count("offset", offset)


class SessionService:
    """Record agent sessions and loop runs, and read them back for the history and the dashboard."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def start_session(
        self,
        id: str,
        task_id: int | None,
        recipe: Recipe | str,
        agent: str,
        model: str | None = None,
        loop_run_id: int | None = None,
        iteration: int | None = None,
        discipline: str | None = None,
        feature: str | None = None,
        head_before: str | None = None,
        started_at: datetime | None = None,
        transcript_path: str | None = None,
    ) -> AgentSession:
        """Record that an agent session started (outcome `running`); `started_at` is now unless given.

        `transcript_path` is where its transcript is being written (the window follows it as it grows).
        """
        fields: SessionWrite = {
            "id": check.required_text("id", id, limit=MAX_ID_TEXT),
            "task_id": check.positive_int("task_id", task_id),
            "recipe": check.choice("recipe", recipe, Recipe).value,
            "agent": check.required_text("agent", agent, limit=MAX_AGENT),
            "model": check.text("model", model, limit=MAX_ID_TEXT),
            "loop_run_id": check.positive_int("loop_run_id", loop_run_id),
            "iteration": None if iteration is None else _count("iteration", iteration),
            "discipline": check.text("discipline", discipline, limit=MAX_NAME),
            "feature": check.text("feature", feature, limit=MAX_NAME),
            "head_before": check.text("head_before", head_before, limit=MAX_HEAD),
            "transcript_path": check.text("transcript_path", transcript_path, limit=MAX_PATH),
            "outcome": SessionOutcome.RUNNING.value,
            "started_at": _now() if started_at is None else check.moment("started_at", started_at),
        }
        with self.db.write() as unit:
            if store.get(unit, fields["id"]) is not None:
                raise ConflictError(f"an agent session {id!r} already exists; every session needs a new id")
            if task_id is not None and not store.task_exists(unit, task_id):
                raise NotFoundError("task", task_id)
            if loop_run_id is not None and store.get_loop_run(unit, loop_run_id) is None:
                raise NotFoundError("loop run", loop_run_id)
            return store.insert(unit, fields)

    def update_session(self, id: str, **changes: Any) -> AgentSession:
        """Change fields of a session while it runs (cost, tokens, turns…)."""
        fields = _fields(changes, SESSION_FIELDS, _session_field)
        with self.db.write() as unit:
            session = store.update(unit, id, checked(fields, SessionWrite))
            if session is None:
                raise NotFoundError("agent session", id)
            return session

    def finish_session(self, id: str, **fields: Any) -> AgentSession:
        """Record how a session ended; `ended_at` is now unless given."""
        fields.setdefault("ended_at", _now())
        return self.update_session(id, **fields)

    def get(self, id: str) -> AgentSession:
        """One agent session, by id."""
        with self.db.read() as unit:
            session = store.get(unit, id)
        if session is None:
            raise NotFoundError("agent session", id)
        return session

    def list(
        self, task_id: int | None = None, loop_run_id: int | None = None, limit: int = 50, offset: int = 0
    ) -> Listing[AgentSession]:
        """Agent sessions, newest first, optionally of one task or one loop run."""
        checked_limit, checked_offset = _limit(limit, offset)
        with self.db.read() as unit:
            return store.list_sessions(
                unit,
                task_id=check.positive_int("task_id", task_id),
                loop_run_id=check.positive_int("loop_run_id", loop_run_id),
                limit=checked_limit,
                offset=checked_offset,
            )

    def total_cost(self, loop_run_id: int | None = None) -> float:
        """What every session (of one loop run) cost, in US dollars."""
        with self.db.read() as unit:
            return store.total_cost(unit, check.positive_int("loop_run_id", loop_run_id))

    def start_loop_run(
        self,
        agent: str,
        max_iterations: int | None = None,
        max_cost_usd: float | None = None,
        allow_edits: bool = False,
        settings: Mapping[str, Any] | None = None,
    ) -> LoopRun:
        """Record that the loop started (state `running`)."""
        if not isinstance(allow_edits, bool):
            raise InvalidValueError("allow_edits", allow_edits, "true or false")
        fields: LoopRunWrite = {
            "agent": check.required_text("agent", agent, limit=MAX_AGENT),
            "max_iterations": check.positive_int("max_iterations", max_iterations),
            "max_cost_usd": None if max_cost_usd is None else _money("max_cost_usd", max_cost_usd),
            "allow_edits": allow_edits,
            "settings": _settings(settings),
            "state": LoopState.RUNNING.value,
            "started_at": _now(),
            "host": this_host(),
            "pid": os.getpid(),
        }
        with self.db.write() as unit:
            fields["heartbeat_at"] = store.database_now(unit)
            return store.insert_loop_run(unit, fields)

    def renew_lease(self, id: int) -> None:
        """Tell other runners this loop run is still alive (its runner calls this every few seconds)."""
        with self.db.write() as unit:
            if not store.renew_lease(unit, id):
                raise NotFoundError("loop run", id)

    def orphans(self, running_here: Collection[int] = (), lease_s: float = LOOP_RUN_LEASE_S) -> Orphans:
        """The in_progress tasks and open sessions no live loop holds (see `loop_run_is_dead`).

        An open session is dead when its loop run is, or when it holds a task outside any loop run. A task
        in_progress is orphaned when its open sessions are all dead, or when it has none and was claimed
        longer than a lease ago (a live runner starts the session a moment after the claim).
        """
        with self.db.read() as unit:
            now = store.database_now(unit)
            tasks = store.in_progress_tasks(unit)
            sessions = store.open_sessions(unit)
            run_ids = {session.loop_run_id for session in sessions if session.loop_run_id is not None}
            leases = store.loop_run_leases(unit, run_ids)
        stale_before = now - timedelta(seconds=lease_s)
        host = this_host()
        dead_runs = {
            lease.id for lease in leases if loop_run_is_dead(lease, stale_before, host, running_here)
        }
        dead = [
            session
            for session in sessions
            if session.loop_run_id in dead_runs
            or (session.loop_run_id is None and session.task_id is not None)
        ]
        dead_ids = {session.id for session in dead}
        held = {session.task_id for session in sessions if session.id not in dead_ids}
        abandoned = {session.task_id for session in dead}
        task_ids = [
            task.id
            for task in tasks
            if task.id not in held and (task.id in abandoned or task.since < stale_before)
        ]
        return Orphans(sorted(task_ids), sorted(dead_ids))

    def update_loop_run(self, id: int, **changes: Any) -> LoopRun:
        """Change a loop run's state, counters or settings; a final state stamps `ended_at`."""
        fields = _fields(changes, LOOP_RUN_FIELDS, _loop_run_field)
        with self.db.write() as unit:
            current = store.get_loop_run(unit, id)
            if current is None:
                raise NotFoundError("loop run", id)
            final = fields.get("state") in FINAL_LOOP_STATES
            if final and "ended_at" not in fields and current.ended_at is None:
                fields["ended_at"] = _now()
            loop_run = store.update_loop_run(unit, id, checked(fields, LoopRunWrite))
            assert loop_run is not None
            return loop_run

    def get_loop_run(self, id: int) -> LoopRun:
        """One loop run, by id."""
        with self.db.read() as unit:
            loop_run = store.get_loop_run(unit, id)
        if loop_run is None:
            raise NotFoundError("loop run", id)
        return loop_run

    def latest_loop_run(self) -> LoopRun | None:
        """The loop run started last, if any."""
        runs = self.list_loop_runs(limit=1)
        return runs[0] if runs else None

    def list_loop_runs(self, limit: int = 20) -> builtins.list[LoopRun]:
        """Loop runs, newest first."""
        checked_limit, _ = _limit(limit)
        with self.db.read() as unit:
            return store.list_loop_runs(unit, checked_limit)
