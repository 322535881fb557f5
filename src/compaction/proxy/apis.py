"""The three APIs the proxy speaks, as far as the proxy needs to know them: where the
history is in a request body, how to decode only its new part, how to write a compacted
view back, and what identifies a conversation.

    openai     POST /v1/chat/completions   history in `messages` (system messages inside)
    responses  POST /v1/responses          history in `input`, system text in `instructions`
    anthropic  POST /v1/messages           history in `messages`, system text in `system`

Decoding and encoding are the dialects' (`compaction.dialects`); this module only cuts
request bodies into the pieces the session logic compares, and must never change a field it
does not own: a compacted request keeps every non-history field of the request it came from.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from compaction.dialects import get_dialect
from compaction.dialects.base import Dialect
from compaction.exceptions import DecodeError
from compaction.messages import Conversation, Message
from compaction.proxy.errors import ApiName

_LOCATION = re.compile(r"^(messages|input)\[(\d+)\]")
_COMPACT_JSON: Final = (",", ":")
# Fields a client moves between requests without changing what the model reads: Claude Code
# puts its one `cache_control` breakpoint on the newest message each time.
MOVABLE_KEYS: Final = frozenset({"cache_control"})


@dataclass(frozen=True, slots=True)
class Api:
    """One endpoint's wire layout. `incremental`: wire items map one to one onto messages,
    so the new items of a request can be decoded alone. `output_limit_keys`: the request
    fields that cap the reply's tokens, the one that wins first."""

    name: ApiName
    path: str
    items_key: str
    head_key: str | None
    upstream: Literal["openai", "anthropic"]
    incremental: bool
    output_limit_keys: tuple[str, ...]

    @property
    def dialect(self) -> Dialect:
        return get_dialect(self.name)

    def items(self, payload: dict[str, Any]) -> list[Any] | None:
        """The wire history list, or None when the body has none (a string `input`, …)."""
        value = payload.get(self.items_key)
        return value if isinstance(value, list) else None

    def head(self, payload: dict[str, Any]) -> Any:
        """The request field that carries system text outside the history, if any."""
        return payload.get(self.head_key) if self.head_key is not None else None

    def stateful(self, payload: dict[str, Any]) -> bool:
        """A Responses request that continues a conversation stored upstream: the proxy sees
        only part of the history, so it must not compact it."""
        if self.name != "responses":
            return False
        if payload.get("previous_response_id") or payload.get("conversation"):
            return True
        items = self.items(payload) or []
        return any(isinstance(i, dict) and i.get("type") == "item_reference" for i in items)

    def max_output_tokens(self, payload: dict[str, Any]) -> int:
        """The reply tokens the request reserves in the window (0 when it sets no limit)."""
        for key in self.output_limit_keys:
            value = payload.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return 0

    def decode(self, payload: dict[str, Any]) -> Conversation:
        return self.dialect.decode(payload)

    def shell(self, payload: dict[str, Any]) -> Conversation:
        """The request without its history: model, tools, every other field, and the leading
        system message a head field decodes to."""
        return self.dialect.decode({**payload, self.items_key: []})

    def decode_tail(self, items: list[Any], start: int) -> list[Message] | None:
        """The messages of `items[start:]`, decoded alone; None when this API cannot decode a
        tail by itself (the caller decodes the whole request). Error locations name the
        item's index in the whole request."""
        if not self.incremental:
            return None
        tail = items[start:]
        if self.name == "openai" and any(
            isinstance(i, dict) and (i.get("role") == "function" or "function_call" in i)
            for i in tail
        ):
            return None  # legacy function calls get ids from their position in the request
        try:
            conversation = self.dialect.decode({self.items_key: tail})
        except DecodeError as e:
            raise _shifted(e, start) from None
        return list(conversation.messages)

    def encode(self, shell: Conversation, messages: tuple[Message, ...]) -> dict[str, Any]:
        """The request body for `messages` with every other field from `shell`."""
        body = self.dialect.encode(shell.with_messages(messages))
        if not isinstance(body, dict):
            body = {self.items_key: body}
        return body

    def session_seed(self, payload: dict[str, Any]) -> str:
        """What identifies a conversation without a session header: the API, the model, the
        system prompt and the first user message, hashed."""
        items = self.items(payload)
        system: Any = self.head(payload)
        first_user: Any = None
        if items is None:
            first_user = payload.get(self.items_key)
        else:
            for item in items:
                if not isinstance(item, dict):
                    continue
                role = item.get("role")
                if role in ("system", "developer") and system is None:
                    system = item
                elif role == "user":
                    first_user = item
                    break
        seed = json.dumps(
            [self.name, payload.get("model"), comparable(system), comparable(first_user)],
            sort_keys=True,
            ensure_ascii=False,
            separators=_COMPACT_JSON,
        )
        return "h-" + hashlib.sha256(seed.encode()).hexdigest()[:32]


OPENAI_CHAT: Final = Api(
    "openai",
    "/v1/chat/completions",
    "messages",
    None,
    "openai",
    True,
    ("max_completion_tokens", "max_tokens"),
)
OPENAI_RESPONSES: Final = Api(
    "responses", "/v1/responses", "input", "instructions", "openai", False, ("max_output_tokens",)
)
ANTHROPIC_MESSAGES: Final = Api(
    "anthropic", "/v1/messages", "messages", "system", "anthropic", True, ("max_tokens",)
)
APIS: Final = (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES)


def comparable(value: Any) -> Any:
    """A history item (or a head field) as two requests of one conversation send it alike:
    without the fields clients move (`MOVABLE_KEYS`), and with content that is one plain text
    block written as that text (Claude Code sends its newest system turn as a marked block,
    and the same turn as a string once the marker has moved on)."""
    if isinstance(value, list):
        return [comparable(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: comparable(v) for k, v in value.items() if k not in MOVABLE_KEYS}
    content = out.get("content")
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and content[0].keys() == {"type", "text"}
        and content[0]["type"] == "text"
    ):
        out["content"] = content[0]["text"]
    return out


def dumps(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=_COMPACT_JSON).encode()


def _shifted(error: DecodeError, start: int) -> DecodeError:
    """The same error with its item index counted from the start of the whole request."""
    location = error.location or ""
    match = _LOCATION.match(location)
    if match is None:
        return error
    text = str(error).removeprefix(f"{location}: ")
    index = int(match.group(2)) + start
    return DecodeError(text, location=f"{match.group(1)}[{index}]{location[match.end() :]}")
