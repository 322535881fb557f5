"""The optional recall tool: offered once a session has compacted, answered by the proxy
from the archive, invisible to the client."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from .conftest import running
from .test_compaction import POLICY, anthropic_history, chat, chat_history
from .upstream import anthropic_message, chat_completion

pytestmark = pytest.mark.anyio


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
        assert "[payload] [3] [line] [7]" in answer["content"]  # the match, marked
        assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "recall"
        # the exchange is not part of the session: the next request extends the client's history
        log = (await h.status())["sessions"][0]["log"]
        assert not any("recall" in m.text for _, m in h.store.messages(log))


async def test_recall_by_seq_returns_the_whole_original() -> None:
    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        if data["messages"][-1]["role"] != "tool":
            return httpx.Response(
                200, json=chat_completion("", tool_calls=[recall_call("rc", {"seq": 7})])
            )
        return httpx.Response(200, json=chat_completion(data["messages"][-1]["content"]))

    async with running(compaction=POLICY, recall_tool=True, handler=handler) as h:
        response = await h.client.post("/v1/chat/completions", json=chat(chat_history(12)))
        text = response.json()["choices"][0]["message"]["content"]
        # seqs count from 1: seq 7 is the tool result of call_1, all 30 lines of it
        assert text.startswith("message 7 (tool)")
        assert "payload 1 line 0" in text and "payload 1 line 29" in text


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


async def test_anthropic_recall_and_no_tool_for_streams_or_uncompacted_sessions() -> None:
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
        assert result["type"] == "tool_result" and "[payload] [2] [line] [4]" in result["content"]
        small = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": anthropic_history(1)}
        await h.client.post("/v1/messages", json=small)
        assert "tools" not in h.upstream.last.json()  # nothing compacted: nothing to recall
        await h.client.post("/v1/messages", json={**body, "stream": True})
        assert all(t.get("name") != "recall" for t in h.upstream.last.json().get("tools", []))
