"""Counting whole conversations, with a per-message cache so a re-count after an append costs
only the appended message.

Messages are frozen but hold dicts, so they are not hashable; the cache is keyed by
`id(message)` and keeps a strong reference to each message, which stops Python from reusing
the id for another object while the entry lives. The cache is bounded (least recently used
entries go first). This module must never tokenize a message it has already counted while
that message is still cached, and never mutate the messages it is given.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.messages import Conversation, Message
from compaction.tokens.accounting import (
    Provider,
    message_tokens,
    overheads,
    parse_provider,
    provider_for_model,
    tool_schema_tokens,
)
from compaction.tokens.counter import TokenCounter, counter_is_approximate, counter_note
from compaction.tokens.tiktoken_counter import counter_for_model

DEFAULT_MAX_CACHED_MESSAGES = 100_000
_MAX_CACHED_TOOLS = 4_096


@dataclass(frozen=True, slots=True)
class TokenCount:
    """A conversation's token count and where the tokens are.

    `total` = sum of `per_message` + `tools` + `overhead` (reply priming). `by_role` sums
    `per_message` by role. `estimated` is True when any part is a guess (a character-based
    counter, an image of unknown size, encrypted reasoning); `approximate` is True when the
    tokenizer is not the model's own (`note` says which and why).
    """

    total: int
    by_role: Mapping[str, int]
    per_message: tuple[int, ...]
    tools: int
    overhead: int
    estimated: bool
    approximate: bool
    counter: str
    note: str | None = None


class ConversationCounter:
    """Counts conversations for one provider with one `TokenCounter`, caching per message.

    `provider` is "openai" or "anthropic" (anything else is a `ConfigError`); it picks the
    framing overheads and the image formula.

    Thread-safe: one instance may serve many sessions; each message is cached until it is
    among the least recently used of `max_cached_messages`.
    """

    def __init__(
        self,
        counter: TokenCounter,
        *,
        provider: str = "openai",
        max_cached_messages: int = DEFAULT_MAX_CACHED_MESSAGES,
    ) -> None:
        if max_cached_messages < 1:
            raise ValueError("max_cached_messages must be at least 1")
        self.provider: Provider = parse_provider(provider)
        self._costs = overheads(self.provider)
        self.counter = counter
        self.max_cached_messages = max_cached_messages
        self._messages: OrderedDict[int, tuple[Message, int, bool]] = OrderedDict()
        self._tools: dict[int, tuple[Mapping[str, Any], int]] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_model(
        cls,
        model: str | None,
        *,
        provider: str | None = None,
        offline: bool | None = None,
        allow_estimate: bool = True,
        max_cached_messages: int = DEFAULT_MAX_CACHED_MESSAGES,
    ) -> ConversationCounter:
        """A counter with `counter_for_model(model)`, for `provider` (inferred from the model
        name when None: Claude models count as Anthropic, everything else as OpenAI)."""
        counter = counter_for_model(model, offline=offline, allow_estimate=allow_estimate)
        return cls(
            counter,
            provider=provider or provider_for_model(model),
            max_cached_messages=max_cached_messages,
        )

    @property
    def note(self) -> str | None:
        """The counter's fallback or approximation note, for the CLI to show."""
        return counter_note(self.counter)

    @property
    def cached_messages(self) -> int:
        return len(self._messages)

    def clear(self) -> None:
        """Drop every cached count (and the references that keep those messages alive)."""
        with self._lock:
            self._messages.clear()
            self._tools.clear()

    def count_message(self, message: Message) -> int:
        """Tokens for one message, framing included, from the cache when possible."""
        return self._message(message)[0]

    # The lock guards the caches only, never a tokenization: a thread counting a large
    # message must not hold up threads counting others (the proxy's event loop among them).
    # Two threads counting the same new message at once both tokenize it; one entry stays.

    def _message(self, message: Message) -> tuple[int, bool]:
        key = id(message)
        with self._lock:
            entry = self._messages.get(key)
            if entry is not None and entry[0] is message:
                self._messages.move_to_end(key)
                return entry[1], entry[2]
        tokens, estimated = message_tokens(message, self.counter, self.provider)
        with self._lock:
            self._messages[key] = (message, tokens, estimated)
            if len(self._messages) > self.max_cached_messages:
                self._messages.popitem(last=False)
        return tokens, estimated

    def _tool(self, schema: Mapping[str, Any]) -> int:
        key = id(schema)
        with self._lock:
            entry = self._tools.get(key)
            if entry is not None and entry[0] is schema:
                return entry[1]
        tokens = tool_schema_tokens(schema, self.counter, self.provider)
        with self._lock:
            if len(self._tools) >= _MAX_CACHED_TOOLS:
                self._tools.clear()
            self._tools[key] = (schema, tokens)
        return tokens

    def count(
        self,
        conversation: Conversation | Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> TokenCount:
        """Count `conversation`; `tools` defaults to the conversation's own tool schemas."""
        if isinstance(conversation, Conversation):
            messages: Sequence[Message] = conversation.messages
            if tools is None:
                tools = conversation.tools
        else:
            messages = conversation
        tools = tools or ()
        costs = self._costs

        per_message: list[int] = []
        by_role: dict[str, int] = {}
        estimated = not self.counter.exact
        count_one = self._message
        for message in messages:
            tokens, guessed = count_one(message)
            per_message.append(tokens)
            by_role[message.role] = by_role.get(message.role, 0) + tokens
            if guessed:
                estimated = True
        tool_tokens = costs.tools_base + sum(map(self._tool, tools)) if tools else 0

        overhead = costs.reply_priming if messages else 0
        return TokenCount(
            total=sum(per_message) + tool_tokens + overhead,
            by_role=by_role,
            per_message=tuple(per_message),
            tools=tool_tokens,
            overhead=overhead,
            estimated=estimated,
            approximate=counter_is_approximate(self.counter),
            counter=self.counter.name,
            note=counter_note(self.counter),
        )

    def total(self, conversation: Conversation | Sequence[Message]) -> int:
        """Only the total of `count(conversation)`."""
        return self.count(conversation).total

    def __repr__(self) -> str:
        return (
            f"ConversationCounter({self.counter!r}, provider={self.provider!r}, "
            f"cached_messages={self.cached_messages})"
        )


def count_conversation(
    conversation: Conversation | Sequence[Message],
    counter: TokenCounter,
    *,
    provider: str = "openai",
) -> TokenCount:
    """Count once, without keeping a cache; use a `ConversationCounter` to count repeatedly."""
    return ConversationCounter(counter, provider=provider).count(conversation)
