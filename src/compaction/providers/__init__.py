"""Model providers: the `Provider` protocol, adapters on the official SDKs, test doubles.

    from compaction.providers import CompletionRequest, OpenAIProvider

    provider = OpenAIProvider("gpt-4o-mini")          # or base_url="http://127.0.0.1:8080/v1"
    completion = provider.complete(CompletionRequest(messages=conversation.messages))

    # an agent step: offer tools, stream the text, keep the assistant message
    request = CompletionRequest(
        messages=conversation.messages,
        tools=(ToolSpec("read_file", "Read a file.", {"type": "object", ...}),),
        on_text=print,
    )
    completion = provider.complete(request)
    conversation = conversation.append(completion.message)   # then answer completion.tool_calls

    base.py       Provider, CompletionRequest, Completion, Usage, OutputSchema, ToolSpec
    openai.py     OpenAIProvider      (extra `openai`: OpenAI and compatible servers)
    anthropic.py  AnthropicProvider   (extra `anthropic`)
    testing.py    FunctionProvider, ScriptedProvider, Step, ToolCalls — real doubles for tests
    retry.py      call_with_retries, provider_deadline — the only place calls are retried
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
    ToolChoice,
    ToolSpec,
    Usage,
)
from compaction.providers.openai import OpenAIProvider
from compaction.providers.retry import call_with_retries, provider_deadline
from compaction.providers.testing import (
    FunctionProvider,
    Reply,
    ScriptedProvider,
    Step,
    ToolCalls,
    UnconsumedStepsError,
    UnexpectedCallError,
)

__all__ = [  # noqa: RUF022 (grouped by topic)
    # protocol and values
    "Provider",
    "CompletionRequest",
    "Completion",
    "OutputSchema",
    "ToolSpec",
    "ToolChoice",
    "Usage",
    # adapters
    "AnthropicProvider",
    "OpenAIProvider",
    # retries
    "call_with_retries",
    "provider_deadline",
    # test doubles
    "FunctionProvider",
    "ScriptedProvider",
    "Step",
    "ToolCalls",
    "Reply",
    "UnexpectedCallError",
    "UnconsumedStepsError",
]
