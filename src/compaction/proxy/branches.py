"""Branches: the lines of history of one proxy session, and how a request is placed on one.

A request extends a branch when its history items are those of the branch's last request
plus new ones: equal as sent (one C-level comparison of the parsed JSON), or equal once the
fields clients move between requests are set aside (`apis.comparable`: Claude Code moves its
`cache_control` breakpoint to the newest message every time and re-sends its newest system
turn as a string). Each logged message remembers the wire item it came from, so a rewritten
request takes every surviving message as the client sends it now (`Branch.as_sent`): the
client's markers where it put them this time, and nowhere else; the compacted prefix stays
byte for byte what the previous request sent, so a provider's prompt cache keeps hitting.
A branch read back from the store (a restarted proxy) is continued the same way: its logged
messages, encoded again, are compared with the request's items (`logged_items`).

This module must never do I/O beyond reading the branch's log in memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from compaction.compactor import Compactor
from compaction.log import SessionLog
from compaction.messages import Conversation, Message, Part
from compaction.proxy.apis import MOVABLE_KEYS, Api, comparable
from compaction.store import fingerprint


@dataclass
class Branch:
    """One line of history of a session: its log, its compactor, and the wire items of the
    last request it took (what the next request is compared with)."""

    log: SessionLog
    compactor: Compactor
    items: list[Any] | None = None
    head: Any = None
    # The wire item each logged message was decoded from (index k: the request's item k),
    # and the seq of item 0; None where items do not map one to one onto messages.
    logged: list[Any] | None = None
    item_seq0: int | None = None
    raw_tools: Any = None
    tools: tuple[Any, ...] = ()
    rewritten: bool = False
    # The client's history breaks a rule its compaction would keep; every later request
    # re-sends that history, so the branch goes upstream as it comes, uncompacted.
    breaks_rules: bool = False

    def extended_by(self, items: list[Any] | None, head: Any) -> bool:
        """Whether `items` (with `head`) continue this branch's last request: equal as sent
        (one C-level comparison), or equal once the fields clients move are set aside."""
        if self.items is None or items is None:
            return False
        n = len(self.items)
        if len(items) < n:
            return False
        if head == self.head and items[:n] == self.items:
            return True
        same_head: bool = comparable(head) == comparable(self.head)
        return same_head and comparable(items[:n]) == comparable(self.items)

    def as_sent(self, api: Api, items: list[Any] | None) -> tuple[Message, ...]:
        """The view with each logged message that `items` re-sends in another form (a cache
        marker moved on or off it, its content re-written) taken as `items` has it now, so
        the client's markers stay where the client put them this time."""
        view = self.log.messages
        logged, first = self.logged, self.item_seq0
        if logged is None or first is None or items is None:
            return view
        out = list(view)
        for index, seq in enumerate(self.log.seqs):
            if seq is None:
                # made by a compaction from older messages: their markers were placed for a
                # request long gone (and the API takes at most four)
                out[index] = without_moved_fields(out[index])
                continue
            k = seq - first
            if 0 <= k < min(len(logged), len(items)) and items[k] != logged[k]:
                fresh = api.decode_tail(items[: k + 1], k)
                if fresh is not None and len(fresh) == 1:
                    out[index] = fresh[0]
        return tuple(out)


def map_items(
    branch: Branch, api: Api, items: list[Any] | None, history: list[Message], seqs: list[int]
) -> None:
    """Note which logged seq each wire item became, where items map one to one onto the
    history's messages after its leading shell messages."""
    lead = len(history) - len(items) if items is not None else -1
    if not api.incremental or items is None or lead < 0 or len(seqs) != len(history):
        branch.logged, branch.item_seq0 = None, None
        return
    branch.logged = list(items)
    branch.item_seq0 = seqs[lead] if items else None


def logged_items(
    api: Api,
    shell: Conversation,
    logged: list[Message],
    history: list[Message],
    items: list[Any] | None,
) -> list[Any] | None:
    """The wire items the `logged` messages of a stored branch were decoded from, when the
    request (`history`, decoded from `items`) continues them once the fields clients move are
    set aside; None otherwise (or where items do not map one to one onto messages)."""
    if items is None or not api.incremental:
        return None
    lead = len(history) - len(items)
    if lead < 0 or not lead <= len(logged) <= len(history):
        return None
    if [fingerprint(m) for m in logged[:lead]] != [fingerprint(m) for m in history[:lead]]:
        return None
    wire = api.items(api.encode(shell, tuple(logged[lead:])))
    if wire is None or len(wire) != len(logged) - lead:
        return None
    return wire if comparable(wire) == comparable(items[: len(wire)]) else None


def without_moved_fields(message: Message) -> Message:
    """`message` without the fields clients move (`MOVABLE_KEYS`) in its replayed wire data,
    its parts' and its opaque blocks'; the same object when it has none."""
    parts = tuple(_part_without(p) for p in message.parts)
    data = _data_without(message.provider_data)
    same = all(a is b for a, b in zip(parts, message.parts, strict=True))
    if same and data is message.provider_data:
        return message
    return replace(message, parts=parts, provider_data=data)


def _part_without(part: Part) -> Part:
    data = _data_without(part.provider_data)
    return part if data is part.provider_data else replace(part, provider_data=data)


def _data_without(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """Replay data (`<dialect>.extra` objects, `<dialect>.opaque` blocks) without the moved
    fields; the same mapping when it has none."""
    changed: dict[str, Any] = {}
    for key, value in data.items():
        if key.endswith(".extra") and isinstance(value, Mapping) and MOVABLE_KEYS & value.keys():
            changed[key] = {k: v for k, v in value.items() if k not in MOVABLE_KEYS}
        elif key.endswith(".opaque") and isinstance(value, tuple | list):
            blocks = tuple(
                (at, {k: v for k, v in b.items() if k not in MOVABLE_KEYS})
                if isinstance(b, Mapping) and MOVABLE_KEYS & b.keys()
                else (at, b)
                for at, b in value
            )
            if any(new is not old for (_, new), (_, old) in zip(blocks, value, strict=True)):
                changed[key] = blocks
    return {**data, **changed} if changed else data
