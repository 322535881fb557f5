"""LLM strategies with the shipped test providers: what the provider receives, structured
output and each fallback, anchoring, chunking, sequence semantics, failures, the breaker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import (
    CompactionConfig,
    Compactor,
    Conversation,
    ImagePart,
    Message,
    PinRules,
    SummaryPart,
    TextPart,
)
from compaction.compactor import validate_for
from compaction.exceptions import ServerError
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import FunctionProvider, ScriptedProvider, Step
from compaction.strategies import SequenceStrategy
from compaction.summarize import signals
from compaction.summarize.llm import SUMMARY_SCHEMA

from .helpers import calls, coding_session, results, say

GOOD = {
    "summary": "The agent fixed module 0 and ran the tests.",
    "kept_facts": ["KeyError: 'session_id' is still open"],
    "next_steps": ["rerun the login test"],
}


def prompt_of(request: CompletionRequest) -> str:
    assert [m.role for m in request.messages] == ["system", "user"]
    return request.messages[1].text


def summaries(conversation: Conversation) -> list[str]:
    return [p.text for m in conversation for p in m.parts if isinstance(p, SummaryPart)]


def summarize_config(**extra: object) -> CompactionConfig:
    return CompactionConfig.from_dict(
        {"strategies": [{"kind": "summarize"}], "model": "summary-model", **extra}
    )


def test_structured_summary_replaces_all_but_the_recent_tail() -> None:
    conversation = coding_session(12)
    provider = ScriptedProvider([Step(GOOD, structured=True)])
    with provider:
        result = Compactor(summarize_config(keep_recent_n=6), summarizer=provider).compact(
            conversation, force=True
        )
    receipt = result.receipt
    assert receipt.status == "compacted"
    assert receipt.summarizer_calls == 1
    [request] = provider.requests
    assert request.model == "summary-model"
    assert request.output_schema == SUMMARY_SCHEMA
    prompt = prompt_of(request)
    assert "src/mod_0.py" in prompt and "[read_file called" not in prompt.split("\n")[0]
    assert "Pausing here." not in prompt, "the recent tail is not summarized"
    assert "Fix the failing login test" not in prompt, "the pinned task stays out of it"
    [text] = summaries(result.conversation)
    assert text.startswith("[compacted: ")
    for expected in (
        "## Summary",
        GOOD["summary"],
        "## Notes by the assistant",
        "- KeyError: 'session_id' is still open",
        "## To-dos",
        "- rerun the login test",
        "src/mod_3.py (modified)",
        "not by the user",
    ):
        assert expected in text
    assert result.conversation.messages[-6:] == conversation.messages[-6:]
    assert validate_for(result.conversation) == []
    data = receipt.to_dict(include_archive=False)["summarizer"]
    assert data["calls"] == 1 and data["input_tokens"] > 0 and data["output_tokens"] > 0


@pytest.mark.parametrize(
    ("structured_reply", "reason"),
    [
        ("[1, 2, 3]", "not a JSON object"),
        ({"kept_facts": ["x"]}, "lacks `summary`"),
        ("this is not json", "unusable structured answer"),
    ],
)
def test_each_unusable_structured_answer_falls_back_to_free_text(
    structured_reply: object, reason: str
) -> None:
    provider = ScriptedProvider(
        [
            Step(structured_reply, structured=True),  # type: ignore[arg-type]
            Step("Free-text summary of the work.", structured=False),
        ]
    )
    with provider:
        result = Compactor(summarize_config(), summarizer=provider).compact(
            coding_session(10), force=True
        )
    [text] = summaries(result.conversation)
    assert "Free-text summary of the work." in text
    errors = [e for s in result.receipt.steps for e in s.errors]
    assert any(reason in e for e in errors), errors
    assert "## Summary" not in prompt_of(provider.requests[1]).split("<conversation-part>")[0]


def test_provider_without_structured_output_gets_the_free_text_prompt() -> None:
    provider = FunctionProvider(lambda r: "Plain summary.", supports_structured=False)
    result = Compactor(summarize_config(), summarizer=provider).compact(
        coding_session(10), force=True
    )
    assert [r.output_schema is not None for r in provider.requests] == [True, False]
    assert "Answer with the summary only" in prompt_of(provider.requests[1])
    assert "Plain summary." in summaries(result.conversation)[0]
    assert any("not supported" in e for s in result.receipt.steps for e in s.errors)


def test_anchored_across_three_compactions_keeps_early_facts() -> None:
    seen: list[str] = []

    def forgetful_model(request: CompletionRequest) -> dict[str, object]:
        # Reports only what is in the new part, like a model that forgets the past.
        prompt = prompt_of(request)
        seen.append(prompt)
        part = prompt.split("<conversation-part>")[1].split("</conversation-part>")[0]
        return {
            "summary": f"Covered {part.count('[assistant')} assistant messages.",
            "kept_facts": [],
            "next_steps": [],
        }

    provider = FunctionProvider(forgetful_model)
    compactor = Compactor(summarize_config(keep_recent_n=4), summarizer=provider)
    conversation = coding_session(8)
    for round_ in range(3):
        conversation = compactor.compact(conversation, force=True).conversation
        extra = []
        for i in range(6):
            extra += [calls((f"n{round_}{i}", "edit_file", {"path": f"src/late_{round_}_{i}.py"}))]
            extra += results((f"n{round_}{i}", "edited"))
        extra += [say("assistant", f"Round {round_} done."), say("user", f"next {round_}")]
        conversation = conversation.with_messages([*conversation.messages, *extra])
    conversation = compactor.compact(conversation, force=True).conversation
    assert len(provider.requests) == 4
    assert "<earlier-summary>" not in seen[0]
    assert all("<earlier-summary>" in p for p in seen[1:]), "later rounds anchor on the summary"
    [text] = summaries(conversation)
    assert "src/mod_0.py (modified)" in text, "the ledger keeps what the model forgot"
    assert "src/late_0_0.py (modified)" in text
    assert "Fix the failing login test" in conversation.messages[1].text


def test_long_span_is_summarized_in_chunks_within_the_window() -> None:
    provider = FunctionProvider(lambda r: GOOD)
    config = summarize_config(summary_window=3000, summary_max_tokens=500)
    compactor = Compactor(config, summarizer=provider)
    result = compactor.compact(coding_session(30), force=True)
    assert len(provider.requests) >= 3
    counter = compactor.counter_for(coding_session(1)).counter
    for request in provider.requests:
        assert counter.count_text(prompt_of(request)) <= 3000 - 500
        assert request.model == "summary-model"
    assert "<earlier-summary>" not in prompt_of(provider.requests[0])
    assert all("<earlier-summary>" in prompt_of(r) for r in provider.requests[1:])
    steps = [s for s in result.receipt.steps if s.strategy == "summarize"]
    assert "chunks" in steps[0].detail


def test_failure_without_fallback_leaves_history_untouched() -> None:
    conversation = coding_session(10)
    provider = FunctionProvider(lambda r: ServerError("overloaded", provider="test"))
    config = CompactionConfig.from_dict({"strategies": [{"kind": "summarize", "fallback": "none"}]})
    result = Compactor(config, summarizer=provider).compact(conversation, force=True)
    assert result.conversation is conversation
    assert result.receipt.status == "noop"


def test_failure_with_fallback_applies_the_digest_and_says_so() -> None:
    conversation = coding_session(10)
    provider = FunctionProvider(lambda r: ServerError("overloaded", provider="test"))
    result = Compactor(summarize_config(), summarizer=provider).compact(conversation, force=True)
    [text] = summaries(result.conversation)
    assert "## Files touched" in text and "## Summary" not in text
    step = result.receipt.steps[0]
    assert "digest applied" in step.detail
    assert any("overloaded" in e for e in step.errors)
    assert validate_for(result.conversation) == []


def test_circuit_breaker_stops_calling_a_failing_summarizer() -> None:
    failure = ServerError("down", provider="test")
    provider = ScriptedProvider([Step(failure), Step(failure)])
    compactor = Compactor(summarize_config(summarizer_failures=2), summarizer=provider)
    for _ in range(4):
        result = compactor.compact(coding_session(10), force=True)
        assert summaries(result.conversation), "the digest stands in every time"
    provider.assert_consumed()
    assert len(provider.requests) == 2
    assert any("skipped" in e for s in result.receipt.steps for e in s.errors)


def test_what_the_provider_receives_has_no_tools_and_no_images() -> None:
    png = "data:image/png;base64," + "A" * 4000
    conversation = coding_session(6)
    image_message = Message(
        "user", (TextPart("see the screenshot"), ImagePart(png, width=8, height=8))
    )
    messages = [
        *conversation.messages[:2],
        say("assistant", "ok"),
        image_message,
        *conversation.messages[2:],
    ]
    provider = FunctionProvider(lambda r: GOOD)
    Compactor(summarize_config(), summarizer=provider).compact(
        conversation.with_messages(messages), force=True
    )
    prompt = prompt_of(provider.requests[0])
    assert "AAAA" not in prompt and "attached an image" in prompt
    assert "[bash called]" not in prompt and "[assistant called bash]" in prompt


def test_prompt_template_and_instructions_are_honoured(tmp_path: Path) -> None:
    template = tmp_path / "prompt.j2"
    template.write_text("CUSTOM {{ transcript|length > 0 }} {{ instructions }}")
    provider = FunctionProvider(lambda r: GOOD)
    config = summarize_config(prompt_file=str(template), instructions="Keep every port number.")
    Compactor(config, summarizer=provider).compact(coding_session(6), force=True)
    assert prompt_of(provider.requests[0]) == "CUSTOM True Keep every port number."
    inline = summarize_config(prompt="INLINE {{ structured }}")
    provider = FunctionProvider(lambda r: GOOD)
    Compactor(inline, summarizer=provider).compact(coding_session(6), force=True)
    assert prompt_of(provider.requests[0]) == "INLINE True"


# -- sequence --------------------------------------------------------------------------------


def sequence_config() -> CompactionConfig:
    return CompactionConfig(strategies=(SequenceStrategy(),), keep_recent_n=0, model="m")


def test_sequence_compresses_the_first_run_only_and_keeps_order() -> None:
    messages = [
        say("system", "s"),
        say("user", "task"),
        say("assistant", "a1"),
        say("assistant", "a2"),
        say("user", "more"),
        say("assistant", "b1"),
        say("assistant", "b2"),
        say("user", "live"),
    ]
    conversation = Conversation(tuple(messages), dialect="openai")
    provider = FunctionProvider(lambda r: GOOD)
    compactor = Compactor(sequence_config(), summarizer=provider)
    first = compactor.compact(conversation, force=True).conversation
    assert [m.text if not m.is_summary else "S" for m in first] == [
        "s",
        "task",
        "S",
        "more",
        "b1",
        "b2",
        "live",
    ]
    assert "a1" in prompt_of(provider.requests[0]) and "b1" not in prompt_of(provider.requests[0])
    assert provider.requests[0].model == "m", "the compaction model is used for sequences too"
    second = compactor.compact(first, force=True).conversation
    assert [m.text if not m.is_summary else "S" for m in second] == [
        "s",
        "task",
        "S",
        "more",
        "S",
        "live",
    ]
    assert len(provider.requests) == 2
    third = compactor.compact(second, force=True)
    assert third.conversation == second and len(provider.requests) == 2


def test_sequence_runs_at_the_start_and_the_end_count() -> None:
    tool_run = [
        calls(("c1", "bash", {"command": "ls"})),
        *results(("c1", "a.py")),
        calls(("c2", "bash", {"command": "pwd"})),
        *results(("c2", "/w")),
    ]
    at_end = Conversation((say("user", "go"), *tool_run), dialect="openai")
    provider = FunctionProvider(lambda r: GOOD)
    config = CompactionConfig(
        strategies=(SequenceStrategy(),),
        keep_recent_n=0,
        model="m",
        pin=PinRules(first_user_message=False),
    )
    out = Compactor(config, summarizer=provider).compact(at_end, force=True).conversation
    assert [m.is_summary for m in out] == [False, True]
    at_start = Conversation((*tool_run, say("user", "live")), dialect="openai")
    out = Compactor(config, summarizer=provider).compact(at_start, force=True).conversation
    assert [m.is_summary for m in out] == [True, False]
    assert validate_for(out) == []


@pytest.mark.parametrize(
    "messages",
    [
        (),
        (say("user", "q"), say("assistant", "a"), say("user", "q2"), say("assistant", "a2")),
    ],
)
def test_sequence_without_a_run_makes_no_call(messages: tuple[Message, ...]) -> None:
    conversation = Conversation(messages, dialect="openai")
    with ScriptedProvider([]) as provider:
        result = Compactor(sequence_config(), summarizer=provider).compact(conversation, force=True)
    assert result.conversation == conversation
    assert provider.requests == []


def test_summarize_without_a_provider_is_a_clear_error_in_the_receipt() -> None:
    result = Compactor(summarize_config()).compact(coding_session(8), force=True)
    assert any("no summarizer provider" in e for s in result.receipt.steps for e in s.errors)
    assert summaries(result.conversation), "the digest stands in"


def test_summary_is_valid_json_schema_for_strict_mode() -> None:
    schema = SUMMARY_SCHEMA.schema
    assert set(schema["required"]) == set(schema["properties"])
    assert schema["additionalProperties"] is False
    json.dumps(schema)


def test_a_tight_target_shrinks_the_ledger_before_dropping_the_summary() -> None:
    conversation = coding_session(30)
    provider = FunctionProvider(lambda r: GOOD)
    config = CompactionConfig.from_dict(
        {"strategies": [{"kind": "summarize"}, {"kind": "truncate"}], "model": "m"}
    )
    compactor = Compactor(config, summarizer=provider)
    loose = compactor.compact(conversation, force=True)
    full = summaries(loose.conversation)[0]
    protected = loose.receipt.protected_tokens
    target = protected + 700
    tight = Compactor(config, summarizer=FunctionProvider(lambda r: GOOD)).compact(
        conversation, max_tokens=target
    )
    assert tight.receipt.status == "compacted"
    assert tight.receipt.tokens_after <= target
    [text] = summaries(tight.conversation)
    assert GOOD["summary"] in text, "the model's summary survives"
    assert len(text) < len(full)
    assert not any(s.strategy == "truncate" and s.messages_affected for s in tight.receipt.steps)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # A file a tool attached to the user's turn: its path (and lines), then its content.
        (
            "/home/dev/q/lib/src/ratelimit.dart:1-3\n```\n   1 | import 'dart:async';\n"
            "   2 | \n   3 | class Ratelimit {}```\nGo ahead, and use 2 isolates for now.",
            "Go ahead, and use 2 isolates for now.",
        ),
        (
            "carrier.dart:6-318\n```\n...\n     6 |     final t = tariff(parcel);\n...\n```\n"
            "courier.dart:61-387\n```\n...\n```",
            "",
        ),
        # A file added to the chat as its name and a fenced block.
        (
            "Make the loader skip blank lines.\n\nsrc/loader.py\n```python\ndef load():\n"
            "    pass\n```",
            "Make the loader skip blank lines.",
        ),
        # A file name closing a block of the user's own is no attached file.
        (
            "Put it in:\n```\n.claude/settings.local.json\n```\n\nLike this:\n```json\n{}\n```",
            "Put it in:\n```\n.claude/settings.local.json\n```\n\nLike this:\n```json\n{}\n```",
        ),
        # Code the user pastes without naming a file is theirs.
        (
            "Why does this fail?\n```\nassert load() == []\n```",
            "Why does this fail?\n```\nassert load() == []\n```",
        ),
    ],
)
def test_a_file_attached_to_the_users_turn_is_not_their_words(text: str, words: str) -> None:
    assert signals.own_words(text) == words
