"""OpenAI Responses (`POST /v1/responses`): decode a request body into a `Conversation`,
encode it back exactly, and check the `input` items against the Responses API's rules.

Mapping. `instructions` (a string) becomes a leading pinned system message and is written
back to `instructions`. A string `input` is one user message. In a list `input`:

    user / system / developer message        one message (developer is read as system)
    a run of model output items              one assistant message: reasoning, assistant
      (reasoning, assistant message,         messages, function/custom/computer/shell/…
       *_call items, mcp_call, …)            calls, in item order, so that a reasoning item
                                             is never separated from the items it precedes
    function_call_output and other outputs   one tool message each (a ToolResultPart)
    item_reference, compaction, unknown      one pinned system message with no parts (kept,
                                             never compacted, replayed verbatim)

`function_call` and `custom_tool_call` are ToolCallParts (a custom call's `input` is its
arguments); `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call`,
`mcp_approval_request` and `program` are ToolCallParts whose arguments are the item's JSON,
replayed from the raw item; their outputs are ToolResultParts, so a strategy can drop a call
only together with its answer. Output items whose output is text can be masked (the text is
written back into the item); the others (screenshots, shell output lists) keep their content
out of the model and are replayed as they came, so they count no tokens. Output-side items
with no answer (web_search_call, file_search_call, image_generation_call, mcp_call, …) are
kept inside their assistant message and replayed in place; they count no tokens either.

A reasoning item is a ReasoningPart replayed untouched; its `text` is the summary text, or
empty when `encrypted_content` is present so the token counter sizes the encrypted reasoning
(what the model actually gets back).

Lossless replay. Wire details live in `provider_data` under keys prefixed `responses.`:

    responses.raw           on a part: the wire object it was read from; encode writes it back
                            with the modelled fields (text, url, arguments, output) set over it
    responses.items         on a message: the wire items it stands for, in order, as records
                            {"kind": "message" | "part" | "opaque", …}; a "message" record
                            holds the raw item, how many parts its content gave, the content
                            form ("string" | "parts" | "null" | "absent") and its opaque
                            content parts (refusal, input_file, …) as ((position, part), …)
    responses.content / responses.opaque    a function/custom output's form and opaque parts
    responses.text          a generic output's text as read, to tell whether it was masked
    responses.instructions  True on the system message read from `instructions`
    responses.input         request input form: "string" | "list" | "absent"
    responses.keys / responses.extra        the request's key order and unmodelled fields

Messages built by strategies encode to canonical items: `{"type": "message", "role": "user",
"content": [{"type": "input_text", …}]}` for a summary (a user message, never a second
system message), `function_call` / `function_call_output` for calls and results.

`validate` checks the encoded body, so violation indices are positions in `input`. A request
that continues a stored response (`previous_response_id`, `conversation`, or any
`item_reference`) may answer calls that are not in `input`, so orphan outputs are accepted
there; every call in `input` still needs its output later in `input`.

This module must never do I/O, never drop an item or field it does not understand, and never
reject in `decode` what `validate` reports: decode refuses only what cannot be represented.
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
    decode_tools,
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

__all__ = ["RESPONSES", "OpenAIResponsesDialect", "decode_items", "encode_message"]

RAW: Final = "responses.raw"
ITEMS: Final = "responses.items"
CONTENT: Final = "responses.content"
OPAQUE: Final = "responses.opaque"
TEXT: Final = "responses.text"
INSTRUCTIONS: Final = "responses.instructions"
INPUT: Final = "responses.input"
KEYS: Final = "responses.keys"
EXTRA: Final = "responses.extra"

WIRE_ROLES: Final[Mapping[str, Role]] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
}

# Call items and the key holding the id their output answers.
CALLS: Final[Mapping[str, str]] = {
    "function_call": "call_id",
    "custom_tool_call": "call_id",
    "computer_call": "call_id",
    "local_shell_call": "call_id",
    "shell_call": "call_id",
    "apply_patch_call": "call_id",
    "mcp_approval_request": "id",
    "program": "call_id",
}
# Calls the API refuses to see without their output ("No tool output found for …").
REQUIRED_ANSWER: Final = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
    }
)
# Output items and the key naming the call they answer.
OUTPUTS: Final[Mapping[str, str]] = {
    "function_call_output": "call_id",
    "custom_tool_call_output": "call_id",
    "computer_call_output": "call_id",
    "local_shell_call_output": "id",
    "shell_call_output": "call_id",
    "apply_patch_call_output": "call_id",
    "mcp_approval_response": "approval_request_id",
    "program_output": "call_id",
}
# Outputs whose content is text or input parts, modelled in full.
RICH_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
# Other outputs with a text field a mask may rewrite.
TEXT_OUTPUTS: Final[Mapping[str, str]] = {
    "local_shell_call_output": "output",
    "apply_patch_call_output": "output",
    "program_output": "result",
}
# Model output items nothing answers; kept in place inside their assistant message.
OUTPUT_SIDE_OPAQUE: Final = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "image_generation_call",
        "code_interpreter_call",
        "mcp_call",
        "mcp_list_tools",
        "tool_search_call",
    }
)
# Keys of a generic call item that are bookkeeping, not what the call asks for.
_CALL_BOOKKEEPING: Final = frozenset({"type", "id", "call_id", "status", "name"})
STATEFUL_FIELDS: Final = ("previous_response_id", "conversation")

ContentItem = TextPart | SummaryPart | ImagePart


class OpenAIResponsesDialect:
    """OpenAI Responses (`/v1/responses`) request bodies."""

    name: str = "responses"

    def decode(self, payload: Any) -> Conversation:
        return _decode_request(payload)

    def encode(self, conversation: Conversation) -> Any:
        return _encode_request(conversation)

    def validate(self, conversation: Conversation) -> list[Violation]:
        return _validate_wire(_encode_request(conversation))


RESPONSES: Final = OpenAIResponsesDialect()


# --------------------------------------------------------------------------------- decode


def _decode_request(payload: Any) -> Conversation:
    if not isinstance(payload, dict):
        raise DecodeError(
            f"expected a Responses request object with `input`, got {kind_of(payload)}",
            location="payload",
        )
    known = {"input"}
    model: str | None = None
    if isinstance(payload.get("model"), str):
        model = payload["model"]
        known.add("model")
    tools: tuple[Mapping[str, Any], ...] = ()
    if "tools" in payload:
        tools = decode_tools(payload["tools"])
        known.add("tools")
    messages: list[Message] = []
    if isinstance(payload.get("instructions"), str):
        known.add("instructions")
        messages.append(
            Message(
                "system",
                (TextPart(payload["instructions"]),),
                pinned=True,
                provider_data={INSTRUCTIONS: True},
            )
        )
    data: dict[str, Any] = replay_data(payload, known, keys=KEYS, extra=EXTRA)
    if "input" not in payload:
        data[INPUT] = "absent"
    elif isinstance(payload["input"], str):
        data[INPUT] = "string"
        messages.append(Message("user", (text_part(payload["input"], {}, "user"),)))
    elif isinstance(payload["input"], list):
        data[INPUT] = "list"
        messages.extend(decode_items(payload["input"], location="input"))
    else:
        raise DecodeError(
            f"expected a string or a list of input items, got {kind_of(payload['input'])}",
            location="input",
        )
    return Conversation(
        tuple(messages), tools=tools, model=model, dialect="responses", provider_data=data
    )


def _item_type(raw: Any, location: str) -> str:
    if not isinstance(raw, dict):
        raise DecodeError(f"expected an input item object, got {kind_of(raw)}", location=location)
    kind = raw.get("type")
    if kind is None:
        if "role" in raw:
            return "message"
        raise DecodeError(
            "an input item needs a `type` (or a `role`, for a message)", location=location
        )
    if not isinstance(kind, str):
        raise DecodeError(f"expected a string, got {kind_of(kind)}", location=f"{location}.type")
    return kind


def decode_items(raws: Sequence[Any], *, location: str) -> list[Message]:
    """Decode `input` items; `location` prefixes error paths (`input` → `input[3]`).

    Consecutive model output items become one assistant message; see the module docstring.
    """
    messages: list[Message] = []
    records: list[dict[str, Any]] = []
    parts: list[Part] = []

    def close_run() -> None:
        if records:
            messages.append(
                Message("assistant", tuple(parts), provider_data={ITEMS: tuple(records)})
            )
            records.clear()
            parts.clear()

    for i, raw in enumerate(raws):
        where = f"{location}[{i}]"
        kind = _item_type(raw, where)
        if kind == "message" and raw.get("role") == "assistant":
            record, items = _decode_message_item(raw, where)
            records.append(record)
            parts.extend(items)
        elif kind == "reasoning":
            records.append({"kind": "part"})
            parts.append(_decode_reasoning(raw))
        elif kind in CALLS:
            records.append({"kind": "part"})
            parts.append(_decode_call(raw, kind, where))
        elif kind in OUTPUT_SIDE_OPAQUE:
            records.append({"kind": "opaque", "raw": raw})
        else:
            close_run()
            if kind == "message":
                record, items = _decode_message_item(raw, where)
                role = WIRE_ROLES[raw["role"]]
                messages.append(
                    Message(
                        role,
                        tuple(items),
                        pinned=role == "system",
                        provider_data={ITEMS: (record,)},
                    )
                )
            elif kind in OUTPUTS:
                messages.append(Message("tool", (_decode_output(raw, kind, where),)))
            else:
                messages.append(
                    Message(
                        "system",
                        (),
                        pinned=True,
                        provider_data={ITEMS: ({"kind": "opaque", "raw": raw},)},
                    )
                )
    close_run()
    return messages


def _decode_message_item(raw: dict[str, Any], location: str) -> tuple[dict[str, Any], list[Part]]:
    _, role = message_role(raw, location, WIRE_ROLES, f"one of {', '.join(WIRE_ROLES)}")
    record: dict[str, Any] = {"kind": "message", "raw": raw}
    items: list[ContentItem] = []
    opaque: Opaque = ()
    if "content" not in raw:
        record["content"] = "absent"
    elif raw["content"] is None:
        record["content"] = "null"
    elif isinstance(raw["content"], str):
        record["content"] = "string"
        items = [text_part(raw["content"], {}, role)]
    elif isinstance(raw["content"], list):
        record["content"] = "parts"
        items, opaque = split_opaque(
            raw["content"], f"{location}.content", partial(_decode_content_part, role=role)
        )
    else:
        raise DecodeError(
            f"expected a string or a list of content parts, got {kind_of(raw['content'])}",
            location=f"{location}.content",
        )
    record["parts"] = len(items)
    if opaque:
        record["opaque"] = opaque
    return record, list(items)


def _decode_content_part(raw: Any, location: str, role: str) -> ContentItem | None:
    """A modelled content part, or None for a part kept opaque (refusal, input_file, …)."""
    if not isinstance(raw, dict):
        raise DecodeError(f"expected a content part object, got {kind_of(raw)}", location=location)
    kind = raw.get("type")
    if kind in ("input_text", "output_text"):
        text = raw.get("text")
        if not isinstance(text, str):
            raise DecodeError(
                f"a text part needs a string `text`, got {kind_of(text)}",
                location=f"{location}.text",
            )
        return text_part(text, {RAW: raw}, role)
    if kind == "input_image" and isinstance(raw.get("image_url"), str):
        url: str = raw["image_url"]
        detail = raw.get("detail") if isinstance(raw.get("detail"), str) else None
        size = image_size(url)
        return ImagePart(
            url=url,
            media_type=media_type_of(url),
            detail=detail,
            width=size[0] if size else None,
            height=size[1] if size else None,
            provider_data={RAW: raw},
        )
    return None


def _need_str(raw: dict[str, Any], key: str, location: str, what: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise DecodeError(
            f"{what} needs a string `{key}`, got {kind_of(value)}", location=f"{location}.{key}"
        )
    return value


def _decode_reasoning(raw: dict[str, Any]) -> ReasoningPart:
    encrypted = raw.get("encrypted_content")
    if isinstance(encrypted, str):
        return ReasoningPart("", encrypted=encrypted, provider_data={RAW: raw})
    texts = [
        entry["text"]
        for key in ("summary", "content")
        if isinstance(raw.get(key), list)
        for entry in raw[key]
        if isinstance(entry, dict) and isinstance(entry.get("text"), str)
    ]
    return ReasoningPart("\n".join(texts), provider_data={RAW: raw})


def _decode_call(raw: dict[str, Any], kind: str, location: str) -> ToolCallPart:
    what = f"a {kind} item"
    call_id = _need_str(raw, CALLS[kind], location, what)
    if kind == "function_call":
        name = _need_str(raw, "name", location, what)
        arguments = _need_str(raw, "arguments", location, what)
    elif kind == "custom_tool_call":
        name = _need_str(raw, "name", location, what)
        arguments = _need_str(raw, "input", location, what)
    else:
        name = raw["name"] if isinstance(raw.get("name"), str) else kind
        request = {k: v for k, v in raw.items() if k not in _CALL_BOOKKEEPING}
        arguments = json.dumps(request, ensure_ascii=False, separators=(",", ":"), default=str)
    return ToolCallPart(call_id, name, arguments, provider_data={RAW: raw})


def _decode_output(raw: dict[str, Any], kind: str, location: str) -> ToolResultPart:
    call_id = raw.get(OUTPUTS[kind])
    if not isinstance(call_id, str):
        problem = "missing" if call_id is None else f"expected a string, got {kind_of(call_id)}"
        raise DecodeError(
            f"{problem}: a {kind} item needs the `{OUTPUTS[kind]}` of the call it answers",
            location=f"{location}.{OUTPUTS[kind]}",
        )
    data: dict[str, Any] = {RAW: raw}
    content: list[TextPart | ImagePart] = []
    if kind in RICH_OUTPUTS:
        output = raw.get("output", ABSENT)
        if output is ABSENT:
            data[CONTENT] = "absent"
        elif isinstance(output, str):
            data[CONTENT] = "string"
            content.append(TextPart(output))
        elif isinstance(output, list):
            data[CONTENT] = "parts"
            items, opaque = split_opaque(
                output, f"{location}.output", partial(_decode_content_part, role="tool")
            )
            content.extend(p for p in items if isinstance(p, TextPart | ImagePart))
            if opaque:
                data[OPAQUE] = opaque
        else:
            raise DecodeError(
                f"expected a string or a list of content parts, got {kind_of(output)}",
                location=f"{location}.output",
            )
    else:
        key = TEXT_OUTPUTS.get(kind)
        value = raw.get(key) if key is not None else None
        if isinstance(value, str):
            content.append(TextPart(value))
            data[TEXT] = value
    return ToolResultPart(call_id, tuple(content), provider_data=data)


# --------------------------------------------------------------------------------- encode


def _encode_request(conversation: Conversation) -> dict[str, Any]:
    data = conversation.provider_data
    instructions: Any = ABSENT
    body: list[Message] = []
    for message in conversation.messages:
        if message.provider_data.get(INSTRUCTIONS) and instructions is ABSENT:
            instructions = message.text
        else:
            body.append(message)
    form = data.get(INPUT)
    items = [item for message in body for item in encode_message(message)]
    input_value: Any = items
    if form == "string" and len(body) == 1 and _is_plain_user_text(body[0]):
        input_value = body[0].text
    elif form == "absent" and not items:
        input_value = ABSENT
    recorded = data.get(KEYS)
    known: dict[str, Any] = {}
    if conversation.model is not None:
        known["model"] = conversation.model
    if instructions is not ABSENT:
        known["instructions"] = instructions
    if input_value is not ABSENT:
        known["input"] = input_value
    if conversation.tools or (recorded and "tools" in recorded):
        known["tools"] = list(conversation.tools)
    return shape(known, data.get(EXTRA), recorded)


def _is_plain_user_text(message: Message) -> bool:
    return (
        message.role == "user"
        and ITEMS not in message.provider_data
        and len(message.parts) == 1
        and isinstance(message.parts[0], TextPart | SummaryPart)
    )


def encode_message(message: Message) -> list[Any]:
    """One conversation message as `input` items, in order: as recorded when the message
    still has the parts it was read with, canonical items otherwise."""
    records: Sequence[Mapping[str, Any]] = message.provider_data.get(ITEMS) or ()
    if records:
        laid_out = _encode_records(message, records)
        if laid_out is not None:
            return laid_out
    items = _encode_canonical(message)
    # Parts no longer match the record (a foreign edit): opaque items still go out.
    items.extend(r["raw"] for r in records if r.get("kind") == "opaque")
    return items


def _encode_records(message: Message, records: Sequence[Mapping[str, Any]]) -> list[Any] | None:
    parts = message.parts
    out: list[Any] = []
    k = 0
    for record in records:
        kind = record.get("kind")
        if kind == "opaque":
            out.append(record["raw"])
        elif kind == "message":
            n = record.get("parts", 0)
            chunk = parts[k : k + n]
            k += n
            content = [p for p in chunk if isinstance(p, ContentItem)]
            if len(content) != n:
                return None
            out.append(_encode_message_item(record, content, message.role))
        else:
            if k >= len(parts) or isinstance(parts[k], ContentItem):
                return None
            item = _encode_part_item(parts[k])
            k += 1
            if item is not None:
                out.append(item)
    return out if k == len(parts) else None


def _encode_canonical(message: Message) -> list[Any]:
    out: list[Any] = []
    content: list[ContentItem] = []
    for part in message.parts:
        if isinstance(part, ContentItem):
            content.append(part)
            continue
        if content:
            out.append(_encode_message_item({}, content, message.role))
            content = []
        item = _encode_part_item(part)
        if item is not None:
            out.append(item)
    if content:
        out.append(_encode_message_item({}, content, message.role))
    return out


def _encode_message_item(
    record: Mapping[str, Any], parts: Sequence[ContentItem], role: Role
) -> dict[str, Any]:
    raw = record.get("raw")
    wire_role = "assistant" if role == "assistant" else "system" if role == "system" else "user"
    out: dict[str, Any] = dict(raw) if raw else {"type": "message", "role": wire_role}
    # Canonical items carry content parts, which every role accepts.
    form = record.get("content", "parts")
    content = content_value(
        parts,
        record.get("opaque"),
        form,
        list_form="parts",
        empty=[],
        encode=lambda: [_encode_content_part(p, role) for p in parts],
    )
    if content is not ABSENT:
        out["content"] = content
    return out


def _encode_content_part(part: ContentItem, role: str) -> dict[str, Any]:
    raw = part.provider_data.get(RAW)
    if isinstance(part, ImagePart):
        image: dict[str, Any] = (
            dict(raw) if raw else {"type": "input_image", "detail": part.detail or "auto"}
        )
        image["image_url"] = part.url
        if part.detail is not None:
            image["detail"] = part.detail
        return image
    if raw:
        return {**raw, "text": part.text}
    if role == "assistant":
        return {"type": "output_text", "text": part.text, "annotations": []}
    return {"type": "input_text", "text": part.text}


def _encode_part_item(part: Part) -> dict[str, Any] | None:
    raw: Mapping[str, Any] | None = part.provider_data.get(RAW)
    if isinstance(part, ReasoningPart):
        # Reasoning from another provider cannot be verified by OpenAI: not sent.
        return dict(raw) if raw is not None else None
    if isinstance(part, ToolCallPart):
        kind = raw.get("type") if raw is not None else None
        if raw is None:
            return {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": part.arguments,
            }
        if kind == "function_call":
            return {**raw, "call_id": part.id, "name": part.name, "arguments": part.arguments}
        if kind == "custom_tool_call":
            return {**raw, "call_id": part.id, "name": part.name, "input": part.arguments}
        return dict(raw)
    if isinstance(part, ToolResultPart):
        return _encode_output(part, raw)
    return None


def _encode_output(part: ToolResultPart, raw: Mapping[str, Any] | None) -> dict[str, Any]:
    data = part.provider_data
    kind = raw.get("type") if raw is not None else "function_call_output"
    if raw is None or kind in RICH_OUTPUTS:
        content = content_value(
            part.content,
            data.get(OPAQUE),
            data.get(CONTENT),
            list_form="parts",
            empty="",
            encode=lambda: [_encode_content_part(p, "tool") for p in part.content],
        )
        out: dict[str, Any] = (
            dict(raw) if raw is not None else {"type": "function_call_output", "call_id": ""}
        )
        out["call_id"] = part.tool_call_id
        if content is not ABSENT:
            out["output"] = content
        return out
    key = TEXT_OUTPUTS.get(str(kind))
    if key is not None and part.text != data.get(TEXT):
        return {**raw, key: part.text}
    return dict(raw)


# ------------------------------------------------------------------------------- validate


_INPUT_PARTS: Final = frozenset({"input_text", "input_image", "input_file", "input_audio"})
_OUTPUT_PARTS: Final = frozenset({"output_text", "refusal"})


def _validate_wire(body: Mapping[str, Any]) -> list[Violation]:
    found: list[Violation] = []
    value = body.get("input")
    items: list[Any] = value if isinstance(value, list) else []
    stateful = any(body.get(k) is not None for k in STATEFUL_FIELDS) or any(
        isinstance(item, dict) and item.get("type") == "item_reference" for item in items
    )
    if not items and not isinstance(value, str) and not stateful and "prompt" not in body:
        found.append(Violation(None, "no_input", "the request has no input items"))
    pending: dict[Any, tuple[int, str]] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            found.append(Violation(i, "invalid_item", f"expected an object, got {kind_of(item)}"))
            continue
        kind = str(item.get("type", "message" if "role" in item else ""))
        if kind == "message":
            _check_message(i, item, found)
        elif kind in CALLS:
            call_id = item.get(CALLS[kind])
            if call_id in pending:
                found.append(
                    Violation(
                        i, "duplicate_call_id", f"call id {call_id!r} repeats while unanswered"
                    )
                )
            pending[call_id] = (i, kind)
            if kind == "function_call":
                _check_arguments(i, item, found)
        elif kind in OUTPUTS:
            call_id = item.get(OUTPUTS[kind])
            if call_id in pending:
                del pending[call_id]
            elif not stateful:
                found.append(
                    Violation(
                        i,
                        "orphan_tool_output",
                        f"{kind} for {call_id!r} answers no earlier call in `input`",
                    )
                )
    for call_id, (index, kind) in pending.items():
        if kind in REQUIRED_ANSWER:
            found.append(
                Violation(
                    index,
                    "unanswered_tool_call",
                    f"{kind} {call_id!r} has no output item later in `input`",
                )
            )
    found.sort(key=lambda v: -1 if v.index is None else v.index)
    return found


def _check_message(i: int, item: Mapping[str, Any], found: list[Violation]) -> None:
    role = item.get("role")
    if role not in WIRE_ROLES:
        found.append(
            Violation(i, "unknown_role", f"unknown role {role!r}; expected one of {WIRE_ROLES}")
        )
        return
    content = item.get("content")
    if content is None or content == []:
        found.append(Violation(i, "missing_content", f"{role} message has no content"))
        return
    if not isinstance(content, list):
        return
    allowed = _OUTPUT_PARTS if role == "assistant" else _INPUT_PARTS
    wrong = _INPUT_PARTS if role == "assistant" else _OUTPUT_PARTS
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in wrong:
            found.append(
                Violation(
                    i,
                    "invalid_content_part",
                    f"content[{k}] is {kind!r}; a {role} message takes "
                    f"{' / '.join(sorted(allowed))}",
                )
            )


def _check_arguments(i: int, item: Mapping[str, Any], found: list[Violation]) -> None:
    arguments = item.get("arguments")
    call = ToolCallPart(str(item.get("call_id")), str(item.get("name")), str(arguments))
    if not isinstance(arguments, str) or call.parsed_arguments() is None:
        found.append(
            Violation(
                i,
                "invalid_tool_arguments",
                f"function_call {call.id!r} ({call.name}): arguments are not a JSON object",
            )
        )
