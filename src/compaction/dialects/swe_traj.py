"""SWE-agent trajectories (`.traj` JSON), read as input; written out as OpenAI chat.

A trajectory is an object whose `history` lists messages `{role, content, message_type,
agent, thought?, action?, tool_calls?, tool_call_ids?, is_demo?}`. Decoding yields a
`Conversation` with dialect "traj" whose canonical encoding is an OpenAI chat payload
`{"messages": [...]}`; `validate` applies the OpenAI rules to that output. There is no way
back to `.traj`: the traj-only fields are kept but never emitted.

What each message carries in `provider_data` (besides the `openai.*` keys of the OpenAI
dialect, which shape the output):

    compaction.observation  True on an observation (`messages.OBSERVATION`): the neutral
                       flag the core reads, so it never needs this dialect's keys
    traj.index         position of the source entry in `history`
    traj.message_type  what the message is in the run, derived from role, position and
                       `is_demo` — not copied from the file, which calls the task statement
                       an "observation" too:
                         "system_prompt"   the system message
                         "demonstration"   a demo trajectory shown to the model (is_demo)
                         "task"            a user message before the agent's first action
                         "action"          an assistant message
                         "observation"     environment output: every `tool` message, and
                                           every user message after the agent's first action
                                           (runs without function calling send observations
                                           back as role "user"; they keep that role)
    traj.fields        the entry's traj-only fields verbatim (message_type, agent, thought,
                       action, is_demo, and anything unknown)

The conversation's `provider_data["traj.fields"]` holds the file's other top-level keys
(environment, trajectory, info, replay_config …), by reference.

A tool entry answering several calls (`tool_call_ids` with more than one id) becomes one tool
message per id so that every call is answered: the first carries the observation, the others
a one-line note pointing to it (duplicating the output would multiply its size). Histories
that end mid-turn decode fine; `validate` reports the unanswered call.

This module must never do I/O and never emit traj-only fields into the OpenAI output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from compaction.dialects._wire import kind_of
from compaction.dialects.base import Violation
from compaction.dialects.openai_chat import OPENAI, decode_message
from compaction.exceptions import DecodeError
from compaction.messages import OBSERVATION, Conversation, Message

__all__ = ["TRAJ", "SweTrajDialect", "observation_note"]

INDEX: Final = "traj.index"
MESSAGE_TYPE: Final = "traj.message_type"
FIELDS: Final = "traj.fields"

TRAJ_ROLES: Final = ("system", "user", "assistant", "tool")


class SweTrajDialect:
    """SWE-agent `.traj` files (input only; encodes to OpenAI chat)."""

    name: str = "traj"

    def decode(self, payload: Any) -> Conversation:
        return _decode_trajectory(payload)

    def encode(self, conversation: Conversation) -> Any:
        return OPENAI.encode(conversation)

    def validate(self, conversation: Conversation) -> list[Violation]:
        return OPENAI.validate(conversation)


TRAJ: Final = SweTrajDialect()


def observation_note(first_call_id: str) -> str:
    """The text of the extra tool messages a multi-call observation is split into."""
    return f"(One observation answered several calls; it is the result of call {first_call_id}.)"


def _decode_trajectory(payload: Any) -> Conversation:
    if not isinstance(payload, dict):
        raise DecodeError(
            f"expected a SWE-agent trajectory (an object with a `history` list), "
            f"got {kind_of(payload)}",
            location="payload",
        )
    history = payload.get("history")
    if not isinstance(history, list):
        problem = "missing" if history is None else f"expected a list, got {kind_of(history)}"
        raise DecodeError(f"{problem}: a trajectory needs a `history` list", location="history")
    messages: list[Message] = []
    acted = False
    for i, entry in enumerate(history):
        where = f"history[{i}]"
        if not isinstance(entry, dict):
            raise DecodeError(f"expected a message object, got {kind_of(entry)}", location=where)
        role = entry.get("role")
        if role not in TRAJ_ROLES:
            problem = "missing `role`" if role is None else f"unknown role {role!r}"
            raise DecodeError(
                f"{problem}; expected one of {', '.join(TRAJ_ROLES)}", location=f"{where}.role"
            )
        kind = _message_kind(entry, role, acted)
        if kind == "action":
            acted = True
        if role == "tool":
            messages.extend(_decode_observation(entry, where, i))
            continue
        wire: dict[str, Any] = {"role": role}
        used = {"role"}
        if "content" in entry:
            wire["content"] = entry["content"]
            used.add("content")
        calls = entry.get("tool_calls")
        if role == "assistant" and calls is not None:
            if not isinstance(calls, list):
                raise DecodeError(
                    f"expected a list of tool calls, got {kind_of(calls)}",
                    location=f"{where}.tool_calls",
                )
            used.add("tool_calls")
            if calls:
                wire["tool_calls"] = calls
        message = decode_message(wire, location=where)
        messages.append(_mark(message, i, kind, _fields(entry, used)))
    top = {k: v for k, v in payload.items() if k != "history"}
    return Conversation(tuple(messages), dialect="traj", provider_data={FIELDS: top})


def _message_kind(entry: Mapping[str, Any], role: str, acted: bool) -> str:
    if role == "system":
        return "system_prompt"
    if entry.get("is_demo") or entry.get("message_type") == "demonstration":
        return "demonstration"
    if role == "assistant":
        return "action"
    if role == "tool" or acted:
        return "observation"
    return "task"


def _decode_observation(entry: dict[str, Any], where: str, index: int) -> list[Message]:
    ids = entry.get("tool_call_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(c, str) for c in ids):
        raise DecodeError(
            "a tool message needs a non-empty `tool_call_ids` list of strings",
            location=f"{where}.tool_call_ids",
        )
    fields = _fields(entry, {"role", "content", "tool_call_ids"})
    out: list[Message] = []
    for k, call_id in enumerate(ids):
        wire: dict[str, Any] = {"role": "tool"}
        if k == 0:
            if "content" in entry:
                wire["content"] = entry["content"]
        else:
            wire["content"] = observation_note(ids[0])
        wire["tool_call_id"] = call_id
        message = decode_message(wire, location=where)
        out.append(_mark(message, index, "observation", fields))
    return out


def _fields(entry: Mapping[str, Any], used: set[str]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in used}


def _mark(message: Message, index: int, kind: str, fields: dict[str, Any]) -> Message:
    data = {**message.provider_data, INDEX: index, MESSAGE_TYPE: kind, FIELDS: fields}
    if kind == "observation":
        data[OBSERVATION] = True
    return replace(message, provider_data=data)
