"""`AnthropicProvider`: the Messages API through the official `anthropic` SDK.

Leading system messages become the top-level `system`; the rest are encoded by the
Anthropic dialect. A request's `temperature` is not sent: the API version SDK 2.x speaks
(2026-10-21) refuses every sampling parameter. Every call streams (`stream=True`) and the
events are collected into one `Completion`: text (each `text_delta` also handed to the
request's `on_text`), tool calls, thinking, usage (input tokens, cache reads and writes
included, and output tokens) and `stop_reason`. Structured output is a forced tool whose
`input_schema` is the schema: the model's `tool_use` input (streamed as `input_json_delta`
events) becomes `Completion.data`, and its JSON text `Completion.text`.

Tools are sent as `{name, description, input_schema}`; `tool_choice` "auto", "required"
and "none" become `{"type": "auto"}`, `{"type": "any"}` and `{"type": "none"}` (tools stay
declared under "none", since a transcript holding `tool_use` blocks needs them). A
`tool_use` block becomes a `ToolCallPart` whose arguments are its concatenated
`partial_json` (`{}` when the tool takes none). `thinking` blocks (with the signature from
their `signature_delta`) and `redacted_thinking` blocks become `ReasoningPart`s decoded by
the Anthropic dialect, so that they are sent back exactly as received; a thinking block
without a signature is kept but never sent back, since the API would refuse it.

An `error` event inside a 200 stream (Anthropic sends `overloaded_error` that way) is raised
by the SDK as a status error carrying status 200; it is translated from the error type it
names. Retries happen in `compaction.providers.retry` only: the SDK client is built (or
copied) with `max_retries=0`.

Wire conversion is in pure functions (`messages_request_body`, `completion_from_events`)
that need no client. This module must never import the SDK at import time: it is loaded when
a provider is built, with an install hint when it is missing.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from compaction.dialects import ANTHROPIC
from compaction.exceptions import (
    AuthenticationError,
    BadResponseError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
)
from compaction.messages import Conversation, ReasoningPart, ToolCallPart
from compaction.providers.base import (
    Completion,
    CompletionRequest,
    OutputSchema,
    ToolChoice,
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
    from anthropic import Anthropic

__all__ = [
    "AnthropicProvider",
    "completion_from_events",
    "messages_request_body",
    "messages_tool",
]

PROVIDER: Final = "anthropic"
STRUCTURED_WORDS: Final = ("tool_choice", "tools", "input_schema")
NO_KEY: Final = "not-needed"


class AnthropicProvider(RetryingAdapter):
    """The Messages API on the official `anthropic` SDK.

    `api_key` defaults to `ANTHROPIC_API_KEY` (or the SDK's `ANTHROPIC_AUTH_TOKEN`); with a
    `base_url` (or `ANTHROPIC_BASE_URL`) and no key, a placeholder is sent. The API requires
    `max_tokens` on every call: a request's `max_output_tokens`, else `max_output_tokens`
    here. `max_retries` counts our retries (the SDK's own are switched off); `sleep` and
    `rng` drive the waits between them. `http_client` must be an `httpx2.Client`.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        max_output_tokens: int = 4096,
        client: Anthropic | None = None,
        http_client: httpx2.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        import_sdk("anthropic", extra="anthropic")
        import anthropic

        self.model = model
        self.max_output_tokens = max_output_tokens
        self._init_retries(max_retries, sleep, rng, timeout)
        if client is None:
            client = anthropic.Anthropic(
                api_key=_resolve_key(api_key, base_url),
                base_url=base_url,
                timeout=timeout,
                max_retries=0,
                http_client=http_client,
            )
        self._client = client.with_options(max_retries=0)

    @property
    def name(self) -> str:
        return PROVIDER

    def _complete_once(self, request: CompletionRequest, timeout: float | None) -> Completion:
        import anthropic

        body = messages_request_body(
            request, model=self.model, max_output_tokens=self.max_output_tokens
        )
        structured = request.output_schema is not None
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}

        def call() -> Completion:
            stream = self._client.messages.create(**body, **options)
            with stream:
                return completion_from_events(
                    (event.to_dict() for event in stream),
                    model=request.model or self.model,
                    output_schema=request.output_schema,
                    on_text=request.on_text,
                )

        # The SDK's stream reader lets httpx2's read errors through unwrapped: `_translated`
        # handles those too.
        return self._translated(
            call,
            provider=PROVIDER,
            sdk_error=anthropic.AnthropicError,
            translate=lambda e: _translate(e, structured=structured),
        )


def _resolve_key(api_key: str | None, base_url: str | None) -> str | None:
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if key:
        return key
    if os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        return None  # the SDK sends it as a bearer token
    if base_url or os.environ.get("ANTHROPIC_BASE_URL"):
        return NO_KEY
    raise AuthenticationError(
        "no API key: pass api_key= or set ANTHROPIC_API_KEY (or give a base_url for a local "
        "server)",
        provider=PROVIDER,
    )


def _translate(error: Exception, *, structured: bool) -> ProviderError:
    import anthropic

    if isinstance(error, anthropic.APITimeoutError):
        return ProviderTimeoutError(f"timed out: {error}", provider=PROVIDER)
    if isinstance(error, anthropic.APIConnectionError):
        return ServerError(f"connection failed: {error}", provider=PROVIDER)
    if isinstance(error, anthropic.APIStatusError):
        # An `error` event inside a stream is raised with the stream's own status, 200.
        in_stream = error.status_code < 400
        return error_from_response(
            PROVIDER,
            status=error.status_code,
            details=error_details(error.body, error.message),
            structured_words=STRUCTURED_WORDS if structured else (),
            in_stream=in_stream,
            retry_after=None if in_stream else retry_after_from_headers(error.response.headers),
        )
    if isinstance(error, anthropic.APIError):
        return BadResponseError(f"{type(error).__name__}: {error}", provider=PROVIDER)
    return ProviderError(f"{type(error).__name__}: {error}", provider=PROVIDER)


# ------------------------------------------------------------------------------ wire


def messages_request_body(
    request: CompletionRequest, *, model: str, max_output_tokens: int = 4096
) -> dict[str, Any]:
    """The keyword arguments of `messages.create` (and so the JSON body) for a request:
    always streamed; the request's tools (and `tool_choice`, when set); a forced answer tool
    when a schema is asked for, which then overrides `tool_choice`; no `temperature`."""
    payload = ANTHROPIC.encode(Conversation(tuple(request.messages)))
    body: dict[str, Any] = {
        "model": request.model or model,
        "max_tokens": request.max_output_tokens or max_output_tokens,
        "messages": payload["messages"],
        "stream": True,
    }
    if "system" in payload:
        body["system"] = payload["system"]
    # `temperature` is not sent: from API version 2026-10-21 (sent by SDK 2.x, which no longer
    # has the parameter) any sampling parameter, at any value, is a 400.
    tools = [messages_tool(tool) for tool in request.tools]
    if request.output_schema is not None:
        tools.append(answer_tool(request.output_schema))
        body["tool_choice"] = {"type": "tool", "name": request.output_schema.name}
    elif tools and request.tool_choice is not None:
        body["tool_choice"] = {"type": _TOOL_CHOICE[request.tool_choice]}
    if tools:
        body["tools"] = tools
    return body


_TOOL_CHOICE: Final[Mapping[ToolChoice, str]] = {"auto": "auto", "required": "any", "none": "none"}


def messages_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool as the Messages API declares it."""
    declared: dict[str, Any] = {"name": tool.name}
    if tool.description:
        declared["description"] = tool.description
    declared["input_schema"] = dict(tool.parameters)
    return declared


def answer_tool(schema: OutputSchema) -> dict[str, Any]:
    """The tool the model is forced to call, whose input is the structured answer."""
    description = schema.description or f"Give the answer as a `{schema.name}` object."
    return {"name": schema.name, "description": description, "input_schema": dict(schema.schema)}


@dataclass
class _Block:
    kind: str
    name: str | None = None
    id: str | None = None
    texts: list[str] = field(default_factory=list)
    json_parts: list[str] = field(default_factory=list)
    initial_input: Any = None
    signature: str | None = None
    data: str | None = None

    def arguments(self) -> str:
        """A tool_use block's input as JSON text: the streamed pieces, else the input that
        arrived whole in content_block_start, else `{}`."""
        raw = "".join(self.json_parts)
        if raw.strip():
            return raw
        if self.initial_input:
            return json.dumps(self.initial_input, ensure_ascii=False, separators=(",", ":"))
        return "{}"

    def reasoning(self) -> ReasoningPart:
        if self.kind == "redacted_thinking":
            wire: dict[str, Any] = {"type": "redacted_thinking", "data": self.data or ""}
        elif self.signature is None:
            # Unsigned thinking would be refused if sent back: kept, without replay data.
            return ReasoningPart("".join(self.texts))
        else:
            wire = {"type": "thinking", "thinking": "".join(self.texts)}
            wire["signature"] = self.signature
        # Decoded by the dialect, so that it is encoded back exactly as it came.
        decoded = ANTHROPIC.decode({"messages": [{"role": "assistant", "content": [wire]}]})
        for part in decoded.messages[0].parts:
            if isinstance(part, ReasoningPart):
                return part
        return ReasoningPart("".join(self.texts))


@dataclass
class _Tokens:
    input: int = 0
    cache_creation: int = 0
    cache_read: int = 0
    output: int = 0

    def update(self, reported: Mapping[str, Any]) -> None:
        # message_delta repeats the counts cumulatively; a missing or null field keeps
        # the value message_start gave.
        for key, attr in (
            ("input_tokens", "input"),
            ("cache_creation_input_tokens", "cache_creation"),
            ("cache_read_input_tokens", "cache_read"),
            ("output_tokens", "output"),
        ):
            value = reported.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, attr, value)

    def usage(self) -> Usage:
        return Usage(
            input_tokens=self.input + self.cache_creation + self.cache_read,
            output_tokens=self.output,
            requests=1,
        )


def completion_from_events(
    events: Iterable[Mapping[str, Any]],
    *,
    model: str,
    output_schema: OutputSchema | None = None,
    provider: str = PROVIDER,
    on_text: Callable[[str], None] | None = None,
) -> Completion:
    """Collect Messages stream events (as dicts) into one `Completion`, handing each
    non-empty piece of text to `on_text` as it arrives.

    Raises the translated error for an `error` event, `BadResponseError` for a refusal, an
    answer with neither text nor tool calls, or (with `output_schema`) a missing or
    malformed answer tool call.
    """
    blocks: dict[int, _Block] = {}
    tokens = _Tokens()
    stop_reason: str | None = None
    answered_by: str | None = None
    for event in events:
        kind = event.get("type")
        if kind == "error":
            raise error_from_response(
                provider, status=200, details=error_details(dict(event)), in_stream=True
            )
        if kind == "message_start":
            message = event.get("message") or {}
            if isinstance(message.get("model"), str) and message["model"]:
                answered_by = message["model"]
            if isinstance(message.get("usage"), Mapping):
                tokens.update(message["usage"])
        elif kind == "content_block_start":
            started = event.get("content_block") or {}
            block = _Block(
                kind=str(started.get("type")),
                name=started.get("name"),
                id=started.get("id"),
                initial_input=started.get("input"),
                signature=started.get("signature") or None,
                data=started.get("data"),
            )
            opening = started.get("thinking" if block.kind == "thinking" else "text")
            if isinstance(opening, str) and opening:
                block.texts.append(opening)
                if block.kind == "text" and on_text is not None:
                    on_text(opening)
            blocks[int(event.get("index", len(blocks)))] = block
        elif kind == "content_block_delta":
            target = blocks.get(int(event.get("index", -1)))
            delta = event.get("delta") or {}
            if target is None:
                continue
            change = delta.get("type")
            if change == "text_delta":
                piece = str(delta.get("text", ""))
                target.texts.append(piece)
                if piece and on_text is not None:
                    on_text(piece)
            elif change == "input_json_delta":
                target.json_parts.append(str(delta.get("partial_json", "")))
            elif change == "thinking_delta":
                target.texts.append(str(delta.get("thinking", "")))
            elif change == "signature_delta":
                target.signature = str(delta.get("signature", "")) or None
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason"):
                stop_reason = str(delta["stop_reason"])
            if isinstance(event.get("usage"), Mapping):
                tokens.update(event["usage"])
    if stop_reason == "refusal":
        raise BadResponseError("refused (stop_reason=refusal)", provider=provider, status=200)
    ordered = [blocks[i] for i in sorted(blocks)]
    answer_tool_name = output_schema.name if output_schema is not None else None
    tool_calls = tuple(
        ToolCallPart(b.id or f"toolu_{n}", b.name or "", b.arguments())
        for n, b in enumerate(ordered)
        if b.kind == "tool_use" and b.name != answer_tool_name
    )
    if output_schema is not None:
        data = _tool_input(ordered, output_schema.name, provider, stop_reason)
        text = json.dumps(data, ensure_ascii=False)
    else:
        data = None
        text = "".join(t for b in ordered if b.kind == "text" for t in b.texts)
        if not text.strip() and not tool_calls:
            raise empty_answer(provider, f"stop_reason={stop_reason}")
    return Completion(
        text=text,
        model=answered_by or model,
        usage=tokens.usage(),
        data=data,
        finish_reason=stop_reason,
        tool_calls=tool_calls,
        reasoning=tuple(
            b.reasoning() for b in ordered if b.kind in ("thinking", "redacted_thinking")
        ),
    )


def _tool_input(blocks: list[_Block], name: str, provider: str, stop_reason: str | None) -> Any:
    calls = [b for b in blocks if b.kind == "tool_use"]
    chosen = next((b for b in calls if b.name == name), calls[0] if calls else None)
    if chosen is None:
        raise BadResponseError(
            f"no `{name}` tool call in the answer (stop_reason={stop_reason})",
            provider=provider,
            status=200,
        )
    raw = "".join(chosen.json_parts)
    if not raw.strip():
        # Without deltas the input arrived whole in content_block_start (or is empty).
        return chosen.initial_input if chosen.initial_input is not None else {}
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as e:
        cut = " (cut off at max_tokens)" if stop_reason == "max_tokens" else ""
        raise BadResponseError(
            f"tool input is not valid JSON{cut}: {e}", provider=provider, status=200
        ) from e
