"""The `Orchestrator`: a small agent loop with compaction before every model call.

For each incoming event (a user message): log it; then, until the model answers without
tool calls or `max_turns` model calls were made, check compaction, call the model (streamed:
text arrives through `on_event` as it is written), log its answer, run the tools it asked
for and log their results. A tool's exception becomes an error result the model reads. When
the provider says the request overflowed the model's window, the view is compacted to half
its size and the call is tried once more; a second overflow is an `AgentError`.

Everything goes through a `SessionLog`, so the whole history is kept (compactions are
records, never rewrites), a session can be resumed by id, and the `recall` tool can bring
back what was compacted away.

    agent = Orchestrator(provider, model="gpt-4o-mini", system_prompt="You are …",
                         tools=[read_file], compactor=Compactor(config), log=log)
    result = agent.run("Fix the failing test in tests/test_api.py")

This module must never encode a wire format or touch SQL.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from compaction.compactor import CompactionResult, Compactor, Receipt
from compaction.exceptions import (
    AgentError,
    AuthenticationError,
    ConfigError,
    ContextOverflowError,
)
from compaction.log import SessionLog
from compaction.messages import Conversation, Message, TextPart, ToolCallPart, ToolResultPart
from compaction.providers.anthropic import messages_tool
from compaction.providers.base import Completion, CompletionRequest, Provider, Usage
from compaction.providers.openai import chat_tool
from compaction.store import open_store
from compaction.tools import Tool, ToolOutcome, make_tool, resolve_tools
from compaction.workflow import AgentConfig, WorkflowConfig

__all__ = [
    "AgentEvent",
    "CompactionDone",
    "ModelCallFinished",
    "ModelCallStarted",
    "Orchestrator",
    "RunResult",
    "TextDelta",
    "ToolCallFinished",
    "build_provider",
    "summarizer_provider",
]


def build_provider(agent: AgentConfig, *, model: str | None = None) -> Provider:
    """The provider an agent's settings describe (its key from `api_key_env`, else the
    provider's usual environment variable)."""
    key = os.environ.get(agent.api_key_env) if agent.api_key_env else None
    if agent.api_key_env and not key:
        raise ConfigError(
            f"agent {agent.id!r}: the environment variable {agent.api_key_env} is not set",
            location="api_key_env",
        )
    name = model or agent.model
    try:
        if agent.provider == "anthropic":
            from compaction.providers.anthropic import AnthropicProvider

            return AnthropicProvider(name, base_url=agent.base_url, api_key=key)
        from compaction.providers.openai import OpenAIProvider

        return OpenAIProvider(name, base_url=agent.base_url, api_key=key, stream=agent.stream)
    except ImportError as e:
        raise ConfigError(str(e), location=f"agent {agent.id}") from None
    except AuthenticationError as e:
        raise ConfigError(str(e), location=f"agent {agent.id}") from None


def summarizer_provider(
    agent: AgentConfig, workflow: WorkflowConfig | None = None
) -> Provider | None:
    """The provider that writes summaries, when the agent's strategies need one: the
    `summarizer` agent's endpoint (or the agent's own) with the compaction model."""
    if not agent.compact.summarizer_strategies:
        return None
    owner = (workflow.summarizer_for(agent) if workflow is not None else None) or agent
    return build_provider(owner, model=agent.compact.model or owner.model)


# An overflow retry asks for this share of the tokens the overflowing request had.
OVERFLOW_TARGET_RATIO = 0.5


@dataclass(frozen=True, slots=True)
class ModelCallStarted:
    number: int
    messages: int
    tokens: int


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ModelCallFinished:
    number: int
    text: str
    tool_calls: tuple[ToolCallPart, ...]
    usage: Usage
    finish_reason: str | None
    elapsed_ms: float


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    call: ToolCallPart
    outcome: ToolOutcome
    elapsed_ms: float


@dataclass(frozen=True, slots=True)
class CompactionDone:
    """A compaction that changed the view. `reason` is `trigger` or `context overflow`."""

    receipt: Receipt
    reason: str


AgentEvent = ModelCallStarted | TextDelta | ModelCallFinished | ToolCallFinished | CompactionDone


@dataclass
class RunResult:
    """What one `run` did. `stop_reason` is `answered` (the model answered without tool
    calls) or `max_turns` (the turn limit came first)."""

    session_id: str
    text: str
    stop_reason: Literal["answered", "max_turns"]
    model_calls: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    compactions: list[Receipt] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)


MessageHook = Callable[[Message], None]
CompactHook = Callable[[Conversation, Receipt | None], None]


class Orchestrator:
    """Runs one agent over one session log. See the module docstring."""

    @classmethod
    def from_config(
        cls,
        agent: AgentConfig,
        *,
        workflow: WorkflowConfig | None = None,
        log: SessionLog | None = None,
        provider: Provider | None = None,
        summarizer: Provider | None = None,
        max_turns: int | None = None,
        **hooks: Any,
    ) -> Orchestrator:
        """The agent an `AgentConfig` describes: its provider (or `provider`), tools
        (`recall` bound to the log), compaction policy with its summarizer (the workflow's
        `summarizer` agent, or `summarizer`), limits and sampling. `hooks` are `on_event`,
        `on_message`, `before_compact` and `after_compact`."""
        log = log or SessionLog.open(
            open_store(":memory:"), agent=agent.id, model=agent.model, dialect=agent.provider
        )
        if summarizer is None:
            summarizer = summarizer_provider(agent, workflow)
        return cls(
            provider or build_provider(agent),
            model=agent.model,
            system_prompt=agent.system_prompt,
            tools=resolve_tools(agent.tools, log=log),
            compactor=Compactor(agent.compact, summarizer=summarizer),
            log=log,
            dialect=agent.provider,
            max_turns=max_turns or agent.max_turns,
            max_output_tokens=agent.max_output_tokens,
            temperature=agent.temperature,
            **hooks,
        )

    def __init__(
        self,
        provider: Provider,
        *,
        model: str | None = None,
        system_prompt: str | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        compactor: Compactor | None = None,
        log: SessionLog | None = None,
        dialect: Literal["openai", "anthropic"] = "openai",
        max_turns: int = 20,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        on_message: MessageHook | None = None,
        before_compact: CompactHook | None = None,
        after_compact: CompactHook | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.provider = provider
        self.model = model
        self.dialect = dialect
        self.max_turns = max_turns
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        self.compactor = compactor or Compactor()
        self.log = log or SessionLog.open(open_store(":memory:"), model=model, dialect=dialect)
        self.tools = {t.name: t for t in (make_tool(t) for t in tools)}
        self._tool_schemas = self._wire_tools()
        self.on_event = on_event
        self.on_message = on_message
        self.before_compact = before_compact
        self.after_compact = after_compact
        if system_prompt and not self.log.messages:
            self._append(Message.text_message("system", system_prompt))

    @property
    def session_id(self) -> str:
        return self.log.session_id

    @property
    def messages(self) -> tuple[Message, ...]:
        """The model-visible view of the session."""
        return self.log.messages

    def conversation(self) -> Conversation:
        return self.log.conversation(**self._fields())

    # -- the loop --------------------------------------------------------------------------

    def run(self, event: str | Message) -> RunResult:
        """Handle one user message: call the model and the tools until the model answers
        without tool calls or `max_turns` calls were made."""
        message = Message.text_message("user", event) if isinstance(event, str) else event
        result = RunResult(self.session_id, "", "max_turns")
        result.messages.append(self._append(message))
        for _ in range(self.max_turns):
            self._compact(result, reason="trigger")
            completion = self._call_model(result)
            reply = completion.message
            result.messages.append(self._append(reply))
            result.text = completion.text
            if not completion.tool_calls:
                result.stop_reason = "answered"
                break
            for call in completion.tool_calls:
                result.messages.append(self._append(self._run_tool(call)))
                result.tool_calls += 1
        return result

    def _call_model(self, result: RunResult) -> Completion:
        try:
            return self._complete(result)
        except ContextOverflowError as first:
            tokens = self.compactor.count(self.conversation())
            target = max(1, int(tokens * OVERFLOW_TARGET_RATIO))
            compacted = self._compact(result, reason="context overflow", target=target)
            try:
                return self._complete(result)
            except ContextOverflowError as second:
                after = compacted.receipt.tokens_after if compacted else tokens
                raise AgentError(
                    f"the request still overflows the model's window after compacting "
                    f"{tokens} → {after} tokens ({second}); first overflow: {first}"
                ) from second

    def _complete(self, result: RunResult) -> Completion:
        number = result.model_calls + 1
        self._emit(ModelCallStarted(number, len(self.log.messages), self._count()))
        request = CompletionRequest(
            messages=self.log.messages,
            model=self.model,
            max_output_tokens=self.max_output_tokens,
            temperature=self.temperature,
            tools=tuple(t.spec for t in self.tools.values()),
            # Said explicitly: some servers (llama-cpp-python) offer no tools without it.
            tool_choice="auto" if self.tools else None,
            on_text=(lambda text: self._emit(TextDelta(text))) if self.on_event else None,
        )
        started = time.perf_counter()
        result.model_calls = number
        completion = self.provider.complete(request)
        result.usage = result.usage + completion.usage
        self._emit(
            ModelCallFinished(
                number,
                completion.text,
                completion.tool_calls,
                completion.usage,
                completion.finish_reason,
                (time.perf_counter() - started) * 1000,
            )
        )
        return completion

    def _run_tool(self, call: ToolCallPart) -> Message:
        started = time.perf_counter()
        found = self.tools.get(call.name)
        if found is None:
            known = ", ".join(sorted(self.tools)) or "none"
            outcome = ToolOutcome(f"unknown tool {call.name!r} (available: {known})", True)
        else:
            outcome = found.run(call.arguments)
        self._emit(ToolCallFinished(call, outcome, (time.perf_counter() - started) * 1000))
        part = ToolResultPart(call.id, (TextPart(outcome.text),), is_error=outcome.is_error)
        return Message(role="tool", parts=(part,))

    def _compact(
        self, result: RunResult, *, reason: str, target: int | None = None
    ) -> CompactionResult | None:
        before = self.conversation()
        if target is None and not self.compactor.should_compact(before):
            return None
        if self.before_compact is not None:
            self.before_compact(before, None)
        compacted = self.log.compact(
            self.compactor, target_tokens=target, force=target is not None, fields=self._fields()
        )
        if compacted.receipt.status not in ("compacted", "target_unreachable"):
            return compacted
        result.compactions.append(compacted.receipt)
        self._emit(CompactionDone(compacted.receipt, reason))
        if self.after_compact is not None:
            self.after_compact(compacted.conversation, compacted.receipt)
        return compacted

    # -- helpers ---------------------------------------------------------------------------

    def _append(self, message: Message) -> Message:
        self.log.append(message)
        if self.on_message is not None:
            self.on_message(message)
        return message

    def _emit(self, event: AgentEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _count(self) -> int:
        return self.compactor.count(self.conversation())

    def _fields(self) -> dict[str, Any]:
        return {"tools": self._tool_schemas, "model": self.model, "dialect": self.dialect}

    def _wire_tools(self) -> tuple[dict[str, Any], ...]:
        """The tool schemas as the provider receives them, so counts include them."""
        declare = messages_tool if self.dialect == "anthropic" else chat_tool
        return tuple(declare(t.spec) for t in self.tools.values())
