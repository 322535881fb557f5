"""Evaluation metrics: what a compaction kept, what it broke, and what it cost.

Each function here measures one thing, and its docstring gives the exact arithmetic:

    survival              facts kept overall, per category, per depth, critical (`probes.score`)
    mutated_facts         facts whose changed value survives only in altered form
    validity              violations of OpenAI's and Anthropic's rules the compaction added
    compression_ratio     tokens before / tokens after
    replay                the session replayed call by call with the compactor before each call:
                          input tokens per call, peak and cumulative, against no compaction
    successive            facts kept after k compactions, each after appending the next part
    same_encoding         byte-for-byte determinism of two compactions
    summarizer_use        summarizer calls, tokens and time from receipts
    last_message_verbatim the input's last message is the output's last, unchanged
    empty_summaries       summary or marker messages the compaction added that carry nothing
    budget_used           tokens after / target

Facts are scored only through `compaction.eval.probes.score` on the text of the compacted
transcript as OpenAI Chat Completions encodes it (`conversation_text`), so the ruler stays the
one `bench/bench_retention.py` uses. This module must never choose a winner, print or write
files, and never look at how a strategy works: it sees conversations, receipts and compactors.
"""

from __future__ import annotations

import collections
import itertools
import json
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from compaction import triggers
from compaction.compactor import Compactor, Receipt
from compaction.dialects import ANTHROPIC, OPENAI, get_dialect
from compaction.dialects.base import Dialect, Violation
from compaction.eval.datasets import message_text
from compaction.eval.probes import Fact, Rate, Score, score, shows, text_of_payload
from compaction.exceptions import CompactionError
from compaction.messages import Conversation, Message, SummaryPart

K = TypeVar("K", bound=str)

__all__ = [
    "Replay",
    "ReplayCall",
    "Successive",
    "SuccessiveRound",
    "SummarizerUse",
    "Survival",
    "Validity",
    "budget_used",
    "by_key",
    "call_points",
    "compression_ratio",
    "conversation_text",
    "critical_rate",
    "empty_summaries",
    "encoding_bytes",
    "last_message_verbatim",
    "mean_ci95",
    "mutated_facts",
    "pooled",
    "rate_dict",
    "replay",
    "restated_stale",
    "same_encoding",
    "split_points",
    "successive",
    "summarizer_use",
    "survival",
    "validity",
]


# --- fact survival ---------------------------------------------------------------------------


def conversation_text(conversation: Conversation) -> str:
    """The text facts are scored against: the conversation encoded as an OpenAI Chat
    Completions request (whatever dialect it came from), every message's text and tool calls
    in order (`probes.text_of_payload`)."""
    payload = OPENAI.encode(conversation)
    if isinstance(payload, list):
        payload = {"messages": payload}
    return text_of_payload(payload)


def rate_dict(rate: Rate) -> dict[str, Any]:
    """A rate for JSON: `rate` is kept / total, or None when there was nothing to keep (an
    empty group is not a perfect score in a report)."""
    return {
        "kept": rate.kept,
        "total": rate.total,
        "rate": rate.kept / rate.total if rate.total else None,
    }


def pooled(rates: Iterable[Rate]) -> Rate:
    """Rates added up: Σ kept of Σ total (each fact weighs the same, whatever its session)."""
    kept = total = 0
    for rate in rates:
        kept += rate.kept
        total += rate.total
    return Rate(kept, total)


def critical_rate(marks: Score) -> Rate:
    """Critical survival: kept / total over the facts that are both required and critical
    (the ones whose loss breaks the work: user constraints, files modified, decisions, …)."""
    chosen = [r for r in marks.results if r.fact.required and r.fact.critical]
    return Rate(sum(r.survived for r in chosen), len(chosen))


def mutated_facts(marks: Score) -> list[Fact]:
    """Facts present only in altered form.

    A fact counts as mutated when it has superseded forms (`stale`: a value or choice that
    changed) and more than one probe string (the thing and its current value, e.g. `request
    timeout` + `90 seconds`), and the compacted text holds some of its probe strings (the
    key) but not all of them (the latest value is gone) and none of its superseded forms.
    The model would see the setting mentioned with no value, or a value that is neither the
    latest nor an earlier one. A fact whose superseded form shows instead is counted in
    `Score.stale_as_current`, never here; the two sets are disjoint.
    """
    found = []
    for result in marks.results:
        fact = result.fact
        if not fact.stale or len(fact.probe) < 2 or result.survived:
            continue
        partial = 0 < len(result.missing) < len(fact.probe)
        if partial and not result.stale_as_current:
            found.append(fact)
    return found


@dataclass(frozen=True)
class Survival:
    """Which facts one compacted transcript kept.

    `score.overall`, `score.by_category` and `score.by_depth` count required facts (`kept` of
    `total`); `critical` counts required critical facts; `score.optional_by_category` the
    facts whose loss is harmless (resolved errors, finished to-dos). `stale_as_current`: the
    superseded form is present and the current one is not. `mutated`: see `mutated_facts`.
    """

    score: Score
    critical: Rate
    mutated: tuple[Fact, ...]

    @property
    def overall(self) -> Rate:
        return self.score.overall

    @property
    def stale_as_current(self) -> list[Fact]:
        return self.score.stale_as_current

    @property
    def lost(self) -> list[Fact]:
        return self.score.lost

    def to_dict(self) -> dict[str, Any]:
        missing = {r.fact.id: r.missing for r in self.score.results}
        return {
            "overall": rate_dict(self.score.overall),
            "critical": rate_dict(self.critical),
            "by_category": {k: rate_dict(v) for k, v in self.score.by_category.items()},
            "by_depth": {k: rate_dict(v) for k, v in self.score.by_depth.items()},
            "optional_by_category": {
                k: rate_dict(v) for k, v in self.score.optional_by_category.items()
            },
            "stale_as_current": [f.id for f in self.stale_as_current],
            "mutated": [f.id for f in self.mutated],
            "lost": [
                {
                    "id": f.id,
                    "category": f.category,
                    "depth": f.depth,
                    "critical": f.critical,
                    "cued": f.cued,
                    "text": f.text,
                    "missing": list(missing[f.id]),
                }
                for f in self.lost
            ],
        }


def survival(facts: Sequence[Fact], text: str) -> Survival:
    """Score `facts` against `text` (see `conversation_text`): `probes.score` plus the
    critical rate and the mutated facts."""
    marks = score(facts, text)
    return Survival(marks, critical_rate(marks), tuple(mutated_facts(marks)))


# --- validity and size -----------------------------------------------------------------------


@dataclass(frozen=True)
class Validity:
    """Violations of each provider's rules that the compaction added.

    `openai` / `anthropic` describe the violations of the compacted conversation beyond those
    the input already had (compared by rule, as `compactor.new_violations` does): converting
    an OpenAI session to Anthropic can break Anthropic's rules before any compaction (two
    user messages in a row), and that is not the compaction's doing. `input_*` count the
    input's own violations.
    """

    openai: tuple[str, ...]
    anthropic: tuple[str, ...]
    input_openai: int = 0
    input_anthropic: int = 0

    def added(self, dialect: str) -> tuple[str, ...]:
        """The added violations for "openai" or "anthropic"."""
        return self.openai if dialect == "openai" else self.anthropic

    @property
    def valid_openai(self) -> bool:
        return not self.openai

    @property
    def valid_anthropic(self) -> bool:
        return not self.anthropic

    def to_dict(self) -> dict[str, Any]:
        return {
            "openai": {
                "valid": self.valid_openai,
                "new_violations": list(self.openai),
                "input_violations": self.input_openai,
            },
            "anthropic": {
                "valid": self.valid_anthropic,
                "new_violations": list(self.anthropic),
                "input_violations": self.input_anthropic,
            },
        }


def _violations(dialect: Dialect, conversation: Conversation) -> list[Violation]:
    """The dialect's violations after encoding: an encoding that fails is one violation."""
    try:
        dialect.encode(conversation)
        return dialect.validate(conversation)
    except CompactionError as e:
        return [Violation(None, "encode_failed", f"cannot encode for {dialect.name}: {e}")]


def _added(before: list[Violation], after: list[Violation]) -> list[Violation]:
    budget = collections.Counter(v.rule for v in before)
    fresh = []
    for violation in after:
        if budget[violation.rule] > 0:
            budget[violation.rule] -= 1
        else:
            fresh.append(violation)
    return fresh


def validity(before: Conversation, after: Conversation) -> Validity:
    """Encode `after` for OpenAI and for Anthropic and validate it; keep, per dialect, the
    violations beyond the input's own: for each rule, the first n occurrences are forgiven
    where `before` broke that rule n times."""
    found: dict[str, tuple[str, ...]] = {}
    inputs: dict[str, int] = {}
    for dialect in (OPENAI, ANTHROPIC):
        own = _violations(dialect, before)
        inputs[dialect.name] = len(own)
        fresh = _added(own, _violations(dialect, after))
        found[dialect.name] = tuple(f"{v} [{v.rule}]" for v in fresh)
    return Validity(
        openai=found["openai"],
        anthropic=found["anthropic"],
        input_openai=inputs["openai"],
        input_anthropic=inputs["anthropic"],
    )


def compression_ratio(tokens_before: int, tokens_after: int) -> float:
    """tokens_before / tokens_after (after taken as at least 1): 5.0 means a fifth the size."""
    return tokens_before / max(tokens_after, 1)


def encoding_bytes(conversation: Conversation) -> bytes:
    """The exact bytes a provider would be sent: the conversation in its own dialect (OpenAI
    for `.traj`), as JSON with keys in the order the dialect writes them."""
    name = conversation.dialect if conversation.dialect in ("openai", "anthropic") else "openai"
    payload = get_dialect(name).encode(conversation)
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def same_encoding(first: Conversation, second: Conversation) -> bool:
    """Determinism: True when two compactions of the same input encode to the same bytes."""
    return encoding_bytes(first) == encoding_bytes(second)


# --- the shape of the output ------------------------------------------------------------------


def _visible(message: Message) -> tuple[str, str]:
    """A message as the model reads it: its role and its text, tool calls and results."""
    return message.role, message_text(message)


def last_message_verbatim(before: Conversation, after: Conversation) -> bool:
    """True when the output ends with the input's last message, same role and same text
    (tool calls and results included) as the model reads it."""
    if not before.messages:
        return not after.messages
    if not after.messages:
        return False
    return _visible(before.messages[-1]) == _visible(after.messages[-1])


_MARKER_LINE = re.compile(r"^\[[^\]]*\]$")
_TAG_LINE = re.compile(r"^</?[\w-]+(?: [^>]*)?>$")
_ZERO_CHARS = re.compile(r"→\s*0 chars")


def _summary_body(text: str) -> str:
    """A summary's text without its envelope: marker lines (`[compacted: …]`), tag lines and
    the sentence that says it is a summary."""
    kept = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or _MARKER_LINE.match(stripped) or _TAG_LINE.match(stripped):
            continue
        folded = stripped.casefold()
        if "summary" in folded and ("compaction" in folded or "earlier" in folded):
            continue
        kept.append(stripped)
    return "\n".join(kept)


def empty_summaries(before: Conversation, after: Conversation) -> int:
    """Summary or marker messages of `after` that `before` did not have and that say nothing:
    a marker reporting `→ 0 chars`, or a summary whose body (`_summary_body`) is empty."""
    seen = {_visible(m) for m in before.messages}
    count = 0
    for message in after.messages:
        if message.role == "tool" or _visible(message) in seen:
            continue
        text = _visible(message)[1]
        is_summary = any(isinstance(p, SummaryPart) for p in message.parts) or (
            "[compacted" in text
        )
        if not is_summary:
            continue
        if _ZERO_CHARS.search(text) or not _summary_body(text):
            count += 1
    return count


_BULLET = re.compile(r"^(?:[-*>•]|\d+[.)])\s+")
_SAFE_PIECES = re.compile(r"[^\"\\\x00-\x1f\x7f-\U0010ffff]{24,}")


def _quotes_session(line: str, session_text: str) -> bool:
    """True when `line` quotes the session: its longest JSON-safe run of 24 or more
    characters occurs in the session's own text (so the words are the session's, not the
    compaction's). Backticks around a run are markup, not words (a command shown as code)."""
    pieces = [p.strip() for p in _SAFE_PIECES.findall(_BULLET.sub("", line.strip()))]
    pieces = [p.rstrip(".…").strip().strip("`").strip() for p in pieces if len(p.strip()) >= 24]
    pieces = [p for p in pieces if len(p) >= 24]
    return bool(pieces) and max(pieces, key=len).casefold() in session_text


def restated_stale(facts: Sequence[Fact], before: Conversation, after: Conversation) -> list[Fact]:
    """Facts whose superseded form the compaction states as current in its own words.

    A line of a message `after` added (a summary, a placeholder) restates a stale form when
    it holds the fact's subject (its first probe string, for facts with a subject and a
    value) or nothing of the fact (for one-string facts), a stale form, and not the current
    form, and does not quote the session (`_quotes_session`): "cache TTL: 10 minutes" under a
    table of current values, where the user changed it to 30. Quoting the user's earlier
    sentence is history, not a claim, and is not counted; nor is a line that opens by
    marking what it lists closed ("- [replaced] …", "- [dropped] …"). Complements
    `probes.Score.stale_as_current`, which sees only presence.
    """
    seen = {message_text(m) for m in before.messages}
    original = "\n".join(seen).casefold()
    texts = [message_text(m).casefold() for m in after.messages]
    # Each added message's lines, with the text of everything after it: a later message
    # that shows the current form supersedes what the summary said.
    # The verbatim parts after a summary in its own message count as later too (Anthropic
    # Messages fold a summary into the user turn holding the next tool result).
    added = [
        (text.split("\n"), "\n".join((_after_summary(m).casefold(), *texts[k + 1 :])))
        for k, (m, text) in enumerate(zip(after.messages, texts, strict=True))
        if message_text(m) not in seen
    ]
    found = []
    for fact in facts:
        if not fact.stale:
            continue
        probes = [p.casefold() for p in fact.probe]
        subject = probes[0] if len(probes) > 1 else None
        stales = [s.casefold() for s in fact.stale]
        for lines, later in added:
            if all(shows(p, later) for p in probes):
                continue
            if any(_restates(line, probes, subject, stales, original) for line in lines):
                found.append(fact)
                break
    return found


def _after_summary(message: Message) -> str:
    """The text of a message's parts after its last summary part ("" without one)."""
    last = max((i for i, p in enumerate(message.parts) if isinstance(p, SummaryPart)), default=-1)
    return message_text(message.with_parts(message.parts[last + 1 :])) if last >= 0 else ""


# A word that negates what follows it closely: "no `insert_rows_now`", "dropped X".
_NEGATION = re.compile(
    r"\b(?:no|not|never|without|dropped|drop|removed|scrapped|scrap|instead\s+of|rather\s+than"
    r"|no\s+longer|replaced)[\s`'\"*(]+(?:(?:the|a|an|that|this|its|any)[\s`'\"*(]+)?$",
    re.IGNORECASE,
)


# What a file list says after a path that is gone: "apps/old/export.ts (deleted)".
_GONE_AFTER = re.compile(r"\s*\((?:deleted|removed)\b", re.IGNORECASE)


def _negated(line: str, stale: str) -> bool:
    """Whether every mention of `stale` in `line` follows a negation within a word or two
    ("no `X`", "dropped the X") or is a path marked gone after it ("X (deleted)"): the line
    says it is gone, not that it stands."""
    found = list(re.finditer(re.escape(stale), line.casefold()))
    return bool(found) and all(
        _NEGATION.search(line[max(0, m.start() - 40) : m.start()])
        or _GONE_AFTER.match(line, m.end())
        for m in found
    )


# A line that opens by saying what it lists is closed: "- [replaced] X", "- [dropped] X".
_CLOSED_MARK = re.compile(
    r"^\s*(?:[-*•]\s+)?\[(?:replaced|cancell?ed|dropped|removed|superseded|abandoned)\b"
    r"[^\]\n]*\]",
    re.IGNORECASE,
)


def _restates(
    line: str, probes: Sequence[str], subject: str | None, stales: Sequence[str], original: str
) -> bool:
    shown = [s for s in stales if shows(s, line)]
    if not shown or all(shows(p, line) for p in probes) or _CLOSED_MARK.match(line):
        return False
    if all(_negated(line, s) for s in shown):
        return False
    if subject is not None and (
        not shows(subject, line) or any(shows(p, line) for p in probes[1:])
    ):
        return False
    return not _quotes_session(line, original)


def budget_used(tokens_after: int, target_tokens: int) -> float:
    """tokens_after / target_tokens: 0.95 means the output used 95% of its room."""
    return tokens_after / max(target_tokens, 1)


# --- summarizer use --------------------------------------------------------------------------


@dataclass(frozen=True)
class SummarizerUse:
    """Summarizer calls and the tokens and time they took, summed over receipts (tokens as
    the provider reported them; the stand-in estimates four characters a token)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    ms: float = 0.0

    def __add__(self, other: SummarizerUse) -> SummarizerUse:
        return SummarizerUse(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.ms + other.ms,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "summarizer_ms": round(self.ms, 1),
        }


def summarizer_use(receipts: Iterable[Receipt]) -> SummarizerUse:
    """Σ over the receipts' steps of summarizer calls, input and output tokens, and time."""
    total = SummarizerUse()
    for receipt in receipts:
        for step in receipt.steps:
            total += SummarizerUse(
                step.summarizer_calls, step.input_tokens, step.output_tokens, step.summarizer_ms
            )
    return total


# --- replay: the cost an agent would pay -----------------------------------------------------


def call_points(messages: Sequence[Message]) -> list[int]:
    """Where an agent calls the model: the index of every assistant message that has at
    least one message before it. The call's input is everything before that index."""
    return [i for i, m in enumerate(messages) if m.role == "assistant" and i > 0]


@dataclass(frozen=True)
class ReplayCall:
    """One model call of a replay: the assistant message it produced (`index` in the
    original session), the input tokens without compaction (`baseline_tokens`) and with it
    (`input_tokens`), and whether a compaction changed the context right before it."""

    index: int
    baseline_tokens: int
    input_tokens: int
    compacted: bool


@dataclass(frozen=True)
class Replay:
    """A session replayed call by call with a compactor in front of every call.

    peak = max input_tokens; cumulative = Σ input_tokens over calls; the baseline figures
    are the same sums without compaction; saving = 1 − cumulative / baseline_cumulative.
    `compactions` counts the calls before which a compaction changed the context.
    """

    calls: tuple[ReplayCall, ...]
    threshold: int
    target: int | None
    summarizer: SummarizerUse = field(default_factory=SummarizerUse)
    compaction_ms: float = 0.0

    @property
    def peak(self) -> int:
        return max((c.input_tokens for c in self.calls), default=0)

    @property
    def cumulative(self) -> int:
        return sum(c.input_tokens for c in self.calls)

    @property
    def baseline_peak(self) -> int:
        return max((c.baseline_tokens for c in self.calls), default=0)

    @property
    def baseline_cumulative(self) -> int:
        return sum(c.baseline_tokens for c in self.calls)

    @property
    def saving(self) -> float:
        base = self.baseline_cumulative
        return 1 - self.cumulative / base if base else 0.0

    @property
    def compactions(self) -> int:
        return sum(c.compacted for c in self.calls)

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "target": self.target,
            "calls": len(self.calls),
            "compactions": self.compactions,
            "peak": self.peak,
            "cumulative": self.cumulative,
            "baseline_peak": self.baseline_peak,
            "baseline_cumulative": self.baseline_cumulative,
            "saving": self.saving,
            "summarizer": self.summarizer.to_dict(),
            "compaction_ms": round(self.compaction_ms, 1),
            "input_tokens": [c.input_tokens for c in self.calls],
            "baseline_tokens": [c.baseline_tokens for c in self.calls],
            "compacted_before": [c.index for c in self.calls if c.compacted],
        }


def replay(conversation: Conversation, compactor: Compactor) -> Replay:
    """Replay `conversation` as the agent lived it, with `compactor` (whose triggers decide
    when to compact) run before every model call.

    The context starts empty. Walking the session in order, at each call point (see
    `call_points`) the compactor is asked to compact the context (it does so only when a
    trigger fires); the call's input tokens are the context's tokens after that; then the
    assistant message and everything up to the next call point are appended. The compacted
    context is carried forward, as an agent would, never rebuilt from the full history.
    Baseline tokens at a call are the tokens of the whole uncompacted prefix.
    """
    counter = compactor.counter_for(conversation)
    messages = conversation.messages
    points = set(call_points(messages))
    context: list[Message] = []
    calls: list[ReplayCall] = []
    receipts: list[Receipt] = []
    elapsed = 0.0
    for i, message in enumerate(messages):
        if i in points:
            current = conversation.with_messages(context)
            result = compactor.compact(current)
            if result.receipt.status != "noop":
                receipts.append(result.receipt)
                elapsed += result.receipt.elapsed_ms
            changed = result.conversation is not current
            if changed:
                context = list(result.conversation.messages)
            calls.append(
                ReplayCall(
                    index=i,
                    baseline_tokens=counter.total(conversation.with_messages(messages[:i])),
                    input_tokens=counter.total(result.conversation),
                    compacted=changed,
                )
            )
        context.append(message)
    window = compactor.window(conversation)
    return Replay(
        calls=tuple(calls),
        threshold=triggers.token_limit(compactor.config, window) or 0,
        target=triggers.target_tokens(compactor.config, window),
        summarizer=summarizer_use(receipts),
        compaction_ms=elapsed,
    )


# --- successive compactions ------------------------------------------------------------------


def split_points(messages: Sequence[Message], counts: Sequence[int], parts: int) -> list[int]:
    """Where to cut a session into `parts` parts of about equal tokens: for j = 1 … parts−1,
    the call point (see `call_points`) whose prefix token sum is nearest to j/parts of the
    total, each later than the one before. Fewer cuts come back when there are too few call
    points. Cutting at call points leaves each part where an agent would compact."""
    total = sum(counts)
    prefix = [0]
    for count in counts:
        prefix.append(prefix[-1] + count)
    points = call_points(messages)
    cuts: list[int] = []
    for j in range(1, parts):
        goal = total * j / parts
        later = [p for p in points if not cuts or p > cuts[-1]]
        if not later:
            break
        cuts.append(min(later, key=lambda p: (abs(prefix[p] - goal), p)))
    return cuts


@dataclass(frozen=True)
class SuccessiveRound:
    """One round: the context's tokens before and after compacting, and the status."""

    messages: int
    tokens_before: int
    tokens_after: int
    status: str


@dataclass(frozen=True)
class Successive:
    """Facts kept after compacting round by round: `rounds` has one entry per part; a round
    whose context already fits the target is a no-op and is not counted in `compactions`."""

    k: int
    target: int
    rounds: tuple[SuccessiveRound, ...]
    survival: Survival

    @property
    def compactions(self) -> int:
        return sum(r.status in ("compacted", "target_unreachable") for r in self.rounds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "target": self.target,
            "compactions": self.compactions,
            "rounds": [
                {
                    "messages": r.messages,
                    "tokens_before": r.tokens_before,
                    "tokens_after": r.tokens_after,
                    "status": r.status,
                }
                for r in self.rounds
            ],
            "overall": rate_dict(self.survival.overall),
            "critical": rate_dict(self.survival.critical),
            "by_category": {k: rate_dict(v) for k, v in self.survival.score.by_category.items()},
            "lost": [f.id for f in self.survival.lost],
        }


def successive(
    conversation: Conversation,
    facts: Sequence[Fact],
    compactor: Compactor,
    *,
    k: int,
    target_tokens: int,
) -> Successive:
    """Survival after k successive compactions.

    The session is cut into k parts (`split_points`). Round j appends part j to the context
    left by round j − 1 and compacts it to `target_tokens` (the same target every round, so
    the final context is as large as a one-shot compaction's and only the repetition
    differs). Facts are scored on the context after the last round.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    counter = compactor.counter_for(conversation)
    messages = conversation.messages
    counts = [counter.count_message(m) for m in messages]
    bounds = [0, *split_points(messages, counts, k), len(messages)]
    context: list[Message] = []
    rounds = []
    current = conversation.with_messages(())
    for start, stop in itertools.pairwise(bounds):
        context.extend(messages[start:stop])
        result = compactor.compact(conversation.with_messages(context), max_tokens=target_tokens)
        current = result.conversation
        context = list(current.messages)
        rounds.append(
            SuccessiveRound(
                messages=stop - start,
                tokens_before=result.receipt.tokens_before,
                tokens_after=result.receipt.tokens_after,
                status=result.receipt.status,
            )
        )
    return Successive(
        k=len(rounds),
        target=target_tokens,
        rounds=tuple(rounds),
        survival=survival(facts, conversation_text(current)),
    )


# --- aggregation -----------------------------------------------------------------------------

# Two-sided 95% Student t quantiles by degrees of freedom; past 30 the normal 1.96 is close.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def mean_ci95(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and the half-width of its 95% confidence interval: t(n−1) · s / √n, with s the
    sample standard deviation. None for fewer than two values."""
    if not values:
        return math.nan, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    df = len(values) - 1
    t = _T95[df - 1] if df <= len(_T95) else 1.96
    return mean, t * statistics.stdev(values) / math.sqrt(len(values))


def by_key(rates: Iterable[Mapping[K, Rate]]) -> dict[K, Rate]:
    """Rates pooled key by key (keys in first-seen order)."""
    kept: dict[K, list[int]] = {}
    for mapping in rates:
        for key, rate in mapping.items():
            pair = kept.setdefault(key, [0, 0])
            pair[0] += rate.kept
            pair[1] += rate.total
    return {k: Rate(v[0], v[1]) for k, v in kept.items()}
