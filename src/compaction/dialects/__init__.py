"""Wire formats in and out: pick a dialect, detect one, parse JSON text, decode a payload.

    openai     OpenAI Chat Completions (and compatible servers)     `openai_chat.py`
    anthropic  Anthropic Messages                                   `anthropic.py`
    responses  OpenAI Responses (`/v1/responses` request bodies)    `openai_responses.py`
    traj       SWE-agent `.traj` trajectories, input only → OpenAI   `swe_traj.py`

Every dialect decodes losslessly (`encode(decode(x)) == x`) and validates a conversation
against its provider's rules. Wire values a dialect does not model (unknown fields, opaque
blocks, tool schemas, an Anthropic tool_use `input`) are shared with the decoded payload, not
copied: treat a payload as read-only once decoded.

This package must never see strategies or token counts, and never read files or sockets:
callers hand it text or parsed JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from compaction.dialects.anthropic import ANTHROPIC, AnthropicDialect
from compaction.dialects.base import Dialect, Violation
from compaction.dialects.openai_chat import OPENAI, OpenAIChatDialect
from compaction.dialects.openai_responses import RESPONSES, OpenAIResponsesDialect
from compaction.dialects.swe_traj import TRAJ, SweTrajDialect
from compaction.exceptions import ConfigError, DecodeError
from compaction.messages import Conversation

__all__ = [
    # dialects
    "ANTHROPIC",
    "DIALECTS",
    "OPENAI",
    "RESPONSES",
    "TRAJ",
    "AnthropicDialect",
    "Dialect",
    "OpenAIChatDialect",
    "OpenAIResponsesDialect",
    "SweTrajDialect",
    "Violation",
    # entry points
    "decode_any",
    "detect_dialect",
    "get_dialect",
    "load_payload",
]

DIALECTS: Final[Mapping[str, Dialect]] = {
    "openai": OPENAI,
    "anthropic": ANTHROPIC,
    "responses": RESPONSES,
    "traj": TRAJ,
}

# Block types that exist only in Anthropic's Messages format.
_ANTHROPIC_BLOCKS: Final = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "image",
        "document",
        "server_tool_use",
        "web_search_tool_result",
    }
)
_ANTHROPIC_FIELDS: Final = ("anthropic_version", "anthropic-version", "anthropic_beta")


def get_dialect(name: str) -> Dialect:
    """The dialect called `name`; a `ConfigError` naming the valid names otherwise."""
    try:
        return DIALECTS[name]
    except KeyError:
        valid = ", ".join(sorted(DIALECTS))
        raise ConfigError(
            f"unknown dialect {name!r}; expected one of: {valid}", location="dialect"
        ) from None


def detect_dialect(payload: Any) -> str:
    """Guess the dialect of parsed JSON: "openai", "anthropic", "responses" or "traj".

    An object with `input` (and no `messages`) is an OpenAI Responses request; one with a
    `history` list (and no `messages`) is a SWE-agent trajectory. A list of
    messages or an object with `messages` is OpenAI chat unless it shows a sign of Anthropic:
    a top-level `system`, an `anthropic_version`-style field, or an Anthropic-only block type
    (tool_use, tool_result, thinking, redacted_thinking, image, …) in some message's content.
    """
    if isinstance(payload, dict):
        if "messages" not in payload:
            if "input" in payload:
                return "responses"
            if isinstance(payload.get("history"), list):
                return "traj"
            raise DecodeError(
                "cannot tell the dialect: expected a list of messages, an object with "
                "`messages` (OpenAI or Anthropic), an object with `input` (OpenAI Responses) "
                "or an object with `history` (SWE-agent .traj)",
                location="payload",
            )
        if "system" in payload or any(k in payload for k in _ANTHROPIC_FIELDS):
            return "anthropic"
        messages = payload["messages"]
    elif isinstance(payload, list):
        messages = payload
    else:
        raise DecodeError(
            "cannot tell the dialect: expected a JSON list of messages or an object",
            location="payload",
        )
    return "anthropic" if _has_anthropic_blocks(messages) else "openai"


def _has_anthropic_blocks(messages: Any) -> bool:
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") in _ANTHROPIC_BLOCKS:
                return True
    return False


class _NonStandardConstant(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NonStandardConstant(name)


def load_payload(text_or_bytes: str | bytes, *, source: str) -> Any:
    """Parse JSON text; a `DecodeError` "source: line L col C: …" when it is malformed.

    `source` names where the text came from (a path, "stdin", "request body"). NaN and
    Infinity are refused: they are not JSON and no provider accepts them.
    """
    if isinstance(text_or_bytes, bytes | bytearray):
        try:
            text = bytes(text_or_bytes).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise DecodeError(
                f"not UTF-8 text (byte {e.start}: {e.reason})", location=source
            ) from e
    else:
        text = text_or_bytes.removeprefix("\ufeff")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise DecodeError(f"line {e.lineno} col {e.colno}: {e.msg}", location=source) from e
    except _NonStandardConstant as e:
        raise DecodeError(f"{e.args[0]} is not valid JSON", location=source) from e
    except RecursionError as e:
        raise DecodeError("JSON nested too deeply", location=source) from e


def decode_any(payload: Any, dialect: str | None = None) -> Conversation:
    """Decode parsed JSON with the named dialect, or the detected one when `dialect` is None."""
    name = dialect if dialect is not None else detect_dialect(payload)
    return get_dialect(name).decode(payload)
