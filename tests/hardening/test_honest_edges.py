"""Edges that must answer honestly: exact Host and Origin checks, limits checked at the start, clear refusals.

Each runs against a real `ralph-desk mcp` process (HTTP or stdio).
"""

from __future__ import annotations

import socket
import subprocess

import httpx2
import pytest

from ralph_desk.domain.tools import MAX_SESSION_ID
from ralph_desk.mcp_server.prompts import PROMPT_ARGUMENTS
from ralph_desk.project import ProjectPaths
from tests.hardening.support import INIT_PARAMS, Seeded, http_process
from tests.support.jsonrpc import request
from tests.support.stdio_wire import StdioWire, mcp_command

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
ACCEPT = {"Accept": "application/json, text/event-stream"}
TOKEN = "t0k3n-edges"


def post_init(url: str, **headers: str) -> httpx2.Response:
    """An initialize request with the token and the given headers (Host, Origin)."""
    sent = {**ACCEPT, "Authorization": f"Bearer {TOKEN}", **headers}
    return httpx2.post(url, json=INIT, headers=sent, timeout=30)


@pytest.mark.slow
def test_host_and_origin_are_matched_exactly_and_a_host_without_a_port_is_accepted(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, _ = seeded
    with http_process(paths, "--token", TOKEN) as (_, url, _stderr):
        port = url.rsplit(":", 1)[1].split("/")[0]
        accepted_hosts = ["127.0.0.1", f"127.0.0.1:{port}", "localhost", f"LOCALHOST:{port}", "[::1]:80"]
        for host in accepted_hosts:
            assert post_init(url, Host=host).status_code == 200, host
        refused_hosts = ["localhost:80.evil.example", "127.0.0.1:", "127.0.0.1:8x", "[::1]x", "evil.example"]
        for host in refused_hosts:
            answer = post_init(url, Host=host)
            assert answer.status_code == 421 and "Invalid Host header" in answer.text, host
        for origin in ("http://localhost:6274", "http://127.0.0.1", f"http://[::1]:{port}"):
            assert post_init(url, Origin=origin).status_code == 200, origin
        for origin in (
            "http://localhost:6274.evil.example",
            "http://127.0.0.1:80@evil.example",
            "http://localhost:1/path",
            "http://localhost:99999",
            "https://localhost",
            "null",
        ):
            answer = post_init(url, Origin=origin)
            assert answer.status_code == 403 and "Invalid Origin header" in answer.text, origin


@pytest.mark.slow
def test_a_server_on_every_interface_accepts_the_machines_own_names_and_says_it_is_exposed(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, _ = seeded
    own = socket.gethostname()
    with http_process(paths, "--host", "0.0.0.0", "--token", TOKEN) as (_, url, stderr):
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert post_init(url, Host=f"{own}:{port}").status_code == 200, own
        assert post_init(url, Host=f"{own}:{port}", Origin=f"http://{own}:3000").status_code == 200
        assert post_init(url, Host="evil.example").status_code == 421
        warning = stderr.wait_for(r"WARNING.*binding to 0\.0\.0\.0: .*\(exposed\).*")
        assert warning is not None and own.lower() in warning.group(0), stderr.text(1)


def test_a_session_id_over_the_limit_is_refused_at_the_start(seeded: tuple[ProjectPaths, Seeded]) -> None:
    paths, _ = seeded
    for session_id in ("s" * (MAX_SESSION_ID + 1), "   "):
        started = subprocess.run(
            mcp_command(paths, "--recipe", "yap", "--session-id", session_id),
            input=b"",
            capture_output=True,
            timeout=120,
            check=False,
        )
        err = started.stderr.decode()
        assert started.returncode == 2, err
        assert "refusing to start: session_id" in err and f"at most {MAX_SESSION_ID} characters" in err


def test_prompts_get_errors_say_why(seeded: tuple[ProjectPaths, Seeded]) -> None:
    paths, _ = seeded
    wire = StdioWire(mcp_command(paths))
    try:
        wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
        assert "result" in wire.answer(0, timeout=60)
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send(request(1, "prompts/list"))
        listed = {
            prompt["name"]: tuple(argument["name"] for argument in prompt.get("arguments", []))
            for prompt in wire.answer(1, timeout=60)["result"]["prompts"]
        }
        assert listed == dict(PROMPT_ARGUMENTS)
        cases = [
            ({"name": "nope"}, "no prompt 'nope'; allowed: one of run_ralph, init_ralph, understand_ralph"),
            (
                {"name": "run_ralph", "arguments": {"bogus": "1"}},
                "prompt run_ralph has no argument 'bogus'; allowed: max_iterations, allow_edits",
            ),
            ({"name": "understand_ralph", "arguments": {"x": "1"}}, "allowed: none"),
            ({"name": "run_ralph", "arguments": {"max_iterations": "\u0663"}}, "a whole number from 0"),
            ({"name": "init_ralph", "arguments": {"force": "maybe"}}, "allowed: true or false"),
        ]
        for request_id, (params, why) in enumerate(cases, start=2):
            wire.send(request(request_id, "prompts/get", params))
            error = wire.answer(request_id, timeout=60)["error"]
            assert error["code"] == -32602 and why in error["message"], (params, error)
        wire.send(request(99, "prompts/get", {"name": "init_ralph", "arguments": {"force": "true"}}))
        assert "force=true" in wire.answer(99, timeout=60)["result"]["messages"][0]["content"]["text"]
        assert wire.close() == 0
    finally:
        wire.kill()
