"""Talking to the upstream: one pooled `httpx.AsyncClient`, the target URL, the headers that
go and come back, and transport failures turned into 502 / 504.

Headers. The client's headers are forwarded (keys included: `Authorization`, `x-api-key`,
`anthropic-version`, `anthropic-beta`, `openai-organization`, …) except hop-by-hop ones,
`host`, `content-length` (httpx sets it for the body actually sent), `accept-encoding`
(we ask the upstream for identity, so bytes can be relayed and inspected as they are) and
the proxy's own `x-compaction-session`. With an upstream key configured, the client's
`Authorization` / `x-api-key` are replaced by it; with `require_key`, the header that carried
the proxy's key is never forwarded.

TCP_NODELAY: httpx connects through anyio, whose asyncio TCP transports set TCP_NODELAY on
every socket (CPython's `_SelectorSocketTransport`), so small SSE writes toward the client
and requests toward the upstream are never held back by Nagle's algorithm. uvicorn serves on
the same asyncio transports, so its accepted sockets have TCP_NODELAY set too.

This module must never log a header value or a body.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterable, Iterable
from http.cookiejar import CookieJar
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import httpx

from compaction.proxy.errors import ProxyError
from compaction.proxy.settings import ProxySettings

HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED: Final = HOP_BY_HOP | {
    "host",
    "content-length",
    "accept-encoding",
    "x-compaction-session",
}
_KEY_HEADERS: Final = ("authorization", "x-api-key")
# Response headers that describe the bytes as the upstream framed them, and `date`, which
# the server in front of the proxy (uvicorn) writes itself: relayed, it would appear twice.
_NOT_RETURNED: Final = HOP_BY_HOP | {"content-length", "date"}


def make_client(
    settings: ProxySettings, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    timeout = httpx.Timeout(
        settings.read_timeout,
        connect=settings.connect_timeout,
        pool=settings.connect_timeout,
    )
    limits = httpx.Limits(
        max_connections=settings.max_connections,
        max_keepalive_connections=settings.max_keepalive_connections,
        keepalive_expiry=30.0,
    )
    return httpx.AsyncClient(
        transport=transport,
        timeout=timeout,
        limits=limits,
        follow_redirects=False,
        cookies=NoCookies(),
    )


class NoCookies(CookieJar):
    """The proxy's cookie jar, which keeps nothing: one client serves every tenant, and a
    cookie one upstream answer set must never ride on another client's request. Cookies
    pass between each client and the upstream as headers, untouched."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None


def target_url(base: str, path: str, query: bytes) -> str:
    """`base` + `path` (+ query). A base ending in `/v1` and a path starting with `/v1/`
    share that segment, so both `http://host` and `http://host/v1` work as the upstream.
    A path with a dot segment is refused (`check_path`): it could climb out of `base`."""
    check_path(path)
    base = base.rstrip("/")
    if urlsplit(base).path.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
        path = path[3:]
    url = base + path
    return f"{url}?{query.decode('latin-1')}" if query else url


def check_path(path: str) -> None:
    """Refuse a path with a `.` or `..` segment, literal or percent-encoded (at any depth of
    encoding, since a lenient upstream may decode again), with `/` or `\\` as separators.
    Joined to the upstream's base URL, such a path would be resolved by the HTTP stack or
    the upstream into one outside that base, carrying the upstream key with it. Clients
    never need one: the APIs' paths have none."""
    decoded, previous = path, None
    while decoded != previous and "%" in decoded:
        previous, decoded = decoded, unquote(decoded)
    segments = decoded.replace("\\", "/").split("/")
    if any(segment in (".", "..") for segment in segments):
        raise ProxyError(
            400,
            "the path has a dot segment ('.' or '..'), which the proxy does not relay",
            code="invalid_path",
        )


def is_anthropic_request(path: str, headers: Iterable[tuple[str, str]]) -> bool:
    if path == "/v1/messages" or path.startswith("/v1/messages/"):
        return True
    return any(name == "anthropic-version" for name, _ in headers)


def request_headers(
    headers: Iterable[tuple[str, str]],
    *,
    anthropic: bool,
    upstream_key: str | None,
    require_key: str | None,
    keep_length: bool = False,
) -> list[tuple[str, str]]:
    """The headers to send upstream (names lower-case, as ASGI gives them)."""
    pairs = list(headers)
    dropped = set(_NOT_FORWARDED)
    for name, value in pairs:
        if name == "connection":
            dropped.update(v.strip().lower() for v in value.split(","))
    if keep_length:
        dropped.discard("content-length")
    out: list[tuple[str, str]] = []
    for name, value in pairs:
        if name in dropped:
            continue
        if name in _KEY_HEADERS:
            if upstream_key is not None:
                continue
            if require_key is not None and _carries(value, require_key):
                continue
        out.append((name, value))
    if upstream_key is not None:
        if anthropic:
            out.append(("x-api-key", upstream_key))
        else:
            out.append(("authorization", f"Bearer {upstream_key}"))
    out.append(("accept-encoding", "identity"))
    return out


def _carries(value: str, key: str) -> bool:
    return value == key or (value[:7].lower() == "bearer " and value[7:].strip() == key)


def response_headers(headers: httpx.Headers) -> list[tuple[bytes, bytes]]:
    return [
        (name.lower(), value)
        for name, value in headers.raw
        if name.lower().decode("latin-1") not in _NOT_RETURNED
    ]


async def open_stream(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    headers: list[tuple[str, str]],
    content: bytes | AsyncIterable[bytes] | None,
) -> tuple[httpx.Response, float]:
    """Send a request and return as soon as the response head arrived (the body is read
    later), with the seconds it took. Transport failures become `ProxyError` 502 / 504."""
    request = client.build_request(method, url, headers=headers, content=content)
    started = time.perf_counter()
    try:
        try:
            response = await client.send(request, stream=True)
        except _RESET as e:
            # A pooled connection the upstream closed as it went idle fails before any byte
            # of an answer: send again once on a fresh one, when the body can be sent again.
            if not isinstance(content, bytes | None):
                raise
            logger.debug("upstream connection reset before an answer (%s); sending again", e)
            request = client.build_request(method, url, headers=headers, content=content)
            response = await client.send(request, stream=True)
    except httpx.TimeoutException as e:
        raise ProxyError(
            504,
            f"the upstream did not answer in time ({type(e).__name__})",
            code="upstream_timeout",
        ) from e
    except httpx.TransportError as e:
        raise ProxyError(
            502,
            f"the upstream is unreachable ({type(e).__name__}: {_reason(e)})",
            code="upstream_unreachable",
        ) from e
    return response, time.perf_counter() - started


logger = logging.getLogger("compaction.proxy")

# Failures of a request on a connection that was reset under it (not timeouts, not a
# refused connect: those would fail again the same way).
_RESET = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)


def _reason(error: Exception) -> str:
    text = str(error) or "no detail"
    return text if len(text) <= 200 else text[:199] + "…"
