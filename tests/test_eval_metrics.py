"""The evaluation metrics and runner on small hand-made cases whose answers are known."""

from __future__ import annotations

import itertools

import pytest

from compaction import CompactionConfig, Compactor
from compaction.eval.metrics import (
    call_points,
    compression_ratio,
    conversation_text,
    mean_ci95,
    mutated_facts,
    replay,
    same_encoding,
    split_points,
    successive,
    survival,
    validity,
)
from compaction.eval.probes import Fact, score
from compaction.eval.runner import (
    STAND_IN_SUMMARY,
    generated_sessions,
    parse_pipeline,
    run_eval,
    stand_in_provider,
)
from compaction.eval.sessions import EvalSession
from compaction.exceptions import ConfigError
from compaction.messages import Conversation, Message
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import FunctionProvider
from compaction.strategies import TruncateStrategy
from compaction.tokens import ConversationCounter

from .helpers import calls, results, say

FILE = Fact(
    "file-1", "file_read", "read src/app/parser.py", ("src/app/parser.py",), "early", False, False
)
DECISION = Fact(
    "decision-1", "decision", "use a pool", ("ThreadPoolExecutor",), "middle", True, True
)
TIMEOUT = Fact(
    "value-1",
    "changed_value",
    "make the request timeout 90 seconds",
    ("request timeout", "90 seconds"),
    "middle",
    False,
    True,
    stale=("30 seconds",),
)
ERROR = Fact("error-1", "error_open", "KeyError", ("KeyError: 'session_id'",), "late", False, True)
DONE = Fact("todo-1", "todo", "done", ("bump the version",), "early", True, False, required=False)
FACTS = (FILE, DECISION, TIMEOUT, ERROR, DONE)


def tiny_session() -> Conversation:
    """Facts planted outside the protected messages (system, task, live turn)."""
    messages: list[Message] = [
        say("system", "You are a careful coding agent."),
        say("user", "Fix the failing parser test."),
        calls(("r1", "read_file", {"path": "src/app/parser.py"}), text="Reading the parser."),
        *results(("r1", "def parse(text):\n    return text.split()\n" * 40)),
        say("assistant", "Decision: ThreadPoolExecutor, the client is synchronous."),
        say("user", "The request timeout is 30 seconds. TODO: bump the version."),
        say("assistant", "Noted."),
        say("user", "Actually make the request timeout 90 seconds."),
        calls(("t1", "bash", {"command": "pytest tests/test_parser.py"}), text="Running tests."),
        *results(("t1", "collected 3 items\n" + "E   KeyError: 'session_id'\n1 failed, 2 passed")),
        say("assistant", "One failure left."),
        say("user", "Where are we?"),
        say("assistant", "Working on the KeyError."),
    ]
    return Conversation(tuple(messages), model="gpt-4o", dialect="openai")


def counter() -> ConversationCounter:
    return ConversationCounter.for_model("gpt-4o")


# --- survival ------------------------------------------------------------------------------


def test_keeping_everything_scores_every_fact() -> None:
    marks = survival(FACTS, conversation_text(tiny_session()))
    assert (marks.overall.kept, marks.overall.total) == (4, 4)  # DONE is optional
    assert (marks.critical.kept, marks.critical.total) == (3, 3)
    assert marks.score.optional_by_category["todo"].kept == 1
    assert marks.lost == [] and marks.mutated == () and marks.stale_as_current == []


def test_dropping_everything_scores_zero() -> None:
    marks = survival(FACTS, "")
    assert (marks.overall.kept, marks.overall.total) == (0, 4)
    assert marks.critical.kept == 0
    assert {f.id for f in marks.lost} == {"file-1", "decision-1", "value-1", "error-1"}
    assert dict(marks.score.by_depth)["middle"].total == 2


def test_stale_value_shown_as_current_is_detected_and_not_mutated() -> None:
    marks = survival(FACTS, "the request timeout is 30 seconds")
    assert [f.id for f in marks.stale_as_current] == ["value-1"]
    assert marks.mutated == ()


def test_key_without_any_value_is_mutated_not_stale() -> None:
    marks = survival(FACTS, "we changed the request timeout yesterday")
    assert [f.id for f in marks.mutated] == ["value-1"]
    assert marks.stale_as_current == []


def test_latest_value_beside_the_old_one_is_kept_and_neither_stale_nor_mutated() -> None:
    marks = survival(FACTS, "request timeout: 30 seconds, now 90 seconds")
    assert "value-1" not in {f.id for f in marks.lost}
    assert marks.mutated == () and marks.stale_as_current == []


def test_facts_without_a_superseded_form_are_never_mutated() -> None:
    two_probes = Fact("x", "identifier", "x", ("alpha", "beta"), "late", False, False)
    assert mutated_facts(score([two_probes], "alpha only")) == []


def test_a_probe_of_several_lines_is_kept_when_each_line_is_kept() -> None:
    # A summary may rejoin a tool's lines ("Passed: 52, Failed: 1"); each line must survive.
    counts = Fact("t", "test_status", "t", ("Passed:   52\nFailed:   1",), "late", False, True,
                  stale=("Passed:   50\nFailed:   3",))  # fmt: skip
    assert score([counts], "tests: Passed:   52, Failed:   1").overall.kept == 1
    assert score([counts], "tests: Passed:   52, Failed:   2").overall.kept == 0
    shown = score([counts], "tests: Passed:   50, Failed:   3")
    assert shown.overall.kept == 0 and [f.id for f in shown.stale_as_current] == ["t"]
    assert score([counts], "Passed:   50, Failed:   1").stale_as_current == []


# --- validity, size, determinism -----------------------------------------------------------


def test_validity_of_an_unchanged_conversation_has_no_new_violations() -> None:
    conversation = tiny_session()
    checked = validity(conversation, conversation)
    assert checked.valid_openai and checked.valid_anthropic


def test_validity_reports_a_broken_tool_pair_for_both_dialects() -> None:
    conversation = tiny_session()
    broken = conversation.with_messages(m for i, m in enumerate(conversation) if i != 3)
    checked = validity(conversation, broken)
    assert not checked.valid_openai
    assert not checked.valid_anthropic
    assert any("[" in v for v in checked.openai)


def test_validity_forgives_violations_the_input_already_had() -> None:
    base = tiny_session()
    # An assistant message first breaks Anthropic's rules before any compaction.
    doubled = base.with_messages([base.messages[0], say("assistant", "Hello."), *base[1:]])
    assert validity(doubled, doubled).valid_anthropic
    assert validity(doubled, doubled).input_anthropic == 1
    # Dropping a tool result adds violations of other rules, in both dialects.
    worse = doubled.with_messages(m for i, m in enumerate(doubled) if i != 4)
    added = validity(doubled, worse)
    assert added.anthropic and not any("first_not_user" in v for v in added.anthropic)
    assert not added.valid_openai


def test_compression_ratio() -> None:
    assert compression_ratio(1000, 250) == 4.0
    assert compression_ratio(1000, 0) == 1000.0


def test_same_encoding_compares_bytes() -> None:
    conversation = tiny_session()
    assert same_encoding(conversation, tiny_session())
    changed = conversation.with_messages([*conversation.messages[:-1], say("assistant", "x")])
    assert not same_encoding(conversation, changed)


def test_mean_ci95() -> None:
    assert mean_ci95([0.5]) == (0.5, None)
    mean, half = mean_ci95([0.8, 1.0])
    assert mean == pytest.approx(0.9)
    # t(1) = 12.706, s = 0.1414…, n = 2 → 12.706 · 0.1414 / √2 = 1.2706
    assert half == pytest.approx(1.2706, abs=1e-3)


# --- replay --------------------------------------------------------------------------------


def test_call_points_are_assistant_messages() -> None:
    conversation = tiny_session()
    assert call_points(conversation.messages) == [2, 4, 6, 8, 10, 12]


def test_replay_without_a_trigger_costs_exactly_the_uncompacted_prefixes() -> None:
    conversation = tiny_session()
    count = counter()
    c = [count.count_message(m) for m in conversation.messages]
    prime = count.count(conversation).overhead  # reply priming, added once per request
    played = replay(conversation, Compactor(CompactionConfig(), counter=count))
    expected = [sum(c[:i]) + prime for i in (2, 4, 6, 8, 10, 12)]
    assert [call.baseline_tokens for call in played.calls] == expected
    assert [call.input_tokens for call in played.calls] == expected
    assert played.peak == expected[-1] == played.baseline_peak
    assert played.cumulative == sum(expected) == played.baseline_cumulative
    assert played.saving == 0.0
    assert played.compactions == 0


def test_replay_compacts_only_when_the_trigger_fires_and_carries_the_context_forward() -> None:
    conversation = tiny_session()
    count = counter()
    c = [count.count_message(m) for m in conversation.messages]
    threshold = count.total(conversation.messages[:4]) - 1  # fires first before message 4
    passes = []
    compactor = Compactor(
        CompactionConfig(token_threshold=threshold, keep_recent_n=2),
        counter=count,
        after_compact=lambda conv, receipt: passes.append(receipt),
    )
    played = replay(conversation, compactor)
    calls_ = played.calls
    assert [x.compacted for x in calls_][:2] == [False, True]
    assert calls_[0].input_tokens == calls_[0].baseline_tokens
    assert calls_[1].input_tokens <= played.target < calls_[1].baseline_tokens
    assert played.compactions == len(passes) < len(calls_)
    for before, after in itertools.pairwise(calls_):
        if not after.compacted:
            # No compaction: the previous context plus the messages appended since.
            assert after.input_tokens == before.input_tokens + sum(c[before.index : after.index])
    assert played.cumulative == sum(x.input_tokens for x in calls_)
    assert played.saving == pytest.approx(1 - played.cumulative / played.baseline_cumulative)
    assert played.saving > 0


# --- successive compactions ----------------------------------------------------------------


def test_split_points_cut_at_call_points_near_equal_tokens() -> None:
    messages = [say("user", "task"), *[say("assistant", f"step {i}") for i in range(9)]]
    cuts = split_points(messages, [10] * 10, 3)
    assert cuts == [3, 7]  # prefix sums 30 and 70 of 100 are nearest 33.3 and 66.7
    assert split_points(messages[:2], [10, 10], 3) == [1]  # only one call point


def test_successive_with_one_round_is_the_one_shot_compaction() -> None:
    conversation = tiny_session()
    strategies = (TruncateStrategy(),)
    target = counter().total(conversation) // 3
    once = Compactor(CompactionConfig(strategies=strategies), counter=counter()).compact(
        conversation, max_tokens=target
    )
    rounds = successive(
        conversation,
        FACTS,
        Compactor(CompactionConfig(strategies=strategies), counter=counter()),
        k=1,
        target_tokens=target,
    )
    assert rounds.k == 1 and rounds.compactions == 1
    expected = survival(FACTS, conversation_text(once.conversation))
    assert rounds.survival.overall == expected.overall
    assert [f.id for f in rounds.survival.lost] == [f.id for f in expected.lost]


def test_successive_rounds_cover_the_session_and_meet_the_target() -> None:
    conversation = tiny_session()
    target = counter().total(conversation) // 3
    rounds = successive(
        conversation,
        FACTS,
        Compactor(CompactionConfig(strategies=(TruncateStrategy(),)), counter=counter()),
        k=3,
        target_tokens=target,
    )
    assert rounds.k == 3
    assert sum(r.messages for r in rounds.rounds) == len(conversation)
    assert all(r.tokens_after <= target for r in rounds.rounds if r.status == "compacted")
    assert rounds.compactions >= 1
    # Truncation drops the middle of the session: the read file and the decision go.
    assert {"file-1", "decision-1"} <= {f.id for f in rounds.survival.lost}


# --- the runner ----------------------------------------------------------------------------


def hand_session() -> EvalSession:
    return EvalSession("tiny", tiny_session(), FACTS, source="hand-made")


def test_a_target_of_everything_keeps_everything_and_saves_nothing() -> None:
    result = run_eval([hand_session()], ["truncate"], target_ratio=1.0)
    run = result.runs[0]
    assert run.survival.overall.value == 1.0
    assert run.compression == 1.0 and run.status == "noop"
    assert run.replay.saving == 0.0 and run.replay.compactions == 0
    assert run.successive.survival.overall.value == 1.0


def test_truncating_to_a_tenth_loses_every_unprotected_fact() -> None:
    result = run_eval([hand_session()], ["truncate"], target_ratio=0.1)
    run = result.runs[0]
    assert (run.survival.overall.kept, run.survival.overall.total) == (0, 4)
    assert run.survival.critical.kept == 0
    assert run.target_met and run.compression > 10
    assert run.validity.valid_openai and run.deterministic


def test_pipeline_specs() -> None:
    assert parse_pipeline("default").kinds == ("mask", "digest", "truncate")
    assert parse_pipeline("summarize").kinds == ("mask", "summarize", "truncate")
    assert parse_pipeline("mask+truncate").kinds == ("mask", "truncate")
    assert parse_pipeline("digest").label == "digest"
    with pytest.raises(ConfigError, match="unknown strategy 'shrink'"):
        parse_pipeline("mask+shrink")
    with pytest.raises(ConfigError, match="more than once"):
        run_eval([hand_session()], ["mask", "mask"])


def test_llm_pipelines_use_the_labelled_stand_in_by_default() -> None:
    sessions = generated_sessions(1, tokens=4000)
    result = run_eval(sessions, ["summarize"], target_ratio=0.3)
    data = result.to_dict()
    assert data["config"]["summarizer"]["kind"] == "stand-in"
    run = result.runs[0]
    assert run.summarizer.calls >= 1
    assert run.deterministic
    assert "no model" in data["config"]["summarizer"]["description"]


def test_the_stand_in_writes_a_summary_without_content() -> None:
    provider = stand_in_provider()
    request = CompletionRequest((say("user", "The port is 18123."),))
    answer = provider.complete(request)
    assert answer.text == STAND_IN_SUMMARY
    assert "18123" not in answer.text


def test_determinism_flag_catches_a_summarizer_that_answers_differently() -> None:
    counts = itertools.count()

    def drifting(request: CompletionRequest) -> str:
        return f"Summary number {next(counts)}."

    provider = FunctionProvider(drifting, supports_structured=False)
    sessions = generated_sessions(1, tokens=4000)
    result = run_eval(sessions, ["truncate", "summarize"], target_ratio=0.3, provider=provider)
    assert result.summary("truncate").runs[0].deterministic is True
    assert result.summary("summarize").runs[0].deterministic is False
    assert result.to_dict()["config"]["summarizer"]["kind"] == "provider"


def test_replicates_are_recorded_with_a_confidence_interval() -> None:
    sessions = generated_sessions(2, tokens=4000)
    result = run_eval(sessions, ["default"], target_ratio=0.3, replicates=3)
    summary = result.summary("default")
    assert all(len(r.replicates) == 3 for r in summary.runs)
    data = summary.to_dict()["replicates"]
    # Deterministic: three identical replicates, so the interval has no width.
    assert data["count"] == 3 and len(set(data["survival"])) == 1 and data["ci95"] == 0.0


def test_aggregates_pool_facts_over_sessions() -> None:
    sessions = generated_sessions(2, tokens=4000)
    result = run_eval(sessions, ["truncate"], target_ratio=0.3)
    summary = result.summary("truncate")
    kept = sum(r.survival.overall.kept for r in summary.runs)
    total = sum(r.survival.overall.total for r in summary.runs)
    assert (summary.survival.kept, summary.survival.total) == (kept, total)
    assert summary.replay_cumulative == sum(r.replay.cumulative for r in summary.runs)
    assert summary.to_dict()["survival"]["rate"] == pytest.approx(kept / total)
