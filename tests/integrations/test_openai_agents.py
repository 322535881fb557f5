"""The Agents SDK integration: items ↔ Conversation for every input item type, and a real
`Runner` with the SDK's `ScriptedModel`, a `CompactionSession` and its input filter."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import typing
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, function_tool
from agents.models.chatcmpl_converter import Converter
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from openai.types.responses.response_input_item_param import ResponseInputItemParam
from openai.types.responses.response_reasoning_item import ResponseReasoningItem, Summary
from pydantic import TypeAdapter

from compaction import RESPONSES, CompactionConfig
from compaction.integrations.openai_agents import (
    CompactionSession,
    from_conversation,
    to_conversation,
)
from compaction.messages import Message, SummaryPart
from compaction.providers.testing import FunctionProvider
from compaction.serialize import message_from_dict, message_to_dict

PNG_URL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def every_item() -> list[dict[str, Any]]:
    """One item of every Responses input item type, with ids, status and extra fields."""
    return [
        {"role": "developer", "content": "Be careful."},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Fix it; see the screenshot."},
                {"type": "input_image", "image_url": PNG_URL, "detail": "high"},
                {"type": "input_file", "file_id": "file-1"},
            ],
        },
        {"type": "item_reference", "id": "msg_0"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "enc-1",
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Looking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "c1",
            "name": "read_file",
            "arguments": '{"path": "a.py"}',
            "status": "completed",
        },
        {
            "type": "custom_tool_call",
            "id": "ct_1",
            "call_id": "c2",
            "name": "patch",
            "input": "*** Begin Patch",
        },
        {
            "type": "computer_call",
            "id": "cc_1",
            "call_id": "c3",
            "action": {"type": "screenshot"},
            "pending_safety_checks": [],
            "status": "completed",
        },
        {
            "type": "local_shell_call",
            "id": "ls_1",
            "call_id": "c4",
            "action": {"type": "exec", "command": ["ls"], "env": {}},
            "status": "completed",
        },
        {
            "type": "shell_call",
            "id": "sh_1",
            "call_id": "c5",
            "action": {"commands": ["pwd"]},
            "status": "completed",
        },
        {
            "type": "apply_patch_call",
            "id": "ap_1",
            "call_id": "c6",
            "operation": {"type": "update_file", "path": "a.py", "diff": "-x\n+y"},
            "status": "completed",
        },
        {
            "type": "mcp_approval_request",
            "id": "mr_1",
            "arguments": "{}",
            "name": "deploy",
            "server_label": "ops",
        },
        {"type": "program", "id": "pg_1", "call_id": "c8", "code": "print(1)"},
        {
            "type": "web_search_call",
            "id": "ws_1",
            "action": {"type": "search", "query": "x"},
            "status": "completed",
        },
        {"type": "file_search_call", "id": "fs_1", "queries": ["x"], "status": "completed"},
        {"type": "image_generation_call", "id": "ig_1", "result": None, "status": "completed"},
        {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "code": "1+1",
            "container_id": "k",
            "outputs": [],
            "status": "completed",
        },
        {
            "type": "mcp_call",
            "id": "mc_1",
            "arguments": "{}",
            "name": "ping",
            "server_label": "ops",
        },
        {"type": "mcp_list_tools", "id": "ml_1", "server_label": "ops", "tools": []},
        {"type": "tool_search_call", "id": "ts_1", "arguments": {"q": "x"}, "status": "completed"},
        {"type": "function_call_output", "call_id": "c1", "output": "def f(): ..."},
        {
            "type": "custom_tool_call_output",
            "call_id": "c2",
            "output": [{"type": "input_text", "text": "applied"}],
        },
        {
            "type": "computer_call_output",
            "call_id": "c3",
            "output": {"type": "computer_screenshot", "image_url": PNG_URL},
        },
        {"type": "local_shell_call_output", "id": "c4", "output": "a.py\n"},
        {
            "type": "shell_call_output",
            "call_id": "c5",
            "output": [{"stdout": "/w", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}],
        },
        {
            "type": "apply_patch_call_output",
            "call_id": "c6",
            "status": "completed",
            "output": "done",
        },
        {"type": "mcp_approval_response", "approval_request_id": "mr_1", "approve": True},
        {"type": "program_output", "call_id": "c8", "result": "1"},
        {"type": "tool_search_output", "id": "to_1", "tools": [], "status": "completed"},
        {"type": "additional_tools", "tools": []},
        {"type": "configuration_update", "id": "cu_1"},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "enc-c"},
        {"type": "compaction_trigger"},
        {"role": "user", "content": "[compacted: 4 messages → 7 chars]\nearlier"},
    ]


def input_item_types() -> set[str]:
    found: set[str] = set()
    for member in typing.get_args(ResponseInputItemParam):
        for arg in typing.get_args(typing.get_type_hints(member)["type"]):
            if isinstance(arg, str):
                found.add(arg)
            else:
                found.update(a for a in typing.get_args(arg) if isinstance(a, str))
    return found


def test_the_items_cover_every_input_item_type() -> None:
    present = {item.get("type", "message") for item in every_item()}
    assert input_item_types() - present == set()


def test_round_trip_is_lossless() -> None:
    items = every_item()
    assert from_conversation(to_conversation(items)) == items
    stored = [message_from_dict(message_to_dict(m)) for m in to_conversation(items)]
    assert from_conversation(stored) == items


def test_a_summary_is_a_user_message_item_and_reads_back_as_a_summary() -> None:
    summary = Message("user", (SummaryPart("[compacted: 5 messages → 4 chars]\nbody", 5),))
    (item,) = from_conversation([summary])
    assert item["role"] == "user" and item["content"][0]["type"] == "input_text"
    (again,) = to_conversation([item]).messages
    assert again.is_summary and again.parts[0].replaced == 5  # type: ignore[union-attr]


def test_without_the_extra_the_import_names_it() -> None:
    code = "import sys; sys.modules['agents'] = None\nimport compaction.integrations.openai_agents"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert "pip install 'llm-compaction[openai-agents]'" in done.stderr


# -- end to end ------------------------------------------------------------------------------


def file_text(path: str) -> str:
    stem = path.removesuffix(".py")
    return "\n".join(f"{path}:{i}: {stem}_value_{i} = compute({i})" for i in range(150))


def reasoning(n: int) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id=f"rs_{n}",
        type="reasoning",
        summary=[Summary(text=f"step {n}", type="summary_text")],
        encrypted_content=f"enc-{n}",
    )


def script() -> list[Any]:
    steps: list[Any] = []
    n = 0
    for turn, files in enumerate([range(6), range(6, 10), range(10, 14)]):
        for i in files:
            n += 1
            steps.append(
                [
                    reasoning(n),
                    function_call("read_file", {"path": f"f{i}.py"}, call_id=f"call_{i}"),
                ]
            )
        if turn == 1:
            n += 1
            steps.append(
                [
                    reasoning(n),
                    function_call("recall", {"query": "f0_value_7"}, call_id="call_recall"),
                ]
            )
        steps.append([assistant_message(f"turn {turn} done", item_id=f"msg_{turn}")])
    return steps


def check_valid(items: list[Any]) -> None:
    """The SDK's own item types and its Chat Completions converter take the items, and the
    Responses rules hold (every call answered, reasoning with its item)."""
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseInputItemParam)
    for item in items:
        adapter.validate_python(item)
    Converter.items_to_messages(items)
    assert RESPONSES.validate(RESPONSES.decode({"input": items})) == []


def test_a_multi_turn_run_stays_in_budget_and_the_session_keeps_everything() -> None:
    summarizer = FunctionProvider(
        lambda request: {"summary": "The agent read files.", "kept_facts": []}
    )
    config = CompactionConfig(
        token_threshold=6000,
        max_tokens=4000,
        keep_recent_n=4,
        strategies=[{"kind": "summarize"}, {"kind": "truncate"}],
    )
    session = CompactionSession("user 42 / thread:a", config, summarizer=summarizer)
    model = ScriptedModel(script())

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return file_text(path)

    agent = Agent(name="coder", model=model, tools=[read_file, session.recall_tool()])
    views: list[Any] = []
    paid: list[int] = []
    original = session.input_filter

    async def watched(data: Any) -> Any:
        before = len(summarizer.requests)
        out = await original(data)
        views.append(session.last_view)
        paid.append(len(summarizer.requests) - before)
        return out

    session.input_filter = watched  # type: ignore[method-assign]
    task = [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Fix the failing test."},
                {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
            ],
        }
    ]

    async def run() -> list[str]:
        outputs = []
        for prompt in (task, "Now the next files.", "And the last ones."):
            result = await Runner.run(
                agent, prompt, session=session, run_config=session.run_config(tracing_disabled=True)
            )
            outputs.append(result.final_output)
        return outputs

    assert asyncio.run(run()) == ["turn 0 done", "turn 1 done", "turn 2 done"]
    model.assert_complete()

    compactions = [v for v in views if v.compacted]
    assert len(compactions) >= 3
    assert all((n > 0) == v.compacted for n, v in zip(paid, views, strict=True))
    assert max(v.decoded for v in views[1:]) <= 3  # reasoning + call → one unit, plus the output
    signatures = {f"enc-{n}" for n in range(1, 16)}
    for view, call in zip(views, model.calls, strict=True):
        items = list(call.input)
        check_valid(items)
        assert items[0]["content"][1]["image_url"] == PNG_URL  # the task's image survives
        assert {i["encrypted_content"] for i in items if i.get("type") == "reasoning"} <= signatures
        if view.compacted:
            assert any(m.is_summary for m in to_conversation(items))

    # The session keeps every item; one log for the whole conversation, a valid id for any name.
    items = asyncio.run(session.get_items())
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert len(outputs) == 15
    assert json.loads(json.dumps(outputs[0]))["output"] == file_text("f0.py")
    assert not any(m.is_summary for m in to_conversation(items))
    assert [s.id for s in session.threads.store.sessions()] == [
        "user-42-thread:a-" + session.log_id.rsplit("-", 1)[1]
    ]

    recalled = next(i for i in outputs if i["call_id"] == "call_recall")
    assert "f0.py:7: f0_value_7 = compute(7)" in recalled["output"]
    asked = next(c for c in model.calls if any(i.get("call_id") == "call_recall" for i in c.input))
    assert not any(i.get("output") == file_text("f0.py") for i in asked.input)


def test_a_restarted_process_resumes_the_session_from_the_store(tmp_path: Any) -> None:
    store = str(tmp_path / "sessions.db")
    config = CompactionConfig(token_threshold=3000, max_tokens=2000, keep_recent_n=2)

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return file_text(path)

    def run(session: CompactionSession, steps: list[Any], prompt: str) -> None:
        agent = Agent(name="coder", model=ScriptedModel(steps), tools=[read_file])
        asyncio.run(
            Runner.run(
                agent, prompt, session=session, run_config=session.run_config(tracing_disabled=True)
            )
        )

    first = CompactionSession("s1", config, store=store)
    run(
        first,
        [[function_call("read_file", {"path": f"f{i}.py"}, call_id=f"c{i}")] for i in range(4)]
        + [[assistant_message("ok")]],
        "read",
    )
    assert first.threads.log("s1").info().compactions >= 1
    before = asyncio.run(first.get_items())

    again = CompactionSession("s1", config, store=store)  # a new process: nothing in memory
    assert asyncio.run(again.get_items()) == before
    steps: list[Any] = [ModelStep(output=[assistant_message("still ok")])]
    run(again, steps, "go on")
    assert [s.id for s in again.threads.store.sessions()] == ["s1"]  # continued, not branched
