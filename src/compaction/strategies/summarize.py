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

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from compaction.exceptions import ProviderError
from compaction.messages import Group
from compaction.strategies.base import StepReport, Workspace
from compaction.strategies.digest import DigestRendering, ledger_of
from compaction.summarize.digest import Ledger, LedgerBuilder
from compaction.summarize.llm import Kind, SummaryResult


def with_model_summary(ledger: Ledger, result: SummaryResult) -> Ledger:
    """The ledger with the model's summary (as the summary prose), its facts (as notes) and
    its next steps (as to-dos) merged in."""
    merged = ledger.copy()
    merged.state("narrative").texts[:] = [result.summary.strip()] if result.summary.strip() else []
    for fact in result.facts:
        merged.section("notes").parse(merged.state("notes"), fact)
    todos = merged.state("todos")
    for step in result.next_steps:
        if step not in todos.prose:
            todos.prose.append(step)
    return merged


class _LLMStrategy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    last_resort: ClassVar[bool] = False
    # Calls the compaction model: a compactor needs a summarizer provider to run it.
    needs_summarizer: ClassVar[bool] = True
    fallback: Literal["digest", "none"] = "digest"
    instructions: str | None = None

    def _replace(
        self, work: Workspace, start: int, stop: int, kind: Kind, report: StepReport
    ) -> bool:
        """Summarize slots `start:stop` into one message at `start`, rendered into the room
        the rest leaves; False when they were left alone."""
        span = [work.slots[i].message for i in range(start, stop)]
        count = sum(work.stands_for(i) for i in range(start, stop))
        builder = LedgerBuilder()
        for i in range(start, stop):
            ledger_of(work, i, builder)
        ledger = builder.snapshot()
        previous = None
        rest = span
        if span[0].is_summary and kind == "summary":
            previous, rest = span[0].text, span[1:]
        room = (
            None
            if work.target is None
            else max(work.target - (work.total() - work.span_tokens(start, stop)), 0)
        )
        try:
            if work.summarizer is None:
                raise ProviderError("no summarizer provider is configured")
            result = work.summarizer.summarize(
                rest, previous=previous, kind=kind, instructions=self.instructions
            )
        except ProviderError as e:
            report.errors.append(str(e))
            if self.fallback == "none":
                return False
            rendering = DigestRendering(ledger, count, work.measure)
            work.replace_span(
                start, stop, [rendering.render(room)], "digested", resizable=rendering
            )
            report.detail = f"summarizer failed; digest applied ({count} messages)"
            return True
        report.summarizer_calls += result.calls
        report.input_tokens += result.usage.input_tokens
        report.output_tokens += result.usage.output_tokens
        report.summarizer_ms += result.elapsed_ms
        if result.fallback_reason:
            report.errors.append(
                f"structured summary fell back to free text: {result.fallback_reason}"
            )
        rendering = DigestRendering(with_model_summary(ledger, result), count, work.measure)
        work.replace_span(start, stop, [rendering.render(room)], "summarized", resizable=rendering)
        report.detail = (
            f"{count} messages → 1 summary ({result.calls} calls, {result.chunks} chunks"
            f"{', free text' if not result.structured else ''})"
        )
        return True


class SummarizeStrategy(_LLMStrategy):
    """Everything compactable outside the recent tail becomes one LLM summary per run."""

    kind: Literal["summarize"] = "summarize"

    def apply(self, work: Workspace) -> StepReport:
        report = StepReport(self.kind, work.total(), work.total())
        replaced = 0
        shift = 0
        for run in work.compactable_runs():
            if work.fits():
                break
            start, stop = run[0].start - shift, run[-1].stop - shift
            if stop - start == 1 and work.slots[start].message.is_summary:
                continue  # only an earlier summary: nothing new to summarize
            before = stop - start
            if self._replace(work, start, stop, "summary", report):
                replaced += before
                shift += before - 1
        report.tokens_after = work.total()
        report.messages_affected = replaced
        return report


def first_assistant_run(work: Workspace, minimum: int = 2) -> list[Group]:
    """The first run of `minimum` or more consecutive compactable groups that each start with
    an assistant message (tool results travel inside their group)."""
    run: list[Group] = []
    for group in work.groups():
        opener = work.slots[group.start].message
        usable = not group.pinned and all(work.replaceable(i) for i in group.indices())
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
        if self._replace(work, start, stop, "sequence", report):
            report.messages_affected = stop - start
        report.tokens_after = work.total()
        return report
