"""The proxy's ASGI app: three APIs compacted on their way upstream, everything else passed
through, status and metrics.

    POST /v1/chat/completions, /v1/responses, /v1/messages   compacted when over budget
    GET  /compaction/status                                   per-session counts and tokens,
                                                              the same from every replica
    GET  /compaction/sessions/{name}                          one session, content included,
                                                              for its own key or the admin token
    GET  /metrics                                             Prometheus text
    anything else                                             relayed untouched

The hot path of a request that needs no compaction: read the body (bounded), parse it once,
compare its history with the session's previous request, decode and count only the new
messages (the per-message token cache answers for the rest), log them, and forward the
original bytes; the response is relayed as it arrives. A request the proxy rewrites is
carried to the end as the dict it wrote (the recall tool added to it there, recalls answered
from it) and serialized once. The steps of a large request
(parsing, decoding, counting, logging, encoding) run in a bounded worker pool
(`compaction.proxy.work`), so it never holds up the other sessions. Compaction (tokenizing, maybe a
summarizer call) runs in a worker thread, never on the event loop, within the settings'
`deadline`: summarizer calls past it fail, and the digest stands in for their summary.

One `httpx.AsyncClient` (pooled connections) lives from lifespan startup to shutdown. A
request that fails before the upstream answered gets a 4xx/5xx in the API's own error shape
(`compaction.proxy.errors`), never a traceback.

This module must never log a body, a header value or a key.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from compaction.dialects import load_payload
from compaction.exceptions import DecodeError, InputError, StoreError
from compaction.log import SessionLog
from compaction.providers.base import Provider
from compaction.providers.retry import provider_deadline
from compaction.proxy import recall
from compaction.proxy.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, Api, dumps
from compaction.proxy.errors import (
    ApiName,
    ProxyError,
    error_response,
    is_context_overflow,
    stated_window,
)
from compaction.proxy.metrics import Metrics
from compaction.proxy.recall_stream import relay_answering_recalls
from compaction.proxy.sessions import SESSION_HEADER, Prepared, Sessions
from compaction.proxy.settings import ProxySettings
from compaction.proxy.status import counted_log, shared_session, shared_status
from compaction.proxy.streaming import RelayResponse, is_event_stream, relay
from compaction.proxy.tenants import presented_keys, public_status, scoped, tenant
from compaction.proxy.upstream import (
    is_anthropic_request,
    make_client,
    open_stream,
    request_headers,
    response_headers,
    target_url,
)
from compaction.proxy.work import Offload
from compaction.store import SessionStore, open_store

logger = logging.getLogger("compaction.proxy")

# Unstreamed answers up to this size (with a content-length) are read whole, then sent.
WHOLE_LIMIT = 1024 * 1024
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
# Streamed answers get the recall tool only for these APIs (`compaction.proxy.recall_stream`).
_RECALL_IN_STREAMS: frozenset[ApiName] = frozenset({"openai", "anthropic"})
_ENDPOINTS = {api.path: api.name for api in (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES)}


def create_app(
    settings: ProxySettings,
    *,
    store: SessionStore | None = None,
    upstream_transport: httpx.AsyncBaseTransport | None = None,
    summarizer: Provider | None = None,
) -> Starlette:
    """The proxy as an ASGI app. `store` defaults to `open_store(settings.store)` (closed at
    shutdown); `upstream_transport` replaces the network (tests pass an
    `httpx.MockTransport`); `summarizer` serves the LLM strategies of the policy."""
    proxy = Proxy(settings, store=store, transport=upstream_transport, summarizer=summarizer)
    routes = [
        Route(OPENAI_CHAT.path, proxy.chat_completions, methods=["POST"]),
        Route(OPENAI_RESPONSES.path, proxy.responses, methods=["POST"]),
        Route(ANTHROPIC_MESSAGES.path, proxy.messages, methods=["POST"]),
        Route("/compaction/status", proxy.status, methods=["GET"]),
        Route("/compaction/sessions/{key}", proxy.session, methods=["GET"]),
        Route("/metrics", proxy.metrics_text, methods=["GET"]),
        Route("/{path:path}", proxy.passthrough, methods=ALL_METHODS),
    ]
    app = Starlette(
        routes=routes,
        lifespan=proxy.lifespan,
        middleware=[Middleware(Instrumented, metrics=proxy.metrics)],
    )
    app.state.proxy = proxy
    return app


class Instrumented:
    """Counts requests by endpoint and status, and the requests in flight (a response is in
    flight until its last byte is sent)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        metrics = self.metrics

        async def counted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        metrics.in_flight += 1
        try:
            await self.app(scope, receive, counted)
        finally:
            metrics.in_flight -= 1
            metrics.requests[(_ENDPOINTS.get(scope["path"], "other"), status)] += 1


class Proxy:
    def __init__(
        self,
        settings: ProxySettings,
        *,
        store: SessionStore | None,
        transport: httpx.AsyncBaseTransport | None,
        summarizer: Provider | None,
    ) -> None:
        self.settings = settings
        self.metrics = Metrics(replica=settings.replica_name)
        self._own_store = store is None
        self.store = store if store is not None else open_store(settings.store)
        self.offload = Offload(workers=settings.workers, threshold=settings.offload_bytes)
        self.sessions = Sessions(
            self.store,
            settings.compaction,
            summarizer=summarizer,
            metrics=self.metrics,
            max_sessions=settings.max_sessions,
            offload=self.offload,
        )
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self._client = make_client(self.settings, self._transport)
        try:
            yield
        finally:
            client, self._client = self._client, None
            await client.aclose()
            if self._own_store:
                self.store.close()

    @property
    def client(self) -> httpx.AsyncClient:
        # Started by the lifespan; created on first use for servers that skip lifespan events.
        if self._client is None:
            self._client = make_client(self.settings, self._transport)
        return self._client

    # -- endpoints ---------------------------------------------------------------------------

    async def chat_completions(self, request: Request) -> Response:
        return await self._api(request, OPENAI_CHAT)

    async def responses(self, request: Request) -> Response:
        return await self._api(request, OPENAI_RESPONSES)

    async def messages(self, request: Request) -> Response:
        return await self._api(request, ANTHROPIC_MESSAGES)

    async def status(self, request: Request) -> Response:
        try:
            self._authorize(request, admin=True)
        except ProxyError as e:
            return error_response("openai", e)
        status = await run_in_threadpool(
            shared_status, self.store, self.sessions.status(), limit=self.settings.max_sessions
        )
        return JSONResponse({"replica": self.settings.replica_name, **public_status(status)})

    async def session(self, request: Request) -> Response:
        """One session with its last receipt (summaries included): for a request carrying
        the session's own key, which names it by its name, or the admin token, which names
        it by its log id. Any other request gets the 404 of a session that does not exist."""
        key = request.path_params["key"]
        try:
            self._authorize(request, admin=True)
            keys = [key] if self._is_admin(request) else []
            keys.append(scoped(key, self._tenant(request)))
            session = await run_in_threadpool(
                shared_session, self.store, self.sessions, keys, limit=self.settings.max_sessions
            )
            if session is None:
                raise ProxyError(404, f"no session {key!r} for this key", code="not_found")
        except ProxyError as e:
            return error_response("openai", e)
        return JSONResponse(session)

    async def metrics_text(self, request: Request) -> Response:
        try:
            self._authorize(request, admin=True)
        except ProxyError as e:
            return error_response("openai", e)
        return PlainTextResponse(
            self.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    async def passthrough(self, request: Request) -> Response:
        headers = _str_headers(request)
        anthropic = is_anthropic_request(request.url.path, headers)
        shape: ApiName = "anthropic" if anthropic else "openai"
        try:
            self._authorize(request)
            url = target_url(self._base(anthropic), request.url.path, request.scope["query_string"])
            forwarded = self._headers(headers, anthropic, keep_length=True)
            content = None if request.method in ("GET", "HEAD") else request.stream()
            response, _ = await self._open("other", request.method, url, forwarded, content)
        except ProxyError as e:
            return error_response(shape, e)
        return RelayResponse(
            response, relay(response, None, self.metrics), response_headers(response.headers)
        )

    # -- the three APIs ----------------------------------------------------------------------

    async def _api(self, request: Request, api: Api) -> Response:
        try:
            self._authorize(request)
            body = await self._read_body(request)
            large = self.offload.large(len(body))
            payload = await self.offload.run(large, _parse, body)
            prepared = Prepared(body)
            if not api.stateful(payload) and api.items(payload) is not None:
                prepared = await self._prepare(request, api, payload, body)
            stream = payload.get("stream") is True
            offer_recall = (
                self.settings.recall_tool
                and prepared.rewritten
                and (not stream or api.name in _RECALL_IN_STREAMS)
            )
            if prepared.sent is not None:
                await self.offload.run(large, _serialize, api.name, prepared, offer_recall)
            return await self._forward(request, api, prepared, offer_recall)
        except ProxyError as e:
            return error_response(api.name, e)

    async def _prepare(
        self, request: Request, api: Api, payload: dict[str, Any], body: bytes
    ) -> Prepared:
        header = request.headers.get(SESSION_HEADER)
        try:
            # The deadline reaches the summarizer's calls in the compaction's worker thread.
            with provider_deadline(self.settings.deadline):
                prepared = await self.sessions.prepare(
                    api, payload, body, header, self._tenant(request)
                )
        except ProxyError:
            raise
        except InputError as e:
            raise ProxyError(400, str(e), param=getattr(e, "location", None)) from e
        except StoreError as e:
            # The log is a record, not a gate: a store failure must not stop the agent.
            logger.error("session store failed, forwarding the request as it came: %s", e)
            return Prepared(body)
        except Exception:
            # A bug of ours must not stop the agent either: the request goes as it came.
            logger.exception("compaction failed unexpectedly; forwarding the request as it came")
            return Prepared(body)
        await self._count(prepared, self.offload.large(len(body)))
        return prepared

    async def _count(self, prepared: Prepared, large: bool) -> None:
        """Count the request in the store, where every replica's status reads it."""
        log, session = counted_log(prepared), prepared.session
        if log is None or session is None:
            return
        before, after = session.stats.last_tokens_before, session.stats.last_tokens_after
        try:
            await self.offload.run(
                large,
                lambda: self.store.record_request(log, tokens_before=before, tokens_after=after),
            )
        except StoreError as e:
            logger.error("session store failed, the request is not counted in status: %s", e)

    async def _forward(
        self, request: Request, api: Api, prepared: Prepared, offer_recall: bool
    ) -> Response:
        headers = self._headers(_str_headers(request), api.upstream == "anthropic")
        url = target_url(
            self._base(api.upstream == "anthropic"), api.path, request.scope["query_string"]
        )
        response, _ = await self._open(api.name, "POST", url, headers, prepared.body)
        if response.status_code >= 400:
            content = await _read_all(response)
            if (
                self.settings.retry_on_overflow
                and prepared.session is not None
                and is_context_overflow(response.status_code, content)
            ):
                stated = stated_window(content)
                with provider_deadline(self.settings.deadline):
                    harder = await self.sessions.compact_harder(api, prepared, stated)
                if harder is not None:
                    self.metrics.overflow_retries[api.name] += 1
                    logger.info(
                        "session %s: context-length error upstream (window %s); "
                        "retrying at %d tokens",
                        prepared.session.key,
                        stated.window if stated is not None else "not stated",
                        harder.tokens,
                    )
                    _serialize(api.name, harder, offer_recall)
                    response, _ = await self._open(api.name, "POST", url, headers, harder.body)
                    prepared = harder
                    if response.status_code < 400 and not offer_recall:
                        return _relayed(response, api, self.metrics)
                    if response.status_code >= 400:
                        content = await _read_all(response)
            if response.status_code >= 400:
                return _whole(response, content)
        if offer_recall and response.status_code == 200:
            if not _is_stream(response):
                return await self._answer_recalls(api, url, headers, prepared, response)
            if prepared.branch is not None and is_event_stream(response):
                log, sent = prepared.branch.log, _sent(prepared)
                return self._relayed_answering_recalls(api, url, headers, log, sent, response)
        if _small_whole(response):
            # A complete small JSON answer: relaying it as a stream would only add a task
            # group per response; its bytes are all there already.
            return _whole(response, await _read_all(response))
        return _relayed(response, api, self.metrics)

    async def _answer_recalls(
        self,
        api: Api,
        url: str,
        headers: list[tuple[str, str]],
        prepared: Prepared,
        response: httpx.Response,
    ) -> Response:
        content = await _read_all(response)
        body = _sent(prepared)
        branch = prepared.branch
        for _ in range(recall.MAX_ROUNDS):
            try:
                data = json.loads(content)
            except json.JSONDecodeError:
                break
            found, others = recall.calls(api.name, data)
            if not found or branch is None:
                break
            if others:
                content = dumps(recall.without_recall(api.name, data))
                break
            answers = [(call_id, recall.answer(branch.log, args)) for call_id, args in found]
            body = recall.continued(api.name, body, data, answers)
            response, _ = await self._open(api.name, "POST", url, headers, dumps(body))
            content = await _read_all(response)
            if response.status_code != 200:
                break
        return _whole(response, content)

    def _relayed_answering_recalls(
        self,
        api: Api,
        url: str,
        headers: list[tuple[str, str]],
        log: SessionLog,
        body: dict[str, Any],
        response: httpx.Response,
    ) -> Response:
        """A streamed answer relayed, its recall calls answered from `log` (`body` is the
        request it answers)."""

        async def reopen(body: bytes) -> httpx.Response:
            reply, _ = await self._open(api.name, "POST", url, headers, body)
            return reply

        events = relay_answering_recalls(
            response, api.name, log=log, body=body, reopen=reopen, metrics=self.metrics
        )
        return RelayResponse(response, events, response_headers(response.headers))

    # -- helpers -----------------------------------------------------------------------------

    async def _open(
        self,
        endpoint: str,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        content: Any,
    ) -> tuple[httpx.Response, float]:
        try:
            response, seconds = await open_stream(self.client, method, url, headers, content)
        except ProxyError as e:
            kind = "timeout" if e.status == 504 else "unreachable"
            self.metrics.upstream_errors[kind] += 1
            logger.warning("upstream %s: %s", kind, e)
            raise
        self.metrics.observe_upstream(endpoint, seconds)
        return response, seconds

    def _base(self, anthropic: bool) -> str:
        if anthropic and self.settings.anthropic_upstream:
            return self.settings.anthropic_upstream
        return self.settings.upstream

    def _headers(
        self, headers: list[tuple[str, str]], anthropic: bool, *, keep_length: bool = False
    ) -> list[tuple[str, str]]:
        return request_headers(
            headers,
            anthropic=anthropic,
            upstream_key=self.settings.upstream_key,
            require_key=self.settings.require_key,
            keep_length=keep_length,
        )

    def _tenant(self, request: Request) -> str:
        return tenant(
            _str_headers(request),
            upstream_key=self.settings.upstream_key,
            require_key=self.settings.require_key,
        )

    def _is_admin(self, request: Request) -> bool:
        token = self.settings.admin_token
        return token is not None and _presents(request, token)

    def _authorize(self, request: Request, *, admin: bool = False) -> None:
        """Refuse a request without the proxy's `require_key` (when one is set); with
        `admin`, the admin token passes too."""
        required = self.settings.require_key
        if required is None or (admin and self._is_admin(request)):
            return
        if not _presents(request, required):
            raise ProxyError(
                401,
                "this proxy requires a key: send it as `Authorization: Bearer <key>` or "
                "`x-api-key: <key>`",
                code="invalid_api_key",
            )

    async def _read_body(self, request: Request) -> bytes:
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ProxyError(413, _too_large(int(declared), limit), code="request_too_large")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ProxyError(413, _too_large(size, limit), code="request_too_large")
            chunks.append(chunk)
        return b"".join(chunks)


def _serialize(api: ApiName, prepared: Prepared, offer_recall: bool) -> None:
    """Write the body the proxy rewrote (`prepared.sent`), with the recall tool when it is
    offered: the one serialization of a rewritten request."""
    sent = _sent(prepared)
    if offer_recall:
        sent = prepared.sent = recall.offer(api, sent)
    prepared.body = dumps(sent)


def _sent(prepared: Prepared) -> dict[str, Any]:
    assert prepared.sent is not None, "only a request the proxy rewrote offers the recall tool"
    return prepared.sent


def _presents(request: Request, key: str) -> bool:
    """Whether the request carries `key` as `x-api-key` or `Authorization: Bearer`."""
    wanted = key.encode()
    return any(
        hmac.compare_digest(k.encode("utf-8", "surrogateescape"), wanted)
        for k in presented_keys(_str_headers(request))
    )


def _parse(body: bytes) -> dict[str, Any]:
    try:
        payload = load_payload(body, source="request body")
    except DecodeError as e:
        raise ProxyError(400, f"malformed JSON: {e}", code="invalid_json") from e
    if not isinstance(payload, dict):
        raise ProxyError(400, "request body: expected a JSON object", code="invalid_request")
    return payload


def _too_large(size: int, limit: int) -> str:
    return f"request body too large: {size} bytes > the proxy's limit of {limit} bytes"


def _str_headers(request: Request) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]


def _is_stream(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.startswith("text/event-stream")


async def _read_all(response: httpx.Response) -> bytes:
    try:
        return await response.aread()
    except httpx.TransportError as e:
        raise ProxyError(
            502, f"the upstream broke off its answer ({type(e).__name__})", code="upstream_error"
        ) from e
    finally:
        await response.aclose()


def _small_whole(response: httpx.Response) -> bool:
    length = response.headers.get("content-length")
    return (
        length is not None
        and length.isdigit()
        and int(length) <= WHOLE_LIMIT
        and not _is_stream(response)
    )


def _relayed(response: httpx.Response, api: Api, metrics: Metrics) -> Response:
    return RelayResponse(
        response, relay(response, api.name, metrics), response_headers(response.headers)
    )


def _whole(response: httpx.Response, content: bytes) -> Response:
    """A response read whole (`aread` undid any content encoding, so its header goes too)."""
    out = Response(content, status_code=response.status_code)
    out.raw_headers = [
        *(h for h in response_headers(response.headers) if h[0] != b"content-encoding"),
        (b"content-length", str(len(content)).encode()),
    ]
    return out
