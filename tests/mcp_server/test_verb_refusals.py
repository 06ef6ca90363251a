"""A verb's bad arguments get one refusal, worded the same from an MCP client and from the service API."""

from __future__ import annotations

from typing import Any

import pytest

from ralph_desk.domain.enums import Recipe
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError
from tests.mcp_server.conftest import ClientFactory, Demo, error_of, snapshot

pytestmark = pytest.mark.anyio

# (verb, arguments, the field at fault, what is allowed there), one bad call per verb.
BAD_CALLS = [
    ("done", {}, "summary", "a non-empty text (required by done)"),
    ("partial", {"summary": "Axes.", "remaining": "x" * 20_001}, "remaining", "at most 20000 characters"),
    ("stuck", {"reason": "before\x00after"}, "reason", "a non-empty text without NUL characters"),
    ("ask", {"question": "Units?", "blocking": "yes"}, "blocking", "true or false"),
    (
        "flag",
        {"what": "Off by one.", "severity": "fatal", "category": "bug"},
        "severity",
        "one of info, warning, blocking",
    ),
    (
        "learned",
        {"text": "Metres.", "kind": "discovery", "scope": "galaxy"},
        "scope",
        "one of project, feature, task",
    ),
    (
        "suggest",
        {"what": "Legend.", "kind": "new_task", "why": "Clarity.", "feature": "Billing Stuff"},
        "feature",
        "1-64 characters of a-z, 0-9, '-' and '_', starting with a letter or digit",
    ),
    ("blocked", {"on": "   ", "kind": "external"}, "on", "a non-empty text without NUL characters"),
]


@pytest.mark.parametrize(
    ("verb", "arguments", "field", "allowed"), BAD_CALLS, ids=[call[0] for call in BAD_CALLS]
)
async def test_a_bad_verb_call_is_refused_alike_from_mcp_and_from_the_service(
    connect: ClientFactory,
    services: Services,
    demo: Demo,
    verb: str,
    arguments: dict[str, Any],
    field: str,
    allowed: str,
) -> None:
    before = snapshot(services)

    async with connect(Recipe.TASK_EXECUTION, task_id=demo.login_api, session_id="s-1") as client:
        message = error_of(await client.call_tool(verb, arguments))
    with pytest.raises(InvalidValueError) as caught:
        services.signals.record(demo.login_api, "s-1", verb, **arguments)

    assert (caught.value.field, caught.value.allowed) == (field, allowed)
    assert message.startswith(f"invalid arguments for {verb!r}: {field}: ")
    assert message.count("allowed: ") == 1
    assert message.endswith(f"allowed: {allowed}")
    assert snapshot(services) == before
