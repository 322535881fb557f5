"""pydantic-ai messages ↔ Conversation: lossless for every part type pydantic-ai has."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import subprocess
import sys
import typing
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import messages as pm
from pydantic_ai._deferred_capabilities import (
    LoadCapabilityCallPart,
    LoadCapabilityReturn,
    LoadCapabilityReturnPart,
)
from pydantic_ai._tool_search import (
    NativeToolSearchCallPart,
    NativeToolSearchReturnPart,
    ToolSearchCallPart,
    ToolSearchReturnPart,
)

from compaction.integrations.pydantic_ai import from_conversation, to_conversation
from compaction.messages import ImagePart, Message, SummaryPart, TextPart, ToolResultPart
from compaction.serialize import message_from_dict, message_to_dict

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
T = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


@dataclasses.dataclass(kw_only=True)
class ProgressPart(pm.DataCapabilityPart[str], namespace="tests", tag="progress_report"):
    """A capability's data: it reaches the model framed, on the user's channel."""


@dataclasses.dataclass(kw_only=True)
class RequestsLeftPart(pm.InstructionCapabilityPart, namespace="tests"):
    """A capability's instruction: the application's voice, mid-conversation."""


def every_part_history() -> list[pm.ModelMessage]:
    """One history holding every request and response part type, with ids, timestamps,
    signatures, provider details and metadata set."""
    return [
        pm.ModelRequest(
            parts=[
                pm.SystemPromptPart("You are careful.", timestamp=T),
                pm.UserPromptPart(
                    [
                        "Fix the failing test; the screenshot shows it.",
                        pm.BinaryContent(
                            PNG, media_type="image/png", vendor_metadata={"detail": "high"}
                        ),
                        pm.ImageUrl("https://example.com/a.png"),
                        pm.DocumentUrl("https://example.com/spec.pdf"),
                        pm.AudioUrl("https://example.com/a.mp3"),
                        pm.CachePoint(),
                        pm.TextContent("tagged", metadata={"k": 1}),
                    ],
                    timestamp=T,
                ),
                pm.InstructionDeltaPart(id=None, content="be brief"),
                pm.ToolAvailabilityDeltaPart(tools_added=["read_file"]),
                pm.CapabilityLoadDeltaPart(loaded=["cap"]),
                pm.ModelSettingsDeltaPart(settings={"thinking": "high"}),
                pm.InstructionBaselinePart(instructions=[pm.InstructionPart("base")]),
            ],
            timestamp=T,
            instructions="Be careful.",
            run_id="run-1",
            conversation_id="conv-1",
            metadata={"m": 1},
        ),
        pm.ModelResponse(
            parts=[
                pm.ThinkingPart(
                    "let me look", id="th1", signature="sig-1", provider_name="anthropic"
                ),
                pm.TextPart("Looking.", id="t1", provider_details={"x": 1}),
                pm.ToolCallPart("read_file", {"path": "a.py"}, "c1", id="i1"),
                pm.ToolCallPart("grep", '{"pattern": "x"}', "c2"),
                pm.ToolCallPart("shot", {}, "c3"),
                pm.ToolCallPart("flaky", {}, "c4"),
                pm.ToolCallPart("bad", {"n": "x"}, "c5"),
                ToolSearchCallPart(args={"queries": ["q"]}, tool_call_id="c6"),
                LoadCapabilityCallPart(args={"id": "cap"}, tool_call_id="c7"),
                pm.NativeToolCallPart("web_search", {"q": "x"}, "n1", provider_name="openai"),
                pm.NativeToolReturnPart("web_search", {"hits": 1}, "n1", provider_name="openai"),
                NativeToolSearchCallPart(
                    args={"queries": ["q"]}, tool_call_id="n2", provider_name="openai"
                ),
                NativeToolSearchReturnPart(
                    content={"discovered_tools": []}, tool_call_id="n2", provider_name="openai"
                ),
                pm.CompactionPart(
                    None, id="cp1", provider_name="openai", provider_details={"e": "x"}
                ),
                pm.FilePart(pm.BinaryContent(PNG, media_type="image/png")),
                pm.FilePart(pm.BinaryContent(b"%PDF", media_type="application/pdf")),
                pm.SpeechPart(speaker="assistant", transcript="spoken"),
            ],
            model_name="m-1",
            timestamp=T,
            provider_name="openai",
            provider_response_id="resp-1",
            finish_reason="tool_call",
            run_id="run-1",
            usage=pm.RequestUsage(input_tokens=10, output_tokens=5),
        ),
        pm.ModelRequest(
            parts=[
                pm.ToolReturnPart(
                    "read_file", "def f(): ...", "c1", timestamp=T, metadata={"ok": True}
                ),
                pm.ToolReturnPart("grep", {"matches": ["a.py:1"]}, "c2", timestamp=T),
                pm.ToolReturnPart(
                    "shot",
                    ["the page", pm.BinaryContent(PNG, media_type="image/png")],
                    "c3",
                    timestamp=T,
                ),
                pm.ToolReturnPart("flaky", "boom", "c4", outcome="failed", timestamp=T),
                pm.ToolReturnPart(
                    "bad",
                    "n must be an int",
                    "c5",
                    outcome="retried",
                    retry=pm.RetryInfo(cause="validation_error"),
                    timestamp=T,
                ),
                ToolSearchReturnPart(
                    content={"discovered_tools": []}, tool_call_id="c6", timestamp=T
                ),
                LoadCapabilityReturnPart(
                    content=LoadCapabilityReturn(message="loaded"), tool_call_id="c7", timestamp=T
                ),
                pm.RetryFeedbackPart(
                    "say it as JSON", retry=pm.RetryInfo(cause="no_output"), timestamp=T
                ),
                pm.CompactionPart(
                    "[compacted: 3 messages → 10 chars]\nearlier",
                    metadata={"compaction": {"replaced": 3}},
                ),
                pm.SpeechPart(speaker="user", transcript="and hurry"),
                pm.SystemPromptPart("nudge", scope="request", timestamp=T),
                ProgressPart(content="3 of 5 steps done.", source=pm.OperatorSource(), timestamp=T),
                RequestsLeftPart(
                    content=pm.OperatorText("2 model requests left."),
                    source=pm.OperatorSource(),
                    timestamp=T,
                ),
            ],
            timestamp=T,
        ),
        pm.ModelRequest(parts=[], state="interrupted"),
    ]


def union_members(alias: Any) -> set[type]:
    found: set[type] = set()
    for arg in typing.get_args(alias):
        if isinstance(arg, type):
            found.add(arg)
        else:
            found |= union_members(arg)
    return found


def test_the_history_holds_every_part_type_pydantic_ai_has() -> None:
    history = every_part_history()
    parts = [p for m in history for p in m.parts]
    legacy = {pm.RetryPromptPart}  # deprecated: loads as ToolReturnPart / RetryFeedbackPart
    members = (union_members(pm.ModelRequestPart) | union_members(pm.ModelResponsePart)) - legacy
    # A base such as CapabilityPart is present through its subclasses.
    assert {t for t in members if not any(isinstance(p, t) for p in parts)} == set()


def dump(messages: list[pm.ModelMessage]) -> Any:
    return pm.ModelMessagesTypeAdapter.dump_python(messages, mode="json")


def test_round_trip_is_lossless() -> None:
    # Equal to what pydantic-ai itself loads back from its own JSON (which narrows an image's
    # BinaryContent to BinaryImage), and to the same JSON.
    history = every_part_history()
    back = from_conversation(to_conversation(history))
    assert dump(back) == dump(history)
    assert back == pm.ModelMessagesTypeAdapter.validate_python(dump(history))


def test_round_trip_through_the_store_serializer() -> None:
    # What the session log keeps is the neutral serializer's JSON.
    history = every_part_history()
    stored = [message_from_dict(message_to_dict(m)) for m in to_conversation(history)]
    assert dump(from_conversation(stored)) == dump(history)


def test_decoded_parts() -> None:
    conversation = to_conversation(every_part_history())
    system, user, *_ = conversation.messages
    assert system.role == "system" and system.pinned and system.text == "You are careful."
    images = [p for p in user.parts if isinstance(p, ImagePart)]
    assert [i.url[:22] for i in images] == ["data:image/png;base64,", "https://example.com/a."]
    assert images[0].detail == "high"
    assistant = next(m for m in conversation if m.role == "assistant")
    reasoning = assistant.parts[0]
    assert reasoning.kind == "reasoning" and reasoning.signature == "sig-1"  # type: ignore[union-attr]
    assert [c.id for c in assistant.tool_calls] == ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]
    results = {r.tool_call_id: r for m in conversation for r in m.tool_results}
    assert set(results) == {"c1", "c2", "c3", "c4", "c5", "c6", "c7"}
    assert results["c4"].is_error and results["c5"].is_error and not results["c1"].is_error
    assert any(isinstance(p, ImagePart) for p in results["c3"].content)
    summaries = [p for m in conversation for p in m.parts if isinstance(p, SummaryPart)]
    assert [s.replaced for s in summaries] == [3]
    # A capability's data is read (and counted) as a user turn; its instruction, from the
    # operator, as a pinned system message.
    data = next(m for m in conversation if m.text == "3 of 5 steps done.")
    assert data.role == "user" and not data.pinned
    instruction = next(m for m in conversation if m.text == "2 model requests left.")
    assert instruction.role == "system" and instruction.pinned


def test_a_shortened_capability_part_stays_a_capability_part() -> None:
    # Compaction never turns a capability's data into the user's own words.
    messages = list(to_conversation(every_part_history()).messages)
    i = next(i for i, m in enumerate(messages) if m.text == "3 of 5 steps done.")
    messages[i] = Message("user", (TextPart("3 of 5 …"),), provider_data=messages[i].provider_data)
    part = from_conversation(messages)[2].parts[-2]
    assert isinstance(part, ProgressPart) and part.content == "3 of 5 …"


def test_a_masked_tool_result_keeps_its_ids_and_timestamp() -> None:
    history = every_part_history()
    messages = list(to_conversation(history).messages)
    i = next(
        i
        for i, m in enumerate(messages)
        if m.tool_results and m.tool_results[0].tool_call_id == "c1"
    )
    old = messages[i]
    result = old.tool_results[0]
    masked = ToolResultPart(
        result.tool_call_id,
        (TextPart("[tool output masked: …]"),),
        provider_data=result.provider_data,
    )
    messages[i] = Message(old.role, (masked,), provider_data=old.provider_data)
    back = from_conversation(messages)
    part = back[2].parts[0]
    assert isinstance(part, pm.ToolReturnPart)
    assert (part.tool_name, part.tool_call_id, part.timestamp, part.metadata) == (
        "read_file",
        "c1",
        T,
        {"ok": True},
    )
    assert part.content == "[tool output masked: …]"
    assert dump(back)[2]["parts"][1:] == dump(history)[2]["parts"][1:]  # the rest as it was


def test_a_summary_becomes_a_request_side_compaction_part_and_reads_back_as_a_summary() -> None:
    summary = Message("user", (SummaryPart("[compacted: 7 messages → 12 chars]\nbody", 7),))
    (request,) = from_conversation([summary])
    assert isinstance(request, pm.ModelRequest)
    (part,) = request.parts
    assert isinstance(part, pm.CompactionPart) and part.provider_name is None
    (again,) = to_conversation([request]).messages
    assert again.is_summary and again.parts[0].replaced == 7  # type: ignore[union-attr]


def test_without_the_extra_the_import_names_it() -> None:
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\nimport compaction.integrations.pydantic_ai"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "pip install 'llm-compaction[pydantic-ai]'" in done.stderr
