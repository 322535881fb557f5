"""OpenAI Chat Completions dialect: exact round trips, decode errors, every validation rule,
plus the package entry points (get_dialect, detect_dialect, load_payload, decode_any)."""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import replace
from typing import Any, cast

import pytest

from compaction import dialects
from compaction.dialects import (
    OPENAI,
    decode_any,
    detect_dialect,
    get_dialect,
    load_payload,
)
from compaction.exceptions import ConfigError, DecodeError
from compaction.messages import (
    Conversation,
    ImagePart,
    Message,
    ReasoningPart,
    Role,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    summary_header,
)

PNG_1X1 = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the repository.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
        "strict": True,
    },
}


def realistic_request() -> dict[str, Any]:
    """A request as an agent sends it mid-session: developer prompt, image, audio, parallel
    tool calls, a multi-part tool result, reasoning from a compatible server, unknown fields."""
    return {
        "model": "gpt-4o-2024-08-06",
        "temperature": 0.2,
        "messages": [
            {"role": "developer", "content": "You are a careful coding agent. Never push."},
            {"role": "system", "content": [{"type": "text", "text": "Commands run in /repo."}]},
            {
                "role": "user",
                "name": "alice",
                "content": [
                    {"type": "text", "text": "The build fails, screenshot attached."},
                    {"type": "image_url", "image_url": {"url": PNG_1X1, "detail": "high"}},
                    {"type": "input_audio", "input_audio": {"data": "UklGRiQ=", "format": "wav"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_Xa1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command":"make build"}'},
                    },
                    {
                        "id": "call_Xa2",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path":"Makefile"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_Xa1", "content": "cc: command not found"},
            {
                "role": "tool",
                "tool_call_id": "call_Xa2",
                "content": [{"type": "text", "text": "build:\n\tcc -o app main.c"}],
            },
            {
                "role": "assistant",
                "content": "The C compiler is missing from the image.",
                "reasoning_content": "The log says cc is not found, so the toolchain is absent.",
                "audio": None,
                "annotations": [],
            },
            {
                "role": "user",
                "content": [
                    {"type": "file", "file": {"file_id": "file-abc123", "filename": "ci.log"}},
                    {"type": "text", "text": "Here is the CI log too.", "x_client_tag": "t1"},
                ],
            },
        ],
        "tools": [BASH_TOOL],
        "tool_choice": "auto",
        "stream": True,
        "stream_options": {"include_usage": True},
        "metadata": {"session": "s-42"},
    }


def conv(*messages: Message) -> Conversation:
    return Conversation(tuple(messages), dialect="openai")


def rules(conversation: Conversation) -> list[tuple[int | None, str]]:
    return [(v.index, v.rule) for v in OPENAI.validate(conversation)]


# ------------------------------------------------------------------------------ round trip


def test_realistic_request_round_trips_exactly_including_key_order() -> None:
    payload = realistic_request()
    original = copy.deepcopy(payload)
    encoded = OPENAI.encode(OPENAI.decode(payload))
    assert encoded == original
    assert json.dumps(encoded) == json.dumps(original)
    assert payload == original, "decode must not mutate its input"


def test_decoded_request_has_the_expected_model() -> None:
    conversation = OPENAI.decode(realistic_request())
    assert conversation.dialect == "openai"
    assert conversation.model == "gpt-4o-2024-08-06"
    assert conversation.tools == (BASH_TOOL,)
    assert [m.role for m in conversation] == [
        "system",
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
    ]
    developer, system, user, calls, result1, result2, answer, log = conversation.messages
    assert developer.pinned and system.pinned
    assert developer.provider_data["openai.role"] == "developer"
    assert "openai.role" not in system.provider_data
    assert user.name == "alice"
    image = user.parts[1]
    assert isinstance(image, ImagePart)
    assert (image.detail, image.media_type, image.width, image.height) == (
        "high",
        "image/png",
        1,
        1,
    )
    # the audio part is opaque: kept beside the parts at its position, not as a part
    assert len(user.parts) == 2
    assert user.provider_data["openai.opaque"][0][0] == 2
    assert calls.parts == (
        ToolCallPart("call_Xa1", "bash", '{"command":"make build"}'),
        ToolCallPart("call_Xa2", "read_file", '{"path":"Makefile"}'),
    )
    assert result1.parts == (ToolResultPart("call_Xa1", (TextPart("cc: command not found"),)),)
    assert result2.tool_results[0].text == "build:\n\tcc -o app main.c"
    assert answer.parts == (
        ReasoningPart("The log says cc is not found, so the toolchain is absent."),
        TextPart("The C compiler is missing from the image."),
    )
    assert log.parts == (TextPart("Here is the CI log too."),)
    assert conversation.provider_data["openai.extra"]["metadata"] == {"session": "s-42"}


def test_bare_message_list_round_trips_as_a_list() -> None:
    payload = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello!"},
    ]
    conversation = OPENAI.decode(copy.deepcopy(payload))
    assert conversation.model is None
    assert OPENAI.encode(conversation) == payload


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": "done", "tool_calls": None, "function_call": None},
        {"role": "assistant", "content": "done", "tool_calls": []},
        {"role": "user", "content": ""},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {
            "role": "assistant",
            "content": [],
            "reasoning": "thinking aloud",
            "reasoning_content": None,
        },
        {
            "tool_call_id": "c1",
            "role": "tool",
            "name": "ls",
            "content": [
                {"type": "text", "text": "a\nb"},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": "ok",
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c2",
                    "type": "function",
                    "function": {"arguments": '{"a":1}', "name": "f", "x-trace": "t"},
                }
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c3",
                    "type": "custom",
                    "custom": {"name": "apply_patch", "input": "*** Begin Patch"},
                }
            ],
        },
    ],
    ids=[
        "null-tool-calls",
        "empty-tool-calls",
        "empty-string",
        "call-without-type",
        "reasoning-key",
        "tool-list-content",
        "call-extras-and-order",
        "custom-tool-call",
    ],
)
def test_edge_shapes_round_trip(message: dict[str, Any]) -> None:
    payload = [{"role": "user", "content": "go"}, message]
    encoded = OPENAI.encode(OPENAI.decode(copy.deepcopy(payload)))
    assert json.dumps(encoded) == json.dumps(payload)


def test_legacy_function_call_round_trips_and_pairs_with_its_answer() -> None:
    payload = [
        {"role": "user", "content": "weather in Oslo?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        },
        {"role": "function", "name": "get_weather", "content": '{"temp": -3}'},
        {"role": "assistant", "content": "It is -3°C."},
    ]
    conversation = OPENAI.decode(copy.deepcopy(payload))
    call = conversation[1].tool_calls[0]
    result = conversation[2].tool_results[0]
    assert conversation[2].role == "tool"
    assert conversation[2].provider_data["openai.role"] == "function"
    assert result.tool_call_id == call.id
    assert OPENAI.validate(conversation) == []
    assert OPENAI.encode(conversation) == payload


def test_summary_header_text_decodes_to_a_summary_part_and_round_trips() -> None:
    text = summary_header(12, 3400) + "\nEarlier: the user asked to fix the build."
    payload = [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    conversation = OPENAI.decode(copy.deepcopy(payload))
    part = conversation[0].parts[0]
    assert isinstance(part, SummaryPart)
    assert part.replaced == 12
    assert conversation[0].is_summary
    assert OPENAI.encode(conversation) == payload


def test_tool_and_system_text_is_never_read_as_a_summary() -> None:
    text = summary_header(3, 10) + " looks like a header"
    conversation = OPENAI.decode(
        [
            {"role": "system", "content": text},
            {"role": "tool", "tool_call_id": "c", "content": text},
        ]
    )
    assert isinstance(conversation[0].parts[0], TextPart)
    assert isinstance(conversation[1].tool_results[0].content[0], TextPart)


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + width.to_bytes(2, "little") + height.to_bytes(2, "little") + bytes(20)


def _jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + (16).to_bytes(2, "big") + b"JFIF\x00" + bytes(9)
    sof = b"\xff\xc0" + (17).to_bytes(2, "big") + b"\x08" + height.to_bytes(2, "big")
    return b"\xff\xd8" + app0 + sof + width.to_bytes(2, "big") + b"\x03" + bytes(9)


def _webp(width: int, height: int) -> bytes:
    vp8x = b"VP8X" + (10).to_bytes(4, "little") + bytes(4)
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + (30).to_bytes(4, "little") + b"WEBP" + vp8x + size


@pytest.mark.parametrize(
    ("media_type", "data", "size"),
    [
        ("image/gif", _gif(3, 2), (3, 2)),
        ("image/jpeg", _jpeg(640, 480), (640, 480)),
        ("image/webp", _webp(1024, 768), (1024, 768)),
        ("image/png", b"not an image at all, just bytes", None),
    ],
)
def test_image_dimensions_are_sniffed_from_the_header(
    media_type: str, data: bytes, size: tuple[int, int] | None
) -> None:
    url = f"data:{media_type};base64,{base64.b64encode(data).decode()}"
    message = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    image = OPENAI.decode([message])[0].parts[0]
    assert isinstance(image, ImagePart)
    assert image.media_type == media_type
    assert (None if image.width is None else (image.width, image.height)) == size


def test_remote_image_url_has_no_dimensions() -> None:
    message = {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}],
    }
    image = OPENAI.decode([message])[0].parts[0]
    assert isinstance(image, ImagePart)
    assert (image.media_type, image.width, image.height) == (None, None, None)


# -------------------------------------------------------------------------- canonical encode


def test_messages_built_by_strategies_encode_to_canonical_shapes() -> None:
    summary = summary_header(5, 120) + "\nThe user wants the build fixed."
    conversation = Conversation(
        (
            Message.text_message("system", "Be careful.", pinned=True),
            Message("user", (SummaryPart(summary, replaced=5),)),
            Message("assistant", (ToolCallPart("c1", "bash", '{"command":"ls"}'),)),
            Message("tool", (ToolResultPart("c1", (TextPart("a.py"),)),)),
            Message("assistant", (TextPart("First."), TextPart("Second."))),
            Message("user", (TextPart("look"), ImagePart(PNG_1X1))),
            Message("assistant", (ReasoningPart("private", signature="sig"), TextPart("Done."))),
        ),
        model="gpt-4o",
    )
    assert OPENAI.encode(conversation) == {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be careful."},
            {"role": "user", "content": summary},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command":"ls"}'},
                    }
                ],
            },
            {"role": "tool", "content": "a.py", "tool_call_id": "c1"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "First."},
                    {"type": "text", "text": "Second."},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": PNG_1X1}},
                ],
            },
            # signed reasoning from another provider is not sent to OpenAI
            {"role": "assistant", "content": "Done."},
        ],
    }


def test_a_masked_tool_result_keeps_the_message_wire_details() -> None:
    payload = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "x" * 5000, "x-latency-ms": 12},
    ]
    conversation = OPENAI.decode(payload)
    tool = conversation[2]
    masked = replace(tool, parts=(ToolResultPart("c1", (TextPart("[output elided]"),)),))
    encoded = OPENAI.encode(conversation.with_messages((*conversation.messages[:2], masked)))
    assert encoded[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "[output elided]",
        "x-latency-ms": 12,
    }


def test_opaque_parts_stay_in_position_when_text_is_replaced() -> None:
    payload = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "long text " * 100},
                {"type": "input_audio", "input_audio": {"data": "AAA=", "format": "mp3"}},
                {"type": "text", "text": "tail"},
            ],
        }
    ]
    conversation = OPENAI.decode(payload)
    message = conversation[0]
    shorter = replace(message, parts=(TextPart("short"), message.parts[1]))
    encoded = OPENAI.encode(conversation.with_messages([shorter]))
    assert encoded[0]["content"] == [
        {"type": "text", "text": "short"},
        {"type": "input_audio", "input_audio": {"data": "AAA=", "format": "mp3"}},
        {"type": "text", "text": "tail"},
    ]


def test_tool_results_inside_a_user_message_become_tool_messages() -> None:
    conversation = conv(
        Message.text_message("user", "go"),
        Message("assistant", (ToolCallPart("t1", "ls", "{}"),)),
        Message("user", (ToolResultPart("t1", (TextPart("a.py"),)), TextPart("and now?"))),
    )
    encoded = OPENAI.encode(conversation)
    assert encoded["messages"][2:] == [
        {"role": "tool", "content": "a.py", "tool_call_id": "t1"},
        {"role": "user", "content": "and now?"},
    ]
    assert OPENAI.validate(conversation) == []


# ---------------------------------------------------------------------------- decode errors


@pytest.mark.parametrize(
    ("payload", "location", "fragment"),
    [
        (42, "payload", "got number"),
        ({"model": "gpt-4o"}, "messages", "needs a `messages` list"),
        ({"messages": {"role": "user"}}, "messages", "expected a list"),
        ({"messages": [], "tools": {"bash": {}}}, "tools", "expected a list"),
        ({"messages": ["hello"]}, "messages[0]", "expected a message object"),
        ({"messages": [{"content": "hi"}]}, "messages[0].role", "missing `role`"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role", "developer"),
        ({"messages": [{"role": "user", "content": 42}]}, "messages[0].content", "got number"),
        ([{"role": "user", "content": {"text": "hi"}}], "[0].content", "got object"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id", "missing"),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": 7}]}]},
            "messages[0].content[0].text",
            "string `text`",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}]},
            "messages[0].content[0].image_url",
            "string `url`",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "tool_calls": {"id": "c"}},
                ]
            },
            "messages[1].tool_calls",
            "expected a list",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "go"},
                    {"role": "system", "content": "x"},
                    {"role": "user", "content": "go"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": {"a": 1}},
                            }
                        ],
                    },
                ]
            },
            "messages[3].tool_calls[0].function.arguments",
            "expected a string (JSON text)",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "tool_calls": [{"type": "function", "function": {}}]}
                ]
            },
            "messages[0].tool_calls[0].id",
            "string `id`",
        ),
    ],
)
def test_decode_errors_name_the_location(payload: Any, location: str, fragment: str) -> None:
    with pytest.raises(DecodeError) as caught:
        OPENAI.decode(payload)
    assert caught.value.location == location
    assert str(caught.value).startswith(f"{location}: ")
    assert fragment in str(caught.value)


def test_decode_accepts_what_validate_reports() -> None:
    payload = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "nobody", "content": "orphan"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
            ],
        },
    ]
    conversation = OPENAI.decode(payload)
    assert rules(conversation) == [
        (1, "orphan_tool_result"),
        (2, "invalid_tool_arguments"),
        (2, "unanswered_tool_call"),
    ]


# ------------------------------------------------------------------------------- validation


def test_realistic_request_is_valid() -> None:
    assert OPENAI.validate(OPENAI.decode(realistic_request())) == []


def _call(*ids: str, arguments: str = "{}") -> Message:
    return Message("assistant", tuple(ToolCallPart(i, "bash", arguments) for i in ids))


def _result(call_id: str, text: str = "ok") -> Message:
    return Message("tool", (ToolResultPart(call_id, (TextPart(text),)),))


def _say(role: Role, text: str) -> Message:
    return Message.text_message(role, text)


def test_parallel_call_not_answered_before_the_next_message() -> None:
    conversation = conv(_say("user", "go"), _call("c1", "c2"), _result("c1"), _say("user", "next"))
    violations = OPENAI.validate(conversation)
    assert [(v.index, v.rule) for v in violations] == [(1, "unanswered_tool_call")]
    assert "'c2'" in violations[0].message and "'c1'" not in violations[0].message


def test_trailing_unanswered_call() -> None:
    assert rules(conv(_say("user", "go"), _call("c1"))) == [(1, "unanswered_tool_call")]


def test_orphan_tool_result() -> None:
    assert rules(conv(_say("user", "go"), _result("ghost"))) == [(1, "orphan_tool_result")]


def test_result_after_an_intervening_message_is_an_orphan() -> None:
    conversation = conv(_say("user", "go"), _call("c1"), _say("user", "wait"), _result("c1"))
    assert rules(conversation) == [(1, "unanswered_tool_call"), (3, "orphan_tool_result")]


def test_duplicate_tool_call_id() -> None:
    pending_twice = conv(_say("user", "go"), _call("c1", "c1"), _result("c1"))
    assert rules(pending_twice) == [(1, "duplicate_tool_call_id")]


def test_an_answered_id_may_come_back_in_a_later_turn() -> None:
    conversation = conv(_say("user", "go"), _call("c1"), _result("c1"), _call("c1"), _result("c1"))
    assert rules(conversation) == []


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]", '"text"'])
def test_arguments_must_be_a_json_object(arguments: str) -> None:
    conversation = conv(_say("user", "go"), _call("c1", arguments=arguments), _result("c1"))
    assert rules(conversation) == [(1, "invalid_tool_arguments")]


def test_empty_arguments_are_an_empty_object() -> None:
    assert rules(conv(_say("user", "go"), _call("c1", arguments=""), _result("c1"))) == []


def test_unknown_role() -> None:
    robot = Message(cast(Role, "robot"), (TextPart("beep"),))
    assert rules(conv(_say("user", "go"), robot)) == [(1, "unknown_role")]


@pytest.mark.parametrize(
    ("message", "index"),
    [
        ({"role": "user", "content": None}, 1),
        ({"role": "user"}, 1),
        ({"role": "system", "content": []}, 1),
        ({"role": "assistant", "content": None}, 1),
        ({"role": "tool", "tool_call_id": "c0", "content": None}, 2),
    ],
    ids=["user-null", "user-absent", "system-empty-list", "assistant-nothing", "tool-null"],
)
def test_message_without_content(message: dict[str, Any], index: int) -> None:
    payload: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    if message["role"] == "tool":
        payload.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            }
        )
    payload.append(message)
    assert rules(OPENAI.decode(payload)) == [(index, "missing_content")]


def test_a_tool_message_must_answer_a_call() -> None:
    stray = Message("tool", (TextPart("no id"),))
    assert rules(conv(_say("user", "go"), stray)) == [(1, "missing_tool_call_id")]


def test_tool_calls_only_in_assistant_messages() -> None:
    odd = Message("user", (TextPart("hi"), ToolCallPart("c1", "f", "{}")))
    assert rules(conv(odd)) == [(0, "misplaced_tool_call")]


def test_conversation_needs_a_non_system_message() -> None:
    assert rules(conv(_say("system", "rules"))) == [(None, "no_messages")]
    assert rules(conv()) == [(None, "no_messages")]


def test_every_violation_is_reported_in_message_order() -> None:
    conversation = conv(
        _say("system", "rules"),
        _result("ghost"),
        _call("c1", arguments="nope"),
        _say("user", "interrupt"),
        _call("c1"),
    )
    assert rules(conversation) == [
        (1, "orphan_tool_result"),
        (2, "invalid_tool_arguments"),
        (2, "unanswered_tool_call"),
        (4, "unanswered_tool_call"),
    ]


def test_violation_index_is_the_wire_index() -> None:
    # The first user message carries two results, which encode as two tool messages.
    conversation = conv(
        _say("user", "go"),
        _call("a", "b"),
        Message(
            "user", (ToolResultPart("a", (TextPart("1"),)), ToolResultPart("b", (TextPart("2"),)))
        ),
        _result("ghost"),
    )
    encoded = OPENAI.encode(conversation)["messages"]
    assert [m["role"] for m in encoded] == ["user", "assistant", "tool", "tool", "tool"]
    assert rules(conversation) == [(4, "orphan_tool_result")]


# ------------------------------------------------------------------------ package entry points


def test_dunder_all_is_honest() -> None:
    for name in dialects.__all__:
        assert hasattr(dialects, name), name
    assert set(dialects.DIALECTS) == {"openai", "anthropic", "responses", "traj"}


@pytest.mark.parametrize("name", ["openai", "anthropic", "responses", "traj"])
def test_get_dialect_by_name(name: str) -> None:
    assert get_dialect(name).name == name


def test_unknown_dialect_names_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        get_dialect("gemini")
    assert "gemini" in str(caught.value)
    assert "anthropic, openai, responses, traj" in str(caught.value)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (realistic_request(), "openai"),
        ([{"role": "user", "content": "hi"}], "openai"),
        ([], "openai"),
        ({"model": "m", "system": "be brief", "messages": []}, "anthropic"),
        ({"anthropic_version": "bedrock-2023-05-31", "messages": []}, "anthropic"),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                }
            ],
            "anthropic",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
                ]
            },
            "anthropic",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}
                ]
            },
            "anthropic",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]}
                ]
            },
            "anthropic",
        ),
        ({"history": [], "info": {}}, "traj"),
    ],
)
def test_detect_dialect(payload: Any, expected: str) -> None:
    assert detect_dialect(payload) == expected


@pytest.mark.parametrize("payload", ["text", 3, {"prompt": "hi"}])
def test_detect_dialect_refuses_what_is_no_transcript(payload: Any) -> None:
    with pytest.raises(DecodeError, match="cannot tell the dialect"):
        detect_dialect(payload)


def test_decode_any_detects_or_obeys() -> None:
    payload = [{"role": "user", "content": "hi"}]
    assert decode_any(payload).dialect == "openai"
    assert decode_any(payload, "anthropic").dialect == "anthropic"
    with pytest.raises(ConfigError):
        decode_any(payload, "nope")


def test_load_payload_reports_line_and_column() -> None:
    text = '{"messages": [\n  {"role": "user",, "content": "hi"}\n]}'
    with pytest.raises(DecodeError) as caught:
        load_payload(text, source="session.json")
    assert str(caught.value).startswith("session.json: line 2 col 19: ")
    assert caught.value.location == "session.json"


def test_load_payload_accepts_bytes_with_a_bom() -> None:
    data = "\ufeff" + json.dumps({"messages": [{"role": "user", "content": "héllo"}]})
    assert load_payload(data.encode("utf-8"), source="x")["messages"][0]["content"] == "héllo"
    assert load_payload(data, source="x")["messages"][0]["role"] == "user"


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"\xff\xfe{", "not UTF-8"),
        ('{"temperature": NaN}', "NaN is not valid JSON"),
        ("", "line 1 col 1"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_load_payload_errors(data: str | bytes, fragment: str) -> None:
    with pytest.raises(DecodeError) as caught:
        load_payload(data, source="stdin")
    assert str(caught.value).startswith("stdin: ")
    assert fragment in str(caught.value)
