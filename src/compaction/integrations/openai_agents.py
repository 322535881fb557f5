"""Compaction for the OpenAI Agents SDK: a `Session` and a `call_model_input_filter` that
work together (`pip install 'llm-compaction[openai-agents]'`).

    session = CompactionSession("user-42", CompactionConfig(token_threshold=60_000))
    result = await Runner.run(agent, "Fix the bug.", session=session,
                              run_config=session.run_config())

The session stores the conversation's full history (what `get_items` returns, every item as
it came); its `input_filter`, called by the SDK before every model call of a run, compacts
what that call sends. Both share one `SessionLog` per session id, so a summary written at
one model call is reused by every later call and run, and each call decodes, counts and
logs only the items new since the previous one. `session.recall_tool()` is a `FunctionTool`
the model can call to get originals back.

Items are Responses API input items; the conversion is `compaction.dialects.RESPONSES`'s
(`to_conversation`, `from_conversation` here), lossless for items compaction does not change
(ids, encrypted reasoning, images, hosted-tool items). A summary is a user message item.

`pop_item` and `clear_session` start a new branch of the session's log (`<id>.<random>`):
the log is append-only. This module must never change the items the SDK keeps.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from typing import Any

from compaction.integrations._core import (
    Threads,
    Unit,
    conversation_fields,
    recall_spec,
    require,
    tool_schema,
)

require("agents", "openai-agents", "the OpenAI Agents SDK")

from agents import FunctionTool, RunConfig, RunContextWrapper  # noqa: E402
from agents.run_config import CallModelData, ModelInputData  # noqa: E402

from compaction.config import CompactionConfig  # noqa: E402
from compaction.dialects.openai_responses import ITEMS, decode_items, encode_message  # noqa: E402
from compaction.messages import Conversation, Message  # noqa: E402
from compaction.providers.base import Provider  # noqa: E402
from compaction.store import SessionStore  # noqa: E402

__all__ = ["CompactionSession", "ItemsCodec", "from_conversation", "to_conversation"]

Item = Any  # a Responses input item: a dict, as the SDK keeps them


class ItemsCodec:
    """Responses input items ↔ neutral messages (a run of model output items is one unit)."""

    def decode(self, history: Sequence[Item], start: int) -> list[Unit]:
        messages = decode_items(list(history[start:]), location="input")
        units: list[Unit] = []
        at = start
        for message in messages:
            count = len(message.provider_data.get(ITEMS) or ()) or 1
            units.append(Unit(at, count, [message]))
            at += count
        return units

    def encode(self, messages: Sequence[Message]) -> list[Item]:
        return [item for message in messages for item in encode_message(message)]


CODEC = ItemsCodec()


def to_conversation(items: Sequence[Item], **fields: Any) -> Conversation:
    """A `Conversation` of Responses input items (`fields`: tools, model, …)."""
    return Conversation(
        tuple(decode_items(list(items), location="input")), dialect="responses", **fields
    )


def from_conversation(conversation: Conversation | Sequence[Message]) -> list[Item]:
    """Responses input items of a `Conversation` (decoded by `to_conversation` or compacted)."""
    messages = conversation.messages if isinstance(conversation, Conversation) else conversation
    return CODEC.encode(list(messages))


class CompactionSession:
    """A Session (the SDK's protocol) holding the full history of one conversation, with the
    input filter that compacts each model call's view of it.

    `store` is where the log lives (a path, URL or `SessionStore`; default: in memory);
    `threads` lets several sessions share one store and one set of logs.
    """

    def __init__(
        self,
        session_id: str,
        config: CompactionConfig | None = None,
        *,
        store: SessionStore | str | None = None,
        summarizer: Provider | None = None,
        threads: Threads[Item] | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = None
        self.threads: Threads[Item] = threads or Threads(
            CODEC,
            config=config,
            store=store,
            summarizer=summarizer,
            dialect="responses",
            agent="openai-agents",
        )
        self.last_view: Any = None
        self._lock = threading.Lock()
        self._key: object = session_id

    # -- the Session protocol --------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Item]:
        items = await asyncio.to_thread(self._items)
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[Item]) -> None:
        await asyncio.to_thread(self._add, list(items))

    async def pop_item(self) -> Item | None:
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._clear)

    def _items(self) -> list[Item]:
        with self._lock:
            thread = self.threads.thread(self._key)
            if not thread.history and thread.log.info().messages:
                # A session resumed from the store: its items as they were logged.
                logged = [m for _, m in thread.log.store.messages(thread.log.session_id)]
                return CODEC.encode(logged)
            return list(thread.history)

    def _add(self, items: list[Item]) -> None:
        history = self._items() + items
        with self._lock:
            self.threads.sync(self._key, history)

    def _pop(self) -> Item | None:
        history = self._items()
        if not history:
            return None
        last = history.pop()
        self._restart(history)
        return last

    def _clear(self) -> None:
        self._restart([])

    def _restart(self, history: list[Item]) -> None:
        """The log is append-only: a shorter history is a new branch of the session."""
        with self._lock:
            self.threads.sync(self._key, history)

    # -- the model's view ------------------------------------------------------------------

    async def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """`RunConfig.call_model_input_filter`: what this model call sends, compacted."""
        fields = conversation_fields(tools=_tool_schemas(data.agent), model=_model_name(data.agent))
        items = list(data.model_data.input)
        view = await asyncio.to_thread(self._view, items, fields)
        self.last_view = view
        return ModelInputData(input=view.messages, instructions=data.model_data.instructions)

    def _view(self, items: list[Item], fields: dict[str, Any]) -> Any:
        with self._lock:
            return self.threads.view(self._key, items, **fields)

    def run_config(self, **options: Any) -> RunConfig:
        """A `RunConfig` with this session's input filter (and any other `options`)."""
        return RunConfig(call_model_input_filter=self.input_filter, **options)

    # -- recall ----------------------------------------------------------------------------

    def recall_tool(self) -> FunctionTool:
        """The `recall` tool for this session, as an Agents SDK `FunctionTool`."""
        spec = recall_spec()

        async def invoke(context: RunContextWrapper[Any], arguments: str) -> str:
            query = str(json.loads(arguments or "{}").get("query", ""))
            return await asyncio.to_thread(self._recall, query)

        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=dict(spec.parameters),
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    def _recall(self, query: str) -> str:
        with self._lock:
            return self.threads.recall(self._key, query)

    @property
    def log_id(self) -> str:
        """The id of the session's log in the store (its current branch)."""
        return self.threads.thread(self._key).log.session_id


def _tool_schemas(agent: Any) -> tuple[dict[str, Any], ...]:
    out = []
    for t in getattr(agent, "tools", None) or ():
        if isinstance(t, FunctionTool):
            out.append(tool_schema(t.name, t.description or "", t.params_json_schema))
    return tuple(out)


def _model_name(agent: Any) -> str | None:
    model = getattr(agent, "model", None)
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None
