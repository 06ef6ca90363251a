"""What an attacker would try against the companion page: each refused, nothing changed (issue 25)."""

from __future__ import annotations

from tests.companion.conftest import Served


def test_pairing_with_the_code_gives_a_cookie_that_opens_the_inbox(served: Served) -> None:
    with served.client() as client:
        assert client.get("/", headers={"accept": "text/html"}).status_code == 401
        answer = client.post("/pair", data={"code": served.code().shown, "name": "Ana's phone"})
        assert answer.status_code == 303
        cookie = answer.headers["set-cookie"]
        assert (
            "HttpOnly" in cookie
            and "Secure" in cookie
            and "SameSite=strict" in cookie.replace("Strict", "strict")
        )
        page = client.get("/")
        assert page.status_code == 200 and "Ana&#39;s phone" in page.text
        assert (
            page.headers["x-frame-options"] == "DENY"
            and "default-src 'self'" in page.headers["content-security-policy"]
        )
