"""Context-window sizes of common models, matched by name prefix, extendable by the user.

A name matches the longest known prefix ("gpt-4o-mini-2024-07-18" → "gpt-4o"), after router
and cloud prefixes are stripped ("openrouter/anthropic/claude-3.5-sonnet",
"us.anthropic.claude-…"); keys that include such a prefix ("ollama/llama3.1") match the
full name first. Overrides come from a `ModelWindows` object (what configuration builds),
`register_context_window` (process-wide), or the `COMPACTION_CONTEXT_WINDOWS` environment
variable holding a JSON object of prefix → tokens. This module must never guess: a model it
does not know has no window (None), and the caller decides what that means.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from typing import Any

from compaction.exceptions import ConfigError
from compaction.tokens._models import longest_prefix, model_names

WINDOWS_ENV = "COMPACTION_CONTEXT_WINDOWS"

# Input context windows in tokens, from each provider's model pages.
DEFAULT_CONTEXT_WINDOWS: Mapping[str, int] = {
    # OpenAI
    "gpt-5": 400_000,
    "gpt-5-chat": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106": 128_000,
    "gpt-4-0125": 128_000,
    "gpt-4-vision": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-3.5-turbo-instruct": 4_096,
    "gpt-35-turbo": 16_385,
    "gpt-oss": 131_072,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
    # Anthropic
    "claude-2": 100_000,
    "claude-2.1": 200_000,
    "claude-instant": 100_000,
    "claude-3": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
    # Google
    "gemini-1.0-pro": 32_760,
    "gemini-pro": 32_760,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5": 1_048_576,
    # Meta (as published; servers such as Ollama often run them with a smaller window)
    "llama-3.1": 131_072,
    "llama-3.2": 131_072,
    "llama-3.3": 131_072,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "llama3-1": 131_072,
    "llama3-2": 131_072,
    "llama3-3": 131_072,
    "llama-3": 8_192,
    "llama3": 8_192,
}


def _validated(overrides: Mapping[Any, object], source: str) -> dict[str, int]:
    table: dict[str, int] = {}
    for model, tokens in overrides.items():
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(
                f"model name must be a non-empty string, got {model!r}", location=source
            )
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
            raise ConfigError(
                f"context window for {model!r} must be a positive integer, got {tokens!r}",
                location=source,
            )
        table[model.strip().lower()] = tokens
    return table


class ModelWindows:
    """A model → context-window table: the defaults (unless `defaults=False`) plus overrides.

    An override replaces a default with the same key and adds new prefixes; the longest
    matching prefix wins whichever table it came from.
    """

    def __init__(
        self, overrides: Mapping[str, int] | None = None, *, defaults: bool = True
    ) -> None:
        self._table: dict[str, int] = dict(DEFAULT_CONTEXT_WINDOWS) if defaults else {}
        self._lock = threading.Lock()
        if overrides:
            self._table.update(_validated(overrides, "context_windows"))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ModelWindows:
        """The defaults plus `COMPACTION_CONTEXT_WINDOWS` (a JSON object), when set."""
        return cls(_env_overrides(os.environ if environ is None else environ))

    def register(self, model: str, tokens: int) -> None:
        """Add or replace the window for `model` (a prefix) in this table."""
        entry = _validated({model: tokens}, "context_windows")
        with self._lock:
            self._table.update(entry)

    def with_overrides(self, overrides: Mapping[str, int]) -> ModelWindows:
        """A copy of this table with `overrides` applied."""
        copy = ModelWindows(defaults=False)
        copy._table = {**self._table, **_validated(overrides, "context_windows")}
        return copy

    def get(self, model: str | None) -> int | None:
        """The context window for `model`, or None when no prefix matches."""
        if not model:
            return None
        with self._lock:
            prefix = longest_prefix(model_names(model), self._table)
            return None if prefix is None else self._table[prefix]

    def matching_prefix(self, model: str) -> str | None:
        """The table key `model` matched, for messages that explain a window."""
        with self._lock:
            return longest_prefix(model_names(model), self._table)

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return dict(self._table)

    def __repr__(self) -> str:
        return f"ModelWindows({len(self._table)} models)"


def _env_overrides(environ: Mapping[str, str]) -> dict[str, int]:
    raw = environ.get(WINDOWS_ENV, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ConfigError(f"not valid JSON: {error}", location=WINDOWS_ENV) from error
    if not isinstance(value, dict):
        raise ConfigError("must be a JSON object of model prefix → tokens", location=WINDOWS_ENV)
    return _validated(value, WINDOWS_ENV)


class _ProcessWindows:
    """The process-wide table: defaults, then `COMPACTION_CONTEXT_WINDOWS`, then
    `register_context_window` calls; rebuilt only when the variable or registrations change."""

    def __init__(self) -> None:
        self.registered: dict[str, int] = {}
        self._built: tuple[str, int, ModelWindows] | None = None
        self._lock = threading.Lock()

    def table(self) -> ModelWindows:
        raw = os.environ.get(WINDOWS_ENV, "")
        with self._lock:
            built = self._built
            if built is None or built[0] != raw or built[1] != len(self.registered):
                table = ModelWindows(_env_overrides(os.environ)).with_overrides(self.registered)
                built = self._built = (raw, len(self.registered), table)
            return built[2]

    def register(self, entry: Mapping[str, int]) -> None:
        with self._lock:
            self.registered.update(entry)
            self._built = None

    def reset(self) -> None:
        with self._lock:
            self.registered.clear()
            self._built = None


_process = _ProcessWindows()


def register_context_window(model: str, tokens: int) -> None:
    """Set the window for `model` (a prefix) for every later `context_window` call."""
    _process.register(_validated({model: tokens}, "register_context_window"))


def context_window(model: str | None, windows: Mapping[str, int] | None = None) -> int | None:
    """The context window of `model` in tokens, or None when it is not known.

    `windows` adds or replaces entries for this call only. Process-wide entries come from
    `register_context_window` and `COMPACTION_CONTEXT_WINDOWS`.
    """
    table = _process.table()
    if windows:
        table = table.with_overrides(windows)
    return table.get(model)


def _reset_registrations() -> None:
    """Forget every `register_context_window` call (for tests)."""
    _process.reset()
