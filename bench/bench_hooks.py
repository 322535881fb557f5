"""Benchmarks for the framework hooks (DESIGN.md §7): `should_compact` through each hook on
a 120k-token history.

For pydantic-ai, the OpenAI Agents SDK and LangChain, a coding-agent history of ~120k tokens
(a task with an image, then tool calls and their outputs) is built in the framework's own
messages, and the hook has seen it once (as it has after the previous model call). Then:

1. fresh objects: the same history rebuilt as new objects (loaded back from the framework's
   JSON, as a new run or a checkpointer hands it over) → `should_compact` through the hook.
   Budget ≤ 5 ms.
2. after one append: the history plus one new tool output, call after call. Budget ≤ 1 ms.

Baseline, same run: what a user does without the hook — decode the whole fresh history
with the module's converter and ask a `Compactor` (counts cached per message object, so a
fresh decode counts everything). Timings are medians over repeated calls with the garbage
collector paused. This module must never reach the network.

Run standalone: `python bench/bench_hooks.py` prints a table.
"""

from __future__ import annotations

import copy
import gc
import importlib.util
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from compaction import CompactionConfig, Compactor
from rows import row

TARGET_TOKENS = 120_000
FRESH_BUDGET_MS = 5.0
APPEND_BUDGET_MS = 1.0
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
# Never compacts: only the decision is measured.
CONFIG = CompactionConfig(token_threshold=10_000_000, tokenizer_model="gpt-4o")


def tool_output(i: int) -> str:
    lines = [
        f"tests/test_mod{i}.py::test_case_{j} {'PASSED' if j % 7 else 'FAILED'} "
        f"[{j}%] {{'id': {i * 100 + j}, 'path': 'src/pkg/mod{i}.py', 'line': {j * 3}}}"
        for j in range(60)
    ]
    return "\n".join(lines)


def time_ms(fn: Callable[[], object], repeat: int) -> float:
    gc.disable()
    try:
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        gc.enable()
    return statistics.median(samples)


class Case:
    """One framework: how to build its history, copy it fresh, append to it, and decode it."""

    name: str
    module: str

    def exchange(self, i: int) -> list[Any]:
        raise NotImplementedError

    def task(self) -> list[Any]:
        raise NotImplementedError

    def fresh(self, history: list[Any]) -> list[Any]:
        raise NotImplementedError

    def threads(self) -> Any:
        raise NotImplementedError

    def to_conversation(self, history: list[Any]) -> Any:
        raise NotImplementedError


class PydanticAI(Case):
    name, module = "pydantic-ai", "pydantic_ai"

    def __init__(self) -> None:
        from pydantic_ai import messages as pm

        self.pm = pm

    def task(self) -> list[Any]:
        pm = self.pm
        image = pm.BinaryContent(bytes.fromhex("89504e47"), media_type="image/png")
        return [pm.ModelRequest(parts=[pm.UserPromptPart(["Fix the failing tests.", image])])]

    def exchange(self, i: int) -> list[Any]:
        pm = self.pm
        call = pm.ToolCallPart("run_tests", {"path": f"tests/test_mod{i}.py"}, f"call-{i}")
        return [
            pm.ModelResponse(parts=[pm.ThinkingPart(f"step {i}", signature=f"s{i}"), call]),
            pm.ModelRequest(parts=[pm.ToolReturnPart("run_tests", tool_output(i), f"call-{i}")]),
        ]

    def fresh(self, history: list[Any]) -> list[Any]:
        adapter = self.pm.ModelMessagesTypeAdapter
        return list(adapter.validate_json(adapter.dump_json(history)))

    def threads(self) -> Any:
        from compaction.integrations.pydantic_ai import Compaction

        return Compaction(CONFIG).threads

    def to_conversation(self, history: list[Any]) -> Any:
        from compaction.integrations.pydantic_ai import to_conversation

        return to_conversation(history, model="gpt-4o")


class OpenAIAgents(Case):
    name, module = "openai-agents", "agents"

    def task(self) -> list[Any]:
        content = [
            {"type": "input_text", "text": "Fix the failing tests."},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
        ]
        return [{"role": "user", "content": content}]

    def exchange(self, i: int) -> list[Any]:
        arguments = json.dumps({"path": f"tests/test_mod{i}.py"})
        return [
            {"type": "reasoning", "id": f"rs_{i}", "summary": [], "encrypted_content": f"e{i}"},
            {
                "type": "function_call",
                "call_id": f"c{i}",
                "name": "run_tests",
                "arguments": arguments,
            },
            {"type": "function_call_output", "call_id": f"c{i}", "output": tool_output(i)},
        ]

    def fresh(self, history: list[Any]) -> list[Any]:
        return copy.deepcopy(history)

    def threads(self) -> Any:
        from compaction.integrations.openai_agents import CompactionSession

        return CompactionSession("bench", CONFIG).threads

    def to_conversation(self, history: list[Any]) -> Any:
        from compaction.integrations.openai_agents import to_conversation

        return to_conversation(history, model="gpt-4o")


class LangChain(Case):
    name, module = "langchain", "langchain"

    def __init__(self) -> None:
        from langchain_core import messages as lm

        self.lm = lm

    def task(self) -> list[Any]:
        image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
        return [self.lm.HumanMessage([{"type": "text", "text": "Fix the failing tests."}, image])]

    def exchange(self, i: int) -> list[Any]:
        lm = self.lm
        thinking = {"type": "thinking", "thinking": f"step {i}", "signature": f"s{i}"}
        call = {"name": "run_tests", "args": {"path": f"tests/test_mod{i}.py"}, "id": f"c{i}"}
        return [
            lm.AIMessage(content=[thinking], tool_calls=[call]),
            lm.ToolMessage(tool_output(i), tool_call_id=f"c{i}"),
        ]

    def fresh(self, history: list[Any]) -> list[Any]:
        lm = self.lm
        return list(lm.messages_from_dict(json.loads(json.dumps(lm.messages_to_dict(history)))))

    def threads(self) -> Any:
        from compaction.integrations.langchain import CompactionMiddleware

        return CompactionMiddleware(CONFIG).threads

    def to_conversation(self, history: list[Any]) -> Any:
        from compaction.integrations.langchain import to_conversation

        return to_conversation(history, model="gpt-4o")


def build(case: Case) -> list[Any]:
    """The task and as many exchanges as make `TARGET_TOKENS` (sized from the first ten)."""
    count = Compactor(CONFIG).count
    task = count(case.to_conversation(case.task()))
    sample = case.task() + [m for i in range(10) for m in case.exchange(i)]
    per_exchange = (count(case.to_conversation(sample)) - task) / 10
    exchanges = round((TARGET_TOKENS - task) / per_exchange)
    return case.task() + [m for i in range(exchanges) for m in case.exchange(i)]


def measure(case: Case) -> list[dict[str, Any]]:
    history = build(case)
    threads = case.threads()
    tokens = threads.should_compact("t", history).tokens  # the hook has seen it once
    fresh = [case.fresh(history) for _ in range(9)]
    copies = iter(fresh)
    fresh_ms = time_ms(lambda: threads.should_compact("t", next(copies)), len(fresh))
    copies = iter(fresh)
    baseline_ms = time_ms(
        lambda: Compactor(CONFIG).should_compact(case.to_conversation(next(copies))), 5
    )
    growing = list(fresh[-1])
    extra = iter(range(10_000, 10_100))

    def append_one() -> None:
        growing.append(case.exchange(next(extra))[-1])
        threads.should_compact("t", growing)

    append_ms = time_ms(append_one, 41)
    label = f"{case.name}: should_compact through the hook, {tokens // 1000}k-token history"
    baseline = "decode the fresh history + Compactor.should_compact"
    return [
        row(
            f"{label}, fresh objects",
            value=fresh_ms,
            unit="ms",
            baseline_name=baseline,
            baseline_value=baseline_ms,
            budget=f"≤ {FRESH_BUDGET_MS:g} ms",
            ok=fresh_ms <= FRESH_BUDGET_MS,
        ),
        row(
            f"{label}, after one append",
            value=append_ms,
            unit="ms",
            baseline_name=baseline,
            baseline_value=baseline_ms,
            budget=f"≤ {APPEND_BUDGET_MS:g} ms",
            ok=append_ms <= APPEND_BUDGET_MS,
        ),
    ]


def run() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for factory in (PydanticAI, OpenAIAgents, LangChain):
        if importlib.util.find_spec(factory.module) is None:
            continue  # the framework's extra is not installed
        rows.extend(measure(factory()))
    return rows


if __name__ == "__main__":
    for r in run():
        print(
            f"{r['name']:<80} {r['value']:>8} ms  baseline {r['baseline_value']:>8} ms  "
            f"ratio {r['ratio']:<8} {r['budget']:<8} {'ok' if r['ok'] else 'MISSED'}"
        )
