"""Compaction through the proxy: over budget → compacted and valid; the request's other
fields kept; later requests forwarded as the session's view plus their new messages; earlier
summaries reused so each compaction pays only for its new span; sessions isolated; a
rewritten history starts a branch."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from compaction.config import CompactionConfig
from compaction.dialects import ANTHROPIC, OPENAI, RESPONSES
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import FunctionProvider

from .conftest import raw, running

pytestmark = pytest.mark.anyio

SYSTEM = "You are a careful coding agent."
TASK = "Fix the failing login test. Don't touch the migrations folder."
POLICY = CompactionConfig(token_threshold=3000, max_tokens=1500, keep_recent_n=4)


def chat_history(turns: int, *, lines: int = 30, start: int = 0) -> list[dict[str, Any]]:
    """System, task, then `turns` rounds of tool call → tool result → user follow-up."""
    messages: list[dict[str, Any]] = (
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
        if start == 0
        else []
    )
    for i in range(start, start + turns):
        messages += [
            {
                "role": "assistant",
                "content": f"Reading module {i}.",
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": f"src/mod_{i}.py"}),
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"call_{i}",
                "content": "\n".join(
                    f"def helper_{i}_{n}(): return 'payload {i} line {n}'" for n in range(lines)
                ),
            },
            {"role": "user", "content": f"Good. Now step {i + 1}."},
        ]
    return messages


def anthropic_history(turns: int, *, lines: int = 30) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for i in range(turns):
        messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading module {i}."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "read_file",
                        "input": {"path": f"src/mod_{i}.py"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{i}",
                        "content": "\n".join(
                            f"def helper_{i}_{n}(): return 'payload {i} line {n}'"
                            for n in range(lines)
                        ),
                    },
                    {"type": "text", "text": f"Good. Now step {i + 1}."},
                ],
            },
        ]
    return messages


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


def chat(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": messages, "tools": TOOLS, **extra}


async def test_over_budget_chat_is_compacted_valid_and_keeps_request_fields() -> None:
    body = chat(chat_history(12), temperature=0.2, stream=False, user="u-1")
    async with running(compaction=POLICY) as h:
        response = await h.client.post("/v1/chat/completions", content=raw(body))
        assert response.status_code == 200
        sent = h.upstream.last.json()
        assert len(h.upstream.last.body) < len(raw(body)) / 2
        assert sent["messages"][0] == body["messages"][0]  # system verbatim
        assert sent["messages"][1] == body["messages"][1]  # task pinned
        assert sent["messages"][-1] == body["messages"][-1]  # live turn
        assert {k: v for k, v in sent.items() if k != "messages"} == {
            k: v for k, v in body.items() if k != "messages"
        }
        conversation = OPENAI.decode(sent)
        assert OPENAI.validate(conversation) == []
        session = (await h.status())["sessions"][0]
        assert session["compactions"] == 1
        assert session["last_receipt"]["status"] == "compacted"
        assert session["last_receipt"]["tokens_after"] <= 1500
        assert "archive" not in session["last_receipt"]


async def test_once_compacted_later_requests_carry_the_view_plus_new_messages() -> None:
    history = chat_history(12)
    async with running(compaction=POLICY) as h:
        await h.client.post("/v1/chat/completions", json=chat(history))
        first = h.upstream.last.json()["messages"]
        reply = {"role": "assistant", "content": "Step 13 is next."}
        follow_up = {"role": "user", "content": "Go on with step 13."}
        history = [*history, reply, follow_up]
        body = raw(chat(history, temperature=0.7))
        await h.client.post("/v1/chat/completions", content=body)
        seen = h.upstream.last
        assert seen.body != body  # not the client's bytes: the session's view
        sent = seen.json()
        assert sent["messages"] == [*first, reply, follow_up]
        assert sent["temperature"] == 0.7  # fields come from the current request
        assert OPENAI.validate(OPENAI.decode(sent)) == []


async def test_under_budget_session_stays_byte_for_byte_over_several_turns() -> None:
    history = chat_history(1)
    async with running(compaction=POLICY) as h:
        for turn in range(3):
            body = raw(chat(history))
            await h.client.post("/v1/chat/completions", content=body)
            assert h.upstream.last.body == body, f"turn {turn} was rewritten"
            history = [*history, *chat_history(1, start=turn + 1)]
        session = (await h.status())["sessions"][0]
        assert session["requests"] == 3
        assert session["compactions"] == 0


async def test_anthropic_over_budget_is_compacted_valid() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "system": SYSTEM,
        "max_tokens": 512,
        "messages": anthropic_history(12),
    }
    async with running(compaction=POLICY) as h:
        response = await h.client.post("/v1/messages", json=body)
        assert response.status_code == 200
        sent = h.upstream.last.json()
        assert sent["system"] == SYSTEM
        assert sent["max_tokens"] == 512
        assert len(h.upstream.last.body) < len(json.dumps(body)) / 2
        assert ANTHROPIC.validate(ANTHROPIC.decode(sent)) == []
        assert sent["messages"][-1] == body["messages"][-1]


def responses_history(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for i in range(turns):
        items += [
            {
                "type": "function_call",
                "call_id": f"fc_{i}",
                "name": "read_file",
                "arguments": json.dumps({"path": f"src/mod_{i}.py"}),
            },
            {
                "type": "function_call_output",
                "call_id": f"fc_{i}",
                "output": "\n".join(f"def helper_{i}_{n}(): pass" for n in range(30)),
            },
            {"role": "user", "content": f"Good. Now step {i + 1}."},
        ]
    return items


async def test_responses_over_budget_is_compacted_valid() -> None:
    items = responses_history(12)
    body = {"model": "gpt-4o", "instructions": SYSTEM, "input": items, "store": False}
    async with running(compaction=POLICY) as h:
        response = await h.client.post("/v1/responses", json=body)
        assert response.status_code == 200
        sent = h.upstream.last.json()
        assert sent["instructions"] == SYSTEM
        assert sent["store"] is False
        assert len(h.upstream.last.body) < len(json.dumps(body)) / 2
        assert RESPONSES.validate(RESPONSES.decode(sent)) == []


def summarizer() -> FunctionProvider:
    def answer(request: CompletionRequest) -> dict[str, Any]:
        return {
            "summary": f"Summary number {len(provider.requests)}.",
            "kept_facts": [],
            "next_steps": [],
        }

    provider = FunctionProvider(answer, name="counting")
    return provider


async def test_summaries_are_reused_each_compaction_pays_only_for_its_new_span() -> None:
    provider = summarizer()
    policy = CompactionConfig(
        token_threshold=3000,
        max_tokens=2000,
        keep_recent_n=3,
        strategies=[{"kind": "summarize"}, {"kind": "truncate"}],
    )
    history = chat_history(6)
    async with running(compaction=policy, summarizer=provider) as h:
        compactions = 0
        for step in range(6, 30):
            await h.client.post(
                "/v1/chat/completions", json=chat(history), headers={"x-compaction-session": "a"}
            )
            sent = h.upstream.last.json()
            assert OPENAI.validate(OPENAI.decode(sent)) == []
            history = [*history, *chat_history(1, start=step)]
            compactions = (await h.status())["sessions"][0]["compactions"]
        assert compactions >= 3, "the conversation should have crossed the budget repeatedly"
        assert len(provider.requests) == compactions  # one summarizer call per compaction
        prompts = [r.messages[-1].text for r in provider.requests]
        for k in range(1, len(prompts)):
            # anchored on the previous summary, and without the span it already covered
            assert f"Summary number {k}." in prompts[k]
            assert "payload 0 line" not in prompts[k]
        first_span = [p for p in prompts[0].split("\n") if "payload 1 line 5'" in p]
        assert first_span, "the first summary covered the first turns"


async def test_concurrent_sessions_never_share_state() -> None:
    def conversation(name: str, turns: int) -> dict[str, Any]:
        messages = chat_history(turns)
        messages[1] = {"role": "user", "content": f"Task of {name}: fix the tests."}
        for m in messages:
            if m["role"] == "tool":
                m["content"] = m["content"].replace("payload", f"payload-of-{name}")
        return chat(messages)

    names = [f"s{i}" for i in range(6)]
    async with running(compaction=POLICY) as h:
        for turns in (2, 8, 9):
            results = await asyncio.gather(
                *(
                    h.client.post(
                        "/v1/chat/completions",
                        json=conversation(n, turns + i),
                        headers={"x-compaction-session": n},
                    )
                    for i, n in enumerate(names)
                )
            )
            assert all(r.status_code == 200 for r in results)
        assert len(h.upstream.seen) == 18
        compacted = 0
        for seen in h.upstream.seen:
            text = seen.body.decode()
            owners = {n for n in names if f"Task of {n}:" in text or f"payload-of-{n} " in text}
            assert len(owners) == 1, owners
            compacted += "masked" in text
        assert compacted >= 6
        status = await h.status()
        assert {s["id"] for s in status["sessions"]} == set(names)
        assert all(s["requests"] == 3 for s in status["sessions"])
        for name in names:
            log = next(s["log"] for s in status["sessions"] if s["id"] == name)
            texts = " ".join(m.text for _, m in h.store.messages(log))
            assert {n for n in names if f"Task of {n}:" in texts} == {name}


async def test_hash_identifies_a_session_without_a_header() -> None:
    async with running(compaction=POLICY) as h:
        history = chat_history(2)
        await h.client.post("/v1/chat/completions", json=chat(history))
        await h.client.post(
            "/v1/chat/completions", json=chat([*history, *chat_history(1, start=2)])
        )
        other = chat_history(2)
        other[1] = {"role": "user", "content": "A different task."}
        await h.client.post("/v1/chat/completions", json=chat(other))
        sessions = (await h.status())["sessions"]
        assert sorted(s["requests"] for s in sessions) == [1, 2]
        assert all(s["id"].startswith("h-") for s in sessions)


async def test_rewritten_history_starts_a_branch_and_keeps_the_original() -> None:
    history = chat_history(12)
    async with running(compaction=POLICY) as h:
        headers = {"x-compaction-session": "edit-me"}
        await h.client.post("/v1/chat/completions", json=chat(history), headers=headers)
        edited = [*history[:-1], {"role": "user", "content": "Actually, stop and explain."}]
        response = await h.client.post("/v1/chat/completions", json=chat(edited), headers=headers)
        assert response.status_code == 200
        sent = h.upstream.last.json()
        assert sent["messages"][-1]["content"] == "Actually, stop and explain."
        assert OPENAI.validate(OPENAI.decode(sent)) == []
        session = (await h.status())["sessions"][0]
        assert session["branches"] == 2
        assert session["log"].startswith("edit-me.")
        # the original branch is untouched and the next request extending it goes there
        follow = [
            *history,
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "go"},
        ]
        await h.client.post("/v1/chat/completions", json=chat(follow), headers=headers)
        session = (await h.status())["sessions"][0]
        assert session["branches"] == 2
        assert session["log"] == "edit-me.nokey"  # the session of requests without a key
        assert h.upstream.last.json()["messages"][-1] == {"role": "user", "content": "go"}


async def test_running_token_count_matches_a_full_count() -> None:
    from compaction.compactor import Compactor

    never = CompactionConfig(token_threshold=10_000_000)
    history = chat_history(2)
    async with running(compaction=never) as h:
        for turn in range(5):
            tools = (
                TOOLS
                if turn < 3
                else [
                    *TOOLS,
                    {**TOOLS[0], "function": {**TOOLS[0]["function"], "name": "write_file"}},
                ]
            )
            body = {"model": "gpt-4o", "messages": history, "tools": tools}
            await h.client.post("/v1/chat/completions", json=body)
            expected = Compactor(never).count(OPENAI.decode(body))
            assert (await h.status())["sessions"][0]["last_tokens_before"] == expected
            history = [*history, *chat_history(turn + 1, start=2 + turn)]


async def test_requests_handled_in_the_worker_pool_go_upstream_as_inline_ones_do() -> None:
    sent: dict[int, list[bytes]] = {}
    for threshold in (10**9, 1):  # everything inline, then everything in the pool
        history = chat_history(12)
        async with running(compaction=POLICY, offload_bytes=threshold, recall_tool=True) as h:
            for step in range(12, 16):
                history = [*history, *chat_history(1, start=step)]
                response = await h.client.post(
                    "/v1/chat/completions",
                    json=chat(history),
                    headers={"x-compaction-session": "p"},
                )
                assert response.status_code == 200
            sent[threshold] = [seen.body for seen in h.upstream.seen]
            assert (await h.status())["sessions"][0]["compactions"] >= 1
    assert sent[1] == sent[10**9]
