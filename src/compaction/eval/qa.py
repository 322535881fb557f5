"""Probes asked as questions: what a model can still answer from a compacted context.

`ask_probes` turns each fact into a question (templates by category, below), sends the
compacted conversation rendered as a transcript plus the question to a provider, and scores
each answer against the fact's probe strings. `judge` asks a judge model to grade the
compacted context on Factory's six dimensions. Both repeat the whole round `replicates`
times and report the mean with a 95% confidence interval.

Scoring an answer: the probe strings the question itself does not already contain must all
appear in the answer (case-insensitively). An answer that gives a superseded (`stale`) form
without the current one is wrong and counted as stale. Rates count required facts only,
like `probes.score`.

Confidence intervals (`confidence_interval`): over the n replicate values x₁…xₙ,

    mean ± t(0.975, n−1) · s / √n,   s² = Σ (xᵢ − mean)² / (n − 1)

with Student's t from the table `T_975` for n−1 ≤ 30, and beyond it the Cornish–Fisher
expansion t ≈ z + (z³ + z)/(4ν) + (5z⁵ + 16z³ + 3z)/(96ν²) around z = 1.959964 (error under
0.001 from ν = 30 on). One replicate gives a zero-width interval; bounds are clipped to the
scale (0–1 for accuracy, 0–5 for the judge).

This module must never compact anything, never score an answer by anything but the facts'
probe strings, and never open a connection itself: every call goes through the provider it
is given, so all of it runs against `FunctionProvider` / `ScriptedProvider` offline.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.compactor import first_user_turn
from compaction.eval.probes import CATEGORIES, Fact, FactCategory
from compaction.eval.sessions import EvalSession
from compaction.exceptions import BadResponseError, InputError, ProviderError, UnsupportedError
from compaction.messages import Conversation, Message
from compaction.providers.base import CompletionRequest, OutputSchema, Provider, Usage
from compaction.summarize.llm import render_transcript

__all__ = [
    "ANSWER_RULES",
    "JUDGE_DIMENSIONS",
    "JUDGE_SCHEMA",
    "QUESTION_TEMPLATES",
    "TOPIC_TEMPLATES",
    "T_975",
    "AnswerScore",
    "Interval",
    "JudgeResult",
    "Judgement",
    "ProbeAnswer",
    "QAResult",
    "ask_probes",
    "confidence_interval",
    "expected_strings",
    "judge",
    "parse_judgement",
    "question_for",
    "render_context",
    "score_answer",
    "t_critical",
]

# --- questions ------------------------------------------------------------------------------

#: The question for each category. They never contain a fact's own words, so a model cannot
#: read the answer off the question; facts of one category share a question (and a call).
QUESTION_TEMPLATES: Mapping[FactCategory, str] = {
    "constraint": "What constraints, rules or preferences did the user state for this work? "
    "List every one.",
    "file_modified": "Which files did the agent modify? List every path.",
    "file_created": "Which files did the agent create? List every path.",
    "file_deleted": "Which files did the agent delete? List every path.",
    "file_read": "Which files did the agent read or open? List every path.",
    "command": "Which shell commands did the agent run? List every command as it was run.",
    "error_open": "Which errors or failing tests are still open, not yet fixed? "
    "Quote each error message or test id.",
    "error_resolved": "Which errors or failing tests did the agent fix along the way? "
    "Quote each error message or test id.",
    "decision": "Which decisions did the agent make about the approach? For each, give the "
    "current choice.",
    "todo": "What is still left to do? List every open to-do.",
    "changed_value": "Which settings or values were changed during the session, and what is "
    "the current value of each?",
    "identifier": "Which identifiers came up (ticket keys, request, trace, account or other "
    "ids)? Quote each one.",
    "test_status": "What did the latest test run report? Quote its summary line.",
    "last_message": "What does the last message of the session say? Quote it.",
}
#: Sharper questions for facts that name their own topic: a changed value whose probe has
#: more than one string is read as (setting, value …) — "page size", "25 items per page" —
#: and asked about its setting; being in the question, the setting is not required in the
#: answer. Other categories have no such convention, so they get the category question.
TOPIC_TEMPLATES: Mapping[FactCategory, str] = {
    "changed_value": "What is the current value of {topic}?",
}
#: Appended to every question.
ANSWER_RULES = (
    "Answer from the transcript alone. Quote file paths, commands, identifiers, test names and "
    'values exactly as they appear there. If the transcript does not say, answer "unknown".'
)
QA_SYSTEM_PROMPT = (
    "You are shown the working context of a software agent: a transcript of its session, "
    "parts of which may have been replaced by summaries. Answer questions about the session "
    "using only that transcript. Be complete and literal; do not guess."
)


def question_for(fact: Fact) -> str:
    """The question that probes `fact` (without the answer rules)."""
    topical = TOPIC_TEMPLATES.get(fact.category)
    if topical is not None and len(fact.probe) > 1:
        return topical.format(topic=fact.probe[0])
    return QUESTION_TEMPLATES[fact.category]


def expected_strings(fact: Fact, question: str) -> tuple[str, ...]:
    """The probe strings an answer must contain: those the question does not give away."""
    asked = question.casefold()
    hidden = tuple(p for p in fact.probe if p.casefold() not in asked)
    return hidden or fact.probe


@dataclass(frozen=True)
class AnswerScore:
    """One answer judged against one fact."""

    correct: bool
    stale: bool
    missing: tuple[str, ...]


def score_answer(fact: Fact, question: str, answer: str) -> AnswerScore:
    """Correct when every expected probe string is in the answer; stale when a superseded form
    is there and the current one is not."""
    folded = answer.casefold()
    missing = tuple(p for p in expected_strings(fact, question) if p.casefold() not in folded)
    correct = not missing
    stale = not correct and any(s.casefold() in folded for s in fact.stale)
    return AnswerScore(correct=correct, stale=stale, missing=missing)


def render_context(conversation: Conversation, *, output_chars: int | None = None) -> str:
    """The compacted conversation as the transcript the model reads. Tool outputs are kept
    whole unless `output_chars` bounds them: clipping here would lose facts the compaction
    kept and blame it on the strategy."""
    limit = sys.maxsize if output_chars is None else output_chars
    return render_transcript(conversation.messages, output_chars=limit)


def _qa_request(
    context: str,
    question: str,
    *,
    model: str | None,
    temperature: float | None,
    max_output_tokens: int | None,
) -> CompletionRequest:
    # The transcript comes first and is the same for every question, so providers that cache
    # prompt prefixes pay for it once per round.
    prompt = f"<transcript>\n{context}\n</transcript>\n\nQuestion: {question}\n\n{ANSWER_RULES}"
    return CompletionRequest(
        messages=(
            Message.text_message("system", QA_SYSTEM_PROMPT),
            Message.text_message("user", prompt),
        ),
        model=model,
        temperature=temperature,
        max_output_tokens=max_output_tokens,
    )


# --- confidence intervals -------------------------------------------------------------------

#: Two-sided 95% critical values of Student's t, by degrees of freedom 1…30.
T_975: tuple[float, ...] = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z_975 = 1.959964


def t_critical(df: int) -> float:
    """t(0.975, df): the table up to 30 degrees of freedom, Cornish–Fisher beyond."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if df <= len(T_975):
        return T_975[df - 1]
    z = _Z_975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclass(frozen=True)
class Interval:
    """A mean over `n` replicates with its 95% confidence interval [`low`, `high`]."""

    mean: float
    low: float
    high: float
    n: int
    stdev: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def confidence_interval(
    values: Sequence[float], *, lower: float | None = None, upper: float | None = None
) -> Interval:
    """Mean and t-interval of `values` (formula in the module docstring), clipped to
    [`lower`, `upper`] when given. Raises `ValueError` for no values."""
    if not values:
        raise ValueError("a confidence interval needs at least one value")
    n = len(values)
    mean = statistics.fmean(values)
    if n == 1:
        return Interval(mean=mean, low=mean, high=mean, n=1, stdev=0.0)
    stdev = statistics.stdev(values)
    half = t_critical(n - 1) * stdev / math.sqrt(n)
    low, high = mean - half, mean + half
    if lower is not None:
        low = max(lower, low)
    if upper is not None:
        high = min(upper, high)
    return Interval(mean=mean, low=low, high=high, n=n, stdev=stdev)


# --- asking probes --------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeAnswer:
    """How one fact fared in one replicate. `error` is set (and the answer empty) when the
    provider call failed; such answers count in no rate."""

    fact: Fact
    replicate: int
    question: str
    answer: str
    correct: bool
    stale: bool
    missing: tuple[str, ...]
    error: str | None = None


@dataclass(frozen=True)
class QAResult:
    """Answers to every probe over all replicates, and the accuracy they add up to.

    `per_replicate` is each replicate's share of required facts answered correctly (None when
    none was answered); `accuracy` and `by_category` are intervals over those shares (None /
    absent when nothing was answered).
    """

    session: str
    model: str | None
    replicates: int
    answers: tuple[ProbeAnswer, ...]
    per_replicate: tuple[float | None, ...]
    accuracy: Interval | None
    by_category: Mapping[FactCategory, Interval]
    calls: int
    usage: Usage
    errors: tuple[str, ...]

    @property
    def stale_answers(self) -> list[ProbeAnswer]:
        """Answers that gave a superseded value as the current one."""
        return [a for a in self.answers if a.stale]

    def replicate_shares(self, category: FactCategory | None = None) -> tuple[float | None, ...]:
        """Each replicate's share of required facts answered correctly, of one `category` or
        of all (None for a replicate that answered none of them)."""
        return tuple(
            _share(
                [
                    a
                    for a in self.answers
                    if a.replicate == r and (category is None or a.fact.category == category)
                ]
            )
            for r in range(self.replicates)
        )


def ask_probes(
    session: EvalSession,
    compacted: Conversation,
    facts: Sequence[Fact],
    provider: Provider,
    *,
    model: str | None,
    replicates: int = 3,
    temperature: float | None = None,
    max_output_tokens: int | None = 600,
    output_chars: int | None = None,
) -> QAResult:
    """Ask every fact's question against `compacted` and score the answers.

    One call per distinct question per replicate (facts sharing a question share its
    answer). A `ProviderError` on a call is recorded in `errors` and its facts left out of the
    rates for that replicate; anything else propagates. Raises `InputError` for
    `replicates` < 1.
    """
    if replicates < 1:
        raise InputError(f"replicates must be at least 1, got {replicates}")
    context = render_context(compacted, output_chars=output_chars)
    questions = {fact.id: question_for(fact) for fact in facts}
    answers: list[ProbeAnswer] = []
    errors: list[str] = []
    usage = Usage()
    calls = 0
    for replicate in range(replicates):
        replies: dict[str, tuple[str, str | None]] = {}
        for fact in facts:
            question = questions[fact.id]
            if question not in replies:
                request = _qa_request(
                    context,
                    question,
                    model=model,
                    temperature=temperature,
                    max_output_tokens=max_output_tokens,
                )
                calls += 1
                try:
                    completion = provider.complete(request)
                except ProviderError as e:
                    message = f"replicate {replicate + 1}: {question!r}: {e}"
                    errors.append(message)
                    replies[question] = ("", str(e))
                else:
                    usage = usage + completion.usage
                    replies[question] = (completion.text, None)
            text, error = replies[question]
            if error is not None:
                answers.append(
                    ProbeAnswer(fact, replicate, question, "", False, False, (), error=error)
                )
                continue
            marks = score_answer(fact, question, text)
            answers.append(
                ProbeAnswer(
                    fact, replicate, question, text, marks.correct, marks.stale, marks.missing
                )
            )
    per_replicate = tuple(
        _share([a for a in answers if a.replicate == r]) for r in range(replicates)
    )
    shares = [s for s in per_replicate if s is not None]
    by_category: dict[FactCategory, Interval] = {}
    for category in CATEGORIES:
        values = [
            s
            for r in range(replicates)
            if (
                s := _share(
                    [a for a in answers if a.replicate == r and a.fact.category == category]
                )
            )
            is not None
        ]
        if values:
            by_category[category] = confidence_interval(values, lower=0.0, upper=1.0)
    return QAResult(
        session=session.name,
        model=model,
        replicates=replicates,
        answers=tuple(answers),
        per_replicate=per_replicate,
        accuracy=confidence_interval(shares, lower=0.0, upper=1.0) if shares else None,
        by_category=by_category,
        calls=calls,
        usage=usage,
        errors=tuple(errors),
    )


def _share(answers: Sequence[ProbeAnswer]) -> float | None:
    counted = [a for a in answers if a.fact.required and a.error is None]
    if not counted:
        return None
    return sum(a.correct for a in counted) / len(counted)


# --- the judge ------------------------------------------------------------------------------

#: Factory's six dimensions, each scored 0–5, and what the judge is told each one means.
JUDGE_DIMENSIONS: Mapping[str, str] = {
    "accuracy": "technical details are right: file paths, function names, commands, error "
    "messages and values match what happened",
    "context_awareness": "the current state of the task is clear: what is done, what is in "
    "progress, what the latest results were",
    "artifact_trail": "it is known which files were read, created, modified or deleted",
    "completeness": "everything the agent needs from earlier is there; nothing important "
    "was dropped",
    "continuity": "the agent could carry on the work without re-reading files or re-running "
    "commands to recover lost information",
    "instruction_following": "the user's instructions and constraints are preserved and "
    "would still be respected",
}
_SCORE_SCALE = (0.0, 5.0)

JUDGE_SCHEMA = OutputSchema(
    name="compaction_judgement",
    description="Scores from 0 to 5 on six dimensions of a compacted agent context.",
    schema={
        "type": "object",
        "properties": {
            **{
                name: {"type": "integer", "minimum": 0, "maximum": 5, "description": meaning}
                for name, meaning in JUDGE_DIMENSIONS.items()
            },
            "rationale": {"type": "string"},
        },
        "required": [*JUDGE_DIMENSIONS, "rationale"],
        "additionalProperties": False,
    },
)
JUDGE_SYSTEM_PROMPT = (
    "You evaluate context compaction for software agents. A long agent session was compacted "
    "to fit the model's window; you judge whether the compacted context still holds what the "
    "agent needs to continue. Be strict and consistent."
)


@dataclass(frozen=True)
class Judgement:
    """One judge answer, read defensively: the scores that could be read, and what could not."""

    scores: Mapping[str, float]
    rationale: str | None
    problems: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return all(d in self.scores for d in JUDGE_DIMENSIONS)

    @property
    def mean(self) -> float | None:
        """The mean of the six scores, or None when some are missing."""
        if not self.complete:
            return None
        return statistics.fmean(self.scores[d] for d in JUDGE_DIMENSIONS)


@dataclass(frozen=True)
class JudgeResult:
    """The judge's scores over all replicates.

    `dimensions` holds an interval per dimension over the replicates that scored it;
    `overall` is the interval of the per-replicate means over complete judgements (None
    when there was none).
    """

    session: str
    model: str | None
    judgements: tuple[Judgement, ...]
    dimensions: Mapping[str, Interval]
    overall: Interval | None
    calls: int
    usage: Usage
    errors: tuple[str, ...]


def parse_judgement(data: Any, text: str = "") -> Judgement:
    """Scores out of a judge's answer: structured `data` when the provider parsed it, else the
    first JSON object in `text` (fenced or bare). Keys are matched loosely ("Context
    awareness", "context-awareness"); a score may be a number, "4", "4/5" or {"score": 4}.
    Anything else, and anything outside 0–5, is reported in `problems`, never raised."""
    problems: list[str] = []
    found = data if isinstance(data, Mapping) else _json_object_in(text)
    if found is None:
        return Judgement({}, None, ("no JSON object in the answer",))
    obj: dict[str, Any] = {_key(k): v for k, v in found.items() if isinstance(k, str)}
    nested = obj.get("scores")
    if isinstance(nested, Mapping):
        obj = {**{_key(k): v for k, v in nested.items() if isinstance(k, str)}, **obj}
    scores: dict[str, float] = {}
    for dimension in JUDGE_DIMENSIONS:
        if dimension not in obj:
            problems.append(f"{dimension}: missing")
            continue
        value = _score_value(obj[dimension])
        if value is None:
            problems.append(f"{dimension}: not a score: {obj[dimension]!r}"[:200])
        elif not _SCORE_SCALE[0] <= value <= _SCORE_SCALE[1]:
            problems.append(f"{dimension}: {value:g} is outside 0–5")
        else:
            scores[dimension] = value
    rationale = obj.get("rationale")
    return Judgement(
        scores=scores,
        rationale=rationale if isinstance(rationale, str) else None,
        problems=tuple(problems),
    )


def _key(key: str) -> str:
    return re.sub(r"[\s\-]+", "_", key.strip().lower())


_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*5(?:\.0+)?)?\s*$")


def _score_value(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        match = _NUMBER.match(value)
        return float(match.group(1)) if match else None
    if isinstance(value, Mapping) and "score" in value:
        return _score_value(value["score"])
    return None


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _json_object_in(text: str) -> Mapping[str, Any] | None:
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _judge_prompt(
    session: EvalSession, facts: Sequence[Fact], context: str, *, structured: bool
) -> str:
    messages = session.conversation.messages
    first = first_user_turn(messages)
    task = messages[first].text if first is not None else ""
    if len(task) > 4000:
        task = task[:4000] + " […]"
    reference = "\n".join(f"- [{f.category}] {f.text}" for f in facts) or "- (none given)"
    rubric = "\n".join(f"- {name}: {meaning}" for name, meaning in JUDGE_DIMENSIONS.items())
    shape = (
        "Answer with the scores and a short rationale."
        if structured
        else "Answer with only a JSON object: "
        + json.dumps({**dict.fromkeys(JUDGE_DIMENSIONS, 0), "rationale": "…"}, ensure_ascii=False)
    )
    return (
        f"<task>\n{task}\n</task>\n\n"
        f"<reference_facts>\nFacts from the full session that the agent must still know:\n"
        f"{reference}\n</reference_facts>\n\n"
        f"<compacted_context>\n{context}\n</compacted_context>\n\n"
        "Score the compacted context from 0 (lost) to 5 (fully preserved) on each dimension:\n"
        f"{rubric}\n\n{shape}"
    )


def judge(
    session: EvalSession,
    compacted: Conversation,
    provider: Provider,
    *,
    model: str | None,
    facts: Sequence[Fact] | None = None,
    replicates: int = 3,
    temperature: float | None = None,
    max_output_tokens: int | None = 800,
    output_chars: int | None = None,
) -> JudgeResult:
    """Ask a judge model to score `compacted` on the six dimensions, `replicates` times.

    The judge sees the session's task, the reference facts (`facts`, default the session's)
    and the compacted context. It is asked for structured output (`JUDGE_SCHEMA`); a provider
    that cannot do that (`UnsupportedError`) is asked for JSON in free text from then on, and
    an unusable structured answer (`BadResponseError`) is retried once in free text. Other
    `ProviderError`s are recorded in `errors`. Raises `InputError` for `replicates` < 1.
    """
    if replicates < 1:
        raise InputError(f"replicates must be at least 1, got {replicates}")
    reference = session.facts if facts is None else facts
    context = render_context(compacted, output_chars=output_chars)
    structured = True
    judgements: list[Judgement] = []
    errors: list[str] = []
    usage = Usage()
    calls = 0

    def ask(as_structured: bool) -> tuple[Any, str]:
        nonlocal calls, usage
        request = CompletionRequest(
            messages=(
                Message.text_message("system", JUDGE_SYSTEM_PROMPT),
                Message.text_message(
                    "user", _judge_prompt(session, reference, context, structured=as_structured)
                ),
            ),
            model=model,
            temperature=temperature,
            max_output_tokens=max_output_tokens,
            output_schema=JUDGE_SCHEMA if as_structured else None,
        )
        calls += 1
        completion = provider.complete(request)
        usage = usage + completion.usage
        return completion.data, completion.text

    for replicate in range(replicates):
        where = f"replicate {replicate + 1}"
        notes: list[str] = []
        try:
            if structured:
                try:
                    data, text = ask(True)
                except UnsupportedError:
                    structured = False
                    data, text = ask(False)
                except BadResponseError as e:
                    notes.append(f"structured answer unusable ({e}); asked again in free text")
                    data, text = ask(False)
            else:
                data, text = ask(False)
        except ProviderError as e:
            errors.append(f"{where}: {e}")
            continue
        parsed = parse_judgement(data, text)
        if notes:
            parsed = Judgement(parsed.scores, parsed.rationale, (*notes, *parsed.problems))
        judgements.append(parsed)
    dimensions: dict[str, Interval] = {}
    for dimension in JUDGE_DIMENSIONS:
        values = [j.scores[dimension] for j in judgements if dimension in j.scores]
        if values:
            dimensions[dimension] = confidence_interval(
                values, lower=_SCORE_SCALE[0], upper=_SCORE_SCALE[1]
            )
    means = [m for j in judgements if (m := j.mean) is not None]
    overall = (
        confidence_interval(means, lower=_SCORE_SCALE[0], upper=_SCORE_SCALE[1]) if means else None
    )
    return JudgeResult(
        session=session.name,
        model=model,
        judgements=tuple(judgements),
        dimensions=dimensions,
        overall=overall,
        calls=calls,
        usage=usage,
        errors=tuple(errors),
    )
