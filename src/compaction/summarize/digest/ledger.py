"""The ledger: what a span of conversation did, section by section, extracted without any
LLM, rendered into whatever room it is given and parsed back.

`extract_ledger(messages)` reads a span; `render(ledger, budget_chars)` writes the items that
fit, most important first (the user's words, changed files, open errors and to-dos, standing
decisions and values before commands, notes, files only read and identifiers), each in the
fullest form that fits; `parse_ledger(text)` reads a rendered digest back, so the next
compaction merges instead of nesting.

This module must never call a model, read a wire format or count tokens; it must be
byte-for-byte deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.messages import Message
from compaction.summarize.digest.events import NO_OUTPUT, EarlierSummary, Event, Reader
from compaction.summarize.digest.format import summary_body
from compaction.summarize.digest.sections import Item, Narrative, Section, default_sections


@dataclass
class Ledger:
    """Each section's state, in the order the digest shows them."""

    sections: tuple[Section[Any], ...]
    states: list[Any] = field(default_factory=list)
    messages: int = 0

    def __post_init__(self) -> None:
        if not self.states:
            self.states = [s.new() for s in self.sections]

    def state(self, name: str) -> Any:
        for section, state in zip(self.sections, self.states, strict=True):
            if section.name == name:
                return state
        raise KeyError(name)

    def merge(self, later: Ledger) -> Ledger:
        """This ledger followed by `later` (later wins where they disagree)."""
        states = [
            s.merge(a, b) for s, a, b in zip(self.sections, self.states, later.states, strict=True)
        ]
        by_name = {s.name: state for s, state in zip(later.sections, later.states, strict=True)}
        for section, state in zip(self.sections, states, strict=True):
            section.settle(state, by_name)
        return Ledger(self.sections, states, self.messages + later.messages)

    def items(self) -> list[list[Item]]:
        """Each section's items; a fallback section's only when no other section has any."""
        out = [
            [] if s.fallback else s.items(state)
            for s, state in zip(self.sections, self.states, strict=True)
        ]
        if not any(out):
            out = [
                s.items(state) if s.fallback else []
                for s, state in zip(self.sections, self.states, strict=True)
            ]
        return out

    def section(self, name: str) -> Section[Any]:
        return next(s for s in self.sections if s.name == name)

    def copy(self) -> Ledger:
        """A ledger with the same facts whose states can change apart from this one's."""
        return self.merge(Ledger(self.sections))


class LedgerBuilder:
    """Reads messages one at a time, so the ledger of every prefix of a span is at hand on
    the way (the digest compares several prefixes in one pass)."""

    def __init__(self, *, user_chars: int = 1200) -> None:
        self.user_chars = user_chars
        self.ledger = Ledger(default_sections(user_chars))
        self._reader = Reader()
        self._seq = 0
        # For each kind of event, the (section, state index) pairs that read it.
        self._readers: dict[type, list[int]] = {}
        for index, section in enumerate(self.ledger.sections):
            for kind in section.events:
                self._readers.setdefault(kind, []).append(index)

    def add(self, message: Message) -> None:
        self.ledger.messages += 1
        earlier: Ledger | None = None
        for event in self._reader.read(message):
            self._seq += 1
            if isinstance(event, EarlierSummary):
                earlier = parse_ledger(event.text, user_chars=self.user_chars)
                self.ledger = self.ledger.merge(earlier)
                self.ledger.messages += max(event.replaced - 1, 0)
                continue
            self._observe(self.ledger, event)
        if earlier is not None:
            self._reader.after_summary(awaited(earlier), asked(earlier))

    def merge(self, ledger: Ledger, count: int) -> None:
        """Take in a summary's ledger as if its message had been read here (`count`: the
        messages it stands for)."""
        self.ledger = self.ledger.merge(ledger)
        self.ledger.messages += count - 1
        self._reader.after_summary(awaited(ledger), asked(ledger))

    def beside(self, message: Message) -> None:
        """Take in, as context, a message the digest sits beside and does not replace (the
        user's task, kept verbatim): what its words name counts, nothing of it is recorded."""
        for event in Reader().read(message):
            for index in self._readers.get(type(event), ()):
                self.ledger.sections[index].beside(self.ledger.states[index], event)

    def _observe(self, ledger: Ledger, event: Event) -> None:
        for index in self._readers.get(type(event), ()):
            ledger.sections[index].observe(ledger.states[index], event, self._seq)

    def snapshot(self) -> Ledger:
        """The ledger of what was read so far, as a span ending here: a copy, with what an
        action still awaiting its output says (the builder reads on unchanged)."""
        ledger = self.ledger.copy()
        for event in self._reader.pending():
            self._observe(ledger, event)
        return ledger


def asked(ledger: Ledger) -> str | None:
    """The user's question a summary leaves unanswered, if any."""
    waiting: str | None = ledger.state("answers").waiting
    return waiting


def awaited(ledger: Ledger) -> list[str]:
    """The command a summary ends on, its output unseen (`NO_OUTPUT`), when it holds one
    such command alone: the output that follows the summary is that command's."""
    waiting = [
        record.command
        for record in ledger.state("commands").commands.values()
        if record.outcome == NO_OUTPUT
    ]
    return waiting if len(waiting) == 1 else []


def extract_ledger(messages: Iterable[Message], *, user_chars: int = 1200) -> Ledger:
    """Read a span of messages into a ledger. Summaries inside the span merge in."""
    builder = LedgerBuilder(user_chars=user_chars)
    for message in messages:
        builder.add(message)
    return builder.snapshot()


def render(
    ledger: Ledger, budget_chars: int | None = None, *, items: list[list[Item]] | None = None
) -> list[str]:
    """The ledger's sections as lines (each section a blank line, its heading, its items),
    holding at most `budget_chars` characters (None: everything, in full).

    Items go in by tier (0 first), and within a tier by rank (highest first): the must-haves
    (tiers 0 to 2) first in their shortest forms, then grown to fuller ones while there is
    room; then each lower tier the same way; last, the forms deferred (`Item.deferred`): what
    an item repeats of others, detail below any other item's line. At least one item is
    always kept: when the first in order does not fit, the first that does (a line shown
    beats a summary dropped for want of room), and when none does, the first. `items`: the
    ledger's items, when the caller renders the same ledger more than once (`Ledger.items`)."""
    per_section = ledger.items() if items is None else items
    headings = [s.heading for s in ledger.sections]
    chosen: dict[tuple[int, int], int] = {}  # (section, item) → form index
    order = sorted(
        (item.tier, -item.rank, si, ii)
        for si, items in enumerate(per_section)
        for ii, item in enumerate(items)
    )
    # A line two sections both hold (a note that is also a subject's latest word), or one
    # section twice (the user's "Carry on." of every turn), is shown once, where it ranks
    # first: in any room, in full too.
    shown: set[str] = set()
    unique = []
    for o in order:
        line = per_section[o[2]][o[3]].forms[0]
        if line not in shown:
            shown.add(line)
            unique.append(o)
    order = unique
    if budget_chars is None:
        chosen = {(si, ii): 0 for _, _, si, ii in order}
        return _lines(per_section, headings, chosen)
    used = 0
    opened: set[int] = set()
    # The must-haves (tiers 0 to 2) first in their shortest forms, then grown; then each
    # lower tier the same way: breadth before depth, importance before both.
    phases = [(0, 1, 2), (3,)]
    seen = {t for phase in phases for t in phase}
    phases += [(t,) for t in sorted({o[0] for o in order} - seen)]
    for phase in phases:
        in_phase = [o for o in order if o[0] in phase]
        for _, _, si, ii in in_phase:
            forms = per_section[si][ii].forms
            cost = len(forms[-1]) + 1 + (0 if si in opened else len(headings[si]) + 2)
            if used + cost <= budget_chars:
                chosen[(si, ii)] = len(forms) - 1
                used += cost
                opened.add(si)
        for _, _, si, ii in in_phase:
            if (si, ii) in chosen:
                used = _grow(
                    per_section[si][ii], chosen, (si, ii), used, budget_chars, deferred=False
                )
    # Last, the forms deferred: what an item repeats of others, detail below any line.
    for _, _, si, ii in order:
        if (si, ii) in chosen:
            used = _grow(per_section[si][ii], chosen, (si, ii), used, budget_chars, deferred=True)
    if not chosen and order:
        _, _, si, ii = order[0]
        chosen[(si, ii)] = len(per_section[si][ii].forms) - 1
    return _lines(per_section, headings, chosen)


def _grow(
    item: Item,
    chosen: dict[tuple[int, int], int],
    key: tuple[int, int],
    used: int,
    budget_chars: int,
    *,
    deferred: bool,
) -> int:
    """Give `item` the fullest form that fits the room left (among its deferred forms, or
    among the others); the characters used after."""
    current = chosen[key]
    edge = min(item.deferred, current)
    for better in range(edge) if deferred else range(edge, current):
        extra = len(item.forms[better]) - len(item.forms[current])
        if used + extra <= budget_chars:
            chosen[key] = better
            return used + extra
    return used


def _lines(
    per_section: Sequence[Sequence[Item]],
    headings: Sequence[str],
    chosen: dict[tuple[int, int], int],
) -> list[str]:
    lines: list[str] = []
    for si, items in enumerate(per_section):
        kept = [items[ii].forms[chosen[(si, ii)]] for ii in range(len(items)) if (si, ii) in chosen]
        if kept:
            lines += ["", headings[si], *kept]
    return lines


def parse_ledger(text: str, *, user_chars: int = 1200) -> Ledger:
    """Read a rendered summary back into a ledger. Prose sections (an LLM's summary, an
    earlier narrative) and text in no known shape (a truncation marker, a summary someone
    else wrote) come back as narrative, so nothing the summary says is lost."""
    ledger = Ledger(default_sections(user_chars))
    lines = summary_body(text)
    by_heading: dict[str, int] = {}
    for index, section in enumerate(ledger.sections):
        for heading in (section.heading, *section.reads):
            by_heading[heading] = index
    narrative = next(i for i, s in enumerate(ledger.sections) if isinstance(s, Narrative))
    if lines is None or not any(line in by_heading for line in lines):
        if lines is None:
            lines = [text.partition("\n")[2] if text.startswith("[compacted:") else text]
        body = "\n".join(lines).strip()
        if body:
            ledger.sections[narrative].parse(ledger.states[narrative], body)
        return ledger
    current: int | None = None
    item: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if current is None:
            return
        section, state = ledger.sections[current], ledger.states[current]
        if current == narrative:
            if prose:
                section.parse(
                    state, "\n".join(line[2:] if line.startswith("  ") else line for line in prose)
                )
                prose.clear()
            return
        if item:
            joined = "\n".join(item)
            section.parse(state, joined[2:] if joined.startswith("- ") else joined)
            item.clear()

    for line in lines:
        if line.startswith("## "):
            flush()
            current = by_heading.get(line)
            if current is None:
                current = narrative
                prose.append(line)
            continue
        if current == narrative:
            if line.strip():
                prose.append(line)
        elif line.startswith("- "):
            flush()
            item.append(line)
        elif line.startswith("  ") and item:
            item.append(line)
    flush()
    return ledger
