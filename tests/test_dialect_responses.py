"""OpenAI Responses dialect: exact round trips on realistic bodies, how items map onto the
conversation model, every validation rule with its item index, registration and detection,
the CLI, and compaction of a large Responses body through `Compactor`."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import dialects
from compaction.cli import cli
from compaction.compactor import Compactor, validate_for
from compaction.config import CompactionConfig
from compaction.dialects import RESPONSES, decode_any, detect_dialect, get_dialect
from compaction.exceptions import DecodeError
from compaction.messages import (
    Conversation,
    ImagePart,
    Message,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    summary_header,
)
from compaction.strategies.mask import MaskStrategy

PNG_1X1 = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
ENCRYPTED = "gAAAAABo" + "Zk9yZWFzb25pbmdCbG9i" * 40

SHELL_TOOL = {
    "type": "function",
    "name": "shell",
    "description": "Runs a shell command and returns its output.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"}},
            "workdir": {"type": "string"},
            "timeout_ms": {"type": "number"},
        },
        "required": ["command"],
        "additionalProperties": False,
    },
}
APPLY_PATCH_TOOL = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Use the `apply_patch` tool to edit files.",
    "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+"},
}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def round_trip(payload: Any) -> Any:
    return RESPONSES.encode(RESPONSES.decode(payload))


def text_msg(role: str, text: str, *, typed: bool = True) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    part: dict[str, Any] = {"type": kind, "text": text}
    if role == "assistant":
        part["annotations"] = []
    item: dict[str, Any] = {"type": "message", "role": role, "content": [part]}
    if not typed:
        del item["type"]
    return item


def reasoning(n: int, summary: str = "Looking at the failing test.") -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": f"rs_{n:04d}",
        "summary": [{"type": "summary_text", "text": f"**Plan {n}**\n\n{summary}"}],
        "content": None,
        "encrypted_content": f"{ENCRYPTED}{n}",
    }


def function_call(call_id: str, command: str, *, item_id: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function_call"}
    if item_id is not None:
        item["id"] = item_id
    item.update(
        name="shell",
        arguments=json.dumps({"command": ["bash", "-lc", command], "workdir": "/repo"}),
        call_id=call_id,
    )
    return item


def call_output(call_id: str, output: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def codex_request() -> dict[str, Any]:
    """A body as the Codex CLI sends it mid-session: instructions, a developer message,
    environment context, an image, reasoning with encrypted_content, function calls (one
    pair, then two in parallel), a freeform apply_patch custom tool call, assistant text."""
    return {
        "model": "gpt-5-codex",
        "instructions": "You are Codex, based on GPT-5. You are running as a coding agent.",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<permissions>sandbox: workspace-write</permissions>",
                    }
                ],
            },
            text_msg("user", "# AGENTS.md instructions for /repo\n\nRun `make test` first."),
            text_msg("user", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "The login test fails, see the screenshot."},
                    {"type": "input_image", "image_url": PNG_1X1},
                ],
            },
            reasoning(1),
            function_call("call_A1", "make test", item_id="fc_A1"),
            call_output(
                "call_A1",
                json.dumps(
                    {
                        "output": "FAILED tests/test_login.py::test_login - KeyError",
                        "metadata": {"exit_code": 1, "duration_seconds": 0.4},
                    }
                ),
            ),
            reasoning(2, "Reading the test and the module in parallel."),
            function_call("call_B1", "cat tests/test_login.py"),
            function_call("call_B2", "cat src/login.py"),
            call_output("call_B1", "def test_login():\n    assert login('a')['session_id']\n"),
            call_output("call_B2", "def login(user):\n    return {}\n"),
            reasoning(3),
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "call_C1",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: src/login.py\n@@\n-    return {}\n"
                "+    return {'session_id': user}\n*** End Patch\n",
            },
            {
                "type": "custom_tool_call_output",
                "call_id": "call_C1",
                "output": "Success. Updated the following files:\nM src/login.py\n",
            },
            {
                "type": "message",
                "id": "msg_01",
                "role": "assistant",
                "status": "completed",
                "phase": "final_answer",
                "content": [
                    {
                        "type": "output_text",
                        "text": "Fixed: login now returns a session id.",
                        "annotations": [],
                        "logprobs": [],
                    }
                ],
            },
            text_msg("user", "Great. Now run the whole suite."),
        ],
        "tools": [SHELL_TOOL, APPLY_PATCH_TOOL],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a3c2-session",
        "text": {"verbosity": "medium"},
    }


def hosted_tools_request() -> dict[str, Any]:
    """Items the dialect keeps opaque or models generically, in a stateful request."""
    return {
        "model": "gpt-4.1",
        "previous_response_id": "resp_prev",
        "input": [
            {"role": "system", "content": "Answer briefly."},
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Summarise this file and find news on it."},
                    {"type": "input_file", "file_id": "file-abc", "filename": "report.pdf"},
                ],
            },
            {"type": "item_reference", "id": "msg_earlier"},
            {
                "id": "ws_1",
                "type": "web_search_call",
                "status": "completed",
                "action": {"type": "search", "query": "report news"},
            },
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_2",
                "status": "completed",
                "content": [
                    {"type": "refusal", "refusal": "I cannot open that part."},
                    {"type": "output_text", "text": "Here is the rest.", "annotations": []},
                ],
            },
            {
                "type": "computer_call",
                "id": "cu_1",
                "call_id": "call_cu1",
                "action": {"type": "click", "x": 10, "y": 20, "button": "left"},
                "pending_safety_checks": [],
                "status": "completed",
            },
            {
                "type": "local_shell_call",
                "id": "ls_1",
                "call_id": "call_ls1",
                "action": {"type": "exec", "command": ["ls"], "env": {}},
                "status": "completed",
            },
            {
                "type": "computer_call_output",
                "call_id": "call_cu1",
                "output": {"type": "computer_screenshot", "image_url": PNG_1X1},
            },
            {"type": "local_shell_call_output", "id": "call_ls1", "output": "a.txt\nb.txt\n"},
            {
                "type": "mcp_approval_request",
                "id": "mcpr_1",
                "server_label": "deepwiki",
                "name": "ask",
                "arguments": "{}",
            },
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
            call_output(
                "call_from_previous_response",
                [
                    {"type": "input_text", "text": "chart attached"},
                    {"type": "input_image", "image_url": PNG_1X1, "detail": "low"},
                    {"type": "input_file", "file_id": "file-xyz"},
                ],
            ),
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque-summary"},
            {"type": "some_future_item", "payload": {"x": 1}},
        ],
        "tools": [{"type": "web_search_preview"}, {"type": "computer_use_preview"}],
        "truncation": "auto",
        "metadata": {"session": "s-42"},
        "max_output_tokens": 2048,
    }


def simple_requests() -> list[dict[str, Any]]:
    return [
        {"model": "gpt-4o-mini", "input": "Tell me a joke."},
        {"model": "gpt-4o-mini", "instructions": "Be brief.", "input": "Tell me a joke."},
        {"model": "o3", "previous_response_id": "resp_1", "instructions": None},
        {"input": [text_msg("user", "hi", typed=False)], "instructions": "x", "model": "m"},
        {
            "input": [
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi there"},
                {"role": "developer", "content": "Reply in French."},
                {"role": "user", "content": [], "x_client": 1},
            ]
        },
    ]


ALL_REQUESTS = [codex_request(), hosted_tools_request(), *simple_requests()]


# ------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("payload", ALL_REQUESTS, ids=lambda p: dumps(p)[:40])
def test_round_trips_exactly_including_key_order(payload: dict[str, Any]) -> None:
    original = copy.deepcopy(payload)
    out = round_trip(payload)
    assert dumps(out) == dumps(original)
    assert payload == original, "decode must not modify the payload"


def test_codex_request_maps_onto_the_conversation_model() -> None:
    conversation = RESPONSES.decode(codex_request())
    assert conversation.dialect == "responses"
    assert conversation.model == "gpt-5-codex"
    assert [t["name"] for t in conversation.tools] == ["shell", "apply_patch"]
    roles = [m.role for m in conversation.messages]
    assert roles == [
        "system",  # instructions
        "system",  # developer message
        "user",
        "user",
        "user",
        "assistant",  # reasoning + call A1
        "tool",
        "assistant",  # reasoning + parallel calls B1, B2
        "tool",
        "tool",
        "assistant",  # reasoning + custom call C1
        "tool",
        "assistant",  # final answer
        "user",
    ]
    instructions, developer = conversation.messages[:2]
    assert instructions.pinned and developer.pinned
    assert instructions.text.startswith("You are Codex")
    parallel = conversation.messages[7]
    assert [type(p) for p in parallel.parts] == [ReasoningPart, ToolCallPart, ToolCallPart]
    assert [c.id for c in parallel.tool_calls] == ["call_B1", "call_B2"]
    reasoning_part = parallel.parts[0]
    assert isinstance(reasoning_part, ReasoningPart)
    assert reasoning_part.encrypted == f"{ENCRYPTED}2" and reasoning_part.text == ""
    custom = conversation.messages[10].tool_calls[0]
    assert (custom.name, custom.id) == ("apply_patch", "call_C1")
    assert custom.arguments.startswith("*** Begin Patch")
    result = conversation.messages[11].tool_results[0]
    assert result.tool_call_id == "call_C1" and "M src/login.py" in result.text
    image = conversation.messages[4].parts[1]
    assert isinstance(image, ImagePart) and (image.width, image.height) == (1, 1)
    assert conversation.provider_data["responses.extra"]["store"] is False
    assert "include" in conversation.provider_data["responses.extra"]


def test_generic_calls_pair_with_their_outputs() -> None:
    conversation = RESPONSES.decode(hosted_tools_request())
    calls = {c.id: c for m in conversation.messages for c in m.tool_calls}
    results = {r.tool_call_id for m in conversation.messages for r in m.tool_results}
    assert {"call_cu1", "call_ls1", "mcpr_1"} <= set(calls)
    assert {"call_cu1", "call_ls1", "mcpr_1", "call_from_previous_response"} == results
    assert calls["call_ls1"].name == "local_shell_call"
    assert json.loads(calls["call_ls1"].arguments)["action"]["command"] == ["ls"]
    assert calls["mcpr_1"].name == "ask"
    # One assistant run: the web search, the refusal message and both calls, in order.
    run = next(m for m in conversation.messages if m.role == "assistant")
    assert [type(p) for p in run.parts] == [TextPart, ToolCallPart, ToolCallPart]
    assert len(run.provider_data["responses.items"]) == 4
    # item_reference, compaction and unknown items are kept whole and pinned.
    opaque = [m for m in conversation.messages if m.role == "system" and not m.parts]
    assert len(opaque) == 3 and all(m.pinned for m in opaque)


def test_string_input_is_one_user_message() -> None:
    conversation = RESPONSES.decode({"model": "m", "input": "hello", "instructions": "be kind"})
    assert [(m.role, m.text) for m in conversation.messages] == [
        ("system", "be kind"),
        ("user", "hello"),
    ]


def test_summary_text_decodes_to_a_summary_part_and_round_trips() -> None:
    text = summary_header(12, 40) + "\nEarlier: the agent fixed login."
    payload = {"input": [text_msg("user", text), text_msg("user", "go on")]}
    conversation = RESPONSES.decode(payload)
    assert isinstance(conversation.messages[0].parts[0], SummaryPart)
    assert conversation.messages[0].parts[0].replaced == 12
    assert round_trip(payload) == payload


# --------------------------------------------------------------------- canonical encoding


def test_messages_built_by_strategies_encode_to_valid_items() -> None:
    base = RESPONSES.decode(codex_request())
    summary = Message("user", (SummaryPart(summary_header(9, 20) + "\nEarlier work.", 9),))
    built = [
        summary,
        Message(
            "assistant",
            (TextPart("Checking."), ToolCallPart("call_new", "shell", '{"command":["ls"]}')),
        ),
        Message("tool", (ToolResultPart("call_new", (TextPart("a.txt"),)),)),
        Message.text_message("assistant", "Done."),
    ]
    conversation = base.with_messages([*base.messages[:2], *built])
    body = RESPONSES.encode(conversation)
    assert body["instructions"] == base.messages[0].text
    items = body["input"]
    assert items[1] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": summary.text}],
    }
    assert items[2:] == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_new",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
        },
        {"type": "function_call_output", "call_id": "call_new", "output": "a.txt"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        },
    ]
    assert RESPONSES.validate(conversation) == []
    # Never a second system message: the summary is a user item, instructions stay apart.
    assert [i.get("role") for i in items if i.get("type") == "message"].count("system") == 0


def test_masked_outputs_write_the_placeholder_into_the_item() -> None:
    conversation = RESPONSES.decode(hosted_tools_request())
    masked: list[Message] = []
    for message in conversation.messages:
        if message.role == "tool":
            result = message.tool_results[0]
            parts = (
                ToolResultPart(
                    result.tool_call_id, (TextPart("[masked]"),), provider_data=result.provider_data
                ),
            )
            masked.append(replace(message, parts=parts))
        else:
            masked.append(message)
    items = RESPONSES.encode(conversation.with_messages(masked))["input"]
    by_type = {i["type"]: i for i in items if isinstance(i, dict) and "type" in i}
    assert by_type["local_shell_call_output"] == {
        "type": "local_shell_call_output",
        "id": "call_ls1",
        "output": "[masked]",
    }
    # A screenshot cannot hold text: the output is replayed as it came.
    assert by_type["computer_call_output"] == hosted_tools_request()["input"][7]
    # A list output keeps its opaque input_file in place behind the new text.
    assert by_type["function_call_output"]["output"] == [
        {"type": "input_text", "text": "[masked]"},
        {"type": "input_file", "file_id": "file-xyz"},
    ]


def test_mask_strategy_output_keeps_call_id_and_extra_keys() -> None:
    payload = codex_request()
    long_output = "line\n" * 200
    payload["input"][6] = {**call_output("call_A1", long_output), "status": "completed"}
    conversation = RESPONSES.decode(payload)
    message = conversation.messages[6]
    masked = MaskStrategy().mask_message(message, {})
    assert masked is not None
    (item,) = RESPONSES.encode(conversation.with_messages([masked]))["input"]
    assert list(item) == ["type", "call_id", "output", "status"]
    assert item["output"].startswith("[tool output masked:")


def test_foreign_reasoning_is_not_sent() -> None:
    message = Message(
        "assistant", (ReasoningPart("thinking", signature="sig"), TextPart("Answer."))
    )
    items = RESPONSES.encode(Conversation((message,), dialect="responses"))["input"]
    assert [i["type"] for i in items] == ["message"]


# ------------------------------------------------------------------------------ decode errors


@pytest.mark.parametrize(
    ("payload", "location", "fragment"),
    [
        ([], "payload", "request object"),
        ({"input": 3}, "input", "string or a list"),
        ({"input": ["hi"]}, "input[0]", "item object"),
        ({"input": [{"content": "x"}]}, "input[0]", "`type`"),
        ({"input": [{"role": "tool", "content": "x"}]}, "input[0].role", "unknown role"),
        ({"input": [{"role": "user", "content": 3}]}, "input[0].content", "string or a list"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text"}]}]},
            "input[0].content[0].text",
            "string `text`",
        ),
        ({"input": [{"type": "function_call", "name": "f"}]}, "input[0].call_id", "call_id"),
        (
            {"input": [{"type": "function_call_output", "output": "x"}]},
            "input[0].call_id",
            "call it answers",
        ),
        (
            {"input": [{"type": "function_call_output", "call_id": "c", "output": 5}]},
            "input[0].output",
            "string or a list",
        ),
        ({"input": [], "tools": {}}, "tools", "list of tool objects"),
    ],
)
def test_decode_errors_name_the_location(payload: Any, location: str, fragment: str) -> None:
    with pytest.raises(DecodeError) as caught:
        RESPONSES.decode(payload)
    assert caught.value.location == location
    assert fragment in str(caught.value)


# ------------------------------------------------------------------------------- validation


def rules(payload: dict[str, Any]) -> list[tuple[int | None, str]]:
    return [(v.index, v.rule) for v in RESPONSES.validate(RESPONSES.decode(payload))]


def test_realistic_requests_are_valid() -> None:
    assert rules(codex_request()) == []
    assert rules(hosted_tools_request()) == []
    assert rules(simple_requests()[0]) == []


def test_unanswered_call_is_reported_at_its_index() -> None:
    payload = codex_request()
    del payload["input"][11]  # the output of call_B2
    assert rules(payload) == [(9, "unanswered_tool_call")]
    violation = RESPONSES.validate(RESPONSES.decode(payload))[0]
    assert "call_B2" in violation.message and str(violation).startswith("message 9:")


def test_trailing_pending_call_is_reported() -> None:
    payload = {"input": [text_msg("user", "go"), function_call("c1", "ls")]}
    assert rules(payload) == [(1, "unanswered_tool_call")]


def test_output_may_come_later_than_right_after_the_call() -> None:
    payload = {
        "input": [
            text_msg("user", "go"),
            function_call("c1", "ls"),
            text_msg("user", "(the user typed while the tool ran)"),
            call_output("c1", "a.txt"),
        ]
    }
    assert rules(payload) == []


def test_orphan_output_is_reported_unless_the_request_is_stateful() -> None:
    payload = {"input": [text_msg("user", "go"), call_output("c9", "x")]}
    assert rules(payload) == [(1, "orphan_tool_output")]
    assert rules({**payload, "previous_response_id": "resp_1"}) == []
    with_reference = {"input": [{"type": "item_reference", "id": "fc_9"}, *payload["input"]]}
    assert rules(with_reference) == []


def test_duplicate_call_id_while_pending() -> None:
    payload = {
        "input": [
            text_msg("user", "go"),
            function_call("c1", "ls"),
            function_call("c1", "pwd"),
            call_output("c1", "x"),
        ]
    }
    assert rules(payload) == [(2, "duplicate_call_id")]


def test_arguments_must_be_a_json_object() -> None:
    call = {**function_call("c1", "ls"), "arguments": "[1, 2]"}
    payload = {"input": [text_msg("user", "go"), call, call_output("c1", "x")]}
    assert rules(payload) == [(1, "invalid_tool_arguments")]


def test_content_required_and_part_types_match_the_role() -> None:
    payload = {
        "input": [
            {"role": "user", "content": []},
            {"role": "user", "content": [{"type": "output_text", "text": "x"}]},
            {"role": "assistant", "content": [{"type": "input_text", "text": "y"}]},
            {"type": "message", "role": "developer"},
            text_msg("user", "fine"),
        ]
    }
    assert rules(payload) == [
        (0, "missing_content"),
        (1, "invalid_content_part"),
        (2, "invalid_content_part"),
        (3, "missing_content"),
    ]


def test_empty_input_without_state_is_reported() -> None:
    assert rules({"model": "m", "input": []}) == [(None, "no_input")]
    assert rules({"model": "m", "previous_response_id": "resp_1"}) == []


def test_every_violation_in_item_order() -> None:
    payload = {
        "input": [
            text_msg("user", "go"),
            call_output("orphan", "x"),
            function_call("c1", "ls"),
            {"role": "user", "content": []},
        ]
    }
    assert rules(payload) == [
        (1, "orphan_tool_output"),
        (2, "unanswered_tool_call"),
        (3, "missing_content"),
    ]


# --------------------------------------------------------------------- registration and CLI


def test_registered_and_detected() -> None:
    assert dialects.DIALECTS["responses"] is RESPONSES
    assert get_dialect("responses").name == "responses"
    assert "RESPONSES" in dialects.__all__ and "OpenAIResponsesDialect" in dialects.__all__
    assert detect_dialect(codex_request()) == "responses"
    assert detect_dialect({"model": "m", "input": "hi"}) == "responses"
    assert detect_dialect({"model": "m", "messages": [], "input": "x"}) == "openai"
    assert decode_any(codex_request()).dialect == "responses"
    assert validate_for(decode_any(codex_request())) == []


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_count_validate_and_compact(tmp_path: Path) -> None:
    path = tmp_path / "body.json"
    path.write_text(dumps(large_codex_request(30)))
    code, out, _ = run_cli("count", str(path), "--json")
    assert code == 0
    total = json.loads(out)["total"]
    assert total > 5000

    bad = tmp_path / "bad.json"
    bad.write_text(dumps({"input": [text_msg("user", "go"), function_call("c1", "ls")]}))
    code, out, _ = run_cli("validate", str(bad), "--dialect", "responses")
    assert code == 1 and "message 1:" in out and "[unanswered_tool_call]" in out

    target = total // 3
    dest = tmp_path / "out.json"
    code, _, err = run_cli(
        "compact",
        str(path),
        "--format",
        "responses",
        "--target-tokens",
        str(target),
        "-o",
        str(dest),
    )
    assert code == 0, err
    body = json.loads(dest.read_text())
    assert "input" in body and "messages" not in body
    assert body["instructions"] == large_codex_request(30)["instructions"]
    assert rules(body) == []


# ------------------------------------------------------------------------------ compaction


def large_codex_request(steps: int) -> dict[str, Any]:
    payload = codex_request()
    head = payload["input"][:4]
    tail = payload["input"][4:]
    items: list[dict[str, Any]] = list(head)
    for i in range(steps):
        listing = "\n".join(f"{n:4d}: def helper_{i}_{n}(): return {n}" for n in range(80))
        items.append(reasoning(100 + i))
        items.append(function_call(f"call_r{i}", f"cat src/mod_{i}.py", item_id=f"fc_r{i}"))
        items.append(call_output(f"call_r{i}", listing))
        items.append(reasoning(200 + i))
        items.append(function_call(f"call_t{i}", f"pytest tests/test_{i}.py"))
        items.append(function_call(f"call_e{i}", f"sed -i s/a/b/ src/mod_{i}.py"))
        log = "\n".join(f"tests/test_{i}.py::test_{n} PASSED" for n in range(40))
        items.append(call_output(f"call_t{i}", f"{log}\n1 failed, 39 passed"))
        items.append(call_output(f"call_e{i}", ""))
        if i % 10 == 9:
            items.append(text_msg("assistant", f"Modules up to {i} are done."))
            items.append(text_msg("user", f"Also set the timeout to {30 + i} seconds."))
    payload["input"] = items + tail
    return payload


def check_compacted(original: dict[str, Any], body: dict[str, Any]) -> None:
    """The compacted body is valid, keeps instructions and pinned items, keeps every call
    with its output, and replays each kept reasoning item untouched and still followed by
    the item that followed it."""
    assert rules(body) == [], rules(body)
    assert body.get("instructions") == original.get("instructions")
    for key, value in original.items():
        if key != "input":
            assert body[key] == value, key
    before = original["input"]
    after = body["input"]
    assert after[-1] == before[-1], "the live user turn survives verbatim"
    assert before[0] in after, "the developer message is pinned"
    calls = {i["call_id"] for i in after if i.get("type") in ("function_call", "custom_tool_call")}
    outputs = {
        i["call_id"]
        for i in after
        if i.get("type") in ("function_call_output", "custom_tool_call_output")
    }
    assert calls == outputs
    following = {dumps(before[k]): before[k + 1] for k in range(len(before) - 1)}
    for k, item in enumerate(after):
        if item.get("type") == "reasoning":
            assert dumps(item) in following, "reasoning replayed untouched"
            assert after[k + 1] == following[dumps(item)], "reasoning stays with its turn"


def test_large_responses_body_compacts_under_target_with_the_default_pipeline() -> None:
    original = large_codex_request(30)
    conversation = RESPONSES.decode(copy.deepcopy(original))
    compactor = Compactor(CompactionConfig())
    before = compactor.count(conversation)
    target = before // 4
    result = compactor.compact(conversation, max_tokens=target)
    receipt = result.receipt
    assert receipt.status == "compacted", receipt.reason
    assert receipt.tokens_after <= target
    body = RESPONSES.encode(result.conversation)
    check_compacted(original, body)
    assert len(body["input"]) < len(original["input"])
    assert any(i.get("type") == "reasoning" for i in body["input"])
    outputs = [str(i.get("output")) for i in body["input"]]
    assert any(o.startswith("[tool output masked:") for o in outputs)
    summaries = [i for i in body["input"] if "[compacted:" in dumps(i.get("content"))]
    assert all(i["role"] == "user" and i["type"] == "message" for i in summaries)


def test_truncation_drops_reasoning_only_with_its_turn() -> None:
    original = large_codex_request(12)
    conversation = RESPONSES.decode(copy.deepcopy(original))
    config = CompactionConfig.from_dict({"strategies": [{"kind": "truncate"}]})
    compactor = Compactor(config)
    target = compactor.count(conversation) // 5
    result = compactor.compact(conversation, max_tokens=target)
    assert result.receipt.status == "compacted", result.receipt.reason
    check_compacted(original, RESPONSES.encode(result.conversation))


# -------------------------------------------------------------------------------- property


PIPELINES: tuple[tuple[str, ...], ...] = (("mask", "digest", "truncate"), ("truncate",))


@st.composite
def request_bodies(draw: st.DrawFn) -> dict[str, Any]:
    words = st.text(alphabet="abc xyz\n", min_size=1, max_size=400).filter(str.strip)
    items: list[dict[str, Any]] = [text_msg("developer", "rules")]
    n = 0
    for turn in range(draw(st.integers(1, 8))):
        items.append(text_msg("user", draw(words), typed=draw(st.booleans())))
        for _ in range(draw(st.integers(0, 3))):
            n += 1
            if draw(st.booleans()):
                items.append(reasoning(n))
            ids = [f"c{n}_{k}" for k in range(draw(st.integers(0, 3)))]
            if draw(st.booleans()) or not ids:
                items.append(text_msg("assistant", draw(words)))
            if draw(st.booleans()):
                items.append({"type": "web_search_call", "id": f"ws{n}", "status": "completed"})
            items.extend(function_call(c, draw(words)) for c in ids)
            items.extend(call_output(c, draw(words)) for c in ids)
        if turn and draw(st.booleans()):
            items.append({"type": "item_reference", "id": f"msg_{turn}"})
    items.append(text_msg("user", "what now?"))
    body: dict[str, Any] = {"model": "gpt-4o", "input": items, "store": draw(st.booleans())}
    if draw(st.booleans()):
        body = {"instructions": draw(words), **body}
    return body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request_bodies(), st.floats(0.05, 1.0), st.sampled_from(PIPELINES))
def test_random_bodies_round_trip_and_compact_validly(
    body: dict[str, Any], ratio: float, pipeline: tuple[str, ...]
) -> None:
    assert dumps(round_trip(body)) == dumps(body)
    assert rules(body) == []
    conversation = RESPONSES.decode(body)
    strategies = [{"kind": k} for k in pipeline]
    compactor = Compactor(
        CompactionConfig.from_dict({"keep_recent_n": 1, "strategies": strategies})
    )
    target = max(int(compactor.count(conversation) * ratio), 1)
    result = compactor.compact(conversation, max_tokens=target)
    assert result.receipt.status != "failed", result.receipt.reason
    check_compacted(body, RESPONSES.encode(result.conversation))
