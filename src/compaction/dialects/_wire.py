"""Small helpers every dialect shares: key-order replay, opaque items, data URIs, image sizes.

These functions are pure and work on plain JSON values. They must never import a dialect
module (the dialects import them) and never decode a whole image: dimensions are read from
the first bytes of the header only.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


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
