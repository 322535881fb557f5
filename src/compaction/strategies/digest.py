"""`digest`: an older span becomes one structured summary, with no LLM call.

The summary is the span's ledger (see `compaction.summarize.ledger`): the user's words
verbatim, files, commands and outcomes, open errors, test status, decisions, to-dos and
values the user changed. An earlier summary inside the span is parsed and merged, so facts
survive repeated compactions. Spans are whole groups, so tool calls and results never part.
This strategy must never touch protected messages and must stay byte-for-byte deterministic.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from compaction.messages import Group, Message, SummaryPart, summary_header
from compaction.strategies.base import StepReport, Workspace
from compaction.summarize.ledger import LEVELS, Ledger, Limits, extract_ledger, render_ledger


def digest_message(ledger: Ledger, count: int, limits: Limits) -> Message:
    """The summary message for a ledger standing for `count` original messages."""
    body = render_ledger(ledger, limits)
    text = f"{summary_header(count, len(body))}\n{body}"
    return Message("user", (SummaryPart(text, count),))


class DigestStrategy(BaseModel):
    """Replace the oldest compactable span by its ledger, as small a span as meets the target."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    last_resort: ClassVar[bool] = False

    kind: Literal["digest"] = "digest"
    user_chars: int = Field(
        default=1200, ge=80, description="Longest user message kept whole; longer: head + tail."
    )

    def apply(self, work: Workspace) -> StepReport:
        before = work.total()
        made: list[tuple[int, Ledger, int]] = []  # (slot index, ledger, messages replaced)
        shift = 0
        for run in work.compactable_runs():
            if work.fits():
                break
            shifted = [Group(g.start - shift, g.stop - shift, g.pinned) for g in run]
            start = shifted[0].start
            stop = self._choose_stop(work, shifted)
            ledger = extract_ledger(
                (work.slots[i].message for i in range(start, stop)), user_chars=self.user_chars
            )
            count = sum(work.stands_for(i) for i in range(start, stop))
            work.replace_span(start, stop, [digest_message(ledger, count, self._level(0))])
            made.append((start, ledger, count))
            shift += stop - start - 1
        # Shrinking summaries loses old facts; do it only once the recent tail had its turn.
        for level in range(1, len(LEVELS)):
            if work.fits() or work.target is None or not work.reach_recent:
                break
            for index, ledger, count in made:
                work.swap(index, digest_message(ledger, count, self._level(level)))
        replaced = sum(count for _, _, count in made)
        return StepReport(
            self.kind, before, work.total(), replaced, f"{replaced} messages → {len(made)} digests"
        )

    def _level(self, level: int) -> Limits:
        limits = LEVELS[level]
        if level == 0 and self.user_chars != limits.user_chars:
            return Limits(
                self.user_chars,
                limits.files,
                limits.commands,
                limits.errors,
                limits.decisions,
                limits.todos,
                limits.include_read,
            )
        return limits

    def _cost(self, work: Workspace, run: list[Group], k: int) -> int:
        """Total tokens if the first `k` groups of `run` became one digest."""
        start, stop = run[0].start, run[k - 1].stop
        ledger = extract_ledger(
            (work.slots[i].message for i in range(start, stop)), user_chars=self.user_chars
        )
        count = sum(work.stands_for(i) for i in range(start, stop))
        summary = digest_message(ledger, count, self._level(0))
        return work.total() - work.span_tokens(start, stop) + work.measure(summary)

    def _choose_stop(self, work: Workspace, run: list[Group]) -> int:
        """The end of the shortest prefix of `run` whose digest meets the target (all of it when
        none does, or when there is no target)."""
        if work.target is None:
            return run[-1].stop
        start = run[0].start
        full = self._cost(work, run, len(run))
        if full > work.target:
            return run[-1].stop
        # Bracket the answer by arithmetic before extracting anything again: a prefix must
        # remove at least the excess (low), and removing the excess plus the whole run's
        # digest is almost always enough (high), since a shorter span digests shorter.
        full_digest = full - (work.total() - work.span_tokens(start, run[-1].stop))
        excess = work.total() - work.target
        removed = 0
        low = high = len(run)
        for k, group in enumerate(run, start=1):
            removed += work.span_tokens(group.start, group.stop)
            if low == len(run) and removed >= excess:
                low = k
            if removed >= excess + full_digest:
                high = k
                break
        if self._cost(work, run, high) > work.target:
            low, high = high + 1, len(run)
        while low < high:
            middle = (low + high) // 2
            if self._cost(work, run, middle) <= work.target:
                high = middle
            else:
                low = middle + 1
        return run[low - 1].stop
