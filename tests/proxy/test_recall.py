"""The optional recall tool: offered once a session has compacted, answered by the proxy
from the archive, invisible to the client."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from compaction.proxy import recall

from .conftest import running
from .test_compaction import POLICY, anthropic_history, chat, chat_history, responses_history
from .upstream import (
    anthropic_events,
    anthropic_message,
    chat_chunks,
    chat_completion,
    sse_response,
)

pytestmark = pytest.mark.anyio

HANDLE = re.compile(r"m-[0-9a-f]{12}")


def recall_call(call_id: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "recall", "arguments": json.dumps(args)},
    }


async def test_chat_recall_is_answered_from_the_archive_and_hidden_from_the_client() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        last = data["messages"][-1]
        names = [t["function"]["name"] for t in data.get("tools", [])]
        if "recall" in names and last["role"] != "tool":
            return httpx.Response(
                200,
                json=chat_completion(
                    "", tool_calls=[recall_call("rc1", {"query": "payload 3 line 7"})]
                ),
            )
        return httpx.Response(200, json=chat_completion("All recalled."))

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        history = chat_history(12)
        response = await h.client.post("/v1/chat/completions", json=chat(history))
        assert response.status_code == 200
        assert response.json() == chat_completion("All recalled.")
        assert len(h.upstream.seen) == 2
        first, second = (s.json() for s in h.upstream.seen)
        assert [t["function"]["name"] for t in first["tools"]] == ["read_file", "recall"]
        answer = second["messages"][-1]
        assert answer["role"] == "tool" and answer["tool_call_id"] == "rc1"
        # the matching original verbatim, under the handle its placeholder shows
        assert "def helper_3_7(): return 'payload 3 line 7'" in answer["content"]
        assert HANDLE.match(answer["content"].removeprefix("["))
        assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "recall"
        # the exchange is not part of the session: the next request extends the client's history
        log = (await h.status())["sessions"][0]["log"]
        assert not any("recall" in m.text for _, m in h.store.messages(log))


def handle_in(messages: list[dict[str, Any]]) -> str:
    """The first archive handle the compacted request shows the model (a placeholder's)."""
    found = HANDLE.findall(json.dumps(messages))
    assert found, "the compacted request shows a handle"
    return str(found[0])


def original_output(history: list[dict[str, Any]], handle: str, sent: list[dict[str, Any]]) -> str:
    """The client's tool output whose placeholder (in `sent`) shows `handle`."""
    (placeholder,) = [m for m in sent if m.get("role") == "tool" and handle in m["content"]]
    (original,) = [m for m in history if m.get("tool_call_id") == placeholder["tool_call_id"]]
    return str(original["content"])


async def test_recall_of_a_handle_the_compacted_request_shows_returns_the_original() -> None:
    recalled: list[str] = []

    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        if data["messages"][-1]["role"] != "tool":
            recalled.append(handle_in(data["messages"]))
            call = recall_call("rc", {"query": recalled[-1]})
            return httpx.Response(200, json=chat_completion("", tool_calls=[call]))
        return httpx.Response(200, json=chat_completion("ok"))

    history = chat_history(12)
    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat(history))
        assert response.json() == chat_completion("ok")
        first, second = (s.json()["messages"] for s in h.upstream.seen)
        (handle,) = recalled
        answer = second[-1]
        assert answer["role"] == "tool" and answer["tool_call_id"] == "rc"
        assert handle in answer["content"]
        assert original_output(history, handle, first) in answer["content"]


async def test_mixed_calls_reach_the_client_without_the_recall_call() -> None:
    own = {"id": "c9", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}

    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        return httpx.Response(
            200, json=chat_completion("", tool_calls=[recall_call("rc", {"query": "x"}), own])
        )

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat(chat_history(12)))
        assert response.json()["choices"][0]["message"]["tool_calls"] == [own]
        assert len(h.upstream.seen) == 1


async def test_anthropic_recall_and_no_tool_for_uncompacted_sessions() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        last = data["messages"][-1]["content"]
        if any(t.get("name") == "recall" for t in data.get("tools", [])) and not (
            isinstance(last, list) and last[0].get("tool_use_id") == "toolu_r"
        ):
            use = {
                "type": "tool_use",
                "id": "toolu_r",
                "name": "recall",
                "input": {"query": "payload 2 line 4"},
            }
            return httpx.Response(200, json=anthropic_message("", tool_use=[use]))
        return httpx.Response(200, json=anthropic_message("ok"))

    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": anthropic_history(12)}
    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/messages", json=body)
        assert response.json() == anthropic_message("ok")
        result = h.upstream.last.json()["messages"][-1]["content"][0]
        assert result["type"] == "tool_result"
        assert "def helper_2_4(): return 'payload 2 line 4'" in result["content"]
        small = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": anthropic_history(1)}
        await h.client.post("/v1/messages", json=small)
        assert "tools" not in h.upstream.last.json()  # nothing compacted: nothing to recall


# -- streamed answers ------------------------------------------------------------------------


def chat_event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-r",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def call_delta(index: int, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {
        "tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]
    }


def args_delta(index: int, arguments: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}


def chat_recall_stream(*calls: tuple[str, str, str]) -> list[bytes]:
    """Text, then the tool calls (id, name, arguments in two pieces), then the ending."""
    events = [
        chat_event({"role": "assistant", "content": ""}),
        chat_event({"content": "Let me check. "}),
    ]
    for index, (call_id, name, arguments) in enumerate(calls):
        half = len(arguments) // 2
        events.append(chat_event(call_delta(index, call_id, name, arguments[:half])))
        events.append(chat_event(args_delta(index, arguments[half:])))
    usage = {"id": "chatcmpl-r", "object": "chat.completion.chunk", "choices": [], "usage": {}}
    return [
        *events,
        chat_event({}, "tool_calls"),
        b"data: " + json.dumps(usage).encode() + b"\n\n",
        b"data: [DONE]\n\n",
    ]


def sse_data(body: bytes) -> list[Any]:
    lines = [line[6:] for line in body.split(b"\n") if line.startswith(b"data: ")]
    return [line if line == b"[DONE]" else json.loads(line) for line in lines]


def chat_text(events: list[Any]) -> str:
    return "".join(
        e["choices"][0]["delta"].get("content") or ""
        for e in events
        if e != b"[DONE]" and e["choices"]
    )


async def test_streamed_chat_recall_is_answered_and_the_answers_join_into_one_stream() -> None:
    query = json.dumps({"query": "payload 3 line 7"})

    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        assert data["stream"] is True
        if data["messages"][-1]["role"] != "tool":
            return sse_response(chat_recall_stream(("rc1", "recall", query)))
        return sse_response(chat_chunks("Found it now."))

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post(
            "/v1/chat/completions", json=chat(chat_history(12), stream=True)
        )
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_data(response.content)
        assert chat_text(events) == "Let me check. Found it now. "
        assert events.count(b"[DONE]") == 1 and events[-1] == b"[DONE]"
        assert b"recall" not in response.content and b"rc1" not in response.content
        finishes = [e["choices"][0]["finish_reason"] for e in events[:-1] if e["choices"]]
        assert [f for f in finishes if f] == ["stop"]  # the first answer's ending was held
        assert b'"usage"' not in response.content  # and so was its usage chunk
        assert len(h.upstream.seen) == 2
        follow_up = h.upstream.seen[1].json()
        assert follow_up["stream"] is True
        turn, answer = follow_up["messages"][-2:]
        assert turn["content"] == "Let me check. "
        assert turn["tool_calls"] == [
            {"id": "rc1", "type": "function", "function": {"name": "recall", "arguments": query}}
        ]
        assert answer["role"] == "tool" and answer["tool_call_id"] == "rc1"
        assert "def helper_3_7(): return 'payload 3 line 7'" in answer["content"]


async def test_streamed_recall_of_a_handle_sends_the_archived_original_upstream() -> None:
    recalled: list[str] = []

    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        if data["messages"][-1]["role"] != "tool":
            recalled.append(handle_in(data["messages"]))
            arguments = json.dumps({"query": recalled[-1]})
            # all in one chunk: the recall call starts in the middle of it
            return sse_response([b"".join(chat_recall_stream(("rc", "recall", arguments)))])
        return sse_response(chat_chunks("ok"))

    history = chat_history(12)
    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat(history, stream=True))
        assert chat_text(sse_data(response.content)) == "Let me check. ok "
        first, second = (s.json()["messages"] for s in h.upstream.seen)
        (handle,) = recalled
        assert original_output(history, handle, first) in second[-1]["content"]


async def test_streamed_mixed_calls_reach_the_client_without_the_recall_call() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        return sse_response(
            chat_recall_stream(("rc", "recall", '{"query": "x"}'), ("c9", "read_file", "{}"))
        )

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post(
            "/v1/chat/completions", json=chat(chat_history(12), stream=True)
        )
        assert len(h.upstream.seen) == 1
        assert b"recall" not in response.content
        events = sse_data(response.content)
        assert events.count(b"[DONE]") == 1
        calls = [
            part
            for e in events
            if e != b"[DONE]" and e["choices"]
            for part in e["choices"][0]["delta"].get("tool_calls", [])
        ]
        assert calls == [  # the client's own call, renumbered as the first
            call_delta(0, "c9", "read_file", "{")["tool_calls"][0],
            args_delta(0, "}")["tool_calls"][0],
        ]
        assert events[-3]["choices"][0]["finish_reason"] == "tool_calls"
        assert events[-2]["usage"] == {}  # the rest of the held answer went out as it was


async def test_streamed_recall_rounds_are_bounded() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        return sse_response(chat_recall_stream(("rc", "recall", '{"query": "payload"}')))

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post(
            "/v1/chat/completions", json=chat(chat_history(12), stream=True)
        )
        assert len(h.upstream.seen) == 1 + recall.MAX_ROUNDS
        events = sse_data(response.content)
        assert events.count(b"[DONE]") == 1
        assert chat_text(events) == "Let me check. " * (1 + recall.MAX_ROUNDS)


async def test_a_streamed_follow_up_the_upstream_refuses_ends_with_an_error_event() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        if data["messages"][-1]["role"] != "tool":
            return sse_response(chat_recall_stream(("rc", "recall", '{"query": "x"}')))
        return httpx.Response(500, json={"error": {"message": "boom"}})

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post(
            "/v1/chat/completions", json=chat(chat_history(12), stream=True)
        )
        events = sse_data(response.content)
        assert chat_text(events[:-1]) == "Let me check. "
        assert "HTTP 500" in events[-1]["error"]["message"]
        assert b"[DONE]" not in response.content


async def test_a_stream_that_breaks_during_a_recall_call_ends_with_an_error_event() -> None:
    async def broken() -> AsyncIterator[bytes]:
        for event in chat_recall_stream(("rc", "recall", '{"query": "x"}'))[:3]:
            yield event
        raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        return sse_response(broken())

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post(
            "/v1/chat/completions", json=chat(chat_history(12), stream=True)
        )
        events = sse_data(response.content)
        assert chat_text(events[:-1]) == "Let me check. "
        assert events[-1]["error"]["code"] == "upstream_disconnected"
        assert len(h.upstream.seen) == 1 and b"recall" not in response.content


async def test_a_stream_without_a_recall_call_is_relayed_byte_for_byte() -> None:
    async with running(compaction=POLICY, recall_tool=True) as h:
        response = await h.client.post(
            "/v1/chat/completions", json=chat(chat_history(12), stream=True)
        )
        offered = [t["function"]["name"] for t in h.upstream.last.json()["tools"]]
        assert offered == ["read_file", "recall"]
        assert response.content == b"".join(chat_chunks())


def anthropic_event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def anthropic_recall_stream(arguments: str, *, own_call: bool = False) -> list[bytes]:
    """A text block, a recall call (arguments in two pieces), maybe a call of the client's."""
    start, *_ = anthropic_events()
    use = {"type": "tool_use", "id": "toolu_r", "name": "recall", "input": {}}
    own = {"type": "tool_use", "id": "toolu_own", "name": "read_file", "input": {}}
    half = len(arguments) // 2
    own_events = [
        anthropic_event("content_block_start", {"index": 2, "content_block": own}),
        anthropic_event(
            "content_block_delta",
            {"index": 2, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
        ),
        anthropic_event("content_block_stop", {"index": 2}),
    ]
    return [
        start,
        anthropic_event(
            "content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}
        ),
        anthropic_event(
            "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Look. "}}
        ),
        anthropic_event("content_block_stop", {"index": 0}),
        anthropic_event("content_block_start", {"index": 1, "content_block": use}),
        *(
            anthropic_event(
                "content_block_delta",
                {"index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}},
            )
            for piece in (arguments[:half], arguments[half:])
        ),
        anthropic_event("content_block_stop", {"index": 1}),
        *(own_events if own_call else []),
        anthropic_event(
            "message_delta",
            {"delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {}},
        ),
        anthropic_event("message_stop", {}),
    ]


async def test_streamed_anthropic_recall_continues_the_same_message() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        last = data["messages"][-1]["content"]
        if isinstance(last, list) and last[0].get("tool_use_id") == "toolu_r":
            return sse_response(anthropic_events("Found it."))
        return sse_response(anthropic_recall_stream('{"query": "payload 2 line 4"}'))

    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": anthropic_history(12),
        "stream": True,
    }
    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/messages", json=body)
        assert response.status_code == 200
        events = sse_data(response.content)
        kinds = [e["type"] for e in events]
        assert kinds.count("message_start") == 1 and kinds[0] == "message_start"
        assert kinds.count("message_stop") == 1 and kinds[-1] == "message_stop"
        assert kinds.count("message_delta") == 1
        assert b"recall" not in response.content and b"toolu_r" not in response.content
        texts = [
            (e["index"], e["delta"]["text"]) for e in events if e["type"] == "content_block_delta"
        ]
        assert texts == [(0, "Look. "), (1, "Found "), (1, "it. ")]
        starts = [e["index"] for e in events if e["type"] == "content_block_start"]
        assert starts == [0, 1]  # the follow-up's block follows the client's first
        follow_up = h.upstream.last.json()
        turn, results = follow_up["messages"][-2:]
        assert turn == {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Look. "},
                {
                    "type": "tool_use",
                    "id": "toolu_r",
                    "name": "recall",
                    "input": {"query": "payload 2 line 4"},
                },
            ],
        }
        result = results["content"][0]
        assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_r"
        assert "def helper_2_4(): return 'payload 2 line 4'" in result["content"]


async def test_streamed_anthropic_mixed_calls_reach_the_client_without_the_recall_call() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        return sse_response(anthropic_recall_stream('{"query": "x"}', own_call=True))

    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": anthropic_history(12),
        "stream": True,
    }
    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/messages", json=body)
        assert len(h.upstream.seen) == 1
        assert b"recall" not in response.content
        events = sse_data(response.content)
        blocks = [
            (e["index"], e["content_block"]["type"])
            for e in events
            if e["type"] == "content_block_start"
        ]
        assert blocks == [(0, "text"), (1, "tool_use")]  # the client's call, renumbered
        assert [e["index"] for e in events if e["type"] == "content_block_stop"] == [0, 1]
        assert [e["type"] for e in events][-2:] == ["message_delta", "message_stop"]


async def test_no_recall_tool_for_streamed_responses_requests() -> None:
    body = {"model": "gpt-4o", "input": responses_history(12), "store": False, "stream": True}
    async with running(compaction=POLICY, recall_tool=True) as h:
        await h.client.post("/v1/responses", json=body)
        sent = h.upstream.last.json()
        assert len(h.upstream.last.body) < len(json.dumps(body))  # compacted, yet no recall
        assert all(t.get("name") != "recall" for t in sent.get("tools", []))


async def test_anthropic_recall_of_a_handle_returns_the_original() -> None:
    recalled: list[str] = []

    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        last = data["messages"][-1]["content"]
        if isinstance(last, list) and last[0].get("tool_use_id") == "toolu_r":
            return httpx.Response(200, json=anthropic_message("ok"))
        recalled.append(handle_in(data["messages"]))
        use = {"type": "tool_use", "id": "toolu_r", "name": "recall", "input": {}}
        use["input"] = {"query": recalled[-1]}
        return httpx.Response(200, json=anthropic_message("", tool_use=[use]))

    history = anthropic_history(12)
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": history}
    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/messages", json=body)
        assert response.json() == anthropic_message("ok")
        first, second = (s.json()["messages"] for s in h.upstream.seen)
        (handle,) = recalled
        blocks = [b for m in first if isinstance(m["content"], list) for b in m["content"]]
        (placeholder,) = [
            b for b in blocks if b.get("type") == "tool_result" and handle in json.dumps(b)
        ]
        (original,) = [
            b
            for m in history
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("tool_use_id") == placeholder["tool_use_id"]
        ]
        answer = second[-1]["content"][0]
        assert answer["tool_use_id"] == "toolu_r"
        assert original["content"] in answer["content"]
