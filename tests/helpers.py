"""Builders for hand-made conversations in tests (the canonical model, not a wire format)."""

from __future__ import annotations

import json

from compaction.messages import Conversation, Message, Role, TextPart, ToolCallPart, ToolResultPart


def say(role: Role, text: str) -> Message:
    return Message.text_message(role, text)


def calls(*specs: tuple[str, str, dict[str, object]], text: str = "") -> Message:
    parts: list[TextPart | ToolCallPart] = [TextPart(text)] if text else []
    parts += [ToolCallPart(i, name, json.dumps(args)) for i, name, args in specs]
    return Message("assistant", tuple(parts))


def results(*specs: tuple[str, str], role: Role = "tool", is_error: bool = False) -> list[Message]:
    """One tool message per result (OpenAI) or one user message with all results (Anthropic)."""
    parts = [ToolResultPart(i, (TextPart(t),), is_error) for i, t in specs]
    if role == "user":
        return [Message("user", tuple(parts))]
    return [Message("tool", (p,)) for p in parts]


def coding_session(
    steps: int = 30, *, dialect: str = "openai", output_lines: int = 60, system: str = ""
) -> Conversation:
    """A plausible coding-agent session: a task, reads, test runs, edits, notes, a live turn."""
    role: Role = "user" if dialect == "anthropic" else "tool"
    messages: list[Message] = [
        say("system", system or "You are a careful coding agent."),
        say("user", "Fix the failing login test. Don't touch the migrations folder."),
    ]
    for i in range(steps):
        listing = "\n".join(
            f"{n:4d}: def helper_{i}_{n}(): return {n}" for n in range(output_lines)
        )
        messages.append(
            calls((f"r{i}", "read_file", {"path": f"src/mod_{i}.py"}), text=f"Reading module {i}.")
        )
        messages += results((f"r{i}", listing), role=role)
        log = "\n".join(f"tests/test_{i}.py::test_{n} PASSED" for n in range(output_lines // 2))
        tail = (
            "E   KeyError: 'session_id'\n1 failed, 5 passed in 0.3s"
            if i % 3 == 0
            else "6 passed in 0.2s"
        )
        messages.append(
            calls(
                (f"t{i}", "bash", {"command": f"pytest tests/test_{i}.py"}),
                (f"e{i}", "edit_file", {"path": f"src/mod_{i}.py", "old": "a", "new": "b"}),
                text=f"I'll go with a small fix in module {i}.",
            )
        )
        messages += results((f"t{i}", f"{log}\n{tail}"), (f"e{i}", "edited"), role=role)
        if i % 10 == 9:
            messages.append(say("assistant", f"Modules up to {i} are done."))
            messages.append(say("user", f"Also set the timeout to {30 + i} seconds."))
    messages.append(say("assistant", "Pausing here."))
    messages.append(say("user", "Where are we now? Summarize the remaining failures."))
    return Conversation(tuple(messages), model="gpt-4o", dialect=dialect)
