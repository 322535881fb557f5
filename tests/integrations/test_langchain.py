"""The LangChain integration: messages ↔ Conversation for every message and content block
type, `CompactionMiddleware` in a real `create_agent` with a checkpointer, and LangGraph's
`pre_model_hook`."""

from __future__ import annotations

import subprocess
import sys
import typing
import warnings
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core import messages as lm
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import content as lc_content
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from compaction import OPENAI, CompactionConfig
from compaction.integrations.langchain import (
    CompactionMiddleware,
    PreModelHook,
    from_conversation,
    to_conversation,
)
from compaction.messages import ImagePart, Message, ReasoningPart, SummaryPart
from compaction.providers.testing import FunctionProvider
from compaction.serialize import message_from_dict, message_to_dict

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
PNG_URL = f"data:image/png;base64,{PNG}"

BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "Fix it.", "id": "b1"},
    {"type": "image", "base64": PNG, "mime_type": "image/png"},
    {"type": "image", "url": "https://example.com/a.png"},
    {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "high"}},
    {"type": "audio", "url": "https://example.com/a.mp3"},
    {"type": "video", "url": "https://example.com/a.mp4"},
    {"type": "file", "url": "https://example.com/a.pdf", "mime_type": "application/pdf"},
    {"type": "text-plain", "text": "notes", "mime_type": "text/plain"},
    {"type": "non_standard", "value": {"k": 1}},
]
AI_BLOCKS: list[dict[str, Any]] = [
    {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
    {"type": "redacted_thinking", "data": "opaque"},
    {"type": "reasoning", "reasoning": "why", "id": "rs_1"},
    {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "s"}],
        "encrypted_content": "enc",
    },
    {"type": "text", "text": "Looking."},
    {"type": "refusal", "refusal": "no"},
    {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.py"}},
    {"type": "tool_call", "id": "c1", "name": "read_file", "args": {"path": "a.py"}},
    {"type": "tool_call_chunk", "id": "c1", "name": "read_file", "args": "{}", "index": 0},
    {"type": "invalid_tool_call", "id": "c9", "name": "x", "args": "{", "error": "bad"},
    {"type": "server_tool_call", "id": "s1", "name": "web_search", "args": {"q": "x"}},
    {"type": "server_tool_call_chunk", "id": "s1"},
    {"type": "server_tool_result", "tool_call_id": "s1", "status": "success", "output": "hits"},
]


def every_message() -> list[lm.BaseMessage]:
    return [
        lm.SystemMessage("You are careful.", id="sys"),
        lm.HumanMessage(content=BLOCKS, id="h1", name="ann"),
        lm.AIMessage(
            content=AI_BLOCKS,
            id="a1",
            tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "c1"}],
            invalid_tool_calls=[
                {"name": "x", "args": "{", "id": "c9", "error": "bad", "type": "invalid_tool_call"}
            ],
            response_metadata={"model_name": "m", "finish_reason": "tool_calls"},
            usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            additional_kwargs={"reasoning_content": "deep thought"},
        ),
        lm.ToolMessage("def f(): ...", tool_call_id="c1", id="t1", artifact={"lines": 1}),
        lm.ToolMessage("bad args", tool_call_id="c9", status="error"),
        lm.ToolMessage(
            [
                {"type": "text", "text": "the page"},
                {"type": "image", "base64": PNG, "mime_type": "image/png"},
            ],
            tool_call_id="c2",
        ),
        lm.ChatMessage("a note", role="user"),
        lm.FunctionMessage("42", name="legacy"),
        lm.HumanMessage(
            "[compacted: 3 messages → 7 chars]\nearlier",
            additional_kwargs={"lc_source": "summarization"},
        ),
        lm.RemoveMessage(id="gone"),
        lm.AIMessage("plain text answer"),
    ]


def block_types(alias: Any) -> set[str]:
    found: set[str] = set()
    for member in typing.get_args(alias):
        found.update(typing.get_args(typing.get_type_hints(member)["type"]))
    return found


def test_the_history_holds_every_message_and_content_block_type() -> None:
    history = every_message()
    classes = {type(m) for m in history}
    assert {
        lm.SystemMessage,
        lm.HumanMessage,
        lm.AIMessage,
        lm.ToolMessage,
        lm.ChatMessage,
        lm.FunctionMessage,
        lm.RemoveMessage,
    } <= classes
    present = {
        b["type"]
        for m in history
        if isinstance(m.content, list)
        for b in m.content
        if isinstance(b, dict)
    }
    assert block_types(lc_content.ContentBlock) - present == set()


def test_round_trip_is_lossless() -> None:
    history = every_message()
    assert from_conversation(to_conversation(history)) == history
    stored = [message_from_dict(message_to_dict(m)) for m in to_conversation(history)]
    assert from_conversation(stored) == history


def test_decoded_parts() -> None:
    conversation = to_conversation(every_message())
    system, user, assistant, *_ = conversation.messages
    assert system.role == "system" and system.pinned
    assert [p.url[:22] for p in user.parts if isinstance(p, ImagePart)] == [
        PNG_URL[:22],
        "https://example.com/a.",
        PNG_URL[:22],
    ]
    reasoning = [p for p in assistant.parts if isinstance(p, ReasoningPart)]
    assert [(r.text, r.signature, r.encrypted) for r in reasoning] == [
        ("deep thought", None, None),
        ("plan", "sig-1", None),
        ("", None, "opaque"),
        ("why", None, None),
        ("s", None, "enc"),
    ]
    assert [c.id for c in assistant.tool_calls] == ["c1", "c9"]
    results = {r.tool_call_id: r for m in conversation for r in m.tool_results}
    assert results["c9"].is_error and not results["c1"].is_error
    assert any(isinstance(p, ImagePart) for p in results["c2"].content)
    assert [m.parts[0].replaced for m in conversation if m.is_summary] == [3]  # type: ignore[union-attr]


def test_a_masked_tool_message_keeps_its_id_and_artifact() -> None:
    messages = list(to_conversation(every_message()).messages)
    old = messages[3]
    (result,) = old.tool_results
    masked = Message(
        "tool",
        (type(result)(result.tool_call_id, (type(old.parts[0].content[0])("[masked]"),)),),
        provider_data=old.provider_data,
    )  # type: ignore[union-attr]
    messages[3] = masked
    back = from_conversation(messages)[3]
    assert isinstance(back, lm.ToolMessage)
    assert (back.content, back.id, back.tool_call_id, back.artifact) == (
        "[masked]",
        "t1",
        "c1",
        {"lines": 1},
    )


def test_a_summary_is_a_human_message_marked_as_langchain_marks_summaries() -> None:
    summary = Message("user", (SummaryPart("[compacted: 4 messages → 4 chars]\nbody", 4),))
    (message,) = from_conversation([summary])
    assert isinstance(message, lm.HumanMessage)
    assert message.additional_kwargs == {"lc_source": "summarization"}
    (again,) = to_conversation([message]).messages
    assert again.is_summary and again.parts[0].replaced == 4  # type: ignore[union-attr]
    # LangChain's own summaries read as summaries too.
    theirs = lm.HumanMessage(
        "Here is a summary of the conversation to date:\n\nx",
        additional_kwargs={"lc_source": "summarization"},
    )
    assert to_conversation([theirs]).messages[0].is_summary


def test_without_the_extra_the_import_names_it() -> None:
    code = "import sys; sys.modules['langchain'] = None\nimport compaction.integrations.langchain"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert "pip install 'llm-compaction[langchain]'" in done.stderr


# -- end to end ------------------------------------------------------------------------------


class FakeToolModel(GenericFakeChatModel):
    """LangChain's generic fake chat model, able to take tools, recording every call."""

    received: list[list[lm.BaseMessage]]

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeToolModel:
        return self

    def _generate(
        self,
        messages: list[lm.BaseMessage],
        stop: Any = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        self.received.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def file_text(path: str) -> str:
    stem = path.removesuffix(".py")
    return "\n".join(f"{path}:{i}: {stem}_value_{i} = compute({i})" for i in range(150))


def script() -> list[lm.AIMessage]:
    replies: list[lm.AIMessage] = []
    n = 0
    for turn, files in enumerate([range(6), range(6, 10), range(10, 14)]):
        for i in files:
            n += 1
            thinking = {"type": "thinking", "thinking": f"step {n}", "signature": f"sig-{n}"}
            replies.append(
                lm.AIMessage(
                    content=[thinking],
                    tool_calls=[
                        {"name": "read_file", "args": {"path": f"f{i}.py"}, "id": f"call_{i}"}
                    ],
                    id=f"ai-{n}",
                )
            )
        if turn == 1:
            replies.append(
                lm.AIMessage(
                    content="",
                    tool_calls=[
                        {"name": "recall", "args": {"query": "f0_value_7"}, "id": "call_recall"}
                    ],
                )
            )
        replies.append(lm.AIMessage(f"turn {turn} done"))
    return replies


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return file_text(path)


def check_valid(messages: list[lm.BaseMessage]) -> None:
    """LangChain's own conversion to OpenAI messages takes them, and every tool call is
    answered by the tool messages after it."""
    converted = lm.convert_to_openai_messages(messages)
    assert OPENAI.validate(OPENAI.decode(converted)) == []


def test_a_multi_turn_agent_with_a_checkpointer_keeps_its_state_whole() -> None:
    summarizer = FunctionProvider(
        lambda request: {"summary": "The agent read files.", "kept_facts": []}
    )
    config = CompactionConfig(
        token_threshold=6000,
        max_tokens=4000,
        keep_recent_n=4,
        strategies=[{"kind": "summarize"}, {"kind": "truncate"}],
    )
    model = FakeToolModel(messages=iter(script()), received=[])
    middleware = CompactionMiddleware(config, summarizer=summarizer)
    agent = create_agent(model, [read_file], middleware=[middleware], checkpointer=InMemorySaver())
    views: list[Any] = []
    paid: list[int] = []
    original = middleware._compacted

    def watched(request: Any) -> Any:
        before = len(summarizer.requests)
        out = original(request)
        views.append(middleware.last_view)
        paid.append(len(summarizer.requests) - before)
        return out

    middleware._compacted = watched  # type: ignore[method-assign]
    run = {"configurable": {"thread_id": "user 42/thread"}, "recursion_limit": 100}
    task = lm.HumanMessage(
        [
            {"type": "text", "text": "Fix the failing test."},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
        ]
    )
    for prompt in (
        task,
        lm.HumanMessage("Now the next files."),
        lm.HumanMessage("And the last ones."),
    ):
        state = agent.invoke({"messages": [prompt]}, run)
    assert state["messages"][-1].content == "turn 2 done"

    compactions = [v for v in views if v.compacted]
    assert len(compactions) >= 3
    assert all((n > 0) == v.compacted for n, v in zip(paid, views, strict=True))
    assert max(v.decoded for v in views[1:]) <= 2
    signatures = {f"sig-{n}" for n in range(1, 16)}
    for view, received in zip(views, model.received, strict=True):
        check_valid(received)
        first = next(m for m in received if isinstance(m, lm.HumanMessage))
        assert first.content[1]["image_url"]["url"] == PNG_URL  # type: ignore[index]
        thinking = [
            b
            for m in received
            if isinstance(m.content, list)
            for b in m.content
            if isinstance(b, dict) and b.get("type") == "thinking"
        ]
        assert {b["signature"] for b in thinking} <= signatures
        if view.compacted:
            assert any(m.additional_kwargs.get("lc_source") == "summarization" for m in received)

    # The checkpointed state keeps every message, and no summary.
    stored = agent.get_state(run).values["messages"]  # type: ignore[arg-type]
    outputs = [m for m in stored if isinstance(m, lm.ToolMessage)]
    assert len(outputs) == 15 and outputs[0].content == file_text("f0.py")
    assert not any(m.additional_kwargs.get("lc_source") for m in stored)
    assert [s.id for s in middleware.threads.store.sessions()] == [
        middleware.threads.log("user 42/thread").session_id
    ]

    recalled = next(m for m in outputs if m.tool_call_id == "call_recall")
    assert "f0.py:7: f0_value_7 = compute(7)" in str(recalled.content)
    asked = next(
        r
        for r in model.received
        if any(getattr(m, "tool_calls", None) and m.tool_calls[0]["id"] == "call_recall" for m in r)
    )
    assert not any(isinstance(m, lm.ToolMessage) and m.content == file_text("f0.py") for m in asked)


def test_langgraph_pre_model_hook_compacts_only_the_model_input() -> None:
    from langgraph.prebuilt import create_react_agent

    hook = PreModelHook(
        CompactionConfig(token_threshold=3000, max_tokens=2000, keep_recent_n=2), tools=[read_file]
    )
    replies = [
        lm.AIMessage(
            content="",
            tool_calls=[{"name": "read_file", "args": {"path": f"f{i}.py"}, "id": f"c{i}"}],
        )
        for i in range(5)
    ]
    model = FakeToolModel(messages=iter([*replies, lm.AIMessage("done")]), received=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.x
        agent = create_react_agent(
            model,
            [read_file, hook.recall_tool()],
            pre_model_hook=hook,
            checkpointer=InMemorySaver(),
        )
    state = agent.invoke(
        {"messages": [lm.HumanMessage("read")]}, {"configurable": {"thread_id": "g1"}}
    )
    assert len([m for m in state["messages"] if isinstance(m, lm.ToolMessage)]) == 5  # state whole
    assert hook.threads.log("g1").info().compactions >= 1
    last = model.received[-1]
    check_valid(last)
    assert (
        sum(len(str(m.content)) for m in last)
        < sum(len(str(m.content)) for m in state["messages"]) / 2
    )


def test_the_async_path_compacts_and_recalls_on_the_run_s_thread() -> None:
    import asyncio

    replies = [
        lm.AIMessage(
            content="",
            tool_calls=[{"name": "read_file", "args": {"path": f"f{i}.py"}, "id": f"c{i}"}],
        )
        for i in range(5)
    ]
    recall = {"name": "recall", "args": {"query": "f0_value_7"}, "id": "c-recall"}
    replies += [lm.AIMessage(content="", tool_calls=[recall]), lm.AIMessage("done")]
    model = FakeToolModel(messages=iter(replies), received=[])
    middleware = CompactionMiddleware(
        CompactionConfig(token_threshold=3000, max_tokens=2000, keep_recent_n=2)
    )
    agent = create_agent(model, [read_file], middleware=[middleware], checkpointer=InMemorySaver())
    run = {"configurable": {"thread_id": "async-1"}}
    state = asyncio.run(agent.ainvoke({"messages": [lm.HumanMessage("read")]}, run))
    assert middleware.threads.log("async-1").info().compactions >= 1
    recalled = next(
        m
        for m in state["messages"]
        if isinstance(m, lm.ToolMessage) and m.tool_call_id == "c-recall"
    )
    assert "f0.py:7: f0_value_7 = compute(7)" in str(recalled.content)
