"""A pydantic-ai agent with compaction: `python examples/pydantic_ai_agent.py`.

Needs `pip install 'llm-compaction[pydantic-ai]'`. The model here is pydantic-ai's
`FunctionModel` reading files one after another, so the example runs offline; use any
pydantic-ai model instead (`Agent("openai:gpt-4o", ...)`).
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from compaction import CompactionConfig
from compaction.integrations.pydantic_ai import Compaction

calls: list[int] = []


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Reads twelve files, asks `recall` for a line of the first, then answers."""
    calls.append(sum(len(str(m)) for m in messages))
    n = len(calls) - 1
    if n < 12:
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": f"src/mod{n}.py"})])
    if n == 12:
        return ModelResponse(parts=[ToolCallPart("recall", {"query": "mod0_line_42"})])
    return ModelResponse(parts=[TextPart("Done: every module read.")])


# -- the glue: one capability ---------------------------------------------------------------
compaction = Compaction(CompactionConfig(token_threshold=8_000, max_tokens=5_000))
agent = Agent(FunctionModel(model), capabilities=[compaction])
# -- end of the glue ------------------------------------------------------------------------


@agent.tool_plain
def read_file(path: str) -> str:
    """Read a file of the project."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return "\n".join(f"{stem}_line_{i} = {i * 7}  # {path}" for i in range(120))


if __name__ == "__main__":
    result = agent.run_sync("Read every module of src/ and tell me when you are done.")
    history = result.all_messages()
    log = compaction.threads.log(history[-1].conversation_id)
    recalled = next(
        p.content
        for m in history
        for p in m.parts
        if getattr(p, "tool_name", "") == "recall" and p.part_kind == "tool-return"
    )
    print(result.output)
    print(f"model calls: {len(calls)}, largest request: {max(calls)} chars")
    print(f"history kept by pydantic-ai: {len(history)} messages (nothing compacted away)")
    print(f"compactions logged: {log.info().compactions}; view now {len(log.messages)} messages")
    line = next(x for x in str(recalled).splitlines() if "mod0_line_42 " in x)
    print("recall returned the original line:", line)
