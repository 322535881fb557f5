"""Anthropic Messages: decode a request into a `Conversation`, encode it back exactly, and
check the transcript against Anthropic's rules.

The top-level `system` becomes a leading pinned `Message(role="system")`; encode puts every
leading system message back into top-level `system` (a string when there is one plain text,
text blocks otherwise, or the form the request used). A system turn inside `messages` (the
API's mid-conversation system messages, which Claude Code sends) decodes to a pinned system
message in place and encodes back in place, even at the start. A user message keeps role
`user` even when it carries `tool_result` blocks; text and results stay in one message, in
order.

Lossless replay. Wire details the conversation model does not express are kept in the
`provider_data` of the message, part or conversation they came from, under keys prefixed
`anthropic.`:

    anthropic.keys        original key order of the object (request, message, block, source)
    anthropic.extra       keys this module does not model (cache_control, citations, …)
    anthropic.content     content form: "string" | "blocks" | "null" | "absent" (messages and
                          tool results)
    anthropic.opaque      blocks of types this module does not model (server_tool_use,
                          web_search_tool_result, document, search_result, …) as
                          ((position in the content list, block), …), put back in place
    anthropic.system      on the system message: "string" | "blocks", the form of `system`
    anthropic.source_keys / anthropic.source_extra   the same, for an image's `source`
    anthropic.input       the original `input` object of a tool_use, replayed while the
                          ToolCallPart's arguments are unchanged
    anthropic.arguments   the arguments text decode derived from that `input`
    anthropic.form        request form: "object" | "list"

Parts built by strategies encode to canonical blocks. A `ReasoningPart` from another provider
is emitted only if it carries a signature (an unsigned thinking block would be rejected); a
`tool` role message (from OpenAI) becomes a user message of `tool_result` blocks, consecutive
ones merged into one. `validate` checks the encoded request, so its indices are positions in
the wire `messages` list (the top-level system is not counted).

This module must never do I/O, never drop a block it does not understand, never decode image
data beyond its header, and never reject in `decode` what `validate` reports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Final

from compaction.dialects._wire import (
    ABSENT,
    Opaque,
    content_value,
    data_uri,
    decode_request,
    encode_request,
    extras,
    image_size,
    kind_of,
    message_role,
    replay_data,
    shape,
    split_data_uri,
    split_opaque,
    text_part,
    with_opaque,
)
from compaction.dialects.base import Violation
from compaction.exceptions import DecodeError
from compaction.messages import (
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

__all__ = ["ANTHROPIC", "AnthropicDialect"]

KEYS: Final = "anthropic.keys"
EXTRA: Final = "anthropic.extra"
CONTENT: Final = "anthropic.content"
OPAQUE: Final = "anthropic.opaque"
SYSTEM: Final = "anthropic.system"
SOURCE_KEYS: Final = "anthropic.source_keys"
SOURCE_EXTRA: Final = "anthropic.source_extra"
INPUT: Final = "anthropic.input"
ARGUMENTS: Final = "anthropic.arguments"
FORM: Final = "anthropic.form"

# `system` inside `messages`: a mid-conversation system turn, kept where it is.
WIRE_ROLES: Final[Mapping[str, Role]] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
}


class AnthropicDialect:
    """Anthropic Messages (`/v1/messages`)."""

    name: str = "anthropic"

    def decode(self, payload: Any) -> Conversation:
        return _decode_request(payload)

    def encode(self, conversation: Conversation) -> Any:
        return _encode_request(conversation)

    def validate(self, conversation: Conversation) -> list[Violation]:
        payload = _encode_request(conversation)
        messages = payload if isinstance(payload, list) else payload["messages"]
        return _validate_wire(messages)


ANTHROPIC: Final = AnthropicDialect()


# --------------------------------------------------------------------------------- decode


def _decode_request(payload: Any) -> Conversation:
    return decode_request(
        payload,
        dialect="anthropic",
        form=FORM,
        keys=KEYS,
        extra=EXTRA,
        not_a_request="expected a request object with `messages`",
        no_messages="missing: an Anthropic request needs a `messages` list",
        read_messages=_decode_messages,
        leading=_decode_leading,
    )


def _decode_leading(request: dict[str, Any]) -> tuple[list[Message], tuple[str, ...]]:
    """A top-level `system` as the leading system message, and the field it was read from."""
    if request.get("system") is None:
        return [], ()
    return [_decode_system(request["system"])], ("system",)


def _decode_system(value: Any) -> Message:
    if isinstance(value, str):
        return Message("system", (TextPart(value),), pinned=True, provider_data={SYSTEM: "string"})
    if not isinstance(value, list):
        raise DecodeError(
            f"expected a string or a list of text blocks, got {kind_of(value)}", location="system"
        )
    parts, opaque = _decode_blocks(value, "system", "system")
    data: dict[str, Any] = {SYSTEM: "blocks"}
    if opaque:
        data[OPAQUE] = opaque
    return Message("system", tuple(parts), pinned=True, provider_data=data)


def _decode_messages(raws: Sequence[Any], location: str) -> list[Message]:
    return [_decode_message(raw, f"{location}[{i}]") for i, raw in enumerate(raws)]


def _decode_message(raw: Any, location: str) -> Message:
    _, role = message_role(raw, location, WIRE_ROLES, "'user', 'assistant' or 'system'")
    data: dict[str, Any] = {KEYS: tuple(raw)}
    parts: list[Part] = []
    if "content" not in raw:
        data[CONTENT] = "absent"
    elif raw["content"] is None:
        data[CONTENT] = "null"
    elif isinstance(raw["content"], str):
        data[CONTENT] = "string"
        parts.append(text_part(raw["content"], {}, role))
    elif isinstance(raw["content"], list):
        data[CONTENT] = "blocks"
        parts, opaque = _decode_blocks(raw["content"], f"{location}.content", role)
        if opaque:
            data[OPAQUE] = opaque
    else:
        raise DecodeError(
            f"expected a string or a list of content blocks, got {kind_of(raw['content'])}",
            location=f"{location}.content",
        )
    extra = extras(raw, ("role", "content"))
    if extra:
        data[EXTRA] = extra
    return Message(role, tuple(parts), pinned=role == "system", provider_data=data)


def _block_data(raw: dict[str, Any], known: Sequence[str]) -> dict[str, Any]:
    return replay_data(raw, known, keys=KEYS, extra=EXTRA)


def _decode_blocks(blocks: list[Any], location: str, role: str) -> tuple[list[Part], Opaque]:
    return split_opaque(blocks, location, partial(_decode_block, role=role))


def _need_str(raw: dict[str, Any], key: str, location: str, what: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise DecodeError(
            f"{what} needs a string `{key}`, got {kind_of(value)}", location=f"{location}.{key}"
        )
    return value


def _decode_block(raw: Any, location: str, role: str) -> Part | None:
    """A modelled part, or None for a block type kept opaque."""
    if not isinstance(raw, dict):
        raise DecodeError(f"expected a content block object, got {kind_of(raw)}", location=location)
    kind = raw.get("type")
    if kind == "text":
        text = _need_str(raw, "text", location, "a text block")
        return text_part(text, _block_data(raw, ("type", "text")), role)
    if kind == "image":
        return _decode_image(raw, location)
    if kind == "tool_use":
        call_id = _need_str(raw, "id", location, "a tool_use block")
        name = _need_str(raw, "name", location, "a tool_use block")
        if "input" not in raw:
            raise DecodeError("a tool_use block needs an `input`", location=f"{location}.input")
        arguments = json.dumps(raw["input"], ensure_ascii=False, separators=(",", ":"))
        data = _block_data(raw, ("type", "id", "name", "input"))
        data[INPUT] = raw["input"]
        data[ARGUMENTS] = arguments
        return ToolCallPart(call_id, name, arguments, provider_data=data)
    if kind == "tool_result":
        return _decode_tool_result(raw, location)
    if kind == "thinking":
        text = _need_str(raw, "thinking", location, "a thinking block")
        signature = raw.get("signature")
        known = (
            ("type", "thinking", "signature")
            if isinstance(signature, str)
            else ("type", "thinking")
        )
        return ReasoningPart(
            text,
            signature=signature if isinstance(signature, str) else None,
            provider_data=_block_data(raw, known),
        )
    if kind == "redacted_thinking":
        encrypted = _need_str(raw, "data", location, "a redacted_thinking block")
        return ReasoningPart(
            "", encrypted=encrypted, provider_data=_block_data(raw, ("type", "data"))
        )
    return None


def _decode_image(raw: dict[str, Any], location: str) -> ImagePart | None:
    source = raw.get("source")
    if not isinstance(source, dict):
        raise DecodeError(
            f"an image block needs a `source` object, got {kind_of(source)}",
            location=f"{location}.source",
        )
    kind = source.get("type")
    if kind == "base64":
        media_type = _need_str(source, "media_type", f"{location}.source", "a base64 source")
        payload = _need_str(source, "data", f"{location}.source", "a base64 source")
        url = data_uri(media_type, payload)
        known: tuple[str, ...] = ("type", "media_type", "data")
    elif kind == "url":
        url = _need_str(source, "url", f"{location}.source", "a url source")
        media_type = None
        known = ("type", "url")
    else:
        # File references and future source kinds are replayed as they came.
        return None
    data = _block_data(raw, ("type", "source"))
    data[SOURCE_KEYS] = tuple(source)
    source_extra = extras(source, known)
    if source_extra:
        data[SOURCE_EXTRA] = source_extra
    size = image_size(url) if media_type is not None else None
    return ImagePart(
        url=url,
        media_type=media_type,
        width=size[0] if size else None,
        height=size[1] if size else None,
        provider_data=data,
    )


def _decode_tool_result(raw: dict[str, Any], location: str) -> ToolResultPart:
    call_id = _need_str(raw, "tool_use_id", location, "a tool_result block")
    is_error = raw.get("is_error")
    known = ["type", "tool_use_id", "content"]
    if isinstance(is_error, bool):
        known.append("is_error")
    data = _block_data(raw, known)
    content: list[TextPart | ImagePart] = []
    if "content" not in raw:
        data[CONTENT] = "absent"
    elif raw["content"] is None:
        data[CONTENT] = "null"
    elif isinstance(raw["content"], str):
        data[CONTENT] = "string"
        content.append(TextPart(raw["content"]))
    elif isinstance(raw["content"], list):
        data[CONTENT] = "blocks"
        opaque: list[tuple[int, Any]] = []
        for j, block in enumerate(raw["content"]):
            where = f"{location}.content[{j}]"
            if isinstance(block, dict) and block.get("type") in ("text", "image"):
                part = _decode_block(block, where, "tool")
                if isinstance(part, TextPart | ImagePart):
                    content.append(part)
                    continue
            elif not isinstance(block, dict):
                raise DecodeError(
                    f"expected a content block object, got {kind_of(block)}", location=where
                )
            opaque.append((j, block))
        if opaque:
            data[OPAQUE] = tuple(opaque)
    else:
        raise DecodeError(
            f"expected a string or a list of content blocks, got {kind_of(raw['content'])}",
            location=f"{location}.content",
        )
    return ToolResultPart(call_id, tuple(content), is_error=is_error is True, provider_data=data)


# --------------------------------------------------------------------------------- encode


def _encode_request(conversation: Conversation) -> Any:
    messages = conversation.messages
    lead = 0
    while (
        lead < len(messages)
        and messages[lead].role == "system"
        and KEYS not in messages[lead].provider_data  # decoded from `messages`: stays there
    ):
        lead += 1
    wire = _encode_messages(messages[lead:])
    if conversation.dialect != "anthropic":
        wire = _alternate(wire)
    system = _encode_system(messages[:lead]) if lead else ABSENT
    return encode_request(conversation, wire, form=FORM, keys=KEYS, extra=EXTRA, system=system)


def _alternate(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages converted from another dialect, with same-role neighbours folded into one (as
    Anthropic's API itself reads them) and tool results first in each user message.

    Only for conversion: an Anthropic transcript is encoded as it came, so it round-trips."""
    out: list[dict[str, Any]] = []
    for message in wire:
        if out and out[-1].get("role") == message.get("role"):
            previous = out[-1]
            previous["content"] = [
                *_blocks(previous.get("content")),
                *_blocks(message.get("content")),
            ]
            continue
        out.append(dict(message))
    for message in out:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            others = [
                b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")
            ]
            message["content"] = [*results, *others]
    return out


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _encode_system(messages: Sequence[Message]) -> Any:
    if len(messages) == 1:
        only = messages[0]
        form = only.provider_data.get(SYSTEM)
        texts = [p for p in only.parts if isinstance(p, TextPart | SummaryPart)]
        plain = len(texts) == len(only.parts) and not only.provider_data.get(OPAQUE)
        if plain and form != "blocks" and len(texts) <= 1:
            return texts[0].text if texts else ""
    blocks: list[Any] = []
    for message in messages:
        own = [b for p in message.parts if (b := _encode_block(p)) is not None]
        blocks.extend(with_opaque(own, message.provider_data.get(OPAQUE)))
    return blocks


def _encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    merging = False
    for message in messages:
        if message.role == "tool":
            blocks = [b for p in message.parts if (b := _encode_block(p)) is not None]
            if merging:
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": "user", "content": blocks})
            merging = True
            continue
        merging = False
        out.append(_encode_message(message))
    return out


def _encode_message(message: Message) -> dict[str, Any]:
    data = message.provider_data
    known: dict[str, Any] = {"role": message.role}
    content = _content_value(message.parts, data.get(OPAQUE), data.get(CONTENT), empty="")
    if content is not ABSENT:
        known["content"] = content
    return shape(known, data.get(EXTRA), data.get(KEYS))


def _content_value(
    parts: Sequence[Part], opaque: Opaque | None, form: str | None, *, empty: Any
) -> Any:
    """Content as a string when it is one plain text and the original (if any) was a string;
    as blocks otherwise. `empty` is what canonical empty content encodes to."""
    blocks = [(p, b) for p in parts if (b := _encode_block(p)) is not None]
    return content_value(
        [p for p, _ in blocks],
        opaque,
        form,
        list_form="blocks",
        empty=empty,
        encode=lambda: [b for _, b in blocks],
    )


def _encode_block(part: Part) -> dict[str, Any] | None:
    data = part.provider_data
    keys = data.get(KEYS)
    extra = data.get(EXTRA)
    if isinstance(part, TextPart | SummaryPart):
        return shape({"type": "text", "text": part.text}, extra, keys)
    if isinstance(part, ImagePart):
        split = split_data_uri(part.url)
        if split is not None:
            source = {"type": "base64", "media_type": split[0], "data": split[1]}
        else:
            source = {"type": "url", "url": part.url}
        source = shape(source, data.get(SOURCE_EXTRA), data.get(SOURCE_KEYS))
        return shape({"type": "image", "source": source}, extra, keys)
    if isinstance(part, ToolCallPart):
        if INPUT in data and part.arguments == data.get(ARGUMENTS):
            tool_input = data[INPUT]
        else:
            tool_input = _parse_input(part.arguments)
        return shape(
            {"type": "tool_use", "id": part.id, "name": part.name, "input": tool_input},
            extra,
            keys,
        )
    if isinstance(part, ToolResultPart):
        return _encode_tool_result(part)
    if isinstance(part, ReasoningPart):
        return _encode_reasoning(part)
    return None


def _parse_input(arguments: str) -> Any:
    # Arguments that are not JSON are passed through as text: validate reports them, and the
    # caller's data is not silently replaced by an empty object.
    if not arguments.strip():
        return {}
    try:
        return json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return arguments


def _encode_tool_result(part: ToolResultPart) -> dict[str, Any]:
    data = part.provider_data
    keys = data.get(KEYS)
    known: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.tool_call_id}
    content = _content_value(part.content, data.get(OPAQUE), data.get(CONTENT), empty=ABSENT)
    if content is not ABSENT:
        known["content"] = content
    extra = data.get(EXTRA) or {}
    if part.is_error or (keys and "is_error" in keys and "is_error" not in extra):
        known["is_error"] = part.is_error
    return shape(known, extra, keys)


def _encode_reasoning(part: ReasoningPart) -> dict[str, Any] | None:
    data = part.provider_data
    if KEYS in data:
        if part.encrypted is not None and not part.text:
            return shape(
                {"type": "redacted_thinking", "data": part.encrypted}, data.get(EXTRA), data[KEYS]
            )
        known: dict[str, Any] = {"type": "thinking", "thinking": part.text}
        if part.signature is not None:
            known["signature"] = part.signature
        return shape(known, data.get(EXTRA), data[KEYS])
    if part.signature is None:
        return None
    return {"type": "thinking", "thinking": part.text, "signature": part.signature}


# ------------------------------------------------------------------------------- validate


def _validate_wire(messages: Sequence[dict[str, Any]]) -> list[Violation]:
    found: list[Violation] = []
    if not messages:
        found.append(
            Violation(None, "no_messages", "an Anthropic request needs at least one message")
        )
    seen: set[Any] = set()
    prev_role: Any = None
    prev_calls: list[Any] = []
    prev_index = 0
    turns = 0  # user and assistant messages so far: system turns do not take part
    for i, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if role == "system":
            _check_system_turn(i, content, prev_calls, prev_index, found)
            prev_calls, prev_role = [], role
            continue
        if turns == 0 and role != "user":
            found.append(Violation(i, "first_not_user", f"the first message is {role}, not user"))
        turns += 1
        if prev_role is not None and role == prev_role:
            found.append(
                Violation(
                    i,
                    "consecutive_roles",
                    f"messages {prev_index} and {i} are both {role}; roles must alternate",
                )
            )
        _check_empty(i, content, found)

        results = [(k, b) for k, b in enumerate(blocks) if b.get("type") == "tool_result"]
        answered = {b.get("tool_use_id") for _, b in results}
        if prev_calls:
            missing = [c for c in prev_calls if c not in answered or role != "user"]
            if missing:
                found.append(
                    Violation(
                        prev_index,
                        "unanswered_tool_use",
                        f"tool_use {', '.join(map(repr, missing))} not answered by a "
                        f"tool_result in the next message ({i})",
                    )
                )
        for _, block in results:
            if role != "user" or block.get("tool_use_id") not in prev_calls:
                found.append(
                    Violation(
                        i,
                        "orphan_tool_result",
                        f"tool_result for {block.get('tool_use_id')!r} follows no matching "
                        "tool_use in the previous assistant message",
                    )
                )
        if results:
            first_other = next(
                (k for k, b in enumerate(blocks) if b.get("type") != "tool_result"), None
            )
            if first_other is not None and first_other < results[-1][0]:
                found.append(
                    Violation(
                        i,
                        "tool_result_not_first",
                        "tool_result blocks must come before any other block in the message",
                    )
                )

        calls: list[Any] = []
        for block in blocks:
            if block.get("type") != "tool_use":
                continue
            call_id = block.get("id")
            if role != "assistant":
                found.append(
                    Violation(i, "misplaced_tool_use", f"a {role} message cannot carry tool_use")
                )
            if call_id in seen:
                found.append(
                    Violation(i, "duplicate_tool_use_id", f"tool_use id {call_id!r} repeats")
                )
            seen.add(call_id)
            calls.append(call_id)
            if not isinstance(block.get("input"), dict):
                found.append(
                    Violation(
                        i,
                        "invalid_tool_input",
                        f"tool_use {call_id!r}: input is not a JSON object",
                    )
                )
        prev_calls = calls if role == "assistant" else []
        prev_index = i
        prev_role = role
    if prev_calls:
        found.append(
            Violation(
                prev_index,
                "unanswered_tool_use",
                f"tool_use {', '.join(map(repr, prev_calls))} not answered: the conversation "
                "ends after it",
            )
        )
    found.sort(key=lambda v: -1 if v.index is None else v.index)
    return found


def _check_system_turn(
    i: int, content: Any, prev_calls: list[Any], prev_index: int, found: list[Violation]
) -> None:
    """A system turn inside `messages` (the API's mid-conversation system messages, which
    Claude Code sends): allowed anywhere but between a tool_use and its tool_result; a turn
    of its own, so the messages either side of it may have one role (the API folds
    consecutive turns of a role anyway)."""
    if prev_calls:
        found.append(
            Violation(
                prev_index,
                "unanswered_tool_use",
                f"tool_use {', '.join(map(repr, prev_calls))} not answered by a tool_result "
                f"in the next message ({i} is a system turn)",
            )
        )
    _check_empty(i, content, found)


def _check_empty(i: int, content: Any, found: list[Violation]) -> None:
    if content is None or (isinstance(content, str | list) and not content):
        found.append(Violation(i, "empty_content", "the message has no content"))
        return
    if isinstance(content, str):
        if not content.strip():
            found.append(Violation(i, "empty_content", "the message content is only whitespace"))
        return
    if not isinstance(content, list):
        return
    for k, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str) or not text.strip():
            found.append(
                Violation(
                    i, "empty_text_block", f"content[{k}] is an empty or whitespace-only text block"
                )
            )
