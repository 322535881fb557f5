"""The optional `recall` tool: offered to the model once a session has compacted, answered
by the proxy from the store's archive of everything compacted away.

The tool is the one every recall tool is (`compaction.recall`: a handle or words in, the
originals verbatim out). The proxy answers a recall itself and sends the conversation back
upstream with the answer appended, so the client never sees the call; the exchange is not
logged into the session (the client's history does not contain it either). Unstreamed
answers are handled here and in the app; streamed ones (Chat Completions and Messages only,
not Responses) by `compaction.proxy.recall_stream`, which holds back the rest of an answer
from the recall call on. A response that mixes recall with the client's own tool calls
reaches the client with the recall calls removed (the model may ask again).

This module must never answer with anything but the session's own archive.
"""

from __future__ import annotations

import json
from typing import Any, Final

from compaction.exceptions import CompactionError
from compaction.log import SessionLog
from compaction.providers.anthropic import messages_tool
from compaction.providers.openai import chat_tool
from compaction.proxy.errors import ApiName
from compaction.recall import SPEC as RECALL
from compaction.recall import answer_call

NAME: Final = RECALL.name
MAX_ROUNDS: Final = 3


def tool_schema(api: ApiName) -> dict[str, Any]:
    """The recall tool as `api` declares a function tool: the one declaration every recall
    tool shares (`compaction.recall.SPEC`)."""
    if api == "anthropic":
        return messages_tool(RECALL)
    if api == "responses":
        # Responses declares a function tool flat: the Chat Completions declaration unwrapped.
        return {"type": "function", **chat_tool(RECALL)["function"]}
    return chat_tool(RECALL)


def offer(api: ApiName, body: dict[str, Any]) -> dict[str, Any]:
    """The request body with the recall tool added to its tools (once)."""
    tools = body.get("tools")
    tools = list(tools) if isinstance(tools, list) else []
    if not any(_tool_name(t) == NAME for t in tools):
        tools.append(tool_schema(api))
    return {**body, "tools": tools}


def _tool_name(tool: Any) -> Any:
    if not isinstance(tool, dict):
        return None
    inner = tool.get("function")
    return inner.get("name") if isinstance(inner, dict) else tool.get("name")


def calls(api: ApiName, response: Any) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """The recall calls in a model response (id, arguments) and how many other calls it has."""
    found: list[tuple[str, dict[str, Any]]] = []
    others = 0
    for call_id, name, arguments in _all_calls(api, response):
        if name == NAME:
            found.append((call_id, arguments))
        else:
            others += 1
    return found, others


def _all_calls(api: ApiName, response: Any) -> list[tuple[str, str, dict[str, Any]]]:
    out: list[tuple[str, str, dict[str, Any]]] = []
    if not isinstance(response, dict):
        return out
    if api == "anthropic":
        for block in response.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                args = block.get("input")
                out.append((str(block.get("id")), str(block.get("name")), _as_dict(args)))
    elif api == "responses":
        for item in response.get("output") or []:
            if isinstance(item, dict) and item.get("type") == "function_call":
                args = _parse(item.get("arguments"))
                out.append((str(item.get("call_id")), str(item.get("name")), args))
    else:
        message = _chat_message(response)
        for call in (message or {}).get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                args = _parse(function.get("arguments"))
                out.append((str(call.get("id")), str(function.get("name")), args))
    return out


def answer(log: SessionLog, arguments: dict[str, Any]) -> str:
    """The text a recall call gets back, as the agent's recall tool answers it
    (`compaction.recall.answer_call`); a store that fails says so in the answer."""
    try:
        return answer_call(log.recall, arguments)
    except CompactionError as e:
        return f"recall failed: {e}"


def continued(
    api: ApiName, body: dict[str, Any], response: dict[str, Any], answers: list[tuple[str, str]]
) -> dict[str, Any]:
    """The request body with the model's turn and the recall answers appended."""
    if api == "anthropic":
        results = [
            {"type": "tool_result", "tool_use_id": call_id, "content": text}
            for call_id, text in answers
        ]
        turn = [
            {"role": "assistant", "content": response.get("content") or []},
            {"role": "user", "content": results},
        ]
        return {**body, "messages": [*body.get("messages", []), *turn]}
    if api == "responses":
        outputs = [
            {"type": "function_call_output", "call_id": call_id, "output": text}
            for call_id, text in answers
        ]
        items = [i for i in response.get("output") or [] if isinstance(i, dict)]
        return {**body, "input": [*body.get("input", []), *items, *outputs]}
    message = _chat_message(response) or {}
    assistant = {
        "role": "assistant",
        "content": message.get("content"),
        "tool_calls": message.get("tool_calls") or [],
    }
    tools = [
        {"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in answers
    ]
    return {**body, "messages": [*body.get("messages", []), assistant, *tools]}


def without_recall(api: ApiName, response: dict[str, Any]) -> dict[str, Any]:
    """The response with its recall calls removed (the client does not know the tool)."""
    if api == "anthropic":
        content = [
            b
            for b in response.get("content") or []
            if not (isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == NAME)
        ]
        return {**response, "content": content}
    if api == "responses":
        output = [
            i
            for i in response.get("output") or []
            if not (
                isinstance(i, dict) and i.get("type") == "function_call" and i.get("name") == NAME
            )
        ]
        return {**response, "output": output}
    choices = []
    for choice in response.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict) and message.get("tool_calls"):
            kept = [
                c
                for c in message["tool_calls"]
                if not (isinstance(c, dict) and (c.get("function") or {}).get("name") == NAME)
            ]
            choices.append({**choice, "message": {**message, "tool_calls": kept}})
        else:
            choices.append(choice)
    return {**response, "choices": choices}


def _chat_message(response: dict[str, Any]) -> dict[str, Any] | None:
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        return message if isinstance(message, dict) else None
    return None


def _parse(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            return _as_dict(json.loads(arguments))
        except json.JSONDecodeError:
            return {}
    return _as_dict(arguments)


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
