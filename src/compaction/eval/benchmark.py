"""The retention benchmark over sessions nobody here wrote: real agents' sessions, SWE-agent
trajectories and the generated families, per source, dialect, pipeline and ratio.

`measure(session, pipeline, ratio)` compacts one session once and records everything the
benchmark asks of a run: validity in the session's own dialect, the target met (and whether
the protected content — system messages, the first user message, the live user turn (the
last message the user wrote), the last message: what the compactor keeps verbatim — fits it
at all), the last message verbatim, empty summaries, stale values stated as current, budget
used (tokens after / target) and, per fact category, kept of total. `measure_growing` replays
the session in growing prefixes the way an agent would, compacting whenever the view passes
a threshold set for about five compactions and carrying the compacted view forward, and
scores the view at the end. `compare` pools runs per source × dialect × pipeline × ratio and
`shortfalls` flags every category where the default pipeline keeps fewer facts than
`mask+truncate` or `truncate`.

Pipelines are named by strategy kinds and built through `CompactionConfig(strategies=…)`:
this module knows nothing of how a strategy works. It must never import the digest
(`compaction.summarize`) nor score facts except through `compaction.eval.probes.score`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.eval.metrics import (
    budget_used,
    call_points,
    conversation_text,
    empty_summaries,
    last_message_verbatim,
    restated_stale,
    validity,
)
from compaction.eval.probes import CATEGORIES, REQUIRED_CATEGORIES, FactCategory, Rate, score
from compaction.eval.sessions import EvalSession
from compaction.messages import Conversation, Message, live_turn_index
from compaction.tokens import ConversationCounter

__all__ = [
    "DEFAULT_PIPELINE",
    "PIPELINES",
    "RATIOS",
    "Pooled",
    "RunMeasure",
    "compare",
    "counter_for",
    "measure",
    "measure_growing",
    "protected_tokens",
    "ratio_label",
    "shared_data_dir",
    "shortfalls",
    "source_of",
]

#: The pipelines compared, by name, as strategy kinds in order.
PIPELINES: Final[Mapping[str, tuple[str, ...]]] = {
    "default": ("mask", "digest", "truncate"),
    "mask+truncate": ("mask", "truncate"),
    "digest+truncate": ("digest", "truncate"),
    "truncate": ("truncate",),
}
DEFAULT_PIPELINE: Final = "default"
#: The pipelines the default must never keep fewer facts of any category than.
BASELINES: Final = ("mask+truncate", "digest+truncate", "truncate")
RATIOS: Final = (0.30, 0.15, 0.10)
#: Compactions a growing session is replayed for (`measure_growing`).
GROWING_ROUNDS: Final = 5

#: Agent families by file-name prefix (the real-data README's table), longest prefix first.
_SOURCES: Final = (
    ("p2r_harborsuite", "opencode"),
    ("ccx_", "ccx"),
    ("cc_", "cc"),
    ("p2r_", "p2r"),
    ("cline_", "cline"),
    ("aider_", "aider"),
    ("mini_", "mini"),
)


def shared_data_dir(repo_root: Path) -> Path | None:
    """The shared data directory: `$COMPACTION_SHARED_DATA`, else `../shared/data` beside the
    repository; None when neither exists."""
    env = os.environ.get("COMPACTION_SHARED_DATA")
    for candidate in ([Path(env)] if env else []) + [repo_root.parent / "shared" / "data"]:
        if candidate.is_dir():
            return candidate
    return None


def source_of(name: str) -> str:
    """The agent family a real session's file name belongs to (`swe-agent` for `.traj`)."""
    if name.endswith(".traj"):
        return "swe-agent"
    for prefix, source in _SOURCES:
        if name.startswith(prefix):
            return source
    return name.split("_", 1)[0]


_COUNTERS: dict[tuple[str | None, str], ConversationCounter] = {}


def counter_for(conversation: Conversation) -> ConversationCounter:
    """One token counter per model and provider, shared by every run: each message is counted
    once for the whole benchmark."""
    kind = "anthropic" if conversation.dialect == "anthropic" else "openai"
    key = (conversation.model, kind)
    if key not in _COUNTERS:
        _COUNTERS[key] = ConversationCounter.for_model(conversation.model, provider=kind)
    return _COUNTERS[key]


def _compactor(pipeline: str, counter: ConversationCounter) -> Compactor:
    strategies = [{"kind": kind} for kind in PIPELINES[pipeline]]
    return Compactor(CompactionConfig.from_dict({"strategies": strategies}), counter=counter)


def dialect_of(conversation: Conversation) -> str:
    """The dialect a session is validated in: its own (OpenAI for SWE-agent trajectories)."""
    return "anthropic" if conversation.dialect == "anthropic" else "openai"


@dataclass(frozen=True)
class RunMeasure:
    """One pipeline on one session at one ratio (see the module docstring).

    `kept` / `optional` map each category to (kept, total) of its required / other facts.
    `protected_fits`: the system messages, the first user message, the live user turn and the
    last message fit the target together, so a run that misses the target has no excuse.
    """

    source: str
    dialect: str
    session: str
    pipeline: str
    ratio: float
    tokens_before: int
    target: int
    tokens_after: int
    status: str  # the receipt's (of the last compaction, for a growing session)
    valid: bool
    target_met: bool
    protected_fits: bool
    last_verbatim: bool
    empty_summaries: int
    stale: tuple[str, ...]
    kept: Mapping[FactCategory, tuple[int, int]]
    optional: Mapping[FactCategory, tuple[int, int]]
    lost: tuple[str, ...] = ()
    compactions: int = 1
    violations: tuple[str, ...] = ()

    @property
    def budget_used(self) -> float:
        return budget_used(self.tokens_after, self.target)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dialect": self.dialect,
            "session": self.session,
            "pipeline": self.pipeline,
            "ratio": self.ratio,
            "tokens_before": self.tokens_before,
            "target": self.target,
            "tokens_after": self.tokens_after,
            "budget_used": round(self.budget_used, 4),
            "status": self.status,
            "valid": self.valid,
            "target_met": self.target_met,
            "protected_fits": self.protected_fits,
            "last_message_verbatim": self.last_verbatim,
            "empty_summaries": self.empty_summaries,
            "stale_as_current": list(self.stale),
            "by_category": {c: list(v) for c, v in self.kept.items()},
            "optional_by_category": {c: list(v) for c, v in self.optional.items()},
            "lost": list(self.lost),
            "compactions": self.compactions,
            "violations": list(self.violations),
        }


def _protected(conversation: Conversation) -> list[Message]:
    messages = conversation.messages
    chosen = [m for m in messages if m.role == "system"]
    first_user = next((m for m in messages if m.role == "user"), None)
    if first_user is not None:
        chosen.append(first_user)
    live = live_turn_index(messages)
    if live is not None and messages[live] not in chosen:
        chosen.append(messages[live])
    if messages and messages[-1] not in chosen:
        chosen.append(messages[-1])
    return chosen


def _scored(
    session: EvalSession,
    pipeline: str,
    ratio: float,
    before: Conversation,
    after: Conversation,
    *,
    tokens_before: int,
    target: int,
    tokens_after: int,
    status: str,
    target_met: bool,
    compactions: int,
    source: str | None,
) -> RunMeasure:
    marks = score(session.facts, conversation_text(after))
    kept: dict[FactCategory, tuple[int, int]] = {}
    optional: dict[FactCategory, tuple[int, int]] = {}
    for result in marks.results:
        into = kept if result.fact.required else optional
        k, t = into.get(result.fact.category, (0, 0))
        into[result.fact.category] = (k + result.survived, t + 1)
    dialect = dialect_of(before)
    added = validity(before, after).added(dialect)
    counter = counter_for(before)
    return RunMeasure(
        source=source or session.tags.get("source") or source_of(session.name),
        dialect=dialect,
        session=session.name,
        pipeline=pipeline,
        ratio=ratio,
        tokens_before=tokens_before,
        target=target,
        tokens_after=tokens_after,
        status=status,
        valid=not added,
        target_met=target_met,
        protected_fits=counter.total(_protected(before)) <= target,
        last_verbatim=last_message_verbatim(before, after),
        empty_summaries=empty_summaries(before, after),
        stale=tuple(
            dict.fromkeys(
                f.id
                for f in (*marks.stale_as_current, *restated_stale(session.facts, before, after))
            )
        ),
        kept={c: kept[c] for c in CATEGORIES if c in kept},
        optional={c: optional[c] for c in CATEGORIES if c in optional},
        lost=tuple(f"{f.category}: {f.text[:100]}" for f in marks.lost),
        compactions=compactions,
        violations=added,
    )


def protected_tokens(conversation: Conversation) -> int:
    """Tokens of what every compaction must keep: the system messages, the first user
    message, the live user turn and the last message."""
    return counter_for(conversation).total(_protected(conversation))


def measure(
    session: EvalSession,
    pipeline: str,
    ratio: float,
    *,
    target: int | None = None,
    source: str | None = None,
) -> RunMeasure:
    """Compact `session` once to ⌊ratio × its tokens⌋ (or to `target` tokens, recorded
    under `ratio` as given) with `pipeline` and measure the run."""
    conversation = session.conversation
    counter = counter_for(conversation)
    tokens = counter.total(conversation)
    target = max(int(tokens * ratio), 1) if target is None else target
    result = _compactor(pipeline, counter).compact(conversation, max_tokens=target)
    receipt = result.receipt
    return _scored(
        session,
        pipeline,
        ratio,
        conversation,
        result.conversation,
        tokens_before=tokens,
        target=target,
        tokens_after=receipt.tokens_after,
        status=receipt.status,
        target_met=receipt.target_met,
        compactions=1,
        source=source,
    )


def measure_growing(
    session: EvalSession,
    pipeline: str,
    ratio: float,
    *,
    rounds: int = GROWING_ROUNDS,
    source: str | None = None,
) -> RunMeasure:
    """The session replayed as it grew: before each assistant message (where an agent calls
    its model), the view so far is compacted to the target (⌊ratio × the whole session's
    tokens⌋) when it has passed the threshold target + (tokens − target) / `rounds`, and the
    compacted view is carried forward; at the end the view is compacted to the target once
    more if it is over it. About `rounds` compactions; the view at the end is scored."""
    conversation = session.conversation
    counter = counter_for(conversation)
    messages = conversation.messages
    tokens = counter.total(conversation)
    target = max(int(tokens * ratio), 1)
    threshold = target + max((tokens - target) // rounds, 1)
    compactor = _compactor(pipeline, counter)
    view: list[Message] = []
    points = set(call_points(messages))
    compactions = 0
    status, met = "noop", True

    def compact_view() -> None:
        nonlocal view, compactions, status, met
        result = compactor.compact(conversation.with_messages(view), max_tokens=target)
        view = list(result.conversation.messages)
        compactions += result.receipt.status in ("compacted", "target_unreachable")
        status, met = result.receipt.status, result.receipt.target_met

    for index, message in enumerate(messages):
        if index in points and view and counter.total(view) > threshold:
            compact_view()
        view.append(message)
    if counter.total(view) > target:
        compact_view()
    after = conversation.with_messages(view)
    return _scored(
        session,
        pipeline,
        ratio,
        conversation,
        after,
        tokens_before=tokens,
        target=target,
        tokens_after=counter.total(after),
        status=status,
        target_met=met,
        compactions=compactions,
        source=source,
    )


# --- pooling -----------------------------------------------------------------------------------


@dataclass
class Pooled:
    """Runs of one source × dialect × pipeline × ratio, added up."""

    runs: int = 0
    valid: int = 0
    target_met: int = 0
    target_due: int = 0  # runs whose protected content fits the target
    target_met_due: int = 0
    last_verbatim: int = 0
    empty_summaries: int = 0
    stale: int = 0
    budget: list[float] = field(default_factory=list)
    kept: dict[FactCategory, list[int]] = field(default_factory=dict)
    optional: dict[FactCategory, list[int]] = field(default_factory=dict)

    def add(self, run: RunMeasure) -> None:
        self.runs += 1
        self.valid += run.valid
        self.target_met += run.target_met
        self.target_due += run.protected_fits
        self.target_met_due += run.protected_fits and run.target_met
        self.last_verbatim += run.last_verbatim
        self.empty_summaries += run.empty_summaries
        self.stale += len(run.stale)
        if run.protected_fits:
            self.budget.append(run.budget_used)
        for into, source in ((self.kept, run.kept), (self.optional, run.optional)):
            for category, (k, t) in source.items():
                pair = into.setdefault(category, [0, 0])
                pair[0] += k
                pair[1] += t

    @property
    def overall(self) -> Rate:
        return Rate(sum(k for k, _ in self.kept.values()), sum(t for _, t in self.kept.values()))

    @property
    def critical(self) -> Rate:
        """Required facts of the categories that must survive at 100% (`REQUIRED_CATEGORIES`)."""
        chosen = [v for c, v in self.kept.items() if c in REQUIRED_CATEGORIES]
        return Rate(sum(k for k, _ in chosen), sum(t for _, t in chosen))

    @property
    def budget_mean(self) -> float | None:
        return sum(self.budget) / len(self.budget) if self.budget else None

    def to_dict(self) -> dict[str, Any]:
        overall = self.overall
        return {
            "runs": self.runs,
            "valid": self.valid,
            "target_met": self.target_met,
            "target_met_where_protected_fits": f"{self.target_met_due}/{self.target_due}",
            "last_message_verbatim": self.last_verbatim,
            "empty_summaries": self.empty_summaries,
            "stale_as_current": self.stale,
            "budget_used_mean": None if self.budget_mean is None else round(self.budget_mean, 3),
            "kept": overall.kept,
            "total": overall.total,
            "critical": f"{self.critical.kept}/{self.critical.total}",
            "by_category": {c: f"{k}/{t}" for c, (k, t) in self.kept.items()},
            "optional_by_category": {c: f"{k}/{t}" for c, (k, t) in self.optional.items()},
        }


Key = tuple[str, str, str, float]  # source, dialect, pipeline, ratio


def compare(runs: Iterable[RunMeasure]) -> dict[Key, Pooled]:
    """Runs pooled per (source, dialect, pipeline, ratio), in first-seen order."""
    pooled: dict[Key, Pooled] = {}
    for run in runs:
        pooled.setdefault((run.source, run.dialect, run.pipeline, run.ratio), Pooled()).add(run)
    return pooled


def ratio_label(ratio: float) -> str:
    """How a ratio is printed: `15%`, or `tight` for runs with an explicit target (ratio 0)."""
    return f"{ratio:.0%}" if ratio else "tight"


def shortfalls(pooled: Mapping[Key, Pooled], baselines: Sequence[str] = BASELINES) -> list[str]:
    """Every (source, dialect, ratio, category) where the default keeps fewer required facts
    than one of `baselines`, as a line saying by how much."""
    flags = []
    for (source, dialect, pipeline, ratio), result in pooled.items():
        if pipeline != DEFAULT_PIPELINE:
            continue
        for base in baselines:
            other = pooled.get((source, dialect, base, ratio))
            if other is None:
                continue
            for category, (theirs, total) in other.kept.items():
                ours = result.kept.get(category, [0, total])[0]
                if ours < theirs:
                    flags.append(
                        f"{source}/{dialect} at {ratio_label(ratio)}: {category} default "
                        f"{ours}/{total} "
                        f"< {base} {theirs}/{total}"
                    )
    return flags
