"""Counting whole conversations, with two caches so that re-counting costs only what changed.

1. Per message, keyed by content (`content_key`: exactly the data a count reads — the name
   and each part's text, call, image or encrypted payload — never object identity), so a
   freshly decoded copy of a history already seen (a framework hook, the proxy, `decode` on
   every call) costs only hashing. The key is looked up by Python's hash of its strings,
   which a string computes once and keeps, and confirmed by equality, so two different
   messages can never share a count. Bounded: least recently used entries go first.
2. Per conversation, a running total keyed by prefix: the last few message sequences counted,
   with their per-message counts. A sequence that extends one of them (the same message
   objects, then more) is counted from that total plus the new messages alone, so the check
   after an append costs about the appended message (and an identity comparison of the
   prefix, a C loop), not a content lookup for every message of the history.

This module must never tokenize a message whose content it still has cached, and never
mutate the messages it is given.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.messages import (
    Conversation,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.tokens.accounting import (
    Provider,
    message_tokens,
    overheads,
    parse_provider,
    provider_for_model,
    tool_schema_text,
    tool_schema_tokens,
)
from compaction.tokens.counter import TokenCounter, counter_is_approximate, counter_note
from compaction.tokens.tiktoken_counter import counter_for_model

DEFAULT_MAX_CACHED_MESSAGES = 100_000
_MAX_CACHED_TOOLS = 4_096
# Message sequences whose running totals are kept: the latest few states of each session a
# counter is checking at about the same time, and their compacted views.
_MAX_PREFIXES = 32


def content_key(message: Message) -> tuple[Any, ...]:
    """What a message's token count depends on, as a hashable value: equal keys, equal
    counts. Roles, ids, pins and provider data are left out: framing is the same for every
    role, and the others are never sent as tokens."""
    return (message.name, *[_part_key(part) for part in message.parts])


def _part_key(part: Part) -> tuple[Any, ...]:
    if isinstance(part, TextPart | SummaryPart):
        return (TextPart, part.text)
    if isinstance(part, ToolCallPart):
        return (ToolCallPart, part.name, part.arguments)
    if isinstance(part, ToolResultPart):
        return (ToolResultPart, *[_part_key(item) for item in part.content])
    if isinstance(part, ImagePart):
        return (ImagePart, part.url, part.detail, part.width, part.height)
    if isinstance(part, ReasoningPart):
        return (ReasoningPart, part.text, None if part.text else part.encrypted)
    raise TypeError(f"unknown part type {type(part).__name__}")


@dataclass(frozen=True, slots=True)
class _Prefix:
    """A message sequence already counted: its counts, per role and whether any is a guess."""

    messages: tuple[Message, ...]
    per_message: tuple[int, ...]
    total: int
    by_role: Mapping[str, int]
    estimated: bool


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

    Thread-safe: one instance may serve many sessions; each message's count is cached by
    content until it is among the least recently used of `max_cached_messages`.
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
        self._messages: OrderedDict[tuple[Any, ...], tuple[int, bool]] = OrderedDict()
        # The same message objects are counted again and again (a compaction measures its
        # slots many times): by identity first, sparing the content key of large parts. An
        # entry holds its message, so its id is not reused while the entry lives.
        self._by_identity: dict[int, tuple[Message, tuple[int, bool]]] = {}
        self._prefixes: list[_Prefix] = []
        self._tools: dict[str, int] = {}
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
            self._by_identity.clear()
            self._prefixes.clear()
            self._tools.clear()

    def count_message(self, message: Message) -> int:
        """Tokens for one message, framing included, from the cache when possible."""
        return self._message(message)[0]

    # The lock guards the caches only, never a tokenization: a thread counting a large
    # message must not hold up threads counting others (the proxy's event loop among them).
    # Two threads counting the same new message at once both tokenize it; one entry stays.

    def _message(self, message: Message) -> tuple[int, bool]:
        known = self._by_identity.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        key = content_key(message)
        with self._lock:
            entry = self._messages.get(key)
            if entry is not None:
                self._messages.move_to_end(key)
        if entry is None:
            entry = message_tokens(message, self.counter, self.provider)
            with self._lock:
                self._messages[key] = entry
                if len(self._messages) > self.max_cached_messages:
                    self._messages.popitem(last=False)
        with self._lock:
            if len(self._by_identity) >= self.max_cached_messages:
                self._by_identity.clear()
            self._by_identity[id(message)] = (message, entry)
        return entry

    def _tool(self, schema: Mapping[str, Any]) -> int:
        # Keyed by the text it is counted by: a re-decoded schema is found again.
        text = tool_schema_text(schema)
        with self._lock:
            tokens = self._tools.get(text)
        if tokens is None:
            tokens = tool_schema_tokens(schema, self.counter, self.provider)
            with self._lock:
                if len(self._tools) >= _MAX_CACHED_TOOLS:
                    self._tools.clear()
                self._tools[text] = tokens
        return tokens

    def count(
        self,
        conversation: Conversation | Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> TokenCount:
        """Count `conversation`; `tools` defaults to the conversation's own tool schemas."""
        if isinstance(conversation, Conversation):
            messages = conversation.messages
            if tools is None:
                tools = conversation.tools
        else:
            messages = tuple(conversation)
        tools = tools or ()
        costs = self._costs
        counted = self._sequence(messages)
        tool_tokens = costs.tools_base + sum(map(self._tool, tools)) if tools else 0

        overhead = costs.reply_priming if messages else 0
        return TokenCount(
            total=counted.total + tool_tokens + overhead,
            by_role=dict(counted.by_role),
            per_message=counted.per_message,
            tools=tool_tokens,
            overhead=overhead,
            estimated=counted.estimated or not self.counter.exact,
            approximate=counter_is_approximate(self.counter),
            counter=self.counter.name,
            note=counter_note(self.counter),
        )

    def _sequence(self, messages: tuple[Message, ...]) -> _Prefix:
        """The counts of `messages`, from the longest remembered prefix plus the rest (the
        prefixes read and kept under the lock, the rest counted outside it)."""
        with self._lock:
            base = self._longest_prefix(messages)
            if base is not None and len(base.messages) == len(messages):
                self._remember(base)
                return base
        start = len(base.messages) if base is not None else 0
        per_message = list(base.per_message) if base is not None else []
        total = base.total if base is not None else 0
        by_role = dict(base.by_role) if base is not None else {}
        estimated = base.estimated if base is not None else False
        count_one = self._message
        for message in messages[start:]:
            tokens, guessed = count_one(message)
            per_message.append(tokens)
            total += tokens
            by_role[message.role] = by_role.get(message.role, 0) + tokens
            estimated = estimated or guessed
        counted = _Prefix(messages, tuple(per_message), total, by_role, estimated)
        with self._lock:
            self._remember(counted)
        return counted

    def _longest_prefix(self, messages: tuple[Message, ...]) -> _Prefix | None:
        best: _Prefix | None = None
        for prefix in self._prefixes:
            n = len(prefix.messages)
            if (
                0 < n <= len(messages)
                and (best is None or n > len(best.messages))
                # The last message first: it rules out nearly every non-prefix at once.
                and messages[n - 1] is prefix.messages[-1]
                and all(map(operator.is_, messages, prefix.messages))
            ):
                best = prefix
        return best

    def _remember(self, counted: _Prefix) -> None:
        """Keep `counted` first, the least recently used prefix going when there are too
        many. A prefix stays after it was extended: a retry, or a sibling branch from the
        same history, starts from it again."""
        self._prefixes = [counted, *(p for p in self._prefixes if p is not counted)][:_MAX_PREFIXES]

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
