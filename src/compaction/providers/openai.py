"""`OpenAIProvider`: Chat Completions through the official `openai` SDK, for OpenAI and any
OpenAI-compatible server (vLLM, Ollama, llama.cpp server, llama-cpp-python, OpenRouter …).

Every call streams (`stream=True`, usage requested in the last chunk) and the deltas are
collected into one `Completion`, so a long summary never meets an idle timeout (with
`stream=False`, for servers that cannot stream some answers — llama-cpp-python's
function-calling formats refuse to stream automatic tool choice — the whole answer is read
as one chunk); each text
delta is also handed to the request's `on_text`. Structured output is asked for with
`response_format` `json_schema` (strict) and the collected text is parsed as JSON into
`Completion.data`.

Tools are sent as `function` tools (with `tool_choice` when tools are given). Streamed
`delta.tool_calls` fragments are joined by their `index`: the id and name come in a call's
first fragment, its arguments in pieces. Reasoning that compatible servers stream as
`reasoning_content` or `reasoning` (llama.cpp, vLLM, DeepSeek …) becomes a `ReasoningPart`
under the key it came in, which the OpenAI dialect sends back the same way.

Errors are translated where they surface, including an error object that arrives as a chunk
of a 200 stream: the SDK raises on chunks shaped `{"error": {...}}`, and this module raises
on vLLM's flat `{"object": "error", "message": ...}` chunks, which the SDK lets through.
Retries happen in `compaction.providers.retry` only: the SDK client is built (or copied)
with `max_retries=0`.

Wire conversion is in pure functions (`chat_messages`, `chat_request_body`,
`completion_from_chunks`) that need no client. This module must never import the SDK at
import time: it is loaded when a provider is built, with an install hint when it is missing.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from compaction.dialects import OPENAI
from compaction.dialects.openai_chat import REASONING_KEY, REASONING_KEYS
from compaction.exceptions import (
    AuthenticationError,
    BadResponseError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
)
from compaction.messages import Conversation, Message, ReasoningPart, ToolCallPart
from compaction.providers.base import (
    Completion,
    CompletionRequest,
    OutputSchema,
    ToolSpec,
    Usage,
)
from compaction.providers.errors import (
    empty_answer,
    error_details,
    error_from_response,
    import_sdk,
    retry_after_from_headers,
)
from compaction.providers.retry import RetryingAdapter

if TYPE_CHECKING:
    import httpx2
    from openai import OpenAI

__all__ = [
    "OpenAIProvider",
    "chat_messages",
    "chat_request_body",
    "chat_tool",
    "completion_from_chunks",
    "response_as_chunk",
]

PROVIDER: Final = "openai"
# Words in an error that mean the server refused the structured-output parameter.
STRUCTURED_WORDS: Final = ("response_format", "json_schema", "json schema", "structured output")
# Servers that need no key still make the SDK insist on one.
NO_KEY: Final = "not-needed"


class OpenAIProvider(RetryingAdapter):
    """Chat Completions on the official `openai` SDK.

    `api_key` defaults to `OPENAI_API_KEY`; with a `base_url` (or `OPENAI_BASE_URL`) and no
    key, a placeholder is sent, since local servers need none. `max_retries` counts our
    retries (the SDK's own are switched off). A `client` you pass is used through a copy with
    `max_retries=0`; `http_client` is handed to the client this provider builds (the SDK is
    built on `httpx2`). `sleep` and `rng` drive the waits between retries.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        client: OpenAI | None = None,
        http_client: httpx2.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        stream: bool = True,
    ) -> None:
        import_sdk("openai", extra="openai")
        import openai

        self.model = model
        self.stream = stream
        self._init_retries(max_retries, sleep, rng, timeout)
        if client is None:
            client = openai.OpenAI(
                api_key=_resolve_key(api_key, base_url),
                base_url=base_url,
                timeout=timeout,
                max_retries=0,
                http_client=http_client,
            )
        self._client = client.with_options(max_retries=0)
        # OpenAI itself wants `max_completion_tokens` (reasoning models refuse `max_tokens`);
        # compatible servers mostly know only `max_tokens`.
        official = self._client.base_url.host.endswith("openai.com")
        self._max_tokens_key = "max_completion_tokens" if official else "max_tokens"

    @property
    def name(self) -> str:
        return PROVIDER

    def _complete_once(self, request: CompletionRequest, timeout: float | None) -> Completion:
        import openai

        body = chat_request_body(
            request, model=self.model, max_tokens_key=self._max_tokens_key, stream=self.stream
        )
        structured = request.output_schema is not None
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}

        def call() -> Completion:
            if not self.stream:
                response = self._client.chat.completions.create(**body, **options)
                return completion_from_chunks(
                    [response_as_chunk(response.to_dict())],
                    model=request.model or self.model,
                    output_schema=request.output_schema,
                    on_text=request.on_text,
                )
            stream = self._client.chat.completions.create(**body, **options)
            with stream:
                return completion_from_chunks(
                    (chunk.to_dict() for chunk in stream),
                    model=request.model or self.model,
                    output_schema=request.output_schema,
                    on_text=request.on_text,
                )

        return self._translated(
            call,
            provider=PROVIDER,
            sdk_error=openai.OpenAIError,
            translate=lambda e: _translate(e, structured=structured),
        )


def _resolve_key(api_key: str | None, base_url: str | None) -> str:
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url or os.environ.get("OPENAI_BASE_URL"):
        return NO_KEY
    raise AuthenticationError(
        "no API key: pass api_key= or set OPENAI_API_KEY (or give a base_url for a local server)",
        provider=PROVIDER,
    )


def _translate(error: Exception, *, structured: bool) -> ProviderError:
    import openai

    words = STRUCTURED_WORDS if structured else ()
    if isinstance(error, openai.APITimeoutError):
        return ProviderTimeoutError(f"timed out: {error}", provider=PROVIDER)
    if isinstance(error, openai.APIConnectionError):
        return ServerError(f"connection failed: {error}", provider=PROVIDER)
    if isinstance(error, openai.APIStatusError):
        return error_from_response(
            PROVIDER,
            status=error.status_code,
            details=error_details(error.body, error.message),
            structured_words=words,
            retry_after=retry_after_from_headers(error.response.headers),
        )
    if isinstance(error, openai.APIError):
        # The SDK raises a bare APIError for an `{"error": ...}` chunk inside a 200 stream.
        return error_from_response(
            PROVIDER,
            status=200,
            details=error_details(error.body, error.message),
            structured_words=words,
            in_stream=True,
        )
    return ProviderError(f"{type(error).__name__}: {error}", provider=PROVIDER)


# ------------------------------------------------------------------------------ wire


def chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Package messages as Chat Completions `messages`, by the OpenAI dialect's encoder."""
    payload = OPENAI.encode(Conversation(tuple(messages)))
    wire: list[dict[str, Any]] = payload["messages"]
    for message in wire:
        # `content: null` beside tool calls is OpenAI's own form, but some compatible servers
        # (llama-cpp-python) only accept a string there; every server accepts "".
        if message.get("role") == "assistant" and message.get("content", "") is None:
            message["content"] = ""
    return wire


def chat_request_body(
    request: CompletionRequest,
    *,
    model: str,
    max_tokens_key: str = "max_tokens",
    stream: bool = True,
) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` (and so the JSON body) for a
    request: streamed with usage (unless `stream` is False); `response_format` when a
    schema is asked for; `tools` (and `tool_choice`, when set) when tools are offered."""
    body: dict[str, Any] = {
        "model": request.model or model,
        "messages": chat_messages(request.messages),
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if request.max_output_tokens is not None:
        body[max_tokens_key] = request.max_output_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.output_schema is not None:
        body["response_format"] = response_format(request.output_schema)
    if request.tools:
        body["tools"] = [chat_tool(tool) for tool in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
    return body


def chat_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool as Chat Completions declares it: a `function` tool."""
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = dict(tool.parameters)
    return {"type": "function", "function": function}


def response_format(schema: OutputSchema) -> dict[str, Any]:
    """`response_format` asking for strict JSON following `schema`."""
    spec: dict[str, Any] = {"name": schema.name, "schema": dict(schema.schema), "strict": True}
    if schema.description:
        spec["description"] = schema.description
    return {"type": "json_schema", "json_schema": spec}


def completion_from_chunks(
    chunks: Iterable[Mapping[str, Any]],
    *,
    model: str,
    output_schema: OutputSchema | None = None,
    provider: str = PROVIDER,
    on_text: Callable[[str], None] | None = None,
) -> Completion:
    """Collect streamed `chat.completion.chunk` objects (as dicts) into one `Completion`,
    handing each non-empty text delta to `on_text` as it arrives.

    Raises the translated error for an error chunk, `BadResponseError` for an answer with
    neither text nor tool calls, a refusal, a content-filter stop, or (with
    `output_schema`) text that is not JSON; an answer of tool calls alone has no `data`.
    """
    texts: list[str] = []
    refusals: list[str] = []
    reasoning: dict[str, list[str]] = {}  # at most one key: the first the server used
    calls: dict[int, _CallFragments] = {}
    finish_reason: str | None = None
    answered_by: str | None = None
    usage = Usage(requests=1)
    for chunk in chunks:
        _raise_if_error_chunk(chunk, provider, structured=output_schema is not None)
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            answered_by = chunk["model"]
        reported = chunk.get("usage")
        if isinstance(reported, Mapping):
            usage = Usage(
                input_tokens=int(reported.get("prompt_tokens") or 0),
                output_tokens=int(reported.get("completion_tokens") or 0),
                requests=1,
            )
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                content = delta.get("content")
                if isinstance(content, str) and content:
                    texts.append(content)
                    if on_text is not None:
                        on_text(content)
                if isinstance(delta.get("refusal"), str):
                    refusals.append(delta["refusal"])
                _add_reasoning(reasoning, delta)
                _add_call_fragments(calls, delta.get("tool_calls"))
            if choice.get("finish_reason"):
                finish_reason = str(choice["finish_reason"])
    text = "".join(texts)
    tool_calls = tuple(calls[i].part() for i in sorted(calls))
    if refusals and not text:
        raise BadResponseError(f"refused: {''.join(refusals)}", provider=provider, status=200)
    if finish_reason == "content_filter":
        raise BadResponseError("stopped by the content filter", provider=provider, status=200)
    if not text.strip() and not tool_calls:
        raise empty_answer(provider, f"finish_reason={finish_reason}")
    # An answer that only calls tools has no structured data to parse (yet).
    structured = output_schema is not None and (text.strip() or not tool_calls)
    data = _parse_json(text, provider, finish_reason) if structured else None
    return Completion(
        text=text,
        model=answered_by or model,
        usage=usage,
        data=data,
        finish_reason=finish_reason,
        tool_calls=tool_calls,
        reasoning=tuple(
            ReasoningPart("".join(pieces), provider_data={REASONING_KEY: key})
            for key, pieces in reasoning.items()
        ),
    )


def response_as_chunk(response: Mapping[str, Any]) -> dict[str, Any]:
    """A whole `chat.completion` as the one chunk that would have carried all of it, so
    one collector serves both: each choice's `message` becomes its `delta`."""
    choices = []
    for choice in response.get("choices") or ():
        if isinstance(choice, Mapping):
            delta = choice.get("message")
            choices.append({**choice, "delta": delta if isinstance(delta, Mapping) else {}})
    return {**response, "choices": choices}


class _CallFragments:
    """One streamed tool call being put together."""

    def __init__(self, position: int) -> None:
        self.position = position
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []

    def add(self, fragment: Mapping[str, Any]) -> None:
        # Some servers repeat the id and name on every fragment: a repeat adds nothing.
        if isinstance(fragment.get("id"), str) and fragment["id"] and not self.id:
            self.id = fragment["id"]
        function = fragment.get("function")
        if not isinstance(function, Mapping):
            return
        name = function.get("name")
        if isinstance(name, str) and name and name != self.name:
            self.name += name
        if isinstance(function.get("arguments"), str):
            self.arguments.append(function["arguments"])

    def part(self) -> ToolCallPart:
        # A server that sends no id still needs calls its results can answer.
        call_id = self.id or f"call_{self.position}"
        arguments = "".join(self.arguments)
        return ToolCallPart(call_id, self.name, arguments if arguments.strip() else "{}")


def _add_reasoning(reasoning: dict[str, list[str]], delta: Mapping[str, Any]) -> None:
    # Some servers send the same reasoning under both keys; the first one seen is kept.
    for key in REASONING_KEYS:
        piece = delta.get(key)
        if isinstance(piece, str) and piece and (not reasoning or key in reasoning):
            reasoning.setdefault(key, []).append(piece)
            return


def _add_call_fragments(calls: dict[int, _CallFragments], fragments: object) -> None:
    if not isinstance(fragments, list):
        return
    for position, fragment in enumerate(fragments):
        if not isinstance(fragment, Mapping):
            continue
        index = fragment.get("index")
        # Servers that send each call whole may leave out the index.
        key = index if isinstance(index, int) else len(calls) + position
        if key not in calls:
            calls[key] = _CallFragments(len(calls))
        calls[key].add(fragment)


def _raise_if_error_chunk(chunk: Mapping[str, Any], provider: str, *, structured: bool) -> None:
    # The SDK already raises on `{"error": {...}}` chunks; this catches the same object
    # arriving by another road (vLLM's flat error chunks, a proxy's), so nothing is
    # mistaken for an empty answer.
    words = STRUCTURED_WORDS if structured else ()
    if isinstance(chunk.get("error"), Mapping):
        details = error_details(chunk)
    elif chunk.get("object") == "error":
        details = error_details(dict(chunk))
    else:
        return
    raise error_from_response(
        provider, status=200, details=details, structured_words=words, in_stream=True
    )


def _parse_json(text: str, provider: str, finish_reason: str | None) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        cut = " (cut off at the output limit)" if finish_reason == "length" else ""
        raise BadResponseError(
            f"structured answer is not valid JSON{cut}: {e}", provider=provider, status=200
        ) from e
