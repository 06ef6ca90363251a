"""An HTTP MCP session no client message reached for its idle time is released, even with its stream open."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from tests.mcp_server.test_transports import authorised

pytestmark = pytest.mark.anyio
IDLE_S = 0.5
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Releases(logging.Handler):
    """The sessions the host reports released, each setting `seen`."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.sessions: list[str] = []
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        said = record.getMessage()
        if said.startswith("MCP session ") and "released" in said and isinstance(record.args, tuple):
            self.sessions.append(str(record.args[0]))
            self.seen.set()


@pytest.fixture
def releases() -> Iterator[Releases]:
    logger = logging.getLogger("ralph_desk.mcp")
    handler, level = Releases(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


async def test_a_session_idle_past_its_time_is_released_with_its_stream_open_and_a_new_one_works(
    tmp_path: Path, releases: Releases
) -> None:
    paths = init_project(tmp_path / "proj", title="Idle sessions")
    services = Services.open(paths)
    embedded = EmbeddedMcp(services, session_idle_s=IDLE_S)
    await embedded.start()
    try:
        endpoint = embedded.open_session(SessionContext(recipe=Recipe.IDE, session_id="s-idle"))
        async with Client(
            streamable_http_client(embedded.url, http_client=authorised(endpoint.token)), mode="legacy"
        ) as client:
            assert (await client.list_tools()).tools
            with anyio.fail_after(30):  # the client stays connected (its GET stream open) and says nothing
                await releases.seen.wait()
            (released,) = releases.sessions
            async with authorised(endpoint.token, Accept="application/json, text/event-stream") as http:
                gone = await http.post(embedded.url, json=PING, headers={"mcp-session-id": released})
            assert gone.status_code == 404, gone.text
        async with Client(
            streamable_http_client(embedded.url, http_client=authorised(endpoint.token)), mode="legacy"
        ) as fresh:
            assert (await fresh.list_tools()).tools
    finally:
        await embedded.stop()
        services.close()
    assert len(releases.sessions) <= 2  # the second one too, at most, if the sweep met it idle
