"""The session generator and the retention ruler (`compaction.eval`).

The generator's promises: deterministic per seed, at least the requested size, a valid
OpenAI transcript, facts of every category spread over the session with about the requested
share of cue words, and probes that occur only where their fact was planted. The ruler's:
survival means every probe string is present, case-insensitively; stale forms are reported.
"""

from __future__ import annotations

import json
import random
import statistics
from collections import Counter
from functools import cache
from typing import Any

import pytest

import compaction.eval
from compaction.eval import (
    CATEGORIES,
    CHARS_PER_TOKEN,
    CUE_WORDS,
    REQUIRED_CATEGORIES,
    Fact,
    GeneratedSession,
    ProbeLeakError,
    generate_session,
    score,
    text_of_message,
    text_of_payload,
)
from compaction.eval.generate import BASE_FACT_COUNTS, TOOLS, _check_probes, _Planted
from compaction.exceptions import InputError

TOOL_PARAMS = {t["function"]["name"]: set(t["function"]["parameters"]["required"]) for t in TOOLS}


@cache
def session(seed: int, **kw: Any) -> GeneratedSession:
    return generate_session(seed, **kw)


def messages(s: GeneratedSession) -> list[dict[str, Any]]:
    return list(s.payload["messages"])


def has_cue(text: str) -> bool:
    return any(cue.casefold() in text.casefold() for cue in CUE_WORDS)


# --- determinism and size ---------------------------------------------------------------------


def test_same_seed_gives_byte_identical_payload_and_facts() -> None:
    a = generate_session(11, target_tokens=8_000)
    b = generate_session(11, target_tokens=8_000)
    assert json.dumps(a.payload) == json.dumps(b.payload)
    assert a.facts == b.facts


def test_different_seeds_give_different_sessions() -> None:
    dumps = {json.dumps(session(seed).payload) for seed in range(4)}
    assert len(dumps) == 4
    probes = [{f.probe for f in session(seed).facts} for seed in range(4)]
    assert all(probes[0] != other for other in probes[1:])


def test_editing_a_payload_does_not_change_the_next_session() -> None:
    first = generate_session(9, target_tokens=4_000)
    first.payload["tools"][0]["function"]["name"] = "changed"
    first.payload["messages"].clear()
    again = generate_session(9, target_tokens=4_000)
    assert again.payload["tools"][0]["function"]["name"] == "read_file"
    assert again.payload["messages"]


def test_global_random_state_is_neither_used_nor_disturbed() -> None:
    random.seed(1)
    a = generate_session(5, target_tokens=4_000)
    random.seed(2)
    b = generate_session(5, target_tokens=4_000)
    assert json.dumps(a.payload) == json.dumps(b.payload)
    random.seed(7)
    expected = random.random()
    random.seed(7)
    generate_session(6, target_tokens=4_000)
    assert random.random() == expected


def test_seeds_draw_from_varied_projects_and_templates() -> None:
    packages = {
        messages(session(seed))[0]["content"].split("/home/dev/")[1][:6] for seed in range(6)
    }
    assert len(packages) >= 3
    constraint_probes = {
        f.probe for seed in range(6) for f in session(seed).facts if f.category == "constraint"
    }
    assert len(constraint_probes) >= 12


@pytest.mark.parametrize("target", [3_000, 25_000, 60_000])
def test_session_is_at_least_the_target_size(target: int) -> None:
    s = session(3, target_tokens=target)
    assert len(json.dumps(s.payload)) / CHARS_PER_TOKEN >= target
    assert s.approx_tokens >= target


@pytest.mark.parametrize("target", [25_000, 60_000])
def test_session_does_not_overshoot_a_realistic_target_by_much(target: int) -> None:
    for seed in range(3):
        assert session(seed, target_tokens=target).approx_tokens <= 1.3 * target


def test_fact_counts_scale_with_the_target() -> None:
    small = len(session(2, target_tokens=8_000).facts)
    large = len(session(2, target_tokens=60_000).facts)
    assert large > 2 * small


def test_tool_output_scale_makes_tool_output_bigger() -> None:
    def mean_tool_size(scale: float) -> float:
        sizes = [
            len(m["content"])
            for seed in range(3)
            for m in messages(session(seed, tool_output_scale=scale))
            if m["role"] == "tool"
        ]
        return statistics.mean(sizes)

    assert mean_tool_size(2.0) > 1.5 * mean_tool_size(0.5)


@pytest.mark.parametrize(
    "kw",
    [
        {"target_tokens": 0},
        {"cued_fraction": -0.1},
        {"cued_fraction": 1.5},
        {"tool_output_scale": 0.0},
    ],
)
def test_bad_arguments_are_refused(kw: dict[str, Any]) -> None:
    with pytest.raises(InputError):
        generate_session(0, **kw)


# --- a valid transcript -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_payload_is_a_valid_openai_chat_request(seed: int) -> None:
    s = session(seed)
    assert s.payload["model"] == "gpt-4o"
    assert {t["function"]["name"] for t in s.payload["tools"]} == set(TOOL_PARAMS)
    msgs = messages(s)
    assert [m["role"] for m in msgs[:4]] == ["system", "user", "assistant", "tool"]
    pending: dict[str, str] = {}
    seen_ids: set[str] = set()
    for i, m in enumerate(msgs):
        assert m["role"] in {"system", "user", "assistant", "tool"}, i
        if m["role"] != "tool":
            assert not pending, f"message {i} comes before tool calls {pending} are answered"
        if m["role"] == "system":
            assert i == 0
        if m["role"] == "user":
            assert isinstance(m["content"], str) and m["content"].strip(), i
            assert msgs[i - 1]["role"] != "user", f"two user messages in a row at {i}"
        if m["role"] == "assistant":
            calls = m.get("tool_calls") or []
            assert calls or (isinstance(m["content"], str) and m["content"].strip()), i
            for call in calls:
                assert call["type"] == "function"
                assert call["id"] not in seen_ids
                seen_ids.add(call["id"])
                args = json.loads(call["function"]["arguments"])
                assert isinstance(args, dict)
                name = call["function"]["name"]
                assert set(args) == TOOL_PARAMS[name], (i, name, args)
                assert all(isinstance(v, str) for v in args.values())
                pending[call["id"]] = name
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, f"orphan tool result at {i}"
            del pending[m["tool_call_id"]]
            assert isinstance(m["content"], str) and m["content"], i
    assert not pending
    assert msgs[-1]["role"] in {"user", "tool"}


def test_an_assistant_message_without_tool_calls_ends_the_turn() -> None:
    # In a real agent loop such a message hands over to the user; the agent never carries on.
    for seed in range(8):
        msgs = messages(session(seed))
        for i, m in enumerate(msgs[:-1]):
            if m["role"] == "assistant" and not m.get("tool_calls"):
                assert msgs[i + 1]["role"] == "user", (seed, i)


def test_sessions_end_both_on_a_live_user_turn_and_on_tool_results() -> None:
    assert {messages(session(seed))[-1]["role"] for seed in range(10)} == {"user", "tool"}


def test_sessions_have_parallel_calls_mid_session_users_and_realistic_outputs() -> None:
    for seed in range(3):
        msgs = messages(session(seed))
        assert any(len(m.get("tool_calls") or []) >= 2 for m in msgs)
        assert sum(m["role"] == "user" for m in msgs) >= 4
        assert sum(m["role"] == "assistant" for m in msgs) >= 40
    outputs = "\n".join(
        text_of_message(m).replace("\\t", "\t").replace("\\n", "\n")
        for seed in range(6)
        for m in messages(session(seed))
        if m["role"] == "tool"
    )
    for shapes in (
        ("test session starts",),  # pytest banner
        (" passed in ",),  # pytest summary
        (" failed, ",),  # a failing run
        ("E       ",),  # a traceback line in pytest's long format
        ("Traceback (most recent call last)", "FAILURES"),
        ("\tdef ",),  # a numbered source line
        ("Successfully installed",),  # pip
        ("has_more",),  # a JSON API reply
        ("diff --git", "On branch", "(#"),  # git diff, status or log
    ):
        assert any(shape in outputs for shape in shapes), shapes


# --- facts: coverage, cues, depth -------------------------------------------------------------


def test_default_session_plants_every_category_in_the_base_counts() -> None:
    counts = Counter(f.category for f in session(0).facts)
    assert counts == Counter(BASE_FACT_COUNTS)
    # The final test status and the last message are read off real sessions, not planted.
    assert set(counts) == set(CATEGORIES) - {"test_status", "last_message"}


@pytest.mark.parametrize("seed", range(4))
def test_fact_flags_are_consistent(seed: int) -> None:
    facts = session(seed).facts
    assert len({f.id for f in facts}) == len(facts)
    for f in facts:
        assert f.critical == (f.required and f.category in REQUIRED_CATEGORIES), f.id
        assert f.probe and all(p for p in f.probe), f.id
        assert f.planted_in, f.id
    by_category: dict[str, list[Fact]] = {}
    for f in facts:
        by_category.setdefault(f.category, []).append(f)
    assert all(not f.required for f in by_category["error_resolved"])
    assert all(f.required for f in by_category["error_open"])
    assert any(not f.required for f in by_category["todo"])  # a to-do finished later
    assert all(f.stale for f in by_category["changed_value"])
    assert any(f.stale for f in by_category["decision"])  # a superseded decision
    buried = [f for f in by_category["identifier"] if f.buried]
    assert buried and not any(f.cued for f in buried)
    for f in buried:
        assert all(messages(session(seed))[i]["role"] == "tool" for i in f.planted_in)


def test_changed_values_appear_twice_with_the_old_value_first() -> None:
    for seed in range(4):
        s = session(seed)
        texts = [text_of_message(m).casefold() for m in messages(s)]
        for f in (f for f in s.facts if f.category == "changed_value"):
            old_at = [i for i, t in enumerate(texts) if f.stale[0].casefold() in t]
            new_at = [i for i, t in enumerate(texts) if f.probe[1].casefold() in t]
            assert old_at and new_at
            assert min(old_at) < min(new_at)
            assert all(messages(s)[i]["role"] == "user" for i in old_at + new_at)


@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.8])
def test_cued_fraction_is_honoured(fraction: float) -> None:
    for seed in range(3):
        facts = session(seed, cued_fraction=fraction).facts
        share = sum(f.cued for f in facts) / len(facts)
        assert abs(share - fraction) <= 0.06, (seed, share)


def test_cued_facts_carry_a_cue_word_and_uncued_facts_do_not() -> None:
    for seed in range(4):
        for f in session(seed).facts:
            assert has_cue(f.text) == f.cued, (f.id, f.text)


def test_decisions_and_todos_come_both_cued_and_uncued() -> None:
    facts = [f for seed in range(3) for f in session(seed).facts]
    for category in ("decision", "todo", "constraint"):
        flags = [f.cued for f in facts if f.category == category]
        assert 0.3 <= sum(flags) / len(flags) <= 0.7, category


def test_an_uncued_session_has_no_cue_word_in_any_user_or_assistant_message() -> None:
    for seed in range(3):
        s = session(seed, cued_fraction=0.0)
        assert not any(f.cued for f in s.facts)
        for m in messages(s):
            if m["role"] in {"user", "assistant", "system"}:
                assert not has_cue(text_of_message(m)), text_of_message(m)[:200]


def test_a_fully_cued_session_cues_everything_that_can_carry_a_cue() -> None:
    facts = session(1, cued_fraction=1.0).facts
    for f in facts:
        can_carry = not f.buried and f.category != "error_resolved"
        assert f.cued == can_carry, f.id


def test_facts_are_spread_over_early_middle_and_late() -> None:
    for seed in range(4):
        depths = Counter(f.depth for f in session(seed).facts)
        total = sum(depths.values())
        for depth in ("early", "middle", "late"):
            assert depths[depth] >= 0.2 * total, (seed, depths)
    constraint_depths = {
        f.depth for seed in range(4) for f in session(seed).facts if f.category == "constraint"
    }
    assert constraint_depths == {"early", "middle", "late"}


def test_depth_is_where_the_fact_first_appears() -> None:
    s = session(2)
    sizes = [len(json.dumps(m)) for m in messages(s)]
    total = sum(sizes)
    for f in s.facts:
        position = sum(sizes[: f.planted_in[0]]) / total
        expected = "early" if position < 1 / 3 else "middle" if position < 2 / 3 else "late"
        # Separators make the generator's offsets a hair larger; allow a message of slack.
        if abs(position - 1 / 3) > 0.01 and abs(position - 2 / 3) > 0.01:
            assert f.depth == expected, f.id


# --- an honest ruler --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "kw"),
    [
        (0, {}),
        (1, {"cued_fraction": 0.0}),
        (2, {"tool_output_scale": 2.0}),
        (3, {"target_tokens": 60_000}),
    ],
)
def test_every_fact_survives_in_the_uncompacted_session(seed: int, kw: dict[str, Any]) -> None:
    s = session(seed, **kw)
    for text in (text_of_payload(s.payload), json.dumps(s.payload)):
        marks = score(s.facts, text)
        assert all(r.survived for r in marks.results), [
            r.fact.id for r in marks.results if not r.survived
        ]
        assert marks.stale_as_current == []


@pytest.mark.parametrize(
    ("seed", "kw"),
    [
        (0, {}),
        (4, {"cued_fraction": 0.0}),
        (5, {"cued_fraction": 1.0}),
        (6, {"target_tokens": 60_000}),
    ],
)
def test_no_probe_can_be_satisfied_outside_the_messages_it_was_planted_in(
    seed: int, kw: dict[str, Any]
) -> None:
    s = session(seed, **kw)
    msgs = messages(s)
    texts = [text_of_message(m) + "\n" + json.dumps(m) for m in msgs]
    for f in s.facts:
        for i in f.planted_in:
            assert all(p.casefold() in texts[i].casefold() for p in f.probe), (f.id, i)
        rest = "\n".join(t for i, t in enumerate(texts) if i not in f.planted_in)
        assert not score([f], rest).results[0].survived, f.id
        # Scored the way the benchmark scores: drop the planted messages, the fact is lost.
        kept = [m for i, m in enumerate(msgs) if i not in f.planted_in]
        assert not score([f], text_of_payload({"messages": kept})).results[0].survived, f.id


def test_the_generator_refuses_a_probe_that_leaks() -> None:
    fact = _Planted("constraint-1", "constraint", "x", ("migrations folder",), carriers=[1])
    clean = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Don't touch the migrations folder."},
        {"role": "assistant", "content": "Sure."},
    ]
    _check_probes([fact], clean)
    leaky = [*clean[:2], {"role": "assistant", "content": "I left the Migrations Folder alone."}]
    with pytest.raises(ProbeLeakError, match="constraint-1"):
        _check_probes([fact], leaky)
    unplanted = [clean[0], {"role": "user", "content": "hello"}, clean[2]]
    with pytest.raises(ProbeLeakError, match="missing"):
        _check_probes([fact], unplanted)


def test_a_probe_that_json_would_escape_is_refused() -> None:
    fact = _Planted("x-1", "identifier", "x", ('say "hi"',), carriers=[0])
    with pytest.raises(ProbeLeakError, match="escaping"):
        _check_probes([fact], [{"role": "user", "content": 'say "hi"'}])


# --- the scorer on hand-made cases ------------------------------------------------------------


def fact(id: str, category: str, probe: tuple[str, ...], **kw: Any) -> Fact:
    defaults: dict[str, Any] = {"text": id, "depth": "early", "cued": False, "critical": False}
    return Fact(id=id, category=category, probe=probe, **{**defaults, **kw})  # type: ignore[arg-type]


FACTS = [
    fact("c1", "constraint", ("migrations folder",), critical=True),
    fact("f1", "file_modified", ("src/app/cache.py",), depth="middle", critical=True),
    fact(
        "v1",
        "changed_value",
        ("request timeout", "45 seconds"),
        stale=("30 seconds",),
        depth="late",
        critical=True,
    ),
    fact("e1", "error_resolved", ("KeyError: 'session_id'",), required=False),
]


def test_everything_kept_scores_full_marks() -> None:
    text = "keep the migrations folder; edited src/app/cache.py; request timeout is 45 seconds"
    marks = score(FACTS, text)
    assert marks.survival_rate == 1.0
    assert marks.lost == [] and marks.critical_lost == []
    assert {c: r.value for c, r in marks.by_category.items()} == {
        "constraint": 1.0,
        "file_modified": 1.0,
        "changed_value": 1.0,
    }


def test_empty_text_scores_zero_and_loses_every_required_fact() -> None:
    marks = score(FACTS, "")
    assert marks.survival_rate == 0.0
    assert [f.id for f in marks.lost] == ["c1", "f1", "v1"]
    assert [f.id for f in marks.critical_lost] == ["c1", "f1", "v1"]
    assert all(r.kept == 0 and r.total == 1 for r in marks.by_depth.values())
    assert set(marks.by_depth) == {"early", "middle", "late"}


def test_optional_facts_are_reported_but_not_counted_in_the_rates() -> None:
    marks = score(FACTS, "KeyError: 'session_id' and the migrations folder")
    assert marks.overall.kept == 1 and marks.overall.total == 3
    assert "error_resolved" not in marks.by_category
    assert marks.optional_by_category["error_resolved"].value == 1.0
    assert [f.id for f in marks.lost] == ["f1", "v1"]


def test_matching_is_case_insensitive() -> None:
    marks = score(FACTS, "THE MIGRATIONS FOLDER, SRC/APP/CACHE.PY, Request Timeout: 45 SECONDS")
    assert marks.survival_rate == 1.0


def test_every_probe_string_must_be_present() -> None:
    result = score(FACTS, "request timeout unchanged").results[2]
    assert not result.survived
    assert result.missing == ("45 seconds",)


def test_a_superseded_value_shown_alone_is_stale_as_current() -> None:
    stale = score(FACTS, "request timeout: 30 seconds")
    assert [f.id for f in stale.stale_as_current] == ["v1"]
    both = score(FACTS, "request timeout 45 seconds (was 30 seconds)")
    assert both.stale_as_current == [] and both.results[2].survived
    neither = score(FACTS, "nothing about it")
    assert neither.stale_as_current == []


def test_a_rate_of_an_empty_group_is_full() -> None:
    marks = score([], "anything")
    assert marks.overall.total == 0 and marks.survival_rate == 1.0
    assert marks.by_category == {} and marks.by_depth == {}


def test_text_of_payload_reads_every_kind_of_content() -> None:
    payload = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "system words"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "part one"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "text", "text": "part two"},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "src/x.py"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "file body"},
            {"role": "assistant", "function_call": {"name": "bash", "arguments": "{}"}},
        ],
    }
    text = text_of_payload(payload)
    for needle in (
        "system words",
        "part one",
        "part two",
        "read_file",
        "src/x.py",
        "file body",
        "bash(",
    ):
        assert needle in text, needle
    assert "base64" not in text


def test_score_accepts_the_json_of_a_transcript() -> None:
    payload = {"messages": [{"role": "user", "content": 'Keep the "migrations folder"\nas is'}]}
    assert score(FACTS[:1], json.dumps(payload)).survival_rate == 1.0


def test_public_names_exist() -> None:
    assert len(compaction.eval.__all__) == len(set(compaction.eval.__all__))
    for name in compaction.eval.__all__:
        assert hasattr(compaction.eval, name), name
