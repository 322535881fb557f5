"""A context-length error upstream: reading the window it states, the target the retry
compacts to, and the retry itself fitting that window with the reply's tokens."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from compaction.config import CompactionConfig
from compaction.dialects import ANTHROPIC, OPENAI, Dialect
from compaction.proxy.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES
from compaction.proxy.errors import StatedWindow, stated_window
from compaction.proxy.sessions import overflow_target
from compaction.tokens import ConversationCounter

from .conftest import anthropic_body, running
from .test_compaction import chat, chat_history

NEVER = CompactionConfig(token_threshold=10_000_000)  # only the upstream's error compacts


def openai_error(message: str, **extra: Any) -> bytes:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return json.dumps({"error": {**error, **extra}}).encode()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            openai_error(
                "This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9000 tokens. Please reduce the length of the messages.",
                code="context_length_exceeded",
            ),
            StatedWindow(8192, 9000),
            id="openai",
        ),
        pytest.param(
            openai_error(
                "This model's maximum context length is 4096 tokens. However, you requested "
                "5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the "
                "length of the messages or completion."
            ),
            StatedWindow(4096, 4000),
            id="openai-with-completion",
        ),
        pytest.param(
            openai_error(
                "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's "
                "maximum context length is 4096 tokens and your request has 3500 input tokens "
                "(1000 > 4096 - 3500)."
            ),
            StatedWindow(4096, 3500),
            id="vllm",
        ),
        pytest.param(
            openai_error("Requested tokens (5000) exceed context window of 4096"),
            StatedWindow(4096, 5000),
            id="llama-cpp-python",
        ),
        pytest.param(
            json.dumps(
                {
                    "error": {
                        "code": 400,
                        "message": "the request exceeds the available context size, try "
                        "increasing it",
                        "type": "exceed_context_size_error",
                        "n_prompt_tokens": 5000,
                        "n_ctx": 4096,
                    }
                }
            ).encode(),
            StatedWindow(4096, 5000),
            id="llama.cpp-server",
        ),
        pytest.param(
            json.dumps(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "prompt is too long: 210000 tokens > 200000 maximum",
                    },
                }
            ).encode(),
            StatedWindow(200000, 210000),
            id="anthropic",
        ),
        pytest.param(
            json.dumps(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "input length and `max_tokens` exceed context limit: "
                        "197000 + 8192 > 200000, decrease input length or `max_tokens` and "
                        "try again",
                    },
                }
            ).encode(),
            StatedWindow(200000, 197000),
            id="anthropic-with-max-tokens",
        ),
        pytest.param(
            # `>` escaped the way Go's encoding/json writes it.
            b'{"error":{"message":"prompt is too long: 5000 tokens \\u003e 4096 maximum"}}',
            StatedWindow(4096, 5000),
            id="escaped",
        ),
        pytest.param(
            openai_error(
                "Prompt contains 40000 tokens and 0 draft tokens, too large for model with "
                "32768 maximum context length"
            ),
            StatedWindow(32768, 40000),
            id="mistral",
        ),
        pytest.param(
            b"This model's maximum context length is 2048 tokens.",
            StatedWindow(2048, None),
            id="plain-text",
        ),
        pytest.param(
            openai_error(
                "Your input exceeds the context window of this model. Please adjust your "
                "input and try again.",
                code="context_length_exceeded",
            ),
            None,
            id="no-window-stated",
        ),
    ],
)
def test_stated_window_reads_each_upstreams_wording(
    body: bytes, expected: StatedWindow | None
) -> None:
    assert stated_window(body) == expected


def test_overflow_target_without_a_stated_window_is_half_of_what_was_sent() -> None:
    assert overflow_target(3000, None, 500) == 1500


def test_overflow_target_fits_the_stated_window_less_the_reply_and_a_margin() -> None:
    # Window 2000, reply 200: 1800 left, 10% of it kept as a margin.
    assert overflow_target(6000, StatedWindow(2000), 200) == 1620
    # A window more than twice what was sent: half of it is already tighter.
    assert overflow_target(3000, StatedWindow(100_000), 200) == 1500


def test_overflow_target_scales_to_our_count_when_the_upstream_counts_more() -> None:
    # The upstream counted 8000 where we counted 6000: its window of 4000 is 3000 of ours.
    assert overflow_target(6000, StatedWindow(4000, 8000), 0) == 2700
    # An upstream that counts fewer than we do gets no more room than its window.
    assert overflow_target(10_000, StatedWindow(4000, 8000), 0) == 3600


def test_overflow_target_is_none_when_the_reply_alone_fills_the_window() -> None:
    assert overflow_target(6000, StatedWindow(4096), 4096) is None


def test_max_output_tokens_reads_each_apis_field() -> None:
    assert OPENAI_CHAT.max_output_tokens({"max_completion_tokens": 300, "max_tokens": 9}) == 300
    assert OPENAI_CHAT.max_output_tokens({"max_tokens": 9}) == 9
    assert OPENAI_CHAT.max_output_tokens({"max_output_tokens": 9}) == 0
    assert OPENAI_RESPONSES.max_output_tokens({"max_output_tokens": 64}) == 64
    assert ANTHROPIC_MESSAGES.max_output_tokens({"max_tokens": 1024}) == 1024
    assert ANTHROPIC_MESSAGES.max_output_tokens({"max_tokens": None}) == 0


def tokens(dialect: Dialect, body: dict[str, Any]) -> int:
    """A request's tokens, counted as the proxy counts them."""
    provider = "anthropic" if dialect is ANTHROPIC else "openai"
    counter = ConversationCounter.for_model(body["model"], provider=provider)
    return counter.count(dialect.decode(body)).total


def refusing_over(limit: int, dialect: Dialect) -> Any:
    """An upstream with a `limit`-token window that states it, and the prompt's size, when it
    refuses a request (counting the prompt and the reply's tokens against it, as OpenAI
    does)."""

    def handler(request: httpx.Request, data: dict[str, Any]) -> httpx.Response:
        prompt = tokens(dialect, data)
        reply = data.get("max_tokens", 0)
        if prompt + reply <= limit:
            return httpx.Response(200, json={"prompt": prompt})
        if dialect is ANTHROPIC:
            message = f"prompt is too long: {prompt} tokens > {limit} maximum"
            return httpx.Response(
                400,
                json={
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": message},
                },
            )
        message = (
            f"This model's maximum context length is {limit} tokens. However, you requested "
            f"{prompt + reply} tokens ({prompt} in the messages, {reply} in the completion)."
        )
        return httpx.Response(400, content=openai_error(message, code="context_length_exceeded"))

    return handler


@pytest.mark.anyio
async def test_retry_fits_the_stated_window_with_the_replys_tokens() -> None:
    limit, reply = 2000, 300
    body = chat(chat_history(12), max_tokens=reply)
    sent = tokens(OPENAI, body)
    assert sent > 3 * limit  # half of it would not fit either
    async with running(handler=refusing_over(limit, OPENAI), compaction=NEVER) as h:
        response = await h.client.post("/v1/chat/completions", json=body)
        assert response.status_code == 200
        assert len(h.upstream.seen) == 2
        retried = h.upstream.seen[1].json()
        assert tokens(OPENAI, retried) + reply <= limit
        assert retried["messages"][-1] == body["messages"][-1]
        assert retried["max_tokens"] == reply
        receipt = (await h.status())["sessions"][0]["last_receipt"]
        assert receipt["target_tokens"] == int((limit - reply) * 0.9)


@pytest.mark.anyio
async def test_anthropic_retry_fits_the_window_its_error_states() -> None:
    limit = 1200
    body = anthropic_body(8, max_tokens=100)
    assert tokens(ANTHROPIC, body) > 3 * limit
    async with running(handler=refusing_over(limit, ANTHROPIC), compaction=NEVER) as h:
        response = await h.client.post("/v1/messages", json=body)
        assert response.status_code == 200
        retried = h.upstream.seen[1].json()
        assert tokens(ANTHROPIC, retried) <= limit - 100


@pytest.mark.anyio
async def test_no_retry_when_the_reply_alone_fills_the_stated_window() -> None:
    body = chat(chat_history(12), max_tokens=4000)
    async with running(handler=refusing_over(2000, OPENAI), compaction=NEVER) as h:
        response = await h.client.post("/v1/chat/completions", json=body)
        assert response.status_code == 400
        assert "maximum context length is 2000 tokens" in response.json()["error"]["message"]
        assert len(h.upstream.seen) == 1
        assert (await h.status())["sessions"][0]["compactions"] == 0
