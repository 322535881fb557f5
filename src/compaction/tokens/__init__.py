"""Token counting: tokenizers, per-provider message accounting, a per-message cache, and
model context windows.

Start with `ConversationCounter.for_model(model)` and `context_window(model)`; the rest is
for callers that need to choose or replace a piece. This package must never reach the
network when offline (`COMPACTION_OFFLINE=1`) and never count an image by its base64 length.
"""

from __future__ import annotations

from compaction.tokens.accounting import (
    ANTHROPIC_OVERHEADS,
    OPENAI_OVERHEADS,
    PROVIDERS,
    Overheads,
    Provider,
    count_message,
    count_tools,
    image_part_tokens,
    message_tokens,
    overheads,
    parse_provider,
    provider_for_dialect,
    provider_for_model,
)
from compaction.tokens.cache import ConversationCounter, TokenCount, count_conversation
from compaction.tokens.counter import (
    HeuristicCounter,
    TokenCounter,
    counter_is_approximate,
    counter_note,
)
from compaction.tokens.images import (
    DEFAULT_IMAGE_SIZE,
    anthropic_image_tokens,
    image_size,
    openai_image_tokens,
    sniff_image_size,
)
from compaction.tokens.tiktoken_counter import (
    OFFLINE_ENCODING,
    OFFLINE_ENV,
    EncodingChoice,
    TiktokenCounter,
    counter_for_model,
    encoding_for_model,
    is_offline,
    load_encoding,
    vocabulary_is_cached,
)
from compaction.tokens.windows import (
    DEFAULT_CONTEXT_WINDOWS,
    WINDOWS_ENV,
    ModelWindows,
    context_window,
    register_context_window,
)

__all__ = [  # noqa: RUF022 (grouped by topic, sorted within each group)
    # counters
    "OFFLINE_ENCODING",
    "OFFLINE_ENV",
    "EncodingChoice",
    "HeuristicCounter",
    "TiktokenCounter",
    "TokenCounter",
    "counter_for_model",
    "counter_is_approximate",
    "counter_note",
    "encoding_for_model",
    "is_offline",
    "load_encoding",
    "vocabulary_is_cached",
    # messages and conversations
    "ANTHROPIC_OVERHEADS",
    "OPENAI_OVERHEADS",
    "PROVIDERS",
    "ConversationCounter",
    "Overheads",
    "Provider",
    "TokenCount",
    "count_conversation",
    "count_message",
    "count_tools",
    "message_tokens",
    "overheads",
    "parse_provider",
    "provider_for_dialect",
    "provider_for_model",
    # images
    "DEFAULT_IMAGE_SIZE",
    "anthropic_image_tokens",
    "image_part_tokens",
    "image_size",
    "openai_image_tokens",
    "sniff_image_size",
    # context windows
    "DEFAULT_CONTEXT_WINDOWS",
    "WINDOWS_ENV",
    "ModelWindows",
    "context_window",
    "register_context_window",
]
