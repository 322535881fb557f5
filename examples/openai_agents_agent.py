"""An OpenAI Agents SDK agent with compaction: `python examples/openai_agents_agent.py`.

Needs `pip install 'llm-compaction[openai-agents]'`. The model here is the SDK's own
`ScriptedModel` reading files one after another, so the example runs offline; use any model
instead (`Agent(name=..., model="gpt-4o", ...)`).
"""

from __future__ import annotations

import asyncio

from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from compaction import CompactionConfig
from compaction.integrations.openai_agents import CompactionSession

steps = [
    [function_call("read_file", {"path": f"src/mod{n}.py"}, call_id=f"c{n}")] for n in range(12)
]
steps += [[function_call("recall", {"query": "mod0_line_42"}, call_id="c-recall")]]
steps += [[assistant_message("Done: every module read.")]]
model = ScriptedModel(steps)


@function_tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return "\n".join(f"{stem}_line_{i} = {i * 7}  # {path}" for i in range(120))


async def main() -> None:
    task = "Read every module of src/ and tell me when you are done."
    # -- the glue: a session whose input filter compacts every model call ---------------------
    limits = CompactionConfig(token_threshold=8_000, max_tokens=5_000)
    session = CompactionSession("user-42", limits)
    agent = Agent(name="coder", model=model, tools=[read_file, session.recall_tool()])
    run_config = session.run_config(tracing_disabled=True)
    result = await Runner.run(agent, task, session=session, run_config=run_config, max_turns=20)
    # -- end of the glue ----------------------------------------------------------------------
    items = await session.get_items()
    log = session.threads.log(session.session_id)
    recalled = next(
        i["output"]
        for i in items
        if i.get("type") == "function_call_output" and i["call_id"] == "c-recall"
    )
    biggest = max(len(str(call.input)) for call in model.calls)
    print(result.final_output)
    print(f"model calls: {len(model.calls)}, largest input: {biggest} chars")
    print(f"items kept by the session: {len(items)} (nothing compacted away)")
    print(f"compactions logged: {log.info().compactions}; view now {len(log.messages)} messages")
    line = next(x for x in recalled.splitlines() if "mod0_line_42 " in x)
    print("recall returned the original line:", line)


if __name__ == "__main__":
    asyncio.run(main())
