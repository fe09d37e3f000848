"""The app's origin check: a request from a page of another origin is refused (Jupyter's rule)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("workbench.views.app")

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
#: What ``Sec-Fetch-Site`` says of a request a page of another origin made (chromium, Firefox, Safari).
FOREIGN_SITES = (b"same-site", b"cross-site")


def header(headers: Any, name: bytes) -> bytes | None:
    """The value of header ``name`` (lower case) in an ASGI header list (a request's or a
    response's), or None.

    Args:
        headers: The ASGI header list.
        name: The header's name, lower case.

    Returns:
        Its value, or None.
    """
    for key, value in headers or []:
        if bytes(key).lower() == name:
            return bytes(value)
    return None


def origin_allowed(scope: Scope) -> tuple[bool, str]:
    """Whether the HTTP request or websocket upgrade ``scope`` may reach the app, and why not.

    As Jupyter decides: an ``Origin`` header must name the host the request was sent to (its
    ``Host`` header); a request without one comes from a non-browser client (which still needs
    the token) or from the page's own navigation. A browser's request from a page of another
    origin that carries no ``Origin`` (a ``<script src>`` or ``<img>``: ``Sec-Fetch-Site`` says
    ``same-site`` or ``cross-site``) is refused too, unless it is a top-level navigation
    (following a link to the app, which shows the page but gives the other page nothing).

    Args:
        scope: The ASGI scope.

    Returns:
        (allowed, why not).
    """
    host = (header(scope.get("headers"), b"host") or b"").decode("latin-1").strip().lower()
    origin = header(scope.get("headers"), b"origin")
    if origin is not None:
        text = origin.decode("latin-1").strip()
        parts = urlsplit(text)
        if text.lower() == "null" or not parts.netloc:
            return False, f"Origin {text[:80]!r} is not a page's origin"
        if parts.netloc.lower() != host:
            return False, f"Origin {text[:80]!r} does not match the host {host[:80]!r}"
        return True, ""
    site = (header(scope.get("headers"), b"sec-fetch-site") or b"").strip().lower()
    mode = (header(scope.get("headers"), b"sec-fetch-mode") or b"").strip().lower()
    if site in FOREIGN_SITES and mode != b"navigate":
        return False, f"a {site.decode('latin-1')} request without an Origin (Sec-Fetch-Mode {mode.decode('latin-1')})"
    return True, ""


class OriginMiddleware:
    """ASGI middleware: answers a request ``origin_allowed`` refuses with 403 (a websocket upgrade
    is closed before it is accepted, so the client gets 403, never 101); passes the rest on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        allowed, why = origin_allowed(scope)
        if allowed:
            await self.app(scope, receive, send)
            return
        log.warning("refused %s %s: %s", scope["type"], scope.get("path", ""), why)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4403})
            return
        body = (
            b"<!doctype html><title>foreign origin</title><p>Refused: this request came from a page of another origin."
        )
        await send(
            {"type": "http.response.start", "status": 403, "headers": [(b"content-type", b"text/html; charset=utf-8")]}
        )
        await send({"type": "http.response.body", "body": body})
