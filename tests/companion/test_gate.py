"""What an attacker would try against the companion page: each refused, nothing changed (issue 25)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ralph_desk.companion import gate
from ralph_desk.companion.lockout import WRONG_CODES
from ralph_desk.domain.enums import Verb
from ralph_desk.services.companion import CODE_LIFETIME, CompanionService
from ralph_desk.store.database import Database
from ralph_desk.store.schema import CompanionCodeRow
from tests.companion.conftest import Served

HTML = {"accept": "text/html"}


def test_pairing_with_the_code_gives_a_cookie_that_opens_the_inbox(served: Served) -> None:
    with served.client() as client:
        assert client.get("/", headers=HTML).status_code == 401
        answer = client.post("/pair", data={"code": served.code().shown, "name": "Ana's phone"})
        assert answer.status_code == 303
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith(f"ralph_companion_{served.host.port}=")
        assert (
            "httponly" in cookie.lower()
            and "secure" in cookie.lower()
            and "samesite=strict" in cookie.lower()
        )
        page = client.get("/")
        assert page.status_code == 200 and "Ana&#39;s phone" in page.text
        assert page.headers["x-frame-options"] == "DENY"
        assert "default-src 'self'" in page.headers["content-security-policy"]


def test_without_a_paired_cookie_every_page_and_action_is_refused(served: Served) -> None:
    services = served.services
    services.features.create("charts", "Charts")
    services.disciplines.create("frontend", "Frontend", "web", "#3366cc")
    task = services.tasks.create("charts", "frontend", "Draw the tide chart")
    ask = services.signals.record(task.id, "s-1", Verb.ASK, question="Metres or feet?", blocking=True)
    with served.client() as client:
        for path in ("/", "/reviews", "/loop", "/events"):
            assert client.get(path).status_code == 401, path
        client.cookies.set(f"ralph_companion_{served.host.port}", "made-up-token")
        assert client.get("/").status_code == 401
        assert client.post(f"/act/answer/{ask.id}", data={"answer": "feet"}).status_code == 401
    assert services.signals.get(ask.id).answer is None


def test_a_revoked_device_is_refused_from_its_next_request(served: Served) -> None:
    with served.paired_client("Lost phone") as client:
        assert client.get("/").status_code == 200
        (device,) = served.services.companion(served.host.home.secret()).devices()
        served.host.companion.revoke(device.id)
        assert client.get("/").status_code == 401


def test_another_origin_or_a_cross_site_post_is_refused(served: Served) -> None:
    code = served.code()
    with served.client(origin="https://evil.example") as client:
        answer = client.post("/pair", data={"code": code.code, "name": "Phone"})
        assert answer.status_code == 403 and "another origin" in answer.json()["error"]
    with served.client() as client:
        del client.headers["origin"]
        assert client.post("/pair", data={"code": code.code, "name": "Phone"}).status_code == 403
        client.headers["origin"] = served.url
        client.headers["sec-fetch-site"] = "cross-site"
        assert client.post("/pair", data={"code": code.code, "name": "Phone"}).status_code == 403
    assert served.host.companion.devices() == []
    with served.client() as client:  # the code was never used: it still pairs
        assert client.post("/pair", data={"code": code.code, "name": "Phone"}).status_code == 303


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1", "127.0.0.1:1.evil.example", "localhost"])
def test_a_wrong_host_header_is_refused(served: Served, host: str) -> None:
    with served.client() as client:
        answer = client.get("/pair", headers={"host": host})
        assert answer.status_code == 421
        assert served.host.authority in answer.json()["error"]


def test_a_reused_or_expired_code_pairs_nothing(served: Served) -> None:
    code = served.code()
    with served.client() as client:
        assert client.post("/pair", data={"code": code.code, "name": "First"}).status_code == 303
    with served.client() as client:
        again = client.post("/pair", data={"code": code.code, "name": "Second"})
        assert again.status_code == 400 and "not valid" in again.text
        old = served.host.companion.issue_code(now=datetime.now(UTC) - CODE_LIFETIME - timedelta(seconds=1))
        late = client.post("/pair", data={"code": old.code, "name": "Late"})
        assert late.status_code == 400
    assert [device.name for device in served.host.companion.devices()] == ["First"]


def test_ten_wrong_codes_lock_pairing_even_for_the_right_code_until_the_desk_makes_a_new_one(
    served: Served,
) -> None:
    right = served.code()
    with served.client() as client:
        for attempt in range(WRONG_CODES):
            answer = client.post("/pair", data={"code": f"WRONG{attempt:03d}", "name": "Guess"})
            assert answer.status_code == 400
        locked = client.post("/pair", data={"code": right.code, "name": "Phone"})
        assert locked.status_code == 429 and "locked" in locked.text
        assert served.host.companion.devices() == []
        fresh = served.code()  # the person at the desk lifts it
        assert client.post("/pair", data={"code": fresh.code, "name": "Phone"}).status_code == 303


def test_a_code_made_by_another_process_after_the_lockout_lifts_it(served: Served) -> None:
    with served.client() as client:
        for attempt in range(WRONG_CODES):
            client.post("/pair", data={"code": f"WRONG{attempt:03d}", "name": "Guess"})
        elsewhere = CompanionService(Database(served.services.db.url), served.host.home.secret())
        try:
            fresh = elsewhere.issue_code()  # `ralph-desk companion pair` in another terminal
        finally:
            elsewhere.db.dispose()
        assert client.post("/pair", data={"code": fresh.code, "name": "Phone"}).status_code == 303


def test_a_ten_megabyte_body_is_refused_before_it_is_read_whole(served: Served) -> None:
    big = b"x" * (10 * 1024 * 1024)
    with served.paired_client() as client:
        answer = client.post(
            "/pair", content=big, headers={"content-type": "application/x-www-form-urlencoded"}
        )
        assert answer.status_code == 413 and "64 KiB" in answer.json()["error"]

        def chunks() -> Iterator[bytes]:
            for _ in range(160):
                yield b"y" * 65536

        streamed = client.post("/pair", content=chunks(), headers={"content-type": "text/plain"})  # no length
        assert streamed.status_code == 413
    assert len(served.host.companion.devices()) == 1


def test_other_methods_are_refused(served: Served) -> None:
    with served.paired_client() as client:
        for method in ("PUT", "DELETE", "PATCH"):
            assert client.request(method, "/").status_code == 405


def test_the_mcp_servers_credentials_and_the_companions_open_nothing_of_each_other(served: Served) -> None:
    from ralph_desk.domain.session import SessionContext
    from ralph_desk.mcp_server.embedded import EmbeddedMcp

    mcp = EmbeddedMcp(served.services)
    served.loop.run(mcp.start())
    try:
        agent_token = mcp.host.issue(SessionContext())
        with served.client(authorization=f"Bearer {agent_token}") as client:
            client.cookies.set(f"ralph_companion_{served.host.port}", agent_token)
            assert client.get("/").status_code == 401  # an agent's credential is no device
        with served.paired_client() as phone:
            device_cookie = phone.cookies[f"ralph_companion_{served.host.port}"]
        import httpx2

        asked = httpx2.post(
            mcp.url,
            headers={
                "authorization": f"Bearer {device_cookie}",
                "accept": "application/json, text/event-stream",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            timeout=30,
        )
        assert asked.status_code == 401  # a device's token is no agent's
    finally:
        served.loop.run(mcp.stop())


def test_a_live_stream_tells_of_changes_and_ends_when_its_device_is_revoked(served: Served) -> None:
    with served.paired_client() as phone, phone.stream("GET", "/events") as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(lines) == "retry: 3000"
        served.services.features.create("charts", "Charts")
        assert next(line for line in lines if line.startswith("event:")) == "event: changed"
        assert "features" in next(lines)
        (device,) = served.host.companion.live_devices()
        served.host.companion.revoke(device.id)
        assert [line for line in lines if line.startswith("data:")] == []  # the stream ended


def test_a_code_row_dated_in_the_future_does_not_lift_a_lockout(served: Served) -> None:
    with served.services.db.write() as unit:  # a hostile clone's database, or anything that wrote it
        unit.session.add(
            CompanionCodeRow(
                code_hash="x" * 64, created_at=datetime(2999, 1, 1), expires_at=datetime(2999, 1, 1)
            )
        )
    with served.client() as client:
        answers = [
            client.post("/pair", data={"code": f"WRONG{attempt:03d}", "name": "Guess"}).status_code
            for attempt in range(WRONG_CODES + 2)
        ]
    assert answers[-1] == 429


def test_on_loopback_the_page_answers_as_localhost_too(served: Served) -> None:
    port = served.host.port
    with served.client(origin=f"https://localhost:{port}") as client:
        assert client.get("/pair", headers={"host": f"localhost:{port}"}).status_code == 200
        paired = client.post(
            "/pair",
            data={"code": served.code().code, "name": "Tunnel"},
            headers={"host": f"localhost:{port}"},
        )
        assert paired.status_code == 303
        crossed = client.post(  # reached as localhost, posting as the address: another origin
            "/pair",
            data={"code": served.code().code, "name": "Other"},
            headers={"host": f"localhost:{port}", "origin": served.url},
        )
        assert crossed.status_code == 403


def test_strangers_see_nothing_of_the_project(served: Served) -> None:
    with served.client() as client:
        for path in ("/pair", "/static/nothing-here.css"):
            assert "· Companion</title>" not in client.get(path, headers=HTML).text  # the project's title


def test_a_body_that_trickles_in_is_cut_off(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gate, "BODY_DEADLINE_S", 0.5)

    def slowly() -> Iterator[bytes]:
        yield b"code="
        served.loop.run(asyncio.sleep(2))  # the client stalls mid-body (the server's loop keeps running)
        yield b"ABC"

    with served.client() as client:
        answer = client.post(
            "/pair", content=slowly(), headers={"content-type": "application/x-www-form-urlencoded"}
        )
    assert answer.status_code == 408


def test_a_websocket_never_reaches_the_app() -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    async def nothing() -> Any:
        return {}

    async def identify(token: str) -> None:
        return None

    guarded = gate.CompanionGate(app, frozenset({"127.0.0.1:1"}), identify)
    scope = {"type": "websocket", "path": "/", "headers": [(b"host", b"127.0.0.1:1")]}
    asyncio.run(guarded(scope, nothing, nothing))
    asyncio.run(guarded({"type": "lifespan"}, nothing, nothing))
    assert reached == ["lifespan"]
