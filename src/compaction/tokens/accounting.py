"""What a message, a tool schema and an image cost a provider, on top of their text.

Providers wrap every message in role markers, render tool schemas into a hidden prompt and
bill images by pixels. The constants below say how much, per provider, and where each number
comes from. Counts here are uncached; `ConversationCounter` caches them per message.

This module must never count an image by its base64 length, never count a reasoning
signature (a MAC the model never reads), and never read wire formats: it sees only the
`compaction.messages` model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from compaction.exceptions import ConfigError
from compaction.messages import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.tokens._models import model_names
from compaction.tokens.counter import TokenCounter
from compaction.tokens.images import (
    DEFAULT_IMAGE_SIZE,
    anthropic_image_tokens,
    image_size,
    openai_image_tokens,
)

Provider: TypeAlias = Literal["openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")


@dataclass(frozen=True, slots=True)
class Overheads:
    """Tokens a provider adds around content. Every field is a documented approximation."""

    per_message: int
    """Message framing, role name included."""
    per_name: int
    """Extra for a message's `name` field, on top of the name's own tokens (None: not sent)."""
    reply_priming: int
    """Once per request: the header that starts the model's reply."""
    per_tool_call: int
    """Framing around a call's name and arguments."""
    per_tool_result: int
    """Framing around one tool result, beyond its message's framing."""
    tools_base: int
    """Once per request that declares tools: the hidden tool-use preamble."""
    per_tool: int
    """Per declared tool, on top of its schema's JSON."""
    sends_name: bool = True


# OpenAI's cookbook ("How to count tokens with tiktoken"): 3 tokens of framing per message
# plus the role (one token for each role), 1 per `name`, 3 to prime the reply; this matches
# the API's prompt_tokens exactly for text messages. Tool schemas are rendered into a
# TypeScript-like namespace; the cookbook's constants are 7 per function and 12 per request,
# and we count each schema's compact JSON in place of the rendering, which runs a little high.
# A call's name and arguments get 3 tokens of framing; a result is its own tool message.
OPENAI_OVERHEADS = Overheads(
    per_message=4,
    per_name=1,
    reply_priming=3,
    per_tool_call=3,
    per_tool_result=0,
    tools_base=12,
    per_tool=7,
)

# Anthropic publishes no framing. Its count_tokens documentation example (a system prompt and
# one user message) comes to the texts plus 6, i.e. 3 per message and no reply priming.
# Declaring tools adds the tool-use system prompt, 346 tokens for Claude 3.5 Sonnet and later
# with tool_choice auto (Anthropic's pricing page); tool_use and tool_result blocks get 3 each.
ANTHROPIC_OVERHEADS = Overheads(
    per_message=3,
    per_name=0,
    reply_priming=0,
    per_tool_call=3,
    per_tool_result=3,
    tools_base=346,
    per_tool=0,
    sends_name=False,
)

_OVERHEADS: dict[Provider, Overheads] = {
    "openai": OPENAI_OVERHEADS,
    "anthropic": ANTHROPIC_OVERHEADS,
}

# Encrypted reasoning (OpenAI `encrypted_content`, Anthropic `redacted_thinking`) is hidden
# reasoning the provider decrypts and feeds back to the model, so it does cost context. Its
# size is the only evidence: base64 carries 3 bytes per 4 characters and text runs about 4
# bytes per token, hence one token per 16/3 characters, marked as an estimate.
ENCRYPTED_CHARS_PER_TOKEN = 16 / 3


def overheads(provider: str) -> Overheads:
    """The overhead constants for `provider` ("openai" or "anthropic")."""
    return _OVERHEADS[parse_provider(provider)]


def parse_provider(provider: str) -> Provider:
    """`provider` as a `Provider`, or `ConfigError` naming the ones that exist."""
    if provider == "openai":
        return "openai"
    if provider == "anthropic":
        return "anthropic"
    raise ConfigError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")


def provider_for_model(model: str | None) -> Provider:
    """The provider whose formulas fit `model`: Anthropic's for Claude models, otherwise
    OpenAI's, which most OpenAI-compatible servers follow."""
    if model:
        full, bare = model_names(model)
        if bare.startswith("claude") or "anthropic" in full:
            return "anthropic"
    return "openai"


def provider_for_dialect(dialect: str | None) -> Provider:
    """The provider whose formulas count a conversation decoded from `dialect`: Anthropic's
    for Anthropic Messages, OpenAI's for the rest (Chat Completions, Responses, .traj)."""
    return "anthropic" if dialect == "anthropic" else "openai"


def image_part_tokens(part: ImagePart, provider: str) -> tuple[int, bool]:
    """`(tokens, estimated)` for one image; estimated when its size had to be assumed."""
    provider = parse_provider(provider)
    if provider == "openai" and part.detail is not None and part.detail.lower() == "low":
        return openai_image_tokens(1, 1, "low"), False
    size = image_size(part)
    estimated = size is None
    width, height = size if size is not None else DEFAULT_IMAGE_SIZE
    if provider == "anthropic":
        return anthropic_image_tokens(width, height), estimated
    return openai_image_tokens(width, height, part.detail), estimated


def _part_tokens(
    part: Part, counter: TokenCounter, provider: str, costs: Overheads
) -> tuple[int, bool]:
    count = counter.count_text
    if isinstance(part, TextPart | SummaryPart):
        return count(part.text), False
    if isinstance(part, ToolCallPart):
        return costs.per_tool_call + count(part.name) + count(part.arguments), False
    if isinstance(part, ToolResultPart):
        tokens, estimated = costs.per_tool_result, False
        for item in part.content:
            if isinstance(item, TextPart):
                tokens += count(item.text)
            else:
                image, guessed = image_part_tokens(item, provider)
                tokens += image
                estimated = estimated or guessed
        return tokens, estimated
    if isinstance(part, ImagePart):
        return image_part_tokens(part, provider)
    if isinstance(part, ReasoningPart):
        tokens = count(part.text)
        if part.text or not part.encrypted:
            return tokens, False
        return math.ceil(len(part.encrypted) / ENCRYPTED_CHARS_PER_TOKEN), True
    raise TypeError(f"unknown part type {type(part).__name__}")


def message_tokens(
    message: Message, counter: TokenCounter, provider: str = "openai"
) -> tuple[int, bool]:
    """`(tokens, estimated)` for one message: framing, name, and every part."""
    costs = overheads(provider)
    tokens = costs.per_message
    estimated = not counter.exact
    if message.name and costs.sends_name:
        tokens += costs.per_name + counter.count_text(message.name)
    for part in message.parts:
        part_tokens, guessed = _part_tokens(part, counter, provider, costs)
        tokens += part_tokens
        estimated = estimated or guessed
    return tokens, estimated


def count_message(message: Message, counter: TokenCounter, *, provider: str = "openai") -> int:
    """Tokens `message` costs `provider` ("openai" or "anthropic"), framing included
    (uncached). An unknown provider is a `ConfigError`."""
    return message_tokens(message, counter, provider)[0]


def tool_schema_text(schema: Mapping[str, Any]) -> str:
    """The text a tool schema is counted by: its compact JSON, keys in wire order."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False, default=str)


def tool_schema_tokens(schema: Mapping[str, Any], counter: TokenCounter, provider: str) -> int:
    """Tokens for one declared tool, without the per-request preamble."""
    return overheads(provider).per_tool + counter.count_text(tool_schema_text(schema))


def count_tools(
    tools: Iterable[Mapping[str, Any]], counter: TokenCounter, *, provider: str = "openai"
) -> int:
    """Tokens for a request's tool declarations, preamble included (0 without tools)."""
    costs = overheads(provider)
    per_tool = [tool_schema_tokens(schema, counter, provider) for schema in tools]
    return costs.tools_base + sum(per_tool) if per_tool else 0
