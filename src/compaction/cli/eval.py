"""`compaction eval`: measure strategies on generated sessions or your own transcripts.

Prints a table, one row per pipeline as it finishes (with a progress bar on long runs), and
writes the report (`compaction.eval.report`) into `--out`. Exit status: 0 done, 2 bad input.
This module must never compute a number itself: it parses options, runs `run_eval`, prints.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from collections.abc import Callable
from typing import Any, cast

import click

from compaction.cli.transcripts import PROVIDERS, make_provider, user_errors
from compaction.eval.report import pct, times, write_report
from compaction.eval.runner import (
    DEFAULT_STRATEGIES,
    MIN_QA_REPLICATES,
    Progress,
    StrategySummary,
    generated_sessions,
    parse_pipeline,
    run_eval,
)
from compaction.eval.sessions import EvalSession
from compaction.exceptions import InputError

DEFAULT_SESSIONS = 6
# Below this many compaction runs the table alone is progress enough.
PROGRESS_BAR_RUNS = 12

COLUMNS = (
    ("pipeline", 14, "<"),
    ("kept", 7, ">"),
    ("critical", 8, ">"),
    ("compr.", 7, ">"),
    ("target", 7, ">"),
    ("stale", 5, ">"),
    ("mutated", 7, ">"),
    ("valid O·A", 11, ">"),
    ("determ.", 7, ">"),
    ("replay −", 8, ">"),
    ("after k", 7, ">"),
    ("ms", 7, ">"),
    ("LLM calls", 9, ">"),
)


def _line(values: list[str]) -> str:
    cells = zip(values, COLUMNS, strict=True)
    return "  ".join(f"{v:{align}{width}}" for v, (_, width, align) in cells).rstrip()


def table_header() -> str:
    return _line([name for name, _, _ in COLUMNS])


def table_row(summary: StrategySummary) -> str:
    n = summary.sessions
    return _line(
        [
            summary.pipeline.spec,
            pct(summary.survival),
            pct(summary.critical),
            times(summary.compression_median),
            f"{summary.target_met}/{n}",
            str(summary.stale_as_current),
            str(summary.mutated),
            f"{summary.valid_openai}/{n}·{summary.valid_anthropic}/{n}",
            f"{summary.deterministic}/{n}",
            pct(summary.replay_saving),
            pct(summary.successive),
            f"{summary.median_compaction_ms:.1f}",
            str(summary.summarizer.calls + summary.replay_summarizer.calls),
        ]
    )


def load_sessions(
    dataset: str,
    count: int | None,
    *,
    seed: int,
    session_tokens: int,
    cued_fraction: float | None,
    tool_output_scale: float,
) -> list[EvalSession]:
    if dataset == "generated":
        return generated_sessions(
            count or DEFAULT_SESSIONS,
            seed=seed,
            tokens=session_tokens,
            cued_fraction=cued_fraction,
            tool_output_scale=tool_output_scale,
        )
    try:
        module = importlib.import_module("compaction.eval.datasets")
    except ModuleNotFoundError as e:
        if e.name != "compaction.eval.datasets":
            raise
        raise InputError(
            "this installation reads only --dataset generated (compaction.eval.datasets is "
            "missing)",
            location=dataset,
        ) from None
    load = cast(Callable[[str], list[EvalSession]], module.load_dataset)
    sessions = list(load(dataset))
    if not sessions:
        raise InputError("no sessions found", location=dataset)
    return sessions[:count] if count else sessions


def reproduce_command(
    *,
    dataset: str,
    count: int | None,
    seed: int,
    session_tokens: int,
    cued_fraction: float | None,
    tool_output_scale: float,
    strategies: list[str],
    target_ratio: float,
    successive_k: int,
    replicates: int,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    out: str,
    judge: bool = False,
    judge_model: str | None = None,
) -> str:
    """The command line that reruns this evaluation, every default spelled out (so a later
    change of defaults cannot change what it measures). API keys never appear in it."""
    args = ["compaction", "eval", "--dataset", dataset]
    if dataset == "generated":
        args += ["--sessions", str(count or DEFAULT_SESSIONS), "--seed", str(seed)]
        args += ["--session-tokens", str(session_tokens)]
        if cued_fraction is not None:
            args += ["--cued-fraction", f"{cued_fraction:g}"]
        if tool_output_scale != 1.0:
            args += ["--tool-output-scale", f"{tool_output_scale:g}"]
    elif count:
        args += ["--sessions", str(count)]
    args += ["--strategies", ",".join(strategies), "--target-ratio", f"{target_ratio:g}"]
    args += ["--successive", str(successive_k), "--replicates", str(replicates)]
    if provider:
        args += ["--provider", provider, "--model", model or ""]
        if base_url:
            args += ["--base-url", base_url]
        if judge:
            args += ["--judge", "--judge-model", judge_model or model or ""]
    args += ["--out", out]
    return shlex.join(args)


class _Display:
    """The table as it runs: a progress bar per pipeline on long runs (stderr), a row per
    pipeline when it finishes (stdout)."""

    def __init__(self, show_bar: bool) -> None:
        self.show_bar = show_bar
        self.bar: Any = None

    def __call__(self, event: Progress) -> None:
        if event.done == 0:
            if self.show_bar:
                self.bar = click.progressbar(
                    length=event.total, label=f"{event.strategy:<14}", file=sys.stderr
                )
                self.bar.__enter__()
            return
        if self.bar is not None:
            self.bar.update(1)
        if event.summary is not None:
            if self.bar is not None:
                self.bar.__exit__(None, None, None)
                self.bar = None
            click.echo(table_row(event.summary))


@click.command("eval")
@click.option(
    "--dataset",
    default="generated",
    show_default=True,
    help="`generated` (seeded sessions with planted facts) or a path to your transcripts.",
)
@click.option(
    "--sessions",
    "count",
    type=click.IntRange(min=1),
    help=f"How many sessions (generated: default {DEFAULT_SESSIONS}; a path: all).",
)
@click.option("--seed", type=int, default=100, show_default=True, help="First generated seed.")
@click.option(
    "--session-tokens",
    type=click.IntRange(min=1000),
    default=25_000,
    show_default=True,
    help="Size of each generated session.",
)
@click.option(
    "--cued-fraction",
    type=click.FloatRange(0, 1),
    help="Share of generated facts stated with a cue word (default: half in even seeds, "
    "none in odd ones).",
)
@click.option(
    "--tool-output-scale",
    type=click.FloatRange(0.1, 10),
    default=1.0,
    show_default=True,
    help="Multiplies the size of generated tool outputs.",
)
@click.option(
    "--strategies",
    default=",".join(DEFAULT_STRATEGIES),
    show_default=True,
    help="Pipelines, comma-separated: a strategy (truncate, mask, digest), a preset "
    "(default, summarize, sequence) or strategies joined by + (mask+truncate).",
)
@click.option(
    "--target-ratio",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.15,
    show_default=True,
    help="Compact to this fraction of each session's tokens.",
)
@click.option(
    "--successive",
    "successive_k",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Compactions in succession for the repeated-compaction measure.",
)
@click.option(
    "--replicates",
    type=click.IntRange(min=1),
    help="Repeat each compaction, and with --provider each round of questions, for "
    f"confidence intervals (default 1; with --provider {MIN_QA_REPLICATES}, at least "
    f"{MIN_QA_REPLICATES}).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="eval-report",
    show_default=True,
    help="Directory for results.json, the charts and report.html.",
)
@click.option(
    "--provider",
    type=click.Choice(PROVIDERS),
    help="Summarizer for summarize/sequence, and the model asked the probes as questions "
    "(default: a deterministic stand-in, no model, and no questions).",
)
@click.option("--model", help="The compaction and question-answering model (with --provider).")
@click.option("--base-url", help="The provider's base URL (any OpenAI-compatible server).")
@click.option(
    "--judge",
    is_flag=True,
    help="Also have a judge model score each compaction on Factory's six dimensions "
    "(with --provider).",
)
@click.option("--judge-model", help="The judge model (default: --model).")
@user_errors
def eval_command(
    dataset: str,
    count: int | None,
    seed: int,
    session_tokens: int,
    cued_fraction: float | None,
    tool_output_scale: float,
    strategies: str,
    target_ratio: float,
    successive_k: int,
    replicates: int | None,
    out: str,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    judge: bool,
    judge_model: str | None,
) -> None:
    """Measure what compaction keeps and what it costs, and write a report."""
    specs = [s.strip() for s in strategies.split(",") if s.strip()]
    pipelines = [parse_pipeline(s) for s in specs]
    if not pipelines:
        raise click.BadParameter("at least one strategy is needed", param_hint="--strategies")
    if provider is None and (judge or judge_model):
        raise InputError("needs --provider (the judge is a model)", location="--judge")
    if replicates is None:
        replicates = MIN_QA_REPLICATES if provider else 1
    elif provider and replicates < MIN_QA_REPLICATES:
        raise InputError(
            f"must be at least {MIN_QA_REPLICATES} with --provider (each question is asked "
            f"that many times for a confidence interval), got {replicates}",
            location="--replicates",
        )
    summarizer = make_provider(provider, model, base_url) if provider else None
    sessions = load_sessions(
        dataset,
        count,
        seed=seed,
        session_tokens=session_tokens,
        cued_fraction=cued_fraction,
        tool_output_scale=tool_output_scale,
    )
    command = reproduce_command(
        dataset=dataset,
        count=count,
        seed=seed,
        session_tokens=session_tokens,
        cued_fraction=cued_fraction,
        tool_output_scale=tool_output_scale,
        strategies=specs,
        target_ratio=target_ratio,
        successive_k=successive_k,
        replicates=replicates,
        provider=provider,
        model=model,
        base_url=base_url,
        out=out,
        judge=judge,
        judge_model=judge_model,
    )
    source = "generated sessions" if dataset == "generated" else f"sessions from {dataset}"
    click.echo(
        f"{len(sessions)} {source}, {len(pipelines)} pipelines, target "
        f"{pct(target_ratio, 0)} of each session's tokens",
        err=True,
    )
    if summarizer is None and any(p.uses_llm for p in pipelines):
        click.echo(
            "summarizer: stand-in (deterministic, no model; give --provider for a real one)",
            err=True,
        )
    click.echo(table_header())
    display = _Display(show_bar=len(sessions) * len(pipelines) >= PROGRESS_BAR_RUNS)
    result = run_eval(
        sessions,
        specs,
        target_ratio=target_ratio,
        provider=summarizer,
        model=model,
        replicates=replicates,
        successive_k=successive_k,
        judge=judge,
        judge_model=judge_model,
        dataset=dataset,
        command=command,
        progress=display,
    )
    report = write_report(result, out)
    if result.config.tokenizer_note:
        click.echo(f"note: {result.config.tokenizer_note}", err=True)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"report: {report.html}  (every number: {report.directory / 'results.json'})")
