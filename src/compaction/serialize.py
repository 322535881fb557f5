"""The one neutral serializer of the message model (not a provider wire format).

Used for receipts, archives and handles: every field, `provider_data` included, as plain JSON
with each part tagged by its `kind`. `message_from_dict(message_to_dict(m)) == m`.
"""

from __future__ import annotations

from typing import Any, cast

from compaction.exceptions import DecodeError
from compaction.messages import (
    ROLES,
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


def part_to_dict(part: Part) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": part.kind}
    if isinstance(part, TextPart):
        data["text"] = part.text
    elif isinstance(part, ImagePart):
        data.update(url=part.url, media_type=part.media_type, detail=part.detail)
        data.update(width=part.width, height=part.height)
    elif isinstance(part, ToolCallPart):
        data.update(id=part.id, name=part.name, arguments=part.arguments)
    elif isinstance(part, ToolResultPart):
        data.update(tool_call_id=part.tool_call_id, is_error=part.is_error)
        data["content"] = [part_to_dict(p) for p in part.content]
    elif isinstance(part, ReasoningPart):
        data.update(text=part.text, signature=part.signature, encrypted=part.encrypted)
    else:
        data.update(text=part.text, replaced=part.replaced)
    if part.provider_data:
        data["provider_data"] = dict(part.provider_data)
    return data


def message_to_dict(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = {
        "role": message.role,
        "parts": [part_to_dict(p) for p in message.parts],
    }
    if message.name is not None:
        data["name"] = message.name
    if message.pinned:
        data["pinned"] = True
    if message.provider_data:
        data["provider_data"] = dict(message.provider_data)
    return data


def part_from_dict(data: dict[str, Any], where: str) -> Part:
    kind = data.get("kind")
    extra = dict(data.get("provider_data") or {})
    try:
        if kind == "text":
            return TextPart(data["text"], provider_data=extra)
        if kind == "image":
            return ImagePart(
                data["url"],
                media_type=data.get("media_type"),
                detail=data.get("detail"),
                width=data.get("width"),
                height=data.get("height"),
                provider_data=extra,
            )
        if kind == "tool_call":
            return ToolCallPart(data["id"], data["name"], data["arguments"], provider_data=extra)
        if kind == "tool_result":
            content = tuple(
                cast(TextPart | ImagePart, part_from_dict(p, f"{where}.content[{i}]"))
                for i, p in enumerate(data.get("content", []))
            )
            return ToolResultPart(
                data["tool_call_id"], content, bool(data.get("is_error")), provider_data=extra
            )
        if kind == "reasoning":
            return ReasoningPart(
                data.get("text", ""),
                signature=data.get("signature"),
                encrypted=data.get("encrypted"),
                provider_data=extra,
            )
        if kind == "summary":
            return SummaryPart(data["text"], int(data.get("replaced", 0)), provider_data=extra)
    except KeyError as e:
        raise DecodeError(f"missing field {e.args[0]!r}", location=where) from None
    raise DecodeError(f"unknown part kind {kind!r}", location=where)


def message_from_dict(data: dict[str, Any], where: str = "message") -> Message:
    role = data.get("role")
    if role not in ROLES:
        raise DecodeError(f"unknown role {role!r}", location=where)
    parts = tuple(
        part_from_dict(p, f"{where}.parts[{i}]") for i, p in enumerate(data.get("parts", []))
    )
    return Message(
        role=cast(Role, role),
        parts=parts,
        name=data.get("name"),
        pinned=bool(data.get("pinned")),
        provider_data=dict(data.get("provider_data") or {}),
    )
