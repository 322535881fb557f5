"""Reading messages into events: what happened, in order, in a vocabulary every digest
section understands (the user said, the assistant said, a file was touched, a command ran,
a tool failed, the to-do list now reads …).

Tools are understood through `compaction.summarize.tools` (one table for every agent), tool
output through the readers in `compaction.summarize.signals`. This module must never call a
model, count tokens or read a wire format; it must be deterministic.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from compaction.messages import (
    Message,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.summarize import signals, tools
from compaction.summarize.digest.format import full_text, read_placeholder


@dataclass(frozen=True, slots=True)
class UserSaid:
    text: str


@dataclass(frozen=True, slots=True)
class AssistantSaid:
    text: str
    # The user's question this prose is the first answer to, if the user last asked one.
    answers: str | None = None


@dataclass(frozen=True, slots=True)
class FileTouched:
    path: str
    op: tools.FileOp


@dataclass(frozen=True, slots=True)
class CommandRan:
    command: str
    outcome: str
    errors: tuple[str, ...] = ()
    tests: str | None = None


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call other than a command: `source` names it, `errors` what went wrong."""

    source: str
    ok: bool
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TodosStated:
    todos: tuple[tools.Todo, ...]


@dataclass(frozen=True, slots=True)
class IdentifiersSeen:
    identifiers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finished:
    """The agent's final answer, stated through a completion tool."""

    text: str


@dataclass(frozen=True, slots=True)
class EarlierSummary:
    """A summary inside the span: its text, to be parsed and merged."""

    text: str
    replaced: int


Event = (
    UserSaid
    | AssistantSaid
    | FileTouched
    | CommandRan
    | ToolFinished
    | TodosStated
    | IdentifiersSeen
    | Finished
    | EarlierSummary
)


def is_observation(message: Message) -> bool:
    """A user-role message carrying an environment's output (SWE-agent style), not words
    the user wrote."""
    return (
        message.role == "user"
        and not message.is_user_turn
        and not message.is_summary
        and (not message.tool_results)
    )


class Reader:
    """Turns messages, one at a time, into events. Keeps what later messages need: the calls
    awaiting results, an action written in text awaiting its observation, the open file, the
    user's last question."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCallPart] = {}
        self._pending_action: str | None = None
        self._open_file: str | None = None
        self._question: str | None = None

    def read(self, message: Message) -> Iterator[Event]:
        for summary in (p for p in message.parts if isinstance(p, SummaryPart)):
            yield EarlierSummary(full_text(summary), summary.replaced)
        if message.is_summary:
            return
        if is_observation(message):
            if self._pending_action is not None:
                yield from _action_outcome(self._pending_action, message.text, self._open_file)
                self._pending_action = None
            self._open_file = _open_file_in(message.text) or self._open_file
            return
        if message.role == "user":
            text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart)).strip()
            if text:
                yield UserSaid(text)
                self._question = _question_in(text)
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                self._calls[part.id] = part
                yield from _call_events(part)
            elif isinstance(part, ToolResultPart):
                call = self._calls.get(part.tool_call_id)
                yield from _result_events(call, part, self._open_file)
                self._open_file = _open_file_in(part.text) or self._open_file
            elif (
                isinstance(part, TextPart | ReasoningPart)
                and message.role == "assistant"
                and part.text.strip()
            ):
                answers = self._question if isinstance(part, TextPart) else None
                if answers is not None:
                    self._question = None
                yield AssistantSaid(part.text, answers)
        if message.role == "assistant" and not message.tool_calls:
            for action in tools.actions_in_text(message.text):
                if action.kind == "file" and action.path and action.op:
                    yield FileTouched(_clean_path(action.path), action.op)
            self._pending_action = _fenced_action(message.text)


def _question_in(text: str) -> str | None:
    """The user's last question in `text`, if the text asks one."""
    for sentence in reversed(signals.sentences(text)):
        if sentence.rstrip().endswith("?"):
            return signals.clip(sentence, 200)
    return None


def _clean_path(path: str) -> str:
    path = path.strip().strip("'\"`")
    return path[2:] if path.startswith("./") else path


@functools.lru_cache(maxsize=4096)
def _call_actions(name: str, arguments: str) -> tuple[tools.Action, ...]:
    parsed = ToolCallPart("", name, arguments).parsed_arguments() or {}
    return tools.actions_of_call(name, parsed)


def _call_events(call: ToolCallPart) -> Iterator[Event]:
    for action in _call_actions(call.name, call.arguments):
        if action.kind == "file" and action.path and action.op:
            yield FileTouched(_clean_path(action.path), action.op)
        elif action.kind == "todos":
            yield TodosStated(action.todos)
        elif action.kind == "final" and action.text:
            yield Finished(action.text)


def _command_of(call: ToolCallPart) -> str | None:
    for action in _call_actions(call.name, call.arguments):
        if action.kind == "command" and action.command:
            return action.command
    return None


def _result_events(
    call: ToolCallPart | None, result: ToolResultPart, open_file: str | None
) -> Iterator[Event]:
    text = result.text
    placeholder = read_placeholder(text)
    if placeholder is not None:
        outcome, errors, tests = placeholder.outcome, placeholder.errors, placeholder.tests
        found = placeholder.identifiers
    else:
        outcome, errors = signals.outcome_of(text, is_error=result.is_error)
        status = tools.command_exit_status(call.name if call else None, text)
        if status is not None:
            outcome = "ok" if status == 0 else f"exit {status}"
            if status == 0:
                errors = ()
        tests = signals.test_summary(text)
        found = signals.identifiers(text)
    if found:
        yield IdentifiersSeen(found)
    if call is None:
        if errors:
            yield ToolFinished("an earlier tool call", False, errors)
        return
    command = _command_of(call)
    if command is not None:
        yield CommandRan(signals.clip(command, 200), outcome, errors, tests)
        return
    if not _call_actions(call.name, call.arguments):
        # Editor tools acting on the open file name no path: their output does.
        op = signals.tool_file_op(call.name, call.parsed_arguments() or {})
        if op in ("modified", "created", "written"):
            banner = _FILE_BANNER.search(text)
            path = banner.group(1) if banner else open_file
            if path:
                yield FileTouched(_clean_path(path), op)
    source = f"{call.name}({_short_arguments(call.parsed_arguments() or {})})"
    yield ToolFinished(source, outcome == "ok", errors)


def _short_arguments(arguments: dict[str, object]) -> str:
    for key in (
        "path",
        "file_path",
        "absolutePath",
        "file",
        "filename",
        "pattern",
        "query",
        "url",
    ):
        value = arguments.get(key)
        if isinstance(value, str):
            return signals.clip(value, 80)
    return ""


_OPEN_FILE = re.compile(r"\(Open file: ([^)\n]+)\)")
_FILE_BANNER = re.compile(r"\[File: ([^\]\n]+?) \(\d+ lines total\)\]")


@functools.lru_cache(maxsize=4096)
def _open_file_in(text: str) -> str | None:
    """The file an editor-style environment reports as open (SWE-agent's status line)."""
    opened = _OPEN_FILE.findall(text)
    if opened and opened[-1].strip() not in ("n/a", ""):
        return str(opened[-1]).strip()
    return None


def _fenced_action(text: str) -> str | None:
    """The command an assistant wrote as its action, in a fenced block or a `<command>` tag
    (agents without tool calling)."""
    blocks = re.findall(r"```[\w-]*\n(.*?)```|<command>\n?(.*?)</command>", text, flags=re.DOTALL)
    blocks = [fenced or tagged for fenced, tagged in blocks]
    if not blocks:
        return None
    action = blocks[-1].strip()
    return action or None


_EDITOR_ACTION = re.compile(r"^(open|create|edit|goto|scroll_up|scroll_down|search_file)\b\s*(.*)")


def _action_outcome(action: str, output: str, open_file: str | None) -> Iterator[Event]:
    first = action.splitlines()[0].strip()
    editor = _EDITOR_ACTION.match(first)
    if editor:
        verb, rest = editor.group(1), editor.group(2).strip().strip("'\"")
        target = rest.split()[0] if rest else None
        if verb == "create" and target:
            yield FileTouched(_clean_path(target), "created")
        elif verb == "open" and target:
            yield FileTouched(_clean_path(target), "read")
        elif verb == "edit":
            edited = _FILE_BANNER.search(output)
            path = edited.group(1) if edited else open_file
            if path:
                yield FileTouched(_clean_path(path), "modified")
        return
    outcome, errors = signals.outcome_of(output)
    yield CommandRan(signals.clip(first, 200), outcome, errors, signals.test_summary(output))
    for path, op in signals.file_ops_of_command(action):
        yield FileTouched(_clean_path(path), op)
