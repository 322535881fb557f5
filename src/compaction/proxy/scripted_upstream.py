"""A deterministic OpenAI- and Anthropic-compatible model server, for end-to-end tests and
benchmarks of the proxy.

    POST /v1/chat/completions   OpenAI Chat Completions, streamed (chunks, `data: [DONE]`) or not
    POST /v1/responses          OpenAI Responses, streamed (response.created … response.completed)
    POST /v1/messages           Anthropic Messages, streamed (message_start … message_stop)
    POST /v1/messages/count_tokens, GET /v1/models (Anthropic's shape when the request carries
                                an `anthropic-version` header, OpenAI's otherwise)
    GET /_requests              every request received (method, path, headers, JSON body), oldest
                                first; DELETE /_requests forgets them
    GET /_config, PUT /_config  the settings below, read or changed while the server runs

The reply is a pure function of the request body: its text states how many messages arrived,
how many tokens they count (with `compaction.tokens`, the proxy's own counter) and a digest of
them (`messages_digest`), and ids and timestamps are derived from the body. So a test can send
what it finds in /_requests straight to this server and expect the very bytes the proxy's
client got, and check from the reply alone what arrived.

Settings (flags of `python -m compaction.proxy.scripted_upstream`, or keys of PUT /_config):
`context_tokens` answers a longer request with the API's own context-length error (OpenAI 400
`context_length_exceeded`, Anthropic 400 "prompt is too long"); `delay_ms` waits before every
text chunk (so a buffering proxy shows in the time to first byte) and, unstreamed, for all of
them; `stream_error_after` ends a 200 stream with the API's error event after that many text
chunks; `reply_words` pads the reply with that many more words (more chunks); `validate`
(on by default) answers a transcript the dialect validators reject with a 400, as the real
APIs do; `trail` (on by default) plays a real agent's model through a trail of files
(`compaction.proxy.scripted_trail`): a request whose latest item starts or continues a trail
is answered with a call of the client's own read or shell tool, the trail's end with its
answer, in the API's tool-call shape, streamed or whole.

This module must never reach anything beyond its own socket, never answer with anything but a
function of the request and the settings, and never be mistaken for a model: it understands
nothing it is sent.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Final, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from compaction.dialects import ANTHROPIC, DIALECTS, OPENAI, Dialect
from compaction.exceptions import CompactionError
from compaction.proxy.scripted_trail import ToolCall, next_move, texts_in
from compaction.tokens import TokenCounter, count_conversation, counter_for_model

Api = Literal["chat", "responses", "messages"]

DEFAULT_MODEL: Final = "scripted-model"
# Fixed timestamps: a reply must depend on nothing but its request.
CREATED: Final = 1_700_000_000
_JSON_SEPARATORS: Final = (",", ":")
# Responses input items count like chat messages: text plus this framing, per item.
_ITEM_OVERHEAD: Final = 4


@dataclass
class UpstreamSettings:
    """What the scripted server does besides answering. Every field can be changed at run time
    through PUT /_config."""

    context_tokens: int | None = None
    delay_ms: float = 0.0
    stream_error_after: int | None = None
    reply_words: int = 0
    validate: bool = True
    trail: bool = True
    max_records: int = 10_000

    def update(self, changes: Mapping[str, Any]) -> None:
        """Apply `changes` (a PUT /_config body); a ValueError names an unknown or bad key."""
        known = {f.name: f for f in fields(self)}
        for key, value in changes.items():
            if key not in known:
                raise ValueError(f"unknown setting {key!r}; expected one of: {', '.join(known)}")
            if key in {"validate", "trail"}:
                if not isinstance(value, bool):
                    raise ValueError(f"{key} must be true or false")
            elif key in {"context_tokens", "stream_error_after"}:
                if value is not None and (not isinstance(value, int) or value < 0):
                    raise ValueError(f"{key} must be a non-negative integer or null")
            elif not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{key} must be a non-negative number")
            setattr(self, key, value)


@dataclass(frozen=True)
class Measure:
    """What arrived in one model request: the numbers the reply reports."""

    messages: int
    tokens: int
    digest: str  # sha256 of the canonical JSON of what the model would read
    body_digest: str  # sha256 of the canonical JSON of the whole body (ids derive from it)


class RejectedRequest(Exception):
    """A request the scripted model refuses, with the API's status and error body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status, body)
        self.status = status
        self.body = body


# -- pure helpers: what a request contains, what the reply says --------------------------------


def canonical_digest(value: Any) -> str:
    """sha256 of `value` as canonical JSON (sorted keys, no spaces): what tests recompute."""
    text = json.dumps(value, sort_keys=True, separators=_JSON_SEPARATORS, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def model_input(api: Api, body: Mapping[str, Any]) -> Any:
    """The part of a request the model reads, as hashed into `messages_digest`."""
    if api == "chat":
        return body.get("messages")
    if api == "messages":
        return {"system": body.get("system"), "messages": body.get("messages")}
    return {"instructions": body.get("instructions"), "input": body.get("input")}


def reply_text(measure: Measure, *, reply_words: int = 0) -> str:
    """The scripted answer: what arrived, in words a test can parse back."""
    text = (
        f"scripted reply: {measure.messages} messages, {measure.tokens} tokens, "
        f"digest {measure.digest[:16]}."
    )
    padding = " ".join(f"w{i}" for i in range(reply_words))
    return f"{text} {padding}" if padding else text


def text_chunks(text: str) -> list[str]:
    """The reply split at spaces, each chunk keeping its trailing space: they join back to it."""
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


# What a Responses request's items hold as text: their content, outputs and calls.
_RESPONSES_TEXT_KEYS: Final = ("text", "content", "output", "arguments", "name")


def _dialect_for(api: Api) -> Dialect | None:
    if api == "chat":
        return OPENAI
    if api == "messages":
        return ANTHROPIC
    # The Responses dialect, where this version of the library has one.
    return DIALECTS.get("responses")


def measure_request(api: Api, body: Mapping[str, Any], *, validate: bool = True) -> Measure:
    """Count and hash a request; `RejectedRequest` (400) when it does not decode or, with
    `validate`, breaks the dialect's rules."""
    model = str(body.get("model") or DEFAULT_MODEL)
    counter = counter_for_model(model, offline=True)
    dialect = _dialect_for(api)
    if dialect is None:
        return _measure_responses_text(body, counter)
    try:
        conversation = dialect.decode(dict(body))
    except CompactionError as e:
        param = "input" if api == "responses" else "messages"
        raise RejectedRequest(400, _error_body(api, f"invalid request: {e}", param)) from e
    if validate:
        violations = dialect.validate(conversation)
        if violations:
            message = "invalid transcript: " + "; ".join(str(v) for v in violations)
            param = "input" if api == "responses" else "messages"
            raise RejectedRequest(400, _error_body(api, message, param))
    provider = "anthropic" if api == "messages" else "openai"
    return Measure(
        messages=len(conversation.messages),
        tokens=count_conversation(conversation, counter, provider=provider).total,
        digest=canonical_digest(model_input(api, body)),
        body_digest=canonical_digest(body),
    )


def _measure_responses_text(body: Mapping[str, Any], counter: TokenCounter) -> Measure:
    """Responses requests without a dialect to read them: their texts, counted."""
    raw = body.get("input")
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise RejectedRequest(400, _openai_error("`input` must be a string or a list", "input"))
    texts = list(texts_in([body.get("instructions"), items], _RESPONSES_TEXT_KEYS))
    return Measure(
        messages=len(items) + (1 if body.get("instructions") else 0),
        tokens=sum(counter.count_text(t) for t in texts) + _ITEM_OVERHEAD * len(items),
        digest=canonical_digest(model_input("responses", body)),
        body_digest=canonical_digest(body),
    )


def _openai_error(
    message: str, param: str | None, *, kind: str = "invalid_request_error", code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _anthropic_error(message: str, *, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _error_body(api: Api, message: str, param: str | None) -> dict[str, Any]:
    return _anthropic_error(message) if api == "messages" else _openai_error(message, param)


def context_length_error(api: Api, tokens: int, limit: int) -> dict[str, Any]:
    """The body each API answers with (status 400) when the prompt exceeds the window."""
    if api == "messages":
        return _anthropic_error(f"prompt is too long: {tokens} tokens > {limit} maximum")
    if api == "responses":
        return _openai_error(
            f"Your input exceeds the context window of this model ({tokens} tokens > {limit}). "
            "Please adjust your input and try again.",
            "input",
            code="context_length_exceeded",
        )
    return _openai_error(
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages.",
        "messages",
        code="context_length_exceeded",
    )


def stream_error(api: Api) -> dict[str, Any]:
    """The error each API sends inside a 200 stream (`stream_error_after`)."""
    message = "scripted upstream: injected error inside the stream"
    if api == "messages":
        return _anthropic_error(message, kind="overloaded_error")
    return _openai_error(message, None, kind="server_error", code="server_error")


# -- replies, whole -----------------------------------------------------------------------------


def _ids(measure: Measure) -> tuple[str, str]:
    return measure.body_digest[:24], measure.body_digest[24:48]


def chat_completion(body: Mapping[str, Any], measure: Measure, text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text, "refusal": None}
    return _chat_reply(body, measure, message, "stop", len(text_chunks(text)))


def _chat_reply(
    body: Mapping[str, Any],
    measure: Measure,
    message: dict[str, Any],
    finish_reason: str,
    completion: int,
) -> dict[str, Any]:
    """A Chat Completions reply holding `message`, its usage counting `completion` tokens."""
    reply_id, _ = _ids(measure)
    return {
        "id": f"chatcmpl-{reply_id}",
        "object": "chat.completion",
        "created": CREATED,
        "model": str(body.get("model") or DEFAULT_MODEL),
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": _chat_usage(measure, completion),
        "system_fingerprint": "scripted",
    }


def _chat_usage(measure: Measure, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": measure.tokens,
        "completion_tokens": completion,
        "total_tokens": measure.tokens + completion,
    }


def _responses_usage(measure: Measure, completion: int) -> dict[str, Any]:
    return {
        "input_tokens": measure.tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": measure.tokens + completion,
    }


def _output_message(measure: Measure, text: str | None) -> dict[str, Any]:
    _, item_id = _ids(measure)
    done = text is not None
    content: list[dict[str, Any]] = (
        [{"type": "output_text", "text": text, "annotations": []}] if done else []
    )
    return {
        "type": "message",
        "id": f"msg_{item_id}",
        "status": "completed" if done else "in_progress",
        "role": "assistant",
        "content": content,
    }


def response_object(body: Mapping[str, Any], measure: Measure, text: str | None) -> dict[str, Any]:
    """A Responses `response`: completed with `text`, or in progress (no output) when None."""
    reply_id, _ = _ids(measure)
    done = text is not None
    return {
        "id": f"resp_{reply_id}",
        "object": "response",
        "created_at": CREATED,
        "status": "completed" if done else "in_progress",
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": str(body.get("model") or DEFAULT_MODEL),
        "output": [_output_message(measure, text)] if done else [],
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "temperature": body.get("temperature", 1.0),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools", []),
        "top_p": body.get("top_p", 1.0),
        "metadata": body.get("metadata") or {},
        "usage": _responses_usage(measure, len(text_chunks(text))) if text is not None else None,
    }


def anthropic_message(
    body: Mapping[str, Any], measure: Measure, text: str | None
) -> dict[str, Any]:
    """An Anthropic `message`: complete with `text`, or as message_start carries it when None."""
    reply_id, _ = _ids(measure)
    done = text is not None
    return {
        "id": f"msg_{reply_id}",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model") or DEFAULT_MODEL),
        "content": [{"type": "text", "text": text}] if done else [],
        "stop_reason": "end_turn" if done else None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": measure.tokens,
            "output_tokens": len(text_chunks(text)) if text is not None else 1,
        },
    }


# -- replies, streamed --------------------------------------------------------------------------


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: an optional `event:` line, one `data:` line, a blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=_JSON_SEPARATORS)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _chat_chunker(
    body: Mapping[str, Any], measure: Measure
) -> tuple[dict[str, Any], Callable[[dict[str, Any], str | None], bytes]]:
    """The fields every chat chunk of one reply carries (its id, model, …), and the writer of
    one delta's chunk event."""
    reply_id, _ = _ids(measure)
    base = {
        "id": f"chatcmpl-{reply_id}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": str(body.get("model") or DEFAULT_MODEL),
        "system_fingerprint": "scripted",
    }

    def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse({**base, "choices": [choice]})

    return base, chunk


def chat_events(
    body: Mapping[str, Any], measure: Measure, chunks: Sequence[str], error_after: int | None
) -> Iterator[bytes | None]:
    """Chat chunk events; None marks where the per-chunk delay goes (before each text chunk)."""
    base, chunk = _chat_chunker(body, measure)
    yield chunk({"role": "assistant", "content": ""}, None)
    for i, piece in enumerate(chunks):
        if error_after is not None and i >= error_after:
            yield sse(stream_error("chat"))
            return
        yield None
        yield chunk({"content": piece}, None)
    yield chunk({}, "stop")
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        yield sse({**base, "choices": [], "usage": _chat_usage(measure, len(chunks))})
    yield sse("[DONE]")


def responses_events(
    body: Mapping[str, Any], measure: Measure, chunks: Sequence[str], error_after: int | None
) -> Iterator[bytes | None]:
    """Responses events (each with `event:` and a `sequence_number`); None marks a delay."""
    sequence = iter(range(1_000_000))
    _, item_id = _ids(measure)
    where = {"item_id": f"msg_{item_id}", "output_index": 0, "content_index": 0}

    def event(kind: str, **data: Any) -> bytes:
        return sse({"type": kind, "sequence_number": next(sequence), **data}, kind)

    yield event("response.created", response=response_object(body, measure, None))
    yield event("response.in_progress", response=response_object(body, measure, None))
    yield event("response.output_item.added", output_index=0, item=_output_message(measure, None))
    part = {"type": "output_text", "text": "", "annotations": []}
    yield event("response.content_part.added", **where, part=part)
    for i, piece in enumerate(chunks):
        if error_after is not None and i >= error_after:
            error = stream_error("responses")["error"]
            yield event("error", code=error["code"], message=error["message"], param=None)
            return
        yield None
        yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
    text = "".join(chunks)
    yield event("response.output_text.done", **where, text=text, logprobs=[])
    yield event("response.content_part.done", **where, part={**part, "text": text})
    yield event("response.output_item.done", output_index=0, item=_output_message(measure, text))
    yield event("response.completed", response=response_object(body, measure, text))


def anthropic_events(
    body: Mapping[str, Any], measure: Measure, chunks: Sequence[str], error_after: int | None
) -> Iterator[bytes | None]:
    """Anthropic Messages events; None marks a delay."""

    def event(kind: str, **data: Any) -> bytes:
        return sse({"type": kind, **data}, kind)

    yield event("message_start", message=anthropic_message(body, measure, None))
    yield event("content_block_start", index=0, content_block={"type": "text", "text": ""})
    yield event("ping")
    for i, piece in enumerate(chunks):
        if error_after is not None and i >= error_after:
            yield sse(stream_error("messages"), "error")
            return
        yield None
        yield event("content_block_delta", index=0, delta={"type": "text_delta", "text": piece})
    yield event("content_block_stop", index=0)
    yield event(
        "message_delta",
        delta={"stop_reason": "end_turn", "stop_sequence": None},
        usage={"output_tokens": len(chunks)},
    )
    yield event("message_stop")


# -- replies that call a tool (the trail, `compaction.proxy.scripted_trail`) -------------------


def _call_id(measure: Measure, prefix: str) -> str:
    return f"{prefix}{measure.body_digest[:24]}"


def chat_call_completion(
    body: Mapping[str, Any], measure: Measure, call: ToolCall
) -> dict[str, Any]:
    tool_call = {
        "id": _call_id(measure, "call_"),
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments_json},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [tool_call], "refusal": None}
    return _chat_reply(body, measure, message, "tool_calls", 1)


def chat_call_events(
    body: Mapping[str, Any], measure: Measure, call: ToolCall
) -> Iterator[bytes | None]:
    base, chunk = _chat_chunker(body, measure)
    yield chunk({"role": "assistant", "content": None}, None)
    yield None
    opened = {
        "index": 0,
        "id": _call_id(measure, "call_"),
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    yield chunk({"tool_calls": [opened]}, None)
    arguments = {"index": 0, "function": {"arguments": call.arguments_json}}
    yield chunk({"tool_calls": [arguments]}, None)
    yield chunk({}, "tool_calls")
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        yield sse({**base, "choices": [], "usage": _chat_usage(measure, 1)})
    yield sse("[DONE]")


def _function_call_item(measure: Measure, call: ToolCall, done: bool) -> dict[str, Any]:
    _, item_id = _ids(measure)
    return {
        "type": "function_call",
        "id": f"fc_{item_id}",
        "call_id": _call_id(measure, "call_"),
        "name": call.name,
        "arguments": call.arguments_json if done else "",
        "status": "completed" if done else "in_progress",
    }


def responses_call_object(
    body: Mapping[str, Any], measure: Measure, call: ToolCall | None
) -> dict[str, Any]:
    """A Responses `response` whose output is one function call (in progress when None)."""
    response = response_object(body, measure, None)
    if call is None:
        return response
    return {
        **response,
        "status": "completed",
        "output": [_function_call_item(measure, call, True)],
        "usage": _responses_usage(measure, 1),
    }


def responses_call_events(
    body: Mapping[str, Any], measure: Measure, call: ToolCall
) -> Iterator[bytes | None]:
    sequence = iter(range(1_000_000))

    def event(kind: str, **data: Any) -> bytes:
        return sse({"type": kind, "sequence_number": next(sequence), **data}, kind)

    item = _function_call_item(measure, call, False)
    yield event("response.created", response=responses_call_object(body, measure, None))
    yield event("response.in_progress", response=responses_call_object(body, measure, None))
    yield None
    yield event("response.output_item.added", output_index=0, item=item)
    where = {"item_id": item["id"], "output_index": 0}
    yield event("response.function_call_arguments.delta", **where, delta=call.arguments_json)
    yield event("response.function_call_arguments.done", **where, arguments=call.arguments_json)
    yield event(
        "response.output_item.done", output_index=0, item=_function_call_item(measure, call, True)
    )
    yield event("response.completed", response=responses_call_object(body, measure, call))


def anthropic_call_message(
    body: Mapping[str, Any], measure: Measure, call: ToolCall
) -> dict[str, Any]:
    block = {
        "type": "tool_use",
        "id": _call_id(measure, "toolu_"),
        "name": call.name,
        "input": call.arguments,
    }
    return {
        **anthropic_message(body, measure, None),
        "content": [block],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": measure.tokens, "output_tokens": 1},
    }


def anthropic_call_events(
    body: Mapping[str, Any], measure: Measure, call: ToolCall
) -> Iterator[bytes | None]:
    def event(kind: str, **data: Any) -> bytes:
        return sse({"type": kind, **data}, kind)

    block = {"type": "tool_use", "id": _call_id(measure, "toolu_"), "name": call.name, "input": {}}
    yield event("message_start", message=anthropic_message(body, measure, None))
    yield None
    yield event("content_block_start", index=0, content_block=block)
    delta = {"type": "input_json_delta", "partial_json": call.arguments_json}
    yield event("content_block_delta", index=0, delta=delta)
    yield event("content_block_stop", index=0)
    yield event(
        "message_delta",
        delta={"stop_reason": "tool_use", "stop_sequence": None},
        usage={"output_tokens": 1},
    )
    yield event("message_stop")


_EVENTS: Final = {"chat": chat_events, "responses": responses_events, "messages": anthropic_events}
_CALL_EVENTS: Final = {
    "chat": chat_call_events,
    "responses": responses_call_events,
    "messages": anthropic_call_events,
}
_WHOLE_CALL: Final = {
    "chat": chat_call_completion,
    "responses": responses_call_object,
    "messages": anthropic_call_message,
}
_WHOLE: Final = {
    "chat": chat_completion,
    "responses": response_object,
    "messages": anthropic_message,
}


# -- the server ---------------------------------------------------------------------------------


class ScriptedUpstream:
    """The settings, the record of received requests, and the Starlette app serving both."""

    def __init__(self, settings: UpstreamSettings | None = None) -> None:
        self.settings = settings or UpstreamSettings()
        self.requests: deque[dict[str, Any]] = deque(maxlen=self.settings.max_records)
        self._seq = 0
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/responses", self._responses, methods=["POST"]),
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._count_tokens, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/_requests", self._requests, methods=["GET", "DELETE"]),
                Route("/_config", self._config, methods=["GET", "PUT"]),
                Route("/{path:path}", self._unknown, methods=["GET", "POST", "PUT", "DELETE"]),
            ]
        )

    async def _record(self, request: Request) -> Any:
        """Keep the request; return its JSON body (None when it has none or is not JSON)."""
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._seq += 1
        if self.requests.maxlen != self.settings.max_records:
            self.requests = deque(self.requests, maxlen=self.settings.max_records)
        self.requests.append(
            {
                "seq": self._seq,
                "method": request.method,
                "path": request.url.path,
                "query": request.url.query,
                "headers": _joined_headers(request.headers.raw),
                "body": body,
                "text": None if body is not None or not raw else raw.decode(errors="replace"),
            }
        )
        return body

    async def _chat(self, request: Request) -> Response:
        return await self._answer("chat", request)

    async def _responses(self, request: Request) -> Response:
        return await self._answer("responses", request)

    async def _messages(self, request: Request) -> Response:
        return await self._answer("messages", request)

    async def _answer(self, api: Api, request: Request) -> Response:
        body = await self._record(request)
        settings = self.settings
        if not isinstance(body, dict):
            return JSONResponse(_error_body(api, "the body must be a JSON object", None), 400)
        try:
            measure = measure_request(api, body, validate=settings.validate)
        except RejectedRequest as e:
            return JSONResponse(e.body, e.status)
        limit = settings.context_tokens
        if limit is not None and measure.tokens > limit:
            return JSONResponse(context_length_error(api, measure.tokens, limit), 400)
        move = next_move(api, body) if settings.trail else None
        if move is not None and move.call is not None:
            return await self._call(api, body, measure, move.call)
        if move is not None and move.text is not None:
            text = move.text
        else:
            text = reply_text(measure, reply_words=settings.reply_words)
        chunks = text_chunks(text)
        delay = settings.delay_ms / 1000
        if not body.get("stream"):
            if delay:
                await asyncio.sleep(delay * len(chunks))
            return JSONResponse(_WHOLE[api](body, measure, text))
        events = _EVENTS[api](body, measure, chunks, settings.stream_error_after)
        return StreamingResponse(
            _paced(events, delay),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _call(
        self, api: Api, body: Mapping[str, Any], measure: Measure, call: ToolCall
    ) -> Response:
        """A reply that calls one tool (the trail's next read), streamed or whole."""
        delay = self.settings.delay_ms / 1000
        if not body.get("stream"):
            if delay:
                await asyncio.sleep(delay)
            return JSONResponse(_WHOLE_CALL[api](body, measure, call))
        return StreamingResponse(
            _paced(_CALL_EVENTS[api](body, measure, call), delay),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _count_tokens(self, request: Request) -> Response:
        body = await self._record(request)
        if not isinstance(body, dict):
            return JSONResponse(_anthropic_error("the body must be a JSON object"), 400)
        try:
            measure = measure_request("messages", body, validate=self.settings.validate)
        except RejectedRequest as e:
            return JSONResponse(e.body, e.status)
        return JSONResponse({"input_tokens": measure.tokens})

    async def _models(self, request: Request) -> Response:
        await self._record(request)
        if "anthropic-version" in request.headers:
            listed: dict[str, Any] = {
                "type": "model",
                "id": DEFAULT_MODEL,
                "display_name": "Scripted model",
                "created_at": "2023-11-14T22:13:20Z",
            }
            return JSONResponse(
                {
                    "data": [listed],
                    "has_more": False,
                    "first_id": DEFAULT_MODEL,
                    "last_id": DEFAULT_MODEL,
                }
            )
        model = {"id": DEFAULT_MODEL, "object": "model", "created": CREATED, "owned_by": "scripted"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _unknown(self, request: Request) -> Response:
        await self._record(request)
        message = f"scripted upstream: no route {request.method} {request.url.path}"
        return JSONResponse(_openai_error(message, None, code="not_found"), 404)

    async def _requests(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.requests.clear()
            return Response(status_code=204)
        return JSONResponse({"requests": list(self.requests)})

    async def _config(self, request: Request) -> Response:
        if request.method == "PUT":
            try:
                changes = await request.json()
                if not isinstance(changes, dict):
                    raise ValueError("the body must be a JSON object of settings")
                self.settings.update(changes)
            except ValueError as e:
                return JSONResponse({"error": {"message": str(e)}}, 400)
        return JSONResponse(asdict(self.settings))


async def _paced(events: Iterator[bytes | None], delay: float) -> AsyncIterator[bytes]:
    for event in events:
        if event is None:
            if delay:
                await asyncio.sleep(delay)
        else:
            yield event


def _joined_headers(raw: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, value in raw:
        name, text = key.decode("latin-1").lower(), value.decode("latin-1")
        headers[name] = f"{headers[name]}, {text}" if name in headers else text
    return headers


def create_app(settings: UpstreamSettings | None = None) -> Starlette:
    """The ASGI app, for in-process use (`httpx.ASGITransport(app=create_app())`)."""
    return ScriptedUpstream(settings).app


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m compaction.proxy.scripted_upstream",
        description="A deterministic OpenAI/Anthropic-compatible server for tests and benchmarks.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument("--delay-ms", type=float, default=0.0, help="wait before each text chunk")
    parser.add_argument(
        "--context-tokens", type=int, default=None, help="answer longer requests with an error"
    )
    parser.add_argument(
        "--stream-error-after",
        type=int,
        default=None,
        help="end each stream with the API's error event after this many text chunks",
    )
    parser.add_argument("--reply-words", type=int, default=0, help="pad every reply with words")
    parser.add_argument(
        "--no-validate", action="store_true", help="accept transcripts the validators reject"
    )
    parser.add_argument(
        "--no-trail", action="store_true", help="never play the trail: always the text reply"
    )
    parser.add_argument("--max-records", type=int, default=10_000, help="requests kept")
    args = parser.parse_args(argv)
    settings = UpstreamSettings(
        context_tokens=args.context_tokens,
        delay_ms=args.delay_ms,
        stream_error_after=args.stream_error_after,
        reply_words=args.reply_words,
        validate=not args.no_validate,
        trail=not args.no_trail,
        max_records=args.max_records,
    )
    # Counting must never download a tokenizer: this server is for offline tests.
    os.environ.setdefault("COMPACTION_OFFLINE", "1")
    import uvicorn

    uvicorn.run(
        create_app(settings), host=args.host, port=args.port, log_level="warning", access_log=False
    )


if __name__ == "__main__":
    main()
