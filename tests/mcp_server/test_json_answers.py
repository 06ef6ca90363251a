"""Over HTTP each POST is answered with plain JSON, and the official clients work with that."""

from __future__ import annotations

import http.client
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ralph_desk.demo import create_demo
from ralph_desk.project import ProjectPaths
from tests.support.http_process import serving
from tests.support.jsonrpc import INITIALIZE
from tests.support.npm_tools import claude_bin, claude_mcp, missing_reason

pytestmark = pytest.mark.slow

TOKEN = "json-answers-token"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> ProjectPaths:
    return create_demo(tmp_path_factory.mktemp("json") / "demo")


@pytest.fixture
def url(demo: ProjectPaths) -> Iterator[str]:
    """A standalone `ralph-desk mcp --transport http` server (the same host as the embedded one)."""
    command = [sys.executable, "-m", "ralph_desk", "mcp", "--root", str(demo.root)]
    with serving([*command, "--transport", "http", "--token", TOKEN]) as found:
        yield found


def test_an_initialize_post_is_answered_with_one_json_document(url: str) -> None:
    parts = urlsplit(url)
    assert parts.hostname is not None
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    body = INITIALIZE
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    connection.request("POST", parts.path, body=json.dumps(body), headers=headers)
    response = connection.getresponse()

    assert response.status == 200
    assert response.getheader("content-type", "").startswith("application/json")
    assert json.loads(response.read())["result"]["serverInfo"]["name"] == "ralph"
    connection.close()


def test_claude_code_reports_the_http_server_connected(url: str, tmp_path: Path) -> None:
    binary = claude_bin()
    if binary is None:
        pytest.skip(missing_reason("Claude Code"))
    add = claude_mcp(
        binary, tmp_path, "add", "--scope", "user", "--transport", "http", "ralph", url,
        "--header", f"Authorization: Bearer {TOKEN}",
    )  # fmt: skip
    assert add.returncode == 0, add.stderr
    listed = claude_mcp(binary, tmp_path, "list", timeout=120)
    assert re.search(r"^ralph: .*Connected", listed.stdout, re.MULTILINE), listed.stdout + listed.stderr
