"""Run an evaluation: every strategy pipeline on every session, every metric, one result.

`run_eval(sessions, ["truncate", "default", …], target_ratio=0.15)` compacts each session to
`target_ratio` of its tokens with each pipeline and measures it (`compaction.eval.metrics`):
facts kept, stale and mutated values (and stale values the compaction restates in its own
words), validity for both dialects, compression, budget used, the last message verbatim,
empty summaries, determinism, time and summarizer use; then replays the session call by
call with the pipeline in front of every call, and compacts it k times in succession. The
`EvalResult` holds every number per pipeline × session and per pipeline, and serializes to
JSON.

Pipelines are named by specs: a strategy kind alone (`truncate`, `mask`, `digest`), a preset
(`default` = mask → digest → truncate, `summarize` = mask → summarize → truncate, `sequence`
= mask → sequence → truncate), or kinds joined by `+` (`mask+truncate`). LLM strategies use
the provider given, or else a deterministic stand-in (a `FunctionProvider` that calls no
model and writes a content-free summary), and the result says which.

With a real provider (never the stand-in), each one-shot compaction is also put to the
model: every probe is asked as a question against the compacted conversation
(`compaction.eval.qa.ask_probes`, `replicates` rounds, at least 3), and with `judge` a judge
model grades it on Factory's six dimensions (`compaction.eval.qa.judge`). Both read the first
of the one-shot compactions, so their replicates measure the model's answers, not the
summarizer's.

This module must never print, write files or read the clock for anything but timings; it
must never score facts except through `compaction.eval.metrics`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import TypeAdapter

from compaction.compactor import CompactionResult, Compactor
from compaction.config import CompactionConfig
from compaction.eval.generate import generate_session
from compaction.eval.metrics import (
    Replay,
    Successive,
    SummarizerUse,
    Survival,
    Validity,
    budget_used,
    by_key,
    compression_ratio,
    conversation_text,
    empty_summaries,
    last_message_verbatim,
    mean_ci95,
    pooled,
    rate_dict,
    replay,
    restated_stale,
    same_encoding,
    successive,
    summarizer_use,
    survival,
    validity,
)
from compaction.eval.probes import CATEGORIES, REQUIRED_CATEGORIES, Depth, FactCategory, Rate
from compaction.eval.qa import (
    JUDGE_DIMENSIONS,
    Interval,
    JudgeResult,
    QAResult,
    ask_probes,
    confidence_interval,
)
from compaction.eval.qa import judge as judge_compaction
from compaction.eval.sessions import EvalSession
from compaction.exceptions import ConfigError
from compaction.providers.base import CompletionRequest, Provider, Usage
from compaction.providers.testing import FunctionProvider, Reply
from compaction.strategies import Strategy
from compaction.tokens import ConversationCounter

__all__ = [
    "KINDS",
    "MIN_QA_REPLICATES",
    "PRESETS",
    "STAND_IN_SUMMARY",
    "EvalResult",
    "Pipeline",
    "Progress",
    "RunResult",
    "SessionInfo",
    "StrategySummary",
    "generated_sessions",
    "parse_pipeline",
    "run_eval",
    "stand_in_provider",
]

KINDS: Final = ("mask", "digest", "summarize", "sequence", "truncate")
PRESETS: Final[Mapping[str, tuple[str, ...]]] = {
    "default": ("mask", "digest", "truncate"),
    "summarize": ("mask", "summarize", "truncate"),
    "sequence": ("mask", "sequence", "truncate"),
}
DEFAULT_STRATEGIES: Final = ("truncate", "mask", "digest", "default", "summarize")
#: Replicates of the questions (and of the judge) when a provider is given: fewer cannot
#: give a useful confidence interval.
MIN_QA_REPLICATES: Final = 3

STAND_IN_SUMMARY: Final = (
    "Stand-in summary: no model was called (compaction eval ran without a provider), so "
    "this text carries no facts; only the deterministic ledger below does."
)
STAND_IN_DESCRIPTION: Final = (
    "stand-in summarizer (a deterministic FunctionProvider, no model): every summary is a "
    "content-free sentence, so LLM strategies are measured on the deterministic ledger merged "
    "into each summary — the floor a real model starts from, not a model's summary quality"
)

_STRATEGY: TypeAdapter[Strategy] = TypeAdapter(Strategy)


# --- pipelines -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pipeline:
    """A named pipeline: the spec the user wrote and the strategy kinds it runs, in order."""

    spec: str
    kinds: tuple[str, ...]

    @property
    def label(self) -> str:
        chain = " → ".join(self.kinds)
        return self.spec if chain == self.spec else f"{self.spec} ({chain})"

    @property
    def uses_llm(self) -> bool:
        return any(s.needs_summarizer for s in self.strategies())

    def strategies(self) -> tuple[Strategy, ...]:
        return tuple(_STRATEGY.validate_python({"kind": k}) for k in self.kinds)


def parse_pipeline(spec: str) -> Pipeline:
    """A spec → its pipeline; a `ConfigError` naming the valid choices otherwise."""
    name = spec.strip()
    kinds = PRESETS.get(name) or tuple(k.strip() for k in name.split("+"))
    for kind in kinds:
        if kind not in KINDS:
            raise ConfigError(
                f"unknown strategy {kind!r} in {spec!r}: use a strategy "
                f"({', '.join(KINDS)}), a preset ({', '.join(PRESETS)}) or strategies "
                "joined by + (mask+truncate)",
                location="strategies",
            )
    return Pipeline(name, kinds)


def stand_in_provider() -> FunctionProvider:
    """The summarizer used when no provider is configured: deterministic, no model, and a
    summary with no content of its own (see `STAND_IN_DESCRIPTION`)."""

    def answer(request: CompletionRequest) -> Reply:
        if request.output_schema is not None:
            return {"summary": STAND_IN_SUMMARY, "kept_facts": [], "next_steps": []}
        return STAND_IN_SUMMARY

    return FunctionProvider(answer, name="stand-in")


# --- datasets --------------------------------------------------------------------------------


def generated_sessions(
    count: int,
    *,
    seed: int = 100,
    tokens: int = 25_000,
    cued_fraction: float | None = None,
    tool_output_scale: float = 1.0,
) -> list[EvalSession]:
    """`count` generated sessions, seeds `seed`, `seed`+1, …. With `cued_fraction` None,
    even seeds state half their facts with a cue word and odd seeds none, as the retention
    benchmark does. Seeds 0-3 were read while building the digest; the default starts past
    them."""
    if count < 1:
        raise ConfigError(f"need at least one session, got {count}", location="sessions")
    from compaction.dialects import OPENAI

    sessions = []
    for s in range(seed, seed + count):
        cued = cued_fraction if cued_fraction is not None else (0.5 if s % 2 == 0 else 0.0)
        generated = generate_session(
            s, target_tokens=tokens, cued_fraction=cued, tool_output_scale=tool_output_scale
        )
        sessions.append(
            EvalSession(
                name=f"seed {s}",
                conversation=OPENAI.decode(generated.payload),
                facts=tuple(generated.facts),
                source="generated",
                tags={
                    "seed": str(s),
                    "cued_fraction": f"{cued:g}",
                    "tool_output_scale": f"{tool_output_scale:g}",
                },
            )
        )
    return sessions


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionInfo:
    """A session as the report lists it."""

    name: str
    source: str
    messages: int
    tokens: int
    facts: int
    required_facts: int
    dialect: str = "openai"
    tags: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "messages": self.messages,
            "tokens": self.tokens,
            "facts": self.facts,
            "required_facts": self.required_facts,
            "dialect": self.dialect,
            "tags": dict(self.tags),
        }


@dataclass(frozen=True)
class RunResult:
    """One pipeline on one session.

    The one-shot compaction (to `target_tokens` = ⌊tokens_before × target_ratio⌋, at least 1)
    runs max(replicates, 2) times with a fresh compactor each time: the first gives every
    figure here, the first two are compared for `deterministic`, and the first `replicates`
    give `replicates` (facts kept per run). `compaction_ms` is the first run's own time.
    `qa` and `judged` (with a real provider only) put the first run's compacted conversation
    to the model: the probes as questions, and the judge's six dimensions.
    """

    strategy: str
    session: str
    tokens_before: int
    target_tokens: int
    tokens_after: int
    messages_before: int
    messages_after: int
    status: str
    target_met: bool
    survival: Survival
    validity: Validity
    deterministic: bool
    compaction_ms: float
    summarizer: SummarizerUse
    replay: Replay
    successive: Successive
    replicates: tuple[Rate, ...]
    errors: tuple[str, ...] = ()
    last_message_verbatim: bool = True
    empty_summaries: int = 0
    stale_restated: tuple[str, ...] = ()
    qa: QAResult | None = None
    judged: JudgeResult | None = None

    @property
    def compression(self) -> float:
        return compression_ratio(self.tokens_before, self.tokens_after)

    @property
    def budget_used(self) -> float:
        return budget_used(self.tokens_after, self.target_tokens)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "session": self.session,
            "tokens_before": self.tokens_before,
            "target_tokens": self.target_tokens,
            "tokens_after": self.tokens_after,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "compression": self.compression,
            "budget_used": round(self.budget_used, 4),
            "last_message_verbatim": self.last_message_verbatim,
            "empty_summaries": self.empty_summaries,
            "stale_restated": list(self.stale_restated),
            "status": self.status,
            "target_met": self.target_met,
            "survival": self.survival.to_dict(),
            "validity": self.validity.to_dict(),
            "deterministic": self.deterministic,
            "compaction_ms": round(self.compaction_ms, 2),
            "summarizer": self.summarizer.to_dict(),
            "replay": self.replay.to_dict(),
            "successive": self.successive.to_dict(),
            "replicates": [rate_dict(r) for r in self.replicates],
            "errors": list(self.errors),
            **({"qa": qa_dict(self.qa)} if self.qa is not None else {}),
            **({"judge": judge_dict(self.judged)} if self.judged is not None else {}),
        }


def interval_dict(interval: Interval | None) -> dict[str, Any] | None:
    """An interval as JSON: mean, 95% bounds, half-width and the number of values."""
    if interval is None:
        return None
    return {
        "mean": interval.mean,
        "low": interval.low,
        "high": interval.high,
        "half_width": interval.half_width,
        "n": interval.n,
    }


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "requests": usage.requests,
    }


def qa_dict(qa: QAResult) -> dict[str, Any]:
    return {
        "model": qa.model,
        "replicates": qa.replicates,
        "accuracy": interval_dict(qa.accuracy),
        "per_replicate": list(qa.per_replicate),
        "by_category": {c: interval_dict(i) for c, i in qa.by_category.items()},
        "stale_answers": len(qa.stale_answers),
        "calls": qa.calls,
        "usage": usage_dict(qa.usage),
        "errors": list(qa.errors),
    }


def judge_dict(judged: JudgeResult) -> dict[str, Any]:
    return {
        "model": judged.model,
        "judgements": len(judged.judgements),
        "dimensions": {d: interval_dict(i) for d, i in judged.dimensions.items()},
        "overall": interval_dict(judged.overall),
        "problems": [p for j in judged.judgements for p in j.problems],
        "calls": judged.calls,
        "usage": usage_dict(judged.usage),
        "errors": list(judged.errors),
    }


def _pooled_interval(values: Iterable[float | None], *, upper: float = 1.0) -> Interval | None:
    """The t-interval of the values that are there (None: nothing was answered)."""
    present = [v for v in values if v is not None]
    return confidence_interval(present, lower=0.0, upper=upper) if present else None


@dataclass(frozen=True)
class StrategySummary:
    """One pipeline over every session: rates pooled (Σ kept / Σ total, each fact weighing
    the same), counts summed, compression and times as medians over sessions, replay sums
    (saving = 1 − Σ cumulative / Σ baseline cumulative), replicate survival as a mean with a
    95% confidence half-width.

    Questions and judge (with a provider): every session's per-replicate values are pooled
    into one sample (n = sessions × replicates, each session weighing the same when all its
    replicates were answered) and the interval is the t-interval of that sample
    (`compaction.eval.qa.confidence_interval`). Its mean is the mean over sessions of each
    session's accuracy; its width covers both session-to-session and replicate-to-replicate
    variation, treating every value as independent."""

    pipeline: Pipeline
    runs: tuple[RunResult, ...]

    @property
    def sessions(self) -> int:
        return len(self.runs)

    @property
    def survival(self) -> Rate:
        return pooled(r.survival.overall for r in self.runs)

    @property
    def critical(self) -> Rate:
        return pooled(r.survival.critical for r in self.runs)

    @property
    def required_categories(self) -> Rate:
        """Facts of the categories the benchmark requires at 100%, pooled."""
        return pooled(
            rate
            for r in self.runs
            for category, rate in r.survival.score.by_category.items()
            if category in REQUIRED_CATEGORIES
        )

    @property
    def by_category(self) -> dict[FactCategory, Rate]:
        return by_key(r.survival.score.by_category for r in self.runs)

    @property
    def by_depth(self) -> dict[Depth, Rate]:
        return by_key(r.survival.score.by_depth for r in self.runs)

    @property
    def optional_by_category(self) -> dict[FactCategory, Rate]:
        return by_key(r.survival.score.optional_by_category for r in self.runs)

    @property
    def stale_as_current(self) -> int:
        return sum(len(r.survival.stale_as_current) for r in self.runs)

    @property
    def mutated(self) -> int:
        return sum(len(r.survival.mutated) for r in self.runs)

    @property
    def last_message_verbatim(self) -> int:
        return sum(r.last_message_verbatim for r in self.runs)

    @property
    def empty_summaries(self) -> int:
        return sum(r.empty_summaries for r in self.runs)

    @property
    def stale_restated(self) -> int:
        return sum(len(r.stale_restated) for r in self.runs)

    @property
    def budget_used_mean(self) -> float:
        return statistics.fmean(r.budget_used for r in self.runs)

    @property
    def compression_median(self) -> float:
        return statistics.median(r.compression for r in self.runs)

    @property
    def target_met(self) -> int:
        return sum(r.target_met for r in self.runs)

    @property
    def valid_openai(self) -> int:
        return sum(r.validity.valid_openai for r in self.runs)

    @property
    def valid_anthropic(self) -> int:
        return sum(r.validity.valid_anthropic for r in self.runs)

    @property
    def deterministic(self) -> int:
        return sum(r.deterministic for r in self.runs)

    @property
    def median_compaction_ms(self) -> float:
        return statistics.median(r.compaction_ms for r in self.runs)

    @property
    def summarizer(self) -> SummarizerUse:
        total = SummarizerUse()
        for run in self.runs:
            total += run.summarizer
        return total

    @property
    def replay_cumulative(self) -> int:
        return sum(r.replay.cumulative for r in self.runs)

    @property
    def replay_baseline_cumulative(self) -> int:
        return sum(r.replay.baseline_cumulative for r in self.runs)

    @property
    def replay_saving(self) -> float:
        base = self.replay_baseline_cumulative
        return 1 - self.replay_cumulative / base if base else 0.0

    @property
    def replay_peak_max(self) -> int:
        return max(r.replay.peak for r in self.runs)

    @property
    def replay_summarizer(self) -> SummarizerUse:
        total = SummarizerUse()
        for run in self.runs:
            total += run.replay.summarizer
        return total

    @property
    def successive(self) -> Rate:
        return pooled(r.successive.survival.overall for r in self.runs)

    @property
    def successive_critical(self) -> Rate:
        return pooled(r.successive.survival.critical for r in self.runs)

    @property
    def replicate_rates(self) -> list[float]:
        """Facts kept per replicate, pooled over sessions (None-free: empty pools are 1.0)."""
        count = min(len(r.replicates) for r in self.runs)
        return [pooled(r.replicates[i] for r in self.runs).value for i in range(count)]

    @property
    def has_qa(self) -> bool:
        return any(r.qa is not None for r in self.runs)

    @property
    def has_judge(self) -> bool:
        return any(r.judged is not None for r in self.runs)

    @property
    def qa_accuracy(self) -> Interval | None:
        """Questions answered correctly: pooled per-replicate shares (see the class)."""
        return _pooled_interval(
            s for r in self.runs if r.qa is not None for s in r.qa.per_replicate
        )

    @property
    def qa_by_category(self) -> dict[FactCategory, Interval]:
        found = {}
        for category in CATEGORIES:
            interval = _pooled_interval(
                s for r in self.runs if r.qa is not None for s in r.qa.replicate_shares(category)
            )
            if interval is not None:
                found[category] = interval
        return found

    @property
    def judge_dimensions(self) -> dict[str, Interval]:
        found = {}
        for dimension in JUDGE_DIMENSIONS:
            interval = _pooled_interval(
                (
                    j.scores.get(dimension)
                    for r in self.runs
                    if r.judged is not None
                    for j in r.judged.judgements
                ),
                upper=5.0,
            )
            if interval is not None:
                found[dimension] = interval
        return found

    @property
    def judge_overall(self) -> Interval | None:
        """The mean of the six scores per complete judgement, pooled like the dimensions."""
        return _pooled_interval(
            (j.mean for r in self.runs if r.judged is not None for j in r.judged.judgements),
            upper=5.0,
        )

    def _qa_totals(self) -> dict[str, Any]:
        results = [r.qa for r in self.runs if r.qa is not None]
        usage = Usage()
        for qa in results:
            usage = usage + qa.usage
        return {
            "accuracy": interval_dict(self.qa_accuracy),
            "by_category": {c: interval_dict(i) for c, i in self.qa_by_category.items()},
            "sessions": len(results),
            "calls": sum(qa.calls for qa in results),
            "usage": usage_dict(usage),
            "errors": sum(len(qa.errors) for qa in results),
        }

    def _judge_totals(self) -> dict[str, Any]:
        results = [r.judged for r in self.runs if r.judged is not None]
        usage = Usage()
        for judged in results:
            usage = usage + judged.usage
        return {
            "dimensions": {d: interval_dict(i) for d, i in self.judge_dimensions.items()},
            "overall": interval_dict(self.judge_overall),
            "sessions": len(results),
            "calls": sum(j.calls for j in results),
            "usage": usage_dict(usage),
            "errors": sum(len(j.errors) for j in results),
        }

    def to_dict(self) -> dict[str, Any]:
        mean, ci = mean_ci95(self.replicate_rates)
        replicates = self.replicate_rates
        return {
            "strategy": self.pipeline.spec,
            "label": self.pipeline.label,
            "kinds": list(self.pipeline.kinds),
            "uses_llm": self.pipeline.uses_llm,
            "sessions": self.sessions,
            "survival": rate_dict(self.survival),
            "critical": rate_dict(self.critical),
            "required_categories": rate_dict(self.required_categories),
            "by_category": {k: rate_dict(v) for k, v in self.by_category.items()},
            "by_depth": {k: rate_dict(v) for k, v in self.by_depth.items()},
            "optional_by_category": {k: rate_dict(v) for k, v in self.optional_by_category.items()},
            "stale_as_current": self.stale_as_current,
            "stale_restated": self.stale_restated,
            "mutated": self.mutated,
            "last_message_verbatim": self.last_message_verbatim,
            "empty_summaries": self.empty_summaries,
            "budget_used_mean": round(self.budget_used_mean, 4),
            "compression_median": self.compression_median,
            "compression_min": min(r.compression for r in self.runs),
            "compression_max": max(r.compression for r in self.runs),
            "target_met": self.target_met,
            "valid_openai": self.valid_openai,
            "valid_anthropic": self.valid_anthropic,
            "deterministic": self.deterministic,
            "median_compaction_ms": round(self.median_compaction_ms, 2),
            "summarizer": self.summarizer.to_dict(),
            "replay": {
                "peak_max": self.replay_peak_max,
                "baseline_peak_max": max(r.replay.baseline_peak for r in self.runs),
                "cumulative": self.replay_cumulative,
                "baseline_cumulative": self.replay_baseline_cumulative,
                "saving": self.replay_saving,
                "compactions": sum(r.replay.compactions for r in self.runs),
                "calls": sum(len(r.replay.calls) for r in self.runs),
                "summarizer": self.replay_summarizer.to_dict(),
            },
            "successive": {
                "k": max(r.successive.k for r in self.runs),
                "overall": rate_dict(self.successive),
                "critical": rate_dict(self.successive_critical),
            },
            "replicates": {
                "count": len(replicates),
                "survival": replicates,
                "mean": mean,
                "ci95": ci,
            },
            **({"qa": self._qa_totals()} if self.has_qa else {}),
            **({"judge": self._judge_totals()} if self.has_judge else {}),
        }


@dataclass(frozen=True)
class Progress:
    """A progress report: `done` of `total` sessions of `strategy` finished; `run` is the
    run just finished, `summary` is set once the strategy's last session is done."""

    strategy: str
    done: int
    total: int
    run: RunResult | None = None
    summary: StrategySummary | None = None


@dataclass(frozen=True)
class EvalConfig:
    """What was run: everything needed to read the numbers and to run them again."""

    dataset: str
    strategies: tuple[Pipeline, ...]
    target_ratio: float
    replicates: int
    successive_k: int
    summarizer: Mapping[str, Any]
    tokenizer: str
    tokenizer_note: str | None
    qa: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "strategies": {p.spec: list(p.kinds) for p in self.strategies},
            "target_ratio": self.target_ratio,
            "replicates": self.replicates,
            "successive_k": self.successive_k,
            "replay": {
                "token_threshold": "target_ratio × the session's tokens",
                "target_fraction": CompactionConfig().target_fraction,
                "call_points": "every assistant message; the input is everything before it",
            },
            "summarizer": dict(self.summarizer),
            "tokenizer": self.tokenizer,
            "tokenizer_note": self.tokenizer_note,
            **({"qa": dict(self.qa)} if self.qa is not None else {}),
        }


@dataclass(frozen=True)
class EvalResult:
    """Every number of one evaluation, per pipeline × session (`runs`) and per pipeline
    (`summaries`, in the order the pipelines were given), with the config and the command
    that reproduces it."""

    config: EvalConfig
    sessions: tuple[SessionInfo, ...]
    summaries: tuple[StrategySummary, ...]
    command: str | None = None

    @property
    def runs(self) -> list[RunResult]:
        return [run for s in self.summaries for run in s.runs]

    def summary(self, spec: str) -> StrategySummary:
        for s in self.summaries:
            if s.pipeline.spec == spec:
                return s
        raise KeyError(spec)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "compaction-eval/1",
            "command": self.command,
            "config": self.config.to_dict(),
            "sessions": [s.to_dict() for s in self.sessions],
            "strategies": [s.to_dict() for s in self.summaries],
            "runs": [r.to_dict() for r in self.runs],
        }


# --- running ---------------------------------------------------------------------------------


def run_eval(
    sessions: Sequence[EvalSession],
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    *,
    target_ratio: float = 0.15,
    provider: Provider | None = None,
    model: str | None = None,
    replicates: int | None = None,
    successive_k: int = 3,
    judge: bool = False,
    judge_model: str | None = None,
    dataset: str = "sessions",
    command: str | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> EvalResult:
    """Evaluate each pipeline spec on each session (see the module docstring).

    `provider` (with its `model`, the compaction model) summarizes for the LLM strategies;
    without one, the deterministic stand-in does and the result says so. With a provider,
    every probe is also asked as a question against each one-shot compaction, `replicates`
    times (default and minimum `MIN_QA_REPLICATES`; without a provider the default is 1), and
    with `judge` the judge model (`judge_model`, default `model`) grades each compaction too.
    `dataset` and `command` are recorded as given. Raises `ConfigError` for bad arguments.
    """
    if replicates is None:
        replicates = MIN_QA_REPLICATES if provider is not None else 1
    if not sessions:
        raise ConfigError("no sessions to evaluate", location="dataset")
    if not 0 < target_ratio <= 1:
        raise ConfigError(f"must be within (0, 1], got {target_ratio}", location="target_ratio")
    if replicates < 1:
        raise ConfigError(f"must be at least 1, got {replicates}", location="replicates")
    if provider is not None and replicates < MIN_QA_REPLICATES:
        raise ConfigError(
            f"must be at least {MIN_QA_REPLICATES} with a provider (questions are asked that "
            f"many times for a confidence interval), got {replicates}",
            location="replicates",
        )
    if judge and provider is None:
        raise ConfigError("the judge needs a provider", location="judge")
    if successive_k < 1:
        raise ConfigError(f"must be at least 1, got {successive_k}", location="successive")
    pipelines = tuple(parse_pipeline(s) for s in strategies)
    if not pipelines:
        raise ConfigError("at least one strategy is needed", location="strategies")
    specs = [p.spec for p in pipelines]
    repeated = sorted({s for s in specs if specs.count(s) > 1})
    if repeated:
        raise ConfigError(f"given more than once: {', '.join(repeated)}", location="strategies")

    counters: dict[tuple[str | None, str], ConversationCounter] = {}

    def counter_for(session: EvalSession) -> ConversationCounter:
        # One counter per model and provider, shared by every compactor: each message is
        # tokenized once for the whole evaluation instead of once per compaction.
        conversation = session.conversation
        kind = "anthropic" if conversation.dialect == "anthropic" else "openai"
        key = (conversation.model, kind)
        if key not in counters:
            counters[key] = ConversationCounter.for_model(conversation.model, provider=kind)
        return counters[key]

    infos = tuple(
        SessionInfo(
            name=s.name,
            source=s.source,
            messages=len(s.conversation),
            tokens=counter_for(s).total(s.conversation),
            facts=len(s.facts),
            required_facts=sum(f.required for f in s.facts),
            dialect="anthropic" if s.conversation.dialect == "anthropic" else "openai",
            tags=dict(s.tags),
        )
        for s in sessions
    )
    summaries = []
    for pipeline in pipelines:
        if progress is not None:
            progress(Progress(pipeline.spec, 0, len(sessions)))
        runs = []
        for n, session in enumerate(sessions, 1):
            run = _run_one(
                pipeline,
                session,
                counter_for(session),
                target_ratio=target_ratio,
                provider=provider,
                model=model,
                replicates=replicates,
                successive_k=successive_k,
                judge=judge,
                judge_model=judge_model or model,
            )
            runs.append(run)
            if progress is not None and n < len(sessions):
                progress(Progress(pipeline.spec, n, len(sessions), run=run))
        summary = StrategySummary(pipeline, tuple(runs))
        summaries.append(summary)
        if progress is not None:
            progress(Progress(pipeline.spec, len(runs), len(sessions), runs[-1], summary))

    notes = {c.note for c in counters.values() if c.note}
    config = EvalConfig(
        dataset=dataset,
        strategies=pipelines,
        target_ratio=target_ratio,
        replicates=replicates,
        successive_k=successive_k,
        summarizer=_summarizer_label(provider, model, pipelines),
        tokenizer=", ".join(sorted({c.counter.name for c in counters.values()})),
        tokenizer_note="; ".join(sorted(notes)) or None,
        qa=None
        if provider is None
        else {
            "provider": provider.name,
            "model": model,
            "replicates": replicates,
            "judge": judge,
            "judge_model": (judge_model or model) if judge else None,
            "context": "the first one-shot compaction of each session, rendered as a transcript",
            "interval": "95% t-interval over every session's per-replicate values, pooled",
        },
    )
    return EvalResult(config, infos, tuple(summaries), command)


def _summarizer_label(
    provider: Provider | None, model: str | None, pipelines: Sequence[Pipeline]
) -> dict[str, Any]:
    used = any(p.uses_llm for p in pipelines)
    if provider is None:
        return {
            "kind": "stand-in",
            "name": "stand-in",
            "model": None,
            "used": used,
            "description": STAND_IN_DESCRIPTION,
        }
    return {
        "kind": "provider",
        "name": provider.name,
        "model": model,
        "used": used,
        "description": f"{provider.name}" + (f" with model {model}" if model else ""),
    }


def _run_one(
    pipeline: Pipeline,
    session: EvalSession,
    counter: ConversationCounter,
    *,
    target_ratio: float,
    provider: Provider | None,
    model: str | None,
    replicates: int,
    successive_k: int,
    judge: bool = False,
    judge_model: str | None = None,
) -> RunResult:
    conversation = session.conversation
    strategies = pipeline.strategies()

    def compactor(**settings: Any) -> Compactor:
        config = CompactionConfig(strategies=strategies, model=model, **settings)
        summarizer = None
        if pipeline.uses_llm:
            summarizer = provider if provider is not None else stand_in_provider()
        return Compactor(config, counter=counter, summarizer=summarizer)

    tokens = counter.total(conversation)
    target = max(int(tokens * target_ratio), 1)
    results: list[CompactionResult] = [
        compactor().compact(conversation, max_tokens=target) for _ in range(max(replicates, 2))
    ]
    first = results[0]
    receipt = first.receipt
    scored = [survival(session.facts, conversation_text(r.conversation)) for r in results]
    # Only a real provider is asked: the stand-in knows nothing and would score 0 everywhere.
    qa: QAResult | None = None
    judged: JudgeResult | None = None
    if provider is not None:
        qa = ask_probes(
            session, first.conversation, session.facts, provider, model=model, replicates=replicates
        )
        if judge:
            judged = judge_compaction(
                session, first.conversation, provider, model=judge_model, replicates=replicates
            )
    return RunResult(
        strategy=pipeline.spec,
        session=session.name,
        tokens_before=receipt.tokens_before,
        target_tokens=target,
        tokens_after=receipt.tokens_after,
        messages_before=receipt.messages_before,
        messages_after=receipt.messages_after,
        status=receipt.status,
        target_met=receipt.target_met,
        survival=scored[0],
        validity=validity(conversation, first.conversation),
        deterministic=same_encoding(results[0].conversation, results[1].conversation),
        compaction_ms=receipt.elapsed_ms,
        summarizer=summarizer_use([receipt]),
        # The replay's budget is the one-shot target: an agent whose context may never grow
        # past target_ratio of what the whole session would have cost.
        replay=replay(conversation, compactor(token_threshold=target)),
        successive=successive(
            conversation, session.facts, compactor(), k=successive_k, target_tokens=target
        ),
        replicates=tuple(s.overall for s in scored[:replicates]),
        errors=tuple(e for step in receipt.steps for e in step.errors),
        last_message_verbatim=last_message_verbatim(conversation, first.conversation),
        empty_summaries=empty_summaries(conversation, first.conversation),
        stale_restated=tuple(
            f.id for f in restated_stale(session.facts, conversation, first.conversation)
        ),
        qa=qa,
        judged=judged,
    )
