"""Image token costs by each provider's published formula, and image sizes read from headers.

An image costs what its pixel size says, never what its base64 length says: a 2 MB
screenshot is about 1,100 tokens to OpenAI, not 700,000. Sizes come from `ImagePart.width`
and `.height` when the dialect set them, otherwise from the file header inside a `data:` URI
(PNG, GIF, JPEG, WebP, BMP). This module must never decode a whole image: it decodes only
the few bytes of base64 that hold the header (for JPEG, the segment headers it skips over).
"""

from __future__ import annotations

import binascii
import math
import struct
from collections.abc import Callable

from compaction.messages import ImagePart

# An image whose size cannot be known (a remote URL, an unreadable header) is assumed to be a
# full-HD screenshot, the common case for agents; both formulas then give a high-side count,
# and the caller marks the total estimated.
DEFAULT_IMAGE_SIZE: tuple[int, int] = (1920, 1080)

OPENAI_LOW_DETAIL_TOKENS = 85
OPENAI_BASE_TOKENS = 85
OPENAI_TILE_TOKENS = 170
OPENAI_MAX_SIDE = 2048
OPENAI_SHORT_SIDE = 768
OPENAI_TILE = 512

ANTHROPIC_MAX_LONG_EDGE = 1568
ANTHROPIC_PIXELS_PER_TOKEN = 750
# Anthropic shrinks anything above about 1.15 megapixels, so no image costs more than this.
ANTHROPIC_MAX_IMAGE_TOKENS = 1600


def _check_size(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}×{height}")


def openai_image_tokens(width: int, height: int, detail: str | None = None) -> int:
    """OpenAI's vision cost: `low` detail is a flat 85; `high` and `auto` (counted as high,
    the most `auto` can cost) fit the image in 2048×2048, shrink its short side to 768, and
    charge 170 per 512-pixel tile plus 85.

    This is the GPT-4o / GPT-4.1 / o-series formula; the -mini models that bill images by
    32-pixel patches are not modelled.
    """
    if detail is not None and detail.lower() == "low":
        return OPENAI_LOW_DETAIL_TOKENS
    _check_size(width, height)
    w, h = float(width), float(height)
    if max(w, h) > OPENAI_MAX_SIDE:
        scale = OPENAI_MAX_SIDE / max(w, h)
        w, h = round(w * scale), round(h * scale)
    if min(w, h) > OPENAI_SHORT_SIDE:
        scale = OPENAI_SHORT_SIDE / min(w, h)
        w, h = round(w * scale), round(h * scale)
    tiles = math.ceil(w / OPENAI_TILE) * math.ceil(h / OPENAI_TILE)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's vision cost: fit the long edge in 1568 pixels, then width × height / 750,
    at most about 1600 (larger images are shrunk to ~1.15 megapixels first)."""
    _check_size(width, height)
    w, h = float(width), float(height)
    if max(w, h) > ANTHROPIC_MAX_LONG_EDGE:
        scale = ANTHROPIC_MAX_LONG_EDGE / max(w, h)
        w, h = max(1, round(w * scale)), max(1, round(h * scale))
    return min(ANTHROPIC_MAX_IMAGE_TOKENS, math.ceil(w * h / ANTHROPIC_PIXELS_PER_TOKEN))


ByteReader = Callable[[int, int], bytes]
"""Returns the bytes in [start, end) of an image, or fewer at its end."""

_HEAD = 32
_MAX_JPEG_SEGMENTS = 512
# JPEG start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


def _jpeg_size(read: ByteReader) -> tuple[int, int] | None:
    position = 2
    for _ in range(_MAX_JPEG_SEGMENTS):
        header = read(position, position + 2)
        if len(header) < 2 or header[0] != 0xFF:
            return None
        marker = header[1]
        if marker == 0xFF:  # fill byte before a marker
            position += 1
            continue
        if marker in _JPEG_STANDALONE:
            position += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image or start of scan before any frame header
            return None
        segment = read(position + 2, position + 9)
        if len(segment) < 2:
            return None
        length = struct.unpack(">H", segment[:2])[0]
        if marker in _JPEG_SOF:
            if len(segment) < 7:
                return None
            height, width = struct.unpack(">HH", segment[3:7])
            return (width, height) if width and height else None
        if length < 2:
            return None
        position += 2 + length
    return None


def _size_from(read: ByteReader) -> tuple[int, int] | None:
    head = read(0, _HEAD)
    size: tuple[int, int] | None = None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and len(head) >= 24:
        size = struct.unpack(">II", head[16:24])
    elif head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        size = struct.unpack("<HH", head[6:10])
    elif head[:2] == b"\xff\xd8":
        size = _jpeg_size(read)
    elif head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        chunk = head[12:16]
        if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a" and len(head) >= 30:
            w, h = struct.unpack("<HH", head[26:30])
            size = (w & 0x3FFF, h & 0x3FFF)
        elif chunk == b"VP8L" and head[20:21] == b"\x2f" and len(head) >= 25:
            bits = struct.unpack("<I", head[21:25])[0]
            size = ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        elif chunk == b"VP8X" and len(head) >= 30:
            size = (
                int.from_bytes(head[24:27], "little") + 1,
                int.from_bytes(head[27:30], "little") + 1,
            )
    elif head[:2] == b"BM" and len(head) >= 26:
        if struct.unpack("<I", head[14:18])[0] == 12:  # OS/2 BITMAPCOREHEADER
            size = struct.unpack("<HH", head[18:22])
        else:
            w, h = struct.unpack("<ii", head[18:26])
            size = (abs(w), abs(h))
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def sniff_image_size(data: bytes) -> tuple[int, int] | None:
    """`(width, height)` from the leading bytes of a PNG, GIF, JPEG, WebP or BMP file."""
    return _size_from(lambda start, end: data[start:end])


class _Base64Bytes:
    """Random access to the bytes behind a base64 string, decoding only the slice asked for.

    Every 4 characters hold 3 bytes, so byte `n` lives in the quartet starting at character
    `n // 3 * 4`; JPEG headers can thus be skipped over without decoding the image.
    """

    def __init__(self, text: str) -> None:
        if any(space in text for space in (" ", "\n", "\r", "\t")):
            text = "".join(text.split())
        self._text = text

    def read(self, start: int, end: int) -> bytes:
        if end <= start or start < 0:
            return b""
        first = start // 3
        chunk = self._text[first * 4 : -(-end // 3) * 4]
        chunk += "=" * (-len(chunk) % 4)
        try:
            decoded = binascii.a2b_base64(chunk)
        except binascii.Error:
            return b""
        offset = start - first * 3
        return decoded[offset : offset + (end - start)]


_PERCENT_PREFIX_CHARS = 64 * 1024


def data_uri_reader(url: str) -> ByteReader | None:
    """A `ByteReader` over a `data:` URI's payload, or None for any other URL."""
    if not url.startswith("data:"):
        return None
    header, comma, payload = url[5:].partition(",")
    if not comma:
        return None
    if header.lower().endswith(";base64"):
        return _Base64Bytes(payload).read
    # Percent-encoded payloads are rare for raster images; their header is near the start.
    # (Imported here: urllib.parse would cost every start of the command line.)
    import urllib.parse

    head = urllib.parse.unquote_to_bytes(payload[:_PERCENT_PREFIX_CHARS])
    return lambda start, end: head[start:end]


def image_size(part: ImagePart) -> tuple[int, int] | None:
    """The image's `(width, height)`: as declared on the part, else read from a `data:` URI's
    header, else None (a remote URL is never fetched)."""
    if part.width and part.height and part.width > 0 and part.height > 0:
        return (part.width, part.height)
    read = data_uri_reader(part.url)
    return _size_from(read) if read is not None else None
