"""Compaction for LangChain 1.x agents and LangGraph: an `AgentMiddleware` for
`create_agent`, a `pre_model_hook` for LangGraph's prebuilt agent, and converters between
LangChain messages and `Conversation` (`pip install 'llm-compaction[langchain]'`).

    agent = create_agent(model, tools, middleware=[CompactionMiddleware(config)],
                         checkpointer=InMemorySaver())

The middleware compacts in `wrap_model_call`: the model is called with the compacted view,
and the agent's state (`messages`, and the checkpointer's copy) keeps every message. It keeps
a `SessionLog` per thread (the `thread_id` of the run's config; any string works), so a
summary is written once per compacted span and reused by every later call, and only
messages new since the last call are decoded, counted and logged. It registers a `recall`
tool. `PreModelHook(...)`, as the `pre_model_hook` of `langgraph.prebuilt.create_react_agent`,
does the same through `llm_input_messages`, which also leaves the state alone.

Mapping (each message keeps its `messages_to_dict` form for replay: a message compaction did
not change goes back as it came, ids, metadata, usage and signatures included):

    SystemMessage            a pinned system message
    HumanMessage             a user message: text, images (`image_url`, `image` blocks);
                             one marked `lc_source: summarization` is a summary
    AIMessage                an assistant message: text, reasoning (`thinking` with its
                             signature, `reasoning` blocks, `reasoning_content`), tool calls
                             (invalid ones too, so they stay with their answers)
    ToolMessage              a tool result (status "error": an error result), text and images
    ChatMessage, Function…   by role; anything else a pinned system message, replayed

A summary is a `HumanMessage` with `additional_kwargs={"lc_source": "summarization"}`, the
marker LangChain's own summarization uses. This module must never write the agent's state.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from compaction.integrations._core import (
    Threads,
    Unit,
    View,
    conversation_fields,
    recall_spec,
    require,
)

require("langchain", "langchain", "LangChain")
require("langgraph", "langchain", "LangGraph")

from langchain.agents.middleware import AgentMiddleware, ModelRequest  # noqa: E402
from langchain_core import messages as lm  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402

from compaction.config import CompactionConfig  # noqa: E402
from compaction.messages import (  # noqa: E402
    Conversation,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    Role,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    parse_summary_text,
)
from compaction.providers.base import Provider  # noqa: E402
from compaction.store import SessionStore  # noqa: E402

__all__ = [
    "CompactionMiddleware",
    "LangChainCodec",
    "PreModelHook",
    "from_conversation",
    "to_conversation",
]

STORED: str = "langchain.message"  # on a message: its messages_to_dict form
SUMMARY_SOURCE: str = "summarization"  # the lc_source LangChain marks summaries with

_ROLES: dict[str, Role] = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}


class LangChainCodec:
    """LangChain messages ↔ neutral messages, one for one."""

    def decode(self, history: Sequence[lm.BaseMessage], start: int) -> list[Unit]:
        return [Unit(i, 1, [decode_message(history[i])]) for i in range(start, len(history))]

    def encode(self, messages: Sequence[Message]) -> list[lm.BaseMessage]:
        return [encode_message(m) for m in messages]


CODEC = LangChainCodec()


def to_conversation(messages: Sequence[lm.BaseMessage], **fields: Any) -> Conversation:
    """A `Conversation` of LangChain messages (`fields`: tools, model, …)."""
    return Conversation(tuple(decode_message(m) for m in messages), **fields)


def from_conversation(conversation: Conversation | Sequence[Message]) -> list[lm.BaseMessage]:
    """LangChain messages of a `Conversation` (decoded by `to_conversation` or compacted)."""
    messages = conversation.messages if isinstance(conversation, Conversation) else conversation
    return CODEC.encode(list(messages))


def same_message(a: lm.BaseMessage, b: lm.BaseMessage) -> bool:
    """The same message: the same object, or equal (a checkpointer's copy)."""
    return a is b or a == b


# -- decoding ---------------------------------------------------------------------------------


def _stored(message: lm.BaseMessage) -> dict[str, Any]:
    # JSON-safe: an artifact or metadata value JSON cannot hold is kept as its text.
    data: dict[str, Any] = json.loads(
        json.dumps(lm.messages_to_dict([message])[0], ensure_ascii=False, default=str)
    )
    return data


def decode_message(message: lm.BaseMessage) -> Message:
    """The neutral message for one LangChain message."""
    extra = {STORED: _stored(message)}
    role = _ROLES.get(getattr(message, "role", None) or message.type)
    if isinstance(message, lm.HumanMessage) and _is_summary(message):
        return Message("user", (_summary(message),), provider_data=extra)
    if role is None:
        return Message("system", (), pinned=True, provider_data=extra)
    if role == "tool":
        tool_call_id = getattr(message, "tool_call_id", None) or message.name or ""
        error = getattr(message, "status", "success") == "error"
        content = tuple(p for p in _content(message.content) if isinstance(p, TextPart | ImagePart))
        return Message("tool", (ToolResultPart(tool_call_id, content, error),), provider_data=extra)
    parts = list(_content(message.content))
    if role == "assistant":
        reasoning = message.additional_kwargs.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            parts.insert(0, ReasoningPart(reasoning))
        parts.extend(_tool_calls(message))
    return Message(role, tuple(parts), pinned=role == "system", provider_data=extra)


def _is_summary(message: lm.HumanMessage) -> bool:
    return message.additional_kwargs.get("lc_source") == SUMMARY_SOURCE


def _summary(message: lm.BaseMessage) -> SummaryPart:
    text = message.text
    return parse_summary_text(text) or SummaryPart(text)


def _content(content: str | list[Any]) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (TextPart(content),) if content else ()
    parts: list[Part] = []
    for block in content:
        part = _block(block)
        if part is not None:
            parts.append(part)
    return tuple(parts)


def _block(block: Any) -> Part | None:
    """A content block as a part; None for blocks replayed but not counted (tool_use copies
    of `tool_calls`, files, provider blocks this module does not read)."""
    if isinstance(block, str):
        return TextPart(block)
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(block["text"])
    if kind == "image_url":
        value = block.get("image_url")
        url = value.get("url") if isinstance(value, dict) else value
        detail = value.get("detail") if isinstance(value, dict) else None
        return ImagePart(url, detail=detail) if isinstance(url, str) else None
    if kind == "image":
        mime = block.get("mime_type") or block.get("media_type")
        data = block.get("base64") or (
            block.get("data") if block.get("source_type") == "base64" else None
        )
        if isinstance(data, str):
            return ImagePart(f"data:{mime or 'image/png'};base64,{data}", media_type=mime)
        url = block.get("url")
        return ImagePart(url, media_type=mime) if isinstance(url, str) else None
    if kind == "thinking":
        return ReasoningPart(str(block.get("thinking", "")), signature=block.get("signature"))
    if kind == "redacted_thinking":
        return ReasoningPart("", encrypted=str(block.get("data", "")))
    if kind == "reasoning":
        text = block.get("reasoning")
        if not isinstance(text, str):
            summary = block.get("summary") or []
            text = "\n".join(s.get("text", "") for s in summary if isinstance(s, dict))
        encrypted = block.get("encrypted_content")
        return ReasoningPart(text, encrypted=encrypted if isinstance(encrypted, str) else None)
    return None


def _tool_calls(message: lm.BaseMessage) -> list[Part]:
    parts: list[Part] = []
    for call in getattr(message, "tool_calls", None) or ():
        arguments = json.dumps(call.get("args", {}), ensure_ascii=False)
        parts.append(ToolCallPart(call.get("id") or "", call.get("name", ""), arguments))
    for call in getattr(message, "invalid_tool_calls", None) or ():
        parts.append(
            ToolCallPart(call.get("id") or "", call.get("name") or "", call.get("args") or "")
        )
    return parts


# -- encoding ---------------------------------------------------------------------------------


def encode_message(message: Message) -> lm.BaseMessage:
    """The LangChain message for a neutral one: as it came when compaction did not change
    it, else built from its parts over the fields it came with."""
    stored = message.provider_data.get(STORED)
    if stored is not None:
        (original,) = lm.messages_from_dict([stored])
        if decode_message(original).parts == message.parts:
            return original
        if message.tool_results:  # a masked result: the new content, every other field kept
            data = {**stored, "data": {**stored["data"], "content": _result_content(message)}}
            return lm.messages_from_dict([data])[0]
    if message.is_summary:
        return lm.HumanMessage(
            content=message.text, additional_kwargs={"lc_source": SUMMARY_SOURCE}
        )
    if message.role == "system":
        return lm.SystemMessage(content=message.text)
    if message.role == "tool":
        result = message.tool_results[0]
        status = "error" if result.is_error else "success"
        return lm.ToolMessage(
            content=_result_content(message), tool_call_id=result.tool_call_id, status=status
        )
    if message.role == "assistant":
        calls = [
            {"name": c.name, "args": c.parsed_arguments() or {}, "id": c.id, "type": "tool_call"}
            for c in message.tool_calls
        ]
        return lm.AIMessage(content=message.text, tool_calls=calls)
    return lm.HumanMessage(content=_blocks(message.parts))


def _blocks(parts: Sequence[Part]) -> str | list[str | dict[str, Any]]:
    blocks: list[str | dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ImagePart):
            blocks.append({"type": "image_url", "image_url": {"url": part.url}})
        elif isinstance(part, TextPart | SummaryPart):
            blocks.append({"type": "text", "text": part.text})
    if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks


def _result_content(message: Message) -> str | list[str | dict[str, Any]]:
    return _blocks(message.tool_results[0].content)


# -- the hooks --------------------------------------------------------------------------------


class _Compaction:
    """What the middleware and the pre-model hook share: the threads and the recall tool."""

    def __init__(
        self,
        config: CompactionConfig | None,
        *,
        store: SessionStore | str | None,
        summarizer: Provider | None,
        thread: str | Callable[[], object] | None,
    ) -> None:
        self.threads: Threads[lm.BaseMessage] = Threads(
            CODEC,
            config=config,
            store=store,
            summarizer=summarizer,
            agent="langchain",
            same=same_message,
        )
        self.thread = thread
        self.last_view: View[lm.BaseMessage] | None = None
        self._lock = threading.Lock()
        self._tools: tuple[list[Any], tuple[dict[str, Any], ...]] | None = None

    def thread_id(self) -> object:
        if callable(self.thread):
            return self.thread()
        if self.thread is not None:
            return self.thread
        try:
            from langgraph.config import get_config

            configurable = get_config().get("configurable") or {}
        except RuntimeError:  # called outside a graph run
            configurable = {}
        return configurable.get("thread_id") or "default"

    def view(
        self, messages: Sequence[lm.BaseMessage], tools: Sequence[Any], model: Any
    ) -> list[lm.BaseMessage]:
        fields = conversation_fields(tools=self._tool_schemas(tools), model=_model_name(model))
        with self._lock:
            view = self.threads.view(self.thread_id(), list(messages), **fields)
        self.last_view = view
        return view.messages

    def _tool_schemas(self, tools: Sequence[Any]) -> tuple[dict[str, Any], ...]:
        listed = list(tools)
        if self._tools is not None and self._tools[0] == listed:
            return self._tools[1]
        schemas = tuple(convert_to_openai_tool(t) for t in listed)
        self._tools = (listed, schemas)
        return schemas

    def recall_tool(self) -> StructuredTool:
        spec = recall_spec()

        def recall(query: str) -> str:
            thread = self.thread_id()
            with self._lock:
                return self.threads.recall(thread, query)

        return StructuredTool.from_function(
            recall, name=spec.name, description=spec.description, args_schema=dict(spec.parameters)
        )


class CompactionMiddleware(AgentMiddleware[Any, Any, Any]):
    """`create_agent(..., middleware=[CompactionMiddleware(config)])`: every model call sees
    the compacted view of the messages; the agent's state keeps them all.

    `thread` names the conversation (a string, or a function returning one); by default the
    run's `thread_id`. `store` is where the log lives (default: in memory); `summarizer`
    writes LLM summaries when the config's strategies ask for them; `recall=False` leaves
    the recall tool out.
    """

    def __init__(
        self,
        config: CompactionConfig | None = None,
        *,
        store: SessionStore | str | None = None,
        summarizer: Provider | None = None,
        thread: str | Callable[[], object] | None = None,
        recall: bool = True,
    ) -> None:
        super().__init__()
        self.compaction = _Compaction(config, store=store, summarizer=summarizer, thread=thread)
        self.tools = [self.compaction.recall_tool()] if recall else []

    @property
    def threads(self) -> Threads[lm.BaseMessage]:
        return self.compaction.threads

    @property
    def last_view(self) -> View[lm.BaseMessage] | None:
        return self.compaction.last_view

    def _compacted(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        messages = self.compaction.view(request.messages, request.tools, request.model)
        return request.override(messages=cast("list[lm.AnyMessage]", messages))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]
    ) -> Any:
        return handler(self._compacted(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[Any]],
    ) -> Any:
        compacted = await asyncio.to_thread(self._compacted, request)
        return await handler(compacted)


class PreModelHook(_Compaction):
    """`create_react_agent(model, tools, pre_model_hook=PreModelHook(config))`: the model
    gets the compacted view as `llm_input_messages`; the graph's `messages` stay whole.
    Add `hook.recall_tool()` to the tools for recall."""

    def __init__(
        self,
        config: CompactionConfig | None = None,
        *,
        store: SessionStore | str | None = None,
        summarizer: Provider | None = None,
        thread: str | Callable[[], object] | None = None,
        tools: Sequence[Any] = (),
    ) -> None:
        super().__init__(config, store=store, summarizer=summarizer, thread=thread)
        self.tool_list = list(tools)

    def __call__(self, state: Any) -> dict[str, Any]:
        messages = state["messages"] if isinstance(state, dict) else state.messages
        return {"llm_input_messages": self.view(messages, self.tool_list, None)}


def _model_name(model: Any) -> str | None:
    for attribute in ("model_name", "model"):
        name = getattr(model, attribute, None)
        if isinstance(name, str):
            return name
    return None
