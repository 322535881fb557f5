"""Requests under budget go upstream byte for byte; answers come back unchanged, streamed or
not; other paths are relayed; headers and keys are forwarded as documented."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

import anyio
import httpx
import pytest

from .conftest import anthropic_body, chat_body, raw, running
from .upstream import anthropic_events, chat_chunks, chat_completion, responses_events

pytestmark = pytest.mark.anyio

BIG = {"token_threshold": 10_000_000}


async def test_chat_under_budget_is_forwarded_byte_for_byte() -> None:
    from compaction.config import CompactionConfig

    body = raw(chat_body(3))
    async with running(compaction=CompactionConfig(**BIG)) as h:
        response = await h.client.post(
            "/v1/chat/completions",
            content=body,
            headers={"authorization": "Bearer sk-client", "content-type": "application/json"},
        )
        assert response.status_code == 200
        assert response.json() == chat_completion()
        assert h.upstream.last.body == body
        assert h.upstream.last.url == "http://upstream.test/v1/chat/completions"
        assert h.upstream.last.headers["authorization"] == "Bearer sk-client"


async def test_chat_stream_passes_events_through_unchanged() -> None:
    body = chat_body(2, stream=True)
    async with running() as h:
        response = await h.client.post("/v1/chat/completions", json=body)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.content == b"".join(chat_chunks())
        assert "content-length" not in response.headers or int(
            response.headers["content-length"]
        ) == len(response.content)


async def test_anthropic_stream_passes_events_through_unchanged() -> None:
    async with running() as h:
        response = await h.client.post(
            "/v1/messages",
            json=anthropic_body(2, stream=True),
            headers={"x-api-key": "sk-ant-client", "anthropic-version": "2023-06-01"},
        )
        assert response.status_code == 200
        assert response.content == b"".join(anthropic_events())
        seen = h.upstream.last
        assert seen.url == "http://upstream.test/v1/messages"
        assert seen.headers["x-api-key"] == "sk-ant-client"
        assert seen.headers["anthropic-version"] == "2023-06-01"


async def test_responses_stream_passes_events_through_unchanged() -> None:
    body = {
        "model": "gpt-4o",
        "instructions": "You are terse.",
        "input": [{"role": "user", "content": "Say hello."}],
        "stream": True,
    }
    async with running() as h:
        response = await h.client.post("/v1/responses", json=body)
        assert response.status_code == 200
        assert response.content == b"".join(responses_events())
        assert h.upstream.last.json() == body


async def test_anthropic_paths_go_to_the_anthropic_upstream() -> None:
    async with running(anthropic_upstream="http://anthropic.test") as h:
        await h.client.post("/v1/messages", json=anthropic_body(1))
        assert h.upstream.last.url == "http://anthropic.test/v1/messages"
        await h.client.get("/v1/models", headers={"anthropic-version": "2023-06-01"})
        assert h.upstream.last.url == "http://anthropic.test/v1/models"
        await h.client.post("/v1/chat/completions", json=chat_body(1))
        assert h.upstream.last.url == "http://upstream.test/v1/chat/completions"


async def test_other_paths_are_relayed_with_query_and_method() -> None:
    async with running() as h:
        response = await h.client.get("/v1/models?limit=2")
        assert response.status_code == 200
        assert response.json()["data"][0]["id"] == "gpt-4o"
        assert h.upstream.last.url == "http://upstream.test/v1/models?limit=2"
        response = await h.client.post("/v1/embeddings", content=b'{"input": "x"}')
        assert response.status_code == 404  # the upstream's own answer, relayed
        assert response.json()["error"]["message"] == "no route /v1/embeddings"
        assert h.upstream.last.body == b'{"input": "x"}'
        assert h.upstream.last.method == "POST"


async def test_upstream_base_with_v1_is_not_doubled() -> None:
    async with running(upstream="http://upstream.test/v1") as h:
        await h.client.post("/v1/chat/completions", json=chat_body(1))
        assert h.upstream.last.url == "http://upstream.test/v1/chat/completions"


async def test_hop_by_hop_and_proxy_headers_are_not_forwarded() -> None:
    async with running() as h:
        await h.client.post(
            "/v1/chat/completions",
            json=chat_body(1),
            headers={
                "x-compaction-session": "s1",
                "te": "trailers",
                "connection": "keep-alive, x-private",
                "x-private": "hop",
                "openai-organization": "org-1",
                "accept-encoding": "gzip",
            },
        )
        seen = h.upstream.last.headers
        assert "x-compaction-session" not in seen
        assert "te" not in seen
        assert "x-private" not in seen
        assert seen["openai-organization"] == "org-1"
        assert seen["accept-encoding"] == "identity"
        assert int(seen["content-length"]) == len(h.upstream.last.body)


async def test_upstream_key_replaces_the_clients_key() -> None:
    async with running(upstream_key="sk-proxy-owned") as h:
        await h.client.post(
            "/v1/chat/completions", json=chat_body(1), headers={"authorization": "Bearer sk-x"}
        )
        assert h.upstream.last.headers["authorization"] == "Bearer sk-proxy-owned"
        await h.client.post("/v1/messages", json=anthropic_body(1), headers={"x-api-key": "sk-y"})
        assert h.upstream.last.headers["x-api-key"] == "sk-proxy-owned"
        assert "authorization" not in h.upstream.last.headers


async def test_upstream_error_status_is_relayed_as_is() -> None:
    error = {"error": {"message": "Rate limit", "type": "requests", "param": None, "code": "429"}}

    def handler(request: httpx.Request, data: object) -> httpx.Response:
        return httpx.Response(429, json=error, headers={"retry-after": "7"})

    async with running(handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat_body(1))
        assert response.status_code == 429
        assert response.json() == error
        assert response.headers["retry-after"] == "7"


async def test_stateful_responses_request_is_not_logged() -> None:
    body = {
        "model": "gpt-4o",
        "previous_response_id": "resp_0",
        "input": [{"type": "function_call_output", "call_id": "c1", "output": "42"}],
    }
    async with running() as h:
        response = await h.client.post("/v1/responses", json=body)
        assert response.status_code == 200
        assert json.loads(h.upstream.last.body) == body
        assert (await h.status())["count"] == 0


async def test_small_answer_with_a_length_is_sent_whole_with_its_length() -> None:
    from collections.abc import AsyncIterator

    payload = json.dumps(chat_completion("sized")).encode()

    async def stream() -> AsyncIterator[bytes]:
        yield payload[:10]
        yield payload[10:]

    def handler(request: httpx.Request, data: object) -> httpx.Response:
        headers = {"content-type": "application/json", "content-length": str(len(payload))}
        return httpx.Response(200, headers=headers, content=stream())

    async with running(handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat_body(1))
        assert response.content == payload
        assert response.headers["content-length"] == str(len(payload))
        assert response.headers["content-type"] == "application/json"


async def test_other_methods_on_api_paths_are_relayed() -> None:
    async with running() as h:
        response = await h.client.get("/v1/chat/completions?limit=1")
        assert response.status_code == 200  # relayed, not the router's 405
        assert h.upstream.last.method == "GET"
        assert h.upstream.last.body == b""
        assert h.upstream.last.url == "http://upstream.test/v1/chat/completions?limit=1"


async def _asgi_get(app: Any, raw_path: bytes) -> tuple[int, bytes]:
    """A GET sent to the app exactly as `raw_path` reads (an HTTP client would normalise
    its dot segments), decoded the way uvicorn decodes it."""
    sent: list[dict[str, Any]] = []
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if received:
            await anyio.sleep_forever()  # the client stays until the response ends
        received = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    path, _, query = raw_path.partition(b"?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(path.decode("latin-1")),
        "raw_path": path,
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"proxy.test")],
        "client": ("127.0.0.1", 5000),
        "server": ("proxy.test", 80),
    }
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


@pytest.mark.parametrize(
    "raw_path",
    [
        b"/v1/../../admin",
        b"/v1/models/../../../secret?x=1",
        b"/v1/%2e%2e/%2E%2E/admin",
        b"/v1/.%2e/admin",
        b"/v1/%252e%252e/admin",  # decoded twice by a lenient upstream
        b"/v1/..%2f..%2fadmin",
        b"/v1/..\\..\\admin",
        b"/v1/./models",
    ],
)
async def test_paths_with_dot_segments_are_refused_not_relayed(raw_path: bytes) -> None:
    async with running(upstream="http://upstream.test/base/v1", upstream_key="sk-upstream") as h:
        status, body = await _asgi_get(h.app, raw_path)
        assert status == 400
        assert b"dot segment" in body
        assert h.upstream.seen == []


async def test_dots_inside_a_segment_are_relayed() -> None:
    async with running() as h:
        status, _ = await _asgi_get(h.app, b"/v1/files/report..v2.txt")
        assert status in {200, 404}
        assert h.upstream.last.url == "http://upstream.test/v1/files/report..v2.txt"


async def test_cookies_an_upstream_sets_reach_the_client_never_another_request() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        return httpx.Response(
            200, json={"ok": True}, headers={"set-cookie": "upstream-session=tenant-A; Path=/"}
        )

    async with running(handler=handler) as h:
        first = await h.client.get("/v1/models", headers={"authorization": "Bearer sk-A"})
        assert first.headers["set-cookie"] == "upstream-session=tenant-A; Path=/"
        h.client.cookies.clear()  # the second client keeps no cookies of its own
        await h.client.get("/v1/models", headers={"authorization": "Bearer sk-B"})
        assert "cookie" not in h.upstream.last.headers
        h.client.cookies.clear()
        await h.client.post(
            "/v1/chat/completions", json=chat_body(1), headers={"authorization": "Bearer sk-B"}
        )
        assert "cookie" not in h.upstream.last.headers
