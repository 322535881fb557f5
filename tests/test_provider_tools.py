"""Tools, streamed text and reasoning through the providers, as an agent loop uses them.

The SDK adapters are driven through the real `openai` and `anthropic` SDKs over an
`httpx2.MockTransport` serving the streams those APIs send; the test doubles are checked for
the same contract. Each round trip ends where an agent's next call starts: the assistant
message, its tool results, and the request body built from them, checked by the dialect's
validator.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction.dialects import ANTHROPIC, OPENAI
from compaction.exceptions import BadResponseError, ContextOverflowError
from compaction.messages import (
    Conversation,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.providers import (
    Completion,
    CompletionRequest,
    FunctionProvider,
    OutputSchema,
    ScriptedProvider,
    Step,
    ToolCalls,
    ToolSpec,
)
from compaction.providers.anthropic import messages_request_body
from compaction.providers.openai import chat_request_body

from .test_providers import (
    DONE,
    MESSAGE_STOP,
    Upstream,
    anthropic_error,
    anthropic_provider,
    block_delta,
    block_start,
    block_stop,
    chunk,
    error_response,
    message_delta,
    message_start,
    openai_provider,
    openai_text_stream,
    stream_response,
    usage_chunk,
)

READ_FILE = ToolSpec(
    "read_file",
    "Read a file of the repository.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_DIR = ToolSpec("list_dir", "List the current directory.")
TOOLS = (READ_FILE, LIST_DIR)

TASK = (
    Message.text_message("system", "You are a coding agent.", pinned=True),
    Message.text_message("user", "Why does test_login fail?"),
)


def agent_request(**kwargs: Any) -> CompletionRequest:
    kwargs.setdefault("tools", TOOLS)
    return CompletionRequest(messages=TASK, **kwargs)


class Pieces(list[str]):
    """An `on_text` callback that keeps what it was given."""

    def __call__(self, text: str) -> None:
        self.append(text)


def answered(completion: Completion, *outputs: str, role: str = "tool") -> tuple[Message, ...]:
    """The agent's conversation after `completion`: its message, then one result per call
    (as `tool` messages, or one user message of results)."""
    results = [
        ToolResultPart(call.id, (TextPart(out),))
        for call, out in zip(completion.tool_calls, outputs, strict=True)
    ]
    if role == "user":
        answers = [Message("user", tuple(results))]
    else:
        answers = [Message("tool", (r,)) for r in results]
    return (*TASK, completion.message, *answers)


# ------------------------------------------------------------------------------ OpenAI


def tool_fragment(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str = ""
) -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index}
    function: dict[str, Any] = {"arguments": arguments}
    if id is not None:
        fragment |= {"id": id, "type": "function"}
        function["name"] = name
    fragment["function"] = function
    return fragment


def openai_parallel_calls() -> list[tuple[str | None, object]]:
    """Text, then two parallel calls whose arguments arrive in pieces (as OpenAI sends them)."""
    return [
        chunk("", role="assistant"),
        chunk("Let me "),
        chunk("look."),
        chunk(tool_calls=[tool_fragment(0, id="call_A1", name="read_file")]),
        chunk(tool_calls=[tool_fragment(0, arguments='{"pa')]),
        chunk(tool_calls=[tool_fragment(0, arguments='th": "tests/')]),
        chunk(tool_calls=[tool_fragment(0, arguments='test_login.py"}')]),
        chunk(tool_calls=[tool_fragment(1, id="call_B2", name="list_dir")]),
        chunk(tool_calls=[tool_fragment(1, arguments="{}")]),
        chunk(finish="tool_calls"),
        usage_chunk(120, 41),
        DONE,
    ]


def test_openai_collects_parallel_streamed_tool_calls() -> None:
    upstream = Upstream(stream_response(openai_parallel_calls()))
    pieces = Pieces()

    completion = openai_provider(upstream).complete(agent_request(on_text=pieces))

    assert completion.text == "Let me look."
    assert pieces == ["Let me ", "look."]
    assert completion.tool_calls == (
        ToolCallPart("call_A1", "read_file", '{"path": "tests/test_login.py"}'),
        ToolCallPart("call_B2", "list_dir", "{}"),
    )
    assert completion.tool_calls[0].parsed_arguments() == {"path": "tests/test_login.py"}
    assert completion.finish_reason == "tool_calls"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (120, 41)


@pytest.mark.parametrize("choice", ["auto", "none", "required"])
def test_openai_sends_function_tools_and_the_tool_choice(choice: Any) -> None:
    upstream = Upstream(openai_text_stream("ok"))

    openai_provider(upstream).complete(agent_request(tool_choice=choice))

    body = upstream.bodies[0]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file of the repository.",
                "parameters": dict(READ_FILE.parameters),
            },
        },
        {
            "type": "function",
            "function": {
                "name": "list_dir",
                "description": "List the current directory.",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]
    assert body["tool_choice"] == choice


def test_openai_tool_choice_is_left_to_the_server_unless_set_and_never_sent_alone() -> None:
    unset = chat_request_body(agent_request(), model="m")
    without_tools = chat_request_body(agent_request(tools=(), tool_choice="required"), model="m")

    assert "tool_choice" not in unset
    assert len(unset["tools"]) == 2
    assert "tools" not in without_tools
    assert "tool_choice" not in without_tools


def test_openai_answer_of_tool_calls_only_is_not_an_empty_answer() -> None:
    events = [
        chunk(None, role="assistant", tool_calls=[tool_fragment(0, id="call_1", name="list_dir")]),
        chunk(finish="tool_calls"),
        DONE,
    ]
    upstream = Upstream(stream_response(events))
    pieces = Pieces()

    completion = openai_provider(upstream).complete(agent_request(on_text=pieces))

    assert completion.text == ""
    assert pieces == []
    assert completion.tool_calls == (ToolCallPart("call_1", "list_dir", "{}"),)
    assert completion.message == Message("assistant", completion.tool_calls)


def test_openai_structured_request_answered_with_tool_calls_has_no_data() -> None:
    events = [
        chunk(None, role="assistant", tool_calls=[tool_fragment(0, id="call_1", name="list_dir")]),
        chunk(finish="tool_calls"),
        DONE,
    ]
    upstream = Upstream(stream_response(events))
    schema = OutputSchema("verdict", {"type": "object"})

    completion = openai_provider(upstream).complete(agent_request(output_schema=schema))

    assert completion.data is None
    assert [c.name for c in completion.tool_calls] == ["list_dir"]
    assert upstream.bodies[0]["response_format"]["json_schema"]["name"] == "verdict"


def test_openai_servers_that_repeat_ids_or_send_whole_calls_without_index() -> None:
    repeated = {"id": "call_r", "type": "function"}
    events = [
        # vLLM-style: id and name repeated on every fragment
        chunk(
            tool_calls=[
                {"index": 0, **repeated, "function": {"name": "read_file", "arguments": '{"path"'}}
            ]
        ),
        chunk(
            tool_calls=[
                {"index": 0, **repeated, "function": {"name": "read_file", "arguments": ': "x"}'}}
            ]
        ),
        # a whole call without index or id, from a server that sends calls in one piece
        chunk(tool_calls=[{"function": {"name": "list_dir", "arguments": "{}"}}]),
        chunk(finish="tool_calls"),
        DONE,
    ]
    upstream = Upstream(stream_response(events))

    completion = openai_provider(upstream).complete(agent_request())

    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [
        ("call_r", "read_file", '{"path": "x"}'),
        ("call_1", "list_dir", "{}"),
    ]


def test_openai_tool_round_trip_encodes_valid_next_request() -> None:
    upstream = Upstream(stream_response(openai_parallel_calls()), openai_text_stream("Fixed."))
    provider = openai_provider(upstream)
    first = provider.complete(agent_request())
    conversation = answered(first, "def test_login(): ...", "src/\ntests/")

    assert OPENAI.validate(Conversation(conversation)) == []
    provider.complete(CompletionRequest(messages=conversation, tools=TOOLS))

    sent = upstream.bodies[1]["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "call_A1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "tests/test_login.py"}'},
            },
            {
                "id": "call_B2",
                "type": "function",
                "function": {"name": "list_dir", "arguments": "{}"},
            },
        ],
    }
    assert sent[3:] == [
        {"role": "tool", "content": "def test_login(): ...", "tool_call_id": "call_A1"},
        {"role": "tool", "content": "src/\ntests/", "tool_call_id": "call_B2"},
    ]
    # The same conversation is valid for the other provider as well.
    assert ANTHROPIC.validate(Conversation(conversation)) == []


def test_openai_streamed_reasoning_is_kept_and_sent_back_under_its_key() -> None:
    events = [
        chunk(None, role="assistant", reasoning_content="The test "),
        chunk(None, reasoning_content="reads a file."),
        chunk(None, tool_calls=[tool_fragment(0, id="call_1", name="list_dir", arguments="{}")]),
        chunk(finish="tool_calls"),
        DONE,
    ]
    upstream = Upstream(stream_response(events))

    completion = openai_provider(upstream).complete(agent_request())

    assert [p.text for p in completion.reasoning] == ["The test reads a file."]
    wire = chat_request_body(CompletionRequest(messages=answered(completion, "src/")), model="m")[
        "messages"
    ]
    assert wire[2]["reasoning_content"] == "The test reads a file."
    assert wire[2]["tool_calls"][0]["id"] == "call_1"


def test_openai_context_overflow_on_a_tool_request_is_an_overflow() -> None:
    body = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, your "
            "messages resulted in 9001 tokens (including 310 in the functions).",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    upstream = Upstream(error_response(400, body))

    with pytest.raises(ContextOverflowError):
        openai_provider(upstream).complete(agent_request(tool_choice="auto"))

    assert len(upstream.requests) == 1


# --------------------------------------------------------------------------- Anthropic

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"


def anthropic_tool_stream() -> list[tuple[str | None, object]]:
    """Thinking, text, then two tool_use blocks: one with its input in pieces, one without
    input (as Anthropic streams them)."""
    return [
        message_start(input_tokens=310),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "I should read "}),
        block_delta(0, {"type": "thinking_delta", "thinking": "the test."}),
        block_delta(0, {"type": "signature_delta", "signature": SIGNATURE}),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        block_delta(1, {"type": "text_delta", "text": "Let me "}),
        block_delta(1, {"type": "text_delta", "text": "look."}),
        block_stop(1),
        block_start(2, {"type": "tool_use", "id": "toolu_01A", "name": "read_file", "input": {}}),
        block_delta(2, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(2, {"type": "input_json_delta", "partial_json": '{"path": "tests/'}),
        block_delta(2, {"type": "input_json_delta", "partial_json": 'test_login.py"}'}),
        block_stop(2),
        block_start(3, {"type": "tool_use", "id": "toolu_01B", "name": "list_dir", "input": {}}),
        block_stop(3),
        message_delta("tool_use", 87),
        MESSAGE_STOP,
    ]


def test_anthropic_collects_streamed_tool_use_thinking_and_text() -> None:
    upstream = Upstream(stream_response(anthropic_tool_stream()))
    pieces = Pieces()

    completion = anthropic_provider(upstream).complete(agent_request(on_text=pieces))

    assert completion.text == "Let me look."
    assert pieces == ["Let me ", "look."]
    assert completion.tool_calls == (
        ToolCallPart("toolu_01A", "read_file", '{"path": "tests/test_login.py"}'),
        ToolCallPart("toolu_01B", "list_dir", "{}"),
    )
    assert completion.reasoning == (ReasoningPart("I should read the test.", signature=SIGNATURE),)
    assert completion.finish_reason == "tool_use"
    assert completion.usage.output_tokens == 87


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (None, None),
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
    ],
)
def test_anthropic_sends_tools_and_maps_the_tool_choice(
    choice: Any, wire: dict[str, str] | None
) -> None:
    upstream = Upstream(stream_response(anthropic_tool_stream()))

    anthropic_provider(upstream).complete(agent_request(tool_choice=choice))

    body = upstream.bodies[0]
    assert body["tools"] == [
        {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "input_schema": dict(READ_FILE.parameters),
        },
        {
            "name": "list_dir",
            "description": "List the current directory.",
            "input_schema": {"type": "object", "properties": {}},
        },
    ]
    assert body.get("tool_choice") == wire


def test_anthropic_no_tools_means_no_tools_and_no_tool_choice() -> None:
    body = messages_request_body(agent_request(tools=(), tool_choice="none"), model="m")

    assert "tools" not in body
    assert "tool_choice" not in body


def test_anthropic_tool_round_trip_replays_signed_thinking_and_validates() -> None:
    upstream = Upstream(
        stream_response(anthropic_tool_stream()),
        stream_response(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "text_delta", "text": "Fixed."}),
                block_stop(0),
                message_delta("end_turn", 3),
                MESSAGE_STOP,
            ]
        ),
    )
    provider = anthropic_provider(upstream)
    first = provider.complete(agent_request())
    conversation = answered(first, "def test_login(): ...", "src/\ntests/", role="user")

    assert ANTHROPIC.validate(Conversation(conversation)) == []
    assert provider.complete(CompletionRequest(messages=conversation, tools=TOOLS)).text == "Fixed."

    sent = upstream.bodies[1]
    assert sent["system"] == "You are a coding agent."
    assert sent["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should read the test.", "signature": SIGNATURE},
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "read_file",
                    "input": {"path": "tests/test_login.py"},
                },
                {"type": "tool_use", "id": "toolu_01B", "name": "list_dir", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A",
                    "content": "def test_login(): ...",
                },
                {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "src/\ntests/"},
            ],
        },
    ]
    # OpenAI-style tool messages encode to the same Anthropic request.
    as_tool_messages = answered(first, "def test_login(): ...", "src/\ntests/")
    assert (
        messages_request_body(CompletionRequest(messages=as_tool_messages), model="m")["messages"]
        == sent["messages"]
    )
    # Signed thinking is Anthropic's alone: the OpenAI encoding leaves it out.
    assert OPENAI.validate(Conversation(conversation)) == []
    assert "thinking" not in json.dumps(OPENAI.encode(Conversation(conversation)))


def test_anthropic_redacted_and_unsigned_thinking() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
        block_stop(0),
        block_start(1, {"type": "thinking", "thinking": "unsigned, from a proxy"}),
        block_stop(1),
        block_start(2, {"type": "tool_use", "id": "toolu_1", "name": "list_dir", "input": {}}),
        block_stop(2),
        message_delta("tool_use", 5),
        MESSAGE_STOP,
    ]
    upstream = Upstream(stream_response(events))

    completion = anthropic_provider(upstream).complete(agent_request())

    assert [(p.text, p.encrypted) for p in completion.reasoning] == [
        ("", "EmwKAhgBEgy3va3pzix"),
        ("unsigned, from a proxy", None),
    ]
    wire = messages_request_body(
        CompletionRequest(messages=answered(completion, "src/")), model="m"
    )["messages"]
    # The redacted block goes back untouched; the unsigned one would be refused, so it stays.
    assert wire[1]["content"] == [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "tool_use", "id": "toolu_1", "name": "list_dir", "input": {}},
    ]


def test_anthropic_answer_of_tool_calls_only_is_not_an_empty_answer() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}),
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"path": "a.py"}'}),
        block_stop(0),
        message_delta("tool_use", 9),
        MESSAGE_STOP,
    ]
    upstream = Upstream(stream_response(events))

    completion = anthropic_provider(upstream).complete(agent_request())

    assert completion.text == ""
    assert completion.message == Message(
        "assistant", (ToolCallPart("toolu_1", "read_file", '{"path": "a.py"}'),)
    )


def test_anthropic_answer_without_text_or_tool_calls_is_still_empty() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "thinking", "thinking": "hm", "signature": SIGNATURE}),
        block_stop(0),
        message_delta("end_turn", 2),
        MESSAGE_STOP,
    ]
    upstream = Upstream(stream_response(events))

    with pytest.raises(BadResponseError, match="empty answer"):
        anthropic_provider(upstream).complete(agent_request())


def test_anthropic_structured_answer_with_tools_forces_the_answer_tool() -> None:
    schema = OutputSchema("verdict", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    events = [
        message_start(),
        block_start(0, {"type": "tool_use", "id": "toolu_9", "name": "verdict", "input": {}}),
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"ok": true}'}),
        block_stop(0),
        message_delta("tool_use", 4),
        MESSAGE_STOP,
    ]
    upstream = Upstream(stream_response(events))

    completion = anthropic_provider(upstream).complete(
        agent_request(output_schema=schema, tool_choice="none")
    )

    body = upstream.bodies[0]
    assert [t["name"] for t in body["tools"]] == ["read_file", "list_dir", "verdict"]
    assert body["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert completion.data == {"ok": True}
    assert completion.tool_calls == ()


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 208310 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, "
        "decrease input length or `max_tokens` and try again",
    ],
)
def test_anthropic_context_overflow_on_a_tool_request_is_an_overflow(message: str) -> None:
    upstream = Upstream(error_response(400, anthropic_error("invalid_request_error", message)))

    with pytest.raises(ContextOverflowError):
        anthropic_provider(upstream).complete(agent_request(tool_choice="auto"))

    assert len(upstream.requests) == 1


# ------------------------------------------------------------------------------ values


def test_on_text_takes_no_part_in_equality_hash_or_repr() -> None:
    with_callback = agent_request(on_text=Pieces())
    without = agent_request()

    assert with_callback == without
    assert hash(with_callback) == hash(without)
    assert "on_text" not in repr(with_callback)
    assert with_callback != agent_request(tool_choice="auto")
    assert agent_request(tools=(READ_FILE,)) != agent_request(
        tools=(ToolSpec("read_file", READ_FILE.description),)
    )


def test_completion_message_puts_reasoning_first_and_omits_empty_text() -> None:
    thought = ReasoningPart("hm", signature="s")
    call = ToolCallPart("c1", "list_dir", "{}")

    talking = Completion(text="Done.", model="m", reasoning=(thought,), tool_calls=(call,))
    silent = Completion(text="", model="m", tool_calls=(call,))

    assert talking.message == Message("assistant", (thought, TextPart("Done."), call))
    assert silent.message == Message("assistant", (call,))


# ------------------------------------------------------------------------ test doubles


def test_scripted_tool_calls_get_deterministic_ids_and_stream_their_text() -> None:
    pieces = Pieces()
    script = ScriptedProvider(
        [
            Step(
                ToolCalls(
                    ("read_file", {"path": "tests/test_login.py"}),
                    ("list_dir", "{}"),
                    text="Let me look around.",
                ),
                expect=lambda r: [t.name for t in r.tools] == ["read_file", "list_dir"],
            ),
            Step(ToolCalls(("read_file", {"path": "src/login.py"}))),
            Step("The session id is never set."),
        ]
    )

    with script:
        first = script.complete(agent_request(on_text=pieces))
        second = script.complete(agent_request())
        last = script.complete(agent_request(on_text=pieces))

    assert [(c.id, c.name, c.parsed_arguments()) for c in first.tool_calls] == [
        ("call_1_1", "read_file", {"path": "tests/test_login.py"}),
        ("call_1_2", "list_dir", {}),
    ]
    assert first.finish_reason == "tool_calls"
    assert first.message.text == "Let me look around."
    assert [c.id for c in second.tool_calls] == ["call_2_1"]
    assert second.message == Message("assistant", second.tool_calls)
    assert last.tool_calls == ()
    assert len(pieces) > 2
    assert "".join(pieces) == "Let me look around.The session id is never set."


def test_function_provider_tool_calls_round_trip_through_both_dialects() -> None:
    kept = ToolCallPart("my-id", "list_dir", "{}")

    def agent_model(request: CompletionRequest) -> ToolCalls | str:
        if request.messages[-1].tool_results:
            return "All read."
        return ToolCalls(("read_file", {"path": "a.py"}), kept)

    provider = FunctionProvider(agent_model)
    first = provider.complete(agent_request())
    conversation = answered(first, "print('a')", "a.py")
    last = provider.complete(CompletionRequest(messages=conversation, tools=TOOLS))

    assert [c.id for c in first.tool_calls] == ["call_1_1", "my-id"]
    assert last.text == "All read."
    assert OPENAI.validate(Conversation(conversation)) == []
    assert ANTHROPIC.validate(Conversation(conversation)) == []
    assert first.usage.output_tokens > 0


def test_a_scripted_context_overflow_is_raised_and_the_call_recorded() -> None:
    overflow = ContextOverflowError("prompt is too long: 9000 > 8192", provider="scripted")
    script = ScriptedProvider([Step(overflow), Step("Summary.")])
    pieces = Pieces()

    with pytest.raises(ContextOverflowError) as caught:
        script.complete(agent_request(on_text=pieces))

    assert caught.value is overflow
    assert pieces == []
    assert script.remaining == 1
    assert script.complete(agent_request()).text == "Summary."


def test_a_completion_reply_streams_its_text_too() -> None:
    made = Completion(text="Prepared answer.", model="m", finish_reason="stop")
    pieces = Pieces()

    returned = FunctionProvider(lambda r: made).complete(agent_request(on_text=pieces))

    assert returned is made
    assert "".join(pieces) == "Prepared answer."
    assert len(pieces) == 3


def test_tool_calls_needs_a_call() -> None:
    with pytest.raises(ValueError, match="at least one call"):
        ToolCalls(text="nothing to call")


def test_an_unexpected_call_names_the_offered_tools() -> None:
    script = ScriptedProvider([])

    with pytest.raises(AssertionError, match=r"tools=\[read_file, list_dir\]"):
        script.complete(agent_request())


def test_openai_without_streaming_reads_the_whole_answer_with_its_tool_calls() -> None:
    # llama-cpp-python's function-calling formats cannot stream automatic tool choice.
    whole = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_0",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 226, "completion_tokens": 11, "total_tokens": 237},
    }
    upstream = Upstream(error_response(200, whole))
    pieces = Pieces()

    completion = openai_provider(upstream, stream=False).complete(agent_request(on_text=pieces))

    body = json.loads(upstream.requests[0].content)
    assert "stream" not in body and "stream_options" not in body
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert completion.tool_calls == (ToolCallPart("call_0", "read_file", '{"path": "a.py"}'),)
    assert completion.finish_reason == "tool_calls"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (226, 11)
    assert completion.model == "local-model"
    assert pieces == []
