"""The one interface every model provider implements, and the values that cross it.

A provider turns a `CompletionRequest` (messages of the package's own model, plus options)
into a `Completion` (text or structured data, usage as the provider reported it). Streamed
answers are collected into one `Completion` before returning, so long summaries never hit
idle timeouts. Every provider error is translated at the boundary into the
`ProviderError` tree of `compaction.exceptions`.

Calls are synchronous: compaction runs between two model calls of an agent, and a server
that must not block runs it in a worker thread. This module must never import an SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from compaction.messages import Message


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens as the provider reported them (0 when it reported nothing).

    Usages add up: `a + b` is the usage of both calls.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
        )


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A JSON schema the answer must follow, with the name providers ask for."""

    name: str
    schema: Mapping[str, Any]
    description: str = ""


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """One model call. `messages` use the package's message model (system messages first);
    `model` None means the provider's configured default."""

    messages: tuple[Message, ...]
    model: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    output_schema: OutputSchema | None = None


@dataclass(frozen=True, slots=True)
class Completion:
    """A collected answer. `data` holds the parsed object when an output schema was asked
    for and honoured; `finish_reason` is the provider's word for why it stopped."""

    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    data: Any = None
    finish_reason: str | None = None
    elapsed_ms: float = 0.0


@runtime_checkable
class Provider(Protocol):
    """Anything that can answer a `CompletionRequest`.

    `complete` must raise `UnsupportedError` for an `output_schema` it cannot honour, so the
    caller can fall back to free text; every other failure is a `ProviderError` subclass.
    """

    @property
    def name(self) -> str: ...

    def complete(self, request: CompletionRequest) -> Completion: ...
