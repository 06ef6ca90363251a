"""The embedded server of the window and the loop: one HTTP host, a credential per agent session."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.domain.session import SessionContext, safe_file_stem
from ralph_desk.mcp_server.auth import SessionTokens
from ralph_desk.mcp_server.binding import LoopControl
from ralph_desk.mcp_server.calllog import in_project
from ralph_desk.mcp_server.hosting import SESSION_IDLE_S, HttpHost
from ralph_desk.mcp_server.server import build_server
from ralph_desk.project import ProjectPaths, contained
from ralph_desk.services.container import Services

log = logging.getLogger("ralph_desk.mcp")


def write_private_json(paths: ProjectPaths, path: Path, document: object) -> None:
    """Write JSON readable by the owner only, inside the project and never through a link."""
    contained.write_private_text(paths.root, path, json.dumps(document, indent=2) + "\n")


class EmbeddedMcp:
    """Starts with the window (or a headless run), issues per-session endpoints, stops on quit.

    Every tool call gets a line in `call_log` (default: a new file in the project's `.ralph/logs/`).
    """

    def __init__(
        self,
        services: Services,
        loop: LoopControl | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        call_log: Path | None = None,
        session_idle_s: float = SESSION_IDLE_S,
    ):
        self.services = services
        self.tokens = SessionTokens()
        self.call_log = call_log or in_project(services.paths, "embedded")
        self.server = build_server(services, loop=loop, call_log=self.call_log)
        self.host = HttpHost(self.server, self.tokens, host=host, port=port, session_idle_s=session_idle_s)

    @property
    def url(self) -> str:
        """The server's endpoint."""
        return self.host.url

    async def start(self) -> None:
        """Serve in the running loop."""
        await self.host.start()

    async def stop(self) -> None:
        """Stop serving and revoke nothing further (credentials die with the process)."""
        await self.host.stop()

    def open_session(self, context: SessionContext) -> SessionEndpoint:
        """Issue a credential for one session and record its context (latest one in context.json)."""
        endpoint = SessionEndpoint(self.host.url, self.tokens.issue(context), context)
        paths = self.services.paths
        document = {**context.to_json(), "url": endpoint.url}
        write_private_json(paths, paths.context_file, context.to_json())
        if context.session_id:
            write_private_json(
                paths,
                paths.sessions_dir / f"{safe_file_stem(context.session_id)}.json",
                {**document, "token": endpoint.token},
            )
        log.info("session %s opened (%s, task %s)", context.session_id, context.recipe.value, context.task_id)
        return endpoint

    def close_session(self, endpoint: SessionEndpoint) -> None:
        """Revoke the session's credential; its file stays as a record, without the credential."""
        self.tokens.revoke(endpoint.token)
        session_id = endpoint.context.session_id
        if session_id:
            paths = self.services.paths
            path = paths.sessions_dir / f"{safe_file_stem(session_id)}.json"
            if path.exists():
                write_private_json(
                    paths, path, {**endpoint.context.to_json(), "url": endpoint.url, "revoked": True}
                )
        log.info("session %s closed", session_id)
