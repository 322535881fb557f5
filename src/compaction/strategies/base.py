"""The workspace strategies operate on, and the report each strategy step returns.

A `Workspace` is one compaction in progress: the current messages (as slots that remember
which original messages they stand for), which of them are protected, how many tokens they
cost, and the archive of every original a strategy replaced. Strategies change slots only
through `replace` and `replace_span`, which keep the token total and the archive right.

This module must never know a wire format; token costs come from the injected `measure`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from compaction.dialects import shape
from compaction.messages import Group, Message, SummaryPart, group_messages, handle_for

if TYPE_CHECKING:
    from compaction.summarize.llm import Summarizer


class Resizable(Protocol):
    """A summary that can be rendered again into more or less room."""

    def render(self, budget: int | None) -> Message:
        """The summary in at most `budget` tokens (None: in full). It may exceed a budget
        too small for its shortest form, which is never empty."""
        ...


@dataclass(slots=True)
class Slot:
    """One message of the compaction in progress. `origin` is the range of input indices it
    stands for (slots stay in input order, so a replaced span's origins are one range)."""

    message: Message
    origin: range
    tokens: int
    protected: bool = False
    recent: bool = False
    live: bool = False  # part of the latest tool exchange, which the model is about to read
    # May be masked, never replaced or dropped: the turn that keeps a summary from being
    # folded into the user's first message where roles must alternate.
    anchored: bool = False
    # Protected for the user's words alone: the tool results riding in the same message (an
    # earlier call's, where Anthropic puts them in the user's next turn) may be masked.
    words_only: bool = False
    # A summary that can shrink or grow (see `Resizable`), and the message a masked slot
    # held before (which the pipeline may give back when room is left).
    resizable: Resizable | None = None
    unmasked: Message | None = None


@dataclass
class StepReport:
    """What one strategy did in one pass."""

    strategy: str
    tokens_before: int
    tokens_after: int
    messages_affected: int = 0
    detail: str = ""
    summarizer_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    summarizer_ms: float = 0.0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "strategy": self.strategy,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "messages_affected": self.messages_affected,
            "detail": self.detail,
        }
        if self.summarizer_calls or self.errors:
            data.update(
                summarizer_calls=self.summarizer_calls,
                input_tokens=self.input_tokens,
                output_tokens=self.output_tokens,
                summarizer_ms=round(self.summarizer_ms, 1),
                errors=self.errors,
            )
        return data


@dataclass(frozen=True, order=True, slots=True)
class Removal:
    """An original message a strategy replaced: its index in the input, the archive handle of
    what was replaced, and how (`masked`, `digested`, `dropped`)."""

    index: int
    handle: str
    action: str


@dataclass
class Workspace:
    """One compaction in progress. `target` is the token budget (None: compact the whole
    compactable region once, with no size goal). `reach_recent` lets strategies into the
    recent tail, which they otherwise leave alone; `reach_live` into the latest tool exchange
    (the results the model has not read yet), the last thing any strategy may touch."""

    slots: list[Slot]
    measure: Callable[[Message], int]
    overhead: int
    target: int | None
    dialect: str | None = None
    reach_recent: bool = False
    reach_live: bool = False
    # The target is the protected content itself, the one asked for being out of reach:
    # everything else folds into summaries, kept in full; the live results stay whole.
    floor: bool = False
    summarizer: Summarizer | None = None
    archive: dict[str, Message] = field(default_factory=dict)
    # One record per input message, the first time it is replaced (a summary replaced again
    # records nothing more: its originals are recorded already), so bookkeeping stays linear.
    _removed: dict[int, Removal] = field(default_factory=dict)
    _total: int = 0
    # Slots change shape only in `replace_span` (a message swapped for another of its kind
    # keeps its group), so the groups are computed again only after one.
    _groups: list[Group] | None = None

    def __post_init__(self) -> None:
        self._total = self.overhead + sum(s.tokens for s in self.slots)

    @property
    def messages(self) -> list[Message]:
        return [s.message for s in self.slots]

    def total(self) -> int:
        return self._total

    def fits(self) -> bool:
        return self.target is not None and self._total <= self.target

    def over_by(self) -> int:
        return 0 if self.target is None else max(self._total - self.target, 0)

    def compactable(self, index: int) -> bool:
        slot = self.slots[index]
        return not slot.protected and self._in_reach(slot)

    def maskable(self, index: int) -> bool:
        """Whether the tool results of slot `index` may be masked: where it is compactable,
        and in a message protected for the user's words alone."""
        slot = self.slots[index]
        return (not slot.protected or slot.words_only) and self._in_reach(slot)

    def _in_reach(self, slot: Slot) -> bool:
        return (self.reach_recent or not slot.recent) and (self.reach_live or not slot.live)

    def replaceable(self, index: int) -> bool:
        """Whether a strategy may replace or drop slot `index` (masking asks `compactable`)."""
        return self.compactable(index) and not self.slots[index].anchored

    def groups(self) -> list[Group]:
        if self._groups is None:
            self._groups = group_messages(self.messages)
        return self._groups

    def known_groups(self, groups: list[Group]) -> None:
        """The groups of the current slots, already computed by the caller."""
        self._groups = groups

    def compactable_runs(self) -> list[list[Group]]:
        """Maximal runs of consecutive groups that are wholly compactable, oldest first."""
        runs: list[list[Group]] = []
        current: list[Group] = []
        for group in self.groups():
            if not group.pinned and all(self.replaceable(i) for i in group.indices()):
                current.append(group)
            elif current:
                runs.append(current)
                current = []
        if current:
            runs.append(current)
        return runs

    @property
    def removed(self) -> list[Removal]:
        """What was replaced, by input index."""
        return sorted(self._removed.values())

    def remember(self, index: int, action: str) -> list[str]:
        """Archive the original behind slot `index`; return its handle."""
        slot = self.slots[index]
        original = slot.unmasked or slot.message
        handle = handle_for(original)
        self.archive.setdefault(handle, original)
        # A slot standing for several inputs was made by this compaction from slots whose
        # originals are recorded already.
        if len(slot.origin) == 1 and slot.origin[0] not in self._removed:
            self._removed[slot.origin[0]] = Removal(slot.origin[0], handle, action)
        return [handle]

    def replace(self, index: int, message: Message, action: str) -> None:
        """Swap one slot's message (same origin); the original goes to the archive."""
        slot = self.slots[index]
        self.remember(index, action)
        tokens = self.measure(message)
        self._total += tokens - slot.tokens
        unmasked = (slot.unmasked or slot.message) if action == "masked" else None
        self.slots[index] = dataclasses.replace(
            slot, message=message, tokens=tokens, unmasked=unmasked
        )

    def unmask(self, index: int) -> None:
        """Give a masked slot its message back (the pipeline does, when room is left)."""
        slot = self.slots[index]
        if slot.unmasked is None:
            return
        tokens = self.measure(slot.unmasked)
        self._total += tokens - slot.tokens
        self.slots[index] = dataclasses.replace(
            slot, message=slot.unmasked, tokens=tokens, unmasked=None
        )
        for origin in slot.origin:
            self._removed.pop(origin, None)

    def adopt(self, index: int, resizable: Resizable) -> None:
        """Let the summary at `index` be rendered into other sizes."""
        self.slots[index] = dataclasses.replace(self.slots[index], resizable=resizable)

    def resize(self, index: int, budget: int | None) -> None:
        """Render a resizable summary again into `budget` tokens (None: in full)."""
        slot = self.slots[index]
        if slot.resizable is not None:
            self.swap(index, slot.resizable.render(budget))

    def swap(self, index: int, message: Message) -> None:
        """Swap a slot's message for another rendering of the same content (not archived)."""
        slot = self.slots[index]
        tokens = self.measure(message)
        self._total += tokens - slot.tokens
        self.slots[index] = dataclasses.replace(slot, message=message, tokens=tokens)

    def replace_span(
        self,
        start: int,
        stop: int,
        messages: Sequence[Message],
        action: str,
        *,
        resizable: Resizable | None = None,
    ) -> None:
        """Replace slots `start:stop` by `messages` (which stand for all of their origins);
        `resizable` renders the (single) new message again into other sizes."""
        for i in range(start, stop):
            self.remember(i, action)
            self._total -= self.slots[i].tokens
        origin = range(self.slots[start].origin.start, self.slots[stop - 1].origin.stop)
        recent = any(self.slots[i].recent for i in range(start, stop))
        live = any(self.slots[i].live for i in range(start, stop))
        new_slots = []
        for message in messages:
            tokens = self.measure(message)
            self._total += tokens
            new_slots.append(
                Slot(message, origin, tokens, False, recent, live, resizable=resizable)
            )
        self.slots[start:stop] = new_slots
        self._groups = None

    def stands_for(self, index: int) -> int:
        """How many original messages slot `index` stands for (summaries count what they
        replaced, even when they came from an earlier compaction)."""
        slot = self.slots[index]
        replaced = max(
            (p.replaced for p in slot.message.parts if isinstance(p, SummaryPart)), default=1
        )
        return max(len(slot.origin), replaced)

    def span_tokens(self, start: int, stop: int) -> int:
        return sum(self.slots[i].tokens for i in range(start, stop))

    def marker_needed(self, index: int) -> bool:
        """Whether the dialect's shape rules need the summary or marker at `index`."""
        before = [s.message.role for s in self.slots[:index] if s.message.role != "system"]
        after = self.slots[index + 1].message.role if index + 1 < len(self.slots) else None
        return shape.needs_marker(self.dialect, before, after)
