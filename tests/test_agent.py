"""The orchestrator's loop with the scripted provider: tools, errors, the turn limit,
overflow → compact → retry, hooks, resume equality and recall of compacted tool output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

from compaction import ANTHROPIC, OPENAI, CompactionConfig, Compactor
from compaction.agent import (
    AgentEvent,
    CompactionDone,
    ModelCallFinished,
    ModelCallStarted,
    Orchestrator,
    TextDelta,
    ToolCallFinished,
)
from compaction.exceptions import AgentError, ConfigError, ContextOverflowError
from compaction.log import SessionLog
from compaction.messages import Conversation, Message
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import ScriptedProvider, Step, ToolCalls
from compaction.store import open_store
from compaction.tools import read_file, resolve_tools, tool

BUILD_ID = "7f3a9c21"


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number.
        b: the second number.
    """
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")


@tool
def inventory(section: str = "all") -> str:
    """A long report whose one interesting line is buried in noise."""
    noise = "\n".join(f"item {i:04d} ok checksum {i * 7919 % 10007:05d}" for i in range(400))
    return f"report {section}\n{noise}\nbuild-id {BUILD_ID} deployed\n{noise}"


def agent(provider: ScriptedProvider, **kwargs: object) -> Orchestrator:
    kwargs.setdefault("tools", [add, explode, inventory])
    kwargs.setdefault("system_prompt", "You are a careful agent.")
    return Orchestrator(provider, model="gpt-4o-mini", **kwargs)  # type: ignore[arg-type]


def valid_everywhere(messages: tuple[Message, ...], *, allow: tuple[str, ...] = ()) -> None:
    conversation = Conversation(messages=messages, model="gpt-4o-mini")
    for dialect in (OPENAI, ANTHROPIC):
        encoded = dialect.encode(conversation)
        problems = [v for v in dialect.validate(dialect.decode(encoded)) if v.rule not in allow]
        assert problems == [], dialect.name


def test_an_answer_without_tools_ends_the_run() -> None:
    provider = ScriptedProvider([Step("Hello there.")])
    events: list[AgentEvent] = []
    run = agent(provider, on_event=events.append)
    result = run.run("Hi")
    assert result.stop_reason == "answered"
    assert result.text == "Hello there."
    assert [m.role for m in run.messages] == ["system", "user", "assistant"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there."
    kinds = [type(e) for e in events if not isinstance(e, TextDelta)]
    assert kinds == [ModelCallStarted, ModelCallFinished]
    provider.assert_consumed()


def test_tool_calls_run_and_their_results_reach_the_model() -> None:
    def sees_results(request: CompletionRequest) -> bool:
        answered = {r.tool_call_id: r.text for m in request.messages for r in m.tool_results}
        return answered == {"call_1_1": "5", "call_1_2": "30"}

    provider = ScriptedProvider(
        [
            Step(ToolCalls(("add", {"a": 2, "b": 3}), ("add", {"a": 10, "b": 20}))),
            Step("2+3=5 and 10+20=30.", expect=sees_results),
        ]
    )
    run = agent(provider)
    result = run.run("Add 2+3 and 10+20")
    assert result.stop_reason == "answered"
    assert result.model_calls == 2
    assert result.tool_calls == 2
    offered = provider.requests[0].tools
    assert [t.name for t in offered] == ["add", "explode", "inventory"]
    assert offered[0].parameters["required"] == ["a", "b"]
    valid_everywhere(run.messages)
    provider.assert_consumed()


def test_tool_errors_become_results_the_model_can_read() -> None:
    provider = ScriptedProvider(
        [
            Step(
                ToolCalls(
                    ("explode", {"reason": "disk full"}),
                    ("nope", {}),
                    ("add", {"a": "two", "b": 1}),
                    ("add", "{not json"),
                )
            ),
            Step("I see the errors."),
        ]
    )
    events: list[AgentEvent] = []
    run = agent(provider, on_event=events.append)
    run.run("Try things")
    results = [r for m in provider.requests[1].messages for r in m.tool_results]
    assert all(r.is_error for r in results)
    texts = [r.text for r in results]
    assert texts[0] == "RuntimeError: boom: disk full"
    assert "unknown tool 'nope'" in texts[1] and "add, explode, inventory" in texts[1]
    assert texts[2].startswith("invalid arguments for add: a:")
    assert "not JSON" in texts[3]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.call.name for e in finished] == ["explode", "nope", "add", "add"]
    # The model's own malformed arguments are kept as it sent them; nothing else is wrong.
    valid_everywhere(run.messages, allow=("invalid_tool_arguments", "invalid_tool_input"))


def test_the_turn_limit_stops_a_model_that_keeps_calling_tools() -> None:
    provider = ScriptedProvider([Step(ToolCalls(("add", {"a": i, "b": i}))) for i in range(3)])
    run = agent(provider, max_turns=3)
    result = run.run("Loop forever")
    assert result.stop_reason == "max_turns"
    assert result.model_calls == 3
    assert result.tool_calls == 3
    # The transcript still ends with answered calls, so the next event can follow it.
    assert run.messages[-1].role == "tool"
    valid_everywhere(run.messages)
    provider.assert_consumed()


def test_context_overflow_compacts_harder_and_retries_once() -> None:
    provider = ScriptedProvider(
        [
            Step(ToolCalls(("inventory", {}))),
            Step(ContextOverflowError("prompt is too long: 9000 tokens > 4096")),
            Step("Done."),
        ]
    )
    events: list[AgentEvent] = []
    run = agent(provider, on_event=events.append)
    result = run.run("Check the inventory")
    assert result.stop_reason == "answered"
    started = [e for e in events if isinstance(e, ModelCallStarted)]
    assert len(started) == 3
    compactions = [e for e in events if isinstance(e, CompactionDone)]
    assert [c.reason for c in compactions] == ["context overflow"]
    receipt = compactions[0].receipt
    assert receipt.tokens_after <= receipt.tokens_before // 2
    # The retry carried the compacted view, the overflowing request the full one.
    assert started[2].tokens < started[1].tokens // 2
    assert BUILD_ID in json.dumps([m.text for m in provider.requests[1].messages]) or any(
        BUILD_ID in r.text for m in provider.requests[1].messages for r in m.tool_results
    )
    assert not any(
        BUILD_ID in r.text for m in provider.requests[2].messages for r in m.tool_results
    )
    valid_everywhere(run.messages)


def test_a_second_overflow_fails_clearly_and_loses_nothing(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    log = SessionLog.open(store)
    provider = ScriptedProvider(
        [
            Step(ToolCalls(("inventory", {}))),
            Step(ContextOverflowError("prompt is too long")),
            Step(ContextOverflowError("prompt is too long")),
        ]
    )
    run = agent(provider, log=log)
    with pytest.raises(AgentError, match="still overflows"):
        run.run("Check the inventory")
    originals = store.messages(log.session_id)
    assert [m.role for _, m in originals] == ["system", "user", "assistant", "tool"]
    assert BUILD_ID in originals[-1][1].tool_results[0].text


def test_compaction_runs_before_a_model_call_when_a_trigger_fires() -> None:
    provider = ScriptedProvider(
        [
            Step(ToolCalls(("inventory", {"section": "a"}))),
            Step(ToolCalls(("inventory", {"section": "b"}))),
            Step("Both read."),
        ]
    )
    seen: list[Message] = []
    before: list[int] = []
    after: list[tuple[int, str]] = []
    compactor = Compactor(CompactionConfig(token_threshold=6000, max_tokens=3000))
    run = agent(
        provider,
        compactor=compactor,
        on_message=seen.append,
        before_compact=lambda conv, receipt: before.append(len(conv.messages)),
        after_compact=lambda conv, receipt: after.append((len(conv.messages), receipt.status)),
    )
    result = run.run("Read both sections")
    # Each report alone crosses the threshold: compacted before the second and third calls.
    assert before == [4, 6]
    assert len(result.compactions) == 2
    assert after and after[0][1] == "compacted"
    assert result.compactions[0].tokens_after <= 3000
    assert compactor.count(run.conversation()) <= 6000
    assert [m.role for m in seen] == [
        *("system", "user", "assistant", "tool", "assistant", "tool", "assistant")
    ]
    valid_everywhere(run.messages)


def test_resume_gives_exactly_the_view_the_model_last_saw(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    provider = ScriptedProvider(
        [
            Step(ToolCalls(("inventory", {}))),
            Step(ToolCalls(("add", {"a": 1, "b": 2}))),
            Step("Finished."),
        ]
    )
    compactor = Compactor(CompactionConfig(token_threshold=4000, max_tokens=2500))
    first = agent(provider, log=SessionLog.open(open_store(path)), compactor=compactor)
    first.run("Go")
    last_request = provider.requests[-1].messages
    resumed = SessionLog.open(open_store(path), first.session_id, create=False)
    # The view is what the model was sent on its last call, plus its answer.
    assert resumed.messages == (*last_request, first.messages[-1])
    assert resumed.messages == first.messages

    provider2 = ScriptedProvider([Step("Still here.")])
    second = agent(provider2, log=resumed, compactor=compactor)
    second.run("Anything else?")
    assert provider2.requests[0].messages[: len(first.messages)] == first.messages
    assert sum(m.role == "system" for m in second.messages) == 1


def test_recall_brings_back_a_value_only_seen_in_compacted_tool_output() -> None:
    def recalled(request: CompletionRequest) -> bool:
        return BUILD_ID in request.messages[-1].tool_results[0].text

    log = SessionLog.open(open_store(":memory:"))
    provider = ScriptedProvider(
        [
            Step(ToolCalls(("inventory", {}))),
            Step("Read it."),
            Step(ToolCalls(("recall", {"query": "build-id"}))),
            Step(f"The build id was {BUILD_ID}.", expect=recalled),
        ]
    )
    compactor = Compactor(CompactionConfig(token_threshold=5000, max_tokens=2000))
    run = agent(
        provider,
        log=log,
        compactor=compactor,
        tools=[*resolve_tools(["recall"], log=log), inventory],
    )
    run.run("Check the inventory")
    run.run("What was the build id?")
    # Compacted away: the value is nowhere in what the model saw before it recalled…
    before_recall = provider.requests[2].messages
    assert not any(BUILD_ID in json.dumps(OPENAI.encode(Conversation(before_recall))) for _ in [0])
    # …and the recall tool answered with the exact original line.
    assert provider.requests[3].messages[-1].tool_results[0].text.count(f"build-id {BUILD_ID}") == 1
    hits = log.recall(BUILD_ID)
    assert hits and log.original(hits[0].seq).tool_results[0].text == inventory()
    provider.assert_consumed()


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_tool_schemas_count_in_the_tokens(dialect: Literal["openai", "anthropic"]) -> None:
    with_tools = agent(ScriptedProvider([]), dialect=dialect)
    without = agent(ScriptedProvider([]), dialect=dialect, tools=[])
    assert with_tools.compactor.count(with_tools.conversation()) > without.compactor.count(
        without.conversation()
    )


def test_tool_schema_from_type_hints_and_docstring() -> None:
    @tool(name="search_code")
    def search(
        pattern: str, mode: Literal["regex", "literal"] = "literal", limit: int | None = None
    ) -> list[str]:
        """Search the code base.

        Args:
            pattern: what to look for.
            mode: how to read the pattern.
        """
        return [pattern, mode, str(limit)]

    assert search.name == "search_code"
    assert search.description == "Search the code base."
    props = search.parameters["properties"]
    assert props["pattern"] == {"type": "string", "description": "what to look for."}
    assert props["mode"]["enum"] == ["regex", "literal"]
    assert search.parameters["required"] == ["pattern"]
    assert search.parameters["additionalProperties"] is False
    assert search.run({"pattern": "x", "limit": 3}).text == '["x", "literal", "3"]'
    assert search.run("[1]").is_error
    assert "mode" in search.run({"pattern": "x", "mode": "fuzzy"}).text
    assert search("y") == ["y", "literal", "None"]  # still callable as a function


def test_resolve_tools_names_what_is_wrong(tmp_path: Path) -> None:
    found = resolve_tools(["read_file", "list_directory", "tests.test_agent:add"])
    assert [t.name for t in found] == ["read_file", "list_directory", "add"]
    with pytest.raises(ConfigError, match=r"tools\[0\].*unknown tool 'grep'"):
        resolve_tools(["grep"])
    with pytest.raises(ConfigError, match=r"cannot import 'no_such_module'"):
        resolve_tools(["no_such_module:f"])
    with pytest.raises(ConfigError, match="needs a session log"):
        resolve_tools(["recall"])
    with pytest.raises(ConfigError, match="two tools are named 'read_file'"):
        resolve_tools(["read_file", read_file])
    target = tmp_path / "notes.txt"
    target.write_text("abcdef")
    assert read_file.run({"path": str(target), "offset": 2, "max_chars": 2}).text.startswith("cd\n")


def test_from_config_builds_the_agent_a_workflow_describes() -> None:
    from compaction.agent import summarizer_provider
    from compaction.providers.openai import OpenAIProvider
    from compaction.workflow import WorkflowConfig

    workflow = WorkflowConfig.from_dict(
        {
            "model": "local-model",
            "base_url": "http://127.0.0.1:9/v1",
            "agents": [
                {
                    "id": "coder",
                    "system_prompt": "You code.",
                    "tools": ["read_file", "recall"],
                    "max_turns": 4,
                    "summarizer": "writer",
                    "compact": {"token_threshold": 5000, "strategies": [{"kind": "summarize"}]},
                },
                {"id": "writer", "model": "small-model", "base_url": "http://127.0.0.1:8/v1"},
            ],
        }
    )
    coder = workflow.agent("coder")
    provider = ScriptedProvider([Step("Hi.")])
    built = Orchestrator.from_config(coder, workflow=workflow, provider=provider)
    assert sorted(built.tools) == ["read_file", "recall"]
    assert built.max_turns == 4
    assert built.compactor.config.token_threshold == 5000
    assert built.run("Hello").text == "Hi."
    assert provider.requests[0].messages[0].text == "You code."

    writer = summarizer_provider(coder, workflow)
    assert isinstance(writer, OpenAIProvider)
    assert writer.model == "small-model"  # the summarizer agent's model, on its endpoint
    assert summarizer_provider(workflow.agent("writer"), workflow) is None  # no LLM strategy
