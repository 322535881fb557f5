from __future__ import annotations

import itertools
import json
from collections.abc import Callable

import pytest

from compaction.compactor import Compactor, Receipt, validate_for
from compaction.config import CompactionConfig, PinRules
from compaction.dialects import OPENAI
from compaction.eval.families import family_sessions
from compaction.eval.generate import generate_session
from compaction.exceptions import TargetUnreachableError
from compaction.messages import (
    OBSERVATION,
    Conversation,
    Group,
    Message,
    SummaryPart,
    TextPart,
    ToolResultPart,
    group_messages,
)
from compaction.strategies import (
    CompactionStrategy,
    DigestStrategy,
    MaskStrategy,
    StepReport,
    TruncateStrategy,
    Workspace,
)
from compaction.strategies.digest import DigestRendering, earlier_rendering
from compaction.strategies.mask import MASK_PREFIX
from compaction.summarize.digest import (
    CLOSE_TAG,
    OPEN_TAG,
    SHORT_PREAMBLE,
    extract_ledger,
    render,
    summary_message,
)
from compaction.summarize.digest.events import open_file_line
from compaction.summarize.digest.format import FULL_TEXT_KEY, full_text, read_placeholder

from .helpers import calls, coding_session, results, say


def _tokens(compactor: Compactor, conversation: Conversation) -> int:
    return compactor.count(conversation)


def test_nothing_happens_below_every_trigger() -> None:
    conversation = coding_session(3)
    compactor = Compactor(CompactionConfig(token_threshold=10**6))
    result = compactor.compact(conversation)
    assert result.conversation is conversation
    assert result.receipt.status == "noop"
    assert result.receipt.trigger == ()


def test_trigger_compacts_to_max_tokens_and_stays_valid() -> None:
    conversation = coding_session(30)
    config = CompactionConfig(token_threshold=5000, max_tokens=4000)
    compactor = Compactor(config)
    before = _tokens(compactor, conversation)
    assert before > 5000
    result = compactor.compact(conversation)
    receipt = result.receipt
    assert receipt.status == "compacted"
    assert receipt.trigger and "token_threshold" in receipt.trigger[0]
    assert receipt.tokens_after <= 4000
    assert _tokens(compactor, result.conversation) == receipt.tokens_after
    assert validate_for(result.conversation) == []
    # system, the first user message (pinned by default) and the live turn survive verbatim
    assert result.conversation.messages[0] == conversation.messages[0]
    assert result.conversation.messages[1] == conversation.messages[1]
    assert result.conversation.messages[-1] == conversation.messages[-1]


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_the_first_message_the_user_wrote_is_pinned_not_one_the_harness_wrote(dialect: str) -> None:
    # aider sends its repo map as the first user message; the task is the user's next one.
    repo_map = (
        "Here are summaries of some files present in my git repository.\n"
        "Do not propose changes to these files, treat them as *read-only*.\n\n"
        + "app/models.py:\n│class Listing(Base):\n│    title: Mapped[str]\n⋮\n"
        * 40
    )
    task = "Add a search endpoint for listings. Production runs Python 3.9: no PEP 604 unions."
    messages = [
        say("system", "Act as an expert software developer."),
        say("user", repo_map),
        say("assistant", "Ok, I won't try and edit those files without asking first."),
        say("user", task),
    ]
    for k in range(12):
        messages += [
            say("assistant", f"Step {k}: editing app/api/v{k}.py.\n" + "x = 1\n" * 60),
            say("user", "I ran this command:\n\npytest -q\n\nAnd got this output:\n\n"
                        + "." * 300 + f"\n{k} passed in 0.1s\n"),
        ]  # fmt: skip
    messages.append(say("assistant", "Done."))
    conversation = Conversation(tuple(messages), dialect=dialect)
    compactor = Compactor(CompactionConfig(strategies=(MaskStrategy(), DigestStrategy())))
    result = compactor.compact(conversation, max_tokens=int(_tokens(compactor, conversation) * 0.4))
    # Verbatim (Anthropic folds the summaries around it into its message).
    assert any(task in m.text for m in result.conversation.messages)
    assert validate_for(result.conversation) == []


def test_mask_runs_first_and_keeps_the_recent_tail() -> None:
    conversation = coding_session(12)
    compactor = Compactor(CompactionConfig(strategies=(MaskStrategy(),), keep_recent_n=6))
    before = _tokens(compactor, conversation)
    result = compactor.compact(conversation, max_tokens=int(before * 0.6))
    masked = [
        (i, m)
        for i, m in enumerate(result.conversation.messages)
        if m.tool_results and m.tool_results[0].text.startswith(MASK_PREFIX)
    ]
    assert masked, "old outputs were masked"
    assert len(result.conversation) == len(conversation), "mask never drops a message"
    assert result.conversation.messages[-6:] == conversation.messages[-6:]
    placeholder = masked[0][1].tool_results[0].text
    index = masked[0][0]
    path = conversation.messages[index - 1].tool_calls[0].parsed_arguments()["path"]  # type: ignore[index]
    assert f"read_file `{path}`" in placeholder
    # Only as many outputs as the target needs are masked, the largest first.
    assert result.receipt.tokens_after >= 0.9 * result.receipt.target_tokens  # type: ignore[operator]
    handle = placeholder.split("original kept as ")[1].split("]")[0]
    original = result.receipt.archive[handle]
    assert original.tool_results[0].text == conversation.messages[masked[0][0]].tool_results[0].text


def test_mask_placeholder_keeps_error_lines() -> None:
    conversation = coding_session(6)
    compactor = Compactor(
        CompactionConfig(strategies=(MaskStrategy(min_chars=0),), keep_recent_n=0)
    )
    result = compactor.compact(conversation, max_tokens=1)
    texts = [m.tool_results[0].text for m in result.conversation.messages if m.tool_results]
    failing = next(t for t in texts if "bash `pytest tests/test_0.py`" in t)
    assert "! E   KeyError: 'session_id'" in failing or "! KeyError: 'session_id'" in failing
    assert "tests: 1 failed, 5 passed" in failing


def test_digest_keeps_the_ledger() -> None:
    conversation = coding_session(30)
    compactor = Compactor(CompactionConfig(strategies=(DigestStrategy(),)))
    before = _tokens(compactor, conversation)
    result = compactor.compact(conversation, max_tokens=before // 5)
    assert result.receipt.status == "compacted"
    summary = next(
        p.text for m in result.conversation for p in m.parts if isinstance(p, SummaryPart)
    )
    assert summary.startswith("[compacted: ")
    for expected in (
        "src/mod_3.py (modified)",
        "`pytest tests/test_3.py` → failed",
        "KeyError: 'session_id'",
        "timeout: 49 seconds (earlier: 39 seconds)",
    ):
        assert expected in summary
    assert "not by the user" in summary


def test_anchored_digest_keeps_early_facts_across_compactions() -> None:
    conversation = coding_session(30)
    compactor = Compactor(CompactionConfig(strategies=(MaskStrategy(), DigestStrategy())))
    current = conversation
    for round_ in range(3):
        grown = current
        for i in range(8):
            grown = grown.append(say("assistant", f"Round {round_} note {i}: " + "detail " * 200))
            grown = grown.append(say("user", f"ok {round_}.{i}"))
        result = compactor.compact(grown, max_tokens=_tokens(compactor, grown) // 3)
        assert result.receipt.status == "compacted"
        current = result.conversation
    text = "\n".join(p.text for m in current for p in m.parts if isinstance(p, SummaryPart))
    assert "src/mod_0.py" in text
    assert "timeout: 59 seconds (earlier: 39 seconds, 49 seconds)" in text
    assert sum(1 for m in current if m.is_summary) <= 2


def test_compacting_a_compact_conversation_is_a_noop() -> None:
    conversation = coding_session(20)
    compactor = Compactor()
    target = _tokens(compactor, conversation) // 4
    first = compactor.compact(conversation, max_tokens=target)
    second = compactor.compact(first.conversation, max_tokens=target)
    assert second.receipt.status == "noop"
    assert second.conversation is first.conversation


def test_unreachable_target_is_reported_not_broken() -> None:
    conversation = coding_session(5)
    compactor = Compactor()
    result = compactor.compact(conversation, max_tokens=10)
    receipt = result.receipt
    assert receipt.status == "target_unreachable"
    assert receipt.reason is not None and "must be kept" in receipt.reason
    assert receipt.protected_tokens > 10
    assert validate_for(result.conversation) == []
    assert result.conversation.messages[-1] == conversation.messages[-1]
    with pytest.raises(TargetUnreachableError):
        result.raise_for_target()


def test_an_unreachable_target_is_missed_by_no_more_than_a_digest_of_the_rest() -> None:
    # The live user turn alone is over the target: the rest, the recent tail included, folds
    # into a digest kept in full (never shrunk or dropped), instead of being left as it was.
    conversation = coding_session(6).append(say("user", "Now the signup flow. " * 150))
    compactor = Compactor()
    before = _tokens(compactor, conversation)
    result = compactor.compact(conversation, max_tokens=200)
    receipt = result.receipt
    assert receipt.status == "target_unreachable" and receipt.protected_tokens > 200
    assert receipt.tokens_after <= receipt.protected_tokens + 150 < before // 4
    summaries = [m for m in result.conversation.messages if m.is_summary]
    assert summaries and "Where are we now?" in summaries[0].text
    assert result.conversation.messages[-1] == conversation.messages[-1]
    assert validate_for(result.conversation) == []


def test_an_action_written_in_text_is_never_parted_from_its_observation() -> None:
    # SWE-agent style: the command in the assistant's text, the environment's output in the
    # next (user-role) message. Whatever is compacted, the two go together.
    def observed(text: str) -> Message:
        return Message("user", (TextPart(text),), provider_data={OBSERVATION: True})

    steps: list[Message] = []
    for i in range(12):
        steps.append(say("assistant", f"Let me look.\n```\ncat src/mod_{i}.py\n```"))
        steps.append(observed("\n".join(f"{n}: line {n} of mod_{i}" for n in range(80))))
    assert group_messages(steps)[0] == Group(0, 2)
    conversation = Conversation(
        (say("system", "You are an autonomous programmer."), say("user", "Fix the bug."), *steps)
    )
    compactor = Compactor()
    for target in (200, compactor.count(conversation) // 4):
        result = compactor.compact(conversation, max_tokens=target).conversation
        assert result.messages[-1] == steps[-1]
        assert result.messages[-2] == steps[-2], target  # its action, beside it


def test_target_met_whenever_protected_content_fits() -> None:
    conversation = coding_session(25)
    compactor = Compactor(CompactionConfig(pin=PinRules(first_user_message=False)))
    result = compactor.compact(conversation, max_tokens=1)
    floor = result.receipt.protected_tokens
    for target in (floor, floor + 5, floor + 100, floor * 3):
        again = Compactor(CompactionConfig(pin=PinRules(first_user_message=False)))
        out = again.compact(conversation, max_tokens=target)
        assert out.receipt.tokens_after <= target, (
            target,
            out.receipt.to_dict(include_archive=False),
        )


def test_truncate_alone_drops_oldest_and_marks_it() -> None:
    conversation = coding_session(10)
    compactor = Compactor(CompactionConfig(strategies=(TruncateStrategy(),)))
    before = _tokens(compactor, conversation)
    result = compactor.compact(conversation, max_tokens=before // 2)
    assert result.receipt.tokens_after <= before // 2
    marker = next(m for m in result.conversation if m.is_summary)
    assert "removed to fit the context window" in marker.text
    assert "not by the user" in marker.text
    assert validate_for(result.conversation) == []


def test_every_original_is_in_the_archive() -> None:
    conversation = coding_session(15)
    result = Compactor().compact(conversation, max_tokens=2000)
    removed = {r.index for r in result.receipt.removed}
    assert {r.action for r in result.receipt.removed} <= {"masked", "digested", "dropped"}
    for removal in result.receipt.removed:
        assert result.receipt.archive[removal.handle] is not None
    kept = {id(m) for m in result.conversation}
    for index, message in enumerate(conversation):
        if id(message) not in kept:
            assert index in removed, f"message {index} vanished without an archive entry"


def test_deterministic() -> None:
    conversation = coding_session(20)
    a = Compactor().compact(conversation, max_tokens=3000)
    b = Compactor().compact(conversation, max_tokens=3000)
    assert a.conversation == b.conversation
    assert a.receipt.summaries == b.receipt.summaries


def test_anthropic_output_alternates() -> None:
    conversation = coding_session(20, dialect="anthropic")
    assert validate_for(conversation) == []
    result = Compactor().compact(conversation, max_tokens=2500)
    assert result.receipt.status == "compacted"
    assert validate_for(result.conversation) == []
    roles = [m.role for m in result.conversation if m.role != "system"]
    assert all(a != b for a, b in itertools.pairwise(roles))


def test_hooks_see_the_receipt() -> None:
    seen: list[tuple[str, Receipt | None]] = []
    compactor = Compactor(
        before_compact=lambda c, r: seen.append(("before", r)),
        after_compact=lambda c, r: seen.append(("after", r)),
    )
    compactor.compact(coding_session(10), max_tokens=1500)
    assert [s[0] for s in seen] == ["before", "after"]
    assert seen[0][1] is None
    assert seen[1][1] is not None and seen[1][1].status == "compacted"


def test_cooldown_after_a_pass_that_cannot_get_below_the_trigger() -> None:
    conversation = coding_session(4, system="Rules of the house. " * 400)
    compactor = Compactor(CompactionConfig(token_threshold=1000, max_tokens=500))
    first = compactor.compact(conversation)
    assert first.receipt.status == "target_unreachable"
    decision = compactor.should_compact(first.conversation.append(say("assistant", "ok")))
    assert not decision
    assert "cooling down" in decision.reasons[0]
    grown = first.conversation.append(say("assistant", "more " * 500))
    assert compactor.should_compact(grown), "real growth ends the cooldown"


def test_window_fraction_uses_the_registry_and_config_overrides() -> None:
    conversation = coding_session(10)
    tokens = Compactor().count(conversation)
    assert Compactor(CompactionConfig(window_fraction=0.5)).window(conversation) == 128_000
    small = CompactionConfig(window_fraction=0.5, context_windows={"gpt-4o": tokens})
    decision = Compactor(small).should_compact(conversation)
    assert decision
    assert f"of the {tokens}-token window" in decision.reasons[0]
    assert decision.target == int(int(tokens * 0.5) * 0.6)


def test_no_summary_is_dropped_for_a_target_that_is_missed_anyway() -> None:
    # The live user turn fits the target, but not with the exchange that answers it: even
    # with every summary dropped and the live result cut to its placeholder the target is
    # out of reach, and dropping them lost every earlier fact for nothing.
    base = coding_session(12)
    turn = say("user", "Here is the spec for the signup flow. " * 60)
    live_call = calls(("fresh", "read_file", {"path": "src/fresh.py"}), text="Reading it.")
    listing = "\n".join(f"{n:4d}  def fresh_{n}(): return {n}" for n in range(12))
    conversation = base.with_messages(
        (*base.messages, turn, live_call, *results(("fresh", listing)))
    )
    compactor = Compactor(CompactionConfig(keep_recent_n=2))
    kept = conversation.with_messages((*conversation.messages[:2], turn))
    result = compactor.compact(conversation, max_tokens=compactor.count(kept) + 5)
    assert result.receipt.status == "target_unreachable"
    summaries = [m for m in result.conversation.messages if m.is_summary]
    assert summaries and "src/mod_0.py" in summaries[0].text
    assert result.conversation.messages[-1] == conversation.messages[-1]
    assert validate_for(result.conversation) == []


def _ends_with_a_fresh_result(dialect: str = "openai") -> Conversation:
    """A session whose last message is the result the model asked for and has not read."""
    role = "user" if dialect == "anthropic" else "tool"
    base = coding_session(12, dialect=dialect)
    listing = "\n".join(f"{n:4d}  def fresh_{n}(): return {n}" for n in range(40))
    return base.with_messages(
        (
            *base.messages,
            calls(("fresh", "read_file", {"path": "src/fresh.py"}), text="Reading it."),
            *results(("fresh", listing), role=role),
        )
    )


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_the_result_the_model_is_about_to_read_survives_while_older_context_can_give(
    dialect: str,
) -> None:
    conversation = _ends_with_a_fresh_result(dialect)
    compactor = Compactor(CompactionConfig(keep_recent_n=4))
    # Tight: masking and digesting the rest is not enough, truncating old groups is.
    result = compactor.compact(conversation, max_tokens=1000)
    assert result.receipt.target_met
    assert result.conversation.messages[-2:] == conversation.messages[-2:]
    assert validate_for(result.conversation) == []


def test_the_fresh_result_is_masked_last_when_nothing_else_can_meet_the_target() -> None:
    conversation = _ends_with_a_fresh_result()
    compactor = Compactor(CompactionConfig(keep_recent_n=4))
    fresh = conversation.messages[-1]
    floor = compactor.count(conversation.with_messages(conversation.messages[:2]))
    target = floor + 200  # room for markers, not for the 40-line listing
    result = compactor.compact(conversation, max_tokens=target)
    assert result.receipt.target_met
    assert result.conversation.messages[-1] != fresh
    assert result.conversation.messages[-1].tool_results[0].text.startswith(MASK_PREFIX)
    assert any(r.index == len(conversation) - 1 for r in result.receipt.removed)


def test_user_words_beside_tool_results_are_the_live_turn() -> None:
    # Anthropic clients send the user's next message in the message carrying the results.
    conversation = _ends_with_a_fresh_result("anthropic")
    *head, last = conversation.messages
    assert last.tool_results and not last.is_user_turn
    live = Message("user", (*last.parts, TextPart("Now also fix the docs, keep ticket T-88.")))
    conversation = conversation.with_messages((*head, live))
    assert live.is_user_turn
    result = Compactor(CompactionConfig(keep_recent_n=2)).compact(conversation, max_tokens=1500)
    assert result.conversation.messages[-1] == live
    # The task stays, verbatim (Anthropic's alternation may fold the summary in after it).
    assert result.conversation.messages[1].parts[0] == conversation.messages[1].parts[0]


def test_one_conversations_cooldown_does_not_silence_another() -> None:
    config = CompactionConfig(token_threshold=2_000, max_tokens=1_500)
    compactor = Compactor(config)
    stuck = Conversation(
        (
            Message.text_message("system", "You are terse. " + "Rule. " * 12000, pinned=True),
            Message.text_message("user", "Task A: summarize the rules."),
        )
    )
    assert compactor.compact(stuck).receipt.status == "target_unreachable"
    other = coding_session(12)  # about 16k tokens: under the stuck one's floor
    assert compactor.should_compact(other), "an unrelated conversation is not cooling down"
    assert compactor.compact(other).receipt.status == "compacted"


class DropOldestTool:
    """A third-party strategy: replaces the oldest compactable tool result by one word."""

    kind = "drop-oldest-tool"
    last_resort = False
    needs_summarizer = False

    def apply(self, work: Workspace) -> StepReport:
        before = work.total()
        for index, slot in enumerate(work.slots):
            if work.compactable(index) and slot.message.tool_results:
                parts = [
                    p.with_text("(gone)") if isinstance(p, ToolResultPart) else p
                    for p in slot.message.parts
                ]
                work.replace(index, slot.message.with_parts(parts), "masked")
                return StepReport(self.kind, before, work.total(), 1, "one result")
        return StepReport(self.kind, before, before)


def test_a_third_party_strategy_runs_in_the_pipeline() -> None:
    conversation = coding_session(8)
    strategy = DropOldestTool()
    assert isinstance(strategy, CompactionStrategy)
    compactor = Compactor(CompactionConfig(strategies=(strategy, TruncateStrategy())))
    tokens = _tokens(compactor, conversation)
    result = compactor.compact(conversation, max_tokens=tokens - 50)
    assert result.receipt.steps[0].strategy == "drop-oldest-tool"
    assert any(r.text == "(gone)" for m in result.conversation for r in m.tool_results)
    assert validate_for(result.conversation) == []


def test_the_receipt_names_the_rule_breaks_the_result_kept_from_its_input() -> None:
    conversation = coding_session(30)
    config = CompactionConfig(token_threshold=5000, max_tokens=4000)
    clean = Compactor(config).compact(conversation)
    assert clean.receipt.status == "compacted"
    assert clean.receipt.inherited_violations == []
    # the client's own orphan, among the recent messages a compaction keeps verbatim
    orphans = results(("call_nobody", "orphan output"))
    messages = conversation.messages
    broken = conversation.with_messages((*messages[:-2], *orphans, *messages[-2:]))
    assert [v.rule for v in validate_for(broken)] == ["orphan_tool_result"]
    result = Compactor(config).compact(broken)
    assert result.receipt.status == "compacted"
    assert [v.rule for v in result.receipt.inherited_violations] == ["orphan_tool_result"]


def test_an_old_result_riding_in_the_live_user_turn_is_masked_and_the_words_kept() -> None:
    # Anthropic: the user's latest words arrive in the message carrying the previous results.
    # The words are protected; the result beside them is old output once the agent moved on.
    big = "\n".join(f"line {i}: INFO worker heartbeat ok shard={i % 7}" for i in range(300))
    words = "One more thing: never print the API key in logs."
    messages = [
        say("system", "You are a coding agent."),
        say("user", "Fix the signer worker."),
        calls(("a", "Bash", {"command": "tail -n 300 logs/worker.log"})),
        Message(
            "user",
            (ToolResultPart("a", (TextPart(big),)), TextPart(words)),
        ),
        calls(("b", "Bash", {"command": "pytest -q"})),
        *results(("b", "3 passed in 0.1s"), role="user"),
        say("assistant", "Done: the tests pass and the key is masked in logs."),
    ]
    conversation = Conversation(tuple(messages), dialect="anthropic")
    compactor = Compactor(CompactionConfig(keep_recent_n=2))
    before = compactor.count(conversation)
    result = compactor.compact(conversation, max_tokens=before // 3)
    assert result.receipt.target_met
    turn = next(m for m in result.conversation.messages if words in m.text)
    assert [p.text for p in turn.parts if isinstance(p, TextPart)] == [words]
    assert turn.tool_results[0].text.startswith(MASK_PREFIX)
    assert validate_for(result.conversation) == []


def test_room_left_after_masking_is_filled_with_an_excerpt_of_the_newest_masked_output() -> None:
    # One large output, masked to meet the target, does not fit back whole: the room it
    # leaves holds its head and tail beside the placeholder, and the budget is used.
    log = "\n".join(f"{i:04d} worker shard={i % 9} state=ok ms={i % 97}" for i in range(600))
    messages = [
        say("system", "You are a coding agent."),
        say("user", "Find why the worker stalls."),
        calls(("a", "bash", {"command": "cat logs/worker.log"})),
        *results(("a", log)),
        say("assistant", "The log shows no stall; the scheduler is next."),
        say("user", "Go on."),
        say("assistant", "Checked the scheduler: it is fine."),
    ]
    conversation = Conversation(tuple(messages))
    compactor = Compactor(CompactionConfig(keep_recent_n=2))
    target = compactor.count(conversation) // 2
    result = compactor.compact(conversation, max_tokens=target)
    assert result.receipt.target_met
    assert result.receipt.tokens_after >= 0.9 * target
    masked = next(r for m in result.conversation.messages for r in m.tool_results)
    assert masked.text.startswith(MASK_PREFIX)
    assert log.splitlines()[0] in masked.text and log.splitlines()[-1] in masked.text
    # A later compaction that needs the room takes the excerpt back first (a shorter one
    # of it, at most, fills what room is left; never a placeholder inside a placeholder).
    again = compactor.compact(result.conversation, max_tokens=target // 3)
    assert again.receipt.target_met
    shorter = next(r for m in again.conversation.messages for r in m.tool_results)
    assert shorter.text.startswith(MASK_PREFIX) and len(shorter.text) < len(masked.text)
    assert shorter.text.count(MASK_PREFIX) == 1


def _log(i: int) -> str:
    return "\n".join(f"{n:04d} worker {i} shard={n % 9} state=ok ms={n % 97}" for n in range(80))


def _react_session() -> list[Message]:
    # CrewAI: the executor writes each tool's answer into the assistant's own message.
    return [
        say(
            "assistant",
            f"Thought: the log of worker {i} is next.\nAction: run_shell\n"
            f'Action Input: {{"command": "cat logs/w_{i}.log"}}\nObservation: {_log(i)}',
        )
        for i in range(12)
    ] + [say("assistant", "Thought: I now know the final answer\nFinal Answer: no stall.")]


def _autogen_session() -> list[Message]:
    # AutoGen: the user proxy runs the assistant's block and answers with its output.
    steps: list[Message] = []
    for i in range(12):
        steps.append(say("assistant", f"Let me look.\n```sh\ncat logs/w_{i}.log\n```"))
        steps.append(say("user", f"exitcode: 0 (execution succeeded)\nCode output: {_log(i)}"))
    return [*steps, say("assistant", "No stall anywhere. TERMINATE")]


def _smolagents_session() -> list[Message]:
    # smolagents: the observation of the code the assistant wrote, as the next user message.
    steps: list[Message] = []
    for i in range(12):
        steps.append(say("assistant", f"Let me look.\n```sh\ncat logs/w_{i}.log\n```"))
        steps.append(say("user", f"Observation:\n{_log(i)}"))
    return [*steps, say("assistant", "No stall anywhere.")]


def _observed_session() -> list[Message]:
    # SWE-agent: the dialect marks the environment's reply.
    steps: list[Message] = []
    for i in range(12):
        steps.append(say("assistant", f"Let me look.\n```\ncat logs/w_{i}.log\n```"))
        # Its status line says which file later edits apply to: a placeholder keeps it.
        status = f"\n(Open file: /repo/logs/w_{i}.log)\n(Current directory: /repo)\nbash-$"
        observed = TextPart(_log(i) + status)
        steps.append(Message("user", (observed,), provider_data={OBSERVATION: True}))
    return [*steps, say("assistant", "No stall anywhere.")]


def _cline_xml_session() -> list[Message]:
    """Cline's classic protocol: a tool use written as XML, its result a user turn."""
    steps: list[Message] = []
    for i in range(6):
        use = f"<execute_command>\n<command>cat logs/w_{i}.log</command>\n</execute_command>"
        steps.append(say("assistant", f"Let me look.\n\n{use}"))
        steps.append(say("user", f"[execute_command for 'cat logs/w_{i}.log'] Result:\n{_log(i)}"))
    return [*steps, say("assistant", "No stall anywhere.")]


@pytest.mark.parametrize(
    "steps",
    [_react_session, _autogen_session, _smolagents_session, _observed_session, _cline_xml_session],
)
def test_outputs_an_agent_writes_into_text_are_masked_like_tool_results(
    steps: Callable[[], list[Message]],
) -> None:
    messages = steps()
    conversation = Conversation(
        (say("system", "You are a coding agent."), say("user", "Find the stall."), *messages)
    )
    compactor = Compactor(CompactionConfig(strategies=(MaskStrategy(),), keep_recent_n=2))
    target = compactor.count(conversation) * 6 // 10
    result = compactor.compact(conversation, max_tokens=target)
    assert result.receipt.target_met
    # Only as many outputs as the target needs, none of the words around them.
    assert result.receipt.tokens_after >= 0.9 * target
    after = result.conversation.messages
    assert len(after) == len(conversation.messages)
    masked = [(b, a) for b, a in zip(conversation.messages, after, strict=True) if a != b]
    assert masked and all(MASK_PREFIX in a.text for _, a in masked)
    for before, now in masked:
        if before.role == "assistant":  # the thought and the action stay verbatim
            assert now.text.startswith(before.text.partition("Observation: ")[0] + "Obs")
        elif "] Result:" in before.text:  # a result's header names the use: it stays
            header = before.text.partition("\n")[0]
            assert now.text.startswith(f"{header}\n{MASK_PREFIX}")
        else:  # the environment's own message: all of it is the output
            assert now.text.startswith(MASK_PREFIX)
        handle = now.text.split("original kept as ")[1].split("]")[0]
        assert result.receipt.archive[handle] == before
        assert "`cat logs/w_" in now.text  # the placeholder names the command
        if "(Open file: " in before.text:
            assert read_placeholder(now.text).state == open_file_line(before.text)  # type: ignore[union-attr]
    # The digest reads a masked output as the command's outcome, never as the user's words.
    digest = "\n".join(render(extract_ledger(after)))
    assert MASK_PREFIX not in digest and "original kept as" not in digest
    assert "`cat logs/w_0.log` → ok" in digest


def test_a_to_do_tools_reply_by_id_is_state_and_never_masked() -> None:
    # gptme's `todo write` answers by id ("Added todo 1: …"): the ids are how later writes
    # change the list ("update 1 completed"). Masked, the list read back lost every item.
    tasks = ("replay", "document", "expire", "count", "sort", "sign")
    added = "\n".join(
        f"Added todo {k}: {task} the parked envelopes of every tenant"
        for k, task in enumerate(tasks, 1)
    )
    messages = [
        say("system", "You are a coding agent."),
        say("user", "Fix the redelivery."),
        say(
            "assistant", 'Updating the list:\n```todo write\nadd "replay the parked envelopes"\n```'
        ),
        say("user", f"<system>{added}</system>"),
        say("assistant", "Reading the log.\n```shell\ncat logs/relay.log\n```"),
        say("user", "<system>" + "relay: parked envelope 17 due\n" * 40 + "</system>"),
        say("assistant", "Updating the todo list:\n```todo write\nupdate 1 completed\n```"),
        say("user", "<system>Updated todo 1 state to: completed</system>"),
        say("assistant", "Done with the replay."),
        say("user", "Go on."),
    ]
    compactor = Compactor(CompactionConfig(strategies=(MaskStrategy(),), keep_recent_n=0))
    result = compactor.compact(Conversation(tuple(messages)), max_tokens=1)
    after = result.conversation.messages
    assert after[3] == messages[3]  # the reply by id stays
    assert MASK_PREFIX in after[5].text  # the log is masked
    todos = rendered_todos(after)
    assert "[completed] replay the parked envelopes" in todos
    assert "- expire the parked envelopes" in todos


def test_a_to_do_tools_stated_list_is_never_masked_and_read_as_the_list() -> None:
    def state(*tasks: tuple[str, bool]) -> str:
        listed = [{"task_description": t, "completed": done} for t, done in tasks]
        body = {"tasks": listed, "description": "Retries", "context": ["x" * 200], "id": "17"}
        return f"TODO LIST STATE: {json.dumps(body)}\n\n ID: 17"

    first = (("Retry failed uploads", False), ("Replay last month", False), ("Alarm", False))
    messages = [
        say("system", "You are a coding agent."),
        say("user", "Make ingestion reliable."),
        calls(("a", "todo_list", {"command": "create", "tasks": [t for t, _ in first]})),
        *results(("a", state(*first))),
        calls(("b", "todo_list", {"command": "remove", "remove_indices": [1], "current_id": "17"})),
        *results(("b", state(("Retry failed uploads", True), ("Alarm", False)))),
        say("assistant", "Done with the retries."),
        say("user", "Go on."),
    ]
    compactor = Compactor(CompactionConfig(strategies=(MaskStrategy(),), keep_recent_n=0))
    after = compactor.compact(Conversation(tuple(messages)), max_tokens=1).conversation.messages
    assert after[3] == messages[3] and after[5] == messages[5]
    todos = rendered_todos(after)
    assert "[completed] Retry failed uploads" in todos and "- Alarm" in todos
    assert "[removed from the list] Replay last month" in todos


def rendered_todos(messages: tuple[Message, ...]) -> str:
    return "\n".join(render(extract_ledger(messages))).split("## To-dos")[1].split("\n## ")[0]


def test_words_a_user_writes_are_never_masked_whatever_their_length() -> None:
    words = "Output: the service must keep running while you look; " * 40
    messages = [
        say("system", "You are a coding agent."),
        say("user", "Find the stall."),
        say("assistant", "Let me look.\n```sh\ncat logs/w.log\n```"),
        say("user", words),
        say("assistant", "Understood."),
        say("user", "Go on."),
    ]
    compactor = Compactor(
        CompactionConfig(strategies=(MaskStrategy(min_chars=0),), keep_recent_n=0)
    )
    result = compactor.compact(Conversation(tuple(messages)), max_tokens=1)
    assert result.conversation.messages == tuple(messages)


def test_the_users_reply_in_a_tool_result_is_never_masked() -> None:
    # Roo Code hands the user's feedback on a completion back as the tool's result, Cline
    # appends it to a command's output: the words are the user's, the output before them is
    # the tool's.
    reply = " Raise the throttle to 40 per minute, the gateway raised our limit." * 12
    feedback = (
        "The user has provided feedback on the results. Consider their input to continue the "
        f"task, and then attempt completion again.\n<feedback>\n{reply.strip()}\n</feedback>"
    )
    log = "\n".join(f"worker {n}: sent reminder batch" for n in range(80))
    after_output = (
        f"{log}\n\nThe user provided the following feedback:\n<feedback>\nKeep it.\n</feedback>"
    )
    messages = [
        say("system", "You are a coding agent."),
        say("user", "Send the reminders."),
        calls(("a", "attempt_completion", {"result": "Reminders go out."})),
        *results(("a", feedback)),
        calls(("b", "execute_command", {"command": "php artisan reminders:work"})),
        *results(("b", after_output)),
        say("assistant", "Raising it."),
        say("user", "Go on."),
    ]
    compactor = Compactor(CompactionConfig(strategies=(MaskStrategy(),), keep_recent_n=0))
    after = compactor.compact(Conversation(tuple(messages)), max_tokens=1).conversation.messages
    assert after[3] == messages[3]
    masked = after[5].tool_results[0].text
    assert masked.startswith(MASK_PREFIX) and "worker 7:" not in masked
    assert masked.endswith(
        "The user provided the following feedback:\n<feedback>\nKeep it.\n</feedback>"
    )
    said = "\n".join(render(extract_ledger(after)))
    assert "- Keep it." in said and "Raise the throttle to 40 per minute" in said


def test_a_summary_an_earlier_compaction_shrank_grows_back_when_room_is_left() -> None:
    conversation = coding_session(30)
    compactor = Compactor(CompactionConfig(keep_recent_n=2))
    floor = compactor.count(conversation.with_messages(conversation.messages[:2]))
    tight = compactor.compact(conversation, max_tokens=floor + 260)
    shrunk = next(p for m in tight.conversation for p in m.parts if isinstance(p, SummaryPart))
    assert FULL_TEXT_KEY in shrunk.provider_data  # the first compaction had to shrink it
    # The agent goes on; one large new output is what the next compaction must make room
    # for, and masking it leaves room the shrunk summary can use again.
    listing = "\n".join(f"{n:4d}: row {n} of the export" for n in range(400))
    grown = tight.conversation.with_messages(
        (
            *tight.conversation.messages,
            calls(("x", "bash", {"command": "cat export.csv"})),
            *results(("x", listing)),
            say("assistant", "The export looks complete."),
        )
    )
    target = compactor.count(tight.conversation) + 1500
    result = compactor.compact(grown, max_tokens=target)
    assert result.receipt.target_met
    summary = next(p for m in result.conversation for p in m.parts if isinstance(p, SummaryPart))
    assert len(summary.text) > len(shrunk.text)
    assert "src/mod_3.py" in summary.text and "src/mod_3.py" not in shrunk.text


def test_an_earlier_summary_between_protected_turns_shrinks_when_only_it_can_give() -> None:
    # A digest an earlier compaction made in full, kept between the task and the live user
    # turn: no strategy may fold it again, so the target is met by rendering it smaller.
    conversation = coding_session(30)
    compactor = Compactor()
    earlier = compactor.compact(conversation, max_tokens=compactor.count(conversation) // 8)
    summary = next(m for m in earlier.conversation if m.is_summary)
    assert FULL_TEXT_KEY not in summary.parts[0].provider_data  # made in full
    task, *_ = (m for m in conversation if m.role == "user")
    later = conversation.with_messages(
        (
            conversation.messages[0],
            task,
            summary,
            say("user", "Now rename the session module."),
            say("assistant", "Renamed src/session.py to src/sessions.py."),
        )
    )
    target = compactor.count(later) - compactor.count(later.with_messages((summary,))) // 2
    result = compactor.compact(later, max_tokens=target)
    assert result.receipt.target_met, result.receipt.reason
    shrunk = next(m for m in result.conversation if m.is_summary)
    assert "- " in shrunk.text and len(shrunk.text) < len(summary.text)
    assert shrunk.parts[0].provider_data[FULL_TEXT_KEY] == summary.text


def test_a_large_digest_shrunk_into_a_room_fills_it() -> None:
    # Its lines' characters per token differ from the full rendering's: a rendering that
    # trusted the full one's ratio landed a quarter under the room it was given.
    conversation = OPENAI.decode(generate_session(11, target_tokens=300_000).payload)
    compactor = Compactor(CompactionConfig())
    ledger = extract_ledger(conversation.messages[1:])
    measure = compactor.counter_for(conversation).count_message
    rendering = DigestRendering(ledger, len(conversation) - 1, measure)
    full = measure(rendering.render(None))
    for budget in (full // 5, full // 3, full // 2):
        tokens = measure(rendering.render(budget))
        assert 0.9 * budget <= tokens <= budget, (budget, tokens)


def test_a_file_read_that_the_users_task_names_outlasts_the_other_reads() -> None:
    # The task, kept verbatim beside the digest, names the notifier: reading it is reading
    # what the work is about, and in a tight room it stays where later reads go.
    log = "\n".join(f"2026-11-24T10:{i:02d}:00Z INFO flushed batch {i}" for i in range(60))
    messages = [
        say("system", "You are a careful coding agent."),
        say("user", "Parked envelopes in notifier are never redelivered. Fix it."),
    ]
    for i, path in enumerate(["src/notifier.nim", *(f"logs/run{n}.log" for n in range(30))]):
        messages += [calls((f"c{i}", "read_file", {"path": path})), *results((f"c{i}", log))]
    messages.append(say("user", "Carry on."))
    conversation = OPENAI.decode(OPENAI.encode(Conversation(tuple(messages))))
    compactor = Compactor(CompactionConfig())
    result = compactor.compact(conversation, max_tokens=compactor.count(conversation) // 120)
    [summary] = [m for m in result.conversation if m.is_summary]
    assert "src/notifier.nim (read)" in summary.text
    assert "logs/run0.log (read)" not in summary.text


def test_a_code_agents_replies_stay_output_across_compactions() -> None:
    # A code agent's replies come in user messages; one left verbatim after its step was
    # compacted, and read again at the next compaction beside that compaction's own digest,
    # was taken for the user's words: whole logs kept verbatim, at the cost of the facts.
    session = family_sessions("smolagents-style", [1003], 32_000)[0].conversation
    compactor = Compactor(CompactionConfig())
    target = compactor.count(session) // 10
    view: list[Message] = []
    for index, message in enumerate(session.messages):
        if index % 30 == 29:
            view = list(
                compactor.compact(session.with_messages(view), max_tokens=target).conversation
            )
        view.append(message)
    final = compactor.compact(session.with_messages(view), max_tokens=target).conversation
    [summary] = [m for m in final if m.is_summary]
    said = summary.text.split("## What the user said")[1].split("\n## ")[0]
    assert "Observation:" not in said and "Execution logs" not in said


def test_a_digest_rendered_into_a_room_never_lands_over_it() -> None:
    # A rendering that used fewer characters than it was allowed and landed a few tokens
    # over its room was asked again for fewer of the characters it had not used: the same
    # lines came back on every try, and settling dropped the whole summary for two tokens.
    conversation = family_sessions("smolagents-style", [1000], 32_000)[0].conversation
    compactor = Compactor(CompactionConfig())
    ledger = extract_ledger(conversation.messages[1:])
    measure = compactor.counter_for(conversation).count_message
    rendering = DigestRendering(ledger, len(conversation) - 1, measure)
    least, full = measure(rendering.render(0)), measure(rendering.render(None))
    rooms = range(least, full, max((full - least) // 800, 1))
    over = [(room, tokens) for room in rooms if (tokens := measure(rendering.render(room))) > room]
    assert not over


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_filled_room_still_meets_the_target_once_the_shape_is_restored(dialect: str) -> None:
    # Settling fills the room to the last tokens; folding summaries back into the user's
    # turns (where roles alternate) may cost a few more: the target is still met.
    session = coding_session(24, dialect=dialect, output_lines=120)
    compactor = Compactor(CompactionConfig(keep_recent_n=4))
    half = session.with_messages(session.messages[:40])
    earlier = compactor.compact(half, max_tokens=compactor.count(half) // 4).conversation
    # The next compaction starts from a summary folded into the user's first turn.
    conversation = session.with_messages((*earlier.messages, *session.messages[40:]))
    tokens = compactor.count(conversation)
    for target in range(tokens // 6, tokens // 3, max(tokens // 80, 1)):
        result = compactor.compact(conversation, max_tokens=target)
        assert result.receipt.tokens_after <= target, (target, result.receipt.tokens_after)


def test_the_workspace_never_counts_less_than_the_conversation() -> None:
    # A user's words between two earlier summaries arrive as one message (Anthropic) and are
    # worked on as three: the count must not lose the framing the split adds, or a result
    # filled to the target lands a few tokens over it once it keeps them apart.
    base = coding_session(4, dialect="anthropic")
    first = summary_message(["## Files touched", "- src/a.py (modified)"], 20)
    second = summary_message(["## Files touched", "- src/b.py (modified)"], 3)
    between = Message("user", (*first.parts, TextPart("Also keep the API stable."), *second.parts))
    conversation = base.with_messages(
        (*base.messages[:2], say("assistant", "On it."), between, *base.messages[2:])
    )
    compactor = Compactor(CompactionConfig())
    counter = compactor.counter_for(conversation)
    total = counter.count(conversation).total
    work = compactor._workspace(conversation, counter, total, total // 2)
    assert len(work.slots) == len(conversation) + 2
    # What is not any message's (the reply's priming, tool schemas) is never negative: the
    # split's framing belongs to the slots, which count it, not to the conversation.
    assert work.overhead >= 0
    assert work.total() >= total


def test_a_masked_file_read_is_not_an_error_report_whatever_lines_it_holds() -> None:
    # The file's text holds error lines and a test-run summary: they are its content.
    source = "\n".join(
        [
            "def check():",
            '    raise ValueError("boom")',
            "# ValueError: boom",
            "# 3 failed, 1 passed",
        ]
        + [f"x_{n} = {n}" for n in range(200)]
    )
    conversation = Conversation(
        [
            say("user", "Look at checks.py."),
            calls(("c1", "read_file", {"path": "src/checks.py"})),
            *results(("c1", source)),
            say("assistant", "Read it."),
            say("user", "Thanks."),
        ]
    )
    compactor = Compactor(
        CompactionConfig(strategies=(MaskStrategy(min_chars=0),), keep_recent_n=0)
    )
    result = compactor.compact(conversation, max_tokens=1)
    masked = next(m.tool_results[0].text for m in result.conversation.messages if m.tool_results)
    assert masked.startswith(MASK_PREFIX)
    assert "; ok; original kept as m-" in masked
    assert "ValueError" not in masked and "failed" not in masked


def test_summaries_with_no_room_between_them_merge_into_the_one_that_fits() -> None:
    # Two digests either side of the live user turn, and the output the model is about to
    # read takes nearly all the room: only one digest's shortest lines fit. The other's facts
    # fold into it, kept beside its lines, for a later compaction with room to restore;
    # dropping it lost them for good.
    first = summary_message(["## Files touched", "- src/alpha.py (modified)"], 20)
    second = summary_message(["## Files touched", "- src/beta.py (created)"], 12)
    log = "\n".join(f"test_case_{n} ... ok ({n} ms)" for n in range(400))
    head = [say("system", "You are a coding agent."), say("user", "Fix the flaky tests.")]
    tail = [
        say("user", "Now run the whole suite."),
        second,
        calls(("c1", "run_tests", {"command": "pytest -q"})),
        *results(("c1", log)),
    ]
    conversation = Conversation((*head, first, *tail))
    compactor = Compactor()
    measure = compactor.counter_for(conversation).count_message
    shortest = max(
        measure(r.render(0))
        for r in (earlier_rendering(m, measure, shrunk_only=False) for m in (first, second))
        if r is not None
    )
    bare = compactor.count(conversation.with_messages((*head, *tail[:1], *tail[2:])))
    result = compactor.compact(conversation, max_tokens=bare + shortest + 5)
    assert result.receipt.target_met, result.receipt.reason
    out = result.conversation.messages
    assert out[-1] == conversation.messages[-1]
    summaries = [m for m in out if m.is_summary]
    assert len(summaries) == 1
    kept = full_text(summaries[0].parts[0])  # type: ignore[arg-type]
    assert "src/alpha.py" in kept and "src/beta.py" in kept
    # The next compaction, with room again, shows both in full.
    later = result.conversation.with_messages(
        (*out, say("assistant", "All green."), say("user", "Now update the changelog."))
    )
    again = compactor.compact(later, max_tokens=compactor.count(later) // 2)
    assert again.receipt.target_met, again.receipt.reason
    shown = next(m for m in again.conversation.messages if m.is_summary).text
    assert "src/alpha.py" in shown and "src/beta.py" in shown


def test_a_room_too_small_for_a_summary_preamble_keeps_a_bare_summary_not_none() -> None:
    # The output the model is about to read leaves a few dozen tokens: not one line fits
    # beside the summary's tags and preamble. The summary was dropped, and every later
    # compaction had lost its facts. The header alone around one line fits, with the full
    # text beside it for a later compaction with room to restore.
    lines = [
        "## What the user said",
        "- all timestamps stay in UTC, no local time anywhere",
        "## Files touched",
        "- src/alpha.py (modified)",
        "- src/beta.py (created)",
    ]
    first = summary_message(lines, 40)
    log = "\n".join(f"test_case_{n} ... ok ({n} ms)" for n in range(400))
    head = [say("system", "You are a coding agent."), say("user", "Fix the flaky tests.")]
    tail = [
        say("user", "Now run the whole suite."),
        calls(("c1", "run_tests", {"command": "pytest -q"})),
        *results(("c1", log)),
    ]
    conversation = Conversation((*head, first, *tail))
    compactor = Compactor()
    measure = compactor.counter_for(conversation).count_message
    rendering = earlier_rendering(first, measure, shrunk_only=False)
    assert rendering is not None
    # Room for the header and one short line, not for the tags and preamble beside them.
    room = 32
    envelope = say("user", "\n".join([OPEN_TAG, SHORT_PREAMBLE, CLOSE_TAG]))
    assert measure(envelope) + measure(say("user", lines[3])) > room
    bare = compactor.count(conversation.with_messages((*head, *tail)))
    result = compactor.compact(conversation, max_tokens=bare + room)
    assert result.receipt.target_met, result.receipt.reason
    out = result.conversation.messages
    assert out[-1] == conversation.messages[-1]
    [summary] = [m for m in out if m.is_summary]
    assert summary.text.startswith("[compacted: 40 messages")
    assert "- " in summary.text.split("\n", 1)[1]  # one line, not an empty envelope
    kept = full_text(summary.parts[0])  # type: ignore[arg-type]
    assert "src/alpha.py" in kept and "src/beta.py" in kept and "UTC" in kept
    # The next compaction, with room again, shows everything in full.
    later = result.conversation.with_messages(
        (*out, say("assistant", "All green."), say("user", "Now update the changelog."))
    )
    again = compactor.compact(later, max_tokens=compactor.count(later) // 2)
    assert again.receipt.target_met, again.receipt.reason
    shown = next(m for m in again.conversation.messages if m.is_summary).text
    assert "src/alpha.py" in shown and "src/beta.py" in shown and "UTC" in shown
