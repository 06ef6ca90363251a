"""What the loop needs from the MCP host: an endpoint per agent session, closed when the session ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ralph_desk.domain.session import SessionContext


@dataclass(frozen=True)
class SessionEndpoint:
    """Where one agent session reaches its MCP server, and the credential that names the session."""

    url: str
    token: str
    context: SessionContext

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP headers the agent must send."""
        return {"Authorization": f"Bearer {self.token}"}


class EndpointIssuer(Protocol):
    """Issues and revokes per-session endpoints (the embedded HTTP server implements it)."""

    def open_session(self, context: SessionContext) -> SessionEndpoint:
        """A fresh endpoint reaching only `context`'s tools."""
        ...

    def close_session(self, endpoint: SessionEndpoint) -> None:
        """Revoke the endpoint's credential."""
        ...
