"""The app's static-file cache (a real ASGI call chain around a stand-in for Solara's files)."""

from __future__ import annotations

import asyncio
import gzip

from workbench.views.app.assets import MAX_FILE_BYTES, AssetCache, accepts_gzip

BUNDLE = b"function widget() { return 'a Vuetify bundle'; }\n" * 400  # compressible, 19,600 bytes
PATH = "/_solara/cdn/@widgetti/app@5.1.1/dist/app.min.js"


class Files:
    """Stands in for Solara's static routes: counts calls and records the headers it was sent."""

    def __init__(self, files: dict[str, tuple[int, bytes, bytes]], delay: float = 0.0) -> None:
        self.files, self.delay, self.calls, self.seen = files, delay, 0, []

    async def __call__(self, scope, receive, send) -> None:
        self.calls += 1
        self.seen.append(dict(scope["headers"]))
        await asyncio.sleep(self.delay)
        status, body, kind = self.files.get(scope["path"], (404, b"Not Found", b"text/plain"))
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), (b"etag", b'"abc"')]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        half = len(body) // 2  # two body messages, as a file response streams
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:]})


def _get(app, path: str = PATH, headers: dict[bytes, bytes] | None = None, method: str = "GET", query: bytes = b""):
    scope = {"type": "http", "method": method, "path": path, "query_string": query}
    scope["headers"] = list((headers or {}).items())
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    return scope, receive, send, sent


def _call(app, *args, **kwargs) -> tuple[int, dict[bytes, bytes], bytes]:
    scope, receive, send, sent = _get(app, *args, **kwargs)
    asyncio.run(app(scope, receive, send))
    return _response(sent)


def _response(sent: list[dict]) -> tuple[int, dict[bytes, bytes], bytes]:
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], dict(start["headers"]), body


def test_a_file_is_read_once_gzipped_once_and_answered_from_memory():
    files = Files({PATH: (200, BUNDLE, b"text/javascript; charset=utf-8")})
    cache = AssetCache(files)
    for _ in range(3):
        status, headers, body = _call(cache, headers={b"accept-encoding": b"gzip, deflate, br, zstd"})
        assert status == 200 and headers[b"content-encoding"] == b"gzip"
        assert gzip.decompress(body) == BUNDLE and len(body) < len(BUNDLE) / 10
        assert headers[b"content-length"] == str(len(body)).encode()
        assert headers[b"content-type"] == b"text/javascript; charset=utf-8"
        assert headers[b"cache-control"] == b"public, max-age=31536000, immutable"  # "@5.1.1/" names one version
    assert files.calls == 1
    # Solara was asked for the whole file, unencoded: its own GZipMiddleware has nothing to do.
    assert b"accept-encoding" not in files.seen[0]
    status, headers, body = _call(cache, headers={b"accept-encoding": b"identity"})
    assert status == 200 and b"content-encoding" not in headers and body == BUNDLE and files.calls == 1


def test_concurrent_first_requests_read_the_file_once():
    files = Files({PATH: (200, BUNDLE, b"text/javascript")}, delay=0.05)
    cache = AssetCache(files)

    async def five():
        calls = [_get(cache, headers={b"accept-encoding": b"gzip"}) for _ in range(5)]
        await asyncio.gather(*(cache(scope, receive, send) for scope, receive, send, _ in calls))
        return [_response(sent) for *_, sent in calls]

    answers = asyncio.run(five())
    assert files.calls == 1
    assert all(status == 200 and gzip.decompress(body) == BUNDLE for status, _, body in answers)


def test_a_matching_tag_gets_304_and_each_encoding_has_its_own_tag():
    cache = AssetCache(Files({PATH: (200, BUNDLE, b"text/javascript")}))
    _, zipped, _ = _call(cache, headers={b"accept-encoding": b"gzip"})
    _, plain, _ = _call(cache)
    assert zipped[b"etag"] == b'"abc-gzip"' and plain[b"etag"] == b'"abc"'
    status, headers, body = _call(cache, headers={b"accept-encoding": b"gzip", b"if-none-match": b'"abc-gzip"'})
    assert status == 304 and body == b"" and headers[b"etag"] == b'"abc-gzip"'
    # The other representation's tag does not match this one: the whole file comes back.
    status, _, body = _call(cache, headers={b"accept-encoding": b"gzip", b"if-none-match": b'"abc"'})
    assert status == 200 and gzip.decompress(body) == BUNDLE


def test_what_is_not_kept_goes_through_as_the_app_answers():
    small_svg = b"<svg/>"
    large = b"x" * (MAX_FILE_BYTES + 1)
    files = Files(
        {
            "/static/assets/favicon.svg": (200, small_svg, b"image/svg+xml"),
            "/static/big.js": (200, large, b"text/javascript"),
        }
    )
    cache = AssetCache(files)
    status, headers, body = _call(cache, "/static/missing.js", headers={b"accept-encoding": b"gzip"})
    assert status == 404 and body == b"Not Found"
    _call(cache, "/static/missing.js")
    assert files.calls == 2  # a 404 is never kept
    status, headers, body = _call(cache, "/static/big.js")
    assert status == 200 and len(body) == len(large)  # passed on whole, never kept
    _call(cache, "/static/big.js")
    assert files.calls == 4
    status, headers, body = _call(cache, "/static/assets/favicon.svg", headers={b"accept-encoding": b"gzip"})
    assert body == small_svg and b"content-encoding" not in headers  # too small to be worth compressing
    assert headers[b"cache-control"] == b"no-cache"  # an unversioned name is revalidated
    _call(cache, "/", headers={b"accept-encoding": b"gzip"})  # the page itself: not a static file
    _call(cache, PATH, headers={b"range": b"bytes=0-9"})  # a range request: Solara's to answer
    _call(cache, PATH, method="POST")
    assert files.calls == 8


def test_head_gets_the_headers_only_and_a_versioned_query_is_immutable():
    files = Files({"/static/main-vuetify.js": (200, BUNDLE, b"text/javascript")})
    cache = AssetCache(files)
    status, headers, body = _call(cache, "/static/main-vuetify.js", method="HEAD", query=b"v=ed93192e")
    assert status == 200 and body == b"" and headers[b"content-length"] == str(len(BUNDLE)).encode()
    assert headers[b"cache-control"] == b"public, max-age=31536000, immutable"
    status, _, body = _call(cache, "/static/main-vuetify.js", query=b"v=ed93192e")
    assert status == 200 and body == BUNDLE and files.calls == 1


def test_the_cache_stops_growing_at_its_limit():
    files = Files({PATH: (200, BUNDLE, b"text/javascript")})
    cache = AssetCache(files, max_bytes=len(BUNDLE) // 2)
    _call(cache)
    _call(cache)
    assert files.calls == 2 and cache.held == 0


def test_accept_encoding_is_read_as_http_says():
    def scope(value: bytes) -> dict:
        return {"headers": [(b"Accept-Encoding", value)]}

    assert accepts_gzip(scope(b"gzip, deflate, br"))
    assert accepts_gzip(scope(b"br;q=1.0, gzip;q=0.5"))
    assert accepts_gzip(scope(b"*"))
    assert not accepts_gzip(scope(b"gzip;q=0"))
    assert not accepts_gzip(scope(b"br, zstd"))
    assert not accepts_gzip(scope(b"gzip;q=bad"))
    assert not accepts_gzip({"headers": []})
