"""The scripted upstream's trail: the next move read from the latest item and the declared
tools, in each API's shape; and the tool call as each official SDK reads it back."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from compaction.proxy.scripted_trail import Move, ToolCall, next_move, read_call
from compaction.proxy.scripted_upstream import create_app

CLAUDE_READ = {
    "name": "Read",
    "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
}
OPENCODE_READ = {
    "type": "function",
    "function": {
        "name": "read",
        "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}},
    },
}
CODEX_SHELL = {
    "type": "function",
    "name": "exec_command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
}


def test_a_trail_starts_with_the_clients_read_tool_on_the_named_path() -> None:
    body = {
        "tools": [CLAUDE_READ],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "TRAIL START: /t/a"}]}],
    }
    assert next_move("messages", body) == Move(call=ToolCall("Read", {"file_path": "/t/a"}))


def test_a_system_turn_after_the_users_is_not_what_the_model_answers() -> None:
    body = {
        "tools": [CLAUDE_READ],
        "messages": [
            {"role": "user", "content": "TRAIL START: /t/a"},
            {"role": "system", "content": "<system-reminder>cwd</system-reminder>"},
        ],
    }
    assert next_move("messages", body) == Move(call=ToolCall("Read", {"file_path": "/t/a"}))


def test_the_next_file_comes_from_the_latest_tool_result_quotes_and_all() -> None:
    body = {
        "tools": [OPENCODE_READ],
        "messages": [
            {"role": "user", "content": '"TRAIL START: /t/a"'},
            {"role": "tool", "tool_call_id": "c1", "content": "1| x\n2| NEXT: /t/b\n"},
        ],
    }
    assert next_move("chat", body) == Move(call=ToolCall("read", {"filePath": "/t/b"}))


def test_a_shell_tool_when_no_read_tool_is_declared() -> None:
    body = {
        "tools": [CODEX_SHELL],
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "TRAIL START: /t/a"}]},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Output:\nNEXT: /t/b"},
        ],
    }
    assert next_move("responses", body) == Move(call=ToolCall("exec_command", {"cmd": "cat /t/b"}))
    argv = {"type": "object", "properties": {"command": {"type": "array"}}}
    assert read_call([("shell", argv)], "/t/b") == ToolCall("shell", {"command": ["cat", "/t/b"]})


def test_the_trails_end_is_answered_and_anything_else_is_not_on_a_trail() -> None:
    end = {
        "tools": [OPENCODE_READ],
        "messages": [{"role": "tool", "tool_call_id": "c", "content": "TRAIL END: code 7\n"}],
    }
    assert next_move("chat", end) == Move(text="TRAIL ANSWER: code 7")
    no_tools = {"messages": [{"role": "user", "content": "TRAIL START: /t/a"}]}
    assert next_move("chat", no_tools) is None
    chatting = {"tools": [OPENCODE_READ], "messages": [{"role": "user", "content": "hello"}]}
    assert next_move("chat", chatting) is None


# -- the tool call as the SDKs read it, streamed and whole --------------------------------------


@pytest.fixture
def transport() -> httpx.ASGITransport:
    return httpx.ASGITransport(app=create_app())


def _start(tool: dict[str, Any], key: str, text: str) -> dict[str, Any]:
    return {"tools": [tool], key: [{"role": "user", "content": text}]}


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_anthropic_sdk_reads_the_tool_call(stream: bool) -> None:
    # this anthropic SDK brings its own httpx (httpx2)
    app = httpx2.ASGITransport(app=create_app())
    client = anthropic.AsyncAnthropic(
        api_key="k", base_url="http://up.test", http_client=httpx2.AsyncClient(transport=app)
    )
    body = _start(CLAUDE_READ, "messages", "TRAIL START: /t/a")
    if stream:
        async with client.messages.stream(model="m", max_tokens=64, **body) as events:
            message = await events.get_final_message()
    else:
        message = await client.messages.create(model="m", max_tokens=64, **body)
    block = message.content[0]
    assert message.stop_reason == "tool_use"
    assert block.type == "tool_use"
    assert (block.name, block.input) == ("Read", {"file_path": "/t/a"})


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_openai_sdk_reads_the_tool_call(transport: httpx.ASGITransport, stream: bool) -> None:
    client = openai.AsyncOpenAI(
        api_key="k",
        base_url="http://up.test/v1",
        http_client=httpx.AsyncClient(transport=transport),
    )
    chat = _start(OPENCODE_READ, "messages", "TRAIL START: /t/a")
    responses = _start(CODEX_SHELL, "input", "TRAIL START: /t/a")
    if stream:
        async with client.chat.completions.stream(model="m", **chat) as events:
            completion = await events.get_final_completion()
        async with client.responses.stream(model="m", **responses) as stream_events:
            response = await stream_events.get_final_response()
    else:
        completion = await client.chat.completions.create(model="m", **chat)
        response = await client.responses.create(model="m", **responses)
    call = completion.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert completion.choices[0].finish_reason == "tool_calls"
    assert (call.function.name, json.loads(call.function.arguments)) == (  # type: ignore[union-attr]
        "read",
        {"filePath": "/t/a"},
    )
    item = response.output[0]
    assert item.type == "function_call"
    assert (item.name, json.loads(item.arguments)) == ("exec_command", {"cmd": "cat /t/a"})
