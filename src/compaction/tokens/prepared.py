"""Prepared vocabularies: tiktoken encodings loaded from a copy in the user's cache directory.

tiktoken builds an encoding from its plugin's constructor, which parses the vocabulary file
(a base64 decode per token: ~50-60 ms for cl100k_base in a fresh process, paid by every
command that counts). This module keeps what that constructor returned (the name, split
pattern, ranks and special tokens) in marshal form, which loads in ~15 ms, and hands it to
tiktoken's own `Encoding` (whose construction, ~35 ms, it cannot spare).

A copy is used only when its key matches: the sha256 of the vocabulary file it came from,
the source of the plugin module that built it, tiktoken's version and the marshal format;
and when its own bytes are intact (a sha256 in its header). Anything else (missing, stale,
truncated, unreadable) is ignored: the encoding is built the normal way and the copy is
rewritten atomically (a temporary file renamed over it). A directory that cannot be written
costs the speed-up, never an error.

This module must never change a count (the `Encoding` is tiktoken's class, fed the very
values tiktoken's constructor returned), never store anything derived from counted text, and
never reach the network: its callers hand it a vocabulary file that is already local.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import tempfile
from typing import Any

CACHE_ENV = "COMPACTION_CACHE_DIR"
# Bumped whenever the file layout below changes.
_FORMAT = b"compaction-prepared-vocabulary 1"


def cache_dir() -> str | None:
    """Where prepared vocabularies live: `$COMPACTION_CACHE_DIR` (empty: none are kept),
    else the platform's per-user cache directory (`$XDG_CACHE_HOME/compaction` or
    `~/.cache/compaction` on Linux, `~/Library/Caches/compaction` on macOS,
    `%LOCALAPPDATA%\\compaction\\Cache` on Windows), under `vocabularies/`."""
    if CACHE_ENV in os.environ:
        base = os.environ[CACHE_ENV]
        return os.path.join(os.path.expanduser(base), "vocabularies") if base else None
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        root = os.path.join(home, "Library", "Caches", "compaction")
    elif os.name == "nt":
        local = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        root = os.path.join(local, "compaction", "Cache")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
        root = os.path.join(base, "compaction")
    return os.path.join(root, "vocabularies")


def load_encoding(encoding_name: str, vocabulary_file: str) -> Any:
    """The tiktoken `Encoding` named `encoding_name`, whose plugin reads `vocabulary_file`:
    from its prepared copy when one matches, else built by tiktoken (and the copy written).

    Raises what tiktoken raises when the encoding cannot be built."""
    import tiktoken

    constructor = _constructor(encoding_name)
    key = _key(encoding_name, vocabulary_file, constructor)
    directory = cache_dir()
    path = None if directory is None else os.path.join(directory, f"{encoding_name}.bin")
    if key is not None and path is not None:
        spec = _read(path, key)
        if spec is not None:
            try:
                return tiktoken.Encoding(**spec)
            except (TypeError, ValueError):
                pass  # not what this module writes: build it again below
    spec = constructor()
    encoding = tiktoken.Encoding(**spec)
    if key is not None and path is not None:
        _write(path, key, spec)
    return encoding


def _constructor(encoding_name: str) -> Any:
    """The plugin function tiktoken calls for `encoding_name` (its plugin registry: every
    `tiktoken_ext` module's `ENCODING_CONSTRUCTORS`)."""
    import tiktoken.registry

    if encoding_name not in tiktoken.registry.list_encoding_names():
        raise ValueError(f"unknown tiktoken encoding {encoding_name!r}")
    constructors = tiktoken.registry.ENCODING_CONSTRUCTORS or {}
    return constructors[encoding_name]


def _key(encoding_name: str, vocabulary_file: str, constructor: Any) -> bytes | None:
    """What a prepared copy must have been made from to be used; None when that cannot be
    told (the vocabulary file or the plugin's source is not readable), so no copy is kept."""
    import tiktoken

    module = sys.modules.get(getattr(constructor, "__module__", ""))
    try:
        with open(vocabulary_file, "rb") as handle:
            vocabulary = hashlib.sha256(handle.read()).hexdigest()
        with open(getattr(module, "__file__", None) or "", "rb") as handle:
            plugin = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None
    parts = (
        encoding_name,
        vocabulary,
        plugin,
        tiktoken.__version__,
        f"marshal {marshal.version} python {sys.version_info[0]}.{sys.version_info[1]}",
    )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest().encode()


def _read(path: str, key: bytes) -> dict[str, Any] | None:
    """The constructor output stored at `path` for `key`; None when it is not usable."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    header, _, payload = data.partition(b"\n")
    if header != _header(key, payload):
        return None
    try:
        spec = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return spec if isinstance(spec, dict) else None


def _write(path: str, key: bytes, spec: dict[str, Any]) -> None:
    """Store `spec` at `path` for `key`, atomically; silently not when that fails."""
    try:
        payload = marshal.dumps(spec)
    except ValueError:
        return  # a plugin returned a value marshal cannot store: keep building it
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".vocabulary-", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(_header(key, payload) + b"\n" + payload)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _header(key: bytes, payload: bytes) -> bytes:
    return b" ".join((_FORMAT, key, hashlib.sha256(payload).hexdigest().encode()))


__all__ = ["CACHE_ENV", "cache_dir", "load_encoding"]
