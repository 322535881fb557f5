"""Requests shaped as real agents send them (Claude Code's, recorded from version 2.1.332):
system turns inside `messages`, a `cache_control` breakpoint moved to the newest message on
every request, a trailing system turn sent as blocks once and as a string after; and a client
history that breaks a rule of its own. The proxy must keep one session and one branch, reuse
its compactions, keep the client's markers where the client put them this time, and never
refuse what the upstream would take."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction.config import CompactionConfig
from compaction.dialects import ANTHROPIC
from compaction.proxy.apis import comparable
from compaction.store import open_store

from .conftest import running

pytestmark = pytest.mark.anyio

POLICY = CompactionConfig(token_threshold=3000, max_tokens=1800, keep_recent_n=4)
MARK = {"type": "ephemeral"}
SYSTEM = [
    {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332;"},
    {"type": "text", "text": "You are a coding agent.", "cache_control": MARK},
]
TASK = "Follow the trail of module files and report the code at its end."
REMINDER = "<system-reminder>\nPrimary working directory: /work\n</system-reminder>"


def _result(step: int) -> str:
    lines = (f"def helper_{step}_{n}(): return 'payload {step} line {n}'" for n in range(30))
    return "\n".join(lines)


def claude_code_request(steps: int, *, system_turns: bool = True) -> dict[str, Any]:
    """Request number `steps` of a Claude Code run: the task, a system turn after each user
    turn, `steps` read calls answered; the marker only on the newest message, the newest
    system turn as blocks (the older ones as strings, as Claude Code re-sends them). Without
    `system_turns` (models that get none), the marker is on the newest tool result."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": TASK}]},
    ]
    if system_turns:
        messages.append({"role": "system", "content": REMINDER})
    for i in range(steps):
        messages += [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i:02d}",
                        "name": "Read",
                        "input": {"file_path": f"/work/mod_{i}.py"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{i:02d}", "content": _result(i)}
                ],
            },
        ]
        if system_turns:
            reminder = f"<system-reminder>step {i} read</system-reminder>"
            messages.append({"role": "system", "content": reminder})
    last = messages[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": MARK}]
    else:
        last["content"][-1]["cache_control"] = MARK
    return {
        "model": "claude-sonnet-5",
        "system": SYSTEM,
        "max_tokens": 1024,
        "stream": False,
        "messages": messages,
    }


def _marked(body: dict[str, Any]) -> list[int]:
    return [
        i
        for i, m in enumerate(body["messages"])
        if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"])
    ]


async def test_system_turns_inside_messages_are_compacted_around_not_refused() -> None:
    body = claude_code_request(12)
    async with running(compaction=POLICY) as h:
        response = await h.client.post("/v1/messages", json=body)
        assert response.status_code == 200, response.text
        sent = h.upstream.last.json()
        assert len(h.upstream.last.body) < len(json.dumps(body)) * 0.7
        assert ANTHROPIC.validate(ANTHROPIC.decode(sent)) == []
        assert sent["system"] == SYSTEM
        # the first user turn and the newest turns verbatim, the system turns kept in place
        assert sent["messages"][0] == body["messages"][0]
        assert sent["messages"][1] == body["messages"][1]
        assert sent["messages"][-3:] == body["messages"][-3:]
        kept = [m["content"] for m in sent["messages"] if m["role"] == "system"]
        assert REMINDER in kept
        assert (await h.status())["sessions"][0]["compactions"] == 1


async def test_moving_cache_markers_keep_one_session_one_branch_and_reuse_compactions() -> None:
    async with running(compaction=POLICY) as h:
        for steps in range(1, 15):
            body = claude_code_request(steps)
            response = await h.client.post("/v1/messages", json=body)
            assert response.status_code == 200, response.text
            sent = h.upstream.last.json()
            assert ANTHROPIC.validate(ANTHROPIC.decode(sent)) == []
            # the client's marker where the client put it this time, and nowhere else
            assert _marked(sent) == [len(sent["messages"]) - 1]
            assert sent["messages"][-1] == body["messages"][-1]
            assert sent["messages"][0] == body["messages"][0]
        sessions = (await h.status())["sessions"]
        assert len(sessions) == 1
        assert sessions[0]["branches"] == 1
        assert sessions[0]["requests"] == 14
        # each compaction starts from the previous view: a few, not one per request
        assert 1 <= sessions[0]["compactions"] <= 5


async def test_markers_of_compacted_messages_do_not_pile_up() -> None:
    # Without system turns the marker sits on tool results, which the compaction masks or
    # summarizes: the marker each had when it was the newest must not come back with it.
    async with running(compaction=POLICY) as h:
        for steps in range(1, 15):
            body = claude_code_request(steps, system_turns=False)
            response = await h.client.post("/v1/messages", json=body)
            assert response.status_code == 200, response.text
            sent = h.upstream.last.json()
            assert _marked(sent) == [len(sent["messages"]) - 1], f"request {steps}"
            assert json.dumps(sent["messages"]).count("cache_control") == 1
        assert (await h.status())["sessions"][0]["compactions"] >= 2


async def test_the_compacted_prefix_stays_byte_stable_between_requests() -> None:
    async with running(compaction=POLICY) as h:
        sent: list[dict[str, Any]] = []
        compactions: list[int] = []
        for steps in range(1, 15):
            response = await h.client.post("/v1/messages", json=claude_code_request(steps))
            assert response.status_code == 200
            sent.append(h.upstream.last.json())
            compactions.append((await h.status())["sessions"][0]["compactions"])
        stable = 0
        for i in range(1, len(sent)):
            if compactions[i] != compactions[i - 1]:
                continue
            before, after = sent[i - 1]["messages"], sent[i]["messages"]
            # everything but the previous newest message (whose marker moved, and which the
            # client now writes as a string) is unchanged
            assert after[: len(before) - 1] == before[:-1]
            assert comparable(after[len(before) - 1]) == comparable(before[-1])
            stable += 1
        assert stable >= 8


async def test_a_client_history_that_breaks_a_rule_is_forwarded_as_it_came() -> None:
    body = claude_code_request(12)
    # a tool_result answering no call: the client's own mistake, not ours
    body["messages"][3]["content"][0]["tool_use_id"] = "toolu_unknown"
    await _forwarded_as_it_came(body)


async def _forwarded_as_it_came(body: dict[str, Any]) -> None:
    """The body reaches the upstream byte for byte, counted as an invalid history."""
    raw = json.dumps(body).encode()
    async with running(compaction=POLICY) as h:
        response = await h.client.post(
            "/v1/messages", content=raw, headers={"content-type": "application/json"}
        )
        assert response.status_code == 200, response.text
        assert h.upstream.last.body == raw
        metrics = (await h.client.get("/metrics")).text
        assert 'compaction_proxy_invalid_history_total{endpoint="anthropic"} 1' in metrics


async def test_a_restarted_proxy_resumes_the_session_despite_moved_markers() -> None:
    store = open_store(":memory:")
    async with running(compaction=POLICY, store=store) as h:
        for steps in range(1, 8):
            response = await h.client.post("/v1/messages", json=claude_code_request(steps))
            assert response.status_code == 200
        before = (await h.status())["sessions"][0]
        assert before["compactions"] >= 1
        last_sent = h.upstream.last.json()
    async with running(compaction=POLICY, store=store) as h:  # a new process, the same store
        response = await h.client.post("/v1/messages", json=claude_code_request(8))
        assert response.status_code == 200
        sent = h.upstream.last.json()
        # the compacted view read back from the store, continued: no branch, no new compaction
        assert sent["messages"][: len(last_sent["messages"]) - 1] == last_sent["messages"][:-1]
        assert _marked(sent) == [len(sent["messages"]) - 1]
        for steps in range(9, 12):
            response = await h.client.post("/v1/messages", json=claude_code_request(steps))
            assert response.status_code == 200
            assert _marked(h.upstream.last.json()) == [len(h.upstream.last.json()["messages"]) - 1]
        session = (await h.status())["sessions"][0]
        assert session["branches"] == 1
        assert session["compactions"] <= 2


@pytest.mark.parametrize("steps", [1, 12], ids=["under-budget", "over-budget"])
async def test_a_history_the_proxy_cannot_read_goes_upstream_as_it_came(steps: int) -> None:
    body = claude_code_request(steps)
    body["messages"].insert(1, {"role": "critic", "content": "a role of a future API"})
    await _forwarded_as_it_came(body)
