"""Relaying an upstream response to the client as it arrives.

Bytes go out chunk by chunk as the upstream sends them (`aiter_raw`), never collected. For a
server-sent event stream, only whole events are passed on: a chunk's trailing fragment of an
unfinished event waits for the bytes that complete it (which a client could not use before
either). That costs nothing in time to first byte and means that, when the upstream
connection breaks mid-stream, the error event we add starts on a clean event boundary: the
client's SDK sees the API's own error event instead of a truncated JSON line. Errors the
upstream itself sends inside a 200 stream are ordinary events and pass through untouched.

This module must never parse, reorder or re-encode the events it relays.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import anyio
import httpx
from starlette.requests import ClientDisconnect
from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from compaction.proxy.errors import ApiName, stream_error_event
from compaction.proxy.metrics import Metrics

logger = logging.getLogger("compaction.proxy")

_EVENT_ENDS = (b"\n\n", b"\r\n\r\n", b"\r\r")


def event_boundary(data: bytes) -> int:
    """The end of the last complete event in `data` (0 when there is none)."""
    end = 0
    for marker in _EVENT_ENDS:
        at = data.rfind(marker)
        if at >= 0:
            end = max(end, at + len(marker))
    return end


def is_event_stream(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "")
    encoding = response.headers.get("content-encoding", "identity")
    return content_type.startswith("text/event-stream") and encoding in ("identity", "")


async def relay(
    response: httpx.Response, api: ApiName | None, metrics: Metrics
) -> AsyncIterator[bytes]:
    """The response body as it arrives; SSE aligned to event boundaries, with an error event
    in the API's format if the upstream breaks off (for `api` None: just the end)."""
    events = is_event_stream(response)
    try:
        async for chunk in whole_events(response) if events else response.aiter_raw():
            yield chunk
    except httpx.TransportError as e:
        metrics.upstream_errors["broken_stream"] += 1
        logger.warning("upstream response broke off: %s", type(e).__name__)
        if events and api is not None:
            yield stream_error_event(
                api,
                f"the upstream connection broke off mid-stream ({type(e).__name__})",
                code="upstream_disconnected",
            )


async def whole_events(response: httpx.Response) -> AsyncIterator[bytes]:
    """An event stream's body as it arrives, in chunks that each end on an event boundary
    (only the very last may not, if the upstream ended mid-event). Transport errors pass."""
    pending = b""
    async for chunk in response.aiter_raw():
        data = pending + chunk if pending else chunk
        cut = event_boundary(data)
        if cut == len(data):
            pending = b""
            yield data
        elif cut:
            pending = data[cut:]
            yield data[:cut]
        else:
            pending = data
    if pending:
        yield pending


class RelayResponse(StreamingResponse):
    """A `StreamingResponse` over an upstream response, which it always closes, and which
    treats a client that went away as the end of the story rather than an error.

    The relay runs in the task that received the upstream's head, so its first chunk goes
    out without waiting for a new task to be scheduled (Starlette's own `StreamingResponse`
    streams from a child task); a child task only listens for the client going away, and
    then cancels the relay, which closes the upstream response."""

    def __init__(
        self,
        upstream: httpx.Response,
        body: AsyncIterator[bytes],
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        super().__init__(body, status_code=upstream.status_code)
        self.raw_headers = headers
        self._upstream = upstream
        self._body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ended = anyio.Event()

        async def sending(message: Message) -> None:
            # Once the last body message is handed over, the server answers `receive()` with
            # `http.disconnect` (uvicorn does, at once): that is the end of a response, not a
            # client going away.
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                ended.set()
            await send(message)

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope, ended)
                await self.stream_response(sending)
                group.cancel_scope.cancel()
        except (ClientDisconnect, OSError):
            if not ended.is_set():
                logger.info("client went away before the response ended")
        finally:
            with anyio.CancelScope(shield=True):
                aclose = getattr(self._body, "aclose", None)
                if aclose is not None:
                    await aclose()
                await self._upstream.aclose()


async def _cancel_on_disconnect(
    receive: Receive, scope: anyio.CancelScope, ended: anyio.Event
) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            if not ended.is_set():
                logger.info("client went away before the response ended")
            scope.cancel()
            return
