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

import itertools
from collections.abc import Sequence, Set

from compaction.messages import Group, Message, Part, Role, SummaryPart

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
            out.append(previous.with_parts((*previous.parts, *message.parts)))
            continue
        out.append(message)
    return out


def unfold(messages: Sequence[Message], dialect: str | None) -> list[tuple[Message, range]]:
    """What `fold` did, undone: each message with the input index range it stands for. A
    user message that mixes the user's words (or results) with a summary folded in before
    or after them becomes its runs: the words keep index i, a summary gets no index of its
    own, so that a compaction keeps the words and can merge, shrink or grow the summary."""
    out: list[tuple[Message, range]] = []
    for i, message in enumerate(messages):
        kinds = {_is_summary(p) for p in message.parts}
        if dialect not in _ALTERNATING or message.role != "user" or len(kinds) < 2:
            out.append((message, range(i, i + 1)))
            continue
        own = True  # the first run of the user's own parts carries the index
        for is_summary, run in itertools.groupby(message.parts, key=_is_summary):
            parts = tuple(run)
            if is_summary:
                out.append((Message("user", parts), range(i + 1, i + 1)))
            else:
                out.append(
                    (message.with_parts(parts), range(i, i + 1) if own else range(i + 1, i + 1))
                )
                own = False
    return out


def _is_summary(part: Part) -> bool:
    return isinstance(part, SummaryPart)


def anchor_after_first_user(
    messages: Sequence[Message],
    groups: Sequence[Group],
    protected: Set[int],
    first: int | None,
    dialect: str | None,
) -> range:
    """The messages that must stay (masked at most) so that a summary of what follows the
    user's first message (`first`, its index) is not folded into it: the turn right after
    it, where roles must alternate and that message is kept. Empty elsewhere."""
    if dialect not in _ALTERNATING:
        return range(0)
    if first is None or first not in protected:
        return range(0)
    for group in groups:
        if group.start == first + 1 and messages[group.start].role == "assistant":
            return group.indices()
    return range(0)


def needs_marker(dialect: str | None, before: Sequence[Role], after: Role | None) -> bool:
    """Whether a marker between roles `before` (the non-system roles so far) and `after`
    (the next message's, None at the end) must stay for the dialect's rules."""
    if dialect not in _ALTERNATING:
        return False
    if not before:
        return after != "user"
    return before[-1] == "assistant" and after == "assistant"
