"""A LangChain agent with compaction: `python examples/langchain_agent.py`.

Needs `pip install 'llm-compaction[langchain]'`. The model here is LangChain's
`GenericFakeChatModel` (taught to take tools) reading files one after another, so the
example runs offline; use any chat model instead (`create_agent("openai:gpt-4o", ...)`).
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from compaction import CompactionConfig
from compaction.integrations.langchain import CompactionMiddleware


class FakeToolModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeToolModel:
        return self


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


replies = [call("read_file", {"path": f"src/mod{n}.py"}, f"c{n}") for n in range(12)]
replies += [
    call("recall", {"query": "mod0_line_42"}, "c-recall"),
    AIMessage("Done: every module read."),
]
model = FakeToolModel(messages=iter(replies))


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return "\n".join(f"{stem}_line_{i} = {i * 7}  # {path}" for i in range(120))


# -- the glue: one middleware ---------------------------------------------------------------
compaction = CompactionMiddleware(CompactionConfig(token_threshold=8_000, max_tokens=5_000))
agent = create_agent(model, [read_file], middleware=[compaction], checkpointer=InMemorySaver())
# -- end of the glue ------------------------------------------------------------------------

if __name__ == "__main__":
    run = {"configurable": {"thread_id": "user-42"}, "recursion_limit": 60}
    state = agent.invoke({"messages": [HumanMessage("Read every module of src/.")]}, run)
    messages = agent.get_state(run).values["messages"]  # type: ignore[arg-type]
    log = compaction.threads.log("user-42")
    recalled = next(
        m.content for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "c-recall"
    )
    print(state["messages"][-1].content)
    print(f"messages kept in the checkpointed state: {len(messages)} (nothing compacted away)")
    print(f"compactions logged: {log.info().compactions}; view now {len(log.messages)} messages")
    line = next(x for x in str(recalled).splitlines() if "mod0_line_42 " in x)
    print("recall returned the original line:", line)
