"""`truncate`: drop the oldest groups; the last resort.

What it drops is archived and named by a marker message, so the model knows something was
removed and a person can get it back. It must never drop a protected message or split a group.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from compaction.messages import Message, SummaryPart, summary_header
from compaction.strategies.base import StepReport, Workspace, handle_for

# What a marker message costs, about; the pipeline measures the real figure afterwards.
_MARKER_TOKENS = 60


def truncation_marker(count: int, handles: list[str], *, short: bool = False) -> Message:
    if short:
        text = summary_header(count, 0)
        return Message("user", (SummaryPart(text, count),))
    body = (
        f"The {count} earliest messages of this part of the conversation were removed to fit "
        "the context window. This note was written by the compaction system, not by the user; "
        f"the originals are archived ({handles[0]} … {handles[-1]})."
        if handles
        else f"The {count} earliest messages were removed to fit the context window."
    )
    text = f"{summary_header(count, len(body))}\n{body}"
    return Message("user", (SummaryPart(text, count),))


class TruncateStrategy(BaseModel):
    """Drop the oldest compactable groups until the target is met."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    # Runs only after every other strategy had its chance, recent tail included.
    last_resort: ClassVar[bool] = True
    needs_summarizer: ClassVar[bool] = False

    kind: Literal["truncate"] = "truncate"

    def apply(self, work: Workspace) -> StepReport:
        before = work.total()
        if work.target is None:
            return StepReport(self.kind, before, before, 0, "no size target: nothing dropped")
        dropped = 0
        markers: list[int] = []
        shift = 0
        for run in work.compactable_runs():
            if work.fits():
                break
            start = run[0].start - shift
            stop = run[-1].stop - shift
            # Drop the fewest groups of this run that make the conversation fit.
            for group in run:
                stop = group.stop - shift
                if work.total() - work.span_tokens(start, stop) + _MARKER_TOKENS <= work.target:
                    break
            count = sum(work.stands_for(i) for i in range(start, stop))
            handles = [handle_for(work.slots[i].message) for i in range(start, stop)]
            work.replace_span(start, stop, [truncation_marker(count, handles)], "dropped")
            markers.append(start)
            dropped += count
            shift += stop - start - 1
        # The target is a promise: shorten the markers, then drop them, before giving up.
        if not work.fits():
            for index in markers:
                count = work.stands_for(index)
                work.swap(index, truncation_marker(count, [], short=True))
        if not work.fits():
            for index in reversed(markers):
                if not _shape_needs(work, index):
                    work.replace_span(index, index + 1, [], "dropped")
        return StepReport(self.kind, before, work.total(), dropped, f"{dropped} messages dropped")


def _shape_needs(work: Workspace, index: int) -> bool:
    """Whether Anthropic's rules need the marker at `index`: without it the conversation would
    start with an assistant message or put two assistant messages side by side."""
    if work.dialect != "anthropic":
        return False
    before = [s.message.role for s in work.slots[:index] if s.message.role != "system"]
    after = work.slots[index + 1].message.role if index + 1 < len(work.slots) else None
    if not before:
        return after != "user"
    return before[-1] == "assistant" and after == "assistant"
