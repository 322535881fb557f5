"""Compaction inside agent frameworks: one module per framework, each importable only with
its extra installed.

- `compaction.integrations.pydantic_ai` (`llm-compaction[pydantic-ai]`): the `Compaction`
  capability, and converters between pydantic-ai messages and `Conversation`;
- `compaction.integrations.openai_agents` (`llm-compaction[openai-agents]`): a `Session` and a
  `call_model_input_filter` that work together;
- `compaction.integrations.langchain` (`llm-compaction[langchain]`): an `AgentMiddleware` for
  `create_agent`, and a `pre_model_hook` for LangGraph's prebuilt agent.

Each keeps a `SessionLog` per thread (`compaction.integrations._core`): the framework's stored
history keeps everything, the model sees the compacted view, a summary is paid once per
compacted span, and a `recall` tool of the framework's own kind gets originals back.

This package must never import a framework itself; its modules do, each its own.
"""
