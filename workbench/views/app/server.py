"""The app's server: Solara's Starlette app behind a token check, on a loopback address."""

from __future__ import annotations

import errno
import hmac
import ipaddress
import logging
import os
import secrets
import socket
import warnings
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from workbench.errors import WorkbenchError
from workbench.util.memory import retain_freed_memory
from workbench.views.app import options as app_options
from workbench.views.app.assets import AssetCache
from workbench.views.app.origin import ASGIApp, OriginMiddleware, Scope

log = logging.getLogger("workbench.views.app")

#: The cookie that carries the token after the first visit with ``?token=``.
COOKIE = "workbench-app-token"
#: The Solara page component every session renders.
PAGE = "workbench.views.app.page:Page"
LOOPBACK_NAMES = ("localhost",)


class HostError(WorkbenchError):
    """A ``--host`` the app refuses to bind without being asked explicitly."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and every address in 127.0.0.0/8 or ``::1``.

    Args:
        host: A host name or IP address.

    Returns:
        Whether it only reaches this machine.
    """
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, *, allow_remote: bool) -> None:
    """``HostError`` unless ``host`` is a loopback address or ``allow_remote`` is set.

    Args:
        host: The address to bind.
        allow_remote: Whether the user asked for a non-loopback bind (``--allow-remote``).

    Raises:
        HostError: ``host`` is not a loopback address and ``allow_remote`` is False.
    """
    if not is_loopback(host) and not allow_remote:
        raise HostError(
            f"--host {host}: not a loopback address; the dashboard would be reachable from other machines. "
            "Reach it through an SSH tunnel instead, or pass --allow-remote if you mean it"
        )


class PortInUseError(WorkbenchError):
    """A ``--port`` that cannot be bound (another server listens there, or it is not allowed)."""


def check_port(host: str, port: int) -> None:
    """``PortInUseError`` naming ``host:port`` when it cannot be bound now, found by binding
    it once as uvicorn will (``SO_REUSEADDR``) and letting go, before any URL is printed.

    Args:
        host: The address to bind.
        port: The port to bind.

    Raises:
        PortInUseError: The port cannot be bound now.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        reason = "already in use (another server listens there)" if error.errno == errno.EADDRINUSE else str(error)
        raise PortInUseError(f"--port {port}: cannot serve on {host}:{port}: {reason}; pick another --port") from None


def new_token() -> str:
    """A random token, 48 hex digits (as unguessable as Jupyter's).

    Returns:
        48 hex digits from ``secrets``.
    """
    return secrets.token_hex(24)


class TokenMiddleware:
    """ASGI middleware: lets a request through when it carries ``?token=TOKEN`` (then sets the
    token cookie, so the page's own requests and its websocket pass) or the cookie; answers
    anything else with 403 (a websocket is closed)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token
        self._token = token.encode("utf-8")

    def _matches(self, value: str) -> bool:
        """Whether ``value`` is the token, compared as bytes in constant time (``compare_digest``
        on ``str`` raises for non-ASCII text; any character encodes, surrogates included)."""
        return hmac.compare_digest(value.encode("utf-8", "surrogatepass"), self._token)

    def _authorised(self, scope: Scope) -> tuple[bool, bool]:
        """(the request carries the token, it came in the query). Never raises: a request that
        cannot be read (odd bytes, a malformed cookie) simply carries no token."""
        try:
            query = parse_qs(bytes(scope.get("query_string") or b"").decode("latin-1"))
            if any(self._matches(value) for value in query.get("token", [])):
                return True, True
            cookie = SimpleCookie()
            for name, value in scope.get("headers") or []:
                if bytes(name).lower() == b"cookie":
                    cookie.load(bytes(value).decode("latin-1"))
            morsel = cookie.get(COOKIE)
            return (morsel is not None and self._matches(morsel.value)), False
        except Exception:  # noqa: BLE001 - whatever the request holds, it is refused, never a 500
            return False, False

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        allowed, from_query = self._authorised(scope)
        if not allowed:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 4403})
                return
            body = (
                b"<!doctype html><title>token needed</title><p>This Crafter Reward Workbench dashboard needs its "
                b"token: open the URL <code>workbench app</code> printed (it ends in <code>?token=...</code>).</p>"
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"content-type", b"text/html; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        if not from_query or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookie = f"{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode("latin-1")

        async def send_with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def build_app(token: str | None) -> ASGIApp:
    """Solara's Starlette app serving the workbench page, its static files answered from memory
    (``AssetCache``), wrapped in ``TokenMiddleware`` unless ``token`` is None, and always in
    ``OriginMiddleware`` (a page of another origin is refused, token or not). Importing
    Solara's server reads ``SOLARA_APP``, so it is set first.

    Args:
        token: The token every request must carry, or None (``--no-token``).

    Returns:
        The ASGI app to serve.
    """
    os.environ["SOLARA_APP"] = PAGE
    os.environ.setdefault("SOLARA_TELEMETRY_MIXPANEL_ENABLE", "False")  # no calls home from a closed network
    os.environ.setdefault("SOLARA_THEME_SHOW_BANNER", "False")  # its badge would cover the pages' corner
    for noisy in ("reacton", "solara"):  # their INFO lines log every render; errors still show
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    # Solara warns on every page over plain http unless the host is spelled "localhost"; on a
    # loopback address (our default) its lax cookie is what we want, so the warning is noise.
    warnings.filterwarnings("ignore", message="Cookies with samesite=none require https")
    from solara.server.starlette import app as solara_app

    app = AssetCache(solara_app)
    return OriginMiddleware(app if token is None else TokenMiddleware(app, token))


def url(host: str, port: int, token: str | None) -> str:
    """The address to open in a browser (with the token as a query parameter).

    Args:
        host: The bound address (an IPv6 one is put in brackets).
        port: The bound port.
        token: The token, or None.

    Returns:
        ``http://HOST:PORT/`` with ``?token=TOKEN`` when there is one.
    """
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(
    options: app_options.AppOptions,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    allow_remote: bool = False,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the dashboard until interrupted: checks ``host`` (``HostError``) and ``port``
    (``PortInUseError``, before the URL is printed), sets the options
    every page session starts from, prints the URL through ``announce`` and runs uvicorn. The
    server owns its process, so it opts into keeping freed memory for re-scoring
    (``workbench.util.memory``).

    Args:
        options: What every page session starts from.
        host: The address to bind (loopback unless ``allow_remote``).
        port: The port to bind.
        token: The token every request must carry, or None.
        allow_remote: Allow a ``host`` other machines can reach.
        announce: Where the URL (and the no-token warning) is printed.

    Raises:
        HostError: A non-loopback ``host`` without ``allow_remote``.
        PortInUseError: The port cannot be bound.
    """
    check_host(host, allow_remote=allow_remote)
    check_port(host, port)
    retain_freed_memory()
    import uvicorn

    app_options.current = options
    app = build_app(token)
    announce(f"Crafter Reward Workbench dashboard: {url(host, port, token)}")
    if token is None:
        announce("warning: --no-token: anyone who can reach this port can use the dashboard")
    os.environ["SERVER_NAME"], os.environ["SERVER_PORT"] = host, str(port)
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=2**27)
