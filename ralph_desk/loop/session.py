"""One agent session: its place, endpoint, prompt and process, then its end, recorded and announced."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.enums import Recipe, SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.tools import MAX_TEXT
from ralph_desk.loop import branches, git, worktree_setup
from ralph_desk.loop.confine import agent_relay, sandbox_name, session_command
from ralph_desk.loop.fingerprint import project_fingerprint
from ralph_desk.loop.gather import gather_inputs
from ralph_desk.loop.model import FINISHED, AgentCommand, EventKind, LiveEvent, SessionLaunch, SessionPlan
from ralph_desk.loop.prompt import render_prompt
from ralph_desk.loop.run_parts import Attempt, RunParts
from ralph_desk.loop.session_end import (
    Ending,
    SessionResult,
    conclude,
    conclude_lost,
    crash_of,
    record_end,
    task_gone,
)
from ralph_desk.loop.streams import StreamParser
from ralph_desk.loop.tasks import through
from ralph_desk.loop.transcript import Transcript
from ralph_desk.loop.trust_check import require_trusted_servers
from ralph_desk.project import ProjectError, contained
from ralph_desk.project.confinement import described, release
from ralph_desk.project.contained import PRIVATE_DIR_MODE
from ralph_desk.services.errors import ServiceError
from ralph_desk.services.workspaces import NoBaseBranchError
from ralph_desk.vcs.places import Checkout

log = logging.getLogger("ralph_desk.loop")

PROMPT_FILE_NAME = "prompt.md"


class SessionRunner:
    """Runs one session at a time per call; many calls may run at once (the scheduler's slots)."""

    def __init__(self, parts: RunParts) -> None:
        self.parts = parts
        self.results: list[SessionResult] = []

    async def run(self, plan: SessionPlan) -> SessionResult:
        """One agent session: endpoint, prompt, process, stream, post-processing, record."""
        parts = self.parts
        # The database may have come with the folder: a server command in it runs only once allowed.
        require_trusted_servers(
            parts.services.paths, parts.services.disciplines.list(), parts.services.db.url
        )
        parts.state.session_started(plan)
        read_only = not parts.settings.allow_edits or plan.recipe is Recipe.UNDERSTAND or plan.read_only
        paths = parts.services.paths
        attempt = Attempt(plan, Transcript(paths.logs_dir, plan.session_id, root=paths.root), read_only)
        try:
            return await self._attempt(attempt)
        finally:
            await asyncio.to_thread(release, paths, sandbox_name(plan.session_id))

    async def _attempt(self, attempt: Attempt) -> SessionResult:
        """Prepare, launch and run the session's agent, then record its end."""
        parts, plan = self.parts, attempt.plan
        await self._prepare(attempt)
        endpoint, command, parser = await self._launch(attempt)
        try:
            ending = await self._run_agent(attempt, endpoint, command, parser)
        except Exception as error:
            if not await through(task_gone, parts, plan):
                await self._end_abruptly(attempt, error)
                raise
            # Deleted while its session ran (the window, a tool, another desk): what failed was the lookup.
            ending = await through(conclude_lost, parts, attempt, branches.deleted(plan))
        except BaseException as error:  # the session still ends, recorded and announced; the error goes on
            await self._end_abruptly(attempt, error)
            raise
        return await self._finish(attempt, ending)

    async def _prepare(self, attempt: Attempt) -> None:
        """The session's worktree and what its project looks like before the agent runs."""
        services, plan = self.parts.services, attempt.plan
        try:
            # A task's session works in the task's own worktree; the person's checkout is never touched.
            async with self.parts.git:
                work = attempt.work = await through(branches.prepare, services, plan, self.parts.repo_root)
                place = await through(branches.git_place, services, work)
                attempt.git_admin = place.git_dir if isinstance(place, Checkout) else None
        except BaseException as error:
            self._abandon(attempt, error)
            raise
        await asyncio.to_thread(worktree_setup.set_up, self.parts, attempt)
        # Hashing files, git and the database block: they run off the event loop (and the window's thread).
        if plan.task:
            attempt.fingerprint_before = await asyncio.to_thread(project_fingerprint, services, work.root)
        attempt.git_before = await asyncio.to_thread(git.state, place)

    async def _launch(self, attempt: Attempt) -> tuple[SessionEndpoint, AgentCommand, StreamParser]:
        """The session's endpoint, its agent's command (once any rate limit passed), announced."""
        parts, plan = self.parts, attempt.plan
        endpoint = parts.issuer.open_session(plan.context)
        try:
            await parts.state.after_rate_limit()
            command = await through(self._begin, attempt, endpoint)
            parts.state.emit(
                LiveEvent(
                    EventKind.SESSION_STARTED,
                    plan.task.title if plan.task else plan.recipe.value,
                    {
                        "task_id": plan.task.id if plan.task else None,
                        "recipe": plan.recipe.value,
                        "agent": parts.adapter.name,
                        "model": parts.settings.model_for(plan.recipe),
                    },
                    session_id=plan.session_id,
                )
            )
            return endpoint, command, parts.adapter.parser()
        except BaseException as error:
            self._abandon(attempt, error)
            parts.issuer.close_session(endpoint)
            raise

    async def _run_agent(
        self, attempt: Attempt, endpoint: SessionEndpoint, command: AgentCommand, parser: StreamParser
    ) -> Ending:
        """Run the agent to its end, then conclude the session (or end it as lost)."""
        parts, plan = self.parts, attempt.plan
        try:
            async with agent_relay(attempt, endpoint.url):
                attempt.exit_code, attempt.timed_out = await parts.processes.run(
                    command,
                    parser,
                    attempt.transcript,
                    plan.session_id,
                    lambda: parts.state.ending,
                    attempt.stderr_tail,
                )
            attempt.summary = parser.summary
            attempt.crash = crash_of(attempt, parts.state.stop_requested)
            if attempt.crash is not None:
                attempt.transcript.problem(attempt.crash)
                parts.state.emit(LiveEvent(EventKind.ERROR, attempt.crash, session_id=plan.session_id))
        except OSError as error:
            # The agent could not even be started (a vanished binary, a bad working directory).
            attempt.summary.error = f"could not start the agent: {error}"
            attempt.transcript.problem(attempt.summary.error)
            parts.state.emit(LiveEvent(EventKind.ERROR, attempt.summary.error, session_id=plan.session_id))
        finally:
            parts.issuer.close_session(endpoint)
        summary = attempt.summary
        if plan.recipe is Recipe.UNDERSTAND and summary.result_text and not summary.is_error:
            # The understand run is read-only: the agent returns the map, the loop writes it.
            self._save_map(summary.result_text, attempt)
        async with parts.git:
            lost = await through(branches.lost, parts.services, attempt.prepared, plan)
        if lost is None:
            return await conclude(parts, attempt)
        return await through(conclude_lost, parts, attempt, lost)

    async def _finish(self, attempt: Attempt, ending: Ending) -> SessionResult:
        """Record and announce the session's end; count it in the run's status."""
        plan, summary, status = attempt.plan, attempt.summary, self.parts.state.status
        result = ending.result
        if ending.lost is not None:
            log.warning("session %s: %s", plan.session_id, ending.lost)
            attempt.transcript.note(ending.lost)
        decision = result.decision
        closing_verb = decision.closing_verb.value if decision and decision.closing_verb else None
        status.cost_usd += summary.cost_usd
        outcome = result.outcome.value
        said = "; ".join(filter(None, [summary.error, attempt.crash]))
        error = ending.lost or said or ("timed out" if attempt.timed_out else None)

        def record() -> None:
            changed = git.recordable(result.changed_files)
            fields = {"changed_files": changed, "head_after": ending.head_after, "error": error}
            record_end(self.parts, attempt, outcome, closing_verb=closing_verb, **fields)

        try:
            await through(record)
        finally:
            self._ended(attempt, outcome, closing_verb)
        if decision is not None and result.outcome is not SessionOutcome.REJECTED:
            if decision.status in FINISHED:
                status.completed += 1
            elif decision.status is TaskStatus.FAILED:
                status.failed += 1
        self.results.append(result)
        return result

    def _ended(self, attempt: Attempt, outcome: str, closing_verb: str | None) -> None:
        """Announce the session's end and take it off the running list."""
        plan, summary = attempt.plan, attempt.summary
        data = {
            "task_id": plan.task.id if plan.task else None,
            "cost_usd": summary.cost_usd,
            "turns": summary.turns,
            "exit_code": attempt.exit_code,
            "closing_verb": closing_verb,
            "crashed": attempt.crash is not None,
        }
        self.parts.state.emit(LiveEvent(EventKind.SESSION_ENDED, outcome, data, session_id=plan.session_id))
        self.parts.state.forget(plan)

    async def _end_abruptly(self, attempt: Attempt, error: BaseException) -> None:
        """The session failed or was cancelled after its agent started: record and announce its end."""
        cancelled = isinstance(error, asyncio.CancelledError)
        what = (
            "the session was cancelled"
            if cancelled
            else f"the session failed: {type(error).__name__}: {error}"
        )
        outcome = SessionOutcome.STOPPED.value if cancelled else SessionOutcome.FAILED.value
        if not cancelled:
            log.error("session %s failed after its agent ran", attempt.plan.session_id, exc_info=error)

        def record() -> None:
            attempt.transcript.note(what)
            with contextlib.suppress(ServiceError):
                record_end(self.parts, attempt, outcome, error=what[:MAX_TEXT])

        try:
            await through(record)
        finally:
            self._ended(attempt, outcome, None)

    def _save_map(self, text: str, attempt: Attempt) -> None:
        """Write the understand run's map into `.ralph/codebase_map.md` (never through a link)."""
        paths = self.parts.services.paths
        try:
            contained.write_text(paths.root, paths.codebase_map, text.strip() + "\n")
        except ProjectError as error:
            attempt.summary.error = f"the codebase map was not saved: {error}"
            attempt.transcript.note(attempt.summary.error)
            log.warning("%s", attempt.summary.error)

    def _begin(self, attempt: Attempt, endpoint: SessionEndpoint) -> AgentCommand:
        """Off the event loop: the prompt, the agent's command and files, the transcript's head, the row."""
        parts, plan = self.parts, attempt.plan
        services, settings, adapter = parts.services, parts.settings, parts.adapter
        root = attempt.prepared.root
        prompt = self._write_prompt(plan, root)
        paths = services.paths
        session_dir = contained.make_folder(paths.root, paths.sessions_dir, PRIVATE_DIR_MODE)
        launch = SessionLaunch(plan, prompt, endpoint, settings, root, session_dir, attempt.read_only)
        command = adapter.build(launch)
        model = settings.model_for(plan.recipe)
        attempt.transcript.describe(
            plan, agent=adapter.name, model=model, command=command, prompt=prompt, endpoint=endpoint
        )
        command, sandbox = session_command(parts, attempt, command, endpoint.url)
        attempt.transcript.note(f"sandbox: {described(sandbox)}")
        services.sessions.start_session(
            plan.session_id,
            task_id=plan.task.id if plan.task else None,
            recipe=plan.recipe,
            agent=adapter.name,
            model=model,
            loop_run_id=plan.loop_run_id,
            iteration=plan.iteration,
            discipline=plan.discipline.name if plan.discipline else None,
            feature=plan.feature.name if plan.feature else None,
            head_before=attempt.git_before.head if attempt.git_before else None,
            transcript_path=str(attempt.transcript.log_path),
            sandbox=sandbox.tool,
            sandbox_note=described(sandbox),
        )
        return command

    def _write_prompt(self, plan: SessionPlan, root: Path) -> str:
        """Gather the session's inputs, render its prompt and keep a copy beside the MCP config."""
        services = self.parts.services
        inputs = gather_inputs(
            services, plan, root, self.parts.settings.allowed_paths, self.parts.settings.checks
        )
        prompt = render_prompt(inputs)
        paths = services.paths
        contained.write_text(paths.root, paths.mcp_dir / PROMPT_FILE_NAME, prompt)
        return prompt

    def _abandon(self, attempt: Attempt, error: BaseException) -> None:
        """A session that failed before its agent started: its task goes back to the queue, uncounted."""
        plan, transcript, services = attempt.plan, attempt.transcript, self.parts.services
        if isinstance(error, NoBaseBranchError):  # the project's state, said in full: no traceback to read
            log.error("session %s could not be prepared: %s", plan.session_id, error)
        else:
            log.exception("session %s could not be prepared", plan.session_id)
        transcript.note(f"the session could not be prepared: {error}")
        transcript.close(outcome=SessionOutcome.STOPPED.value, error=str(error))
        if plan.task is not None:
            services.tasks.move(plan.task.id, TaskStatus.PENDING, Mover.LOOP)
        with contextlib.suppress(ServiceError):
            services.sessions.finish_session(
                plan.session_id, outcome=SessionOutcome.STOPPED.value, error=f"not started: {error}"
            )
        self.parts.state.forget(plan)
