"""The ledger: what a span of conversation did, extracted without any LLM.

User messages (verbatim, bounded), files and what happened to them, commands with their
outcome, errors still open, the latest test status, the assistant's decisions and plans,
open to-dos, and values the user changed (latest wins). A ledger renders to the text of a
digest summary and parses back from it, so repeated compactions merge instead of nesting.

This module must never call a model, read a wire format or count tokens; it must be
byte-for-byte deterministic.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from compaction.messages import (
    Message,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.summarize import signals

_FILE_OPS = ("created", "modified", "deleted", "read")
_OP_RANK = {"read": 0, "modified": 1, "created": 2, "deleted": 3}


@dataclass
class CommandRecord:
    command: str
    outcome: str = "no output seen"


@dataclass
class ErrorRecord:
    text: str
    source: str  # the command or tool call that produced it
    open: bool = True


@dataclass
class Ledger:
    """What a span did. Lists are in chronological order; later entries win on conflicts."""

    user_messages: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    commands: list[CommandRecord] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    test_status: str | None = None
    decisions: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    values: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    narrative: list[str] = field(default_factory=list)
    messages: int = 0

    # -- building ------------------------------------------------------------------------

    def note_file(self, path: str, op: str) -> None:
        path = path.strip().strip("'\"`")
        if path.startswith("./"):
            path = path[2:]
        previous = self.files.get(path)
        if op == "written":
            op = "modified" if previous is not None else "created"
        if previous is None:
            self.files[path] = op
            return
        if op == "deleted":
            self.files[path] = "deleted"
        elif previous == "deleted" and op in ("created", "modified"):
            self.files[path] = "created"
        elif _OP_RANK[op] > _OP_RANK[previous] and previous != "created":
            self.files[path] = op
        # Moving the entry to the end keeps the most recently touched files last.
        self.files[path] = self.files.pop(path)

    def note_command(self, command: str, outcome: str, errors: Sequence[str]) -> None:
        self.commands = [c for c in self.commands if c.command != command]
        self.commands.append(CommandRecord(command, outcome))
        if outcome == "ok":
            self.resolve_errors(command)
        for text in errors:
            self.note_error(text, command)

    def resolve_errors(self, source: str) -> None:
        """A clean run of `source` closes the errors it produced before."""
        for error in self.errors:
            if error.source == source:
                error.open = False

    def note_error(self, text: str, source: str) -> None:
        self.errors = [e for e in self.errors if not (e.text == text and e.source == source)]
        self.errors.append(ErrorRecord(text, source, True))

    def note_value(self, key: str, value: str) -> None:
        current = self.values.get(key)
        if current is None:
            self.values[key] = (value, [])
        elif current[0] != value:
            earlier = [v for v in current[1] if v != value] + [current[0]]
            self.values.pop(key)
            self.values[key] = (value, earlier)

    def note_identifier(self, identifier: str) -> None:
        if identifier in self.identifiers:
            self.identifiers.remove(identifier)
        self.identifiers.append(identifier)

    def note_todo(self, sentence: str) -> None:
        if sentence not in self.todos:
            self.todos.append(sentence)

    def close_todos(self, sentence: str) -> None:
        """Drop to-dos that `sentence` reports as done (most of their key words recur)."""
        words = signals.significant_words(sentence)
        if not words:
            return
        keep = []
        for todo in self.todos:
            todo_words = signals.significant_words(todo)
            if todo_words and len(todo_words & words) / len(todo_words) >= 0.6:
                continue
            keep.append(todo)
        self.todos = keep

    def merge(self, later: Ledger) -> Ledger:
        """This ledger followed by `later` (later wins)."""
        merged = Ledger(
            user_messages=[*self.user_messages, *later.user_messages],
            files=dict(self.files),
            commands=list(self.commands),
            errors=[ErrorRecord(e.text, e.source, e.open) for e in self.errors],
            test_status=later.test_status or self.test_status,
            decisions=[*self.decisions, *(d for d in later.decisions if d not in self.decisions)],
            todos=list(self.todos),
            values=dict(self.values),
            notes=[*self.notes, *(n for n in later.notes if n not in self.notes)],
            narrative=[*self.narrative, *(n for n in later.narrative if n not in self.narrative)],
            identifiers=list(self.identifiers),
            messages=self.messages + later.messages,
        )
        for identifier in later.identifiers:
            merged.note_identifier(identifier)
        for path, op in later.files.items():
            merged.note_file(path, op)
        for command in later.commands:
            merged.note_command(command.command, command.outcome, ())
        for error in later.errors:
            merged.errors = [
                e for e in merged.errors if not (e.text == error.text and e.source == error.source)
            ]
            merged.errors.append(ErrorRecord(error.text, error.source, error.open))
        for todo in later.todos:
            merged.note_todo(todo)
        for key, (value, earlier) in later.values.items():
            for old in earlier:
                merged.note_value(key, old)
            merged.note_value(key, value)
        return merged


# -- extraction ------------------------------------------------------------------------------


def is_observation(message: Message) -> bool:
    """A user-role message that carries an environment's output (SWE-agent style), not words
    the user wrote."""
    return message.provider_data.get("traj.message_type") == "observation"


def extract_ledger(messages: Iterable[Message], *, user_chars: int = 1200) -> Ledger:
    """Read a span of messages into a ledger. Summaries inside the span merge in first."""
    builder = LedgerBuilder(user_chars=user_chars)
    for message in messages:
        builder.add(message)
    return builder.ledger


class LedgerBuilder:
    """Reads messages one at a time into `ledger`, so the ledger of every prefix of a span is
    available on the way (the digest compares several prefixes in one pass)."""

    def __init__(self, *, user_chars: int = 1200) -> None:
        self.ledger = Ledger()
        self.user_chars = user_chars
        self._calls: dict[str, ToolCallPart] = {}
        self._pending_action: str | None = None
        self._open_file: str | None = None

    def add(self, message: Message) -> None:
        ledger = self.ledger
        ledger.messages += 1
        for summary in (p for p in message.parts if isinstance(p, SummaryPart)):
            ledger = self.ledger = ledger.merge(parse_ledger(summary.text))
            ledger.messages += max(summary.replaced - 1, 0)
        if message.role == "user" and is_observation(message):
            if self._pending_action is not None:
                _note_action_outcome(ledger, self._pending_action, message.text, self._open_file)
                self._pending_action = None
            self._open_file = _open_file_in(message.text) or self._open_file
            return
        if message.role == "user":
            # The user's own words, wherever they sit (Anthropic puts them beside tool results).
            text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart)).strip()
            if text:
                ledger.user_messages.append(bounded_user_text(text, self.user_chars))
                for key, value in signals.value_settings(text):
                    ledger.note_value(key, value)
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                self._calls[part.id] = part
                _note_tool_call(ledger, part)
            elif isinstance(part, ToolResultPart):
                call = self._calls.get(part.tool_call_id)
                _note_tool_result(ledger, call, part)
                if call is not None:
                    _note_editor_file(ledger, call, part.text, self._open_file)
                self._open_file = _open_file_in(part.text) or self._open_file
            elif isinstance(part, TextPart | ReasoningPart) and message.role == "assistant":
                _note_prose(ledger, part.text)
        if message.role == "assistant" and not message.tool_calls:
            self._pending_action = _fenced_action(message.text)


_OPEN_FILE = re.compile(r"\(Open file: ([^)\n]+)\)")
_FILE_BANNER = re.compile(r"\[File: ([^\]\n]+?) \(\d+ lines total\)\]")


@functools.lru_cache(maxsize=4096)
def _open_file_in(text: str) -> str | None:
    """The file an editor-style environment reports as open (SWE-agent's status line)."""
    opened = _OPEN_FILE.findall(text)
    if opened and opened[-1].strip() not in ("n/a", ""):
        return str(opened[-1]).strip()
    return None


def _note_editor_file(
    ledger: Ledger, call: ToolCallPart, output: str, open_file: str | None
) -> None:
    """Editor tools that act on the open file name no path: take it from their output."""
    if _call_file_ops(call.name, call.arguments) or signals.is_shell_tool(call.name):
        return
    arguments = call.parsed_arguments() or {}
    op = signals.tool_file_op(call.name, arguments)
    if op not in ("modified", "created", "written"):
        return
    banner = _FILE_BANNER.search(output)
    path = banner.group(1) if banner else open_file
    if path:
        ledger.note_file(path, op)


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


def _note_action_outcome(ledger: Ledger, action: str, output: str, open_file: str | None) -> None:
    first = action.splitlines()[0].strip()
    editor = _EDITOR_ACTION.match(first)
    if editor:
        verb, rest = editor.group(1), editor.group(2).strip().strip("'\"")
        target = rest.split()[0] if rest else None
        if verb == "create" and target:
            ledger.note_file(target, "created")
        elif verb == "open" and target:
            ledger.note_file(target, "read")
        elif verb == "edit":
            edited = _FILE_BANNER.search(output)
            path = edited.group(1) if edited else open_file
            if path:
                ledger.note_file(path, "modified")
        return
    outcome, errors = signals.outcome_of(output)
    ledger.note_command(signals.clip(first, 200), outcome, errors)
    for path, op in signals.file_ops_of_command(action):
        ledger.note_file(path, op)
    status = signals.test_summary(output)
    if status:
        ledger.test_status = f"{status} (`{first[:120]}`)"


@functools.lru_cache(maxsize=4096)
def _call_file_ops(name: str, arguments: str) -> tuple[tuple[str, str], ...]:
    call = ToolCallPart("", name, arguments)
    return tuple(signals.file_ops_of_tool_call(name, call.parsed_arguments() or {}))


@functools.lru_cache(maxsize=4096)
def _call_command(name: str, arguments: str) -> str | None:
    if not signals.is_shell_tool(name):
        return None
    return signals.command_of(name, ToolCallPart("", name, arguments).parsed_arguments() or {})


def _note_tool_call(ledger: Ledger, call: ToolCallPart) -> None:
    for path, op in _call_file_ops(call.name, call.arguments):
        ledger.note_file(path, op)


def _note_tool_result(ledger: Ledger, call: ToolCallPart | None, result: ToolResultPart) -> None:
    text = result.text
    masked_status: str | None = None
    if text.startswith("[tool output masked:"):
        # Already masked: the placeholder keeps error lines and identifiers; read them back.
        head, *lines = text.splitlines()
        errors = tuple(line[2:] for line in lines if line.startswith("! "))
        header = _MASK_HEADER.match(head)
        outcome = header.group(1) if header else ("error" if errors else "ok")
        for line in lines:
            if line.startswith("ids: "):
                for identifier in line[5:].split(", "):
                    ledger.note_identifier(identifier)
            elif line.startswith("tests: "):
                masked_status = line[7:]
    else:
        outcome, errors = signals.outcome_of(text, is_error=result.is_error)
        for identifier in signals.identifiers(text):
            ledger.note_identifier(identifier)
    if call is None:
        for error in errors:
            ledger.note_error(error, "an earlier tool call")
        return
    command = _call_command(call.name, call.arguments)
    if command is not None:
        shown = signals.clip(command, 200)
        ledger.note_command(shown, outcome, errors)
        status = masked_status or signals.test_summary(text)
        if status:
            ledger.test_status = f"{status} (`{shown[:120]}`)"
        return
    source = f"{call.name}({_short_arguments(call.parsed_arguments() or {})})"
    if outcome == "ok":
        ledger.resolve_errors(source)
    for text in errors:
        ledger.note_error(text, source)


_MASK_HEADER = re.compile(r"^\[tool output masked: .*; ([^;]+); original kept as m-\w+\]$")


def _short_arguments(arguments: dict[str, object]) -> str:
    for key in ("path", "file", "filename", "file_path", "pattern", "query", "url"):
        value = arguments.get(key)
        if isinstance(value, str):
            return signals.clip(value, 80)
    return ""


def _note_prose(ledger: Ledger, text: str) -> None:
    for sentence, todo, done, decision, note in signals.prose_signals(text):
        clipped = signals.clip(sentence, 300)
        if todo:
            ledger.note_todo(clipped)
        elif done:
            ledger.close_todos(sentence)
        if decision and clipped not in ledger.decisions:
            ledger.decisions.append(clipped)
        elif note and not todo and clipped not in ledger.notes:
            ledger.notes.append(clipped)


def bounded_user_text(text: str, limit: int) -> str:
    """The user's words verbatim up to `limit` chars; longer ones keep head and tail, plus the
    sentences of the middle that state constraints."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 20, 20)
    head, middle, tail = text[:half], text[half:-half], text[-half:]
    kept = [s for s in signals.sentences(middle) if signals.is_constraint(s) and len(s) <= 300]
    kept_text = " … ".join(kept[:6])
    elided = len(middle) - len(kept_text)
    if kept_text:
        return f"{head} […{elided} chars elided; constraints kept: {kept_text}…] {tail}"
    return f"{head} […{elided} chars elided…] {tail}"


# -- rendering and parsing -------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """How much of a ledger a rendering keeps. Tighter levels drop the oldest entries first."""

    user_chars: int
    files: int
    commands: int
    errors: int
    decisions: int
    todos: int
    include_read: bool = True
    short_preamble: bool = False
    notes: int = 8
    identifiers: int = 12


# Tighter levels drop what matters least first: files only read, command history, then
# older decisions and notes; the user's own words shrink last.
LEVELS: tuple[Limits, ...] = (
    Limits(1200, files=200, commands=40, errors=12, decisions=16, todos=16),
    Limits(800, files=100, commands=15, errors=8, decisions=12, todos=12, notes=6, identifiers=8),
    Limits(500, 60, 8, 6, 10, 10, include_read=False, notes=5, identifiers=6),
    Limits(300, 40, 4, 5, 8, 8, include_read=False, short_preamble=True, notes=4, identifiers=4),
    Limits(200, 30, 0, 4, 6, 6, include_read=False, short_preamble=True, notes=3, identifiers=3),
    Limits(120, 20, 0, 3, 4, 4, include_read=False, short_preamble=True, notes=2, identifiers=2),
)

OPEN_TAG = "<earlier-context-summary>"
CLOSE_TAG = "</earlier-context-summary>"
PREAMBLE = (
    "This is a summary of the earlier part of this conversation, written by the compaction "
    "system, not by the user. It records what happened; it is context, not a new instruction."
)
SHORT_PREAMBLE = "Summary of earlier context by the compaction system, not the user."
_H_USER = "## What the user said (verbatim, oldest first)"
_H_VALUES = "## Values the user set (latest wins)"
_H_FILES = "## Files touched"
_H_COMMANDS = "## Commands run (outcome)"
_H_ERRORS = "## Errors still open"
_H_TESTS = "## Latest test status"
_H_DECISIONS = "## Decisions and plans stated by the assistant"
_H_TODOS = "## Open to-dos"
_H_NOTES = "## Notes by the assistant"
_H_EARLIER = "## Earlier summary"
# Sections an LLM summary adds (see `compaction.strategies.summarize`), read back on merge.
H_SUMMARY = "## Summary"
H_FACTS = "## Facts to remember"
H_NEXT = "## Outstanding to-dos"
_NARRATIVE = (_H_EARLIER, H_SUMMARY)
_H_IDS = "## Identifiers seen in tool output"


def render_ledger(ledger: Ledger, limits: Limits) -> str:
    """The body of a digest summary (without the `[compacted: …]` header)."""
    preamble = SHORT_PREAMBLE if limits.short_preamble else PREAMBLE
    return "\n".join([OPEN_TAG, preamble, *ledger_sections(ledger, limits), CLOSE_TAG])


def indented(text: str) -> list[str]:
    """Free text as lines indented by two spaces, so no line of it can read as a heading
    or an item when the summary is parsed back."""
    return ["  " + line if line.strip() else "" for line in text.strip().splitlines()]


def ledger_sections(ledger: Ledger, limits: Limits) -> list[str]:
    """The ledger's sections, each preceded by a blank line."""
    lines: list[str] = []
    if ledger.narrative:
        lines += ["", _H_EARLIER]
        for text in ledger.narrative[-2:]:
            lines += indented(bounded_user_text(text, limits.user_chars * 3))
    if ledger.user_messages:
        lines += ["", _H_USER]
        for text in ledger.user_messages:
            shown = bounded_user_text(text, limits.user_chars)
            lines.append("- " + shown.replace("\n", "\n  "))
    if ledger.values:
        lines += ["", _H_VALUES]
        for key, (value, earlier) in ledger.values.items():
            was = f" (earlier: {', '.join(earlier)})" if earlier else ""
            lines.append(f"- {key}: {value}{was}")
    files = [(p, op) for p, op in ledger.files.items() if limits.include_read or op != "read"]
    if files:
        # Changed files first: they matter more than files only read, and survive tighter limits.
        ordered = sorted(files, key=lambda item: _FILE_OPS.index(item[1]))[: limits.files]
        lines += ["", _H_FILES]
        lines += [f"- {path} ({op})" for path, op in ordered]
    if ledger.commands and limits.commands:
        lines += ["", _H_COMMANDS]
        for record in ledger.commands[-limits.commands :]:
            command = record.command.replace("\n", " ⏎ ")
            lines.append(f"- `{command}` → {record.outcome}")
    open_errors = [e for e in ledger.errors if e.open][-limits.errors :] if limits.errors else []
    if open_errors:
        lines += ["", _H_ERRORS]
        lines += [f"- {e.text} (from {_quote_source(e.source)})" for e in open_errors]
    if ledger.test_status:
        lines += ["", _H_TESTS, f"- {ledger.test_status}"]
    if ledger.decisions and limits.decisions:
        lines += ["", _H_DECISIONS]
        lines += [f"- {d}" for d in ledger.decisions[-limits.decisions :]]
    if ledger.todos:
        lines += ["", _H_TODOS]
        lines += [f"- {t}" for t in ledger.todos[-limits.todos :]]
    if ledger.notes and limits.notes:
        lines += ["", _H_NOTES]
        lines += [f"- {n}" for n in ledger.notes[-limits.notes :]]
    if ledger.identifiers and limits.identifiers:
        lines += ["", _H_IDS]
        lines += [f"- {i}" for i in ledger.identifiers[-limits.identifiers :]]
    return lines


def _quote_source(source: str) -> str:
    return source if "(" in source and not source.startswith("`") else f"`{source}`"


_FILE_LINE = re.compile(r"^- (.+) \((created|modified|deleted|read)\)$")
_COMMAND_LINE = re.compile(r"^- `(.*)` → (.+)$")
_ERROR_LINE = re.compile(r"^- (.*) \(from (`.*`|.*\(.*\))\)$")
_VALUE_LINE = re.compile(r"^- ([^:]+): (.*?)(?: \(earlier: (.*)\))?$")


def parse_ledger(text: str) -> Ledger:
    """Read a rendered digest back into a ledger, so the next compaction can merge into it.

    An LLM summary's prose and facts come back as narrative, notes and to-dos; text in no
    known shape (a truncation marker, a summary someone else wrote) is kept whole as
    narrative, so nothing it says is lost."""
    ledger = Ledger()
    body = text.partition("\n")[2] if text.startswith("[compacted:") else text
    if OPEN_TAG not in body or "\n## " not in body:
        note = body.replace(OPEN_TAG, "").replace(CLOSE_TAG, "").strip()
        if note:
            ledger.narrative.append(note)
        return ledger
    section = None
    item: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if section in _NARRATIVE and prose:
            ledger.narrative.append("\n".join(line[2:] for line in prose).strip())
            prose.clear()
        if section is None or not item:
            return
        line = "\n".join(item)
        content = line[2:] if line.startswith("- ") else line
        if section == _H_USER:
            ledger.user_messages.append(content.replace("\n  ", "\n"))
        elif section == _H_VALUES and (m := _VALUE_LINE.match(line)):
            earlier = m.group(3).split(", ") if m.group(3) else []
            ledger.values[m.group(1)] = (m.group(2), earlier)
        elif section == _H_FILES and (m := _FILE_LINE.match(line)):
            ledger.files[m.group(1)] = m.group(2)
        elif section == _H_COMMANDS and (m := _COMMAND_LINE.match(line)):
            ledger.commands.append(CommandRecord(m.group(1).replace(" ⏎ ", "\n"), m.group(2)))
        elif section == _H_ERRORS and (m := _ERROR_LINE.match(line)):
            ledger.errors.append(ErrorRecord(m.group(1), m.group(2).strip("`"), True))
        elif section == _H_TESTS:
            ledger.test_status = content
        elif section == _H_DECISIONS:
            ledger.decisions.append(content)
        elif section in (_H_TODOS, H_NEXT):
            ledger.todos.append(content)
        elif section in (_H_NOTES, H_FACTS):
            ledger.notes.append(content)
        elif section == _H_IDS:
            ledger.identifiers.append(content)

    for line in body.splitlines():
        if line in (OPEN_TAG, CLOSE_TAG, PREAMBLE, SHORT_PREAMBLE):
            continue
        if line.startswith("## "):
            flush()
            section, item = line, []
        elif section in _NARRATIVE:
            if line.strip():
                prose.append(line if line.startswith("  ") else "  " + line)
        elif line.startswith("- "):
            flush()
            item = [line]
        elif line.startswith("  ") and item:
            item.append(line)
        elif not line.strip():
            continue
    flush()
    return ledger
