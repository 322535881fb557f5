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

import importlib

# Not `typing.TYPE_CHECKING`: importing typing would cost `compaction --version` a quarter of
# its start-up. Type checkers treat this name alike.
TYPE_CHECKING = False

# Kept equal to pyproject's `version` (a test checks it against the installed metadata):
# reading the metadata at import time would cost every start of the CLI.
__version__ = "0.1.0"

if TYPE_CHECKING:
    from typing import Any

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

# Where each public name lives. Names are imported on first use (PEP 562), so that
# `import compaction` (and with it every submodule, the command line first) costs only what
# is used: the agent runtime, the store and pydantic load when something asks for them.
_EXPORTS: dict[str, str] = {
    "Orchestrator": "compaction.agent",
    "RunResult": "compaction.agent",
    "CompactionResult": "compaction.compactor",
    "Compactor": "compaction.compactor",
    "Receipt": "compaction.compactor",
    "CompactionConfig": "compaction.config",
    "PinRules": "compaction.config",
    "ANTHROPIC": "compaction.dialects",
    "OPENAI": "compaction.dialects",
    "RESPONSES": "compaction.dialects",
    "TRAJ": "compaction.dialects",
    "Dialect": "compaction.dialects",
    "Violation": "compaction.dialects",
    "decode_any": "compaction.dialects",
    "detect_dialect": "compaction.dialects",
    "get_dialect": "compaction.dialects",
    "AgentError": "compaction.exceptions",
    "AuthenticationError": "compaction.exceptions",
    "BadResponseError": "compaction.exceptions",
    "CompactionError": "compaction.exceptions",
    "ConfigError": "compaction.exceptions",
    "ContextOverflowError": "compaction.exceptions",
    "DecodeError": "compaction.exceptions",
    "HistoryDivergedError": "compaction.exceptions",
    "InputError": "compaction.exceptions",
    "LogConflictError": "compaction.exceptions",
    "ProviderError": "compaction.exceptions",
    "ProviderTimeoutError": "compaction.exceptions",
    "RateLimitError": "compaction.exceptions",
    "ServerError": "compaction.exceptions",
    "SessionNotFoundError": "compaction.exceptions",
    "StoreError": "compaction.exceptions",
    "TargetUnreachableError": "compaction.exceptions",
    "TokenizerUnavailableError": "compaction.exceptions",
    "TranscriptInvalidError": "compaction.exceptions",
    "UnsupportedError": "compaction.exceptions",
    "SessionLog": "compaction.log",
    "Conversation": "compaction.messages",
    "Group": "compaction.messages",
    "ImagePart": "compaction.messages",
    "Message": "compaction.messages",
    "Part": "compaction.messages",
    "ReasoningPart": "compaction.messages",
    "Role": "compaction.messages",
    "SummaryPart": "compaction.messages",
    "TextPart": "compaction.messages",
    "ToolCallPart": "compaction.messages",
    "ToolResultPart": "compaction.messages",
    "group_messages": "compaction.messages",
    "SessionStore": "compaction.store",
    "open_store": "compaction.store",
    "DigestStrategy": "compaction.strategies",
    "MaskStrategy": "compaction.strategies",
    "Strategy": "compaction.strategies",
    "TruncateStrategy": "compaction.strategies",
    "ConversationCounter": "compaction.tokens",
    "TokenCount": "compaction.tokens",
    "TokenCounter": "compaction.tokens",
    "context_window": "compaction.tokens",
    "counter_for_model": "compaction.tokens",
    "Tool": "compaction.tools",
    "tool": "compaction.tools",
    "Decision": "compaction.triggers",
    "should_compact": "compaction.triggers",
    "AgentConfig": "compaction.workflow",
    "WorkflowConfig": "compaction.workflow",
    "load_workflow": "compaction.workflow",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'compaction' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


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
