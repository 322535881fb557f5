"""A fake upstream for in-process proxy tests: an `httpx.MockTransport` handler that records
every request and answers like the real APIs (JSON bodies and SSE streams), or as a test
scripts it (errors, broken streams, delays)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

Handler = Callable[[httpx.Request, dict[str, Any]], Awaitable[httpx.Response] | httpx.Response]


def chat_completion(
    text: str = "Done.", *, tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 3, "total_tokens": 45},
    }


def chat_chunks(text: str = "Hello there") -> list[bytes]:
    base = {
        "id": "chatcmpl-9",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-4o",
    }
    events = [
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
        }
    ]
    for word in text.split(" "):
        events.append(
            {
                **base,
                "choices": [{"index": 0, "delta": {"content": word + " "}, "finish_reason": None}],
            }
        )
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]


def anthropic_message(
    text: str = "Done.", *, tool_use: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += tool_use or []
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "tool_use" if tool_use else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 40, "output_tokens": 3},
    }


def anthropic_events(text: str = "Hello there") -> list[bytes]:
    def event(kind: str, data: dict[str, Any]) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

    message = {**anthropic_message(""), "content": [], "stop_reason": None}
    out = [
        event("message_start", {"message": message}),
        event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        event("ping", {}),
    ]
    for word in text.split(" "):
        out.append(
            event(
                "content_block_delta",
                {"index": 0, "delta": {"type": "text_delta", "text": word + " "}},
            )
        )
    out += [
        event("content_block_stop", {"index": 0}),
        event(
            "message_delta",
            {
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 3},
            },
        ),
        event("message_stop", {}),
    ]
    return out


def response_object(
    text: str = "Done.", *, calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    ]
    output += calls or []
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": "gpt-4o",
        "output": output,
        "usage": {"input_tokens": 40, "output_tokens": 3, "total_tokens": 43},
    }


def responses_events(text: str = "Hello there") -> list[bytes]:
    def event(kind: str, n: int, data: dict[str, Any]) -> bytes:
        payload = {"type": kind, "sequence_number": n, **data}
        return f"event: {kind}\ndata: {json.dumps(payload)}\n\n".encode()

    out = [
        event(
            "response.created",
            0,
            {"response": {**response_object(""), "status": "in_progress", "output": []}},
        )
    ]
    for i, word in enumerate(text.split(" ")):
        out.append(
            event(
                "response.output_text.delta",
                i + 1,
                {"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": word + " "},
            )
        )
    out.append(event("response.completed", 99, {"response": response_object(text)}))
    return out


def sse_response(chunks: list[bytes] | AsyncIterator[bytes], status: int = 200) -> httpx.Response:
    async def stream() -> AsyncIterator[bytes]:
        if isinstance(chunks, list):
            for chunk in chunks:
                yield chunk
        else:
            async for chunk in chunks:
                yield chunk

    return httpx.Response(
        status, headers={"content-type": "text/event-stream; charset=utf-8"}, content=stream()
    )


def streamed(response: httpx.Response) -> httpx.Response:
    """A response whose body arrives as a stream, as from a real connection (a response built
    from bytes is already read, and could not be relayed chunk by chunk)."""
    if not response.is_stream_consumed:
        return response
    body = response.content

    async def stream() -> AsyncIterator[bytes]:
        yield body

    headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-length"]
    return httpx.Response(response.status_code, headers=headers, content=stream())


@dataclass
class Seen:
    """One request as the upstream received it."""

    method: str
    url: str
    headers: httpx.Headers
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class FakeUpstream:
    """Records requests; answers with `handler(request, body_json)` when set, else like the
    API the path names (streamed when the body asks for it)."""

    handler: Handler | None = None
    seen: list[Seen] = field(default_factory=list)

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        self.seen.append(Seen(request.method, str(request.url), request.headers, body))
        try:
            data = json.loads(body) if body else {}
        except json.JSONDecodeError:
            data = {}
        if self.handler is not None:
            result = self.handler(request, data)
            if asyncio.iscoroutine(result):
                result = await result
            assert isinstance(result, httpx.Response)
            return streamed(result)
        return streamed(default_reply(request, data))

    @property
    def last(self) -> Seen:
        return self.seen[-1]


def default_reply(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
    path = request.url.path
    stream = isinstance(data, dict) and data.get("stream") is True
    if path.endswith("/chat/completions"):
        return (
            sse_response(chat_chunks()) if stream else httpx.Response(200, json=chat_completion())
        )
    if path.endswith("/messages"):
        return (
            sse_response(anthropic_events())
            if stream
            else httpx.Response(200, json=anthropic_message())
        )
    if path.endswith("/responses"):
        return (
            sse_response(responses_events())
            if stream
            else httpx.Response(200, json=response_object())
        )
    if path.endswith("/models"):
        return httpx.Response(
            200, json={"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]}
        )
    return httpx.Response(
        404,
        json={
            "error": {
                "message": f"no route {path}",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
    )
