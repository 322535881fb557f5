"""The conversation model every other module speaks: parts, messages, conversations, groups.

Messages are immutable values. A strategy never edits a message in place; it builds a new
conversation. Wire formats live in `compaction.dialects`; this module must never know about
any provider's JSON shape beyond the opaque `provider_data` it carries for them.

Provider-opaque data (signed thinking, encrypted reasoning, unknown wire fields) is kept
beside the parts in `provider_data` so a dialect can replay it untouched.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from compaction._textcache import text_cache

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]

# Set in a message's `provider_data` by a dialect whose user-role messages can be an
# environment's output rather than words the user wrote (SWE-agent's observations).
OBSERVATION = "compaction.observation"
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text."""

    text: str
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image, by URL or `data:` URI. Dimensions, when known, drive token counting."""

    url: str
    media_type: str | None = None
    detail: str | None = None
    width: int | None = None
    height: int | None = None
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)
    kind: Literal["image"] = "image"


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A call the assistant asked for. `arguments` is the raw JSON text, as sent on the wire."""

    id: str
    name: str
    arguments: str
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)
    kind: Literal["tool_call"] = "tool_call"

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a dict (a fresh copy), or None when they are not a JSON object."""
        value = json_object(self.arguments)
        return None if value is None else dict(value)


@text_cache()
def json_object(text: str) -> dict[str, Any] | None:
    """`text` read as a JSON object ({} for blank text), or None when it is not one. Cached:
    strategies and the ledger read the same calls' arguments several times; callers copy
    before they change it."""
    try:
        value = json.loads(text) if text.strip() else {}
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """The answer to one tool call. `content` is text and images, as the tool returned them."""

    tool_call_id: str
    content: tuple[TextPart | ImagePart, ...]
    is_error: bool = False
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)
    kind: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))

    def with_text(self, text: str) -> ToolResultPart:
        """This result with `text` as its whole content (images and all replaced)."""
        return ToolResultPart(
            self.tool_call_id, (TextPart(text),), self.is_error, provider_data=self.provider_data
        )


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Model reasoning. `signature` / `encrypted` are provider-signed data, replayed untouched."""

    text: str
    signature: str | None = None
    encrypted: str | None = None
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class SummaryPart:
    """Earlier context that compaction replaced. `replaced` counts the messages it stands for."""

    text: str
    replaced: int = 0
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)
    kind: Literal["summary"] = "summary"


SUMMARY_HEADER_RE = re.compile(r"^\[compacted: (\d+) messages? → (\d+) chars\]")


def summary_header(replaced: int, chars: int) -> str:
    """The first line of every summary message: how many messages became how many chars."""
    return f"[compacted: {replaced} messages → {chars} chars]"


def parse_summary_text(text: str) -> SummaryPart | None:
    """A `SummaryPart` when `text` starts with a summary header (as a dialect decodes it)."""
    match = SUMMARY_HEADER_RE.match(text)
    if match is None:
        return None
    return SummaryPart(text=text, replaced=int(match.group(1)))


Part: TypeAlias = TextPart | ImagePart | ToolCallPart | ToolResultPart | ReasoningPart | SummaryPart


@dataclass(frozen=True, slots=True)
class Message:
    """One message. `provider_data` holds wire fields the dialect must replay (unknown keys,
    content shape hints); it never affects equality of meaning and never reaches strategies."""

    role: Role
    parts: tuple[Part, ...]
    name: str | None = None
    pinned: bool = False
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # The parts by kind, read once (strategies and readers ask for them many times a pass).
    _calls: tuple[ToolCallPart, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _results: tuple[ToolResultPart, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @classmethod
    def text_message(cls, role: Role, text: str, *, pinned: bool = False) -> Message:
        return cls(role=role, parts=(TextPart(text),), pinned=pinned)

    @property
    def text(self) -> str:
        """The message's own text (text and summary parts), without tool payloads."""
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart | SummaryPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        calls = self._calls
        if calls is None:
            calls = tuple(p for p in self.parts if isinstance(p, ToolCallPart))
            object.__setattr__(self, "_calls", calls)
        return calls

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        results = self._results
        if results is None:
            results = tuple(p for p in self.parts if isinstance(p, ToolResultPart))
            object.__setattr__(self, "_results", results)
        return results

    @property
    def is_summary(self) -> bool:
        return any(isinstance(p, SummaryPart) for p in self.parts)

    @property
    def is_observation(self) -> bool:
        """An environment's output sent back as a user message (SWE-agent style), not words
        the user wrote; the dialect marks it (`OBSERVATION`)."""
        return self.role == "user" and bool(self.provider_data.get(OBSERVATION))

    @property
    def is_user_turn(self) -> bool:
        """A message the user wrote: role user, and words of its own, or neither a summary nor
        tool results (Anthropic clients send the user's next message in the same message as the
        results it follows; a summary is folded into the user message before it)."""
        if self.role != "user" or self.is_observation:
            return False
        if any(isinstance(p, TextPart) and p.text.strip() for p in self.parts):
            # Words of the user's own, even beside a summary folded in after them.
            return True
        return not self.is_summary and not self.tool_results

    def with_parts(self, parts: Iterable[Part]) -> Message:
        """This message with other parts: role, name, pinning and provider data kept."""
        return Message(
            self.role,
            tuple(parts),
            name=self.name,
            pinned=self.pinned,
            provider_data=self.provider_data,
        )

    def char_count(self) -> int:
        total = 0
        for part in self.parts:
            total += _part_chars(part)
        return total


def _part_chars(part: Part) -> int:
    if isinstance(part, TextPart | SummaryPart | ReasoningPart):
        return len(part.text)
    if isinstance(part, ToolCallPart):
        return len(part.name) + len(part.arguments)
    if isinstance(part, ToolResultPart):
        return sum(_part_chars(p) for p in part.content)
    return 0


@dataclass(frozen=True, slots=True)
class Conversation:
    """An ordered list of messages plus the request fields that travel with them.

    `tools` are the tool schemas as the wire sent them; `dialect` names where the conversation
    came from (`openai`, `anthropic`, `traj`) and so which provider rules it must keep;
    `provider_data` holds the other request fields (temperature, metadata, …), replayed untouched.
    """

    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    model: str | None = None
    dialect: str | None = None
    provider_data: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]

    def with_messages(self, messages: Iterable[Message]) -> Conversation:
        return replace(self, messages=tuple(messages))

    def append(self, message: Message) -> Conversation:
        return replace(self, messages=(*self.messages, message))

    @property
    def user_turns(self) -> int:
        return sum(1 for m in self.messages if m.is_user_turn)

    def char_count(self) -> int:
        return sum(m.char_count() for m in self.messages)


@dataclass(frozen=True, slots=True)
class Group:
    """A unit strategies may keep, drop or replace whole: indices `start` to `stop` (exclusive).

    A user message is a group; so is an assistant message with every tool call it made and the
    messages answering them (parallel calls included). A system message or a pinned message is
    its own group and is marked `pinned`. Cuts happen only between groups.
    """

    start: int
    stop: int
    pinned: bool = False

    def indices(self) -> range:
        return range(self.start, self.stop)

    def __len__(self) -> int:
        return self.stop - self.start


def _only_results(message: Message) -> bool:
    return (
        bool(message.parts)
        and all(
            isinstance(p, ToolResultPart) or (isinstance(p, TextPart) and message.role == "user")
            for p in message.parts
        )
        and bool(message.tool_results)
    )


def group_messages(messages: Sequence[Message]) -> list[Group]:
    """Split messages into groups so that no cut ever separates a tool call from its result.

    An assistant message with tool calls absorbs every following message that answers one of
    its calls (a `tool` message, or a user message whose content starts with tool results);
    one that writes its action in text absorbs the observation that answers it (SWE-agent's
    environment output, `is_observation`). Messages answering calls of an earlier group
    (malformed input) stay with that earlier group.
    """
    groups: list[Group] = []
    i = 0
    n = len(messages)
    while i < n:
        message = messages[i]
        stop = i + 1
        pinned = message.pinned or message.role == "system"
        if message.role == "assistant" and message.tool_calls:
            pending = {c.id for c in message.tool_calls}
            while stop < n and pending and _only_results(messages[stop]):
                answered = {r.tool_call_id for r in messages[stop].tool_results}
                if not answered & pending:
                    break
                pending -= answered
                stop += 1
        elif (
            message.role == "assistant"
            and stop < n
            and messages[stop].is_observation
            and not messages[stop].pinned
        ):
            stop += 1
        elif message.tool_results and groups and not pinned:
            # A result with no call right before it: keep it attached to the previous group
            # so that a cut can never make it more orphaned than it already is.
            prev = groups.pop()
            groups.append(Group(prev.start, stop, prev.pinned))
            i = stop
            continue
        groups.append(Group(i, stop, pinned))
        i = stop
    return groups


def live_turn_index(messages: Sequence[Message]) -> int | None:
    """Index of the last message the user wrote (the live turn), or None if there is none."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].is_user_turn:
            return i
    return None


def tool_names_by_call_id(messages: Iterable[Message]) -> dict[str, ToolCallPart]:
    return {c.id: c for m in messages for c in m.tool_calls}


def handle_for(message: Message) -> str:
    """The archive handle of a message (`m-` and 12 hex digits): the same content always
    gets the same one. Compaction shows it where an original was replaced."""
    key = _HANDLES.get(id(message))
    if key is not None and key[0] is message:
        return key[1]
    # repr covers every field, provider data included, and is deterministic for equal input.
    handle = "m-" + hashlib.sha256(repr(message).encode()).hexdigest()[:12]
    if len(_HANDLES) > 100_000:
        _HANDLES.clear()
    _HANDLES[id(message)] = (message, handle)
    return handle


# Holding the message keeps its id from being reused while the entry lives.
_HANDLES: dict[int, tuple[Message, str]] = {}
