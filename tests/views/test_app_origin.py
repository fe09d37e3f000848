"""The app's origin check as an ASGI call chain: a page of another origin is refused on every
HTTP route and on the websocket upgrade; the page's own requests and non-browser clients pass."""

from __future__ import annotations

import asyncio

import pytest

from workbench.views.app.origin import OriginMiddleware, origin_allowed

HOST = b"127.0.0.1:8765"


async def _page(scope, receive, send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.accept"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"the page"})


def _call(kind: str, headers: dict[bytes, bytes], path: str = "/") -> dict:
    sent: list[dict] = []
    scope = {"type": kind, "path": path, "query_string": b"", "headers": list(headers.items())}

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    asyncio.run(OriginMiddleware(_page)(scope, receive, send))
    return sent[0]


@pytest.mark.parametrize("kind", ["http", "websocket"])
def test_the_pages_own_origin_and_clients_without_one_pass(kind):
    passed = "websocket.accept" if kind == "websocket" else 200
    for headers in (
        {b"host": HOST, b"origin": b"http://127.0.0.1:8765"},
        {b"host": HOST, b"origin": b"HTTP://127.0.0.1:8765"},  # the scheme's case does not matter
        {b"host": HOST},  # curl, urllib: no Origin (they still need the token)
        {b"host": HOST, b"sec-fetch-site": b"same-origin", b"sec-fetch-mode": b"cors"},
        {b"host": HOST, b"sec-fetch-site": b"cross-site", b"sec-fetch-mode": b"navigate"},  # a followed link
    ):
        answer = _call(kind, headers, "/jupyter/api/kernels/k/channels")
        assert answer.get("status", answer["type"]) == passed, headers


@pytest.mark.parametrize("kind", ["http", "websocket"])
def test_a_foreign_origin_is_refused_on_every_route(kind):
    for origin in (b"http://evil.example", b"http://127.0.0.1:9999", b"http://localhost:8765", b"null", b"garbage"):
        for path in ("/", "/jupyter/api/kernels/k/channels", "/static/main.js", "/_solara/api/close/k"):
            answer = _call(kind, {b"host": HOST, b"origin": origin}, path)
            if kind == "websocket":
                assert answer == {"type": "websocket.close", "code": 4403}, (origin, path)
            else:
                assert answer["status"] == 403, (origin, path)
    # a <script src> from another port: no Origin, but the browser says it is same-site, not same-origin
    refused = _call(kind, {b"host": HOST, b"sec-fetch-site": b"same-site", b"sec-fetch-mode": b"no-cors"})
    assert refused.get("status", refused.get("code")) in (403, 4403)


def test_the_reason_names_the_origin_and_the_host():
    allowed, why = origin_allowed({"headers": [(b"host", HOST), (b"origin", b"http://evil.example")]})
    assert not allowed and "http://evil.example" in why and "127.0.0.1:8765" in why
