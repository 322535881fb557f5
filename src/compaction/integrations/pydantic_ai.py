"""Compaction for pydantic-ai agents: the `Compaction` capability, and converters between
pydantic-ai messages and `Conversation` (`pip install 'llm-compaction[pydantic-ai]'`).

    agent = Agent(model, capabilities=[Compaction(CompactionConfig(token_threshold=60_000))])

The capability compacts in `prepare_model_request`, the hook pydantic-ai names for
compaction: it changes only the messages of that model request, never the run's history, so
`result.all_messages()` keeps every original. It keeps a `SessionLog` per conversation
(`ctx.conversation_id`, else the run id; or `thread=`), so a summary written at one step is
reused at every later step and run of that conversation, and only new messages are decoded.
It adds a `recall` tool (off with `recall=False`) that returns the originals compacted away.

Mapping (each pydantic-ai part keeps its full JSON for replay; a part compaction did not
change goes back exactly as it came, ids, timestamps, signatures and provider details
included):

    SystemPromptPart                   a pinned system message
    UserPromptPart, SpeechPart         a user message: text (a transcript), images (ImageUrl,
                                       BinaryContent); other files replayed but not counted
    ToolReturnPart and other returns   a tool message (failed or retried: an error result),
                                       text and images of multimodal returns
    RetryFeedbackPart                  a user message with its text
    CapabilityPart                     a capability's data: a user message with its content
                                       (shortened, still the capability's part); its
                                       instruction from the operator: a pinned system message
    CompactionPart (request side)      a summary — and a summary is written back as one, in a
                                       ModelRequest, as pydantic-ai expects of an application's
                                       summary
    other request parts (instruction,  a pinned system message without parts, replayed
      tool-availability, settings…)
    ModelResponse                      one assistant message: TextPart, ThinkingPart (reasoning,
                                       signature kept), ToolCallPart and other calls, speech by its
                                       transcript; native tool parts, provider compaction and
                                       files other than images replayed in place, not counted

This module must never change the history pydantic-ai keeps, nor call a model itself.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from compaction.integrations._core import (
    Threads,
    Unit,
    View,
    conversation_fields,
    recall_spec,
    require,
    tool_schema,
)

require("pydantic_ai", "pydantic-ai", "pydantic-ai")

import pydantic  # noqa: E402
from pydantic_ai import messages as pm  # noqa: E402
from pydantic_ai.capabilities import AbstractCapability  # noqa: E402
from pydantic_ai.tools import RunContext, Tool  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402

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

__all__ = ["Compaction", "PydanticAICodec", "from_conversation", "to_conversation"]

PART: str = (
    "pydantic_ai.part"  # the JSON of the part a message (request) or part (response) came from
)
MESSAGE: str = (
    "pydantic_ai.message"  # on a message: its ModelRequest/ModelResponse fields but parts
)
AT: str = "pydantic_ai.at"  # on a message: [index of the pydantic-ai message, index of its part]
OPAQUE: str = "pydantic_ai.opaque"  # on an assistant message: [[position, part JSON], …]
SUMMARY_MARK: str = "compaction"  # CompactionPart.metadata key of the summaries we write

_MESSAGES = pm.ModelMessagesTypeAdapter
_REQUEST_PART: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(pm.ModelRequestPart)
_RESPONSE_PART: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(pm.ModelResponsePart)


# -- decoding ---------------------------------------------------------------------------------


class PydanticAICodec:
    """pydantic-ai messages ↔ neutral messages (one neutral message per request part, one
    per response)."""

    def decode(self, history: Sequence[pm.ModelMessage], start: int) -> list[Unit]:
        return [Unit(i, 1, self.decode_one(history[i], i)) for i in range(start, len(history))]

    def decode_one(self, message: pm.ModelMessage, index: int) -> list[Message]:
        """The neutral messages of one pydantic-ai message (`index`: its place in the history)."""
        data = _MESSAGES.dump_python([message], mode="json")[0]
        parts_json = data.pop("parts")
        if isinstance(message, pm.ModelResponse):
            return [_decode_response(message, data, parts_json, index)]
        out: list[Message] = []
        for j, (part, raw) in enumerate(zip(message.parts, parts_json, strict=True)):
            role, parts, pinned = _request_part(part)
            extra = {MESSAGE: data, AT: [index, j], PART: raw}
            out.append(Message(role, parts, pinned=pinned, provider_data=extra))
        if not out:  # an interrupted request with nothing collected
            out.append(
                Message("system", (), pinned=True, provider_data={MESSAGE: data, AT: [index, -1]})
            )
        return out

    def encode(self, messages: Sequence[Message]) -> list[pm.ModelMessage]:
        out: list[pm.ModelMessage] = []
        group: list[Message] = []
        for message in messages:
            if group and _origin(message) is not None and _origin(message) == _origin(group[0]):
                group.append(message)
                continue
            if group:
                out.append(_encode_group(group))
            group = [message]
        if group:
            out.append(_encode_group(group))
        return out


CODEC = PydanticAICodec()


def same_message(a: pm.ModelMessage, b: pm.ModelMessage) -> bool:
    """Whether two pydantic-ai messages are the same message: the same object, equal, or
    equal in JSON (a history loaded from JSON holds `BinaryImage` where the original held
    `BinaryContent`, which compare unequal)."""
    if a is b or a == b:
        return True
    if type(a) is not type(b) or len(a.parts) != len(b.parts):
        return False
    return bool(_MESSAGES.dump_python([a], mode="json") == _MESSAGES.dump_python([b], mode="json"))


def to_conversation(messages: Sequence[pm.ModelMessage], **fields: Any) -> Conversation:
    """A `Conversation` of pydantic-ai messages (`fields`: tools, model, …)."""
    neutral = [m for i, message in enumerate(messages) for m in CODEC.decode_one(message, i)]
    return Conversation(tuple(neutral), **fields)


def from_conversation(conversation: Conversation | Sequence[Message]) -> list[pm.ModelMessage]:
    """pydantic-ai messages of a `Conversation` (decoded by `to_conversation`, compacted or not)."""
    messages = conversation.messages if isinstance(conversation, Conversation) else conversation
    return CODEC.encode(list(messages))


def _origin(message: Message) -> int | None:
    at = message.provider_data.get(AT)
    return int(at[0]) if at else None


def _request_part(part: Any) -> tuple[Role, tuple[Part, ...], bool]:
    if isinstance(part, pm.SystemPromptPart):
        return "system", (TextPart(part.content),), True
    if isinstance(part, pm.UserPromptPart):
        return "user", _user_content(part.content), False
    if isinstance(part, pm.BaseToolReturnPart):
        content = _content_items(part.content_items(mode="str", wrap_if_error=False))
        error = part.outcome in pm.ERROR_OUTCOMES
        return "tool", (ToolResultPart(part.tool_call_id, content, error),), False
    if isinstance(part, pm.RetryPromptPart):  # built in memory by older code
        text = part.model_response()
        if part.tool_name is not None:
            return "tool", (ToolResultPart(part.tool_call_id, (TextPart(text),), True),), False
        return "user", (TextPart(text),), False
    if isinstance(part, pm.RetryFeedbackPart):
        return "user", (TextPart(part.model_response()),), False
    if isinstance(part, pm.CompactionPart) and part.provider_name is None and part.content:
        return "user", (_summary(part),), False
    if isinstance(part, pm.SpeechPart):  # the user's spoken turn, read by its transcript
        return "user", (TextPart(part.transcript or ""),), False
    if isinstance(part, pm.CapabilityPart):
        seen = part.model_content()
        parts = _user_content([seen] if isinstance(seen, pm.TextContent) else seen)
        if _is_instruction(part):  # the application's voice, kept as a system prompt is
            return "system", parts, True
        return "user", parts, False  # data, framed on the user's channel
    return "system", (), True


def _is_instruction(part: pm.CapabilityPart) -> bool:
    """Whether pydantic-ai sends a capability part as a system message: an instruction from
    a source with the operator's authority (with less, it is downgraded to framed data)."""
    return part.rendering.voice == "instruction" and part.source.authority == "operator"


def _summary(part: pm.CompactionPart) -> SummaryPart:
    text = part.content or ""
    mark = (part.metadata or {}).get(SUMMARY_MARK)
    if isinstance(mark, dict) and isinstance(mark.get("replaced"), int):
        return SummaryPart(text, mark["replaced"])
    return parse_summary_text(text) or SummaryPart(text)


def _user_content(content: str | Sequence[Any]) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (TextPart(content),)
    return _content_items(content)


def _content_items(items: Sequence[Any]) -> tuple[TextPart | ImagePart, ...]:
    out: list[TextPart | ImagePart] = []
    for item in items:
        if isinstance(item, str):
            out.append(TextPart(item))
        elif isinstance(item, pm.TextContent):
            out.append(TextPart(item.content))
        elif isinstance(item, pm.ImageUrl):
            detail = (item.vendor_metadata or {}).get("detail")
            out.append(ImagePart(item.url, media_type=item.media_type, detail=detail))
        elif isinstance(item, pm.BinaryContent) and item.is_image:
            encoded = base64.b64encode(item.data).decode()
            detail = (item.vendor_metadata or {}).get("detail")
            out.append(
                ImagePart(
                    f"data:{item.media_type};base64,{encoded}",
                    media_type=item.media_type,
                    detail=detail,
                )
            )
        # Other files (audio, documents, video, cache points) are replayed from the part's
        # JSON and not counted.
    return tuple(out)


def _decode_response(
    message: pm.ModelResponse, data: dict[str, Any], parts_json: list[Any], index: int
) -> Message:
    parts: list[Part] = []
    opaque: list[list[Any]] = []
    for j, (part, raw) in enumerate(zip(message.parts, parts_json, strict=True)):
        neutral = _response_part(part, {PART: raw})
        if neutral is None:
            opaque.append([j, raw])
        else:
            parts.append(neutral)
    extra: dict[str, Any] = {MESSAGE: data, AT: [index, 0]}
    if opaque:
        extra[OPAQUE] = opaque
    return Message("assistant", tuple(parts), provider_data=extra)


def _response_part(part: Any, extra: dict[str, Any]) -> Part | None:
    if isinstance(part, pm.TextPart):
        return TextPart(part.content, provider_data=extra)
    if isinstance(part, pm.ThinkingPart):
        return ReasoningPart(part.content, signature=part.signature, provider_data=extra)
    if isinstance(part, pm.BaseToolCallPart) and not isinstance(part, pm.NativeToolCallPart):
        return ToolCallPart(
            part.tool_call_id, part.tool_name, part.args_as_json_str(), provider_data=extra
        )
    if isinstance(part, pm.SpeechPart):
        return TextPart(part.transcript or "", provider_data=extra)
    if isinstance(part, pm.FilePart) and part.content.is_image:
        (image,) = _content_items([part.content])
        return ImagePart(image.url, media_type=image.media_type, provider_data=extra)  # type: ignore[union-attr]
    return None


# -- encoding ---------------------------------------------------------------------------------


def _encode_group(group: list[Message]) -> pm.ModelMessage:
    """One pydantic-ai message for the neutral messages of one origin (or one new message)."""
    first = group[0]
    envelope = first.provider_data.get(MESSAGE)
    if envelope is None:
        return _new_message(first)
    data = dict(envelope)
    if data.get("kind") == "response":
        data["parts"] = _response_parts(first)
    else:
        data["parts"] = [p for m in group for p in _request_parts(m)]
    return _MESSAGES.validate_python([data])[0]


def _request_parts(message: Message) -> list[Any]:
    raw = message.provider_data.get(PART)
    if raw is None:
        return []
    if _request_part(_REQUEST_PART.validate_python(raw))[1] == message.parts:
        return [raw]
    # Changed by compaction (a masked tool result): the new content over the part's fields.
    kind = raw.get("part_kind")
    if message.tool_results:
        return [{**raw, "content": _tool_content(message.tool_results[0])}]
    if message.is_summary:
        return [_summary_part(message)]
    if kind in ("system-prompt", "capability"):  # a capability's data stays framed as its own,
        return [{**raw, "content": message.text}]  # never the user's words
    return [{"part_kind": "user-prompt", "content": _user_prompt(message.parts)}]


def _response_parts(message: Message) -> list[Any]:
    out: list[Any] = []
    for part in message.parts:
        raw = part.provider_data.get(PART)
        if raw is not None and _response_part(_RESPONSE_PART.validate_python(raw), {}) == part:
            out.append(raw)
        else:
            out.append(_new_response_part(part))
    for position, raw in sorted(message.provider_data.get(OPAQUE, ()), key=lambda e: e[0]):
        out.insert(position, raw)
    return out


def _new_message(message: Message) -> pm.ModelMessage:
    """A pydantic-ai message for one a compaction made (a summary, a marker)."""
    if message.role == "assistant":
        return pm.ModelResponse(parts=[_new_response_part(p) for p in message.parts])
    if message.is_summary:
        parts: list[Any] = [_summary_part(message)]
    elif message.role == "system":
        parts = [pm.SystemPromptPart(message.text)]
    elif message.tool_results:
        result = message.tool_results[0]
        parts = [pm.ToolReturnPart("tool", _tool_content(result), result.tool_call_id)]
    else:
        parts = [pm.UserPromptPart(_user_prompt(message.parts))]
    return _MESSAGES.validate_python([{"kind": "request", "parts": parts}])[0]


def _summary_part(message: Message) -> pm.CompactionPart:
    replaced = max((p.replaced for p in message.parts if isinstance(p, SummaryPart)), default=0)
    return pm.CompactionPart(content=message.text, metadata={SUMMARY_MARK: {"replaced": replaced}})


def _new_response_part(part: Part) -> Any:
    if isinstance(part, ReasoningPart):
        return pm.ThinkingPart(part.text, signature=part.signature)
    if isinstance(part, ToolCallPart):
        return pm.ToolCallPart(part.name, part.arguments, part.id)
    if isinstance(part, ImagePart):
        return pm.FilePart(_file(part))  # type: ignore[arg-type]
    text = part.text if isinstance(part, TextPart | SummaryPart) else ""
    return pm.TextPart(text)


def _file(part: ImagePart) -> pm.ImageUrl | pm.BinaryContent:
    if part.url.startswith("data:") and ";base64," in part.url:
        head, _, payload = part.url.partition(";base64,")
        return pm.BinaryContent(base64.b64decode(payload), media_type=head[len("data:") :])
    return pm.ImageUrl(part.url)


def _user_prompt(parts: Sequence[Part]) -> str | list[Any]:
    items: list[Any] = [
        _file(p) if isinstance(p, ImagePart) else getattr(p, "text", "") for p in parts
    ]
    return items[0] if len(items) == 1 and isinstance(items[0], str) else items


def _tool_content(result: ToolResultPart) -> Any:
    items = [_file(p) if isinstance(p, ImagePart) else p.text for p in result.content]
    return items[0] if len(items) == 1 and isinstance(items[0], str) else items


# -- the capability ---------------------------------------------------------------------------


@dataclass
class Compaction(AbstractCapability[Any]):
    """Compacts what the model is shown, before every model request; the run's history
    keeps everything. Add it with `Agent(..., capabilities=[Compaction(config)])`.

    `thread` names the conversation a run belongs to (a string, or a function of the
    `RunContext`); by default `ctx.conversation_id`, which pydantic-ai carries across runs
    that share `message_history`. `store` is where the log lives (a path or URL, or a
    `SessionStore`; default: in memory). `summarizer` writes LLM summaries when the config's
    strategies ask for them.
    """

    config: CompactionConfig | None = None
    _: KW_ONLY
    store: SessionStore | str | None = None
    summarizer: Provider | None = None
    thread: str | Callable[[RunContext[Any]], object] | None = None
    recall: bool = True
    last_view: View[pm.ModelMessage] | None = field(default=None, init=False, repr=False)
    _threads: Threads[pm.ModelMessage] = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False)
    _tools: tuple[list[Any], tuple[dict[str, Any], ...]] | None = field(
        default=None, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self._threads = Threads(
            CODEC,
            config=self.config,
            store=self.store,
            summarizer=self.summarizer,
            agent="pydantic-ai",
            same=same_message,
        )
        self._lock = threading.Lock()

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a store and a summarizer: not spec-serializable

    @property
    def threads(self) -> Threads[pm.ModelMessage]:
        """Every conversation's log (`threads.log(thread_id)`), for recall and inspection."""
        return self._threads

    def thread_id(self, ctx: RunContext[Any]) -> object:
        if callable(self.thread):
            return self.thread(ctx)
        return self.thread or ctx.conversation_id or ctx.run_id or "default"

    async def prepare_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        fields = conversation_fields(
            tools=self._tool_schemas(request_context.model_request_parameters),
            model=getattr(request_context.model, "model_name", None),
        )
        view = await asyncio.to_thread(
            self._view, self.thread_id(ctx), list(request_context.messages), fields
        )
        self.last_view = view
        request_context.messages = view.messages
        return request_context

    def _view(
        self, thread: object, messages: list[pm.ModelMessage], fields: dict[str, Any]
    ) -> View[pm.ModelMessage]:
        with self._lock:
            return self._threads.view(thread, messages, **fields)

    def _tool_schemas(self, parameters: Any) -> tuple[dict[str, Any], ...]:
        definitions = [*parameters.function_tools, *getattr(parameters, "output_tools", [])]
        if self._tools is not None and self._tools[0] == definitions:
            return self._tools[1]
        schemas = tuple(
            tool_schema(d.name, d.description or "", d.parameters_json_schema) for d in definitions
        )
        self._tools = (definitions, schemas)
        return schemas

    def get_toolset(self) -> Any:
        if not self.recall:
            return None
        spec = recall_spec()

        async def recall(ctx: RunContext[Any], query: str) -> str:
            """Search this conversation's compacted-away originals.

            Args:
                query: words to look for, e.g. an identifier, a file name or an error.
            """
            return await asyncio.to_thread(self._recall, self.thread_id(ctx), query)

        return FunctionToolset([Tool(recall, name=spec.name, description=spec.description)])

    def _recall(self, thread: object, query: str) -> str:
        with self._lock:
            return self._threads.recall(thread, query)
