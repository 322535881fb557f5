"""Every error this package raises on purpose. Catch `CompactionError` to catch them all.

    CompactionError
    ├── InputError                 bad input: the message says what and where
    │   ├── DecodeError            a payload that is not a transcript of the named dialect
    │   ├── ConfigError            an invalid configuration (unknown key, bad value)
    │   └── SessionNotFoundError   no session with that id in the store
    ├── TranscriptInvalidError     a transcript that breaks the provider's rules (`violations`)
    ├── TokenizerUnavailableError  no tokenizer for the model and estimates were refused
    ├── TargetUnreachableError     pinned content alone exceeds the size target (`receipt`)
    ├── StoreError                 the session store cannot be opened, read or written
    │   ├── HistoryDivergedError   a history that does not extend the logged one
    │   └── LogConflictError       another writer appended to the session since it was read
    ├── AgentError                 an agent run cannot go on (turn limit, overflow after retry)
    └── ProviderError              a model call failed (`provider`, `status`, `retryable`,
                                   `retry_after`)
        ├── ContextOverflowError   the request was longer than the model's window
        ├── AuthenticationError    the key was missing, wrong or not allowed
        ├── RateLimitError         too many requests (retryable)
        ├── ProviderTimeoutError   no answer in time (retryable)
        ├── ServerError            the provider failed (5xx, overloaded; retryable)
        ├── BadResponseError       an answer that cannot be used (empty, malformed, refused)
        └── UnsupportedError       the provider cannot do what was asked (e.g. structured output)

This module must never import the rest of the package (everything imports it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compaction.dialects.base import Violation


class CompactionError(Exception):
    """Root of every error raised by `compaction`."""


class InputError(CompactionError, ValueError):
    """Input the user gave is wrong. `location` names where (a message index, a key path)."""

    def __init__(self, message: str, *, location: str | None = None) -> None:
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)


class DecodeError(InputError):
    """A payload that cannot be read as a transcript of the dialect it claims to be."""


class ConfigError(InputError):
    """An invalid configuration value or an unknown configuration key."""


class SessionNotFoundError(InputError):
    """No session with the given id exists in the store."""


class TranscriptInvalidError(CompactionError):
    """A transcript breaks its provider's rules; `violations` lists every one with its index."""

    def __init__(self, dialect: str, violations: Sequence[Violation]) -> None:
        self.dialect = dialect
        self.violations = list(violations)
        lines = "; ".join(str(v) for v in self.violations[:5])
        more = f" (and {len(self.violations) - 5} more)" if len(self.violations) > 5 else ""
        super().__init__(f"invalid {dialect} transcript: {lines}{more}")


class TokenizerUnavailableError(CompactionError):
    """No tokenizer could be loaded for the model and character estimates were not allowed."""


class TargetUnreachableError(CompactionError):
    """The size target cannot be met without dropping pinned content or the live turn."""

    def __init__(self, message: str, *, receipt: Any = None) -> None:
        self.receipt = receipt
        super().__init__(message)


class StoreError(CompactionError):
    """The session store cannot be opened, migrated, read or written."""


class HistoryDivergedError(StoreError):
    """A message history that does not extend the one already logged for the session (the
    client edited or rewound it). `index` is the first message that differs."""

    def __init__(self, message: str, *, index: int) -> None:
        self.index = index
        super().__init__(message)


class LogConflictError(StoreError):
    """An append that expected the session to end at message `expected` found it at
    `found`: another writer (a second proxy replica) appended meanwhile. Nothing was
    written; read the session again and retry."""

    def __init__(self, message: str, *, expected: int, found: int) -> None:
        self.expected = expected
        self.found = found
        super().__init__(message)


class AgentError(CompactionError):
    """An agent run cannot continue: the turn limit was reached, or the model still
    overflowed its window after compacting harder."""


class ProviderError(CompactionError):
    """A model call failed. `retryable` says whether trying again may help; `retry_after` is
    the wait in seconds the provider asked for (None when it named none)."""

    retryable = False
    retry_after: float | None = None

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        self.provider = provider
        self.status = status
        where = f"{provider}: " if provider else ""
        super().__init__(f"{where}{message}")


class ContextOverflowError(ProviderError):
    """The request was longer than the model's context window."""


class AuthenticationError(ProviderError):
    """The API key was missing, wrong, or not allowed to use the model."""


class RateLimitError(ProviderError):
    """The provider asked us to slow down."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """No complete answer arrived in time."""

    retryable = True


class ServerError(ProviderError):
    """The provider failed on its side (5xx, overloaded)."""

    retryable = True


class BadResponseError(ProviderError):
    """An answer arrived but cannot be used: empty, malformed, cut off, or refused."""


class UnsupportedError(ProviderError):
    """The provider cannot do what was asked (structured output, a parameter)."""
