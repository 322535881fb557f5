"""compaction: keep an LLM agent inside its context window without losing what matters.

    from compaction import Compactor, CompactionConfig
    from compaction.dialects import OPENAI

    conversation = OPENAI.decode(request_body)
    result = Compactor(CompactionConfig(token_threshold=100_000, max_tokens=60_000)).compact(
        conversation
    )
    request_body = OPENAI.encode(result.conversation)

Internals live in the submodules; this module re-exports the public surface.
"""

from __future__ import annotations

# Kept equal to pyproject's `version` (a test checks it against the installed metadata):
# reading the metadata at import time would cost every start of the CLI.
__version__ = "0.1.0"

from compaction.agent import Orchestrator, RunResult
from compaction.compactor import CompactionResult, Compactor, Receipt
from compaction.config import CompactionConfig, PinRules
from compaction.dialects import (
    ANTHROPIC,
    OPENAI,
    RESPONSES,
    TRAJ,
    Dialect,
    Violation,
    decode_any,
    detect_dialect,
    get_dialect,
)
from compaction.exceptions import (
    AgentError,
    AuthenticationError,
    BadResponseError,
    CompactionError,
    ConfigError,
    ContextOverflowError,
    DecodeError,
    HistoryDivergedError,
    InputError,
    LogConflictError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    SessionNotFoundError,
    StoreError,
    TargetUnreachableError,
    TokenizerUnavailableError,
    TranscriptInvalidError,
    UnsupportedError,
)
from compaction.log import SessionLog
from compaction.messages import (
    Conversation,
    Group,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    Role,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    group_messages,
)
from compaction.store import SessionStore, open_store
from compaction.strategies import (
    DigestStrategy,
    MaskStrategy,
    Strategy,
    TruncateStrategy,
)
from compaction.tokens import (
    ConversationCounter,
    TokenCount,
    TokenCounter,
    context_window,
    counter_for_model,
)
from compaction.tools import Tool, tool
from compaction.triggers import Decision, should_compact
from compaction.workflow import AgentConfig, WorkflowConfig, load_workflow

__all__ = [  # noqa: RUF022 (grouped by topic)
    "__version__",
    # compaction
    "Compactor",
    "CompactionConfig",
    "CompactionResult",
    "Decision",
    "PinRules",
    "Receipt",
    "should_compact",
    # agent runtime and session log
    "AgentConfig",
    "Orchestrator",
    "RunResult",
    "SessionLog",
    "SessionStore",
    "Tool",
    "WorkflowConfig",
    "load_workflow",
    "open_store",
    "tool",
    # strategies
    "DigestStrategy",
    "MaskStrategy",
    "Strategy",
    "TruncateStrategy",
    # conversation model
    "Conversation",
    "Group",
    "ImagePart",
    "Message",
    "Part",
    "ReasoningPart",
    "Role",
    "SummaryPart",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "group_messages",
    # dialects
    "ANTHROPIC",
    "OPENAI",
    "RESPONSES",
    "TRAJ",
    "Dialect",
    "Violation",
    "decode_any",
    "detect_dialect",
    "get_dialect",
    # tokens
    "ConversationCounter",
    "TokenCount",
    "TokenCounter",
    "context_window",
    "counter_for_model",
    # errors
    "CompactionError",
    "ConfigError",
    "DecodeError",
    "InputError",
    "TargetUnreachableError",
    "TokenizerUnavailableError",
    "TranscriptInvalidError",
    "SessionNotFoundError",
    "StoreError",
    "HistoryDivergedError",
    "LogConflictError",
    "AgentError",
    "ProviderError",
    "AuthenticationError",
    "BadResponseError",
    "ContextOverflowError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "UnsupportedError",
]
