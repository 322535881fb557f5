"""Small helpers every dialect shares: the request envelope, key-order replay, opaque items,
content forms, data URIs, image sizes.

These functions are pure and work on plain JSON values and the message model. They must never
import a dialect module (the dialects import them) and never decode a whole image: dimensions
are read from the first bytes of the header only. Where dialects word an error differently,
the wording is passed in; the `provider_data` key names (`openai.keys`, `anthropic.keys`, …)
are always passed in too.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

from compaction.exceptions import DecodeError
from compaction.messages import (
    Conversation,
    Message,
    Part,
    Role,
    SummaryPart,
    TextPart,
    parse_summary_text,
)

T = TypeVar("T")

# Wire items a dialect does not model, as ((position in their list, item), …).
Opaque = tuple[tuple[int, Any], ...]


class Absent:
    """Marks a key that must not be written (the original object had no such key)."""


ABSENT: Final = Absent()


def kind_of(value: Any) -> str:
    """A JSON type name for error messages ("object", "array", "string", …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def extras(raw: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    """The keys of `raw` a dialect does not model, kept verbatim for replay."""
    skip = set(known)
    return {k: v for k, v in raw.items() if k not in skip}


def shape(
    known: Mapping[str, Any],
    extra: Mapping[str, Any] | None,
    keys: Sequence[str] | None,
) -> dict[str, Any]:
    """Known fields over replayed extras, in the original key order when it was recorded.

    A known field wins over an extra of the same name: an extra such as `tool_calls: null`
    is only replayed while the message still has no tool calls.
    """
    merged = dict(known)
    if extra:
        for key, value in extra.items():
            merged.setdefault(key, value)
    if not keys:
        return merged
    out = {k: merged[k] for k in keys if k in merged}
    if len(out) != len(merged):
        out.update((k, v) for k, v in merged.items() if k not in out)
    return out


def replay_data(
    raw: Mapping[str, Any], known: Iterable[str], *, keys: str, extra: str
) -> dict[str, Any]:
    """`{keys: raw's key order, extra: raw's unmodelled keys}`; no `extra` entry when none."""
    data: dict[str, Any] = {keys: tuple(raw)}
    rest = extras(raw, known)
    if rest:
        data[extra] = rest
    return data


def split_opaque(
    raws: Sequence[Any], location: str, decode: Callable[[Any, str], T | None]
) -> tuple[list[T], Opaque]:
    """Decode each item of a wire list (at `location[j]`); the items `decode` does not model
    (None) are kept as (position, item), for `with_opaque` to put back."""
    items: list[T] = []
    opaque: list[tuple[int, Any]] = []
    for j, raw in enumerate(raws):
        item = decode(raw, f"{location}[{j}]")
        if item is None:
            opaque.append((j, raw))
        else:
            items.append(item)
    return items, tuple(opaque)


def with_opaque(items: list[Any], opaque: Sequence[tuple[int, Any]] | None) -> list[Any]:
    """Put opaque wire items back at the positions they were read from.

    Positions are replayed in ascending order so each lands where it was; when a strategy
    removed modelled items, a position past the end appends instead.
    """
    if not opaque:
        return items
    out = list(items)
    for position, item in sorted(opaque, key=lambda pair: pair[0]):
        out.insert(min(position, len(out)), item)
    return out


def content_value(
    items: Sequence[Part],
    opaque: Sequence[tuple[int, Any]] | None,
    form: str | None,
    *,
    list_form: str,
    empty: Any,
    encode: Callable[[], list[Any]],
) -> Any:
    """A message's (or tool result's) content as written back.

    No content: the form it was read in (`"absent"` gives `ABSENT`, `"null"` None, `list_form`
    an empty list, `"string"` ""), or `empty` when none was recorded. A lone text: a string,
    unless it was read as a list. Otherwise `encode()` (the wire items of `items`, called only
    here) with the opaque items put back in place.
    """
    if not items and not opaque:
        if form == "absent":
            return ABSENT
        if form == "null":
            return None
        if form == list_form:
            return []
        if form == "string":
            return ""
        return empty
    if form != list_form and not opaque and len(items) == 1:
        only = items[0]
        if isinstance(only, TextPart | SummaryPart):
            return only.text
    return with_opaque(encode(), opaque)


def text_part(text: str, data: dict[str, Any], role: str) -> TextPart | SummaryPart:
    """A wire text as a part: a `SummaryPart` when user or assistant text opens with a summary
    header, a `TextPart` otherwise."""
    summary = parse_summary_text(text) if role in ("user", "assistant") else None
    if summary is not None:
        return SummaryPart(summary.text, summary.replaced, provider_data=data)
    return TextPart(text, provider_data=data)


def message_role(
    raw: Any, location: str, roles: Mapping[str, Role], expected: str
) -> tuple[str, Role]:
    """(wire role, model role) of a wire message, which must be an object whose `role` is a
    key of `roles`; `expected` names the accepted roles in the error."""
    if not isinstance(raw, dict):
        raise DecodeError(f"expected a message object, got {kind_of(raw)}", location=location)
    if "role" not in raw:
        raise DecodeError("missing `role`", location=f"{location}.role")
    wire_role = raw["role"]
    role = roles.get(wire_role) if isinstance(wire_role, str) else None
    if role is None:
        raise DecodeError(
            f"unknown role {wire_role!r}; expected {expected}",
            location=f"{location}.role",
        )
    return wire_role, role


def decode_tools(value: Any) -> tuple[Mapping[str, Any], ...]:
    """A request's `tools`: a list of tool objects, kept as the wire sent them."""
    if not isinstance(value, list):
        raise DecodeError(
            f"expected a list of tool objects, got {kind_of(value)}", location="tools"
        )
    for j, tool in enumerate(value):
        if not isinstance(tool, dict):
            raise DecodeError(
                f"expected a tool object, got {kind_of(tool)}", location=f"tools[{j}]"
            )
    return tuple(value)


def decode_request(
    payload: Any,
    *,
    dialect: str,
    form: str,
    keys: str,
    extra: str,
    not_a_request: str,
    no_messages: str,
    read_messages: Callable[[list[Any], str], list[Message]],
    leading: Callable[[dict[str, Any]], tuple[list[Message], tuple[str, ...]]] | None = None,
) -> Conversation:
    """A chat request as a `Conversation`: a bare list of messages, or an object with
    `messages` (plus `model`, `tools` and any other field, replayed from `extra`).

    `form`, `keys`, `extra` are the dialect's `provider_data` keys; `not_a_request` (", got
    <kind>" is added) and `no_messages` are its error wording. `read_messages(raws, location)`
    decodes the messages; `leading(request)` returns the messages that other request fields
    put before them (Anthropic's `system`) and the names of the fields it read.
    """
    if isinstance(payload, list):
        messages = read_messages(payload, "")
        return Conversation(tuple(messages), dialect=dialect, provider_data={form: "list"})
    if not isinstance(payload, dict):
        raise DecodeError(f"{not_a_request}, got {kind_of(payload)}", location="payload")
    if "messages" not in payload:
        raise DecodeError(no_messages, location="messages")
    raw_messages = payload["messages"]
    if not isinstance(raw_messages, list):
        raise DecodeError(f"expected a list, got {kind_of(raw_messages)}", location="messages")
    known = {"messages"}
    model: str | None = None
    if isinstance(payload.get("model"), str):
        model = payload["model"]
        known.add("model")
    tools: tuple[Mapping[str, Any], ...] = ()
    if "tools" in payload:
        tools = decode_tools(payload["tools"])
        known.add("tools")
    head: list[Message] = []
    if leading is not None:
        head, fields = leading(payload)
        known.update(fields)
    data: dict[str, Any] = {form: "object", **replay_data(payload, known, keys=keys, extra=extra)}
    messages = head + read_messages(raw_messages, "messages")
    return Conversation(
        tuple(messages), tools=tools, model=model, dialect=dialect, provider_data=data
    )


def encode_request(
    conversation: Conversation,
    messages: list[dict[str, Any]],
    *,
    form: str,
    keys: str,
    extra: str,
    system: Any = ABSENT,
) -> Any:
    """The request written back around its wire `messages`: the bare list when it was read as
    one and there is no `system` to carry; otherwise an object of `model`, `system` (when
    given), `messages` and `tools` over the replayed fields, in the recorded key order."""
    data = conversation.provider_data
    if data.get(form) == "list" and system is ABSENT:
        return messages
    recorded = data.get(keys)
    known: dict[str, Any] = {}
    if conversation.model is not None:
        known["model"] = conversation.model
    if system is not ABSENT:
        known["system"] = system
    known["messages"] = messages
    if conversation.tools or (recorded and "tools" in recorded):
        known["tools"] = list(conversation.tools)
    return shape(known, data.get(extra), recorded)


def data_uri(media_type: str, data: str) -> str:
    return f"data:{media_type};base64,{data}"


def split_data_uri(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a base64 `data:` URI, or None for anything else."""
    if not url.startswith("data:"):
        return None
    header, sep, data = url.partition(",")
    if not sep or not header.endswith(";base64"):
        return None
    return header[5 : -len(";base64")], data


def media_type_of(url: str) -> str | None:
    parts = split_data_uri(url)
    return parts[0] if parts else None


# A JPEG's size sits in its SOF segment, after any EXIF/ICC segments; 64 KiB of header covers
# nearly every real file without decoding the picture.
_JPEG_SCAN_BYTES = 64 * 1024


def image_size(url: str) -> tuple[int, int] | None:
    """(width, height) of a base64 `data:` URI image, read from its header; None if unknown.

    PNG, GIF, WebP and JPEG are recognised. Only a bounded prefix is base64-decoded.
    """
    parts = split_data_uri(url)
    if parts is None:
        return None
    data = parts[1]
    head = _b64_prefix(data, 32)
    if head is None:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and len(head) >= 24:
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        body = _b64_prefix(data, _JPEG_SCAN_BYTES)
        return _jpeg_size(body) if body is not None else None
    return None


def _b64_prefix(data: str, nbytes: int) -> bytes | None:
    chars = -(-nbytes // 3) * 4
    chunk = data[:chars]
    chunk = chunk[: len(chunk) - len(chunk) % 4]
    try:
        return base64.b64decode(chunk, validate=False)
    except (binascii.Error, ValueError):
        return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(head) >= 30:
        width = int.from_bytes(head[26:28], "little") & 0x3FFF
        height = int.from_bytes(head[28:30], "little") & 0x3FFF
        return width, height
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


_JPEG_SOF = frozenset(
    {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
)


def _jpeg_size(body: bytes) -> tuple[int, int] | None:
    i = 2
    n = len(body)
    while i + 9 <= n:
        if body[i] != 0xFF:
            return None
        marker = body[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in _JPEG_SOF:
            height = int.from_bytes(body[i + 5 : i + 7], "big")
            width = int.from_bytes(body[i + 7 : i + 9], "big")
            return width, height
        length = int.from_bytes(body[i + 2 : i + 4], "big")
        if length < 2:
            return None
        i += 2 + length
    return None
