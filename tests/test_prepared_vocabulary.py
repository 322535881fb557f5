"""Prepared vocabularies (`compaction.tokens.prepared`): the same encoding as tiktoken's, read
from the copy only when the copy matches, and no error when the cache cannot be written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from compaction.tokens import prepared
from compaction.tokens import tiktoken_counter as tiktoken_module

from .helpers import coding_session

NAME = tiktoken_module.OFFLINE_ENCODING


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(prepared.CACHE_ENV, str(tmp_path))
    return tmp_path / "vocabularies" / f"{NAME}.bin"


def _vocabulary() -> str:
    path = tiktoken_module._vocabulary_file(NAME)
    assert path is not None
    return path


def _texts() -> list[str]:
    texts = [
        "special-looking text <|endoftext|> stays plain text",
        "Ünïcödé, 日本語のテキスト, emoji 🚀🔥\r\n\ttabs   and spaces  ",
    ]
    for message in coding_session(6).messages:
        texts.extend(part.text for part in message.parts if hasattr(part, "text"))
    return texts


def _same_as_tiktoken(encoding: Any) -> None:
    reference = tiktoken.get_encoding(NAME)
    assert encoding.name == reference.name
    assert encoding._mergeable_ranks == reference._mergeable_ranks
    assert encoding._special_tokens == reference._special_tokens
    assert encoding._pat_str == reference._pat_str
    for text in _texts():
        assert encoding.encode_ordinary(text) == reference.encode_ordinary(text)


def _forged(cache: Path, name: str) -> None:
    """A copy that matches the key but names its encoding `name`: loading it shows the copy
    was read."""
    constructor = prepared._constructor(NAME)
    key = prepared._key(NAME, _vocabulary(), constructor)
    assert key is not None
    prepared._write(str(cache), key, {**constructor(), "name": name})


def test_first_load_builds_with_tiktoken_and_writes_the_copy(cache: Path) -> None:
    encoding = prepared.load_encoding(NAME, _vocabulary())
    _same_as_tiktoken(encoding)
    assert cache.is_file()
    assert [p.name for p in cache.parent.iterdir()] == [cache.name]  # no temporary left


def test_a_later_load_reads_the_copy_and_counts_the_same(cache: Path) -> None:
    prepared.load_encoding(NAME, _vocabulary())
    _same_as_tiktoken(prepared.load_encoding(NAME, _vocabulary()))
    _forged(cache, "read from the copy")
    assert prepared.load_encoding(NAME, _vocabulary()).name == "read from the copy"


def test_a_copy_from_another_vocabulary_file_is_not_used(cache: Path, tmp_path: Path) -> None:
    _forged(cache, "stale")
    edited = tmp_path / "edited.tiktoken"
    edited.write_bytes(Path(_vocabulary()).read_bytes() + b"\n")
    assert prepared.load_encoding(NAME, str(edited)).name == NAME
    # ... and is replaced by one made for that file.
    assert prepared.load_encoding(NAME, str(edited)).name == NAME


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: data[:-10] + bytes([data[-10] ^ 1]) + data[-9:],
        lambda data: b"",
        lambda data: b"not a prepared vocabulary\n" + data,
    ],
    ids=["truncated", "one bit flipped", "empty", "foreign header"],
)
def test_a_damaged_copy_is_ignored_and_rewritten(cache: Path, damage: Any) -> None:
    prepared.load_encoding(NAME, _vocabulary())
    good = cache.read_bytes()
    cache.write_bytes(damage(good))
    _same_as_tiktoken(prepared.load_encoding(NAME, _vocabulary()))
    assert cache.read_bytes() == good


def test_a_cache_that_cannot_be_written_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a file, not a directory"
    blocker.write_text("")
    monkeypatch.setenv(prepared.CACHE_ENV, str(blocker))
    _same_as_tiktoken(prepared.load_encoding(NAME, _vocabulary()))
    assert blocker.read_text() == ""


def test_an_empty_cache_setting_keeps_no_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(prepared.CACHE_ENV, "")
    monkeypatch.chdir(tmp_path)
    assert prepared.cache_dir() is None
    _same_as_tiktoken(prepared.load_encoding(NAME, _vocabulary()))
    assert list(tmp_path.iterdir()) == []


def test_an_unreadable_vocabulary_file_builds_without_a_copy(cache: Path, tmp_path: Path) -> None:
    _same_as_tiktoken(prepared.load_encoding(NAME, str(tmp_path / "missing.tiktoken")))
    assert not cache.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG layout is Linux's")
def test_the_default_cache_is_the_users_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(prepared.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert prepared.cache_dir() == str(tmp_path / "compaction" / "vocabularies")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert prepared.cache_dir() == str(tmp_path / ".cache" / "compaction" / "vocabularies")


def test_the_counter_loads_through_the_prepared_copy(cache: Path) -> None:
    tiktoken_module._clear_caches()
    try:
        counter = tiktoken_module.TiktokenCounter(NAME, offline=True)
        assert cache.is_file()
        reference = tiktoken.get_encoding(NAME)
        for text in _texts():
            assert counter.count_text(text) == len(reference.encode_ordinary(text))
    finally:
        tiktoken_module._clear_caches()
