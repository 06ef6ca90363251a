"""Security: the bearer gate, DNS-rebinding checks, per-recipe reach, private credential files,
task text that reaches an agent as data only, and binding to loopback unless told otherwise.

The `ralph-desk mcp --transport http` process's own 401/421/403 answers are in
tests/mcp_server/test_transports.py; here the same gate is driven harder on the embedded host,
which is the one agents reach (and the only one that revokes credentials).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from ralph_desk import cli
from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.session import SessionContext
from ralph_desk.domain.tools import VERB_TOOLS
from ralph_desk.loop.agents.base import write_mcp_config
from ralph_desk.loop.build import RunOptions, build_runner
from ralph_desk.loop.model import LoopSettings, SessionLaunch, SessionPlan
from ralph_desk.mcp_server import clients as client_configs
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from tests.hardening.support import (
    DOCS_DISABLED,
    INIT_PARAMS,
    RawHttpSession,
    Seeded,
    assert_unchanged,
    db_state,
    http_process,
    listening_addresses,
    mode_of,
    result_text,
    succeeded,
    umask,
)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
ACCEPT = {"Accept": "application/json, text/event-stream"}

# The database snapshots and integrity checks read the SQLite file itself.
pytestmark = pytest.mark.sqlite_only


class RecordingMcp(EmbeddedMcp):
    """The embedded host, remembering every endpoint it issued (to look for their credentials)."""

    def __init__(self, services: Services) -> None:
        super().__init__(services)
        self.issued: list[SessionEndpoint] = []

    def open_session(self, context: SessionContext) -> SessionEndpoint:
        endpoint = super().open_session(context)
        self.issued.append(endpoint)
        return endpoint


@pytest.fixture
def services(seeded: tuple[ProjectPaths, Seeded]) -> Iterator[Services]:
    opened = Services.open(seeded[0])
    yield opened
    opened.close()


# --- the bearer gate and DNS-rebinding protection ---------------------------------------------------


def bad_credentials(token: str) -> list[tuple[str, dict[str, str]]]:
    return [
        ("no Authorization header", {}),
        ("a wrong token", {"Authorization": "Bearer not-the-token"}),
        ("a scheme without a token", {"Authorization": "Bearer"}),
        ("the token under Basic", {"Authorization": f"Basic {token}"}),
        ("the token without a scheme", {"Authorization": token}),
        ("the token in other case", {"Authorization": f"Bearer {token.swapcase()}"}),
        ("the token with a suffix", {"Authorization": f"Bearer {token}x"}),
        ("a prefix of the token", {"Authorization": f"Bearer {token[:-1]}"}),
        ("the token as a query parameter", {}),
    ]


@pytest.mark.anyio
async def test_the_gate_refuses_every_request_without_a_live_token(
    seeded: tuple[ProjectPaths, Seeded], services: Services
) -> None:
    paths, ids = seeded
    embedded = EmbeddedMcp(services)
    await embedded.start()
    try:
        endpoint = embedded.open_session(SessionContext(recipe=Recipe.IDE, session_id="gate"))
        before = db_state(paths)
        async with httpx2.AsyncClient(timeout=30) as http:
            live = RawHttpSession(http, embedded.url, endpoint.token)
            await live.initialize()
            assert live.session_id is not None
            for what, headers in bad_credentials(endpoint.token):
                url = embedded.url + (f"?token={endpoint.token}" if "query" in what else "")
                fresh = await http.post(url, json=INIT, headers={**ACCEPT, **headers})
                assert fresh.status_code == 401, what
                assert "Bearer" in fresh.json()["message"] and "www-authenticate" not in fresh.headers, what
                # Nor can a request ride on a live session without the session's credential.
                riding = await http.post(
                    embedded.url,
                    json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "get_task", "arguments": {"id": ids.parser}}},
                    headers={**ACCEPT, **headers, "mcp-session-id": live.session_id,
                             "mcp-protocol-version": "2025-11-25"},
                )  # fmt: skip
                assert riding.status_code == 401, what
            for method in ("GET", "DELETE"):
                response = await http.request(
                    method, embedded.url, headers={**ACCEPT, "mcp-session-id": live.session_id}
                )
                assert response.status_code == 401, method
            hosts = ["evil.example", "evil.example:80", "127.0.0.1.evil.example:80", "localhost.evil:1"]
            for host in hosts:
                response = await live.post(INIT, Host=host)
                assert response.status_code == 421 and "Invalid Host" in response.text, host
            for origin in (
                "http://evil.example",
                "null",
                "http://127.0.0.1.evil.example",
                "https://localhost",
            ):
                response = await live.post(INIT, Origin=origin)
                assert response.status_code == 403 and "Invalid Origin" in response.text, origin
            status, answer = await live.call("get_task", {"id": ids.parser})
            assert status == 200 and succeeded(answer), "the live session stopped serving"
            # Revoked mid-session: the session's very next request is refused, and so is a new one.
            embedded.close_session(endpoint)
            status, answer = await live.call("get_task", {"id": ids.parser})
            assert (status, answer) == (401, None)
            revoked = await http.post(
                embedded.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {endpoint.token}"}
            )
            assert revoked.status_code == 401
    finally:
        await embedded.stop()
    assert_unchanged(paths, before, "refused HTTP requests")


# --- a credential reaches its own recipe's tools only ----------------------------------------------


async def tool_names(session: RawHttpSession) -> set[str]:
    status, answer = await session.request("tools/list", {})
    assert status == 200 and answer is not None, answer
    return {tool["name"] for tool in answer["result"]["tools"]}


@pytest.mark.anyio
async def test_a_session_credential_reaches_only_its_recipes_tools(
    seeded: tuple[ProjectPaths, Seeded], services: Services
) -> None:
    paths, ids = seeded
    embedded = EmbeddedMcp(services)
    await embedded.start()
    docs_disabled = frozenset(DOCS_DISABLED)
    try:
        task = embedded.open_session(
            SessionContext(
                recipe=Recipe.TASK_EXECUTION, task_id=ids.parser, discipline="backend", session_id="t"
            )
        )
        ide = embedded.open_session(SessionContext(recipe=Recipe.IDE, session_id="i"))
        yap_docs = embedded.open_session(
            SessionContext(
                recipe=Recipe.YAP, discipline="docs", discipline_disabled=docs_disabled, session_id="y"
            )
        )
        before = db_state(paths)
        refusals: list[tuple[SessionEndpoint, str, dict[str, Any], str]] = [
            (task, "get_task", {"id": ids.parser}, "recipe 'task_execution' does not allow it"),
            (task, "ralph_run", {"dry_run": True}, "recipe 'task_execution' does not allow it"),
            (task, "set_task_status", {"id": ids.draft, "status": "done"}, "'task_execution' does not"),
            (ide, "done", {"summary": "not my task"}, "recipe 'ide' does not allow it"),
            (
                ide,
                "create_task",
                {"feature": "core", "discipline": "backend", "title": "x"},
                "'ide' does not",
            ),
            (ide, "update_feature", {"name": "ui", "description": "x"}, "recipe 'ide' does not allow it"),
            (yap_docs, "create_task", {"feature": "core", "discipline": "docs", "title": "x"}, "disables it"),
            (yap_docs, "set_task_status", {"id": ids.parser, "status": "done"}, "discipline 'docs' disables"),
        ]
        async with httpx2.AsyncClient(timeout=30) as http:
            sessions = {}
            for endpoint in (task, ide, yap_docs):
                sessions[endpoint.token] = RawHttpSession(http, embedded.url, endpoint.token)
                await sessions[endpoint.token].initialize()
            assert await tool_names(sessions[task.token]) == set(VERB_TOOLS)
            assert "get_task" in await tool_names(sessions[ide.token])
            assert "create_task" not in await tool_names(sessions[yap_docs.token])
            for endpoint, tool, arguments, reason in refusals:
                status, answer = await sessions[endpoint.token].call(tool, arguments)
                assert status == 200 and not succeeded(answer), (endpoint.context.recipe, tool)
                assert reason in result_text(answer), result_text(answer)
            # The IDE session's id does not lend its tools to the task credential: the credential decides.
            borrowed = RawHttpSession(http, embedded.url, task.token)
            borrowed.session_id = sessions[ide.token].session_id
            status, answer = await borrowed.call("get_task", {"id": ids.parser})
            assert not succeeded(answer) and "does not allow it" in result_text(answer), (status, answer)
            assert_unchanged(paths, before, "calls outside a session's recipe")
            status, answer = await sessions[task.token].call("done", {"summary": "finished"})
            assert status == 200 and succeeded(answer), answer
    finally:
        await embedded.stop()
    assert [(s.verb.value, s.session_id) for s in services.signals.for_task(ids.parser)] == [("done", "t")]


# --- files holding credentials are owner-only -------------------------------------------------------


@pytest.mark.anyio
async def test_files_holding_credentials_are_private_whatever_the_umask(
    seeded: tuple[ProjectPaths, Seeded], services: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, ids = seeded
    embedded = EmbeddedMcp(services)
    with umask(0):
        endpoint = embedded.open_session(
            SessionContext(recipe=Recipe.TASK_EXECUTION, task_id=ids.parser, session_id="private")
        )
        session_file = paths.sessions_dir / "private.json"
        assert endpoint.token in session_file.read_text()
        assert mode_of(session_file) == 0o600 and mode_of(paths.context_file) == 0o600
        embedded.close_session(endpoint)
        assert mode_of(session_file) == 0o600 and endpoint.token not in session_file.read_text()

        plan = SessionPlan(
            session_id="private", recipe=Recipe.TASK_EXECUTION, context=endpoint.context,
            enabled_tools=endpoint.context.enabled_tools,
        )  # fmt: skip
        stale = paths.ralph / "agents" / "private.mcp.json"
        stale.parent.mkdir()
        stale.write_text("{}")
        stale.chmod(0o644)
        config = write_mcp_config(
            SessionLaunch(plan, "", endpoint, LoopSettings(), paths.root, stale.parent, False)
        )
        assert config == stale and mode_of(config) == 0o600
        assert endpoint.token in config.read_text()

        for client in client_configs.CLIENTS:
            config_file = (
                paths.clients_dir
                / client_configs.render(client, client_configs.http_launch(9, "t")).file_name
            )
            if config_file.exists():
                config_file.chmod(0o644)
            token = f"secret-{client}"
            argv = ["connect", "--root", str(paths.root), "--client", client]
            assert cli.main([*argv, "--transport", "http", "--port", "8766", "--token", token]) == 0
            assert token in config_file.read_text() and mode_of(config_file) == 0o600, client
            config_file.chmod(0o644)
            assert cli.main([*argv, "--transport", "stdio"]) == 0
            assert mode_of(config_file) == 0o600, client
    capsys.readouterr()


# --- task text reaches the agent as data only ---------------------------------------------------------

SHELL_TEXT = "Fix it; $(touch pwned1) `touch pwned2` && touch pwned3 | tee pwned4 > pwned5 \"'$HOME"
COPY_PROMPT = """
import shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
"""


@pytest.mark.slow
def test_task_text_with_shell_syntax_reaches_the_command_agent_as_data_only(
    seeded: tuple[ProjectPaths, Seeded], services: Services, tmp_path: Path
) -> None:
    paths, _ = seeded
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=paths.root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=paths.root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=paths.root, check=True)
    for task in services.tasks.list():
        services.tasks.move(task.id, TaskStatus.SKIPPED.value, Mover.IMPORT)
    task = services.tasks.create(
        "core", "backend", f"Title {SHELL_TEXT}", description=f"Description {SHELL_TEXT}", priority="critical"
    )
    script = tmp_path / "agent.py"
    script.write_text(COPY_PROMPT)
    received = tmp_path / "received-prompt.md"
    template = shlex.join([sys.executable, str(script)]) + " {prompt_file} " + shlex.quote(str(received))
    settings = LoopSettings(  # unconfined: the agent copies its prompt outside the project for the test
        agent="command", agent_command=template, max_iterations=1, session_timeout_s=120, sandbox=False
    )

    async def main() -> RecordingMcp:
        embedded = RecordingMcp(services)
        await embedded.start()
        try:
            runner = build_runner(services, embedded, settings, RunOptions(exit_when_idle=True))
            await asyncio.wait_for(runner.run(), 180)
        finally:
            await embedded.stop()
        return embedded

    embedded = asyncio.run(main())
    prompt = received.read_text(encoding="utf-8")
    assert f"Title {SHELL_TEXT}" in prompt and f"Description {SHELL_TEXT}" in prompt
    leaked = sorted(str(path) for path in tmp_path.rglob("pwned*")) + sorted(
        str(path) for path in Path.cwd().glob("pwned*")
    )
    assert leaked == [], f"the task text ran as a shell command: {leaked}"
    (endpoint,) = embedded.issued
    assert endpoint.context.task_id == task.id
    holders = [
        path
        for path in paths.root.rglob("*")
        if path.is_file() and endpoint.token.encode() in path.read_bytes()
    ]
    assert holders, "the session's credential should be in its MCP config"
    assert {str(path): mode_of(path) for path in holders} == {str(path): 0o600 for path in holders}


# --- loopback unless told otherwise -----------------------------------------------------------------


@pytest.mark.anyio
async def test_the_embedded_host_listens_on_loopback_only(services: Services) -> None:
    embedded = EmbeddedMcp(services)
    await embedded.start()
    try:
        port = int(embedded.url.rsplit(":", 1)[1].split("/")[0])
        assert listening_addresses(port) == {"127.0.0.1"}
    finally:
        await embedded.stop()
    assert listening_addresses(port) == set()


@pytest.mark.slow
def test_the_http_process_listens_on_loopback_unless_told_and_then_warns(
    seeded: tuple[ProjectPaths, Seeded],
) -> None:
    paths, _ = seeded
    with http_process(paths) as (_, url, stderr):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert url.startswith("http://127.0.0.1:") and listening_addresses(port) == {"127.0.0.1"}
        token_line = stderr.wait_for(r"bearer token: (\S+)")
        assert token_line is not None
        token = token_line.group(1)
    assert "reachable from other machines" not in stderr.text()
    for log in paths.logs_dir.glob("*.log"):
        assert token not in log.read_text(encoding="utf-8"), f"{log.name} holds the bearer token"
    with http_process(paths, "--host", "0.0.0.0", "--token", "t0k3n-wide") as (_, url, stderr):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert listening_addresses(port) == {"0.0.0.0"}
        warning = stderr.wait_for(
            r"WARNING.*binding to 0\.0\.0\.0: the server is reachable from other machines"
        )
        assert warning is not None, stderr.text(1)
    warned = [line for line in stderr.text().splitlines() if "reachable from other machines" in line]
    assert len(warned) == 1 and "token" in warned[0]


def test_connect_configs_point_at_loopback(
    seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    assert cli.main(["connect", "--root", str(paths.root), "--client", "claude", "--transport", "http"]) == 0
    document = json.loads(capsys.readouterr().out)
    (server,) = document["mcpServers"].values()
    assert server["url"].startswith("http://127.0.0.1:")
    assert os.path.basename(server["url"]) == "mcp"
