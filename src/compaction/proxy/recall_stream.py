"""The recall tool inside a streamed answer (OpenAI Chat Completions and Anthropic Messages;
streamed Responses requests are not offered the tool).

The upstream's events are relayed as they arrive until one starts a call of `recall`
(OpenAI: a `delta.tool_calls` entry named `recall`; Anthropic: a `content_block_start` of a
`tool_use` named `recall`). From there on that answer's events are held: the call's
arguments are collected to the end of the upstream stream, answered from the session's
archive (`compaction.proxy.recall`), and the conversation goes upstream again, streamed,
with the model's turn and the answers appended. The follow-up's events continue the same
response, so the client sees one well-formed stream and never the recall call nor the
first answer's ending (OpenAI: its finish chunk, usage chunk and `[DONE]`; Anthropic: its
`message_delta` and `message_stop`); of the follow-up, the Anthropic `message_start` is
dropped and its content-block indices are shifted past the blocks the client already has.

As on the unstreamed path: an answer that mixes recall with the client's own tool calls is
passed on with the recall calls cut out (later tool calls and blocks renumbered) and
nothing answered; after `recall.MAX_ROUNDS` follow-ups, the last answer is relayed as it
comes. A follow-up the upstream refuses, or a stream that breaks, ends the response with
an error event in the API's format.

Events before a recall call pass through in the upstream's own chunks: a stream without a
recall call is relayed byte for byte. Events are parsed only to find the call and rebuild
the model's turn, and re-encoded only when a call is cut out or a block renumbered.

This module must never answer with anything but the session's own archive, nor log a body.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from compaction.log import SessionLog
from compaction.proxy import recall
from compaction.proxy.apis import dumps
from compaction.proxy.errors import ApiName, ProxyError, stream_error_event
from compaction.proxy.metrics import Metrics
from compaction.proxy.streaming import is_event_stream, whole_events

logger = logging.getLogger("compaction.proxy")

Reopen = Callable[[bytes], Awaitable[httpx.Response]]

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


async def relay_answering_recalls(
    first: httpx.Response,
    api: ApiName,
    *,
    log: SessionLog,
    body: dict[str, Any],
    reopen: Reopen,
    metrics: Metrics,
) -> AsyncIterator[bytes]:
    """`first` (an event stream answering `body`) relayed, its recall calls answered from
    `log` by follow-ups sent with `reopen`. Follow-ups are closed here; `first` is not."""
    response = first
    offset = 0  # Anthropic: the content blocks the client already has from earlier answers
    try:
        for round_ in range(recall.MAX_ROUNDS + 1):
            turn = _Turn(api, answering=round_ < recall.MAX_ROUNDS)
            held: list[bytes] = []
            try:
                async for chunk in whole_events(response):
                    shown: list[bytes] = []
                    unchanged = True
                    for event in _split(chunk):
                        data = _data(event)
                        starts = turn.feed(data)
                        if held or starts:
                            held.append(event)
                            unchanged = False
                            continue
                        out = _shown(api, event, data, offset=offset, follow_up=round_ > 0)
                        unchanged = unchanged and out is event
                        if out is not None:
                            shown.append(out)
                    if unchanged:
                        yield chunk
                    elif shown:
                        yield b"".join(shown)
            except httpx.TransportError as e:
                metrics.upstream_errors["broken_stream"] += 1
                logger.warning("upstream response broke off: %s", type(e).__name__)
                yield stream_error_event(
                    api,
                    f"the upstream connection broke off mid-stream ({type(e).__name__})",
                    code="upstream_disconnected",
                )
                return
            if not held:
                return
            answered = turn.response()
            found, others = recall.calls(api, answered)
            if others or not found:
                for event in held:
                    out = _shown(api, event, _data(event), offset=offset, drop=turn.recall_indices)
                    if out is not None:
                        yield out
                return
            answers = [(call_id, recall.answer(log, args)) for call_id, args in found]
            body = recall.continued(api, body, answered, answers)
            if api == "anthropic":
                offset += turn.held_from
            if response is not first:
                await response.aclose()
            try:
                response = await reopen(dumps(body))
            except ProxyError as e:
                yield stream_error_event(api, str(e), code=e.code or "upstream_error")
                return
            if response.status_code != 200 or not is_event_stream(response):
                yield stream_error_event(
                    api,
                    f"the upstream answered the request that carried a recall answer with "
                    f"HTTP {response.status_code}",
                )
                return
    finally:
        if response is not first:
            await response.aclose()


@dataclass
class _Turn:
    """The model's answer rebuilt from its events, shaped as the unstreamed API sends it."""

    api: ApiName
    answering: bool
    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)  # OpenAI, by index
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)  # Anthropic, by index
    partial_input: dict[int, list[str]] = field(default_factory=dict)
    recall_indices: set[int] = field(default_factory=set)
    held_from: int = 0  # the index of the call (Anthropic: block) where holding began

    def feed(self, data: Any) -> bool:
        """Take in one event's data; true when it starts a recall call to be answered."""
        if not isinstance(data, dict):
            return False
        starts = self._anthropic(data) if self.api == "anthropic" else self._openai(data)
        if starts is None or not self.answering:
            return False
        self.held_from = starts
        return True

    def _openai(self, data: dict[str, Any]) -> int | None:
        delta = _first_delta(data)
        if delta is None:
            return None
        if isinstance(delta.get("content"), str):
            self.text.append(delta["content"])
        starts = None
        for part in delta.get("tool_calls") or []:
            if not isinstance(part, dict) or not isinstance(part.get("index"), int):
                continue
            index = part["index"]
            call = self.calls.setdefault(
                index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if part.get("id"):
                call["id"] = part["id"]
            function = part.get("function") or {}
            if isinstance(function.get("name"), str):
                call["function"]["name"] += function["name"]
            if isinstance(function.get("arguments"), str):
                call["function"]["arguments"] += function["arguments"]
            if call["function"]["name"] == recall.NAME and index not in self.recall_indices:
                self.recall_indices.add(index)
                starts = index
        return starts

    def _anthropic(self, data: dict[str, Any]) -> int | None:
        index = data.get("index")
        if not isinstance(index, int):
            return None
        kind = data.get("type")
        if kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            block = dict(data["content_block"])
            self.blocks[index] = block
            if block.get("type") == "tool_use" and block.get("name") == recall.NAME:
                self.recall_indices.add(index)
                return index
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            block = self.blocks.setdefault(index, {})
            delta = data["delta"]
            kind = delta.get("type")
            if kind == "text_delta":
                block["text"] = block.get("text", "") + str(delta.get("text", ""))
            elif kind == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
            elif kind == "signature_delta":
                block["signature"] = delta.get("signature")
            elif kind == "input_json_delta":
                self.partial_input.setdefault(index, []).append(str(delta.get("partial_json")))
        return None

    def response(self) -> dict[str, Any]:
        if self.api == "anthropic":
            content = []
            for index in sorted(self.blocks):
                block = self.blocks[index]
                if index in self.partial_input:
                    parsed = _json("".join(self.partial_input[index]))
                    block = {**block, "input": parsed if isinstance(parsed, dict) else {}}
                content.append(block)
            return {"content": content}
        message = {
            "role": "assistant",
            "content": "".join(self.text) or None,
            "tool_calls": [self.calls[i] for i in sorted(self.calls)],
        }
        return {"choices": [{"index": 0, "message": message}]}


def _shown(
    api: ApiName,
    event: bytes,
    data: Any,
    *,
    offset: int = 0,
    follow_up: bool = False,
    drop: set[int] | None = None,
) -> bytes | None:
    """The event as the client gets it (`event` itself when unchanged), None for none: the
    calls or blocks in `drop` cut out, later ones renumbered, Anthropic block indices moved
    up by `offset`, and a follow-up's `message_start` dropped."""
    if not isinstance(data, dict):
        return event
    drop = drop or set()
    if api == "anthropic":
        if follow_up and data.get("type") == "message_start":
            return None
        index = data.get("index")
        if not isinstance(index, int) or (not drop and not offset):
            return event
        if index in drop:
            return None
        return _reencoded(event, {**data, "index": _renumbered(index, drop) + offset})
    delta = _first_delta(data)
    if not drop or delta is None or not isinstance(delta.get("tool_calls"), list):
        return event
    kept = [
        {**part, "index": _renumbered(part["index"], drop)}
        for part in delta["tool_calls"]
        if isinstance(part, dict) and isinstance(part.get("index"), int)
        if part["index"] not in drop
    ]
    rest = {k: v for k, v in delta.items() if k != "tool_calls"}
    choice = data["choices"][0]
    if not kept and not any(rest.values()) and choice.get("finish_reason") is None:
        return None
    delta = {**rest, "tool_calls": kept} if kept else rest
    choices = [{**choice, "delta": delta}, *data["choices"][1:]]
    return _reencoded(event, {**data, "choices": choices})


def _renumbered(index: int, drop: set[int]) -> int:
    return index - sum(1 for d in drop if d < index)


def _first_delta(data: dict[str, Any]) -> dict[str, Any] | None:
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        delta = choices[0].get("delta")
        return delta if isinstance(delta, dict) else None
    return None


def _split(chunk: bytes) -> list[bytes]:
    events = []
    start = 0
    for end in _EVENT_END.finditer(chunk):
        events.append(chunk[start : end.end()])
        start = end.end()
    if start < len(chunk):
        events.append(chunk[start:])
    return events


def _data(event: bytes) -> Any:
    lines = [
        line[5:].removeprefix(b" ") for line in event.splitlines() if line.startswith(b"data:")
    ]
    return _json(b"\n".join(lines)) if lines else None


def _json(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _reencoded(event: bytes, data: dict[str, Any]) -> bytes:
    kept = [line for line in event.splitlines() if line and not line.startswith(b"data:")]
    return b"\n".join([*kept, b"data: " + dumps(data)]) + b"\n\n"
