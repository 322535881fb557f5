"""Model providers: the `Provider` protocol, adapters on the official SDKs, test doubles.

    from compaction.providers import CompletionRequest, OpenAIProvider

    provider = OpenAIProvider("gpt-4o-mini")          # or base_url="http://127.0.0.1:8080/v1"
    completion = provider.complete(CompletionRequest(messages=conversation.messages))

    base.py       Provider, CompletionRequest, Completion, Usage, OutputSchema
    openai.py     OpenAIProvider      (extra `openai`: OpenAI and compatible servers)
    anthropic.py  AnthropicProvider   (extra `anthropic`)
    testing.py    FunctionProvider, ScriptedProvider, Step — real doubles for tests
    retry.py      call_with_retries   — the only place calls are retried
    errors.py     SDK and HTTP errors → the `ProviderError` tree

Importing this package never imports an SDK: the adapters load theirs when constructed and
name the extra to install when it is missing.
"""

from __future__ import annotations

from compaction.providers.anthropic import AnthropicProvider
from compaction.providers.base import (
    Completion,
    CompletionRequest,
    OutputSchema,
    Provider,
    Usage,
)
from compaction.providers.openai import OpenAIProvider
from compaction.providers.retry import call_with_retries
from compaction.providers.testing import (
    FunctionProvider,
    Reply,
    ScriptedProvider,
    Step,
    UnconsumedStepsError,
    UnexpectedCallError,
)

__all__ = [  # noqa: RUF022 (grouped by topic)
    # protocol and values
    "Provider",
    "CompletionRequest",
    "Completion",
    "OutputSchema",
    "Usage",
    # adapters
    "AnthropicProvider",
    "OpenAIProvider",
    # retries
    "call_with_retries",
    # test doubles
    "FunctionProvider",
    "ScriptedProvider",
    "Step",
    "Reply",
    "UnexpectedCallError",
    "UnconsumedStepsError",
]
