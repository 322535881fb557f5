"""Translate what a provider answered with, or what the HTTP stack raised, into the
`ProviderError` tree; and load an optional SDK with an install hint.

The adapters catch their SDK's exceptions and hand the facts (HTTP status, error body,
headers) to `error_from_response`, which picks the most specific class:

    context overflow   the message names the window (`OVERFLOW_PHRASES`), or HTTP 413
    authentication     401, 403, or an `authentication_error` / `permission_error` type
    rate limit         429 or `rate_limit_error` (not retryable when the quota is spent)
    unsupported        a structured request whose error names the structured-output
                       parameter (`response_format`, `tools`, …), whatever the status
    timeout            408, 504, or `timeout_error`
    server error       5xx (529 overloaded included), a server error type, or an error
                       that arrived inside a 200 stream without saying what it was
    anything else      a plain `ProviderError` (not retryable)

Errors that arrive inside a 200 stream are classified the same way, from the status code
the error object carries when it carries one; `status` on the raised error stays 200, the
HTTP status actually received.

This module must never import an SDK at import time, and never decide on a retry: it only
says whether one may help (`retryable`, `retry_after`).
"""

from __future__ import annotations

import email.utils
import json
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Final

from compaction.exceptions import (
    AuthenticationError,
    BadResponseError,
    ContextOverflowError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    UnsupportedError,
)

__all__ = [
    "OVERFLOW_PHRASES",
    "ErrorDetails",
    "empty_answer",
    "error_details",
    "error_from_response",
    "error_from_transport",
    "import_sdk",
    "is_context_overflow",
    "retry_after_from_headers",
]

# Lower-case fragments of the messages servers send when the request does not fit the
# model's window. Matched against the message and the whole error object (codes, types).
OVERFLOW_PHRASES: Final = (
    "maximum context length",  # OpenAI, vLLM, llama-cpp-python, OpenRouter, Groq
    "context_length_exceeded",  # OpenAI's error code
    "context length exceeded",
    "prompt is too long",  # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    "exceed context limit",  # Anthropic: "input length and `max_tokens` exceed context limit"
    "exceeds the available context size",  # llama.cpp server
    "exceed_context_size_error",  # llama.cpp server's error type
    "exceed context window",  # llama-cpp-python: "Requested tokens (N) exceed context window"
    "context size has been exceeded",  # older llama.cpp server
    "exceeds the maximum number of tokens",  # Gemini's OpenAI-compatible endpoint
    "too many tokens",
    "input is too long",
)

# A 429 that waiting will not fix: the account is out of quota, or one request is larger
# than the per-minute budget.
_HOPELESS_RATE_LIMIT: Final = ("insufficient_quota", "request too large")

_AUTH_TYPES: Final = frozenset({"authentication_error", "permission_error"})
_RATE_TYPES: Final = frozenset({"rate_limit_error", "rate_limit_exceeded"})
_TIMEOUT_TYPES: Final = frozenset({"timeout_error"})
_SERVER_TYPES: Final = frozenset(
    {
        "api_error",
        "overloaded_error",
        "server_error",
        "internal_server_error",
        "service_unavailable",
    }
)


def import_sdk(module: str, *, extra: str) -> ModuleType:
    """Import an optional SDK, or fail with an `ImportError` naming the extra to install."""
    try:
        return import_module(module)
    except ImportError as e:
        raise ImportError(
            f"this provider needs the {module!r} package: pip install 'llm-compaction[{extra}]'",
            name=module,
        ) from e


@dataclass(frozen=True, slots=True)
class ErrorDetails:
    """What an error body says: its message, type, code, and all of it as searchable text."""

    message: str
    type: str | None = None
    code: str | int | None = None
    text: str = ""


def error_details(body: object, fallback: str = "") -> ErrorDetails:
    """Read an error body in any of the common shapes: `{"error": {...}}` (OpenAI, Anthropic,
    llama.cpp), a bare error object (vLLM's stream errors, the OpenAI SDK's `body`),
    FastAPI's `{"detail": [...]}`, or plain text."""
    inner: object = body
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        inner = body["error"]
    if isinstance(inner, Mapping):
        message = inner.get("message")
        if not isinstance(message, str) or not message:
            detail = inner.get("detail")
            message = detail if isinstance(detail, str) else fallback
        kind = inner.get("type")
        code = inner.get("code")
        dumped = json.dumps(inner, default=str, ensure_ascii=False)
        return ErrorDetails(
            message=message or dumped,
            type=kind if isinstance(kind, str) else None,
            code=code if isinstance(code, str | int) and not isinstance(code, bool) else None,
            text=f"{message} {fallback} {dumped}".lower(),
        )
    if isinstance(inner, str) and inner.strip():
        return ErrorDetails(message=inner.strip(), text=f"{inner} {fallback}".lower())
    return ErrorDetails(message=fallback or "no error message", text=fallback.lower())


def is_context_overflow(text: str) -> bool:
    """True when an error text says the request did not fit the model's context window."""
    lowered = text.lower()
    return any(phrase in lowered for phrase in OVERFLOW_PHRASES)


def error_from_response(
    provider: str,
    *,
    status: int | None,
    details: ErrorDetails,
    structured_words: tuple[str, ...] = (),
    in_stream: bool = False,
    retry_after: float | None = None,
) -> ProviderError:
    """The most specific `ProviderError` for an error answer (see the module docstring).

    `structured_words` are the request parameters that carry the structured-output ask;
    pass them only when the request asked for structured output. `in_stream` means the
    error arrived inside a 200 streaming response.
    """
    kind = details.type.lower() if details.type else None
    # A stream error carries its own code when the server knows what went wrong.
    code = details.code if isinstance(details.code, int) and 400 <= details.code < 600 else None
    effective = code if in_stream else status
    label = f"error inside a {status or 200} stream" if in_stream else f"HTTP {status}"
    if details.type:
        label += f" ({details.type})"
    message = f"{label}: {details.message}"
    error: ProviderError
    if effective == 429 or kind in _RATE_TYPES:
        error = RateLimitError(message, provider=provider, status=status)
        if any(word in details.text for word in _HOPELESS_RATE_LIMIT):
            error.retryable = False
    elif effective in (401, 403) or kind in _AUTH_TYPES:
        error = AuthenticationError(message, provider=provider, status=status)
    elif is_context_overflow(details.text) or effective == 413 or kind == "request_too_large":
        error = ContextOverflowError(message, provider=provider, status=status)
    elif structured_words and any(word in details.text for word in structured_words):
        error = UnsupportedError(
            f"structured output rejected: {message}", provider=provider, status=status
        )
    elif effective in (408, 504) or kind in _TIMEOUT_TYPES:
        error = ProviderTimeoutError(message, provider=provider, status=status)
    elif (effective is not None and effective >= 500) or kind in _SERVER_TYPES:
        error = ServerError(message, provider=provider, status=status)
    elif in_stream and effective is None:
        # Bad requests are refused before the answer starts; an error after a 200 is the
        # server failing mid-answer, so trying again may help.
        error = ServerError(message, provider=provider, status=status)
    else:
        error = ProviderError(message, provider=provider, status=status)
    if retry_after is not None and error.retryable:
        error.retry_after = retry_after
    return error


def error_from_transport(provider: str, error: BaseException) -> ProviderError | None:
    """A timeout or connection failure raised by httpx or httpx2 (which the SDKs use), as a
    `ProviderTimeoutError` or a retryable `ServerError`; None for anything else."""
    for module_name in ("httpx2", "httpx"):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        if isinstance(error, module.TimeoutException):
            return ProviderTimeoutError(f"timed out: {error!r}", provider=provider)
        if isinstance(error, module.TransportError):
            return ServerError(f"connection failed: {error!r}", provider=provider)
    return None


def retry_after_from_headers(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """The wait a response asks for, in seconds: `retry-after-ms`, `retry-after` as seconds,
    or `retry-after` as an HTTP date. None when absent or unreadable."""
    if not headers:
        return None
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def empty_answer(provider: str, why: str) -> BadResponseError:
    """The error for an answer with nothing usable in it."""
    return BadResponseError(f"empty answer ({why})", provider=provider, status=200)
