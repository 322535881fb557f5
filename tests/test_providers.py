"""The SDK adapters, driven through the real `openai` and `anthropic` SDK code paths.

Each test hands the SDK an `httpx2.Client` over a `MockTransport` that answers like the
real server would (SSE streams, error bodies, headers) and records what the SDK sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx2
import pytest

from compaction.exceptions import (
    AuthenticationError,
    BadResponseError,
    ContextOverflowError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    UnsupportedError,
)
from compaction.messages import Message, SummaryPart
from compaction.providers import (
    AnthropicProvider,
    CompletionRequest,
    OpenAIProvider,
    OutputSchema,
    Provider,
    provider_deadline,
)
from compaction.providers import errors as provider_errors

SCHEMA = OutputSchema(
    name="summary",
    schema={
        "type": "object",
        "properties": {"summary": {"type": "string"}, "kept_facts": {"type": "array"}},
        "required": ["summary", "kept_facts"],
    },
    description="The summary of the span.",
)

MESSAGES = (
    Message.text_message("system", "You summarize transcripts.", pinned=True),
    Message.text_message("user", "Summarize: the build failed twice, then passed."),
)


def request(**kwargs: Any) -> CompletionRequest:
    return CompletionRequest(messages=MESSAGES, **kwargs)


@pytest.fixture(autouse=True)
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


# ------------------------------------------------------------------------- fake upstream

Reply = httpx2.Response | Exception


class Upstream:
    """A scripted HTTP server: answers each request with the next reply, records requests."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def __call__(self, req: httpx2.Request) -> httpx2.Response:
        self.requests.append(req)
        if not self.replies:
            raise AssertionError(f"unexpected request {len(self.requests)}: {req.url}")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    @property
    def bodies(self) -> list[Any]:
        return [json.loads(r.content) for r in self.requests]


def sse(events: Sequence[tuple[str | None, object]]) -> bytes:
    out = []
    for name, data in events:
        if name is not None:
            out.append(f"event: {name}\n")
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append(f"data: {payload}\n\n")
    return "".join(out).encode()


def stream_response(events: Sequence[tuple[str | None, object]]) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(events))


def error_response(
    status: int, body: object, headers: dict[str, str] | None = None
) -> httpx2.Response:
    return httpx2.Response(status, json=body, headers=headers)


class BrokenStream(httpx2.SyncByteStream):
    """A body that sends some bytes, then fails like a connection that went quiet."""

    def __init__(self, first: bytes, error: Exception) -> None:
        self.first = first
        self.error = error

    def __iter__(self) -> Iterator[bytes]:
        yield self.first
        raise self.error


def broken_stream(first: bytes, error: Exception) -> httpx2.Response:
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, stream=BrokenStream(first, error)
    )


def causes(error: BaseException) -> list[BaseException]:
    """The exceptions `error` was raised from, nearest first."""
    chain = []
    while error.__cause__ is not None:
        error = error.__cause__
        chain.append(error)
    return chain


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# --------------------------------------------------------------------- OpenAI streams


def chunk(
    content: str | None = None,
    *,
    finish: str | None = None,
    model: str = "gpt-test-2024",
    **delta: Any,
) -> tuple[None, dict[str, Any]]:
    if content is not None:
        delta["content"] = content
    return None, {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def usage_chunk(prompt: int, completion: int) -> tuple[None, dict[str, Any]]:
    return None, {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-test-2024",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


DONE: tuple[None, str] = (None, "[DONE]")


def openai_text_stream(*parts: str, prompt: int = 31, completion: int = 9) -> httpx2.Response:
    events: list[tuple[str | None, object]] = [chunk("", role="assistant")]
    events += [chunk(p) for p in parts]
    events += [chunk(finish="stop"), usage_chunk(prompt, completion), DONE]
    return stream_response(events)


def openai_provider(upstream: Upstream, **kwargs: Any) -> OpenAIProvider:
    kwargs.setdefault("api_key", "sk-test")
    kwargs.setdefault("sleep", Sleeps())
    return OpenAIProvider("gpt-test", http_client=upstream.client(), **kwargs)


def test_openai_collects_streamed_text_usage_and_model() -> None:
    upstream = Upstream(openai_text_stream("The build ", "failed twice", ", then passed."))
    provider = openai_provider(upstream)

    completion = provider.complete(request(max_output_tokens=300, temperature=0.2))

    assert completion.text == "The build failed twice, then passed."
    assert completion.model == "gpt-test-2024"
    assert completion.finish_reason == "stop"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (31, 9)
    assert completion.usage.requests == 1
    assert completion.data is None
    assert completion.elapsed_ms > 0
    (sent,) = upstream.requests
    assert str(sent.url) == "https://api.openai.com/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert upstream.bodies[0] == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You summarize transcripts."},
            {"role": "user", "content": "Summarize: the build failed twice, then passed."},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        # OpenAI's own endpoint gets the parameter reasoning models accept.
        "max_completion_tokens": 300,
        "temperature": 0.2,
    }


def test_openai_compatible_server_gets_max_tokens_and_a_placeholder_key() -> None:
    upstream = Upstream(openai_text_stream("ok"))
    provider = OpenAIProvider(
        "gemma-3-270m",
        base_url="http://127.0.0.1:8080/v1",
        http_client=upstream.client(),
    )

    provider.complete(request(model="other-model", max_output_tokens=64))

    (sent,) = upstream.requests
    assert str(sent.url) == "http://127.0.0.1:8080/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer not-needed"
    body = upstream.bodies[0]
    assert body["model"] == "other-model"
    assert body["max_tokens"] == 64
    assert "max_completion_tokens" not in body


def test_openai_summary_messages_are_sent_as_plain_text() -> None:
    upstream = Upstream(openai_text_stream("ok"))
    summary = Message("user", (SummaryPart("[compacted: 4 messages → 20 chars]\nearlier"),))

    openai_provider(upstream).complete(CompletionRequest(messages=(*MESSAGES, summary)))

    assert upstream.bodies[0]["messages"][-1] == {
        "role": "user",
        "content": "[compacted: 4 messages → 20 chars]\nearlier",
    }


def test_openai_structured_output_sends_json_schema_and_parses_the_answer() -> None:
    answer = {"summary": "Build fixed.", "kept_facts": ["tests pass"]}
    text = json.dumps(answer)
    upstream = Upstream(
        stream_response(
            [
                chunk(text[:10]),
                chunk(text[10:25]),
                chunk(text[25:], finish="stop"),
                usage_chunk(50, 12),
                DONE,
            ]
        )
    )

    completion = openai_provider(upstream).complete(request(output_schema=SCHEMA))

    assert completion.data == answer
    assert completion.text == text
    assert upstream.bodies[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "summary",
            "schema": dict(SCHEMA.schema),
            "strict": True,
            "description": "The summary of the span.",
        },
    }


def test_openai_structured_answer_that_is_not_json_is_a_bad_response() -> None:
    upstream = Upstream(
        stream_response([chunk('{"summary": "Build fi', finish="length"), usage_chunk(9, 9), DONE])
    )

    with pytest.raises(BadResponseError, match=r"not valid JSON \(cut off"):
        openai_provider(upstream).complete(request(output_schema=SCHEMA))


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens. However, "
                    "your messages resulted in 130412 tokens. Please reduce the length of the "
                    "messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            id="openai",
        ),
        pytest.param(
            {
                "error": {
                    "code": 400,
                    "message": "request (4476 tokens) exceeds the available context size "
                    "(4096 tokens), try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 4476,
                    "n_ctx": 4096,
                }
            },
            id="llama.cpp",
        ),
        pytest.param(
            {
                "error": {
                    "message": "This model's maximum context length is 2048 tokens. However, "
                    "you requested 2600 tokens (2344 in the messages, 256 in the completion). "
                    "Please reduce the length of the messages or completion.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            id="llama-cpp-python",
        ),
    ],
)
def test_openai_context_overflow_is_translated_and_not_retried(body: object) -> None:
    upstream = Upstream(error_response(400, body))
    sleeps = Sleeps()

    with pytest.raises(ContextOverflowError) as caught:
        openai_provider(upstream, sleep=sleeps).complete(request())

    assert caught.value.status == 400
    assert caught.value.provider == "openai"
    assert str(caught.value).startswith("openai: HTTP 400")
    assert isinstance(caught.value.__cause__, Exception)
    assert len(upstream.requests) == 1
    assert sleeps == []


def test_openai_401_is_an_authentication_error() -> None:
    upstream = Upstream(
        error_response(
            401,
            {
                "error": {
                    "message": "Incorrect API key provided: sk-test. You can find your API key "
                    "at https://platform.openai.com/account/api-keys.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            },
        )
    )

    with pytest.raises(AuthenticationError, match="Incorrect API key") as caught:
        openai_provider(upstream).complete(request())

    assert caught.value.status == 401
    assert len(upstream.requests) == 1


def test_openai_429_is_retried_after_the_wait_the_server_asked_for() -> None:
    rate_limited = error_response(
        429,
        {"error": {"message": "Rate limit reached for requests", "type": "requests"}},
        headers={"retry-after": "2"},
    )
    upstream = Upstream(rate_limited, openai_text_stream("done"))
    sleeps = Sleeps()

    completion = openai_provider(upstream, sleep=sleeps).complete(request())

    assert completion.text == "done"
    assert sleeps == [2.0]
    assert len(upstream.requests) == 2


def test_openai_429_gives_up_after_max_retries_with_backoff() -> None:
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}
    upstream = Upstream(*(error_response(429, body) for _ in range(3)))
    sleeps = Sleeps()

    with pytest.raises(RateLimitError) as caught:
        openai_provider(upstream, sleep=sleeps, max_retries=2).complete(request())

    assert caught.value.status == 429
    assert len(upstream.requests) == 3
    # Backoff with jitter: half of each ceiling (0.5 s, then 1 s) is fixed, half random.
    assert len(sleeps) == 2
    assert 0.25 <= sleeps[0] <= 0.5
    assert 0.5 <= sleeps[1] <= 1.0


def test_openai_sdk_retries_are_off_even_for_a_client_passed_in() -> None:
    import openai

    upstream = Upstream(error_response(500, {"error": {"message": "boom", "type": "server_error"}}))
    client = openai.OpenAI(api_key="sk-test", http_client=upstream.client(), max_retries=5)
    provider = OpenAIProvider("gpt-test", client=client, max_retries=0)

    with pytest.raises(ServerError) as caught:
        provider.complete(request())

    assert caught.value.status == 500
    assert caught.value.retryable
    assert len(upstream.requests) == 1


def test_openai_error_chunk_inside_a_200_stream_is_translated() -> None:
    upstream = Upstream(
        stream_response(
            [
                chunk("Partial answer"),
                (
                    None,
                    {
                        "id": "gen-1",
                        "object": "chat.completion.chunk",
                        "created": 1_700_000_000,
                        "model": "gpt-test-2024",
                        "error": {"code": "server_error", "message": "Provider disconnected"},
                        "choices": [
                            {"index": 0, "delta": {"content": ""}, "finish_reason": "error"}
                        ],
                    },
                ),
                DONE,
            ]
        )
    )

    with pytest.raises(ServerError, match="Provider disconnected") as caught:
        openai_provider(upstream, max_retries=0).complete(request())

    assert caught.value.status == 200
    assert "inside a 200 stream" in str(caught.value)


def test_openai_error_in_stream_is_retried_like_any_server_error() -> None:
    failing = stream_response(
        [(None, {"error": {"message": "upstream overloaded", "type": "server_error"}})]
    )
    upstream = Upstream(failing, openai_text_stream("second time lucky"))

    completion = openai_provider(upstream).complete(request())

    assert completion.text == "second time lucky"
    assert len(upstream.requests) == 2


def test_openai_flat_vllm_error_chunk_with_overflow_wording_is_an_overflow() -> None:
    # vLLM writes its stream errors as a bare ErrorResponse, which the SDK lets through.
    upstream = Upstream(
        stream_response(
            [
                (
                    None,
                    {
                        "object": "error",
                        "message": "This model's maximum context length is 4096 tokens. "
                        "However, you requested 5000 tokens (4000 in the messages, 1000 in the "
                        "completion). Please reduce the length of the messages or completion.",
                        "type": "BadRequestError",
                        "param": None,
                        "code": 400,
                    },
                ),
                DONE,
            ]
        )
    )

    with pytest.raises(ContextOverflowError) as caught:
        openai_provider(upstream).complete(request())

    assert caught.value.status == 200
    assert len(upstream.requests) == 1


def test_openai_empty_answer_is_a_bad_response() -> None:
    upstream = Upstream(
        stream_response(
            [chunk("", role="assistant"), chunk(finish="stop"), usage_chunk(5, 0), DONE]
        )
    )

    with pytest.raises(BadResponseError, match="empty answer"):
        openai_provider(upstream).complete(request())
    assert len(upstream.requests) == 1


def test_openai_refusal_is_a_bad_response() -> None:
    upstream = Upstream(
        stream_response([chunk(refusal="I can't help with that."), chunk(finish="stop"), DONE])
    )

    with pytest.raises(BadResponseError, match="refused: I can't help"):
        openai_provider(upstream).complete(request(output_schema=SCHEMA))


@pytest.mark.parametrize(
    ("status", "body"),
    [
        pytest.param(
            400,
            {
                "error": {
                    "message": "Invalid parameter: 'response_format' of type 'json_schema' is "
                    "not supported with this model.",
                    "type": "invalid_request_error",
                    "param": "response_format",
                    "code": None,
                }
            },
            id="openai-400",
        ),
        pytest.param(
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "response_format", "type"],
                        "msg": "Input should be 'text' or 'json_object'",
                        "input": "json_schema",
                    }
                ]
            },
            id="fastapi-422",
        ),
        pytest.param(
            500,
            {
                "error": {
                    "code": 500,
                    "message": 'response_format type must be one of "text" or "json_object", '
                    "but got: json_schema",
                    "type": "server_error",
                }
            },
            id="llama-server-500",
        ),
    ],
)
def test_openai_rejected_response_format_is_unsupported(status: int, body: object) -> None:
    upstream = Upstream(error_response(status, body))

    with pytest.raises(UnsupportedError, match="structured output rejected") as caught:
        openai_provider(upstream).complete(request(output_schema=SCHEMA))

    assert caught.value.status == status
    assert len(upstream.requests) == 1


def test_openai_other_400_on_a_structured_request_is_not_unsupported() -> None:
    body = {
        "error": {
            "message": "Invalid value for 'temperature': must be at most 2.",
            "type": "invalid_request_error",
            "param": "temperature",
        }
    }
    upstream = Upstream(error_response(400, body))

    with pytest.raises(ProviderError) as caught:
        openai_provider(upstream).complete(request(output_schema=SCHEMA, temperature=9.0))

    assert type(caught.value) is ProviderError
    assert not caught.value.retryable
    assert caught.value.status == 400


def test_openai_timeout_before_the_answer_is_retried_then_raised() -> None:
    upstream = Upstream(httpx2.ReadTimeout("slow"), httpx2.ReadTimeout("slow"))

    with pytest.raises(ProviderTimeoutError) as caught:
        openai_provider(upstream, max_retries=1).complete(request())

    assert caught.value.provider == "openai"
    assert len(upstream.requests) == 2


def test_openai_timeout_in_the_middle_of_the_stream_is_a_timeout() -> None:
    first = sse([chunk("The build")])
    upstream = Upstream(broken_stream(first, httpx2.ReadTimeout("idle")))

    with pytest.raises(ProviderTimeoutError):
        openai_provider(upstream, max_retries=0).complete(request())


def test_openai_connection_failure_is_a_retryable_server_error() -> None:
    upstream = Upstream(httpx2.ConnectError("connection refused"))

    with pytest.raises(ServerError, match="connection failed") as caught:
        openai_provider(upstream, max_retries=0).complete(request())

    assert caught.value.retryable
    assert caught.value.status is None


def test_openai_without_a_key_fails_when_built() -> None:
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        OpenAIProvider("gpt-test")


def test_openai_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    upstream = Upstream(openai_text_stream("ok"))

    OpenAIProvider("gpt-test", http_client=upstream.client()).complete(request())

    assert upstream.requests[0].headers["authorization"] == "Bearer sk-from-env"


# ------------------------------------------------------------------ Anthropic streams


def message_start(input_tokens: int = 25, **usage: int) -> tuple[str, dict[str, Any]]:
    return "message_start", {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-20250101",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1, **usage},
        },
    }


def block_start(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {
        "type": "content_block_start",
        "index": index,
        "content_block": block,
    }


def block_delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> tuple[str, dict[str, Any]]:
    return "content_block_stop", {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str, output_tokens: int) -> tuple[str, dict[str, Any]]:
    return "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }


MESSAGE_STOP = ("message_stop", {"type": "message_stop"})
PING = ("ping", {"type": "ping"})


def anthropic_text_stream(*parts: str, **usage: int) -> httpx2.Response:
    return stream_response(
        [
            message_start(**usage),
            block_start(0, {"type": "text", "text": ""}),
            PING,
            *(block_delta(0, {"type": "text_delta", "text": p}) for p in parts),
            block_stop(0),
            message_delta("end_turn", 14),
            MESSAGE_STOP,
        ]
    )


def anthropic_provider(upstream: Upstream, **kwargs: Any) -> AnthropicProvider:
    kwargs.setdefault("api_key", "sk-ant-test")
    kwargs.setdefault("sleep", Sleeps())
    return AnthropicProvider("claude-test", http_client=upstream.client(), **kwargs)


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def test_anthropic_collects_streamed_text_usage_and_stop_reason() -> None:
    upstream = Upstream(
        anthropic_text_stream(
            "The build failed",
            " twice.",
            cache_read_input_tokens=100,
            cache_creation_input_tokens=7,
        )
    )

    completion = anthropic_provider(upstream).complete(request(temperature=0.0))

    assert completion.text == "The build failed twice."
    assert completion.model == "claude-test-20250101"
    assert completion.finish_reason == "end_turn"
    # Cached prompt tokens are input tokens too: 25 + 100 read + 7 written.
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (132, 14)
    (sent,) = upstream.requests
    assert str(sent.url) == "https://api.anthropic.com/v1/messages"
    # SDK 2.x sends the key as a bearer token.
    assert sent.headers["authorization"] == "Bearer sk-ant-test"
    assert upstream.bodies[0] == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "You summarize transcripts.",
        "messages": [
            {"role": "user", "content": "Summarize: the build failed twice, then passed."}
        ],
        # No sampling parameters: API version 2026-10-21 refuses them.
        "stream": True,
    }


def test_anthropic_structured_output_is_a_forced_tool_call() -> None:
    answer = {"summary": "Build fixed.", "kept_facts": ["tests pass", "CI green"]}
    raw = json.dumps(answer)
    upstream = Upstream(
        stream_response(
            [
                message_start(),
                block_start(
                    0, {"type": "tool_use", "id": "toolu_01", "name": "summary", "input": {}}
                ),
                block_delta(0, {"type": "input_json_delta", "partial_json": ""}),
                block_delta(0, {"type": "input_json_delta", "partial_json": raw[:17]}),
                block_delta(0, {"type": "input_json_delta", "partial_json": raw[17:]}),
                block_stop(0),
                message_delta("tool_use", 40),
                MESSAGE_STOP,
            ]
        )
    )

    completion = anthropic_provider(upstream).complete(
        request(output_schema=SCHEMA, max_output_tokens=512)
    )

    assert completion.data == answer
    assert json.loads(completion.text) == answer
    assert completion.finish_reason == "tool_use"
    body = upstream.bodies[0]
    assert body["max_tokens"] == 512
    assert body["tools"] == [
        {
            "name": "summary",
            "description": "The summary of the span.",
            "input_schema": dict(SCHEMA.schema),
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "summary"}


def test_anthropic_structured_answer_without_the_tool_call_is_a_bad_response() -> None:
    upstream = Upstream(anthropic_text_stream("I would rather write prose."))

    with pytest.raises(BadResponseError, match="no `summary` tool call"):
        anthropic_provider(upstream).complete(request(output_schema=SCHEMA))


def test_anthropic_tool_input_cut_off_at_max_tokens_is_a_bad_response() -> None:
    upstream = Upstream(
        stream_response(
            [
                message_start(),
                block_start(
                    0, {"type": "tool_use", "id": "toolu_01", "name": "summary", "input": {}}
                ),
                block_delta(0, {"type": "input_json_delta", "partial_json": '{"summary": "Bui'}),
                block_stop(0),
                message_delta("max_tokens", 512),
                MESSAGE_STOP,
            ]
        )
    )

    with pytest.raises(BadResponseError, match="cut off at max_tokens"):
        anthropic_provider(upstream).complete(request(output_schema=SCHEMA))


def test_anthropic_prompt_too_long_is_a_context_overflow() -> None:
    body = anthropic_error(
        "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"
    )
    upstream = Upstream(error_response(400, body))

    with pytest.raises(ContextOverflowError, match="prompt is too long") as caught:
        anthropic_provider(upstream).complete(request())

    assert caught.value.status == 400
    assert caught.value.provider == "anthropic"
    assert len(upstream.requests) == 1


@pytest.mark.parametrize(
    ("status", "kind"), [(401, "authentication_error"), (403, "permission_error")]
)
def test_anthropic_auth_failures(status: int, kind: str) -> None:
    upstream = Upstream(error_response(status, anthropic_error(kind, "invalid x-api-key")))

    with pytest.raises(AuthenticationError) as caught:
        anthropic_provider(upstream).complete(request())

    assert caught.value.status == status
    assert len(upstream.requests) == 1


def test_anthropic_529_overloaded_is_retried() -> None:
    overloaded = error_response(529, anthropic_error("overloaded_error", "Overloaded"))
    upstream = Upstream(overloaded, anthropic_text_stream("recovered"))
    sleeps = Sleeps()

    completion = anthropic_provider(upstream, sleep=sleeps).complete(request())

    assert completion.text == "recovered"
    assert len(upstream.requests) == 2
    assert len(sleeps) == 1


def test_anthropic_529_overloaded_is_a_server_error_when_retries_run_out() -> None:
    overloaded = error_response(529, anthropic_error("overloaded_error", "Overloaded"))
    upstream = Upstream(overloaded)

    with pytest.raises(ServerError, match="Overloaded") as caught:
        anthropic_provider(upstream, max_retries=0).complete(request())

    assert caught.value.status == 529
    assert len(upstream.requests) == 1


def test_anthropic_429_honours_retry_after() -> None:
    limited = error_response(
        429,
        anthropic_error("rate_limit_error", "Number of request tokens has exceeded your limit"),
        headers={"retry-after": "7"},
    )
    upstream = Upstream(limited, anthropic_text_stream("ok"))
    sleeps = Sleeps()

    anthropic_provider(upstream, sleep=sleeps).complete(request())

    assert sleeps == [7.0]


def test_anthropic_error_event_inside_a_200_stream_is_translated() -> None:
    upstream = Upstream(
        stream_response(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "text_delta", "text": "The build"}),
                ("error", anthropic_error("overloaded_error", "Overloaded")),
            ]
        )
    )

    with pytest.raises(ServerError, match="Overloaded") as caught:
        anthropic_provider(upstream, max_retries=0).complete(request())

    assert caught.value.status == 200
    assert "overloaded_error" in str(caught.value)


def test_anthropic_error_event_is_retried_like_any_server_error() -> None:
    failing = stream_response(
        [message_start(), ("error", anthropic_error("api_error", "Internal"))]
    )
    upstream = Upstream(failing, anthropic_text_stream("fine now"))

    assert anthropic_provider(upstream).complete(request()).text == "fine now"
    assert len(upstream.requests) == 2


def test_anthropic_empty_answer_is_a_bad_response() -> None:
    upstream = Upstream(
        stream_response([message_start(), message_delta("end_turn", 0), MESSAGE_STOP])
    )

    with pytest.raises(BadResponseError, match="empty answer"):
        anthropic_provider(upstream).complete(request())


def test_anthropic_refusal_is_a_bad_response() -> None:
    upstream = Upstream(
        stream_response([message_start(), message_delta("refusal", 3), MESSAGE_STOP])
    )

    with pytest.raises(BadResponseError, match="refused"):
        anthropic_provider(upstream).complete(request())


def test_anthropic_rejected_tools_are_unsupported() -> None:
    body = anthropic_error("invalid_request_error", "tools: Extra inputs are not permitted")
    upstream = Upstream(error_response(400, body))

    with pytest.raises(UnsupportedError):
        anthropic_provider(upstream).complete(request(output_schema=SCHEMA))


def test_anthropic_timeout_in_the_middle_of_the_stream_is_a_timeout() -> None:
    first = sse([message_start(), block_start(0, {"type": "text", "text": ""})])
    upstream = Upstream(broken_stream(first, httpx2.ReadTimeout("idle")))

    with pytest.raises(ProviderTimeoutError) as caught:
        anthropic_provider(upstream, max_retries=0).complete(request())

    # The SDK may wrap the transport's error in its own (2.17 does): the original stays chained.
    assert any(isinstance(cause, httpx2.ReadTimeout) for cause in causes(caught.value))


def test_anthropic_local_server_gets_a_placeholder_key() -> None:
    upstream = Upstream(anthropic_text_stream("ok"))
    provider = AnthropicProvider(
        "local", base_url="http://127.0.0.1:9000", http_client=upstream.client()
    )

    provider.complete(request())

    assert str(upstream.requests[0].url) == "http://127.0.0.1:9000/v1/messages"
    assert upstream.requests[0].headers["authorization"] == "Bearer not-needed"


def test_anthropic_without_a_key_fails_when_built() -> None:
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider("claude-test")


# ------------------------------------------------------------------------ both adapters


@pytest.mark.parametrize(
    ("build", "extra"),
    [
        (lambda: OpenAIProvider("m", api_key="k"), "openai"),
        (lambda: AnthropicProvider("m", api_key="k"), "anthropic"),
    ],
)
def test_missing_sdk_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, build: Callable[[], Provider], extra: str
) -> None:
    def no_such_module(name: str) -> Any:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(provider_errors, "import_module", no_such_module)

    with pytest.raises(ImportError, match=rf"pip install 'llm-compaction\[{extra}\]'") as caught:
        build()

    assert isinstance(caught.value.__cause__, ModuleNotFoundError)


def test_adapters_satisfy_the_provider_protocol() -> None:
    upstream = Upstream()
    openai_side = openai_provider(upstream)
    anthropic_side = anthropic_provider(upstream)

    assert isinstance(openai_side, Provider)
    assert isinstance(anthropic_side, Provider)
    assert (openai_side.name, anthropic_side.name) == ("openai", "anthropic")
    assert upstream.requests == []


# ------------------------------------------------------------------ undecodable answers

# Bytes a broken server or proxy may answer with: not UTF-8, or not JSON where JSON belongs.
UNDECODABLE = [
    pytest.param(b"data: \xff\xfe{}\n\n", id="sse-not-utf8"),
    pytest.param(b"\xff\xfe\x00garbage", id="body-not-utf8"),
    pytest.param(b'data: {"choices": [\n\n', id="sse-not-json"),
]


@pytest.mark.parametrize("body", UNDECODABLE)
@pytest.mark.parametrize(
    ("make", "content_type", "options"),
    [
        pytest.param(openai_provider, "text/event-stream", {}, id="openai-stream"),
        pytest.param(openai_provider, "application/json", {"stream": False}, id="openai-whole"),
        pytest.param(anthropic_provider, "text/event-stream", {}, id="anthropic"),
    ],
)
def test_an_answer_that_cannot_be_decoded_is_a_bad_response(
    make: Callable[..., Provider], content_type: str, options: dict[str, Any], body: bytes
) -> None:
    upstream = Upstream(httpx2.Response(200, headers={"content-type": content_type}, content=body))

    with pytest.raises(BadResponseError) as caught:
        make(upstream, max_retries=0, **options).complete(request())

    assert caught.value.provider in ("openai", "anthropic")
    assert not caught.value.retryable


# -------------------------------------------------------------------------- deadlines


def sent_timeouts(upstream: Upstream) -> list[float]:
    """The read timeout the SDK gave each request it sent."""
    return [r.extensions["timeout"]["read"] for r in upstream.requests]


@pytest.mark.parametrize(
    ("make", "reply"),
    [
        pytest.param(openai_provider, openai_text_stream, id="openai"),
        pytest.param(anthropic_provider, anthropic_text_stream, id="anthropic"),
    ],
)
def test_each_try_waits_no_longer_than_the_deadline_leaves(
    make: Callable[..., Provider], reply: Callable[..., httpx2.Response]
) -> None:
    upstream = Upstream(reply("Fine."), reply("Fine."))
    provider = make(upstream, timeout=30.0)
    provider.complete(request())
    with provider_deadline(2.0):
        provider.complete(request())
    assert sent_timeouts(upstream)[0] == 30.0
    assert 0 < sent_timeouts(upstream)[1] <= 2.0


def test_no_retry_is_started_that_the_deadline_cannot_wait_for() -> None:
    busy = error_response(503, {"error": {"message": "busy"}}, {"retry-after": "5"})
    upstream = Upstream(busy, busy, busy)
    sleeps = Sleeps()
    with provider_deadline(1.0), pytest.raises(ServerError):
        openai_provider(upstream, max_retries=2, sleep=sleeps).complete(request())
    assert len(upstream.requests) == 1
    assert sleeps == []


def test_a_call_after_the_deadline_is_not_sent() -> None:
    upstream = Upstream()
    with provider_deadline(0.0), pytest.raises(ProviderTimeoutError, match="deadline") as caught:
        openai_provider(upstream).complete(request())
    assert not caught.value.retryable
    assert upstream.requests == []
