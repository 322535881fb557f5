"""SWE-agent `.traj` dialect: the 22 real trajectories in /work/shared/data, observation
marking, the OpenAI output and its validation, decode errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from compaction.dialects import OPENAI, TRAJ, decode_any, detect_dialect
from compaction.dialects.swe_traj import observation_note
from compaction.exceptions import DecodeError
from compaction.messages import TextPart, ToolCallPart

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swe-agent-trajectories"
FILES = sorted(DATA.glob("*.traj")) if DATA.is_dir() else []
needs_data = pytest.mark.skipif(
    not FILES, reason=f"SWE-agent trajectories not found at {DATA} (shared data folder absent)"
)
OPENAI_MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id"}
TRAJ_ONLY_KEYS = {"message_type", "agent", "thought", "action", "is_demo", "tool_call_ids"}


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def expected_violations(history: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """What is genuinely wrong in a history for OpenAI, worked out from the raw JSON alone:
    a tool call id reused while still unanswered, and calls no tool entry answers before the
    next other message.
    Holds only while every tool entry answers one call (then wire index == history index)."""
    assert all(len(m.get("tool_call_ids") or [None]) == 1 for m in history)
    found: list[tuple[int, str]] = []
    pending: dict[str, int] = {}
    for i, message in enumerate(history):
        if message["role"] == "tool":
            pending.pop(message["tool_call_ids"][0], None)
            continue
        found.extend((index, "unanswered_tool_call") for index in sorted(set(pending.values())))
        pending = {}
        for call in message.get("tool_calls") or []:
            if call["id"] in pending:
                found.append((i, "duplicate_tool_call_id"))
            pending[call["id"]] = i
    found.extend((index, "unanswered_tool_call") for index in sorted(set(pending.values())))
    return sorted(found)


def history_only(history: list[dict[str, Any]]) -> dict[str, Any]:
    return {"history": history}


# ---------------------------------------------------------------------------- real files


@needs_data
def test_all_22_trajectories_are_present() -> None:
    assert len(FILES) == 22


@needs_data
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_real_trajectory_decodes_and_encodes_to_clean_openai(path: Path) -> None:
    payload = load(path)
    history = payload["history"]
    assert detect_dialect(payload) == "traj"
    conversation = decode_any(payload)
    assert conversation.dialect == "traj"
    assert len(conversation) == len(history)

    encoded = TRAJ.encode(conversation)
    assert list(encoded) == ["messages"]
    for source, wire in zip(history, encoded["messages"], strict=True):
        assert set(wire) <= OPENAI_MESSAGE_KEYS
        assert wire["role"] == source["role"]
        assert wire["content"] == source["content"]
        if source.get("tool_calls"):
            assert wire["tool_calls"] == source["tool_calls"]
        if source["role"] == "tool":
            assert [wire["tool_call_id"]] == source["tool_call_ids"]

    again = OPENAI.decode(encoded)
    assert OPENAI.encode(again) == encoded
    found = [(v.index, v.rule) for v in TRAJ.validate(conversation)]
    assert found == expected_violations(history)
    assert found == [(v.index, v.rule) for v in OPENAI.validate(again)]


@needs_data
def test_the_replayed_function_calling_runs_reuse_answered_tool_call_ids() -> None:
    # These runs reuse ids across turns, after each was answered: valid, and must stay so.
    run = load(DATA / "marshmallow-1867__function_calling__install-1.traj")
    ids = [c["id"] for m in run["history"] for c in m.get("tool_calls") or []]
    assert len(ids) > len(set(ids))
    assert expected_violations(run["history"]) == []
    assert TRAJ.validate(TRAJ.decode(run)) == []


@needs_data
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_real_trajectory_messages_are_marked(path: Path) -> None:
    history = load(path)["history"]
    conversation = TRAJ.decode(history_only(history))
    first_action = next(i for i, m in enumerate(history) if m["role"] == "assistant")
    for i, (source, message) in enumerate(zip(history, conversation, strict=True)):
        data = message.provider_data
        assert data["traj.index"] == i
        kind = data["traj.message_type"]
        if source["role"] == "system":
            assert kind == "system_prompt" and message.pinned
        elif source.get("is_demo"):
            assert kind == "demonstration"
        elif source["role"] == "assistant":
            assert kind == "action"
            assert data["traj.fields"]["thought"] == source["thought"]
            assert data["traj.fields"]["action"] == source["action"]
        elif source["role"] == "tool" or i > first_action:
            assert kind == "observation"
        else:
            assert kind == "task"
        assert set(data["traj.fields"]) == set(source) - {
            "role",
            "content",
            "tool_calls",
            "tool_call_ids",
        }
    kinds = [m.provider_data["traj.message_type"] for m in conversation]
    assert kinds.count("task") == 1
    task = kinds.index("task")
    assert conversation[task].role == "user"


@needs_data
def test_function_calling_run_decodes_tool_calls() -> None:
    conversation = TRAJ.decode(load(DATA / "demonstrations__function_calling_simple.traj"))
    first_call = conversation[2].tool_calls[0]
    assert first_call == ToolCallPart(
        "call_PbWErNIge3YTrli3fiVvmIid", "find_file", '{"file_name":"missing_colon.py"}'
    )
    answer = conversation[3]
    assert answer.role == "tool"
    assert answer.tool_results[0].tool_call_id == first_call.id
    assert answer.provider_data["traj.message_type"] == "observation"


@needs_data
def test_trajectory_level_fields_are_kept_but_not_emitted() -> None:
    payload = load(DATA / "marshmallow-1867__function_calling__install-1.traj")
    conversation = TRAJ.decode(payload)
    kept = conversation.provider_data["traj.fields"]
    assert set(kept) == set(payload) - {"history"}
    assert "info" in kept
    assert set(TRAJ.encode(conversation)) == {"messages"}


# ------------------------------------------------------------------------------- synthetic

CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "bash", "arguments": '{"command":"ls"}'},
}


def fc_history() -> list[dict[str, Any]]:
    return [
        {
            "role": "system",
            "content": "SETTING: ...",
            "agent": "main",
            "message_type": "system_prompt",
        },
        {
            "role": "user",
            "content": "Fix the issue.",
            "agent": "main",
            "message_type": "observation",
        },
        {
            "role": "assistant",
            "content": "List files first.",
            "thought": "List files first.",
            "action": "ls",
            "agent": "main",
            "tool_calls": [CALL],
            "message_type": "action",
        },
        {
            "role": "tool",
            "content": "a.py",
            "agent": "main",
            "message_type": "observation",
            "tool_call_ids": ["call_1"],
        },
    ]


def test_history_ending_with_an_unanswered_call_decodes_and_is_reported() -> None:
    history = fc_history()[:3]
    conversation = TRAJ.decode({"history": history})
    assert len(conversation) == 3
    assert [(v.index, v.rule) for v in TRAJ.validate(conversation)] == [(2, "unanswered_tool_call")]


def test_observation_answering_several_calls_answers_each() -> None:
    history = fc_history()
    history[2]["tool_calls"] = [CALL, {**CALL, "id": "call_2"}]
    history[3]["tool_call_ids"] = ["call_1", "call_2"]
    conversation = TRAJ.decode({"history": history})
    assert [m.role for m in conversation] == ["system", "user", "assistant", "tool", "tool"]
    first, second = conversation[3], conversation[4]
    assert first.tool_results[0].text == "a.py"
    assert second.tool_results[0].tool_call_id == "call_2"
    assert second.tool_results[0].text == observation_note("call_1")
    assert second.provider_data["traj.index"] == 3
    assert TRAJ.validate(conversation) == []


def test_list_content_is_read_as_text_parts() -> None:
    history = [
        {"role": "system", "content": [{"type": "text", "text": "SETTING"}], "agent": "primary"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Task."}, {"type": "text", "text": "More."}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ls"}],
            "action": "ls",
            "thought": "",
        },
        {"role": "user", "content": [{"type": "text", "text": "a.py"}]},
    ]
    conversation = TRAJ.decode({"history": copy.deepcopy(history)})
    assert conversation[1].parts == (TextPart("Task."), TextPart("More."))
    assert conversation[3].provider_data["traj.message_type"] == "observation"
    encoded = TRAJ.encode(conversation)
    assert [m["content"] for m in encoded["messages"]] == [m["content"] for m in history]
    assert TRAJ.validate(conversation) == []


def test_demo_and_task_are_not_observations() -> None:
    history = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "Here is a demonstration ...", "is_demo": True},
        {"role": "user", "content": "The task."},
        {"role": "assistant", "content": "ls", "action": "ls"},
        {"role": "user", "content": "a.py"},
    ]
    kinds = [m.provider_data["traj.message_type"] for m in TRAJ.decode({"history": history})]
    assert kinds == ["system_prompt", "demonstration", "task", "action", "observation"]


def test_traj_fields_never_reach_the_openai_output() -> None:
    encoded = TRAJ.encode(
        TRAJ.decode({"history": fc_history(), "info": {"exit_status": "submitted"}})
    )
    keys = {k for m in encoded["messages"] for k in m}
    assert keys == OPENAI_MESSAGE_KEYS
    assert not keys & TRAJ_ONLY_KEYS
    assert encoded["messages"][3] == {"role": "tool", "content": "a.py", "tool_call_id": "call_1"}


@pytest.mark.parametrize(
    ("payload", "location", "fragment"),
    [
        ([{"role": "user", "content": "x"}], "payload", "`history` list"),
        ({"trajectory": []}, "history", "missing"),
        ({"history": {"role": "user"}}, "history", "expected a list"),
        ({"history": [{"role": "system", "content": "s"}, "oops"]}, "history[1]", "message object"),
        ({"history": [{"role": "observer", "content": "s"}]}, "history[0].role", "unknown role"),
        ({"history": [{"content": "s"}]}, "history[0].role", "missing `role`"),
        ({"history": [{"role": "user", "content": 5}]}, "history[0].content", "got number"),
        (
            {"history": [{"role": "tool", "content": "x", "tool_call_ids": []}]},
            "history[0].tool_call_ids",
            "non-empty",
        ),
        (
            {"history": [{"role": "assistant", "content": "x", "tool_calls": "ls"}]},
            "history[0].tool_calls",
            "expected a list",
        ),
        (
            {
                "history": [
                    {"role": "user", "content": "go"},
                    {
                        "role": "assistant",
                        "content": "x",
                        "tool_calls": [
                            {**CALL, "function": {"name": "bash", "arguments": {"command": "ls"}}}
                        ],
                    },
                ]
            },
            "history[1].tool_calls[0].function.arguments",
            "JSON text",
        ),
    ],
)
def test_decode_errors_name_the_location(payload: Any, location: str, fragment: str) -> None:
    with pytest.raises(DecodeError) as caught:
        TRAJ.decode(payload)
    assert caught.value.location == location
    assert fragment in str(caught.value)
