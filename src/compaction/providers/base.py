"""The one interface every model provider implements, and the values that cross it.

A provider turns a `CompletionRequest` (messages of the package's own model, plus options
and the tools the model may call) into a `Completion` (text, tool calls, reasoning or
structured data; usage as the provider reported it). Streamed answers are collected into one
`Completion` before returning, so long summaries never hit idle timeouts; a caller that
wants the text as it arrives passes `on_text`. `Completion.message` is the assistant message
an agent appends to its conversation: it re-encodes for the next call with either provider.
Every provider error is translated at the boundary into the `ProviderError` tree of
`compaction.exceptions`.

Calls are synchronous: compaction runs between two model calls of an agent, and a server
that must not block runs it in a worker thread. This module must never import an SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from compaction.messages import Message, Part, ReasoningPart, TextPart, ToolCallPart

ToolChoice: TypeAlias = Literal["auto", "none", "required"]
"""Whether the model may call tools ("auto"), must not ("none"), or must call one."""


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


def _empty_object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and the JSON schema of its
    arguments (an object schema; the default takes no arguments)."""

    name: str
    description: str = ""
    # A schema is a dict, so it takes part in equality but not in the hash.
    parameters: Mapping[str, Any] = field(default_factory=_empty_object_schema, hash=False)


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """One model call. `messages` use the package's message model (system messages first);
    `model` None means the provider's configured default.

    `tools` are offered to the model and `tool_choice` says whether it may (None: the
    provider's default, which is "auto" when tools are given), must not, or must call one;
    without tools, `tool_choice` is not sent. `on_text`, when given, is called with each
    piece of answer text as it streams in (in order; their concatenation is the answer's
    text). A call that is retried streams again from its start, so a consumer that shows
    the pieces may see a failed attempt's beginning before the retry's. `on_text` takes no
    part in equality, hashing or `repr`.
    """

    messages: tuple[Message, ...]
    model: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    output_schema: OutputSchema | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    on_text: Callable[[str], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Completion:
    """A collected answer. `data` holds the parsed object when an output schema was asked
    for and honoured; `finish_reason` is the provider's word for why it stopped ("stop",
    "tool_calls", "end_turn", "tool_use", "length", …).

    `tool_calls` are the calls the model asked for, in order, each with its raw JSON
    arguments text; `reasoning` the reasoning the provider returned, signed where the
    provider signs it, so that it can be sent back. Either may be the whole answer
    (`text` is then empty).
    """

    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    data: Any = None
    finish_reason: str | None = None
    elapsed_ms: float = 0.0
    tool_calls: tuple[ToolCallPart, ...] = ()
    reasoning: tuple[ReasoningPart, ...] = ()

    @property
    def message(self) -> Message:
        """The assistant message to append to the conversation: reasoning first (Anthropic
        requires thinking blocks to lead), then the text when there is any, then the tool
        calls."""
        parts: list[Part] = [*self.reasoning]
        if self.text:
            parts.append(TextPart(self.text))
        parts.extend(self.tool_calls)
        return Message(role="assistant", parts=tuple(parts))


@runtime_checkable
class Provider(Protocol):
    """Anything that can answer a `CompletionRequest`.

    `complete` must raise `UnsupportedError` for an `output_schema` it cannot honour, so the
    caller can fall back to free text; every other failure is a `ProviderError` subclass (a
    request that does not fit the model's window is a `ContextOverflowError`).
    """

    @property
    def name(self) -> str: ...

    def complete(self, request: CompletionRequest) -> Completion: ...
