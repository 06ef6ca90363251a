"""A trivial, fast agent for the loop benchmark: reads its MCP config, calls `done` over HTTP, exits.

It is what the command-template agent runs in place of a real coding agent, so that the loop's own
work can be timed with the real post-processing path (the session ends with a real `done` signal).
Standard library only, so that it starts in a few tens of milliseconds.

    python bench/fake_agent.py MCP_CONFIG_JSON
"""

from __future__ import annotations

import http.client
import json
import sys
from typing import Any
from urllib.parse import urlsplit

PROTOCOL = "2025-11-25"


def _message(response: http.client.HTTPResponse) -> dict[str, Any]:
    body = response.read().decode()
    if response.status >= 400:
        raise SystemExit(f"HTTP {response.status}: {body[:300]}")
    if response.getheader("content-type", "").startswith("application/json"):
        return json.loads(body) if body else {}
    for line in body.splitlines():
        if line.startswith("data:"):
            message: dict[str, Any] = json.loads(line[5:])
            if "id" in message:
                return message
    return {}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    server = config["mcpServers"]["ralph"]
    url = urlsplit(server["url"])
    headers = {
        **server.get("headers", {}),
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)

    def post(document: dict[str, Any]) -> tuple[http.client.HTTPResponse, dict[str, Any]]:
        connection.request("POST", url.path, body=json.dumps(document), headers=headers)
        response = connection.getresponse()
        return response, _message(response)

    response, answer = post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "fake", "version": "1"},
            },
        }
    )
    headers["Mcp-Session-Id"] = response.getheader("mcp-session-id") or ""
    headers["MCP-Protocol-Version"] = PROTOCOL
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    _, answer = post(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "done", "arguments": {"summary": "nothing to do: the benchmark's fake agent"}},
        }
    )
    result = answer.get("result", {})
    if result.get("isError"):
        raise SystemExit(f"done failed: {result}")
    connection.request("DELETE", url.path, headers=headers)
    connection.getresponse().read()
    print("called done", flush=True)


if __name__ == "__main__":
    main()
