"""Anthropic Messages dialect: exact round trips, decode errors, every validation rule."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from compaction.dialects import ANTHROPIC, OPENAI, decode_any, detect_dialect
from compaction.exceptions import DecodeError
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

PNG_DATA = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
EPHEMERAL = {"type": "ephemeral"}


def realistic_request() -> dict[str, Any]:
    """A Claude coding-agent request: cached system blocks, extended thinking with signatures,
    parallel tool use, results with images and errors, server web search, citations, a
    document block, and request fields this library does not model."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "system": [
            {"type": "text", "text": "You are a coding agent working in /repo."},
            {"type": "text", "text": "Never push to main.", "cache_control": EPHEMERAL},
        ],
        "thinking": {"type": "enabled", "budget_tokens": 4096},
        "tools": [
            {
                "name": "bash",
                "description": "Run a shell command.",
                "input_schema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                    "required": ["command"],
                },
                "cache_control": EPHEMERAL,
            },
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        ],
        "messages": [
            {"role": "user", "content": "CI fails on test_io. Can you look?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "Run the failing test first, then read the config.",
                        "signature": "EqQBCkYIBxgCKkBmZWVkYmFjaw==",
                    },
                    {"type": "text", "text": "Let me run the test and read setup.cfg."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01A",
                        "name": "bash",
                        "input": {"command": "pytest -x tests/test_io.py", "timeout": 30.0},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_01B",
                        "name": "read_file",
                        "input": {"path": "setup.cfg", "range": [1, 40]},
                        "cache_control": EPHEMERAL,
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01A",
                        "content": "FAILED tests/test_io.py::test_read - KeyError: 'path'",
                        "is_error": True,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01B",
                        "content": [
                            {"type": "text", "text": "[metadata]\nname = app"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG_DATA,
                                },
                            },
                            {
                                "type": "search_result",
                                "source": "https://wiki/x",
                                "title": "x",
                                "content": [{"type": "text", "text": "y"}],
                            },
                        ],
                    },
                    {"type": "text", "text": "Also check what the pytest docs say."},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_01",
                        "name": "web_search",
                        "input": {"query": "pytest KeyError path fixture"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_01",
                        "content": [
                            {
                                "type": "web_search_result",
                                "url": "https://docs.pytest.org/en/stable/how-to/fixtures.html",
                                "title": "How to use fixtures",
                                "encrypted_content": "EqgfCioIARgBIiQ3YTAw",
                                "page_age": None,
                            }
                        ],
                    },
                    {
                        "type": "text",
                        "text": "The fixture must return the path.",
                        "citations": [
                            {
                                "type": "web_search_result_location",
                                "url": "https://docs.pytest.org/en/stable/how-to/fixtures.html",
                                "title": "How to use fixtures",
                                "encrypted_index": "Eo8BCioIAhgB",
                                "cited_text": "Fixtures can return values",
                            }
                        ],
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {
                            "type": "text",
                            "media_type": "text/plain",
                            "data": "E   KeyError",
                        },
                        "title": "ci.log",
                    },
                    {"type": "text", "text": "Here is the CI log.", "cache_control": EPHEMERAL},
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/ci.png"},
                    },
                    {
                        "type": "image",
                        "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
                    },
                ],
            },
        ],
        "metadata": {"user_id": "u-1"},
        "stream": True,
    }


def rules(conversation: Conversation) -> list[tuple[int | None, str]]:
    return [(v.index, v.rule) for v in ANTHROPIC.validate(conversation)]


def wire_rules(messages: list[Any]) -> list[tuple[int | None, str]]:
    return rules(ANTHROPIC.decode({"model": "m", "max_tokens": 10, "messages": messages}))


# ------------------------------------------------------------------------------ round trip


def test_realistic_request_round_trips_exactly_including_key_order() -> None:
    payload = realistic_request()
    original = copy.deepcopy(payload)
    encoded = ANTHROPIC.encode(ANTHROPIC.decode(payload))
    assert encoded == original
    assert json.dumps(encoded) == json.dumps(original)
    assert payload == original, "decode must not mutate its input"


def test_decoded_request_has_the_expected_model() -> None:
    conversation = ANTHROPIC.decode(realistic_request())
    assert conversation.dialect == "anthropic"
    assert conversation.model == "claude-sonnet-4-5"
    assert [t["name"] for t in conversation.tools] == ["bash", "web_search"]
    assert [m.role for m in conversation] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    system, ask, plan, results, search, log = conversation.messages
    assert system.pinned
    assert system.text == "You are a coding agent working in /repo.\nNever push to main."
    assert system.parts[1].provider_data["anthropic.extra"] == {"cache_control": EPHEMERAL}
    assert ask.parts == (TextPart("CI fails on test_io. Can you look?"),)

    thinking, text, call_a, call_b = plan.parts
    assert thinking == ReasoningPart(
        "Run the failing test first, then read the config.",
        signature="EqQBCkYIBxgCKkBmZWVkYmFjaw==",
    )
    assert text == TextPart("Let me run the test and read setup.cfg.")
    assert isinstance(call_a, ToolCallPart)
    assert (call_a.id, call_a.name) == ("toolu_01A", "bash")
    assert json.loads(call_a.arguments) == {
        "command": "pytest -x tests/test_io.py",
        "timeout": 30.0,
    }
    assert isinstance(call_b, ToolCallPart)
    assert call_b.parsed_arguments() == {"path": "setup.cfg", "range": [1, 40]}

    # tool results stay in the user message, in order, with the text after them
    assert results.role == "user"
    assert results.is_user_turn  # the user's words beside the results make it a user turn
    result_a, result_b, follow_up = results.parts
    assert isinstance(result_a, ToolResultPart) and result_a.is_error
    assert result_a.text == "FAILED tests/test_io.py::test_read - KeyError: 'path'"
    assert isinstance(result_b, ToolResultPart) and not result_b.is_error
    image = result_b.content[1]
    assert isinstance(image, ImagePart)
    assert image.url == f"data:image/png;base64,{PNG_DATA}"
    assert (image.media_type, image.width, image.height) == ("image/png", 1, 1)
    assert len(result_b.content) == 2, "the search_result block is kept opaque"
    assert follow_up == TextPart("Also check what the pytest docs say.")

    redacted, cited = search.parts
    assert redacted == ReasoningPart("", encrypted="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT")
    assert isinstance(cited, TextPart) and "citations" in cited.provider_data["anthropic.extra"]
    opaque_types = [block["type"] for _, block in search.provider_data["anthropic.opaque"]]
    assert opaque_types == ["server_tool_use", "web_search_tool_result"]

    assert [type(p) for p in log.parts] == [TextPart, ImagePart]
    assert [pos for pos, _ in log.provider_data["anthropic.opaque"]] == [0, 3]
    remote = log.parts[1]
    assert isinstance(remote, ImagePart)
    assert (remote.url, remote.width) == ("https://example.com/ci.png", None)


def test_realistic_request_is_valid() -> None:
    assert ANTHROPIC.validate(ANTHROPIC.decode(realistic_request())) == []


def test_string_system_and_bare_list_round_trip() -> None:
    payload = {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "hi"}],
    }
    conversation = ANTHROPIC.decode(copy.deepcopy(payload))
    assert conversation[0] == Message("system", (TextPart("Be brief."),), pinned=True)
    assert ANTHROPIC.encode(conversation) == payload

    bare = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
    ]
    assert ANTHROPIC.encode(ANTHROPIC.decode(copy.deepcopy(bare))) == bare


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "thinking", "thinking": "no signature yet"}, {"type": "text", "text": "x"}],
        [{"type": "thinking", "thinking": "t", "signature": None}, {"type": "text", "text": "x"}],
        [
            {
                "type": "tool_use",
                "id": "t1",
                "name": "f",
                "input": {"z": 1, "a": {"nested": [1.5, None]}},
            }
        ],
        [{"type": "tool_use", "id": "t1", "name": "f", "input": {}, "caller": {"type": "direct"}}],
        [{"type": "text", "text": "café ☕", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        [{"type": "compaction", "content": "earlier turns", "signature": "s"}],
    ],
    ids=[
        "unsigned-thinking",
        "null-signature",
        "nested-input",
        "tool-use-extra",
        "cache-ttl",
        "unknown-block",
    ],
)
def test_assistant_block_shapes_round_trip(content: list[dict[str, Any]]) -> None:
    payload = {
        "messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": content}]
    }
    encoded = ANTHROPIC.encode(ANTHROPIC.decode(copy.deepcopy(payload)))
    assert json.dumps(encoded) == json.dumps(payload)


@pytest.mark.parametrize(
    "result",
    [
        {"type": "tool_result", "tool_use_id": "t1"},
        {"type": "tool_result", "tool_use_id": "t1", "content": []},
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [{"type": "text", "text": "ok", "citations": None}],
        },
        {"is_error": "maybe", "content": "x", "tool_use_id": "t1", "type": "tool_result"},
    ],
    ids=["no-content", "empty-blocks", "explicit-false", "text-extra", "odd-is-error-and-order"],
)
def test_tool_result_shapes_round_trip(result: dict[str, Any]) -> None:
    payload = {
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": [result]},
        ]
    }
    encoded = ANTHROPIC.encode(ANTHROPIC.decode(copy.deepcopy(payload)))
    assert json.dumps(encoded) == json.dumps(payload)


def test_tool_use_input_is_replayed_as_sent_until_arguments_change() -> None:
    original_input = {"b": 1, "a": 1.0, "s": "ü"}
    payload = {
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": original_input}],
            },
        ]
    }
    conversation = ANTHROPIC.decode(payload)
    call = conversation[1].tool_calls[0]
    assert call.arguments == '{"b":1,"a":1.0,"s":"ü"}'
    encoded_input = ANTHROPIC.encode(conversation)["messages"][1]["content"][0]["input"]
    assert encoded_input is original_input, "replayed, not re-parsed from the arguments text"

    edited = replace(call, arguments='{"a": 2}')
    changed = conversation.with_messages(
        [conversation[0], replace(conversation[1], parts=(edited,))]
    )
    assert ANTHROPIC.encode(changed)["messages"][1]["content"][0]["input"] == {"a": 2}


def test_summary_header_decodes_to_a_summary_part() -> None:
    text = summary_header(40, 2100) + "\nThe user is fixing CI."
    payload = {
        "messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    }
    conversation = ANTHROPIC.decode(copy.deepcopy(payload))
    part = conversation[0].parts[0]
    assert isinstance(part, SummaryPart) and part.replaced == 40
    assert ANTHROPIC.encode(conversation) == payload


# -------------------------------------------------------------------------- canonical encode


def test_an_openai_conversation_encodes_to_valid_anthropic() -> None:
    openai = OPENAI.decode(
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "developer", "content": "Be careful."},
                {"role": "user", "content": "list and count"},
                {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "unsigned, cannot be replayed",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "ls", "arguments": "{}"},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "wc", "arguments": '{"f":"a"}'},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "a"},
                {"role": "tool", "tool_call_id": "c2", "content": "1"},
                {"role": "assistant", "content": "One file."},
            ],
        }
    )
    encoded = ANTHROPIC.encode(openai)
    assert encoded == {
        "model": "gpt-4o",
        "system": "Be careful.",
        "messages": [
            {"role": "user", "content": "list and count"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "c1", "name": "ls", "input": {}},
                    {"type": "tool_use", "id": "c2", "name": "wc", "input": {"f": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "a"},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "1"},
                ],
            },
            {"role": "assistant", "content": "One file."},
        ],
    }
    assert ANTHROPIC.validate(openai) == []


def test_strategy_built_messages_encode_to_canonical_blocks() -> None:
    conversation = Conversation(
        (
            Message.text_message("system", "rules", pinned=True),
            Message("user", (SummaryPart(summary_header(3, 50) + "\nsummary", 3),)),
            Message(
                "assistant",
                (
                    ReasoningPart("signed", signature="sig"),
                    ToolCallPart("t1", "f", '{"x":1}'),
                ),
            ),
            Message("user", (ToolResultPart("t1", (TextPart("a"), TextPart("b")), is_error=True),)),
        ),
        dialect="anthropic",
    )
    assert ANTHROPIC.encode(conversation) == {
        "system": "rules",
        "messages": [
            {"role": "user", "content": summary_header(3, 50) + "\nsummary"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "signed", "signature": "sig"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"x": 1}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                        "is_error": True,
                    }
                ],
            },
        ],
    }


def test_several_leading_system_messages_join_top_level_system_blocks() -> None:
    conversation = Conversation(
        (
            Message.text_message("system", "one", pinned=True),
            Message.text_message("system", "two", pinned=True),
            Message.text_message("user", "hi"),
        )
    )
    encoded = ANTHROPIC.encode(conversation)
    assert encoded["system"] == [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    assert encoded["messages"] == [{"role": "user", "content": "hi"}]


def test_merged_user_message_switches_from_string_to_blocks() -> None:
    conversation = ANTHROPIC.decode({"messages": [{"role": "user", "content": "first"}]})
    merged = replace(conversation[0], parts=(*conversation[0].parts, TextPart("second")))
    encoded = ANTHROPIC.encode(conversation.with_messages([merged]))
    assert encoded["messages"][0]["content"] == [
        {"type": "text", "text": "first"},
        {"type": "text", "text": "second"},
    ]


# ---------------------------------------------------------------------------- decode errors


@pytest.mark.parametrize(
    ("payload", "location", "fragment"),
    [
        ("hello", "payload", "got string"),
        ({"model": "m"}, "messages", "needs a `messages` list"),
        ({"messages": "hi"}, "messages", "expected a list"),
        ({"system": 7, "messages": []}, "system", "got number"),
        ({"messages": [], "tools": "bash"}, "tools", "expected a list"),
        ({"messages": [7]}, "messages[0]", "expected a message object"),
        ({"messages": [{"content": "x"}]}, "messages[0].role", "missing `role`"),
        (
            {"messages": [{"role": "tool", "content": "x"}]},
            "messages[0].role",
            "'user', 'assistant' or 'system'",
        ),
        ({"messages": [{"role": "user", "content": 3}]}, "messages[0].content", "got number"),
        (
            {"messages": [{"role": "user", "content": ["hi"]}]},
            "messages[0].content[0]",
            "block object",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
            "messages[0].content[0].text",
            "string `text`",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "go"},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "x"},
                            {"type": "tool_use", "id": "t", "name": "f"},
                        ],
                    },
                ]
            },
            "messages[1].content[1].input",
            "needs an `input`",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]},
            "messages[0].content[0].tool_use_id",
            "string `tool_use_id`",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": 5}],
                    }
                ]
            },
            "messages[0].content[0].content",
            "got number",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "image", "source": "x.png"}]}]},
            "messages[0].content[0].source",
            "`source` object",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {"type": "base64", "media_type": "image/png"},
                            }
                        ],
                    }
                ]
            },
            "messages[0].content[0].source.data",
            "string `data`",
        ),
        (
            {"messages": [{"role": "assistant", "content": [{"type": "redacted_thinking"}]}]},
            "messages[0].content[0].data",
            "string `data`",
        ),
    ],
)
def test_decode_errors_name_the_location(payload: Any, location: str, fragment: str) -> None:
    with pytest.raises(DecodeError) as caught:
        ANTHROPIC.decode(payload)
    assert caught.value.location == location
    assert str(caught.value).startswith(f"{location}: ")
    assert fragment in str(caught.value)


# ------------------------------------------------------------------------------- validation

USE: dict[str, Any] = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}
RESULT: dict[str, Any] = {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}


def test_first_message_must_be_user() -> None:
    assert wire_rules(
        [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "x"}]
    ) == [(0, "first_not_user")]


def test_roles_must_alternate() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "assistant", "content": "c"},
        {"role": "user", "content": "d"},
        {"role": "user", "content": "e"},
    ]
    assert wire_rules(messages) == [(2, "consecutive_roles"), (4, "consecutive_roles")]


def test_tool_use_must_be_answered_in_the_next_user_message() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": "never mind"},
    ]
    violations = ANTHROPIC.validate(ANTHROPIC.decode({"messages": messages}))
    assert [(v.index, v.rule) for v in violations] == [(1, "unanswered_tool_use")]
    assert "'t1'" in violations[0].message


def test_trailing_tool_use_is_unanswered() -> None:
    assert wire_rules(
        [{"role": "user", "content": "go"}, {"role": "assistant", "content": [USE]}]
    ) == [(1, "unanswered_tool_use")]


def test_parallel_tool_use_partly_answered() -> None:
    second = {**USE, "id": "t2"}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE, second]},
        {"role": "user", "content": [RESULT]},
    ]
    violations = ANTHROPIC.validate(ANTHROPIC.decode({"messages": messages}))
    assert [(v.index, v.rule) for v in violations] == [(1, "unanswered_tool_use")]
    assert "'t2'" in violations[0].message and "'t1'" not in violations[0].message


def test_tool_results_must_come_first() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [{"type": "text", "text": "here:"}, RESULT]},
    ]
    assert wire_rules(messages) == [(2, "tool_result_not_first")]


def test_orphan_tool_result() -> None:
    assert wire_rules([{"role": "user", "content": [RESULT]}]) == [(0, "orphan_tool_result")]


def test_tool_result_two_messages_late_is_an_orphan() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": "wait"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [RESULT]},
    ]
    assert wire_rules(messages) == [(1, "unanswered_tool_use"), (4, "orphan_tool_result")]


def test_a_system_turn_inside_messages_is_allowed() -> None:
    # the API's mid-conversation system messages, as Claude Code sends them
    messages = [
        {"role": "user", "content": "a"},
        {"role": "system", "content": "new rules"},
        {"role": "assistant", "content": "b"},
        {"role": "system", "content": "more rules"},
        {"role": "user", "content": "c"},
    ]
    assert wire_rules(messages) == []


def test_a_system_turn_is_a_turn_of_its_own_between_two_of_one_role() -> None:
    # what a compaction leaves when it summarizes the spans either side of a system turn
    messages = [
        {"role": "user", "content": "a"},
        {"role": "system", "content": "new rules"},
        {"role": "user", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    assert wire_rules(messages) == [(3, "consecutive_roles")]


def test_a_system_turn_between_a_tool_use_and_its_result_breaks_the_pair() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE]},
        {"role": "system", "content": "rules"},
        {"role": "user", "content": [RESULT]},
    ]
    assert wire_rules(messages) == [(1, "unanswered_tool_use"), (3, "orphan_tool_result")]


def test_an_empty_system_turn_is_reported() -> None:
    messages = [{"role": "user", "content": "a"}, {"role": "system", "content": " "}]
    assert wire_rules(messages) == [(1, "empty_content")]


def test_a_system_message_after_the_start_stays_in_messages() -> None:
    conversation = Conversation(
        (
            Message.text_message("system", "rules", pinned=True),
            Message.text_message("user", "a"),
            Message.text_message("system", "late rules"),
            Message.text_message("assistant", "b"),
        )
    )
    encoded = ANTHROPIC.encode(conversation)
    assert encoded["system"] == "rules"
    assert [m["role"] for m in encoded["messages"]] == ["user", "system", "assistant"]
    assert rules(conversation) == []


def test_system_turns_inside_messages_decode_pinned_and_round_trip_in_place() -> None:
    marked = {"type": "text", "text": "first", "cache_control": {"type": "ephemeral"}}
    request = {
        "model": "claude-sonnet-5",
        "messages": [
            {"role": "system", "content": [marked]},
            {"role": "user", "content": "a"},
            {"role": "system", "content": "late"},
        ],
    }
    conversation = ANTHROPIC.decode(request)
    assert [(m.role, m.pinned) for m in conversation.messages] == [
        ("system", True),
        ("user", False),
        ("system", True),
    ]
    assert ANTHROPIC.encode(conversation) == request
    assert "system" not in ANTHROPIC.encode(conversation)


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        ("", "empty_content"),
        ("   \n", "empty_content"),
        ([], "empty_content"),
        (None, "empty_content"),
        ([{"type": "text", "text": "ok"}, {"type": "text", "text": " "}], "empty_text_block"),
    ],
    ids=["empty-string", "whitespace", "empty-list", "null", "whitespace-block"],
)
def test_no_empty_content(content: Any, rule: str) -> None:
    messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": content}]
    assert wire_rules(messages) == [(1, rule)]


def test_missing_content_is_empty_content() -> None:
    assert wire_rules([{"role": "user"}]) == [(0, "empty_content")]


def test_duplicate_tool_use_ids() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [RESULT]},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [RESULT]},
    ]
    assert wire_rules(messages) == [(3, "duplicate_tool_use_id")]


def test_tool_input_must_be_an_object() -> None:
    conversation = Conversation(
        (
            Message.text_message("user", "go"),
            Message("assistant", (ToolCallPart("t1", "f", "{broken"),)),
            Message("user", (ToolResultPart("t1", (TextPart("x"),)),)),
        )
    )
    encoded = ANTHROPIC.encode(conversation)
    assert encoded["messages"][1]["content"][0]["input"] == "{broken", "caller's text is kept"
    assert rules(conversation) == [(1, "invalid_tool_input")]


def test_tool_use_only_in_assistant_messages() -> None:
    assert wire_rules([{"role": "user", "content": [USE]}]) == [(0, "misplaced_tool_use")]


def test_request_needs_a_message() -> None:
    conversation = Conversation((Message.text_message("system", "rules", pinned=True),))
    assert rules(conversation) == [(None, "no_messages")]


def test_every_violation_is_reported_in_message_order() -> None:
    messages = [
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [{"type": "text", "text": ""}, RESULT]},
        {"role": "user", "content": [{**RESULT, "tool_use_id": "ghost"}]},
    ]
    assert wire_rules(messages) == [
        (0, "first_not_user"),
        (1, "empty_text_block"),
        (1, "tool_result_not_first"),
        (2, "consecutive_roles"),
        (2, "orphan_tool_result"),
    ]


# ------------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "payload",
    [
        realistic_request(),
        [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "url", "url": "https://x"}}],
            }
        ],
        {"messages": [{"role": "user", "content": "hi"}], "system": "s"},
    ],
)
def test_anthropic_payloads_are_detected(payload: Any) -> None:
    assert detect_dialect(payload) == "anthropic"
    assert decode_any(payload).dialect == "anthropic"


def _roles(conversation: Conversation) -> list[Role]:
    return [m.role for m in conversation]


def test_detected_anthropic_list_decodes_with_results_in_user_messages() -> None:
    payload = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [RESULT]},
    ]
    conversation = decode_any(payload)
    assert _roles(conversation) == ["user", "assistant", "user"]
    assert conversation[2].tool_results[0].tool_call_id == "t1"
    assert ANTHROPIC.encode(conversation) == payload


def test_conversion_from_openai_folds_same_role_neighbours_tool_results_first() -> None:
    openai_payload = [
        {"role": "user", "content": "go"},
        {"role": "user", "content": "quickly"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
        {"role": "user", "content": "next"},
    ]
    conversation = OPENAI.decode(openai_payload)
    wire = ANTHROPIC.encode(conversation)
    assert [m["role"] for m in wire["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in wire["messages"][2]["content"]] == ["tool_result", "text"]
    assert ANTHROPIC.validate(conversation) == []
