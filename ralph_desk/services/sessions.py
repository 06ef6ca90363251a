"""Agent sessions and loop runs: what the loop started, what it cost and how it ended."""

from __future__ import annotations

import builtins
import os
import socket
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from pydantic import BaseModel

from ralph_desk.domain.enums import LoopState, Recipe, SessionOutcome
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import AgentSession, LoopRun
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.inputs import (
    LoopRunChange,
    LoopRunStart,
    SessionChange,
    SessionQuery,
    SessionStart,
    columns,
    given,
)
from ralph_desk.store import sessions as store
from ralph_desk.store.database import Database
from ralph_desk.store.writes import LoopRunWrite, SessionWrite, checked

M = TypeVar("M", bound=BaseModel)

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


def _changes(changes: Mapping[str, Any], model: type[M], owner: str) -> dict[str, Any]:
    """The columns of `changes`, checked as `model`'s fields; an unknown name is refused listing them."""
    unknown = sorted(set(changes) - set(model.model_fields))
    if unknown:
        raise InvalidValueError("field", unknown[0], "one of " + ", ".join(model.model_fields))
    return columns(check.arguments(model, changes, owner))


class SessionService:
    """Record agent sessions and loop runs, and read them back for the history and the dashboard."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def start_session(
        self,
        id: str,
        task_id: int | None,
        recipe: Recipe,
        agent: str,
        model: str | None = None,
        loop_run_id: int | None = None,
        iteration: int | None = None,
        discipline: str | None = None,
        feature: str | None = None,
        head_before: str | None = None,
        started_at: datetime | None = None,
        transcript_path: str | None = None,
        sandbox: str | None = None,
        sandbox_note: str | None = None,
    ) -> AgentSession:
        """Record that an agent session started (outcome `running`); `started_at` is now unless given.

        `transcript_path` is where its transcript is being written (the window follows it as it grows);
        `sandbox` the tool that confines it (None: unconfined), `sandbox_note` what it may touch or why not.
        """
        values = {
            "id": id,
            "task_id": task_id,
            "recipe": recipe,
            "agent": agent,
            "model": model,
            "loop_run_id": loop_run_id,
            "iteration": iteration,
            "discipline": discipline,
            "feature": feature,
            "head_before": head_before,
            "transcript_path": transcript_path,
            "started_at": started_at,
            "sandbox": sandbox,
            "sandbox_note": sandbox_note,
        }
        args = check.arguments(SessionStart, given(values), "start_session")
        fields = checked(columns(args), SessionWrite)
        fields["outcome"] = SessionOutcome.RUNNING.value
        fields["started_at"] = args.started_at or _now()
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
        fields = _changes(changes, SessionChange, "update_session")
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
        values = {"task_id": task_id, "loop_run_id": loop_run_id, "limit": limit, "offset": offset}
        query = check.arguments(SessionQuery, values, "list")
        with self.db.read() as unit:
            return store.list_sessions(
                unit,
                task_id=query.task_id,
                loop_run_id=query.loop_run_id,
                limit=query.limit,
                offset=query.offset,
            )

    def total_cost(self, loop_run_id: int | None = None) -> float:
        """What every session (of one loop run) cost, in US dollars."""
        with self.db.read() as unit:
            query = check.arguments(SessionQuery, {"loop_run_id": loop_run_id}, "total_cost")
            return store.total_cost(unit, query.loop_run_id)

    def start_loop_run(
        self,
        agent: str,
        max_iterations: int | None = None,
        max_cost_usd: float | None = None,
        allow_edits: bool = False,
        settings: Mapping[str, Any] | None = None,
    ) -> LoopRun:
        """Record that the loop started (state `running`)."""
        values = {
            "agent": agent,
            "max_iterations": max_iterations,
            "max_cost_usd": max_cost_usd,
            "allow_edits": allow_edits,
            "settings": settings,
        }
        args = check.arguments(LoopRunStart, given(values), "start_loop_run")
        fields: LoopRunWrite = {
            "agent": args.agent,
            "max_iterations": args.max_iterations,
            "max_cost_usd": args.max_cost_usd,
            "allow_edits": args.allow_edits,
            "settings": args.settings,
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
        fields = _changes(changes, LoopRunChange, "update_loop_run")
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
        query = check.arguments(SessionQuery, {"limit": limit}, "list_loop_runs")
        with self.db.read() as unit:
            return store.list_loop_runs(unit, query.limit)
