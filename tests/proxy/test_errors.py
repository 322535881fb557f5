"""Every error path answers in the API's own shape: bad input (400/413), keys (401),
unreachable (502) and slow (504) upstreams, errors inside a 200 stream, a stream that breaks
off, and a context-length error answered by compacting harder and retrying once."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compaction.config import CompactionConfig
from compaction.dialects import OPENAI
from compaction.store import open_store

from .conftest import anthropic_body, chat_body, running
from .test_compaction import POLICY, chat, chat_history
from .upstream import chat_chunks, sse_response

pytestmark = pytest.mark.anyio


def openai_error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    error: dict[str, Any] = body["error"]
    return error


def anthropic_error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body["type"] == "error"
    assert set(body["error"]) == {"type", "message"}
    error: dict[str, Any] = body["error"]
    return error


async def test_malformed_json_is_a_400_naming_line_and_column() -> None:
    async with running() as h:
        response = await h.client.post(
            "/v1/chat/completions", content=b'{"model": "x",\n "messages": [}'
        )
        assert response.status_code == 400
        error = openai_error(response)
        assert error["type"] == "invalid_request_error"
        assert "line 2 col" in error["message"]
        response = await h.client.post("/v1/messages", content=b"[1, 2]")
        assert response.status_code == 400
        assert "expected a JSON object" in anthropic_error(response)["message"]
        assert h.upstream.seen == []


async def test_undecodable_message_goes_upstream_as_it_came_and_the_log_names_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A role the proxy does not know may be one the upstream does: it is the upstream's call.
    body = chat_body(2)
    body["messages"].append({"role": "wizard", "content": "hi"})
    async with running() as h:
        raw = json.dumps(body).encode()
        response = await h.client.post(
            "/v1/chat/completions", content=raw, headers={"content-type": "application/json"}
        )
        assert response.status_code == 200
        assert h.upstream.last.body == raw
        index = len(body["messages"]) - 1
        assert f"messages[{index}]" in caplog.text
        # the same problem in a later turn of a known session: still the index in the request
        good = chat_body(2)
        await h.client.post(
            "/v1/chat/completions", json=good, headers={"x-compaction-session": "k"}
        )
        later = {**good, "messages": [*good["messages"], {"role": "user", "content": 7}]}
        response = await h.client.post(
            "/v1/chat/completions", json=later, headers={"x-compaction-session": "k"}
        )
        assert response.status_code == 200
        assert f"messages[{len(later['messages']) - 1}]" in caplog.text
        metrics = (await h.client.get("/metrics")).text
        assert 'compaction_proxy_invalid_history_total{endpoint="openai"} 2' in metrics


async def test_oversized_body_is_a_413_by_header_and_by_streamed_size() -> None:
    async with running(max_body_bytes=1000) as h:
        response = await h.client.post("/v1/chat/completions", content=b"x" * 2000)
        assert response.status_code == 413
        assert "1000 bytes" in openai_error(response)["message"]

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(5):
                yield b"y" * 400

        response = await h.client.post("/v1/messages", content=chunks())  # no content-length
        assert response.status_code == 413
        assert anthropic_error(response)["type"] == "request_too_large"
        assert h.upstream.seen == []


async def test_invalid_transcript_needing_compaction_goes_upstream_as_it_came() -> None:
    # The client's own orphan: the upstream judges it, the proxy never turns it into a 400.
    history = chat_history(12)
    history.insert(3, {"role": "tool", "tool_call_id": "nobody", "content": "orphan"})
    async with running(compaction=POLICY) as h:
        body = json.dumps(chat(history)).encode()
        response = await h.client.post(
            "/v1/chat/completions", content=body, headers={"content-type": "application/json"}
        )
        assert response.status_code == 200
        assert h.upstream.last.body == body
        metrics = (await h.client.get("/metrics")).text
        assert 'compaction_proxy_invalid_history_total{endpoint="openai"} 1' in metrics


async def test_unreachable_upstream_is_a_502_in_each_shape() -> None:
    def refuse(request: httpx.Request, data: object) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    async with running(handler=refuse) as h:
        response = await h.client.post("/v1/chat/completions", json=chat_body(1))
        assert response.status_code == 502
        error = openai_error(response)
        assert error["code"] == "upstream_unreachable"
        assert "Connection refused" in error["message"]
        response = await h.client.post("/v1/messages", json=anthropic_body(1))
        assert response.status_code == 502
        assert anthropic_error(response)["type"] == "api_error"
        response = await h.client.get("/v1/models")
        assert response.status_code == 502


async def test_upstream_timeout_is_a_504() -> None:
    def slow(request: httpx.Request, data: object) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    async with running(handler=slow) as h:
        response = await h.client.post("/v1/chat/completions", json=chat_body(1))
        assert response.status_code == 504
        assert openai_error(response)["code"] == "upstream_timeout"
        response = await h.client.post("/v1/messages", json=anthropic_body(1))
        assert response.status_code == 504
        assert anthropic_error(response)["type"] == "timeout_error"
        metrics = (await h.client.get("/metrics")).text
        assert 'compaction_proxy_upstream_errors_total{kind="timeout"} 2' in metrics


async def test_error_event_inside_a_200_stream_reaches_the_client_unchanged() -> None:
    openai_event = (
        b'data: {"error":{"message":"overloaded","type":"server_error",'
        b'"param":null,"code":null}}\n\n'
    )
    anthropic_event = (
        b'event: error\ndata: {"type":"error",'
        b'"error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )

    def handler(request: httpx.Request, data: object) -> httpx.Response:
        if request.url.path.endswith("/messages"):
            return sse_response([b'event: ping\ndata: {"type":"ping"}\n\n', anthropic_event])
        return sse_response([chat_chunks()[0], openai_event])

    async with running(handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat_body(1, stream=True))
        assert response.status_code == 200
        assert response.content == chat_chunks()[0] + openai_event
        response = await h.client.post("/v1/messages", json=anthropic_body(1, stream=True))
        assert response.content.endswith(anthropic_event)


def breaking(first: list[bytes], fragment: bytes = b"") -> AsyncIterator[bytes]:
    async def stream() -> AsyncIterator[bytes]:
        for chunk in first:
            yield chunk
        if fragment:
            yield fragment
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body"
        )

    return stream()


@pytest.mark.parametrize(
    ("path", "body", "expect"),
    [
        ("/v1/chat/completions", chat_body(1, stream=True), b'data: {"error":'),
        ("/v1/messages", anthropic_body(1, stream=True), b'event: error\ndata: {"type":"error"'),
        (
            "/v1/responses",
            {"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}], "stream": True},
            b'event: error\ndata: {"type":"error"',
        ),
    ],
)
async def test_broken_stream_ends_with_the_apis_error_event(
    path: str, body: dict[str, Any], expect: bytes
) -> None:
    head = chat_chunks()[:2]

    def handler(request: httpx.Request, data: object) -> httpx.Response:
        return sse_response(breaking(head, b'data: {"id":"chatcmpl-9","obj'))

    async with running(handler=handler) as h:
        response = await h.client.post(path, json=body)
        assert response.status_code == 200
        content = response.content
        assert content.startswith(b"".join(head))
        tail = content[len(b"".join(head)) :]
        assert tail.startswith(expect)  # the half event was not sent; the error event was
        assert b"upstream_disconnected" in tail or b"broke off" in tail
        assert tail.endswith(b"\n\n")
        metrics = (await h.client.get("/metrics")).text
        assert 'compaction_proxy_upstream_errors_total{kind="broken_stream"} 1' in metrics


async def test_require_key_protects_every_path_and_is_not_forwarded() -> None:
    async with running(require_key="proxy-secret") as h:
        response = await h.client.post("/v1/chat/completions", json=chat_body(1))
        assert response.status_code == 401
        assert openai_error(response)["code"] == "invalid_api_key"
        response = await h.client.post(
            "/v1/messages", json=anthropic_body(1), headers={"x-api-key": "wrong"}
        )
        assert response.status_code == 401
        assert anthropic_error(response)["type"] == "authentication_error"
        assert (await h.client.get("/compaction/status")).status_code == 401
        assert (await h.client.get("/v1/models")).status_code == 401
        assert h.upstream.seen == []
        response = await h.client.post(
            "/v1/chat/completions",
            json=chat_body(1),
            headers={"authorization": "Bearer proxy-secret"},
        )
        assert response.status_code == 200
        assert "authorization" not in h.upstream.last.headers
        response = await h.client.get("/metrics", headers={"x-api-key": "proxy-secret"})
        assert response.status_code == 200


async def test_keys_never_reach_the_store_the_status_or_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "sessions.db"
    store = open_store(path)
    secrets = ["sk-client-SECRET-1", "sk-ant-SECRET-2", "proxy-SECRET-3"]
    history = chat_history(12)
    async with running(compaction=POLICY, store=store, require_key="proxy-SECRET-3") as h:
        for _ in range(2):
            await h.client.post(
                "/v1/chat/completions",
                json=chat(history),
                headers={"authorization": "Bearer proxy-SECRET-3", "x-api-key": secrets[1]},
            )
            history = [*history, *chat_history(1, start=12)]
        await h.client.post(
            "/v1/messages",
            json=anthropic_body(2),
            headers={"x-api-key": "proxy-SECRET-3", "authorization": f"Bearer {secrets[0]}"},
        )
        status = await h.client.get("/compaction/status", headers={"x-api-key": "proxy-SECRET-3"})
        metrics = await h.client.get("/metrics", headers={"x-api-key": "proxy-SECRET-3"})
        assert h.upstream.seen[0].headers["x-api-key"] == secrets[1]  # forwarded upstream …
        assert max(s["compactions"] for s in json.loads(status.content)["sessions"]) >= 1
    store.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert len(stored) > 10_000
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "compaction" in logged  # something was logged …
    for secret in secrets:  # … but no key anywhere
        assert secret.encode() not in stored
        assert secret not in logged
        assert secret.encode() not in status.content
        assert secret.encode() not in metrics.content


OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 2000 tokens. However, your messages "
        "resulted in 9000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


async def test_context_length_error_compacts_harder_and_retries_once() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        size = len(json.dumps(data))
        return (
            httpx.Response(400, json=OVERFLOW)
            if size > 9000
            else httpx.Response(200, json={"ok": size})
        )

    body = chat(chat_history(8))
    never = CompactionConfig(token_threshold=10_000_000)
    async with running(handler=handler, compaction=never) as h:
        response = await h.client.post("/v1/chat/completions", json=body)
        assert response.status_code == 200
        assert len(h.upstream.seen) == 2
        retried = h.upstream.seen[1].json()
        assert OPENAI.validate(OPENAI.decode(retried)) == []
        assert retried["messages"][-1] == body["messages"][-1]
        session = (await h.status())["sessions"][0]
        assert session["compactions"] == 1
        receipt = session["last_receipt"]
        assert receipt["target_tokens"] <= receipt["tokens_before"] // 2 + 1
        metrics = (await h.client.get("/metrics")).text
        assert 'compaction_proxy_overflow_retries_total{endpoint="openai"} 1' in metrics


async def test_context_length_error_after_the_retry_is_returned_as_the_upstream_sent_it() -> None:
    anthropic_overflow = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 9000 tokens > 3000 maximum",
        },
    }

    def handler(request: httpx.Request, data: object) -> httpx.Response:
        return httpx.Response(400, json=anthropic_overflow)

    never = CompactionConfig(token_threshold=10_000_000)
    async with running(handler=handler, compaction=never) as h:
        response = await h.client.post("/v1/messages", json=anthropic_body(8))
        assert response.status_code == 400
        assert response.json() == anthropic_overflow
        assert len(h.upstream.seen) == 2  # the original and one retry, no more


async def test_non_overflow_400_is_not_retried() -> None:
    error = {
        "error": {
            "message": "Invalid value for 'temperature'",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": None,
        }
    }

    def handler(request: httpx.Request, data: object) -> httpx.Response:
        return httpx.Response(400, json=error)

    async with running(handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat_body(3))
        assert response.status_code == 400
        assert response.json() == error
        assert len(h.upstream.seen) == 1


async def test_a_failing_store_does_not_stop_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    store = open_store(":memory:")
    async with running(store=store) as h:
        store.close()  # every write now fails
        body = json.dumps(chat_body(2)).encode()
        response = await h.client.post("/v1/chat/completions", content=body)
        assert response.status_code == 200
        assert h.upstream.last.body == body  # forwarded as it came
        assert "forwarding the request as it came" in caplog.text
        assert (await h.status())["count"] == 0  # the half-made session was forgotten


async def test_a_stalled_summarizer_is_given_up_at_the_compaction_deadline() -> None:
    import time

    import httpx2

    from compaction.providers import OpenAIProvider

    seen: list[httpx2.Request] = []

    def stalled(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        time.sleep(0.1)
        raise httpx2.ReadTimeout("no answer")

    summarizer = OpenAIProvider(
        "summarizer",
        api_key="sk-test",
        timeout=120.0,
        max_retries=10,
        http_client=httpx2.Client(transport=httpx2.MockTransport(stalled)),
    )
    policy = CompactionConfig(
        token_threshold=3000,
        max_tokens=2000,
        keep_recent_n=3,
        model="summarizer",
        strategies=[{"kind": "summarize"}, {"kind": "truncate"}],
    )
    async with running(compaction=policy, summarizer=summarizer, compaction_deadline=0.5) as h:
        response = await h.client.post("/v1/chat/completions", json=chat(chat_history(12)))
        assert response.status_code == 200
        sent = h.upstream.last.json()
        assert OPENAI.validate(OPENAI.decode(sent)) == []
        assert len(json.dumps(sent)) < len(json.dumps(chat(chat_history(12))))  # the fallback
        receipt = (await h.client.get("/compaction/status")).json()["sessions"][0]["last_receipt"]
        assert receipt["summarizer"]["errors"] >= 1
    assert 1 <= len(seen) <= 4  # not 11 tries of 120 s
    assert all(r.extensions["timeout"]["read"] <= 0.5 for r in seen)
