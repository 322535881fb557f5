"""What the store derives from a message: a fingerprint and the text recall searches.

This module must never touch the database.
"""

from __future__ import annotations

import hashlib
import json

from compaction.messages import (
    Message,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.serialize import message_to_dict


def fingerprint(message: Message) -> str:
    """A stable digest of everything the message carries (provider data included), so the
    same message decoded from two requests of a client has the same fingerprint."""
    data = json.dumps(message_to_dict(message), sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(data.encode(), digest_size=16).hexdigest()


def searchable_text(message: Message) -> str:
    """Every word the message shows: its text, the tool calls (name and arguments) and the
    tool results' text, reasoning summaries included."""
    lines: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart | ReasoningPart | SummaryPart | ToolResultPart):
            lines.append(part.text)
        elif isinstance(part, ToolCallPart):
            lines.append(f"{part.name}({part.arguments})")
    return "\n".join(line for line in lines if line)
