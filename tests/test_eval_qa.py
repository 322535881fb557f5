"""Probes asked as questions (`compaction.eval.qa`): question templates, answer scoring, the
replicate arithmetic and its confidence intervals, and the judge's defensive parsing — all
against the shipped test providers, never a network."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from compaction.eval import CATEGORIES, Fact
from compaction.eval.qa import (
    ANSWER_RULES,
    JUDGE_DIMENSIONS,
    JUDGE_SCHEMA,
    QUESTION_TEMPLATES,
    T_975,
    ask_probes,
    confidence_interval,
    expected_strings,
    judge,
    parse_judgement,
    question_for,
    render_context,
    score_answer,
    t_critical,
)
from compaction.eval.sessions import EvalSession
from compaction.exceptions import InputError, RateLimitError
from compaction.messages import (
    Conversation,
    Message,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.providers import CompletionRequest, FunctionProvider, ScriptedProvider, Step


def fact(
    fact_id: str,
    category: Any,
    *probe: str,
    stale: tuple[str, ...] = (),
    required: bool = True,
) -> Fact:
    return Fact(
        id=fact_id,
        category=category,
        text=" ".join(probe),
        probe=probe,
        depth="early",
        cued=False,
        critical=required,
        stale=stale,
        required=required,
    )


FACTS = (
    fact("f1", "file_modified", "src/app/models.py"),
    fact("f2", "file_modified", "src/app/views.py"),
    fact("c1", "command", "pytest -q tests/test_models.py"),
    fact("v1", "changed_value", "page size", "25 items per page", stale=("100 items per page",)),
    fact("e1", "error_open", "tests/test_models.py::test_save"),
    fact("r1", "error_resolved", "KeyError: 'retry_after'", required=False),
)

COMPACTED = Conversation(
    (
        Message.text_message("system", "You are a coding agent."),
        Message("user", (SummaryPart("[compacted: 12 messages → 300 chars] files: models.py"),)),
        Message.text_message("user", "Go on."),
    ),
    dialect="openai",
)
SESSION = EvalSession("s1", COMPACTED, FACTS, "test")


def question_of(request: CompletionRequest) -> str:
    prompt = request.messages[-1].text
    return prompt.split("Question: ", 1)[1].split("\n\n", 1)[0]


def oracle(request: CompletionRequest) -> str:
    """Answers every question with exactly the ground truth of the facts it asks about."""
    asked = question_of(request)
    truth = [p for f in FACTS if question_for(f) == asked for p in f.probe]
    return "; ".join(truth).upper()  # case must not matter


# --- questions and scoring ----------------------------------------------------------------------


def test_every_category_has_a_question_that_gives_nothing_away() -> None:
    assert set(QUESTION_TEMPLATES) == set(CATEGORIES)
    for f in FACTS:
        question = question_for(f)
        assert question, f
        for probe in expected_strings(f, question):
            assert probe.casefold() not in question.casefold()


def test_a_changed_value_is_asked_about_its_setting_which_is_then_not_required() -> None:
    v1 = FACTS[3]
    assert question_for(v1) == "What is the current value of page size?"
    assert expected_strings(v1, question_for(v1)) == ("25 items per page",)
    assert question_for(FACTS[0]) == QUESTION_TEMPLATES["file_modified"]
    assert expected_strings(FACTS[0], question_for(FACTS[0])) == ("src/app/models.py",)


def test_score_answer_is_case_insensitive_and_needs_every_expected_string() -> None:
    f = fact("x", "command", "make lint", "make test")
    q = question_for(f)
    assert score_answer(f, q, "He ran MAKE LINT then make test.").correct
    partial = score_answer(f, q, "He ran make lint.")
    assert (partial.correct, partial.missing) == (False, ("make test",))


def test_a_stale_value_without_the_current_one_is_wrong_and_marked_stale() -> None:
    v1 = FACTS[3]
    q = question_for(v1)
    stale = score_answer(v1, q, "It is 100 items per page.")
    assert (stale.correct, stale.stale) == (False, True)
    both = score_answer(v1, q, "It was 100 items per page; now 25 items per page.")
    assert (both.correct, both.stale) == (True, False)
    unknown = score_answer(v1, q, "unknown")
    assert (unknown.correct, unknown.stale) == (False, False)


def test_render_context_keeps_long_tool_output_whole_and_shows_summaries() -> None:
    long_output = "line\n" * 1000 + "the buried value is 8123\n" + "line\n" * 1000
    conv = Conversation(
        (
            Message.text_message("user", "Find the value."),
            Message("assistant", (ToolCallPart("c1", "bash", '{"command": "cat big.log"}'),)),
            Message("tool", (ToolResultPart("c1", (TextPart(long_output),)),)),
            Message("user", (SummaryPart("[compacted: 3 messages → 10 chars] earlier"),)),
        )
    )
    text = render_context(conv)
    assert "the buried value is 8123" in text
    assert "cat big.log" in text
    assert "[earlier summary] [compacted: 3 messages" in text
    assert "the buried value is 8123" not in render_context(conv, output_chars=200)


# --- asking -----------------------------------------------------------------------------------


def test_a_provider_that_answers_with_the_ground_truth_scores_100_percent() -> None:
    provider = FunctionProvider(oracle)
    result = ask_probes(SESSION, COMPACTED, FACTS, provider, model="judge-1", replicates=3)
    distinct = len({question_for(f) for f in FACTS})
    assert result.calls == len(provider.requests) == distinct * 3
    assert result.per_replicate == (1.0, 1.0, 1.0)
    assert result.accuracy is not None
    assert (result.accuracy.mean, result.accuracy.low, result.accuracy.high) == (1.0, 1.0, 1.0)
    assert all(a.correct for a in result.answers)
    assert len(result.answers) == len(FACTS) * 3
    assert set(result.by_category) == {"file_modified", "command", "changed_value", "error_open"}
    assert result.usage.requests == distinct * 3
    assert (result.session, result.model, result.errors) == ("s1", "judge-1", ())


def test_every_request_carries_the_transcript_the_question_and_the_model() -> None:
    provider = FunctionProvider(oracle)
    ask_probes(SESSION, COMPACTED, FACTS[:1], provider, model="m", replicates=1)
    [request] = provider.requests
    assert request.model == "m"
    assert [m.role for m in request.messages] == ["system", "user"]
    prompt = request.messages[1].text
    assert prompt.startswith("<transcript>\n")
    assert "files: models.py" in prompt
    assert prompt.endswith(f"Question: {QUESTION_TEMPLATES['file_modified']}\n\n{ANSWER_RULES}")
    assert request.output_schema is None


def test_a_provider_that_answers_nonsense_scores_0_percent() -> None:
    provider = FunctionProvider(lambda _: "I like turtles.")
    result = ask_probes(SESSION, COMPACTED, FACTS, provider, model=None)
    assert result.per_replicate == (0.0, 0.0, 0.0)
    assert result.accuracy is not None
    assert (result.accuracy.mean, result.accuracy.high) == (0.0, 0.0)
    assert not any(a.correct for a in result.answers)
    assert result.stale_answers == []


def test_stale_answers_are_wrong_and_listed() -> None:
    def answer(request: CompletionRequest) -> str:
        if "page size" in question_of(request):
            return "100 items per page"
        return oracle(request)

    result = ask_probes(SESSION, COMPACTED, FACTS, FunctionProvider(answer), model=None)
    required = [f for f in FACTS if f.required]
    assert result.per_replicate == ((len(required) - 1) / len(required),) * 3
    assert [(a.fact.id, a.replicate) for a in result.stale_answers] == [
        ("v1", 0),
        ("v1", 1),
        ("v1", 2),
    ]
    assert result.by_category["changed_value"].mean == 0.0


def test_optional_facts_are_answered_but_kept_out_of_the_rates() -> None:
    only_optional = (FACTS[5],)
    result = ask_probes(
        SESSION, COMPACTED, only_optional, FunctionProvider(oracle), model=None, replicates=2
    )
    assert [a.correct for a in result.answers] == [True, True]
    assert result.per_replicate == (None, None)
    assert result.accuracy is None
    assert dict(result.by_category) == {}


def test_replicates_that_disagree_give_the_t_interval() -> None:
    # Replicate 1 answers everything, 2 answers the file questions only, 3 answers nothing.
    def answer(request: CompletionRequest) -> str:
        round_ = sum(1 for r in provider.requests if question_of(r) == question_of(request))
        if round_ == 1 or (round_ == 2 and "files" in question_of(request)):
            return oracle(request)
        return "unknown"

    provider = FunctionProvider(answer)
    facts = (FACTS[0], FACTS[1], FACTS[2], FACTS[4])
    result = ask_probes(SESSION, COMPACTED, facts, provider, model=None, replicates=3)
    assert result.per_replicate == (1.0, 0.5, 0.0)
    assert result.accuracy is not None
    # mean 0.5, s = 0.5, half-width t(2)·s/√3 = 4.303 · 0.5 / 1.7320508 = 1.2422; clipped.
    assert result.accuracy.mean == pytest.approx(0.5)
    assert result.accuracy.stdev == pytest.approx(0.5)
    assert (result.accuracy.low, result.accuracy.high) == (0.0, 1.0)
    assert result.by_category["file_modified"].mean == pytest.approx(2 / 3)


def test_a_failed_call_is_recorded_and_left_out_of_the_rates() -> None:
    def answer(request: CompletionRequest) -> Any:
        if "shell commands" in question_of(request):
            return RateLimitError("slow down", provider="test")
        return oracle(request)

    facts = (FACTS[0], FACTS[2])
    result = ask_probes(SESSION, COMPACTED, facts, FunctionProvider(answer), model=None)
    assert result.per_replicate == (1.0, 1.0, 1.0)
    assert len(result.errors) == 3
    assert "slow down" in result.errors[0] and "replicate 1" in result.errors[0]
    failed = [a for a in result.answers if a.error is not None]
    assert [a.fact.id for a in failed] == ["c1", "c1", "c1"]
    assert "command" not in result.by_category


def test_replicates_below_one_are_refused() -> None:
    with pytest.raises(InputError, match="replicates must be at least 1"):
        ask_probes(SESSION, COMPACTED, FACTS, FunctionProvider(oracle), model=None, replicates=0)


# --- confidence intervals -------------------------------------------------------------------------


def test_confidence_interval_on_known_numbers() -> None:
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303, half-width 4.303 / √3 = 2.484338.
    ci = confidence_interval([1.0, 2.0, 3.0])
    assert (ci.mean, ci.stdev, ci.n) == (2.0, 1.0, 3)
    assert ci.low == pytest.approx(2 - 2.484338, abs=1e-6)
    assert ci.high == pytest.approx(2 + 2.484338, abs=1e-6)
    assert ci.half_width == pytest.approx(2.484338, abs=1e-6)
    # 2, 4, 4, 4, 5, 5, 7, 9: mean 5, s = √(32/7) = 2.13809, t(7) = 2.365 → ±1.78777.
    ci = confidence_interval([2, 4, 4, 4, 5, 5, 7, 9])
    assert ci.stdev == pytest.approx(math.sqrt(32 / 7))
    assert ci.low == pytest.approx(5 - 1.787772, abs=1e-6)
    assert ci.high == pytest.approx(5 + 1.787772, abs=1e-6)


def test_confidence_interval_clips_to_the_scale_and_handles_one_value() -> None:
    ci = confidence_interval([0.9, 1.0, 1.0], lower=0.0, upper=1.0)
    assert ci.high == 1.0 and ci.low < 0.9
    single = confidence_interval([0.7])
    assert (single.mean, single.low, single.high, single.stdev) == (0.7, 0.7, 0.7, 0.0)
    with pytest.raises(ValueError, match="at least one value"):
        confidence_interval([])


def test_t_critical_values_from_the_table_and_beyond() -> None:
    assert len(T_975) == 30
    assert (t_critical(1), t_critical(2), t_critical(10), t_critical(30)) == (
        12.706,
        4.303,
        2.228,
        2.042,
    )
    # Published values: t(40) = 2.0211, t(60) = 2.0003, t(120) = 1.9799, t(1000) = 1.9623.
    for df, expected in ((40, 2.0211), (60, 2.0003), (120, 1.9799), (1000, 1.9623)):
        assert t_critical(df) == pytest.approx(expected, abs=1e-3)
    assert t_critical(31) < t_critical(30)
    with pytest.raises(ValueError, match="at least 1"):
        t_critical(0)


# --- the judge ----------------------------------------------------------------------------------

FULL: dict[str, Any] = {
    "accuracy": 4,
    "context_awareness": 3,
    "artifact_trail": 2,
    "completeness": 3,
    "continuity": 4,
    "instruction_following": 5,
    "rationale": "Files kept, commands lost.",
}


def test_parse_judgement_reads_structured_data() -> None:
    j = parse_judgement(FULL)
    assert dict(j.scores) == {k: float(v) for k, v in FULL.items() if k != "rationale"}
    assert (j.rationale, j.problems, j.complete) == ("Files kept, commands lost.", (), True)
    assert j.mean == pytest.approx(21 / 6)


@pytest.mark.parametrize(
    ("text", "scores", "problem"),
    [
        ('```json\n{"accuracy": 4}\n```', {"accuracy": 4.0}, "context_awareness: missing"),
        ('Sure! {"Accuracy": "4/5", "Context Awareness": "3"} Hope it helps.',
         {"accuracy": 4.0, "context_awareness": 3.0}, "artifact_trail: missing"),
        ('{"scores": {"artifact-trail": {"score": 2, "why": "x"}}}',
         {"artifact_trail": 2.0}, "accuracy: missing"),
        ('{"accuracy": 7, "continuity": -1}', {}, "accuracy: 7 is outside 0–5"),
        ('{"accuracy": true, "completeness": "great"}', {}, "accuracy: not a score: True"),
        ("I would give it a four.", {}, "no JSON object in the answer"),
        ("[1, 2, 3]", {}, "no JSON object in the answer"),
        ("", {}, "no JSON object in the answer"),
    ],
)  # fmt: skip
def test_parse_judgement_survives_malformed_answers(
    text: str, scores: dict[str, float], problem: str
) -> None:
    j = parse_judgement(None, text)
    assert dict(j.scores) == scores
    assert problem in j.problems
    assert j.complete is False and j.mean is None


def test_judge_asks_for_structured_output_and_aggregates_replicates() -> None:
    answers = iter([FULL, {**FULL, "accuracy": 2}, {**FULL, "accuracy": 3}])
    provider = ScriptedProvider([Step(next(answers), structured=True) for _ in range(3)])
    with provider:
        result = judge(SESSION, COMPACTED, provider, model="judge", replicates=3)
    request = provider.requests[0]
    assert request.output_schema is JUDGE_SCHEMA
    assert request.model == "judge"
    prompt = request.messages[-1].text
    assert "[file_modified] src/app/models.py" in prompt  # the reference facts
    assert "files: models.py" in prompt  # the compacted context
    assert all(name in prompt for name in JUDGE_DIMENSIONS)
    assert result.calls == 3 and result.errors == ()
    accuracy = result.dimensions["accuracy"]
    assert (accuracy.mean, accuracy.n) == (3.0, 3)
    assert accuracy.low == pytest.approx(3 - 4.303 / math.sqrt(3))
    assert result.dimensions["instruction_following"].mean == 5.0
    assert result.overall is not None
    assert result.overall.mean == pytest.approx((21 + 19 + 20) / 18)


def test_judge_falls_back_to_free_text_when_structured_output_is_unsupported() -> None:
    provider = FunctionProvider(
        lambda r: "Here you go:\n```json\n" + json.dumps(FULL) + "\n```",
        supports_structured=False,
    )
    result = judge(SESSION, COMPACTED, provider, model=None, replicates=3)
    # One refused structured request, then free text for every replicate.
    assert [r.output_schema is not None for r in provider.requests] == [True, False, False, False]
    assert "Answer with only a JSON object" in provider.requests[1].messages[-1].text
    assert result.calls == 4
    assert [j.complete for j in result.judgements] == [True, True, True]
    assert result.dimensions["artifact_trail"].mean == 2.0


def test_judge_retries_an_unusable_structured_answer_in_free_text() -> None:
    provider = ScriptedProvider(
        [
            Step("this is not JSON", structured=True),
            Step('{"accuracy": 5, "completeness": "2"}', structured=False),
        ]
    )
    with provider:
        result = judge(SESSION, COMPACTED, provider, model=None, replicates=1)
    [j] = result.judgements
    assert dict(j.scores) == {"accuracy": 5.0, "completeness": 2.0}
    assert "asked again in free text" in j.problems[0]
    assert "continuity: missing" in j.problems
    assert result.overall is None  # no complete judgement
    assert result.dimensions["accuracy"].n == 1


def test_judge_records_provider_errors_and_keeps_going() -> None:
    provider = ScriptedProvider(
        [
            Step(RateLimitError("busy", provider="p"), structured=True),
            Step(FULL, structured=True),
        ]
    )
    with provider:
        result = judge(SESSION, COMPACTED, provider, model=None, replicates=2)
    assert len(result.errors) == 1 and "replicate 1" in result.errors[0]
    assert len(result.judgements) == 1
    assert result.overall is not None and result.overall.n == 1
    with pytest.raises(InputError):
        judge(SESSION, COMPACTED, provider, model=None, replicates=0)


def test_judge_schema_requires_every_dimension_with_bounds() -> None:
    schema = JUDGE_SCHEMA.schema
    assert schema["required"] == [*JUDGE_DIMENSIONS, "rationale"]
    for name in JUDGE_DIMENSIONS:
        assert schema["properties"][name]["minimum"] == 0
        assert schema["properties"][name]["maximum"] == 5
    assert len(JUDGE_DIMENSIONS) == 6
