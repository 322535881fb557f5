"""`summarize` and `sequence`: LLM summaries, with the digest's ledger merged in.

`summarize` replaces everything but the recent tail (each compactable run) by one summary,
anchored on the earlier summary at the start of the run, if any. `sequence` replaces the
first run of two or more consecutive assistant turns (their tool results included) by one
summary, one model call per `apply`; calling again compresses the next run.

Every LLM summary carries the deterministic ledger of its span (user words, files, commands,
open errors, …), so what the model forgets is still there. When the summarizer fails, the
span gets the deterministic digest instead (`fallback: digest`, the default) or is left as
it was (`fallback: none`); the step report names the error either way. These strategies
must never lose a message: every replaced original goes to the archive.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from compaction.exceptions import ProviderError
from compaction.messages import Group, Message, SummaryPart, summary_header
from compaction.strategies.base import StepReport, Workspace
from compaction.strategies.digest import digest_message
from compaction.summarize.ledger import (
    CLOSE_TAG,
    H_FACTS,
    H_NEXT,
    H_SUMMARY,
    LEVELS,
    OPEN_TAG,
    PREAMBLE,
    Ledger,
    Limits,
    bounded_user_text,
    extract_ledger,
    indented,
    ledger_sections,
)
from compaction.summarize.llm import Kind, SummaryResult


def llm_summary_message(
    result: SummaryResult, ledger: Ledger, count: int, limits: Limits
) -> Message:
    """The summary message: the model's summary, facts and open steps, then the ledger."""
    # The model already merged any earlier summary; its prose need not be repeated.
    ledger = replace(ledger, narrative=[])
    lines = [OPEN_TAG, PREAMBLE, "", H_SUMMARY, *indented(result.summary)]
    if result.facts:
        lines += ["", H_FACTS, *(f"- {fact}" for fact in result.facts)]
    if result.next_steps:
        lines += ["", H_NEXT, *(f"- {step}" for step in result.next_steps)]
    lines += [*ledger_sections(ledger, limits), CLOSE_TAG]
    body = "\n".join(lines)
    text = f"{summary_header(count, len(body))}\n{body}"
    return Message("user", (SummaryPart(text, count),))


@dataclass(frozen=True)
class _Made:
    """A summary a strategy put at slot `index` (`result` None: the digest stood in)."""

    index: int
    result: SummaryResult | None
    ledger: Ledger
    count: int


class _LLMStrategy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    last_resort: ClassVar[bool] = False
    # Calls the compaction model: a compactor needs a summarizer provider to run it.
    needs_summarizer: ClassVar[bool] = True
    fallback: Literal["digest", "none"] = "digest"
    instructions: str | None = None

    def _replace(
        self, work: Workspace, start: int, stop: int, kind: Kind, report: StepReport
    ) -> _Made | None:
        """Summarize slots `start:stop` into one message at `start`; None when they were left
        alone."""
        span = [work.slots[i].message for i in range(start, stop)]
        count = sum(work.stands_for(i) for i in range(start, stop))
        ledger = extract_ledger(span)
        previous = None
        rest = span
        if span[0].is_summary and kind == "summary":
            previous, rest = span[0].text, span[1:]
        try:
            if work.summarizer is None:
                raise ProviderError("no summarizer provider is configured")
            result = work.summarizer.summarize(
                rest, previous=previous, kind=kind, instructions=self.instructions
            )
        except ProviderError as e:
            report.errors.append(str(e))
            if self.fallback == "none":
                return None
            work.replace_span(start, stop, [digest_message(ledger, count, LEVELS[0])], "digested")
            report.detail = f"summarizer failed; digest applied ({count} messages)"
            return _Made(start, None, ledger, count)
        report.summarizer_calls += result.calls
        report.input_tokens += result.usage.input_tokens
        report.output_tokens += result.usage.output_tokens
        report.summarizer_ms += result.elapsed_ms
        if result.fallback_reason:
            report.errors.append(
                f"structured summary fell back to free text: {result.fallback_reason}"
            )
        message = llm_summary_message(result, ledger, count, LEVELS[0])
        work.replace_span(start, stop, [message], "summarized")
        report.detail = (
            f"{count} messages → 1 summary ({result.calls} calls, {result.chunks} chunks"
            f"{', free text' if not result.structured else ''})"
        )
        return _Made(start, result, ledger, count)

    @staticmethod
    def _shrink(work: Workspace, made: list[_Made]) -> None:
        """Tighten the ledger part of the summaries made (and, last, clip the model's prose)
        until the target is met — only once the recent tail had its turn, since shrinking
        loses old facts."""
        for level in range(1, len(LEVELS)):
            if work.fits() or work.target is None or not work.reach_recent:
                return
            last = level == len(LEVELS) - 1
            for one in made:
                if one.result is None:
                    message = digest_message(one.ledger, one.count, LEVELS[level])
                else:
                    result = one.result
                    if last:
                        result = replace(result, summary=bounded_user_text(result.summary, 600))
                    message = llm_summary_message(result, one.ledger, one.count, LEVELS[level])
                work.swap(one.index, message)


class SummarizeStrategy(_LLMStrategy):
    """Everything compactable outside the recent tail becomes one LLM summary per run."""

    kind: Literal["summarize"] = "summarize"

    def apply(self, work: Workspace) -> StepReport:
        report = StepReport(self.kind, work.total(), work.total())
        replaced = 0
        shift = 0
        made: list[_Made] = []
        for run in work.compactable_runs():
            if work.fits():
                break
            start, stop = run[0].start - shift, run[-1].stop - shift
            if stop - start == 1 and work.slots[start].message.is_summary:
                continue  # only an earlier summary: nothing new to summarize
            before = stop - start
            one = self._replace(work, start, stop, "summary", report)
            if one is not None:
                made.append(one)
                replaced += before
                shift += before - 1
        self._shrink(work, made)
        report.tokens_after = work.total()
        report.messages_affected = replaced
        return report


def first_assistant_run(work: Workspace, minimum: int = 2) -> list[Group]:
    """The first run of `minimum` or more consecutive compactable groups that each start with
    an assistant message (tool results travel inside their group)."""
    run: list[Group] = []
    for group in work.groups():
        opener = work.slots[group.start].message
        usable = not group.pinned and all(work.compactable(i) for i in group.indices())
        if usable and opener.role == "assistant":
            run.append(group)
            continue
        if len(run) >= minimum:
            return run
        run = []
    return run if len(run) >= minimum else []


class SequenceStrategy(_LLMStrategy):
    """The first run of two or more consecutive assistant turns becomes one summary (one
    model call); messages outside the run keep their place and order."""

    kind: Literal["sequence"] = "sequence"

    def apply(self, work: Workspace) -> StepReport:
        report = StepReport(self.kind, work.total(), work.total())
        run = first_assistant_run(work)
        if not run or work.fits():
            report.detail = "no run of consecutive assistant messages" if not run else ""
            return report
        start, stop = run[0].start, run[-1].stop
        one = self._replace(work, start, stop, "sequence", report)
        if one is not None:
            report.messages_affected = stop - start
            self._shrink(work, [one])
        report.tokens_after = work.total()
        return report
