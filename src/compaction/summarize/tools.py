"""What agent tools mean (placeholder until the full table lands): file operations, commands,
to-do lists and final answers read off a tool call's name and arguments.

This module must never read a wire format or call a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from compaction.summarize import signals

FileOp = signals.FileOp
TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]


@dataclass(frozen=True, slots=True)
class Todo:
    text: str
    status: TodoStatus


@dataclass(frozen=True, slots=True)
class Action:
    kind: Literal["file", "command", "search", "todos", "final", "delegate"]
    path: str | None = None
    op: FileOp | None = None
    command: str | None = None
    todos: tuple[Todo, ...] = ()
    text: str | None = None


_TODO_TOOLS = {"todowrite", "update_plan", "task_tracker"}
_FINAL_TOOLS = {"attempt_completion", "finish", "submit"}


def is_command_tool(name: str) -> bool:
    return signals.is_shell_tool(name) or name in ("Bash", "exec_command", "run_shell_command")


def _status(value: object) -> TodoStatus:
    text = str(value).lower().replace("-", "_").replace(" ", "_")
    if text in ("completed", "done", "complete"):
        return "completed"
    if text in ("in_progress", "active", "doing"):
        return "in_progress"
    if text in ("cancelled", "canceled"):
        return "cancelled"
    return "pending"


def actions_of_call(name: str, arguments: Mapping[str, object]) -> tuple[Action, ...]:
    lowered = name.lower()
    if lowered in _TODO_TOOLS:
        items = arguments.get("todos") or arguments.get("plan") or arguments.get("task_list")
        todos: list[Todo] = []
        if isinstance(items, list):
            for item in items:
                if isinstance(item, Mapping):
                    text = item.get("content") or item.get("step") or item.get("title")
                    if isinstance(text, str) and text.strip():
                        todos.append(Todo(text.strip(), _status(item.get("status"))))
        return (Action("todos", todos=tuple(todos)),)
    if lowered in _FINAL_TOOLS:
        text = arguments.get("result") or arguments.get("message") or arguments.get("text")
        return (Action("final", text=str(text)),) if text else ()
    if is_command_tool(name):
        command = signals.command_of("bash", dict(arguments))
        if command is None:
            return ()
        files = tuple(
            Action("file", path=p, op=op) for p, op in signals.file_ops_of_command(command)
        )
        return (Action("command", command=command), *files)
    patch = next(
        (
            v
            for k, v in arguments.items()
            if k in ("patch", "input", "patchText") and isinstance(v, str)
        ),
        None,
    )
    if patch and "*** " in patch:
        return tuple(Action("file", path=p, op=op) for p, op in files_in_patch(patch))
    args = dict(arguments)
    for key in ("absolutePath", "file_path", "notebook_path"):
        if key in args and "path" not in args:
            args["path"] = args[key]
    return tuple(
        Action("file", path=p, op=op) for p, op in signals.file_ops_of_tool_call(name, args)
    )


_PATCH_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\+\+\+ b/(.+)$", re.MULTILINE)


def files_in_patch(text: str) -> tuple[tuple[str, FileOp], ...]:
    ops: list[tuple[str, FileOp]] = []
    for verb, path, plus in _PATCH_LINE.findall(text):
        if plus:
            ops.append((plus.strip(), "modified"))
        else:
            op: FileOp = {"Add": "created", "Update": "modified", "Delete": "deleted"}[verb]  # type: ignore[assignment]
            ops.append((path.strip(), op))
    return tuple(ops)


def actions_in_text(text: str) -> tuple[Action, ...]:
    return ()


def command_exit_status(name: str | None, output: str) -> int | None:
    return None
