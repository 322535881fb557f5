"""The scripted upstream's one piece of agent play: following a trail of files with whatever
read or shell tool the client declares, so a real agent (Claude Code, Codex CLI, opencode)
runs a multi-turn tool session against a model that understands nothing.

    user:  "… TRAIL START: /tmp/x/step01.txt …"   →  call the client's read tool on that path
    tool:  "… NEXT: /tmp/x/step02.txt …"           →  call it on the next path
    tool:  "… TRAIL END: the answer is 42 …"       →  answer "TRAIL ANSWER: the answer is 42"

The decision reads only the latest history item (the user's turn or the tool result the model
is about to read) and the tool schemas, so it holds after any compaction of older turns: the
proxy keeps the latest tool result verbatim. Which tool, and how its arguments are shaped, is
read from the declared schemas: a read tool with a path property (`file_path`, `filePath`,
`path`), else a shell tool with a `command` (string or argv list) or `cmd` property.

This module must never perform I/O, and never answer from anything but the request body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

Api = Literal["chat", "responses", "messages"]

START: Final = re.compile(r"TRAIL START: ([^\s\"'\\]+)")
NEXT: Final = re.compile(r"NEXT: ([^\s\"'\\]+)")
END: Final = re.compile(r"TRAIL END: ([^\n\"\\]+)")
ANSWER_PREFIX: Final = "TRAIL ANSWER: "
_PATH_KEYS: Final = ("file_path", "filePath", "path")


@dataclass(frozen=True)
class ToolCall:
    """One call of a declared tool: its name and its arguments as a JSON object."""

    name: str
    arguments: dict[str, Any]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, separators=(",", ":"))


@dataclass(frozen=True)
class Move:
    """The model's next move on the trail: a tool call, or the final text."""

    call: ToolCall | None = None
    text: str | None = None


def next_move(api: Api, body: Mapping[str, Any]) -> Move | None:
    """What the model does next on a trail; None when the request is not on one (no trail
    marker in the latest item, or no tool to follow it with)."""
    kind, text = _latest(api, body)
    if kind == "tool":
        end = END.search(text)
        if end is not None:
            return Move(text=ANSWER_PREFIX + end.group(1).strip())
        target = NEXT.search(text)
    elif kind == "user":
        target = START.search(text)
    else:
        return None
    if target is None:
        return None
    call = read_call(declared_tools(api, body), target.group(1))
    return Move(call=call) if call is not None else None


def declared_tools(api: Api, body: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, JSON schema of the arguments) of each function tool the request declares."""
    found: list[tuple[str, dict[str, Any]]] = []
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if api == "chat":
            function = tool.get("function")
            if not isinstance(function, dict):
                continue
            name, schema = function.get("name"), function.get("parameters")
        elif api == "responses":
            name, schema = tool.get("name"), tool.get("parameters")
        else:
            name, schema = tool.get("name"), tool.get("input_schema")
        if isinstance(name, str):
            found.append((name, schema if isinstance(schema, dict) else {}))
    return found


def read_call(tools: list[tuple[str, dict[str, Any]]], path: str) -> ToolCall | None:
    """A call that shows the file at `path`: a read tool if one is declared, else a shell."""
    for name, schema in tools:
        properties = _properties(schema)
        if "read" not in name.lower():
            continue
        for key in _PATH_KEYS:
            if key in properties:
                return ToolCall(name, {key: path})
    for name, schema in tools:
        properties = _properties(schema)
        command = properties.get("command")
        if isinstance(command, dict):
            if command.get("type") == "array":
                return ToolCall(name, {"command": ["cat", path]})
            extra = {"description": "Show the next file"} if "description" in properties else {}
            return ToolCall(name, {"command": f"cat {path}", **extra})
        if "cmd" in properties:
            return ToolCall(name, {"cmd": f"cat {path}"})
    return None


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _latest(api: Api, body: Mapping[str, Any]) -> tuple[str | None, str]:
    """The kind of the latest history item ("user", "tool" or None for anything else) and
    its text."""
    key = "input" if api == "responses" else "messages"
    items = body.get(key)
    if isinstance(items, str):
        return "user", items
    if not isinstance(items, list):
        return None, ""
    # System turns a client adds after the live turn (Claude Code's mid-conversation system
    # messages) are not what the model answers.
    turns = [i for i in items if not (isinstance(i, dict) and i.get("role") == "system")]
    if not turns or not isinstance(turns[-1], dict):
        return None, ""
    last = turns[-1]
    if api == "chat":
        role = last.get("role")
        if role == "tool":
            return "tool", "".join(texts_in(last.get("content")))
        return ("user" if role == "user" else None), "".join(texts_in(last.get("content")))
    if api == "responses":
        if last.get("type") in ("function_call_output", "custom_tool_call_output"):
            return "tool", "".join(texts_in(last.get("output")))
        if last.get("role") == "user":
            return "user", "".join(texts_in(last.get("content")))
        return None, ""
    if last.get("role") != "user":
        return None, ""
    content = last.get("content")
    if isinstance(content, list):
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            return "tool", "".join(t for b in results for t in texts_in(b.get("content")))
    return "user", "".join(texts_in(content))


def texts_in(value: Any, keys: tuple[str, ...] = ("text", "content", "output")) -> Iterator[str]:
    """Every string of a wire value, in order, through lists and the entries `keys` name."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from texts_in(item, keys)
    elif isinstance(value, dict):
        for key in keys:
            if key in value:
                yield from texts_in(value[key], keys)
