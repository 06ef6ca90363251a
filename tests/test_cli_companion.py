"""`ralph-desk companion`: on, off, status, pair, devices, revoke; and `ralph-desk run` serving the page."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from ralph_desk.cli import main
from ralph_desk.companion.switch import LoopView
from ralph_desk.domain.enums import TaskOrigin, TaskStatus
from ralph_desk.project import ProjectPaths
from ralph_desk.project.companion_home import CompanionHome, CompanionSettings
from ralph_desk.services.companion import PairingRefused
from ralph_desk.services.container import Services
from tests.loop.conftest import stand_in
from tests.support.cli import ralph_desk_process
from tests.support.loop_project import open_loop_project

RUN_TIMEOUT_S = 120
CODE = re.compile(r"^Pairing code: (\w{4}-\w{4}) ", re.MULTILINE)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Services]:
    """A git project with a feature and a discipline."""
    services = open_loop_project(tmp_path / "repo", "Companion")
    yield services
    services.close()


def companion(capsys: pytest.CaptureFixture[str], root: Path, *words: str) -> tuple[int, str, str]:
    code = main(["companion", *words, "--root", str(root)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_on_saves_the_persons_settings_and_off_turns_it_off(
    capsys: pytest.CaptureFixture[str], project: Services
) -> None:
    root, home = project.paths.root, CompanionHome.of(project.paths)
    assert companion(capsys, root, "status")[1].startswith("Companion page: off\n")

    code, out, _ = companion(capsys, root, "on", "--address", "127.0.0.1", "--port", "47811")

    assert code == 0 and "https://127.0.0.1:47811/" in out and "ssh -L 47811:127.0.0.1:47811" in out
    assert home.settings() == CompanionSettings(True, "127.0.0.1", 47811)
    assert not home.folder.is_relative_to(root)
    status = companion(capsys, root, "status")[1]
    fingerprint = home.certificate("127.0.0.1").fingerprint
    assert "Companion page: on\nAddress: https://127.0.0.1:47811/\n" in status and fingerprint in status
    assert companion(capsys, root, "off")[0] == 0
    assert home.settings() == CompanionSettings(False, "127.0.0.1", 47811)


@pytest.mark.parametrize("address", ["0.0.0.0", "::"])
def test_every_interface_is_refused_without_all_interfaces_saying_why(
    capsys: pytest.CaptureFixture[str], project: Services, address: str
) -> None:
    code, _, err = companion(capsys, project.paths.root, "on", "--address", address)

    assert code == 2 and "any network this computer is on could reach the page" in err
    assert "--all-interfaces" in err
    assert CompanionHome.of(project.paths).settings().enabled is False
    assert companion(capsys, project.paths.root, "on", "--address", address, "--all-interfaces")[0] == 0
    assert CompanionHome.of(project.paths).settings() == CompanionSettings(True, address, 47800)


def test_an_address_not_of_this_computer_is_refused_naming_the_allowed_ones(
    capsys: pytest.CaptureFixture[str], project: Services
) -> None:
    code, _, err = companion(capsys, project.paths.root, "on", "--address", "203.0.113.7")

    assert code == 2 and "203.0.113.7 is not an address of this computer; allowed: 127.0.0.1" in err
    assert not CompanionHome.of(project.paths).settings_file.exists()


def test_pair_prints_a_code_that_pairs_once_then_devices_lists_it_and_revoke_refuses_it(
    capsys: pytest.CaptureFixture[str], project: Services
) -> None:
    root, home = project.paths.root, CompanionHome.of(project.paths)
    code, _, err = companion(capsys, root, "pair")
    assert code == 2 and "the companion page is off" in err
    companion(capsys, root, "on", "--port", "47812")

    code, out, _ = companion(capsys, root, "pair")

    assert code == 0
    shown = CODE.search(out)
    assert shown is not None
    fingerprint = home.certificate("127.0.0.1").fingerprint
    link = f"https://127.0.0.1:47812/pair#{shown[1].replace('-', '')}/{fingerprint.replace(':', '')}"
    assert f"Pairing link: {link}" in out
    assert fingerprint in out
    assert "▀" in out or "▄" in out  # the QR code, drawn in the terminal
    service = project.companion(home.secret())
    paired = service.pair(shown[1], "Ana's phone")
    with pytest.raises(PairingRefused):
        service.pair(shown[1], "Eve's phone")  # used once already
    devices = companion(capsys, root, "devices")[1]
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d"
    row = rf"^\s+{paired.device.id}\s+Ana's phone\s+{stamp}\s+{stamp}\s+-$"  # paired, last used, not revoked
    assert re.search(row, devices, re.MULTILINE), devices

    code, out, _ = companion(capsys, root, "revoke", str(paired.device.id))

    assert code == 0 and f"Revoked device #{paired.device.id} (Ana's phone)" in out
    assert re.search(
        rf"^\s+{paired.device.id}\s+Ana's phone\s+{stamp}\s+{stamp}\s+{stamp}$",
        companion(capsys, root, "devices")[1],
        re.MULTILINE,
    )
    assert service.device_for(paired.token) is None
    code, _, err = companion(capsys, root, "revoke", "999")
    assert code == 2 and "999" in err


def test_a_broken_settings_file_means_off_and_is_said(
    capsys: pytest.CaptureFixture[str], project: Services
) -> None:
    home = CompanionHome.of(project.paths)
    home.folder.mkdir(parents=True)
    home.settings_file.write_text('{"enabled": true, "host": ')

    code, out, err = companion(capsys, project.paths.root, "status")

    assert code == 0 and out.startswith("Companion page: off\n")
    assert f"{home.settings_file} cannot be read" in err and "the companion stays off" in err


@pytest.mark.slow
def test_run_serves_the_page_while_the_companion_is_on_and_a_code_from_another_terminal_pairs(
    capsys: pytest.CaptureFixture[str], project: Services
) -> None:
    root = project.paths.root
    # A suggestion waits for the person: `--wait` keeps the loop (and the page) going.
    project.tasks.create(
        "core", "backend", "Chart the tides", status=TaskStatus.DRAFT, origin=TaskOrigin.AGENT
    )
    port = free_port()
    companion(capsys, root, "on", "--port", str(port))
    command = [sys.executable, "-m", "ralph_desk", "run", "--root", str(root), *stand_in().cli, "--wait"]
    loop = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = threading.Timer(RUN_TIMEOUT_S, loop.kill)  # a hung run ends the test, not the suite
    deadline.start()
    try:
        assert loop.stdout is not None
        printed = []
        for line in loop.stdout:
            printed.append(line)
            if line.startswith("Pairing code:"):
                break
        text = "".join(printed)
        url = f"https://127.0.0.1:{port}"
        assert f"Companion page: {url}/\n" in text
        home = CompanionHome.of(ProjectPaths.at(root))
        assert f"Certificate fingerprint (SHA-256): {home.certificate('127.0.0.1').fingerprint}" in text
        shown = CODE.search(text)
        assert shown is not None
        other_terminal = ralph_desk_process("companion", "pair", "--root", str(root))
        assert other_terminal.returncode == 0, other_terminal.stderr
        from_there = CODE.search(other_terminal.stdout)
        assert from_there is not None

        for name, code in (("Phone", shown[1]), ("Tablet", from_there[1])):
            with httpx.Client(base_url=url, verify=False, headers={"origin": url}, timeout=30) as phone:
                answer = phone.post("/pair", data={"code": code, "name": name})
                assert answer.status_code == 303, answer.text
                assert phone.get("/").status_code == 200
    finally:
        loop.send_signal(signal.SIGTERM)
        loop.wait(RUN_TIMEOUT_S)
        deadline.cancel()
    assert loop.returncode == 0, loop.stderr.read() if loop.stderr else ""
    names = {device.name for device in project.companion(home.secret()).devices()}
    assert names == {"Phone", "Tablet"}
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_the_runner_switch_sees_pauses_resumes_and_stops_the_run_s_loop(project: Services) -> None:
    from ralph_desk.cli.companion import RunnerSwitch
    from ralph_desk.loop.build import build_runner
    from ralph_desk.loop.model import LoopSettings
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from tests.support.ide import HELD_AGENT

    task = project.tasks.create("core", "backend", "Chart the tides")
    listener = socket.create_server(("127.0.0.1", 0))
    held = f"{sys.executable} {HELD_AGENT} {listener.getsockname()[1]}"
    settings = LoopSettings(agent="command", agent_command=held, sandbox=False)

    async def scenario() -> list[LoopView]:
        server = EmbeddedMcp(project)
        await server.start()
        runner = build_runner(project, server, settings)
        running = asyncio.create_task(runner.run())
        switch = RunnerSwitch(runner, running)
        seen = [switch.view()]
        agent, _ = await asyncio.wait_for(asyncio.get_running_loop().sock_accept(listener), RUN_TIMEOUT_S)
        try:
            seen.append(switch.view())
            switch.pause()
            seen.append(switch.view())
            switch.resume()
            seen.append(switch.view())
            switch.stop()
            await asyncio.wait_for(running, RUN_TIMEOUT_S)
            seen.append(switch.view())
        finally:
            agent.close()
            await server.stop()
        return seen

    listener.setblocking(False)
    with listener:
        before, working, paused, resumed, stopped = asyncio.run(scenario())

    assert before.running and not before.paused
    assert working.current_task_id == task.id and working.state == "running"
    assert paused.paused and not resumed.paused
    assert not stopped.running and stopped.state == "stopped"
    assert project.tasks.get(task.id).status is TaskStatus.PENDING
