"""The companion off (the default) opens no port: the window's process listens on the MCP server's only.

The process's listening sockets are read from the kernel (/proc/net/tcp and tcp6, matched to this
process's own file descriptors), not from what the app says it opened.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from ralph_desk import app as desk_app
from ralph_desk.app import prepare_application
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.project import ProjectPaths
from ralph_desk.project.companion_home import CompanionHome, CompanionSettings
from tests.gui.test_app import isolated_settings, shown_window

__all__ = ["isolated_settings"]

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads the kernel's socket tables (/proc)")

LISTEN = "0A"
WAIT_S = 60


def listening() -> set[tuple[str, int]]:
    """(address, port) of every TCP socket this process listens on."""
    ours = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            ours.add(target[len("socket:[") : -1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == LISTEN and inode in ours:
                address, port = local.split(":")
                found.add((address, int(port, 16)))
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def mcp_port(window: MainWindow) -> int:
    return int(window.mcp_label.text().rsplit(":", 1)[1].split("/")[0])


@dataclass(frozen=True)
class Opened:
    """What the window's process listened on beyond what it did before, and which ports the app says."""

    sockets: set[tuple[str, int]]
    mcp: int
    companion: int | None


def ports_while_open(app: QApplication, project: Path) -> Opened:
    """The sockets the window's process opened while its window was open on `project`."""
    loop = qasync.QEventLoop(app)
    seen: list[Opened] = []

    async def scenario() -> int:
        before = listening()
        running = asyncio.ensure_future(desk_app._run(app, ProjectPaths.at(project)))
        window = await shown_window(app, running)
        assert window.controller is not None
        companion = window.controller.companion
        deadline = time.monotonic() + WAIT_S
        # Until the companion's step has read the saved settings (and served, when they say on).
        while companion.settings is None or (companion.settings.enabled and not companion.running):
            assert time.monotonic() < deadline, "the companion step did not run"
            await asyncio.sleep(0.01)  # a poll interval, not a guess at how long anything takes
        served = companion.host.port if companion.host is not None else None
        seen.append(Opened(listening() - before, mcp_port(window), served))
        window.close()
        return await asyncio.wait_for(running, timeout=30)

    try:
        assert loop.run_until_complete(scenario()) == 0
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    return seen[0]


def test_the_companion_off_opens_no_port_and_on_opens_exactly_one_more(
    qapp: QApplication, project: Path, isolated_settings: None
) -> None:
    app = prepare_application()
    off = ports_while_open(app, project)
    assert off.sockets and {port for _address, port in off.sockets} == {off.mcp}
    assert off.companion is None

    port = free_port()
    CompanionHome.of(ProjectPaths.at(project)).save(CompanionSettings(True, "127.0.0.1", port))
    on = ports_while_open(app, project)
    assert on.companion == port
    assert {entry for entry in on.sockets if entry[1] != on.mcp} == {("0100007F", port)}  # 127.0.0.1, once
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # closed with the window
