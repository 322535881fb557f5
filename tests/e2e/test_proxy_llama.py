"""`compaction serve` in front of a real model server: llama.cpp's OpenAI-compatible server on
Gemma 3 270M (see conftest.py), driven by the official `openai` SDK.

A 270M base model says little of use; these tests pin down the protocol through the proxy: a
few turns, streamed and not, through at least one compaction, every answer a well-formed
completion, and a context-length error from the server turned into a compacted retry.
Every request is bounded (few tokens, a timeout, no SDK retries).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from .conftest import LlamaServer, RunningProxy

pytestmark = pytest.mark.e2e

MAX_REPLY_TOKENS = 12
THRESHOLD = 550
MAX_TOKENS = 420  # room for the system prompt, the pinned first question and the live one
SYSTEM = "You are a helpful assistant. Answer in one short sentence."


def _question(turn: int) -> str:
    facts = " ".join(f"Item {turn}-{k} weighs {k * 7 + turn} grams." for k in range(16))
    return f"{facts} Which item of list {turn} is the heaviest?"


def _compactions(proxy: RunningProxy) -> int:
    total = 0.0
    for line in proxy.metrics().splitlines():
        if line.startswith("compaction_proxy_compactions_total"):
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


@pytest.fixture
def proxy(llama_server: LlamaServer, start_proxy: Any) -> RunningProxy:
    running: RunningProxy = start_proxy(
        llama_server.base_url, "--token-threshold", str(THRESHOLD), "--max-tokens", str(MAX_TOKENS)
    )
    return running


@pytest.fixture
def client(proxy: RunningProxy) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=proxy.openai_base_url,
        api_key="not-needed",
        max_retries=0,
        timeout=120.0,
        default_headers={"X-Compaction-Session": "llama-turns"},
    ) as c:
        yield c


def test_turns_through_the_proxy_compact_and_stay_well_formed(
    proxy: RunningProxy, client: openai.OpenAI, llama_server: LlamaServer
) -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(4):
        history.append({"role": "user", "content": _question(turn)})
        if turn % 2:
            chunks = list(
                client.chat.completions.create(
                    model=llama_server.model,
                    messages=history,
                    max_tokens=MAX_REPLY_TOKENS,
                    temperature=0,
                    stream=True,
                )
            )
            choices = [c.choices[0] for c in chunks if c.choices]
            assert choices[-1].finish_reason in {"stop", "length"}
            assert {c.model for c in chunks} == {llama_server.model}
            text = "".join(c.delta.content or "" for c in choices)
        else:
            reply = client.chat.completions.create(
                model=llama_server.model,
                messages=history,
                max_tokens=MAX_REPLY_TOKENS,
                temperature=0,
            )
            assert reply.choices[0].finish_reason in {"stop", "length"}
            assert reply.usage is not None
            # What the model read: after the first turns, the compacted view, within budget.
            assert reply.usage.prompt_tokens > 0
            text = reply.choices[0].message.content or ""
        assert text.strip()
        history.append({"role": "assistant", "content": text})
    assert _compactions(proxy) >= 1


def test_context_length_error_from_llama_is_compacted_and_retried(
    llama_server: LlamaServer, start_proxy: Any
) -> None:
    # The proxy's own budget is far above the server's window: the server's 400
    # context_length_exceeded is what makes it compact.
    proxy = start_proxy(
        llama_server.base_url, "--token-threshold", "100000", "--max-tokens", "60000"
    )
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(10):
        history += [
            {"role": "user", "content": f"Part {turn}: " + "word " * 450},
            {"role": "assistant", "content": f"Noted part {turn}."},
        ]
    history.append({"role": "user", "content": "How many parts did I send?"})
    with openai.OpenAI(
        base_url=proxy.openai_base_url, api_key="not-needed", max_retries=0, timeout=180.0
    ) as client:
        reply = client.chat.completions.create(
            model=llama_server.model, messages=history, max_tokens=MAX_REPLY_TOKENS, temperature=0
        )
    assert reply.choices[0].finish_reason in {"stop", "length"}
    assert reply.usage is not None
    assert reply.usage.prompt_tokens <= llama_server.n_ctx - MAX_REPLY_TOKENS
    assert _compactions(proxy) >= 1


def test_the_proxy_summarizes_with_the_upstream_model(
    llama_server: LlamaServer, start_proxy: Any, tmp_path: Any
) -> None:
    # The policy comes from a workflow file, as agents use: mask, then an LLM summary (the
    # summarizer is the upstream itself), truncate last.
    config = tmp_path / "policy.yaml"
    config.write_text(
        "model: unused\n"
        "compact:\n"
        f"  token_threshold: {THRESHOLD}\n"
        f"  max_tokens: {MAX_TOKENS}\n"
        "  keep_recent_n: 2\n"
        "  summary_max_tokens: 48\n"
        "  strategies: [{kind: mask}, {kind: summarize}, {kind: truncate}]\n"
        "agents: [{id: proxy}]\n"
    )
    proxy = start_proxy(
        llama_server.base_url, "--config", str(config), "--summarizer-model", llama_server.model
    )
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    with openai.OpenAI(
        base_url=proxy.openai_base_url,
        api_key="not-needed",
        max_retries=0,
        timeout=180.0,
        default_headers={"X-Compaction-Session": "llama-summaries"},
    ) as client:
        for turn in range(3):
            history.append({"role": "user", "content": _question(turn)})
            reply = client.chat.completions.create(
                model=llama_server.model,
                messages=history,
                max_tokens=MAX_REPLY_TOKENS,
                temperature=0,
            )
            assert reply.choices[0].finish_reason in {"stop", "length"}
            history.append({"role": "assistant", "content": reply.choices[0].message.content})
    (session,) = [s for s in proxy.status()["sessions"] if s["id"] == "llama-summaries"]
    assert session["compactions"] >= 1
    receipt = session["last_receipt"]
    assert receipt["summarizer"]["calls"] >= 1, receipt
    assert any(step["strategy"] == "summarize" for step in receipt["steps"])
