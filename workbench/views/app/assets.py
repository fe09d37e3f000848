"""The page's static files (Solara's bundles, the widgets' scripts) kept in memory, gzipped once.

Solara serves them from disk through Starlette's ``GZipMiddleware``, which compresses every
response again as it streams it: its 3.5 MB Vuetify bundle (1.05 MB gzipped) finished arriving
0.8 s after the page asked for it over loopback, 0.2 s when answered from memory. These files
are installed packages' and do not change while the server runs, so each is read and gzipped
once (on its first request, 0.17 s for that bundle), then answered from memory."""

from __future__ import annotations

import asyncio
import gzip
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from workbench.views.app.origin import ASGIApp, Scope, header

#: Where Solara mounts installed packages' files (its CDN mirror, its own assets, nbextensions).
STATIC_PREFIXES = ("/_solara/cdn/", "/static/", "/jupyter/nbextensions/")
#: Content types worth compressing (fonts and images other than SVG are compressed already).
COMPRESSIBLE = (b"text/", b"application/javascript", b"application/json", b"image/svg+xml")
#: gzip's usual trade (level 9 saves 0.5% more of the bundle in 1.5x the time).
LEVEL = 6
#: A file larger than this is passed through as Solara sends it, never held in memory.
MAX_FILE_BYTES = 32 * 2**20
#: The cache stops growing past this (the page asks for about 6 MB).
MAX_CACHE_BYTES = 128 * 2**20
#: Headers the cache sets itself (the rest of Solara's are kept as they are).
OWN_HEADERS = (b"content-length", b"content-encoding", b"transfer-encoding", b"vary", b"etag", b"cache-control")
#: Headers that would make Solara answer something other than the whole file.
CONDITIONAL = (b"accept-encoding", b"if-none-match", b"if-modified-since", b"range", b"if-range")
#: A versioned path (``name@1.2.3/``) or query (``?v=HASH``): what it names never changes.
VERSIONED_PATH, VERSIONED_QUERY = re.compile(r"@\d[^/]*/"), re.compile(rb"(?:^|&)v=[^&]")


@dataclass(frozen=True)
class Asset:
    """One file as Solara served it: ``headers`` without those in ``OWN_HEADERS``, the raw
    ``body``, its ``gzipped`` form (None when not worth it) and its ``etag`` (quoted)."""

    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    gzipped: bytes | None
    etag: bytes | None
    immutable: bool

    @property
    def size(self) -> int:
        """Bytes held in memory."""
        return len(self.body) + len(self.gzipped or b"")


def accepts_gzip(scope: Scope) -> bool:
    """Whether the request's ``Accept-Encoding`` lists gzip (or ``*``) with a non-zero q.

    Args:
        scope: The ASGI request scope.

    Returns:
        True when gzip is acceptable.
    """
    value = (header(scope.get("headers"), b"accept-encoding") or b"").decode("latin-1").lower()
    for item in value.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip() in ("gzip", "*"):
            quality = params.strip().removeprefix("q=")
            try:
                return not params.strip() or float(quality) > 0
            except ValueError:
                return False
    return False


def _etag_matches(scope: Scope, etag: bytes) -> bool:
    wanted = header(scope.get("headers"), b"if-none-match")
    if wanted is None:
        return False
    tags = {tag.strip().removeprefix(b"W/") for tag in wanted.split(b",")}
    return b"*" in tags or etag in tags


class AssetCache:
    """ASGI middleware: a GET or HEAD under ``STATIC_PREFIXES`` is answered from memory (gzipped
    when the client takes it). The first request for a file fetches it whole from ``app``
    (without the request's encoding and conditional headers) while later ones for the same
    file wait for it. A range request goes to ``app`` unchanged; an answer other than a 200, or
    a file over ``MAX_FILE_BYTES``, is passed on as ``app`` gave it and never kept."""

    def __init__(self, app: ASGIApp, *, max_bytes: int = MAX_CACHE_BYTES) -> None:
        self.app, self.max_bytes = app, max_bytes
        self._assets: dict[tuple[str, bytes], Asset] = {}
        self._fetching: dict[tuple[str, bytes], asyncio.Future[Asset | None]] = {}
        self.held = 0

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") not in ("GET", "HEAD")
            or not str(scope.get("path", "")).startswith(STATIC_PREFIXES)
            or header(scope.get("headers"), b"range") is not None
        ):
            await self.app(scope, receive, send)
            return
        key = (str(scope["path"]), bytes(scope.get("query_string") or b""))
        asset = self._assets.get(key)
        if asset is None:
            pending = self._fetching.get(key)
            if pending is None:
                asset = await self._fetch(key, scope, receive, send)
                if asset is None:  # ``_fetch`` passed on what ``app`` answered
                    return
            else:
                asset = await asyncio.shield(pending)
                if asset is None:  # not to be kept, or that fetch failed: ask ``app`` as usual
                    await self.app(scope, receive, send)
                    return
        await self._answer(asset, scope, send)

    async def _fetch(
        self,
        key: tuple[str, bytes],
        scope: Scope,
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> Asset | None:
        """Read the file at ``key`` for every request waiting on it; keep it while the cache has
        room. Returns None when it is not to be kept (then what ``app`` answered went to ``send``)."""
        future: asyncio.Future[Asset | None] = asyncio.get_running_loop().create_future()
        self._fetching[key] = future
        asset = None
        try:
            asset = await self._read(scope, receive, send)
            if asset is not None and self.held + asset.size <= self.max_bytes:
                self._assets[key] = asset
                self.held += asset.size
            return asset
        finally:  # a failed or cancelled fetch leaves the waiters to ask ``app`` themselves
            future.set_result(asset)
            del self._fetching[key]

    async def _read(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> Asset | None:
        """Ask ``app`` for the whole file as a GET. Returns the Asset; or None for an answer other
        than a 200, or a body over ``MAX_FILE_BYTES``, after passing that answer on to ``send``
        (as it came: identity encoding is always acceptable, a 200 for a conditional request too)."""
        headers = [(k, v) for k, v in scope.get("headers") or [] if bytes(k).lower() not in CONDITIONAL]
        start: dict[str, Any] = {}
        chunks: list[bytes] = []
        passing = False

        async def capture(message: Any) -> None:
            nonlocal passing
            if passing:
                await send(message)
                return
            if message["type"] == "http.response.start":
                start.update(message)
                length = header(message.get("headers"), b"content-length")
                too_long = length is not None and length.isdigit() and int(length) > MAX_FILE_BYTES
                passing = message.get("status") != 200 or too_long
            elif message["type"] == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))
                passing = sum(map(len, chunks)) > MAX_FILE_BYTES
            if passing:
                await send(start)
                for chunk in chunks:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if message["type"] == "http.response.body" and not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b""})

        await self.app({**scope, "method": "GET", "headers": headers}, receive, capture)
        if passing or start.get("status") != 200:
            return None
        body = b"".join(chunks)
        kept = tuple((bytes(k), bytes(v)) for k, v in start.get("headers") or [] if bytes(k).lower() not in OWN_HEADERS)
        gzipped = None
        if len(body) >= 1000 and (header(kept, b"content-type") or b"").lower().startswith(COMPRESSIBLE):
            gzipped = await asyncio.to_thread(gzip.compress, body, LEVEL, mtime=0)
            gzipped = gzipped if len(gzipped) < len(body) else None
        query = bytes(scope.get("query_string") or b"")
        return Asset(
            headers=kept,
            body=body,
            gzipped=gzipped,
            etag=header(start.get("headers"), b"etag"),
            immutable=bool(VERSIONED_PATH.search(str(scope["path"])) or VERSIONED_QUERY.search(query)),
        )

    async def _answer(self, asset: Asset, scope: Scope, send: Callable[[Any], Awaitable[None]]) -> None:
        """Send ``asset`` (gzipped if the client takes it; a 304 when its tag matches ``If-None-Match``)."""
        compressed = asset.gzipped is not None and accepts_gzip(scope)
        body = asset.gzipped if compressed and asset.gzipped is not None else asset.body
        # Each representation has its own tag (RFC 9110 8.8.3): a cache never swaps one for the other.
        etag = asset.etag[:-1] + b'-gzip"' if compressed and asset.etag and asset.etag.endswith(b'"') else asset.etag
        caching = b"public, max-age=31536000, immutable" if asset.immutable else b"no-cache"
        headers = [*asset.headers, (b"vary", b"Accept-Encoding"), (b"cache-control", caching)]
        if etag is not None:
            headers.append((b"etag", etag))
        if etag is not None and _etag_matches(scope, etag):
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        if compressed:
            headers.append((b"content-encoding", b"gzip"))
        headers.append((b"content-length", str(len(body)).encode("ascii")))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})
