"""The loop run: its lock, recovery and lease around the one scheduler; the controls a person uses."""

from __future__ import annotations

import asyncio
import logging

from ralph_desk.domain.enums import LoopState, SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.loop.lock import project_lock
from ralph_desk.loop.model import SessionPlan
from ralph_desk.loop.run_parts import RunParts
from ralph_desk.loop.run_state import EventListener, LoopStatus
from ralph_desk.loop.scheduler import Scheduler
from ralph_desk.loop.session import SessionRunner
from ralph_desk.loop.session_end import SessionResult
from ralph_desk.loop.tasks import cancel
from ralph_desk.loop.trust_check import require_trusted_servers
from ralph_desk.services.errors import ServiceError
from ralph_desk.services.sessions import LOOP_RUN_LEASE_S
from ralph_desk.services.workspaces import NoBaseBranchError

__all__ = ["LoopRunner", "LoopStatus", "SessionResult"]

log = logging.getLogger("ralph_desk.loop")

HEARTBEAT_S = LOOP_RUN_LEASE_S / 4

# The loop runs of this process whose runner is alive: recovery on this host tells them from dead ones.
RUNNING_HERE: set[int] = set()


class LoopRunner:
    """Runs sessions in the running asyncio loop until a limit, a stop, or idleness (1..N slots)."""

    def __init__(self, parts: RunParts, exit_when_idle: bool = False) -> None:
        self.parts = parts
        self.services = parts.services
        self.settings = parts.settings
        self.adapter = parts.adapter
        self.state = parts.state
        self.processes = parts.processes
        self.exit_when_idle = exit_when_idle
        self.sessions = SessionRunner(parts)
        self._heartbeat: asyncio.Task[None] | None = None
        self._lock = project_lock(parts.services.paths.ralph)

    @property
    def status(self) -> LoopStatus:
        """The run's status as the window, the CLI and `ralph_status` show it."""
        return self.state.status

    @property
    def results(self) -> list[SessionResult]:
        """What each session of this runner came to, in the order they ended."""
        return self.sessions.results

    def subscribe(self, listener: EventListener) -> None:
        """Receive every live event (stream events, session starts and ends, state changes)."""
        self.state.listeners.append(listener)

    def stop(self) -> None:
        """End the current agents (not counted as stuck) and stop the loop."""
        self.state.stop_requested = True
        self.state.checks_stop.request()
        self.state.wake.set()
        self.processes.terminate()

    def stop_after_session(self) -> None:
        """Let the current sessions end on their own, then stop the loop (at once when none runs)."""
        self.state.stop_after_session = True
        self.state.wake.set()

    def pause(self) -> None:
        """Hold the loop after the current sessions until resume() or stop()."""
        self.state.pause_requested = True

    def resume(self) -> None:
        """Continue a paused loop."""
        self.state.pause_requested = False
        self.state.wake.set()

    def wake(self) -> None:
        """Look for runnable work now (an answer or an approval arrived)."""
        self.state.wake.set()

    async def run_session(self, plan: SessionPlan) -> SessionResult:
        """One agent session outside a loop run (a recipe's session, the understand run)."""
        return await self.sessions.run(plan)

    async def run(self) -> LoopStatus:
        """Run until a limit, a stop, a pause or (when asked) idleness; one loop per project."""
        require_trusted_servers(self.services.paths, self.services.disciplines.list(), self.services.db.url)
        self.adapter.check_available(self.settings)
        # A git project's tasks work on branches of its base: without one, nothing runs (not in the checkout).
        await asyncio.to_thread(self.services.workspaces.require_base)
        self._lock.acquire()
        self.state.open_record()
        run_id: int | None = None
        try:
            run_id = await self._start()
            await Scheduler(self.parts, self.sessions, self.exit_when_idle).drive()
        except NoBaseBranchError as error:  # the base branch went away while the loop ran
            log.error("the loop stopped: %s", error)
            self.state.set_state(LoopState.FAILED, f"the loop stopped: {error}")
            raise
        except Exception as error:
            log.exception("the loop failed")
            self.state.set_state(LoopState.FAILED, f"the loop failed: {error}")
            raise
        finally:
            await cancel(self._heartbeat)
            self._heartbeat = None
            await self.processes.close()
            if run_id is not None:
                RUNNING_HERE.discard(run_id)
            await self.state.close_record()
            self._lock.release()
        return self.status

    async def _start(self) -> int:
        """Recover what a dead loop left, merge what waits, record the run and start its lease; its id."""
        self._recover_orphans()
        await asyncio.to_thread(self._merge_approved)
        settings = self.settings
        run = self.services.sessions.start_loop_run(
            agent=self.adapter.name,
            max_iterations=settings.max_iterations,
            max_cost_usd=settings.max_cost_usd,
            allow_edits=settings.allow_edits,
            settings={
                "session_timeout_s": settings.session_timeout_s,
                "stuck_threshold": settings.stuck_threshold,
                "max_turns": settings.max_turns,
            },
        )
        RUNNING_HERE.add(run.id)
        self._heartbeat = asyncio.get_running_loop().create_task(
            self._renew_lease(run.id), name="ralph-loop-heartbeat"
        )
        self.state.status = LoopStatus(loop_run_id=run.id)
        self.state.set_state(LoopState.RUNNING)
        return run.id

    async def _renew_lease(self, loop_run_id: int) -> None:
        """Renew this run's lease while it runs, so that runners elsewhere leave its task alone."""
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                await asyncio.to_thread(self.services.sessions.renew_lease, loop_run_id)
            except Exception:
                # A busy or unreachable database: the next beat tries again, well within the lease.
                log.warning("could not renew the lease of loop run %s", loop_run_id, exc_info=True)

    def _recover_orphans(self) -> None:
        """Tasks and sessions left behind by a dead loop (any machine) go back to the queue (not stuck).

        A loop run is dead when it ended, when its lease lapsed, or when its process on this host is
        gone; work of a live run — another machine's, sharing a PostgreSQL database — is left alone.
        """
        orphans = self.services.sessions.orphans(running_here=RUNNING_HERE)
        for task_id in orphans.task_ids:
            log.warning("recovering task #%s left in progress by a stopped loop", task_id)
            self.services.tasks.move(task_id, TaskStatus.PENDING, Mover.LOOP)
        for session_id in orphans.session_ids:
            self.services.sessions.finish_session(
                session_id,
                outcome=SessionOutcome.STOPPED.value,
                error="recovered: the loop stopped mid-session",
            )
        self.services.checks.abandon(list(orphans.session_ids))

    def _merge_approved(self) -> None:
        """Approvals whose process ended before their merge (a crash, a closed terminal) merge now, in order;
        the worktrees of deleted tasks and folders git forgot are cleaned away (unmerged work is kept)."""
        try:
            for task_id in self.services.reviews.queue_ungated():
                log.info("task #%s was done with the review gate off but not merged: queued", task_id)
            for task_id, outcome in self.services.reviews.merge_queued().items():
                log.info("approved task #%s from the merge queue: %s", task_id, outcome)
        except ServiceError:
            log.warning("the approved tasks waiting to merge could not be merged now", exc_info=True)
        for told in self.services.retiring.sweep():
            log.info("worktrees: %s", told)
