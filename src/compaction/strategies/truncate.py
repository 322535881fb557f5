"""`truncate`: drop the oldest groups; the last resort.

What it drops is archived and named by a marker message, so the model knows something was
removed and a person can get it back. Summaries are not dropped: they shrink instead (the
pipeline does that), so what a digest kept is never thrown away for the room of a marker.
It must never drop a protected message or split a group.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from compaction.messages import Group, Message, SummaryPart, handle_for, summary_header
from compaction.strategies.base import StepReport, Workspace

# What a marker message costs, about; the pipeline measures the real figure afterwards.
_MARKER_TOKENS = 60


def truncation_marker(count: int, handles: list[str], *, short: bool = False) -> Message:
    if short or not handles:
        body = f"{count} earlier messages were removed to fit the context window (archived)."
    else:
        body = (
            f"The {count} earliest messages of this part of the conversation were removed to "
            "fit the context window. This note was written by the compaction system, not by "
            f"the user; the originals are archived ({handles[0]} … {handles[-1]})."
        )
    text = f"{summary_header(count, len(body))}\n{body}"
    return Message("user", (SummaryPart(text, count),))


def _droppable(work: Workspace, run: list[Group]) -> list[list[Group]]:
    """The run split around its summaries: the stretches of groups truncate may drop."""
    stretches: list[list[Group]] = []
    current: list[Group] = []
    for group in run:
        if len(group) == 1 and work.slots[group.start].message.is_summary:
            if current:
                stretches.append(current)
            current = []
        else:
            current.append(group)
    if current:
        stretches.append(current)
    return stretches


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
        stretches = [s for run in work.compactable_runs() for s in _droppable(work, run)]
        for stretch in stretches:
            if work.fits():
                break
            start = stretch[0].start - shift
            stop = stretch[-1].stop - shift
            # Drop the fewest groups of this stretch that make the conversation fit.
            for group in stretch:
                stop = group.stop - shift
                if work.total() - work.span_tokens(start, stop) + _MARKER_TOKENS <= work.target:
                    break
            count = sum(work.stands_for(i) for i in range(start, stop))
            handles = [
                handle_for(work.slots[i].unmasked or work.slots[i].message)
                for i in range(start, stop)
            ]
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
                if not work.marker_needed(index):
                    work.replace_span(index, index + 1, [], "dropped")
        return StepReport(self.kind, before, work.total(), dropped, f"{dropped} messages dropped")
