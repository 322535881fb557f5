"""The shape rules a compaction must keep, per dialect: what the core asks of a dialect
beyond decode, encode and validate.

Anthropic's Messages API wants roles to alternate. Compaction breaks alternation only by
placing a summary or by removing what stood between two kept messages; `fold` mends that
(two user messages in a row become one, every part kept verbatim and in order, tool results
still first), and `needs_marker` says when a marker must stay so that the conversation does
not start with an assistant message or put two assistant messages side by side. The other
dialects have no such rule. This module must never see strategies or token counts.
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.messages import Message, Role

_ALTERNATING = frozenset({"anthropic"})


def fold(messages: list[Message], dialect: str | None) -> list[Message]:
    """`messages` with each pair of user messages in a row folded into one, where the
    dialect wants roles to alternate; unchanged otherwise."""
    if dialect not in _ALTERNATING:
        return messages
    out: list[Message] = []
    for message in messages:
        if out and out[-1].role == "user" and message.role == "user" and not message.tool_results:
            previous = out.pop()
            out.append(
                Message(
                    previous.role,
                    (*previous.parts, *message.parts),
                    name=previous.name,
                    pinned=previous.pinned,
                    provider_data=previous.provider_data,
                )
            )
            continue
        out.append(message)
    return out


def needs_marker(dialect: str | None, before: Sequence[Role], after: Role | None) -> bool:
    """Whether a marker between roles `before` (the non-system roles so far) and `after`
    (the next message's, None at the end) must stay for the dialect's rules."""
    if dialect not in _ALTERNATING:
        return False
    if not before:
        return after != "user"
    return before[-1] == "assistant" and after == "assistant"
