"""OpenAI Chat Completions: decode a request into a `Conversation`, encode it back exactly,
and check the transcript against OpenAI's rules.

Accepted input is a bare list of messages or a request object with `messages` (plus `model`,
`tools` and any other request field). Roles `developer` and legacy `function` are read as
`system` and `tool` and written back under their original names.

Lossless replay. Every wire detail the conversation model does not express is kept in the
`provider_data` of the message, part or conversation it came from, under keys prefixed
`openai.`:

    openai.keys           original key order of the object (message, part, call, request)
    openai.extra          keys this module does not model (refusal, audio, annotations, …)
    openai.role           original role name when it was `developer` or `function`
    openai.content        content form: "string" | "parts" | "null" | "absent"
    openai.opaque         content parts of unknown type (input_audio, file, …) as
                          ((position in the content list, part), …) — put back in place
    openai.inner_keys / openai.inner_extra   the same, for `image_url` / `function` / `custom`
    openai.reasoning_key  the message key a ReasoningPart came from (reasoning_content, reasoning)
    openai.tool_type      "custom" for custom-tool calls (arguments hold the raw input)
    openai.legacy_function_call  True for a ToolCallPart read from a legacy `function_call`
    openai.form           request form: "list" | "object"

Messages without these keys (built by strategies) encode to canonical shapes: string content
when a message is a single text, `content: null` on a tool-call-only assistant message, one
`tool` message per tool result. A `ReasoningPart` without `openai.reasoning_key` (e.g. signed
Anthropic thinking) is not emitted: OpenAI-compatible servers cannot verify it and some reject
unknown reasoning fields. Legacy `function_call`s get synthetic ids (`legacy-function-call-N`)
so that their answers pair with them like modern tool calls.

This module must never do I/O, never drop a wire field it does not understand, and never
reject in `decode` what `validate` reports: decode refuses only what cannot be represented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Final

from compaction.dialects._wire import (
    ABSENT,
    Opaque,
    content_value,
    decode_request,
    encode_request,
    extras,
    image_size,
    kind_of,
    media_type_of,
    message_role,
    replay_data,
    shape,
    split_opaque,
    text_part,
)
from compaction.dialects.base import Violation
from compaction.exceptions import DecodeError
from compaction.messages import (
    ROLES,
    Conversation,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    Role,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

__all__ = [
    "OPENAI",
    "OpenAIChatDialect",
    "decode_message",
    "decode_messages",
    "encode_message",
]

KEYS: Final = "openai.keys"
EXTRA: Final = "openai.extra"
ROLE: Final = "openai.role"
CONTENT: Final = "openai.content"
OPAQUE: Final = "openai.opaque"
INNER_KEYS: Final = "openai.inner_keys"
INNER_EXTRA: Final = "openai.inner_extra"
REASONING_KEY: Final = "openai.reasoning_key"
TOOL_TYPE: Final = "openai.tool_type"
LEGACY: Final = "openai.legacy_function_call"
FORM: Final = "openai.form"

WIRE_ROLES: Final[Mapping[str, Role]] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
REASONING_KEYS: Final = ("reasoning_content", "reasoning")


ContentItem = TextPart | SummaryPart | ImagePart


class OpenAIChatDialect:
    """OpenAI Chat Completions (`/v1/chat/completions`) and compatible servers."""

    name: str = "openai"

    def decode(self, payload: Any) -> Conversation:
        return _decode_request(payload)

    def encode(self, conversation: Conversation) -> Any:
        return _encode_request(conversation)

    def validate(self, conversation: Conversation) -> list[Violation]:
        return _validate(conversation)


OPENAI: Final = OpenAIChatDialect()


# --------------------------------------------------------------------------------- decode


def _decode_request(payload: Any) -> Conversation:
    return decode_request(
        payload,
        dialect="openai",
        form=FORM,
        keys=KEYS,
        extra=EXTRA,
        not_a_request="expected a list of messages or a request object with `messages`",
        no_messages="missing: an OpenAI chat request needs a `messages` list",
        read_messages=lambda raws, location: decode_messages(raws, location=location),
    )


def decode_messages(raws: Sequence[Any], *, location: str) -> list[Message]:
    """Decode wire messages; `location` prefixes error paths (`messages` → `messages[3]`)."""
    messages: list[Message] = []
    open_legacy: str | None = None
    for i, raw in enumerate(raws):
        legacy_id: str | None = None
        if isinstance(raw, dict):
            if raw.get("role") == "assistant" and isinstance(raw.get("function_call"), dict):
                legacy_id = open_legacy = f"legacy-function-call-{i}"
            elif raw.get("role") == "function":
                # A legacy function message answers the function_call right before it; one
                # that follows none gets an id of its own and is reported as an orphan.
                legacy_id = open_legacy or f"legacy-function-result-{i}"
                open_legacy = None
        messages.append(decode_message(raw, location=f"{location}[{i}]", legacy_id=legacy_id))
    return messages


def decode_message(raw: Any, *, location: str, legacy_id: str | None = None) -> Message:
    """Decode one wire message. `legacy_id` is the synthetic id a legacy `function_call`
    gets (assistant) or answers (`function` role)."""
    wire_role, role = message_role(raw, location, WIRE_ROLES, f"one of {', '.join(WIRE_ROLES)}")
    known = {"role", "content"}
    data: dict[str, Any] = {KEYS: tuple(raw)}
    if wire_role != role:
        data[ROLE] = wire_role
    parts: list[Part] = []
    if role == "assistant":
        for key in REASONING_KEYS:
            value = raw.get(key)
            if isinstance(value, str):
                parts.append(ReasoningPart(value, provider_data={REASONING_KEY: key}))
                known.add(key)

    items, opaque, form = _decode_content(raw, location, role)
    data[CONTENT] = form
    if opaque:
        data[OPAQUE] = opaque
    if role == "tool":
        call_id = _tool_call_id(raw, wire_role, location, legacy_id)
        if wire_role == "tool":
            known.add("tool_call_id")
        content = tuple(p for p in items if isinstance(p, TextPart | ImagePart))
        parts.append(ToolResultPart(call_id, content))
    else:
        parts.extend(items)

    name = raw.get("name")
    if isinstance(name, str):
        known.add("name")
    else:
        name = None

    if role == "assistant":
        calls = raw.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise DecodeError(
                f"expected a list of tool calls, got {kind_of(calls)}",
                location=f"{location}.tool_calls",
            )
        if calls:
            known.add("tool_calls")
            for j, call in enumerate(calls):
                parts.append(_decode_tool_call(call, f"{location}.tool_calls[{j}]"))
        legacy = raw.get("function_call")
        if isinstance(legacy, dict):
            known.add("function_call")
            parts.append(_decode_legacy_call(legacy, legacy_id or "legacy-function-call", location))

    extra = extras(raw, known)
    if extra:
        data[EXTRA] = extra
    return Message(
        role=role, parts=tuple(parts), name=name, pinned=role == "system", provider_data=data
    )


def _tool_call_id(raw: dict[str, Any], wire_role: str, location: str, legacy_id: str | None) -> str:
    if wire_role == "function":
        return legacy_id or "legacy-function-call"
    call_id = raw.get("tool_call_id")
    if not isinstance(call_id, str):
        problem = "missing" if call_id is None else f"expected a string, got {kind_of(call_id)}"
        raise DecodeError(
            f"{problem}: a tool message needs the `tool_call_id` it answers",
            location=f"{location}.tool_call_id",
        )
    return call_id


def _decode_content(
    raw: dict[str, Any], location: str, role: str
) -> tuple[list[ContentItem], Opaque, str]:
    if "content" not in raw:
        return [], (), "absent"
    content = raw["content"]
    if content is None:
        return [], (), "null"
    if isinstance(content, str):
        return [text_part(content, {}, role)], (), "string"
    if not isinstance(content, list):
        raise DecodeError(
            f"expected a string, a list of content parts or null, got {kind_of(content)}",
            location=f"{location}.content",
        )
    items: list[ContentItem]
    items, opaque = split_opaque(
        content, f"{location}.content", partial(_decode_content_part, role=role)
    )
    return items, opaque, "parts"


def _part_data(raw: dict[str, Any], known: Sequence[str]) -> dict[str, Any]:
    return replay_data(raw, known, keys=KEYS, extra=EXTRA)


def _decode_content_part(raw: Any, location: str, role: str) -> ContentItem | None:
    """A modelled part, or None for a part type kept opaque."""
    if not isinstance(raw, dict):
        raise DecodeError(f"expected a content part object, got {kind_of(raw)}", location=location)
    kind = raw.get("type")
    if kind == "text":
        text = raw.get("text")
        if not isinstance(text, str):
            raise DecodeError(
                f"a text part needs a string `text`, got {kind_of(text)}",
                location=f"{location}.text",
            )
        return text_part(text, _part_data(raw, ("type", "text")), role)
    if kind == "image_url":
        image = raw.get("image_url")
        if not isinstance(image, dict) or not isinstance(image.get("url"), str):
            raise DecodeError(
                "an image_url part needs an object with a string `url`",
                location=f"{location}.image_url",
            )
        url: str = image["url"]
        detail = image.get("detail") if isinstance(image.get("detail"), str) else None
        data = _part_data(raw, ("type", "image_url"))
        data[INNER_KEYS] = tuple(image)
        inner_extra = extras(image, ("url", "detail") if detail is not None else ("url",))
        if inner_extra:
            data[INNER_EXTRA] = inner_extra
        size = image_size(url)
        return ImagePart(
            url=url,
            media_type=media_type_of(url),
            detail=detail,
            width=size[0] if size else None,
            height=size[1] if size else None,
            provider_data=data,
        )
    return None


def _decode_tool_call(raw: Any, location: str) -> ToolCallPart:
    if not isinstance(raw, dict):
        raise DecodeError(f"expected a tool call object, got {kind_of(raw)}", location=location)
    call_id = raw.get("id")
    if not isinstance(call_id, str):
        raise DecodeError(
            f"a tool call needs a string `id`, got {kind_of(call_id)}", location=f"{location}.id"
        )
    kind = raw.get("type", "function")
    if kind not in ("function", "custom"):
        raise DecodeError(
            f"unknown tool call type {kind!r}; expected 'function' or 'custom'",
            location=f"{location}.type",
        )
    field, arg_key = ("function", "arguments") if kind == "function" else ("custom", "input")
    inner = raw.get(field)
    if not isinstance(inner, dict):
        raise DecodeError(
            f"expected an object, got {kind_of(inner)}", location=f"{location}.{field}"
        )
    name = inner.get("name")
    if not isinstance(name, str):
        raise DecodeError(
            f"a tool call needs a string `name`, got {kind_of(name)}",
            location=f"{location}.{field}.name",
        )
    arguments = inner.get(arg_key)
    if not isinstance(arguments, str):
        raise DecodeError(
            f"expected a string (JSON text), got {kind_of(arguments)}",
            location=f"{location}.{field}.{arg_key}",
        )
    data = _part_data(raw, ("id", "type", field))
    data[INNER_KEYS] = tuple(inner)
    inner_extra = extras(inner, ("name", arg_key))
    if inner_extra:
        data[INNER_EXTRA] = inner_extra
    if kind == "custom":
        data[TOOL_TYPE] = "custom"
    return ToolCallPart(call_id, name, arguments, provider_data=data)


def _decode_legacy_call(raw: dict[str, Any], call_id: str, location: str) -> ToolCallPart:
    name = raw.get("name")
    arguments = raw.get("arguments")
    if not isinstance(name, str):
        raise DecodeError(
            f"expected a string, got {kind_of(name)}", location=f"{location}.function_call.name"
        )
    if not isinstance(arguments, str):
        raise DecodeError(
            f"expected a string (JSON text), got {kind_of(arguments)}",
            location=f"{location}.function_call.arguments",
        )
    data = _part_data(raw, ("name", "arguments"))
    data[LEGACY] = True
    return ToolCallPart(call_id, name, arguments, provider_data=data)


# --------------------------------------------------------------------------------- encode


def _encode_request(conversation: Conversation) -> Any:
    messages = [wire for m in conversation.messages for wire in encode_message(m)]
    return encode_request(conversation, messages, form=FORM, keys=KEYS, extra=EXTRA)


def encode_message(message: Message) -> list[dict[str, Any]]:
    """One conversation message as wire messages: one, except that tool results carried by
    a non-tool message (a conversation read from Anthropic) become `tool` messages first,
    and a tool message holding several results becomes one message per result."""
    results = message.tool_results
    if message.role == "tool":
        if len(results) <= 1:
            return [_encode_tool_message(results[0] if results else None, message)]
        return [_encode_tool_message(r, message if k == 0 else None) for k, r in enumerate(results)]
    out = [_encode_tool_message(r, None) for r in results]
    rest = [p for p in message.parts if not isinstance(p, ToolResultPart)]
    if rest or not results:
        out.append(_encode_plain(message, rest))
    return out


def _wire_count(message: Message) -> int:
    results = len(message.tool_results)
    if message.role == "tool":
        return max(1, results)
    return results + (1 if results < len(message.parts) or not results else 0)


def _encode_tool_message(result: ToolResultPart | None, origin: Message | None) -> dict[str, Any]:
    data: Mapping[str, Any] = origin.provider_data if origin is not None else {}
    wire_role = "function" if data.get(ROLE) == "function" else "tool"
    known: dict[str, Any] = {"role": wire_role}
    items: Sequence[ContentItem] = result.content if result is not None else ()
    content = _content_value(items, data.get(OPAQUE), data.get(CONTENT), "tool")
    if content is not ABSENT:
        known["content"] = content
    if origin is not None and origin.name is not None:
        known["name"] = origin.name
    if wire_role == "tool":
        known["tool_call_id"] = result.tool_call_id if result is not None else ""
    return shape(known, data.get(EXTRA), data.get(KEYS))


def _encode_plain(message: Message, parts: Sequence[Part]) -> dict[str, Any]:
    data = message.provider_data
    role = message.role
    wire_role = "developer" if role == "system" and data.get(ROLE) == "developer" else role
    known: dict[str, Any] = {"role": wire_role}
    items = [p for p in parts if isinstance(p, TextPart | SummaryPart | ImagePart)]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    content = _content_value(items, data.get(OPAQUE), data.get(CONTENT), role)
    if content is not ABSENT:
        known["content"] = content
    if message.name is not None:
        known["name"] = message.name
    for part in parts:
        if isinstance(part, ReasoningPart):
            key = part.provider_data.get(REASONING_KEY)
            if key is not None:
                known[key] = part.text
    legacy = [c for c in calls if c.provider_data.get(LEGACY)]
    if len(legacy) == 1 and len(calls) == 1:
        known["function_call"] = _encode_legacy_call(legacy[0])
    elif calls:
        known["tool_calls"] = [_encode_tool_call(c) for c in calls]
    return shape(known, data.get(EXTRA), data.get(KEYS))


def _content_value(
    items: Sequence[ContentItem],
    opaque: Sequence[tuple[int, Any]] | None,
    form: str | None,
    role: str,
) -> Any:
    return content_value(
        items,
        opaque,
        form,
        list_form="parts",
        empty=None if role == "assistant" else "",
        encode=lambda: [_encode_content_part(p) for p in items],
    )


def _encode_content_part(part: ContentItem) -> dict[str, Any]:
    data = part.provider_data
    if isinstance(part, ImagePart):
        image: dict[str, Any] = {"url": part.url}
        if part.detail is not None:
            image["detail"] = part.detail
        image = shape(image, data.get(INNER_EXTRA), data.get(INNER_KEYS))
        return shape({"type": "image_url", "image_url": image}, data.get(EXTRA), data.get(KEYS))
    return shape({"type": "text", "text": part.text}, data.get(EXTRA), data.get(KEYS))


def _encode_tool_call(call: ToolCallPart) -> dict[str, Any]:
    data = call.provider_data
    if data.get(LEGACY):
        # A legacy call written beside modern ones: its recorded details describe a
        # `function_call` object, so it is written as a canonical tool call.
        function = {"name": call.name, "arguments": call.arguments}
        return {"id": call.id, "type": "function", "function": function}
    keys = data.get(KEYS)
    if data.get(TOOL_TYPE) == "custom":
        field, arg_key, kind = "custom", "input", "custom"
    else:
        field, arg_key, kind = "function", "arguments", "function"
    inner = shape(
        {"name": call.name, arg_key: call.arguments}, data.get(INNER_EXTRA), data.get(INNER_KEYS)
    )
    known: dict[str, Any] = {"id": call.id}
    # `type` is written unless the caller's original call omitted it.
    if keys is None or "type" in keys:
        known["type"] = kind
    known[field] = inner
    return shape(known, data.get(EXTRA), keys)


def _encode_legacy_call(call: ToolCallPart) -> dict[str, Any]:
    data = call.provider_data
    return shape({"name": call.name, "arguments": call.arguments}, data.get(EXTRA), data.get(KEYS))


# ------------------------------------------------------------------------------- validate


def _validate(conversation: Conversation) -> list[Violation]:
    found: list[Violation] = []
    pending: dict[str, int] = {}
    non_system = 0
    wire = 0
    for message in conversation.messages:
        i = wire
        wire += _wire_count(message)
        role = message.role
        if role not in ROLES:
            found.append(
                Violation(i, "unknown_role", f"unknown role {role!r}; expected one of {ROLES}")
            )
            continue
        if role != "system":
            non_system += 1
        results = message.tool_results
        for result in results:
            if result.tool_call_id in pending:
                del pending[result.tool_call_id]
            else:
                found.append(
                    Violation(
                        i,
                        "orphan_tool_result",
                        f"tool result for {result.tool_call_id!r} answers no tool call "
                        "still waiting for an answer",
                    )
                )
        opens_turn = role != "tool" and (not results or len(results) < len(message.parts))
        if opens_turn and pending:
            _report_unanswered(pending, found, f"before message {i}")
            pending = {}
        if role == "assistant":
            for call in message.tool_calls:
                # An id may come back in a later turn (real agents do this, and the API takes
                # it); only an id that is still waiting for its answer is ambiguous.
                if call.id in pending:
                    found.append(
                        Violation(
                            i,
                            "duplicate_tool_call_id",
                            f"tool call id {call.id!r} repeats while still unanswered",
                        )
                    )
                pending[call.id] = i
                custom = call.provider_data.get(TOOL_TYPE) == "custom"
                if not custom and call.parsed_arguments() is None:
                    found.append(
                        Violation(
                            i,
                            "invalid_tool_arguments",
                            f"tool call {call.id!r} ({call.name}): arguments are not a JSON object",
                        )
                    )
        elif message.tool_calls:
            found.append(
                Violation(i, "misplaced_tool_call", f"a {role} message cannot carry tool calls")
            )
        missing = _missing_content(message)
        if missing:
            found.append(Violation(i, *missing))
    if pending:
        _report_unanswered(pending, found, "before the conversation ends")
    if non_system == 0:
        found.append(
            Violation(None, "no_messages", "the conversation has no message besides system ones")
        )
    found.sort(key=lambda v: -1 if v.index is None else v.index)
    return found


def _report_unanswered(pending: dict[str, int], found: list[Violation], where: str) -> None:
    by_message: dict[int, list[str]] = {}
    for call_id, index in pending.items():
        by_message.setdefault(index, []).append(call_id)
    for index, ids in by_message.items():
        names = ", ".join(repr(c) for c in ids)
        found.append(
            Violation(
                index,
                "unanswered_tool_call",
                f"tool call {names} has no answering tool message {where}",
            )
        )


def _missing_content(message: Message) -> tuple[str, str] | None:
    has_opaque = bool(message.provider_data.get(OPAQUE))
    if message.role == "tool":
        results = message.tool_results
        if not results:
            return "missing_tool_call_id", "tool message answers no tool call"
        if not any(r.content for r in results) and not has_opaque:
            return "missing_content", "tool message has no content"
        return None
    has_items = any(isinstance(p, TextPart | SummaryPart | ImagePart) for p in message.parts)
    if has_items or has_opaque:
        return None
    if message.role == "assistant":
        if message.tool_calls:
            return None
        return "missing_content", "assistant message has neither content nor tool calls"
    if message.role == "user" and message.tool_results:
        return None
    return "missing_content", f"{message.role} message has no content"
