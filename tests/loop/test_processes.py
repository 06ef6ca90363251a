"""Agent processes are stopped as a whole tree: the agent and whatever it started."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from ralph_desk.process_tree import on_stop_signals, own_group, stop_tree

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="the scripts below use POSIX signals"),
]

WAIT_S = 20.0
# A child that ignores SIGTERM, keeps the agent's stdout open and blocks until killed.
STUBBORN_CHILD = (
    "import signal, threading; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('child ready', flush=True); threading.Event().wait()"
)
# An agent that starts the stubborn child and waits for it (it obeys SIGTERM itself).
AGENT_WITH_CHILD = (
    f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {STUBBORN_CHILD!r}]).wait()"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def start(script: str) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE, **own_group()
    )
    assert process.stdout is not None
    ready = await asyncio.wait_for(process.stdout.readline(), WAIT_S)
    assert ready.strip().endswith(b"ready")
    return process


async def test_stopping_an_agent_ends_the_child_it_left_behind() -> None:
    process = await start(AGENT_WITH_CHILD)

    await asyncio.wait_for(stop_tree(process, grace_s=0.5), WAIT_S)

    assert process.returncode == -signal.SIGTERM
    # The pipe closes only when its last holder, the child that ignored SIGTERM, is gone.
    assert process.stdout is not None
    assert await asyncio.wait_for(process.stdout.read(), WAIT_S) == b""


async def test_an_agent_that_ignores_the_polite_request_is_killed_after_the_grace_period() -> None:
    process = await start(STUBBORN_CHILD)

    await asyncio.wait_for(stop_tree(process, grace_s=0.5), WAIT_S)

    assert await asyncio.wait_for(process.wait(), WAIT_S) == -signal.SIGKILL


async def test_stopping_an_agent_that_already_exited_is_no_error() -> None:
    process = await start("print('ready', flush=True)")
    assert await asyncio.wait_for(process.wait(), WAIT_S) == 0

    await asyncio.wait_for(stop_tree(process, grace_s=0.5), WAIT_S)

    assert process.returncode == 0


async def stop_signal_stops_and_is_put_back() -> None:
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    before = signal.getsignal(signal.SIGUSR1)

    restore = on_stop_signals(loop, stopped.set, [signal.SIGUSR1])
    os.kill(os.getpid(), signal.SIGUSR1)
    await asyncio.wait_for(stopped.wait(), WAIT_S)
    restore()

    assert stopped.is_set()
    assert signal.getsignal(signal.SIGUSR1) == before


async def test_a_stop_signal_stops_through_the_event_loops_own_handler() -> None:
    await stop_signal_stops_and_is_put_back()


async def test_without_event_loop_signal_handlers_as_on_windows_a_stop_signal_still_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*_: object) -> None:
        raise NotImplementedError  # what Windows' event loops do

    monkeypatch.setattr(asyncio.get_running_loop(), "add_signal_handler", refuse)
    await stop_signal_stops_and_is_put_back()
