"""The `Compaction` capability in a real pydantic-ai agent driven by `FunctionModel`: a
multi-turn run with tools, an image in the task and signed thinking, over the budget again
and again."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai import messages as pm
from pydantic_ai.models.function import AgentInfo, FunctionModel

from compaction import CompactionConfig
from compaction.integrations.pydantic_ai import Compaction
from compaction.providers.testing import FunctionProvider

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def file_text(path: str) -> str:
    return "\n".join(
        f"{path}:{i}: value_{path.replace('.', '_')}_{i} = compute({i})" for i in range(150)
    )


def think(n: int) -> pm.ThinkingPart:
    return pm.ThinkingPart(f"step {n}: read the next file", signature=f"sig-{n}")


def script() -> Iterator[pm.ModelResponse]:
    """What the model answers, call after call, over three user turns."""
    n = 0
    for turn, files in enumerate([range(6), range(6, 10), range(10, 14)]):
        for i in files:
            n += 1
            yield pm.ModelResponse(
                parts=[think(n), pm.ToolCallPart("read_file", {"path": f"f{i}.py"}, f"call-{i}")]
            )
        if turn == 1:
            n += 1
            yield pm.ModelResponse(
                parts=[
                    think(n),
                    pm.ToolCallPart("recall", {"query": "value_f0_py_7"}, "call-recall"),
                ]
            )
        yield pm.ModelResponse(parts=[pm.TextPart(f"turn {turn} done")])


class Recorder:
    def __init__(self) -> None:
        self.received: list[list[pm.ModelMessage]] = []
        self.tools: list[list[str]] = []
        self.replies = script()

    def __call__(self, messages: list[pm.ModelMessage], info: AgentInfo) -> pm.ModelResponse:
        self.received.append(list(messages))
        self.tools.append([t.name for t in info.function_tools])
        return next(self.replies)


def summarize(request: Any) -> dict[str, Any]:
    return {"summary": "The agent read several files while fixing the bug.", "kept_facts": []}


def check_valid(messages: list[pm.ModelMessage]) -> None:
    """pydantic-ai's own validation, and every tool call answered in the next request."""
    dumped = pm.ModelMessagesTypeAdapter.dump_python(messages, mode="json")
    pm.ModelMessagesTypeAdapter.validate_python(dumped)
    for i, message in enumerate(messages):
        if isinstance(message, pm.ModelResponse):
            calls = {p.tool_call_id for p in message.parts if isinstance(p, pm.ToolCallPart)}
            if not calls:
                continue
            following = messages[i + 1]
            assert isinstance(following, pm.ModelRequest)
            answered = {p.tool_call_id for p in following.parts if isinstance(p, pm.ToolReturnPart)}
            assert calls <= answered, (i, calls, answered)


def test_a_multi_turn_agent_stays_in_budget_and_keeps_its_history() -> None:
    model = Recorder()
    summarizer = FunctionProvider(summarize)
    config = CompactionConfig(
        token_threshold=6000,
        max_tokens=4000,
        keep_recent_n=4,
        strategies=[{"kind": "summarize"}, {"kind": "truncate"}],
    )
    capability = Compaction(config, summarizer=summarizer)  # the user's glue: one line
    agent = Agent(FunctionModel(model), capabilities=[capability])

    @agent.tool_plain
    def read_file(path: str) -> str:
        return file_text(path)

    views = []
    original = capability.prepare_model_request

    paid: list[int] = []

    async def watched(ctx: Any, request_context: Any) -> Any:
        before = len(summarizer.requests)
        out = await original(ctx, request_context)
        views.append(capability.last_view)
        paid.append(len(summarizer.requests) - before)
        return out

    capability.prepare_model_request = watched  # type: ignore[method-assign]

    task: list[Any] = [
        "Fix the failing test; the screenshot shows it.",
        pm.BinaryContent(PNG, media_type="image/png"),
    ]
    # asyncio.run, not run_sync: run_sync leaves its event loop open for the process.
    first = asyncio.run(agent.run(task))
    second = asyncio.run(agent.run("Now the next files.", message_history=first.all_messages()))
    stored = pm.ModelMessagesTypeAdapter.validate_json(
        pm.ModelMessagesTypeAdapter.dump_json(second.all_messages())
    )
    third = asyncio.run(agent.run("And the last ones.", message_history=stored))
    assert third.output == "turn 2 done"

    compactions = [v for v in views if v is not None and v.compacted]
    assert len(compactions) >= 3
    # A summary is paid once per compacted span, not once per model call: the summarizer is
    # called only by the calls that compacted, and each later call reuses the summary.
    assert all((n > 0) == v.compacted for n, v in zip(paid, views, strict=True))
    assert len(compactions) < len(model.received) / 2
    # Only new messages are decoded: two per step, one when a run starts from the history,
    # even from freshly loaded objects.
    assert max(v.decoded for v in views[1:]) <= 2
    # One conversation, one log: the later runs continued it (no branch), summaries included.
    assert [s.compactions for s in capability.threads.store.sessions()] == [len(compactions)]

    signatures = {
        (p.content, p.signature)
        for m in third.all_messages()
        for p in m.parts
        if isinstance(p, pm.ThinkingPart)
    }
    for view, received in zip(views, model.received, strict=True):
        check_valid(received)
        assert "recall" in model.tools[0]
        thinking = [p for m in received for p in m.parts if isinstance(p, pm.ThinkingPart)]
        assert all((p.content, p.signature) in signatures for p in thinking)
        first_prompt = next(
            p for m in received for p in m.parts if isinstance(p, pm.UserPromptPart)
        )
        assert any(isinstance(c, pm.BinaryContent) and c.data == PNG for c in first_prompt.content)
        if view.compacted:
            summaries = [p for m in received for p in m.parts if isinstance(p, pm.CompactionPart)]
            assert summaries and all(s.provider_name is None for s in summaries)

    # The framework's history keeps everything: every call, every full result, no summary.
    history = third.all_messages()
    returns = [p for m in history for p in m.parts if isinstance(p, pm.ToolReturnPart)]
    assert len(returns) == 15
    reads = {p.tool_call_id: p for p in returns if p.tool_name == "read_file"}
    assert reads["call-0"].content == file_text("f0.py")
    assert not any(isinstance(p, pm.CompactionPart) for m in history for p in m.parts)

    # The recall tool answered with the original line, compacted away by then.
    recalled = next(p for p in returns if p.tool_name == "recall")
    assert "f0.py:7: value_f0_py_7 = compute(7)" in str(recalled.content)
    asked = next(
        r
        for r in model.received
        if any(
            isinstance(p, pm.ToolCallPart) and p.tool_name == "recall" for m in r for p in m.parts
        )
    )
    shown = [p for m in asked for p in m.parts if isinstance(p, pm.ToolReturnPart)]
    assert not any(p.tool_call_id == "call-0" and p.content == file_text("f0.py") for p in shown)
