"""`digest`: an older span becomes one structured summary, with no LLM call.

The summary is the span's ledger (see `compaction.summarize.ledger`): the user's words
verbatim, files, commands and outcomes, open errors, test status, decisions, to-dos and
values the user changed. An earlier summary inside the span is parsed and merged, so facts
survive repeated compactions. Spans are whole groups, so tool calls and results never part.
This strategy must never touch protected messages and must stay byte-for-byte deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from compaction.messages import Group, Message, SummaryPart, summary_header
from compaction.strategies.base import StepReport, Workspace
from compaction.summarize.ledger import (
    LEVELS,
    Ledger,
    LedgerBuilder,
    Limits,
    extract_ledger,
    render_ledger,
)

_PROBES = 8


def digest_message(ledger: Ledger, count: int, limits: Limits) -> Message:
    """The summary message for a ledger standing for `count` original messages."""
    body = render_ledger(ledger, limits)
    text = f"{summary_header(count, len(body))}\n{body}"
    return Message("user", (SummaryPart(text, count),))


class DigestStrategy(BaseModel):
    """Replace the oldest compactable span by its ledger, as small a span as meets the target."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    last_resort: ClassVar[bool] = False
    needs_summarizer: ClassVar[bool] = False

    kind: Literal["digest"] = "digest"
    user_chars: int = Field(
        default=1200, ge=80, description="Longest user message kept whole; longer: head + tail."
    )

    def apply(self, work: Workspace) -> StepReport:
        before = work.total()
        made: list[tuple[int, list[Message], int]] = []  # (slot, span replaced, its count)
        shift = 0
        for run in work.compactable_runs():
            if work.fits():
                break
            shifted = [Group(g.start - shift, g.stop - shift, g.pinned) for g in run]
            start = shifted[0].start
            stop, summary = self._choose(work, shifted)
            span = [work.slots[i].message for i in range(start, stop)]
            count = sum(work.stands_for(i) for i in range(start, stop))
            work.replace_span(start, stop, [summary], "digested")
            made.append((start, span, count))
            shift += stop - start - 1
        # Shrinking summaries loses old facts; do it only once the recent tail had its turn.
        ledgers: list[Ledger] = []
        for level in range(1, len(LEVELS)):
            if work.fits() or work.target is None or not work.reach_recent:
                break
            if not ledgers:
                ledgers = [extract_ledger(span, user_chars=self.user_chars) for _, span, _ in made]
            for (index, _, count), ledger in zip(made, ledgers, strict=True):
                work.swap(index, digest_message(ledger, count, self._level(level)))
        replaced = sum(count for _, _, count in made)
        return StepReport(
            self.kind, before, work.total(), replaced, f"{replaced} messages → {len(made)} digests"
        )

    def _level(self, level: int) -> Limits:
        limits = LEVELS[level]
        if level == 0 and self.user_chars != limits.user_chars:
            return replace(limits, user_chars=self.user_chars)
        return limits

    def _digests(self, work: Workspace, run: list[Group], ks: Sequence[int]) -> dict[int, Message]:
        """For each k in `ks`, the digest of the first k groups of `run`. One pass over the
        run, whatever the number of k."""
        wanted = set(ks)
        builder = LedgerBuilder(user_chars=self.user_chars)
        out: dict[int, Message] = {}
        count = 0
        for k, group in enumerate(run[: max(wanted)], start=1):
            for i in group.indices():
                builder.add(work.slots[i].message)
                count += work.stands_for(i)
            if k in wanted:
                out[k] = digest_message(builder.ledger, count, self._level(0))
        return out

    @staticmethod
    def _cost(work: Workspace, run: list[Group], k: int, tokens: int) -> int:
        """Total tokens if the first k groups of `run` became a digest of `tokens` tokens."""
        return work.total() - work.span_tokens(run[0].start, run[k - 1].stop) + tokens

    def _choose(self, work: Workspace, run: list[Group]) -> tuple[int, Message]:
        """The end of the shortest prefix of `run` whose digest meets the target (all of it when
        none does, or when there is no target), and that digest."""
        whole = len(run)
        full = self._digests(work, run, [whole])[whole]
        full_tokens = work.measure(full)
        full_cost = self._cost(work, run, whole, full_tokens)
        if work.target is None or full_cost > work.target:
            return run[-1].stop, full
        # Bracket the answer by arithmetic: a prefix must remove at least the excess (low), and
        # removing the excess plus the whole run's digest is almost always enough (high), since
        # a shorter span digests shorter. Then try a few prefixes in between, in one pass.
        start = run[0].start
        full_digest = full_cost - (work.total() - work.span_tokens(start, run[-1].stop))
        excess = work.total() - work.target
        removed = 0
        low = high = whole
        for k, group in enumerate(run, start=1):
            removed += work.span_tokens(group.start, group.stop)
            if low == whole and removed >= excess:
                low = k
            if removed >= excess + full_digest:
                high = k
                break
        step = max((high - low) // _PROBES, 1)
        candidates = sorted({*range(low, high, step), high})
        tried = self._digests(work, run, candidates)
        # Tokenizing every candidate would cost more than the rest of the search: estimate
        # each from its length at the full digest's tokens-per-char, tokenize only the ones
        # that may fit, and accept only an exact fit.
        per_char = full_tokens / max(len(full.text), 1)
        for k in candidates:
            summary = tried[k]
            if self._cost(work, run, k, int(len(summary.text) * per_char * 0.9)) > work.target:
                continue
            if self._cost(work, run, k, work.measure(summary)) <= work.target:
                return run[k - 1].stop, summary
        return run[-1].stop, full
