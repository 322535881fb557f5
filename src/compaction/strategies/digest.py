"""`digest`: an older span becomes one structured summary, with no LLM call.

The summary is the span's ledger (see `compaction.summarize.digest`): the user's words
verbatim, values the user set, files, errors and how they were fixed, test status, standing
decisions, to-dos, commands, the assistant's telling sentences. An earlier summary inside the
span is merged, so facts survive repeated compactions. The digest renders into the room it
is given, by priority, and can always shrink (fewer, shorter lines) instead of being dropped.
Spans are whole groups, so tool calls and results never part.
This strategy must never touch protected messages and must stay byte-for-byte deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from compaction.messages import Group, Message, SummaryPart
from compaction.strategies.base import StepReport, Workspace
from compaction.summarize.digest import (
    Envelope,
    Ledger,
    LedgerBuilder,
    envelope_chars,
    render,
    summary_body,
    summary_message,
    was_shrunk,
)
from compaction.summarize.digest.sections import Item

_PROBES = 8
# Renderings tried to fit a room, and how close under it is close enough.
_TRIES = 6
_CLOSE_ENOUGH = 0.97
# Below this many tokens of room a digest uses the one-line preamble.
_SHORT_BELOW = 400


@dataclass
class DigestRendering:
    """A ledger rendered into any number of tokens: in full, or the items that fit by
    priority. Never empty: the shortest rendering keeps one item."""

    ledger: Ledger
    count: int
    measure: Callable[[Message], int]
    _full: Message | None = field(default=None, repr=False)
    _full_tokens: int = 0
    # The ledger's items, built once: a fit renders the same ledger several times (its
    # ledger is a snapshot, never changed after).
    _items: list[list[Item]] | None = field(default=None, repr=False)

    def _render(self, budget_chars: int | None = None) -> list[str]:
        if self._items is None:
            self._items = self.ledger.items()
        return render(self.ledger, budget_chars, items=self._items)

    def full(self) -> Message:
        if self._full is None:
            self._full = summary_message(self._render(), self.count)
            self._full_tokens = self.measure(self._full)
        return self._full

    def render(self, budget: int | None) -> Message:
        full = self.full()
        if budget is None or self._full_tokens <= budget:
            return full
        envelope: Envelope = "short" if budget < _SHORT_BELOW else "full"
        fitted, least = self._fit(budget, envelope)
        if fitted is None and envelope == "short":
            # Not one line beside the tags and the preamble: the header alone around it,
            # rather than a summary dropped for want of room (its facts ride beside).
            fitted, least = self._fit(budget, "bare")
        return fitted if fitted is not None else least

    def _fit(self, budget: int, envelope: Envelope) -> tuple[Message | None, Message]:
        """The fullest rendering in `envelope` that takes at most `budget` tokens (None when
        none does), and the last one tried."""
        full = self.full()
        per_token = max(len(full.text), 1) / max(self._full_tokens, 1)
        chars = int(budget * per_token) - envelope_chars(self.count, envelope=envelope)
        # The full rendering's characters per token misjudge a part of it (the user's words
        # and the commands differ): correct from each measured try, keep the fullest fit.
        best: tuple[int, Message] | None = None
        message = full
        for _ in range(_TRIES):
            lines = self._render(max(chars, 0))
            message = summary_message(lines, self.count, envelope=envelope, full=full.text)
            tokens = self.measure(message)
            if tokens <= budget:
                if best is None or tokens > best[0]:
                    best = (tokens, message)
                grown = int(chars * budget / max(tokens, 1) * 0.98)
                if tokens >= budget * _CLOSE_ENOUGH or grown <= chars:
                    break
                chars = grown
            elif chars <= 0:
                break
            else:
                # Fewer characters than the lines took, not than were allowed: lines that
                # left some of their room unused come back the same for any less of it.
                used = sum(len(line) + 1 for line in lines)
                chars = min(chars, used) - int((tokens - budget) * per_token) - 8
        if best is None and envelope == "bare":
            # Not even the shortest line: one cut in the middle to the room.
            for cut in (chars, chars * 3 // 4, chars // 2):
                lines = _clipped(full.text, cut)
                clipped = summary_message(lines, self.count, envelope=envelope, full=full.text)
                if self.measure(clipped) <= budget:
                    return clipped, clipped
        return (best[1] if best is not None else None), message


#: The fewest characters of a line worth showing cut.
_LEAST_LINE = 24


def _clipped(text: str, chars: int) -> list[str]:
    """A heading and the first line under it from the summary `text`, the line cut in the
    middle (a path keeps its file name, a sentence its end) so that both take about `chars`
    characters: the first section where that leaves `_LEAST_LINE` of the line, else the one
    with the shortest heading."""
    lines = summary_body(text) or []
    firsts = [
        (lines[i], lines[i + 1])
        for i in range(len(lines) - 1)
        if lines[i].startswith("## ") and lines[i + 1].startswith("- ")
    ]
    if not firsts:
        return [line for line in lines if line][:1]
    heading, line = next(
        (pair for pair in firsts if chars - len(pair[0]) - 1 >= _LEAST_LINE),
        min(firsts, key=lambda pair: len(pair[0])),
    )
    room = max(chars - len(heading) - 1, _LEAST_LINE)
    if len(line) > room:
        half = (room - 1) // 2
        line = line[:half] + "…" + line[len(line) - (room - 1 - half) :]
    return [heading, line]


def earlier_rendering(
    message: Message, measure: Callable[[Message], int], *, shrunk_only: bool = True
) -> DigestRendering | None:
    """A digest an earlier compaction made, as a rendering that can grow back toward its full
    text (kept beside its lines when it was shrunk) or shrink further; None for any other
    message (a truncation marker has no lines to render). `shrunk_only`: only a digest that
    was shrunk."""
    if len(message.parts) != 1 or not isinstance(message.parts[0], SummaryPart):
        return None
    summary = message.parts[0]
    if not was_shrunk(summary) and (shrunk_only or summary_body(summary.text) is None):
        return None
    builder = LedgerBuilder()
    builder.add(message)
    return DigestRendering(builder.snapshot(), summary.replaced, measure)


def ledger_of(work: Workspace, index: int, builder: LedgerBuilder) -> None:
    """Feed slot `index` to `builder`: a summary this compaction made merges as its ledger
    (whatever size it was rendered at), anything else is read as a message."""
    slot = work.slots[index]
    resizable = slot.resizable
    if isinstance(resizable, DigestRendering):
        builder.merge(resizable.ledger, resizable.count)
        return
    builder.add(slot.message)


class DigestStrategy(BaseModel):
    """Replace the oldest compactable span by its ledger, as small a span as meets the target,
    rendered into the room the rest leaves."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    last_resort: ClassVar[bool] = False
    needs_summarizer: ClassVar[bool] = False

    kind: Literal["digest"] = "digest"
    user_chars: int = Field(
        default=1200, ge=80, description="Longest user message kept whole; longer: head + tail."
    )

    def apply(self, work: Workspace) -> StepReport:
        before = work.total()
        replaced = made = 0
        shift = 0
        for run in work.compactable_runs():
            if work.fits():
                break
            shifted = [Group(g.start - shift, g.stop - shift, g.pinned) for g in run]
            if len(shifted) == 1 and work.slots[shifted[0].start].message.is_summary:
                continue  # only an earlier summary: nothing new to fold in
            start = shifted[0].start
            stop, rendering = self._choose(work, shifted)
            # In full: the pipeline shrinks summaries, all in proportion, only once every
            # strategy had its turn (shrinking loses old facts; the recent tail goes first).
            work.replace_span(start, stop, [rendering.full()], "digested", resizable=rendering)
            replaced += rendering.count
            made += 1
            shift += stop - start - 1
        return StepReport(
            self.kind, before, work.total(), replaced, f"{replaced} messages → {made} digests"
        )

    def _choose(self, work: Workspace, run: list[Group]) -> tuple[int, DigestRendering]:
        """The end of the shortest prefix of `run` (of a few tried) whose full digest meets
        the target (all of it when none does, or when there is no target), and its
        rendering."""
        whole = len(run)
        prefixes = _Prefixes(work, run, self.user_chars)
        if work.target is None:
            return run[-1].stop, prefixes.upto(whole)
        # A prefix must remove at least the excess: that is where the search starts. Then a
        # few prefixes between there and the whole run.
        excess = work.total() - work.target
        removed = list(accumulate(work.span_tokens(g.start, g.stop) for g in run))
        low = next((k for k, r in enumerate(removed, start=1) if r >= excess), whole)
        step = max((whole - low) // (2 * _PROBES), 1)
        near = range(low, min(low + 2 * _PROBES * step, whole), step)
        candidates = sorted({*near, whole})
        # A prefix must also make room for its own digest, which grows with the prefix: after
        # each that does not fit, the next tried is the first that removes the excess and
        # this one's digest, so the walk only goes forward and reads the run once, up to the
        # prefix chosen. Tokenizing every digest tried would cost more than the rest of the
        # search: each is estimated from its length at the first one's tokens per character
        # (on the low side), tokenized only when that may fit, and accepted only on an
        # exact fit.
        per_char = 0.0
        i = 0
        while True:
            k = candidates[i]
            rendering = prefixes.upto(k)
            message = rendering.full()
            if not per_char:
                per_char = work.measure(message) / max(len(message.text), 1)
            if k == whole:
                return run[-1].stop, rendering
            # The room this prefix leaves for its digest, against the digest's tokens.
            room = removed[k - 1] - excess
            estimate = int(len(message.text) * per_char * 0.9)
            if estimate <= room and work.measure(message) <= room:
                return run[k - 1].stop, rendering
            need = excess + estimate
            i = next(
                (j for j in range(i + 1, len(candidates)) if removed[candidates[j] - 1] >= need),
                len(candidates) - 1,
            )


class _Prefixes:
    """The renderings of ever longer prefixes of a run of groups, read in one pass: the
    user's task kept beside it is context, each group is read once."""

    def __init__(self, work: Workspace, run: list[Group], user_chars: int) -> None:
        self._work = work
        self._run = run
        self._builder = LedgerBuilder(user_chars=user_chars)
        span = range(run[0].start, run[-1].stop)
        for index, slot in enumerate(work.slots):
            if index not in span and slot.message.role == "user" and not slot.message.is_summary:
                self._builder.beside(slot.message)  # the user's task, kept verbatim beside it
        self._read = 0  # groups read
        self._count = 0  # messages they stand for

    def upto(self, k: int) -> DigestRendering:
        """The rendering of the first `k` groups (at least as many as asked before)."""
        assert k >= self._read, "prefixes are read in order"
        for group in self._run[self._read : k]:
            for i in group.indices():
                ledger_of(self._work, i, self._builder)
                self._count += self._work.stands_for(i)
        self._read = k
        return DigestRendering(self._builder.snapshot(), self._count, self._work.measure)
