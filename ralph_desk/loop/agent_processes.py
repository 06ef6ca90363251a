"""The run's agent processes: start one, feed its prompt, read its streams, time it out, end it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable
from pathlib import Path

from ralph_desk.loop.lines import MAX_LINE, lines_of
from ralph_desk.loop.model import AgentCommand, LiveEvent
from ralph_desk.loop.streams import StreamParser
from ralph_desk.loop.tasks import cancel
from ralph_desk.loop.transcript import STDERR_PREFIX, Transcript
from ralph_desk.process_tree import own_group, stop_tree

log = logging.getLogger("ralph_desk.loop")

KILL_GRACE_S = 5.0


class AgentProcesses:
    """Every agent process a loop run started and has not seen end, by session id."""

    def __init__(self, emit: Callable[[LiveEvent], None], timeout_s: float, cwd: Path) -> None:
        self.emit = emit
        self.timeout_s = timeout_s
        self.cwd = cwd
        self.running: dict[str, asyncio.subprocess.Process] = {}
        self._killers: dict[str, asyncio.Task[None]] = {}

    async def run(
        self,
        command: AgentCommand,
        parser: StreamParser,
        transcript: Transcript,
        session_id: str,
        stopping: Callable[[], bool],
        stderr_tail: deque[str] | None = None,
    ) -> tuple[int | None, bool]:
        """Run one agent to its end (or its timeout); its exit code and whether it timed out (the last
        lines of its standard error kept in `stderr_tail`)."""
        process = self.running[session_id] = await asyncio.create_subprocess_exec(
            *command.argv,
            stdin=asyncio.subprocess.PIPE if command.stdin_text is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=command.cwd or self.cwd,
            env={
                key: value for key, value in {**os.environ, **command.env}.items() if key not in command.unset
            },
            limit=MAX_LINE,
            **own_group(),
        )
        if stopping():  # a stop came while this session was being prepared: it ends with the others
            self.terminate(session_id)
        await self._feed(process, command, transcript)
        readers = asyncio.gather(
            self._read_stdout(process, parser, transcript, session_id),
            _read_stderr(process, transcript, stderr_tail),
        )
        try:
            timed_out = await self._read_within_timeout(readers, session_id)
            exit_code = await process.wait()
        finally:
            # Whatever ended the reading (an error, a cancelled loop), the agent never outlives its session.
            killer = self._killers.pop(session_id, None)
            if process.returncode is None and killer is None:
                await asyncio.shield(stop_tree(process, KILL_GRACE_S))
            readers.cancel()
            self.running.pop(session_id, None)
            if killer is not None:
                await killer  # a stopped agent's leftovers are ended before the next session starts
        return exit_code, timed_out

    async def _feed(
        self, process: asyncio.subprocess.Process, command: AgentCommand, transcript: Transcript
    ) -> None:
        """Write the prompt to an agent that reads it from stdin."""
        if command.stdin_text is None or process.stdin is None:
            return
        try:
            process.stdin.write(command.stdin_text.encode())
            await asyncio.wait_for(process.stdin.drain(), timeout=self.timeout_s)
            process.stdin.close()
        except (BrokenPipeError, ConnectionResetError, TimeoutError) as error:
            # An agent that exits before reading its prompt ends like any session without a closing verb.
            transcript.note(f"the agent did not take its prompt: {error!r}")

    async def _read_stdout(
        self,
        process: asyncio.subprocess.Process,
        parser: StreamParser,
        transcript: Transcript,
        session_id: str,
    ) -> None:
        assert process.stdout is not None
        async for raw in lines_of(process.stdout):
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            transcript.raw(line)
            for event in parser.feed(line):
                stamped = LiveEvent(event.kind, event.text, event.data, session_id, event.at)
                transcript.event(stamped)
                self.emit(stamped)

    async def _read_within_timeout(self, readers: asyncio.Future[tuple[None, None]], session_id: str) -> bool:
        """Read until the streams close; past the session's timeout, end the agent. Whether it timed out."""
        try:
            await asyncio.wait_for(asyncio.shield(readers), timeout=self.timeout_s)
        except TimeoutError:
            log.warning("session %s timed out after %ss", session_id, self.timeout_s)
            self.terminate(session_id)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(readers, timeout=KILL_GRACE_S * 2)
            return True
        return False

    def terminate(self, session_id: str | None = None) -> None:
        """End an agent's process tree (every agent's without `session_id`): politely, then by force."""
        chosen = [session_id] if session_id is not None else list(self.running)
        for key in chosen:
            process = self.running.get(key)
            if process is None or process.returncode is not None:
                continue
            killer = self._killers.get(key)
            if killer is not None and not killer.done():
                continue  # already ending: one request, one deadline
            self._killers[key] = asyncio.get_running_loop().create_task(
                stop_tree(process, KILL_GRACE_S), name=f"ralph-loop-killer-{key}"
            )

    async def close(self) -> None:
        """Wait for no killer: cancel those left, so that none is pending when the event loop closes."""
        for killer in list(self._killers.values()):
            await cancel(killer)
        self._killers.clear()


async def _read_stderr(
    process: asyncio.subprocess.Process, transcript: Transcript, tail: deque[str] | None
) -> None:
    assert process.stderr is not None
    async for raw in lines_of(process.stderr):
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        transcript.raw(f"{STDERR_PREFIX}{line}")
        if tail is not None:
            tail.append(line)
