"""User datasets for the benchmark: sessions read from files, with the facts to check in them.

`load_dataset(spec)` reads a file or a directory of files into `EvalSession`s:

    *.json     one OpenAI Chat Completions or Anthropic Messages payload (a list of messages
               or a request object), or a SWE-agent trajectory; the dialect is detected
    *.jsonl    one such payload per line (blank lines skipped); errors name the line
    *.traj     a SWE-agent trajectory
    DIR        every file above directly inside DIR, in sorted order (no recursion)

Session names are file names (`chat.json`, `run.traj`) and `FILE:LINE` for JSONL lines; they
are the keys of probes files. The facts of a session come from a probes file when one covers
it, otherwise from `extract_probes`.

Probes files
------------
`PATH.probes.json` (or `STEM.probes.json`) beside a session file, or `probes.json` in a
directory. A session file's probes are a list of facts; a JSONL file's, and a directory's, an
object mapping session names to lists of facts (a JSONL file's may use bare line numbers,
`"3"`). One fact::

    {"id": "tz",                        required, unique within the session
     "category": "constraint",          required, one of `probes.CATEGORIES`
     "probe": ["naive datetimes"],      required, non-empty strings that must all survive
     "text": "UTC everywhere",          what the fact says (default: the probe strings)
     "stale": ["local time"],           superseded forms that must not come back as current
     "critical": true,                  default: required and in `REQUIRED_CATEGORIES`
     "required": true,                  false for facts whose loss is harmless
     "cued": false, "buried": false,    how the fact was stated (defaults false)
     "depth": "early"}                  default: where the probe first occurs

Every probe string must occur in the session (case-insensitively): a probe that is not there
could only "survive" by accident. Unknown keys, wrong types and unknown session names are
errors naming the file, the session, the index and the key.

Extracted probes
----------------
For a session without a probes file, `extract_probes` reads the raw session with rules of its
own, deliberately not the readers the digest strategy uses, so that the digest is not graded
by its own eyes:

- files edited, created or deleted: tool calls whose name says so (write/create/edit/
  replace/insert/delete …) and the file their arguments name; editor-style tools by their
  `command` argument (`create`, `str_replace`, `insert`; `view` changes nothing), file tools
  by their `operation` (`delete`; `move` deletes the path and creates the `destination`,
  `copy` creates it); patch tools
  by their `*** Add/Update/Delete File:` lines; SWE-agent `create FILE`, and `edit`/`insert`/
  `append` acting on the file the environment reports open; shell commands `sed -i`,
  `perl -i`, `>`/`>>` redirections, `tee`, `touch`, `rm`, `mv`, `cp`, `git rm`/`git mv`
  (here-document bodies are data, not commands); a code-running tool (`execute` {language,
  code}, Open Interpreter's one function) by its code: shell code as a shell command, Python
  code by the files its `open(path, "w")`, `Path(path).write_text(…)`, `os.remove(path)`,
  `shutil.move(a, b)` and like calls name with a literal string; calls written as JSON in
  the assistant's text (Codebuff's `<codebuff_tool_call>`, answered by `<tool_result>`
  elements of the next user turn) as tool calls. An edit whose own output
  reports it was not applied does not count. A file written whole is created unless an
  earlier tool call or tool output named it. One fact per file, by its final state.
- commands run: shell tool calls (`bash`, `shell`, `run_command` …) and SWE-agent actions
  other than its own editor, navigation and session commands; one fact per distinct command
  line, none for commands under four characters (`ls`). A list of command lines (LangChain's
  ShellTool `terminal` takes `commands`) is read as one script of those lines; shell code a
  code-running tool runs is a command too, Python code is not.
- the last failing test still failing at the end: pytest `FAILED`/`ERROR` ids and unittest
  `FAIL:`/`ERROR:` lines in tool outputs; a test is passing again when a later output shows
  it `PASSED`/`ok`, or when a later run reports no failures and its command names the test's
  file or no test path at all. A last failure that passed later is kept, not required.
- the final diff's files: SWE-agent `info.submission`, else the last tool output holding a
  `diff --git` header; new and deleted files by their mode lines.
- agents that act in text: aider's SEARCH/REPLACE blocks (the file named on the line before
  the block; an empty SEARCH part writes the file whole) and mini-SWE-agent's command blocks
  (` ```mswea_bash_command`, or ` ```bash` when the next message answers with its
  `<returncode>`), and a code agent's Python (smolagents' `<code>` or ```py blocks answered
  by `Observation:`): each call of a tool function in the code is a tool call by that name
  with its literal keyword arguments (`edit_file(path=…)`, `run_shell(command=…)`), none when
  the code raised (`Error:`), a CrewAI agent's ReAct steps (`Action:` and the JSON object
  of `Action Input:`, answered in the same text by `Observation:`), FileWriterTool's file
  being its `directory` and `filename` together; AutoGen's markdown code blocks answered by
  its user proxy's `exitcode: N (…)` / `Code output:` are code-running calls of their
  language (shell or Python; a block in another language is not run). Windows paths
  (`absolutePath` of Cline) are named by their last component.
  Windsurf's Cascade names its file in `TargetFile`/`AbsolutePath` and its command in
  `CommandLine`; GitHub Copilot's agent mode names its file in `filePath` and runs commands
  through `run_in_terminal`; Warp's `edit_files` names its files in the items of its `diffs`
  (edited), `new_files` (written) and `deleted_files` lists; Kiro's `deleteFile` names its
  file in `targetFile`; Augment's `remove-files` names its files in a `file_paths` list, and its
  agent runs commands through `launch-process`; Roo Code's `apply_diff` modifies the file its
  `path` names; the Void editor's file tools name their file's full path in `uri`.
- how the session ends (`compaction.eval.state_probes`): user constraints, the last errors
  seen and whether a later run passed, the open to-dos of the last to-do tool call (Claude
  Code `TodoWrite` and `TaskCreate`/`TaskUpdate`, OpenCode `todowrite`, Codex `update_plan`,
  OpenHands `task_tracker`, Cline `task_progress`), the final test status (stale: earlier
  summaries) and the last message.

Probe strings are exact substrings of the session's message text that survive JSON escaping
(no quotes, backslashes, control or non-ASCII characters: a command is cut into the pieces
between them, and its first line is capped at 160 characters). A fact whose probe is not in
the session, or already in a system message (never compacted, so it measures nothing), is
dropped. Depth comes from where the fact's evidence first appears, by characters. Every
extracted fact is uncued.

This module must never import or call a compaction strategy, and never judge a session by
the digest's readers (`compaction.summarize`): it is the ruler's side of the benchmark.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from compaction.dialects import TRAJ, decode_any, detect_dialect, load_payload
from compaction.eval.probes import (
    CATEGORIES,
    DEPTHS,
    REQUIRED_CATEGORIES,
    Depth,
    Fact,
    FactCategory,
)
from compaction.eval.sessions import EvalSession
from compaction.eval.state_probes import Candidate, ToolRun, state_candidates
from compaction.exceptions import DecodeError, InputError
from compaction.messages import (
    Conversation,
    Message,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    json_object,
)

__all__ = [
    "PROBES_FILE",
    "SESSION_SUFFIXES",
    "extract_probes",
    "load_dataset",
    "load_session_file",
    "message_text",
    "parse_facts",
    "session_text",
]

#: File suffixes read as sessions in a directory.
SESSION_SUFFIXES: tuple[str, ...] = (".json", ".jsonl", ".traj")
#: The probes file of a directory.
PROBES_FILE = "probes.json"
_PROBES_SUFFIX = ".probes.json"


# --- the session's text ---------------------------------------------------------------------


def message_text(message: Message) -> str:
    """Everything a model reads in one message: text, summaries, reasoning words, tool calls
    as `name(arguments)` and tool results. The text probes are checked against."""
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart | SummaryPart | ReasoningPart):
            pieces.append(part.text)
        elif isinstance(part, ToolCallPart):
            pieces.append(f"{part.name}({part.arguments})")
        elif isinstance(part, ToolResultPart):
            pieces.append(part.text)
    return "\n".join(pieces)


def session_text(conversation: Conversation) -> str:
    """The text of every message, in order (see `message_text`)."""
    return "\n".join(message_text(m) for m in conversation.messages)


def _depth_of(sizes: Sequence[int], index: int) -> Depth:
    # Position by characters, like the generator: a long file dump early in the session
    # pushes what follows it later than its message count alone would.
    position = sum(sizes[:index]) / max(1, sum(sizes))
    return "early" if position < 1 / 3 else "middle" if position < 2 / 3 else "late"


def _occurrences(texts: Sequence[str], probe: Sequence[str]) -> list[int]:
    needles = [p.casefold() for p in probe]
    return [i for i, t in enumerate(texts) if all(n in t for n in needles)]


# --- loading ------------------------------------------------------------------------------


def load_dataset(spec: str | Path) -> list[EvalSession]:
    """Every session in a file or a directory (see the module docstring), in a stable order.

    Raises `InputError` (or its `DecodeError`) naming the file, line, message or key when
    something cannot be read.
    """
    path = Path(spec)
    if path.is_dir():
        return _load_directory(path)
    if not path.exists():
        raise InputError("no such file or directory", location=str(path))
    return load_session_file(path)


def load_session_file(path: Path, *, probes: Mapping[str, Any] | None = None) -> list[EvalSession]:
    """The sessions of one file, with facts from `probes` (a mapping from session name to a
    list of fact objects), else from a probes file beside it, else extracted."""
    decoded = _read_sessions(path)
    beside = _beside_probes(path)
    if beside is not None:
        probes_path, raw = beside
        mapping = _probes_mapping(raw, probes_path, decoded, path)
        if probes is not None:
            twice = sorted(set(mapping) & set(probes))
            if twice:
                raise InputError(
                    f"facts for {', '.join(twice)} given both here and in the directory's "
                    f"{PROBES_FILE}",
                    location=str(probes_path),
                )
        probes_source = str(probes_path)
    else:
        mapping, probes_source = {}, ""
    sessions = []
    for name, source, conversation in decoded:
        if name in mapping:
            facts = parse_facts(mapping[name], conversation, location=f"{probes_source}: {name}")
            origin = "file"
        elif probes is not None and name in probes:
            facts = parse_facts(
                probes[name], conversation, location=f"{_directory_probes_name(path)}: {name}"
            )
            origin = "file"
        else:
            facts = tuple(extract_probes(conversation))
            origin = "extracted"
        sessions.append(
            EvalSession(
                name=name,
                conversation=conversation,
                facts=facts,
                source=source,
                tags={"format": conversation.dialect or "unknown", "probes": origin},
            )
        )
    return sessions


def _directory_probes_name(path: Path) -> str:
    return str(path.parent / PROBES_FILE)


def _load_directory(directory: Path) -> list[EvalSession]:
    files = sorted(
        p
        for p in directory.iterdir()
        if p.is_file()
        and p.suffix in SESSION_SUFFIXES
        and not p.name.startswith(".")
        and not p.name.endswith(_PROBES_SUFFIX)
        and p.name != PROBES_FILE
    )
    if not files:
        raise InputError(
            f"no sessions found (expected {', '.join(SESSION_SUFFIXES)} files)",
            location=str(directory),
        )
    probes_path = directory / PROBES_FILE
    probes: dict[str, Any] | None = None
    if probes_path.is_file():
        raw = load_payload(_read_bytes(probes_path), source=str(probes_path))
        if not isinstance(raw, dict):
            raise InputError(
                f"expected an object mapping session names to lists of facts, got {_kind(raw)}",
                location=str(probes_path),
            )
        probes = raw
    sessions: list[EvalSession] = []
    for path in files:
        sessions.extend(load_session_file(path, probes=probes))
    if probes is not None:
        unknown = sorted(set(probes) - {s.name for s in sessions})
        if unknown:
            known = ", ".join(s.name for s in sessions[:5])
            more = ", …" if len(sessions) > 5 else ""
            raise InputError(
                f"facts for unknown session(s) {', '.join(unknown)}; sessions here are "
                f"named by file (and FILE:LINE for JSONL): {known}{more}",
                location=str(probes_path),
            )
    return sessions


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", location=str(path)) from e


def _read_sessions(path: Path) -> list[tuple[str, str, Conversation]]:
    """(name, source, conversation) of each session in the file."""
    data = _read_bytes(path)
    if path.suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(path, data)
    payload = load_payload(data, source=str(path))
    dialect = "traj" if path.suffix == ".traj" else None
    return [(path.name, str(path), _decode(payload, dialect, str(path)))]


def _read_jsonl(path: Path, data: bytes) -> list[tuple[str, str, Conversation]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DecodeError(f"not UTF-8 text (byte {e.start}: {e.reason})", location=str(path)) from e
    out = []
    # Split on "\n" alone: JSON strings may hold U+2028 and friends, which `splitlines` cuts.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        payload = load_payload(line.rstrip("\r"), source=where)
        out.append((f"{path.name}:{number}", where, _decode(payload, None, where)))
    if not out:
        raise InputError("no sessions in this JSONL file (every line is blank)", location=str(path))
    return out


def _decode(payload: Any, dialect: str | None, where: str) -> Conversation:
    try:
        name = dialect if dialect is not None else detect_dialect(payload)
        return TRAJ.decode(payload) if name == "traj" else decode_any(payload, name)
    except DecodeError as e:
        raise DecodeError(str(e), location=where) from e


# --- probes files ---------------------------------------------------------------------------


def _beside_probes(path: Path) -> tuple[Path, Any] | None:
    candidates = [path.with_name(path.name + _PROBES_SUFFIX)]
    if path.suffix:
        candidates.append(path.with_name(path.stem + _PROBES_SUFFIX))
    found = [c for c in candidates if c.is_file()]
    if len(found) > 1:
        raise InputError(
            f"two probes files for one session file: {found[0].name} and {found[1].name}",
            location=str(path),
        )
    if not found:
        return None
    return found[0], load_payload(_read_bytes(found[0]), source=str(found[0]))


def _probes_mapping(
    raw: Any, probes_path: Path, decoded: Sequence[tuple[str, str, Conversation]], path: Path
) -> dict[str, Any]:
    names = [name for name, _, _ in decoded]
    if isinstance(raw, list):
        if len(names) != 1:
            raise InputError(
                f"{path.name} holds {len(names)} sessions: give an object mapping session "
                f"names ({names[0]}, …) to lists of facts",
                location=str(probes_path),
            )
        return {names[0]: raw}
    if not isinstance(raw, dict):
        raise InputError(
            f"expected a list of facts or an object mapping session names to lists of facts, "
            f"got {_kind(raw)}",
            location=str(probes_path),
        )
    mapping: dict[str, Any] = {}
    for key, facts in raw.items():
        name = f"{path.name}:{key}" if key.isdigit() else key
        if name not in names:
            shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
            raise InputError(
                f"no session named {key!r} in {path.name} (sessions: {shown})",
                location=str(probes_path),
            )
        if name in mapping:
            raise InputError(f"facts for {name} given twice", location=str(probes_path))
        mapping[name] = facts
    return mapping


_FACT_KEYS: Mapping[str, type] = {
    "id": str,
    "category": str,
    "probe": list,
    "text": str,
    "stale": list,
    "critical": bool,
    "required": bool,
    "cued": bool,
    "buried": bool,
    "depth": str,
}
_REQUIRED_KEYS = ("id", "category", "probe")
_TYPE_NAMES: Mapping[type, str] = {str: "a string", list: "a list", bool: "a boolean"}


def parse_facts(raw: Any, conversation: Conversation, *, location: str) -> tuple[Fact, ...]:
    """Validate a list of fact objects (the probes-file format) against `conversation`.

    `location` prefixes every error ("probes.json: run.traj"); errors add `[index].key`.
    """
    if not isinstance(raw, list):
        raise InputError(f"expected a list of facts, got {_kind(raw)}", location=location)
    texts = [message_text(m).casefold() for m in conversation.messages]
    sizes = [len(t) for t in texts]
    facts: list[Fact] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"{location}[{index}]"
        if not isinstance(item, dict):
            raise InputError(f"expected a fact object, got {_kind(item)}", location=where)
        for key in _REQUIRED_KEYS:
            if key not in item:
                raise InputError(f"missing required key {key!r}", location=where)
        for key, value in item.items():
            expected = _FACT_KEYS.get(key)
            if expected is None:
                valid = ", ".join(_FACT_KEYS)
                raise InputError(f"unknown key (valid keys: {valid})", location=f"{where}.{key}")
            if not isinstance(value, expected):
                raise InputError(
                    f"expected {_TYPE_NAMES[expected]}, got {_kind(value)}",
                    location=f"{where}.{key}",
                )
        fact_id = item["id"]
        if not fact_id.strip():
            raise InputError("must not be empty", location=f"{where}.id")
        if fact_id in seen:
            raise InputError(f"duplicate fact id {fact_id!r}", location=f"{where}.id")
        seen.add(fact_id)
        category = item["category"]
        if category not in CATEGORIES:
            raise InputError(
                f"unknown category {category!r}; expected one of {', '.join(CATEGORIES)}",
                location=f"{where}.category",
            )
        probe = _strings(item["probe"], f"{where}.probe", allow_empty=False)
        stale = _strings(item.get("stale", []), f"{where}.stale", allow_empty=True)
        for k, needle in enumerate(probe):
            if not any(needle.casefold() in t for t in texts):
                raise InputError(
                    f"{needle!r} does not occur in the session, so it could never survive",
                    location=f"{where}.probe[{k}]",
                )
        # Where the whole probe shows in one message; failing that, where any part of it does.
        planted = tuple(_occurrences(texts, probe))
        first = planted[0] if planted else min(_occurrences(texts, probe[:1]) or [0])
        depth = item.get("depth", _depth_of(sizes, first))
        if depth not in DEPTHS:
            raise InputError(
                f"unknown depth {depth!r}; expected one of {', '.join(DEPTHS)}",
                location=f"{where}.depth",
            )
        required: bool = item.get("required", True)
        typed_category = cast(FactCategory, category)
        critical: bool = item.get("critical", required and typed_category in REQUIRED_CATEGORIES)
        facts.append(
            Fact(
                id=fact_id,
                category=typed_category,
                text=item.get("text", "; ".join(probe)),
                probe=probe,
                depth=cast(Depth, depth),
                cued=item.get("cued", False),
                critical=critical,
                stale=stale,
                buried=item.get("buried", False),
                required=required,
                planted_in=planted,
            )
        )
    return tuple(facts)


def _strings(value: list[Any], where: str, *, allow_empty: bool) -> tuple[str, ...]:
    if not value and not allow_empty:
        raise InputError("must list at least one string", location=where)
    for k, item in enumerate(value):
        if not isinstance(item, str):
            raise InputError(f"expected a string, got {_kind(item)}", location=f"{where}[{k}]")
        if not item.strip():
            raise InputError("must not be empty", location=f"{where}[{k}]")
    return tuple(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# --- extraction: what the agent did -----------------------------------------------------------

FileState = Literal["created", "modified", "deleted"]
_FileOp = Literal["created", "modified", "deleted", "written"]

#: Tool names that run a shell command, and the argument keys holding it.
_SHELL_TOOLS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "shell",
        "terminal",
        "cmd",
        "powershell",
        "run",
        "exec",
        "run_command",
        "run_shell_command",
        "run_shell",
        "run_terminal_cmd",
        "run_terminal_command",
        "execute_command",
        "execute_bash",
        "exec_command",
        "local_shell",
        "container.exec",
        "run_in_terminal",
        "launch-process",
        "start_process",  # Desktop Commander's MCP server (`mcp__desktop-commander__…`)
        "run_process",  # mcp-server-commands
    }
)
_COMMAND_KEYS = ("command", "cmd", "script", "CommandLine", "command_line")
#: Words of a tool's name that say it runs commands (Composio's `SHELLTOOL_EXEC_COMMAND`),
#: when no name above is the tool's: its command is under one of `_COMMAND_KEYS`.
_SHELL_WORDS = frozenset({"shell", "shelltool", "bash", "terminal", "exec", "execute", "cmd"})
#: A code-running tool's `language` values whose `code` is a shell script (Open Interpreter's
#: `execute` {language, code}), and those whose code is Python.
_SHELL_LANGUAGES = frozenset({"shell", "bash", "sh", "zsh", "powershell"})
_PYTHON_LANGUAGES = frozenset({"python", "python3", "py"})
#: Argument keys holding a list of command lines run one after another (LangChain's
#: ShellTool, `terminal`: `commands`), read as the lines of one script.
_COMMAND_LINE_KEYS = ("commands",)

#: SWE-agent's own commands: its editor, navigation, search and session control. Everything
#: else a SWE-agent action runs is a shell command.
_SWE_AGENT_COMMANDS = frozenset(
    {
        "open",
        "goto",
        "scroll_up",
        "scroll_down",
        "create",
        "edit",
        "insert",
        "append",
        "set_cursors",
        "find_file",
        "search_dir",
        "search_file",
        "filemap",
        "str_replace_editor",
        "submit",
        "skip",
        "exit_forfeit",
        "exit_cost",
        "exit_context",
        "exit_format",
        "exit_error",
        "decompile",
        "disassemble",
        "debug_start",
        "debug_add_breakpoint",
        "debug_continue",
        "debug_step",
        "debug_exec",
        "debug_stop",
        "connect_start",
        "connect_sendline",
        "connect_exec",
        "connect_stop",
        "view_image",
    }
)
#: Editing commands that name no file act on the one the environment reports open.
_EDIT_OPEN_FILE = frozenset({"edit", "insert", "append"})
#: Tools whose name says neither edit nor replace but that apply a diff to the file their
#: path argument names (Roo Code's `apply_diff` {path, diff}).
_DIFF_TOOLS = frozenset({"apply_diff"})
#: Argument keys that name the file a tool acts on.
_PATH_KEYS = (
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "target_file",
    "notebook_path",
    "absolutePath",
    "absolute_path",
    "TargetFile",
    "AbsolutePath",
    "filePath",
    "targetFile",
    "uri",  # Void's file tools name their file by its full path in `uri`
)
#: Editor-style tools (`str_replace_editor`, Anthropic's text editor) name the operation in a
#: `command` argument.
_EDITOR_COMMANDS: Mapping[str, _FileOp] = {
    "create": "written",
    "str_replace": "modified",
    "insert": "modified",
    "undo_edit": "modified",
    "write": "written",
    "append": "modified",
    "delete": "deleted",
}
#: Words of a tool's name and what a call does to the file it names; first match wins.
_NAME_WORDS: tuple[tuple[frozenset[str], _FileOp], ...] = (
    (frozenset({"delete", "remove", "unlink", "rm"}), "deleted"),
    (frozenset({"create", "new", "touch"}), "created"),
    (frozenset({"write", "writer", "save", "overwrite", "put"}), "written"),
    (
        frozenset({"edit", "replace", "insert", "append", "patch", "modify", "update"}),
        "modified",
    ),
)
#: Output of an editing action that says the edit was not applied.
_EDIT_REJECTED = (
    "your proposed edit has introduced new syntax error",
    "no replacement was performed",
    "your edit was not applied",
    "did not appear verbatim",
)
_OPEN_FILE = re.compile(r"\(Open file: ([^)\n]+)\)")
_CURRENT_DIR = re.compile(r"\(Current directory: ([^)\n]+)\)")


@dataclass
class _Action:
    """One thing the agent did: a tool call, or a SWE-agent action written as text."""

    index: int
    name: str
    arguments: Mapping[str, Any]
    text: str
    output: str | None
    output_index: int | None
    output_error: bool
    open_file: str | None
    cwd: str | None

    @property
    def command(self) -> str | None:
        """The shell command this action ran, if it ran one."""
        if self.text:
            word = self.text.split(None, 1)[0] if self.text.strip() else ""
            return None if word in _SWE_AGENT_COMMANDS else self.text
        code = self.code("shell")
        if code is not None:
            return code
        name = self.name.lower()
        # Goose names an extension's tool `extension__tool` (`developer__shell`); Continue
        # (mid-2025 releases) prefixes its built-ins (`builtin_run_terminal_command`).
        base = name.removeprefix("builtin_").rsplit("__", 1)[-1]
        words = set(re.split(r"[\W_]+", name))
        if name not in _SHELL_TOOLS and base not in _SHELL_TOOLS and not words & _SHELL_WORDS:
            return None
        for key in _COMMAND_KEYS:
            value = self.arguments.get(key)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return " ".join(value)
        for key in _COMMAND_LINE_KEYS:
            value = self.arguments.get(key)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return "\n".join(value)
        return None

    def code(self, kind: Literal["shell", "python"]) -> str | None:
        """The code a code-running tool call ran ({language, code}), if it is of `kind`."""
        language, code = self.arguments.get("language"), self.arguments.get("code")
        if self.text or not isinstance(language, str) or not isinstance(code, str):
            return None
        languages = _SHELL_LANGUAGES if kind == "shell" else _PYTHON_LANGUAGES
        return code if language.strip().lower() in languages and code.strip() else None


def _actions(conversation: Conversation) -> list[_Action]:
    messages = conversation.messages
    results: dict[str, tuple[int, str, bool]] = {}
    for i, message in enumerate(messages):
        for result in message.tool_results:
            results.setdefault(result.tool_call_id, (i, result.text, result.is_error))
    actions: list[_Action] = []
    open_file: str | None = None
    cwd: str | None = None
    for i, message in enumerate(messages):
        kind = message.provider_data.get("traj.message_type")
        if kind == "demonstration":
            continue  # a worked example shown to the model, not something this agent did
        if message.role == "assistant":
            calls = message.tool_calls
            for call in calls:
                arguments = call.parsed_arguments() or {}
                index, output, error = results.get(call.id, (None, None, False))
                actions.append(
                    _Action(i, call.name, arguments, "", output, index, error, open_file, cwd)
                )
            following = messages[i + 1] if i + 1 < len(messages) else None
            action = _traj_action(message) or _text_action(message, following)
            if not calls and action is None:
                actions += _code_actions(i, message, following, open_file, cwd)
                actions += _react_actions(i, message, open_file, cwd)
                actions += _xml_tool_use(i, message, following, open_file, cwd)
                actions += _json_tool_calls(i, message, following, open_file, cwd)
                actions += _codeact_actions(i, message, following, open_file, cwd)
                actions += _executed_blocks(i, message, following, open_file, cwd)
                actions += _answered_block(i, message, following, open_file, cwd)
            if not calls and action is not None:
                observed = following is not None and following.role in ("user", "tool")
                output = message_text(following) if observed and following else None
                index_out = i + 1 if observed else None
                word = action.split(None, 1)[0] if action.strip() else ""
                actions.append(
                    _Action(i, word, {}, action, output, index_out, False, open_file, cwd)
                )
        elif message.role in ("user", "tool"):
            # SWE-agent's status lines say which file is open and where the shell stands.
            text = message_text(message)
            opened = _OPEN_FILE.findall(text)
            if opened:
                value = opened[-1].strip()
                open_file = None if value == "n/a" else value
            where = _CURRENT_DIR.findall(text)
            if where:
                cwd = where[-1].strip()
    return actions


_MINI_ACTION = re.compile(r"```(mswea_bash_command|bash|sh)[ \t]*\n(.*?)\n```", re.DOTALL)


def _text_action(message: Message, following: Message | None) -> str | None:
    """A mini-SWE-agent action: the command block of an assistant message that the next
    message answers with its `<returncode>` (a ```bash block nobody ran is only a suggestion)."""
    text = message_text(message)
    observed = following is not None and message_text(following).lstrip().startswith("<returncode>")
    for found in _MINI_ACTION.finditer(text):
        if found.group(1) == "mswea_bash_command" or observed:
            command = found.group(2).strip()
            return command or None
    return None


#: A code agent's code blocks: smolagents' `<code>…</code>` (its default tags since 1.20), or
#: a ```py / ```python block (older releases close it with `<end_code>`).
_CODE_BLOCK = re.compile(r"<code>\n?(.*?)\n?</code>|```(?:py|python)[ \t]*\n(.*?)\n```", re.DOTALL)
#: The environment's answer to a code block: its observation, or the executor's error.
_CODE_OBSERVED = re.compile(r"\A\s*(Observation:|Error:|Call id: \S+\nError:)")
_CODE_ERROR = re.compile(r"(\A\s*|\n)(Call id: \S+\n)?Error:\n")


def _code_actions(
    index: int,
    message: Message,
    following: Message | None,
    open_file: str | None,
    cwd: str | None,
) -> list[_Action]:
    """A code agent's tool calls: every call of a named function in the code blocks of an
    assistant message that the next message answers (`Observation:`, or `Error:` when the code
    raised, which then changed nothing), with its literal keyword arguments. Python's own
    functions (`print`) are not tools."""
    answer = message_text(following) if following is not None else ""
    if following is None or following.role not in ("user", "tool"):
        return []
    if not _CODE_OBSERVED.match(answer):
        return []
    error = bool(_CODE_ERROR.search(answer))
    found: list[_Action] = []
    for block in _CODE_BLOCK.finditer(message_text(message)):
        try:
            tree = ast.parse(block.group(1) or block.group(2) or "")
        except SyntaxError:
            continue
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            if not isinstance(node.func, ast.Name) or hasattr(builtins, node.func.id):
                continue
            arguments = {
                k.arg: k.value.value
                for k in node.keywords
                if k.arg is not None and isinstance(k.value, ast.Constant)
            }
            action = _Action(
                index, node.func.id, arguments, "", answer, index + 1, error, open_file, cwd
            )
            found.append(action)
    return found


#: A CrewAI ReAct step: `Action: <tool>` and `Action Input: <JSON object>`, the tool's answer
#: appended to the same assistant text as `Observation: …` (its executor's layout).
_REACT_ACTION = re.compile(r"^Action: *([A-Za-z0-9_]+) *\nAction Input: *(?=\{)", re.MULTILINE)
_REACT_OBSERVED = re.compile(r"[ \t]*\nObservation: ?")


def _react_actions(
    index: int, message: Message, open_file: str | None, cwd: str | None
) -> list[_Action]:
    """A CrewAI agent's tool call written in its text: the tool named on the `Action:` line
    with the JSON object of `Action Input:` as its arguments, answered in the same message by
    `Observation:`. FileWriterTool names its file by `directory` and `filename`: the file is
    the one they name together."""
    text = message_text(message)
    found = _REACT_ACTION.search(text)
    if found is None:
        return []
    try:
        arguments, end = json.JSONDecoder().raw_decode(text, found.end())
    except ValueError:
        return []
    observed = _REACT_OBSERVED.match(text, end)
    if not isinstance(arguments, dict) or observed is None:
        return []
    directory, filename = arguments.get("directory"), arguments.get("filename")
    if isinstance(directory, str) and directory.strip() and isinstance(filename, str):
        arguments = {**arguments, "filename": f"{directory.rstrip('/')}/{filename}"}
    output = text[observed.end() :]
    return [_Action(index, found.group(1), arguments, "", output, index, False, open_file, cwd)]


#: A tool use written as XML at the end of an assistant's text (Cline's and Roo Code's classic
#: protocol): `<tool>`, a `<parameter>value</parameter>` per argument, `</tool>`; its result
#: comes back in the next user turn as `[tool for '…'] Result:`, with "Error:" first where an
#: MCP server flagged it.
_XML_USE = re.compile(r"<([a-z_]+)>\s*((?:<([a-z_]+)>.*?</\3>\s*)+)</\1>\s*\Z", re.DOTALL)
_XML_PARAMETER = re.compile(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.DOTALL)
_XML_RESULT = re.compile(r"^\[[a-z_]+(?: for '[^'\n]*')?\] Result:[ \t]*\n?", re.MULTILINE)


def _xml_tool_use(
    index: int,
    message: Message,
    following: Message | None,
    open_file: str | None,
    cwd: str | None,
) -> list[_Action]:
    """The tool use an assistant's text ends on, written as XML, when the next user turn
    holds its result. `use_mcp_tool` calls the MCP server's tool named in `tool_name` with the
    JSON object in `arguments`."""
    answer = message_text(following) if following is not None else ""
    result = _XML_RESULT.search(answer) if following is not None else None
    use = _XML_USE.search(message_text(message)) if result is not None else None
    if result is None or use is None:
        return []
    name = use.group(1)
    arguments: dict[str, Any] = dict(_XML_PARAMETER.findall(use.group(2)))
    if name == "use_mcp_tool" and isinstance(arguments.get("tool_name"), str):
        name = arguments["tool_name"]
        try:
            inner = json.loads(arguments.get("arguments") or "{}")
        except ValueError:
            inner = {}
        arguments = inner if isinstance(inner, dict) else {}
    output = answer[result.end() :]
    error = output.startswith("Error:\n")
    return [_Action(index, name, arguments, "", output, index + 1, error, open_file, cwd)]


#: Tool calls an assistant writes as JSON in its text, the tool's name under `cb_tool_name`
#: (Codebuff), and their results, each a `<tool_result>` element of the next user turn
#: holding `{toolName, toolCallId, output}`.
_JSON_CALL = re.compile(r"<codebuff_tool_call>\s*(\{.*?\})\s*</codebuff_tool_call>", re.DOTALL)
_JSON_RESULT = re.compile(r"<tool_result>\s*(\{.*?\})\s*</tool_result>", re.DOTALL)


def _json_tool_calls(
    index: int,
    message: Message,
    following: Message | None,
    open_file: str | None,
    cwd: str | None,
) -> list[_Action]:
    """The calls an assistant's text writes as JSON elements, each with the output of the
    first result of its tool in the next user turn (a command's `stdout`, with its
    `exitCode` said as an exit code)."""
    text = message_text(message)
    if "<codebuff_tool_call>" not in text:
        return []
    answer = message_text(following) if following is not None and following.role == "user" else ""
    outputs: list[tuple[str, Any]] = []
    for found in _JSON_RESULT.finditer(answer):
        value = json_object(found.group(1))
        if value is not None and isinstance(value.get("toolName"), str):
            outputs.append((value["toolName"], value.get("output")))
    actions = []
    for found in _JSON_CALL.finditer(text):
        value = json_object(found.group(1))
        if value is None or not isinstance(name := value.get("cb_tool_name"), str):
            continue
        arguments = {k: v for k, v in value.items() if not k.startswith("cb_")}
        result = next((o for o in outputs if o[0] == name), None)
        output = None
        if result is not None:
            outputs.remove(result)
            output = _result_text(result[1])
        at = index + 1 if output is not None else None
        actions.append(_Action(index, name, arguments, "", output, at, False, open_file, cwd))
    return actions


def _result_text(output: Any) -> str:
    """A JSON result's output as the text a tool shows: a command's output and its exit code,
    anything else as JSON."""
    if isinstance(output, str):
        return output
    stdout = output.get("stdout") if isinstance(output, dict) else None
    if isinstance(stdout, str):
        code = output.get("exitCode")
        return stdout + (f"\nexit code {code}" if isinstance(code, int) else "")
    return json.dumps(output, indent=2)


#: OpenHands CodeAct's actions written in the assistant's text, answered by an `OBSERVATION:`
#: user turn: a shell command in `<execute_bash>`, a Python cell in `<execute_ipython>` calling
#: the agent skills (`create_file(path)`, `edit_file_by_replace(path, …)`, `append_file`,
#: `insert_content_at_line`), whose first argument is the file they act on.
_CODEACT_BLOCK = re.compile(r"<(execute_bash|execute_ipython)>\n?(.*?)\n?</\1>", re.DOTALL)


def _codeact_actions(
    index: int,
    message: Message,
    following: Message | None,
    open_file: str | None,
    cwd: str | None,
) -> list[_Action]:
    """A CodeAct agent's actions in an assistant message the next one observes."""
    answer = message_text(following) if following is not None else ""
    if following is None or following.role != "user" or not answer.startswith("OBSERVATION:"):
        return []
    found: list[_Action] = []
    for block in _CODEACT_BLOCK.finditer(message_text(message)):
        kind, body = block.group(1), block.group(2)
        if kind == "execute_bash":
            arguments: dict[str, Any] = {"command": body}
            found.append(
                _Action(
                    index, "execute_bash", arguments, "", answer, index + 1, False, open_file, cwd
                )
            )
            continue
        try:
            tree = ast.parse(body)
        except SyntaxError:
            continue
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            first = node.args[0] if node.args else None
            if not isinstance(node.func, ast.Name) or not isinstance(first, ast.Constant):
                continue
            if isinstance(first.value, str) and node.func.id != "open_file":
                arguments = {"path": first.value}
                action = _Action(
                    index, node.func.id, arguments, "", answer, index + 1, False, open_file, cwd
                )
                found.append(action)
    return found


#: A markdown code block as AutoGen's executors extract them (`CODE_BLOCK_PATTERN`), and the
#: user proxy's answer to the blocks of a message (`exitcode: 0 (execution succeeded)`).
_MARKDOWN_BLOCK = re.compile(r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```", re.DOTALL)
_EXECUTED = re.compile(r"\A\s*exitcode: -?\d+ \(execution (?:succeeded|failed)\)\nCode output:")


def _executed_blocks(
    index: int,
    message: Message,
    following: Message | None,
    open_file: str | None,
    cwd: str | None,
) -> list[_Action]:
    """The code blocks of an assistant message that a code executor ran, as AutoGen's user
    proxy answers them (`exitcode: N (…)` then `Code output:`): each shell or Python block is
    a code-running call {language, code}; a block in another language was not run."""
    answer = message_text(following) if following is not None else ""
    if following is None or following.role not in ("user", "tool") or not _EXECUTED.match(answer):
        return []
    found: list[_Action] = []
    for block in _MARKDOWN_BLOCK.finditer(message_text(message)):
        language, code = (block.group(1) or "").lower(), block.group(2)
        if language in _SHELL_LANGUAGES | _PYTHON_LANGUAGES:
            arguments = {"language": language, "code": code}
            found.append(
                _Action(index, "execute", arguments, "", answer, index + 1, False, open_file, cwd)
            )
    return found


#: A fenced block whose info string names a tool, and the file it acts on (gptme's
#: ```save <path>, ```patch <path>; ```shell names no file): the message's last block.
_TOOL_BLOCK = re.compile(r"```([\w-]+)(?:[ \t]+(\S+))?[ \t]*\n(.*?)\n```[ \t]*\Z", re.DOTALL)


def _answered_block(
    index: int,
    message: Message,
    following: Message | None,
    open_file: str | None,
    cwd: str | None,
) -> list[_Action]:
    """The tool block an assistant message ends on, when the next message is the tool's
    answer wrapped as the system's (gptme: `<system>…</system>` in a user turn): a call of
    the block's tool, a shell block's code its command, a named file its path."""
    answer = message_text(following) if following is not None else ""
    if following is None or following.role != "user" or not answer.lstrip().startswith("<system>"):
        return []
    block = _TOOL_BLOCK.search(message_text(message).rstrip())
    if block is None:
        return []
    tool, path, body = block.group(1).lower(), block.group(2), block.group(3)
    if tool in _SHELL_LANGUAGES:
        arguments: dict[str, Any] = {"command": body.strip()}
    elif path:
        arguments = {"path": path}
    else:
        return []
    return [_Action(index, tool, arguments, "", answer, index + 1, False, open_file, cwd)]


_SEARCH = "<<<<<<< SEARCH"
_DIVIDER = "======="
_FENCE_LINE = re.compile(r"^```[\w+-]*$")


def _search_replace_edits(text: str) -> list[tuple[str, _FileOp]]:
    """Files an aider-style reply edits with SEARCH/REPLACE blocks: the file name stands on the
    line before the block's fence (or right before `<<<<<<< SEARCH`); an empty SEARCH part
    writes the file whole."""
    lines = [ln.strip() for ln in text.replace("\r", "").split("\n")]
    edits: list[tuple[str, _FileOp]] = []
    for k, line in enumerate(lines):
        if line != _SEARCH:
            continue
        j = k - 1
        if j >= 0 and _FENCE_LINE.match(lines[j]):
            j -= 1
        name = lines[j].strip("`*: ") if j >= 0 else ""
        if not name or " " in name or name.startswith("```"):
            continue
        empty = k + 1 < len(lines) and lines[k + 1] == _DIVIDER
        edits.append((name, "written" if empty else "modified"))
    return edits


def _traj_action(message: Message) -> str | None:
    fields = message.provider_data.get("traj.fields")
    if isinstance(fields, Mapping):
        action = fields.get("action")
        if isinstance(action, str) and action.strip():
            return action.strip()
    return None


def _name_words(name: str) -> set[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return {w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w}


def _normalize_path(raw: str, cwd: str | None) -> str | None:
    path = raw.strip().strip("'\"`")
    if "\\" in path:
        # A Windows path: its backslashes change under JSON escaping, so the file is named
        # by its last component, the part a probe can find either way.
        path = path.rsplit("\\", 1)[-1]
    if path.startswith("./"):
        path = path[2:]
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1 :]
    if (
        not path
        or path in ("n/a", ".", "..")
        or path.startswith(("/dev/", "-", "&"))
        or any(c in path for c in " *?$`{}")
    ):
        return None
    return path


def _tool_path(arguments: Mapping[str, Any]) -> str | None:
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


#: Argument keys that name several files, each one acted on alike (Augment's `remove-files`).
_PATH_LIST_KEYS = ("file_paths",)


def _tool_paths(arguments: Mapping[str, Any]) -> list[str]:
    """The files an argument list names, when it names them in a list of paths."""
    for key in _PATH_LIST_KEYS:
        value = arguments.get(key)
        if isinstance(value, list):
            return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _named_path(action: _Action) -> str | None:
    """The file an action names (to read, open or change it), if it names one."""
    if action.text:
        argv = action.text.split()
        return argv[1] if action.name in ("open", "create") and len(argv) > 1 else None
    return _tool_path(action.arguments)


#: Lists of file items an edit tool may carry instead of one path argument, and what each does
#: to the file its item names: Warp's `edit_files` (its protocol's ApplyFileDiffs).
_FILE_ITEM_LISTS: Mapping[str, _FileOp] = {
    "diffs": "modified",
    "new_files": "written",
    "deleted_files": "deleted",
}


def _listed_file_ops(arguments: Mapping[str, Any]) -> list[tuple[str, _FileOp]]:
    """Files named by the items of an edit tool's file lists, with what each item does."""
    found: list[tuple[str, _FileOp]] = []
    for key, op in _FILE_ITEM_LISTS.items():
        items = arguments.get(key)
        if not isinstance(items, list):
            continue
        for item in items:
            path = _tool_path(item) if isinstance(item, Mapping) else None
            if path is not None and (path, op) not in found:
                found.append((path, op))
    return found


_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_PATCH_OPS: Mapping[str, _FileOp] = {"Add": "created", "Update": "modified", "Delete": "deleted"}


def _file_ops(action: _Action) -> list[tuple[str, _FileOp]]:
    """Files the action changed, with what it did, as the agent or environment named them."""
    command = action.command
    if command is not None:
        return _shell_file_ops(command)
    python = action.code("python")
    if python is not None:
        return _python_file_ops(python)
    rejected = action.output_error or (
        action.output is not None and any(r in action.output.lower() for r in _EDIT_REJECTED)
    )
    if action.text:
        argv = action.text.split()
        if action.name == "create" and len(argv) > 1:
            return [(argv[1], "written")]
        if action.name in _EDIT_OPEN_FILE and action.open_file and not rejected:
            return [(action.open_file, "modified")]
        if action.name == "str_replace_editor" and len(argv) > 2:
            op = _EDITOR_COMMANDS.get(argv[1])
            return [(argv[2], op)] if op and not rejected else []
        return []
    name = action.name
    path = _tool_path(action.arguments)
    if rejected:
        return []
    sub = action.arguments.get("command")
    if isinstance(sub, str) and path is not None:
        # An editor-style tool: its operation decides (`view` changes nothing), not its name.
        op = _EDITOR_COMMANDS.get(sub.strip().lower())
        return [(path, op)] if op is not None else []
    operation = action.arguments.get("operation")
    if isinstance(operation, str) and path is not None:
        # A file tool naming its operation (Nanocoder's `file_op` {operation, path,
        # destination}): a move deletes its path and creates its destination.
        operation = operation.strip().lower()
        destination = action.arguments.get("destination")
        moved: list[tuple[str, _FileOp]] = (
            [(destination, "created")] if isinstance(destination, str) and destination else []
        )
        if operation in ("move", "rename"):
            return [(path, "deleted"), *moved]
        if operation == "copy":
            return moved
        op = _EDITOR_COMMANDS.get(operation)
        return [(path, op)] if op is not None else []
    if name.lower() in _DIFF_TOOLS and path is not None:
        return [(path, "modified")]
    words = _name_words(name)
    if "patch" in words and path is None:
        text = next((v for v in action.arguments.values() if isinstance(v, str)), "")
        return [(m.group(2).strip(), _PATCH_OPS[m.group(1)]) for m in _PATCH_FILE.finditer(text)]
    if path is None and (listed := _listed_file_ops(action.arguments)):
        return listed
    for vocabulary, op in _NAME_WORDS:
        if words & vocabulary:
            if path is not None:
                return [(path, op)]
            if named := _tool_paths(action.arguments):
                return [(p, op) for p in named]
            if name.lower() in _EDIT_OPEN_FILE and action.open_file:
                return [(action.open_file, "modified")]
            return []
    return []


# -- shell commands --


_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")


def _without_heredocs(command: str) -> str:
    """The command with here-document bodies removed: they are data, not commands."""
    lines = command.split("\n")
    kept: list[str] = []
    closing: str | None = None
    for line in lines:
        if closing is not None:
            if line.strip() == closing:
                closing = None
            continue
        kept.append(line)
        found = _HEREDOC.search(line)
        if found:
            closing = found.group(2)
    return "\n".join(kept)


_OPERATORS = (
    "&&",
    "||",
    ";;",
    "|&",
    "&>>",
    "&>",
    ">>",
    ">|",
    ">&",
    "<<<",
    "<<",
    "<&",
    ">",
    "<",
    ";",
    "&",
    "|",
    "(",
    ")",
    "\n",
)


def _shell_words(command: str) -> list[str]:
    """Shell words, quotes resolved, with operators (`;`, `&&`, `|`, `>`, `2>` …) as words of
    their own and unquoted newlines as `;`. Never fails: an unclosed quote runs to the end."""
    words: list[str] = []
    buf: list[str] = []
    quoted = False  # the word had quotes: `''` is a word, and `'2'>` redirects no stream
    quote: str | None = None
    i, n = 0, len(command)

    def flush() -> None:
        nonlocal quoted
        if buf or quoted:
            words.append("".join(buf))
        buf.clear()
        quoted = False

    while i < n:
        c = command[i]
        if quote == "'":
            if c == "'":
                quote = None
            else:
                buf.append(c)
        elif quote == '"':
            if c == '"':
                quote = None
            elif c == "\\" and i + 1 < n and command[i + 1] in '"\\$`':
                buf.append(command[i + 1])
                i += 1
            else:
                buf.append(c)
        elif c in "'\"":
            quote, quoted = c, True
        elif c == "\\" and i + 1 < n:
            if command[i + 1] != "\n":
                buf.append(command[i + 1])
            i += 1
        elif c == "#" and not buf and not quoted:
            while i < n and command[i] != "\n":
                i += 1
            continue
        elif c in ";&|<>()\n":
            digits = "".join(buf)
            fd = digits if c in "<>" and digits.isdigit() and not quoted else ""
            if fd:
                buf.clear()
            else:
                flush()
            op = next(o for o in _OPERATORS if command.startswith(o, i))
            words.append(";" if op == "\n" else fd + op)
            i += len(op)
            continue
        elif c.isspace():
            flush()
        else:
            buf.append(c)
        i += 1
    flush()
    return words


_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_REDIRECT = re.compile(r"^(\d*)(>>?|>\||&>>?|<<?<?|<&|>&)$")


def _simple_commands(command: str) -> Iterator[tuple[list[str], list[str]]]:
    """(argv, files written by redirecting standard output) of each simple command."""
    argv: list[str] = []
    written: list[str] = []
    words = _shell_words(_without_heredocs(command))
    i = 0
    while i < len(words):
        word = words[i]
        redirect = _REDIRECT.match(word)
        if word in _SEPARATORS:
            if argv or written:
                yield argv, written
            argv, written = [], []
        elif redirect:
            fd, op = redirect.groups()
            target = words[i + 1] if i + 1 < len(words) else ""
            stdout = (fd in ("", "1") and op in (">", ">>", ">|")) or op in ("&>", "&>>")
            if stdout and target and target not in _SEPARATORS:
                written.append(target)
            i += 1
        else:
            argv.append(word)
        i += 1
    if argv or written:
        yield argv, written


def _operands(args: Sequence[str], *, takes_value: frozenset[str] = frozenset()) -> list[str]:
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-") and len(arg) > 1:
            skip = arg in takes_value
            continue
        out.append(arg)
    return out


def _shell_file_ops(command: str) -> list[tuple[str, _FileOp]]:
    ops: list[tuple[str, _FileOp]] = []
    for words, written in _simple_commands(command):
        ops.extend((target, "written") for target in written)
        # Environment assignments and sudo come before the program.
        start = 0
        while start < len(words) and (
            ("=" in words[start] and not words[start].startswith("=")) or words[start] == "sudo"
        ):
            start += 1
        argv = words[start:]
        if not argv:
            continue
        program = argv[0].rsplit("/", 1)[-1]
        args = argv[1:]
        if program == "git" and args and args[0] in ("rm", "mv"):
            program, args = args[0], args[1:]
        if program == "sed" and any(a.startswith(("-i", "--in-place")) for a in args):
            explicit = any(a in ("-e", "-f", "--expression", "--file") for a in args)
            files = _operands(args, takes_value=frozenset({"-e", "-f", "--expression", "--file"}))
            ops.extend((f, "modified") for f in (files if explicit else files[1:]))
        elif program == "perl" and any(re.match(r"^-\w*i", a) for a in args):
            ops.extend((f, "modified") for f in _operands(args, takes_value=frozenset({"-e"})))
        elif program == "tee":
            ops.extend((f, "written") for f in _operands(args))
        elif program == "touch":
            ops.extend((f, "created") for f in _operands(args))
        elif program == "rm":
            ops.extend((f, "deleted") for f in _operands(args))
        elif program in ("mv", "cp"):
            files = _operands(args, takes_value=frozenset({"-t", "-S"}))
            if len(files) == 2 and not files[1].endswith("/"):
                if program == "mv":
                    ops.append((files[0], "deleted"))
                ops.append((files[1], "written"))
    return ops


# -- Python code --

#: Calls whose first literal-string argument is a file they delete, and those moving the file
#: of their first to their second.
_PY_DELETES = frozenset({"os.remove", "os.unlink", "remove", "unlink"})
_PY_MOVES = frozenset({"shutil.move", "os.rename", "os.replace", "move", "rename"})
_PY_COPIES = frozenset({"shutil.copy", "shutil.copyfile", "shutil.copy2", "copyfile", "copy2"})
#: `Path(p).<method>(…)`: what each method does to the file p.
_PATH_METHODS: Mapping[str, _FileOp] = {
    "write_text": "written",
    "write_bytes": "written",
    "touch": "created",
    "unlink": "deleted",
}


_PATH_READS = frozenset({"read_text", "read_bytes", "open"})


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


class _PythonPaths:
    """The literal paths of Python code: string literals, names bound once to a literal or
    to `Path(literal)`, and `Path(…)` of either."""

    def __init__(self, tree: ast.Module) -> None:
        bound: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        self._bound = {name: values[0] for name, values in bound.items() if len(values) == 1}

    def path(self, node: ast.expr | None, depth: int = 0) -> str | None:
        if node is None or depth > 4:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in self._bound:
            return self.path(self._bound[node.id], depth + 1)
        if isinstance(node, ast.Call) and _dotted(node.func).endswith("Path") and node.args:
            return self.path(node.args[0], depth + 1)
        return None


def _open_op(call: ast.Call, mode_at: int = 1) -> _FileOp | None:
    """What `open(path, mode)` (`Path(path).open(mode)`: `mode_at` 0) does to its file:
    `w`/`x` write it whole, `a`/`+` change it, reading changes nothing (None)."""
    mode_node = call.args[mode_at] if len(call.args) > mode_at else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode_node = keyword.value
    mode = "r"
    if isinstance(mode_node, ast.Constant) and isinstance(mode_node.value, str):
        mode = mode_node.value
    if "w" in mode or "x" in mode:
        return "written"
    return "modified" if "a" in mode or "+" in mode else None


def _python_file_ops(code: str) -> list[tuple[str, _FileOp]]:
    """Files Python code changes through calls naming them (`_PythonPaths`), in the order of
    the code; a file the code read before writing it whole is modified. Code that does not
    parse changes nothing the ruler can name."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    paths = _PythonPaths(tree)
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)),
                   key=lambda n: (n.lineno, n.col_offset))  # fmt: skip
    events: list[tuple[str, _FileOp | None]] = []  # (path, what the call did; None: read it)
    for node in calls:
        name = _dotted(node.func)
        first = paths.path(node.args[0]) if node.args else None
        second = paths.path(node.args[1]) if len(node.args) > 1 else None
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        owner = paths.path(node.func.value) if isinstance(node.func, ast.Attribute) else None
        if owner and method in _PATH_METHODS:
            events.append((owner, _PATH_METHODS[method]))
        elif owner and method in _PATH_READS:
            events.append((owner, _open_op(node, 0) if method == "open" else None))
        elif name in ("open", "io.open", "codecs.open") and first:
            events.append((first, _open_op(node)))
        elif name in _PY_DELETES and first:
            events.append((first, "deleted"))
        elif name in _PY_MOVES | _PY_COPIES and first and second and not second.endswith("/"):
            if name in _PY_MOVES:
                events.append((first, "deleted"))
            events.append((second, "written"))
    ops: list[tuple[str, _FileOp]] = []
    read: set[str] = set()
    for path, op in events:
        if op is None:
            read.add(path)
        else:
            ops.append((path, "modified" if op == "written" and path in read else op))
    return ops


# -- tests --

_PYTEST_SHORT = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - .*)?$")
_PYTEST_VERBOSE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|ERROR|XPASS)\b")
_UNITTEST_FAIL = re.compile(r"^(?:FAIL|ERROR): (\w+ \([\w.]+\))")
_UNITTEST_OK = re.compile(r"^(\w+ \([\w.]+\)) \.\.\. ok\b")
_PYTEST_SUMMARY = re.compile(r"^=+ (.*\b(?:passed|failed|errors?|no tests ran)\b.*) =+$")
_UNITTEST_RAN = re.compile(r"^Ran \d+ tests? in ")
_RUN_FAILURES = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b")
_TEST_PATH = re.compile(r"(?:^|[\s/])(?:test_\w+|\w+_test)\.py\b|::|\btests?/")


def _output_lines(text: str) -> list[str]:
    """Lines of a tool output, looking inside a JSON wrapper (`{"stdout": …}`) when there is one."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            text = "\n".join(v for v in data.values() if isinstance(v, str))
    return [line.rstrip("\r").strip() for line in text.split("\n")]


@dataclass
class _TestState:
    failing: dict[str, int] = field(default_factory=dict)  # id → order of its last failure
    resolved: dict[str, int] = field(default_factory=dict)
    where: dict[str, list[int]] = field(default_factory=dict)  # id → message indices
    order: int = 0

    def fail(self, test: str, index: int) -> None:
        self.order += 1
        self.failing[test] = self.order
        self.resolved.pop(test, None)
        self.where.setdefault(test, []).append(index)

    def passed(self, test: str) -> None:
        if test in self.failing:
            self.resolved[test] = self.failing.pop(test)


def _test_runs(actions: Sequence[_Action]) -> _TestState:
    state = _TestState()
    for action in actions:
        if action.output is None or action.output_index is None:
            continue
        failed_here = False
        summary_seen = False
        for line in _output_lines(action.output):
            short = _PYTEST_SHORT.match(line)
            verbose = _PYTEST_VERBOSE.match(line)
            unittest_fail = _UNITTEST_FAIL.match(line)
            unittest_ok = _UNITTEST_OK.match(line)
            if short and ("::" in short.group(2) or short.group(2).endswith(".py")):
                state.fail(short.group(2), action.output_index)
                failed_here = True
            elif verbose:
                if verbose.group(2) in ("FAILED", "ERROR"):
                    state.fail(verbose.group(1), action.output_index)
                    failed_here = True
                else:
                    state.passed(verbose.group(1))
            elif unittest_fail:
                state.fail(unittest_fail.group(1), action.output_index)
                failed_here = True
            elif unittest_ok:
                state.passed(unittest_ok.group(1))
            elif _PYTEST_SUMMARY.match(line) or _UNITTEST_RAN.match(line):
                summary_seen = True
            elif line.startswith("FAILED ("):  # unittest's verdict
                failed_here = True
        if summary_seen and not failed_here and not _RUN_FAILURES.search(action.output):
            _clear_covered(state, action.command or action.text)
    return state


def _clear_covered(state: _TestState, command: str) -> None:
    """A run without failures: the failing tests it evidently ran are passing now."""
    names_tests = bool(_TEST_PATH.search(command))
    for test in list(state.failing):
        test_file = test.split("::", 1)[0]
        if not names_tests or (test_file and test_file in command):
            state.passed(test)


# -- diffs --

_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def _diff_files(diff: str) -> list[tuple[str, FileState]]:
    diff = diff.replace("\r", "")
    headers = list(_DIFF_HEADER.finditer(diff))
    files: list[tuple[str, FileState]] = []
    for k, header in enumerate(headers):
        end = headers[k + 1].start() if k + 1 < len(headers) else len(diff)
        body = diff[header.end() : end]
        if "\nnew file mode" in body or "\n--- /dev/null" in body:
            files.append((header.group(2), "created"))
        elif "\ndeleted file mode" in body or "\n+++ /dev/null" in body:
            files.append((header.group(1), "deleted"))
        else:
            files.append((header.group(2), "modified"))
    return files


def _final_diff(conversation: Conversation, actions: Sequence[_Action]) -> tuple[str, int] | None:
    """The final diff's text and the message it was read from (-1: the trajectory's info)."""
    fields = conversation.provider_data.get("traj.fields")
    if isinstance(fields, Mapping):
        info = fields.get("info")
        if isinstance(info, Mapping):
            submission = info.get("submission")
            if isinstance(submission, str) and _DIFF_HEADER.search(submission.replace("\r", "")):
                return submission, -1
    for action in reversed(actions):
        if (
            action.output is not None
            and action.output_index is not None
            and _DIFF_HEADER.search(action.output.replace("\r", ""))
        ):
            return action.output, action.output_index
    return None


# -- probes --

_UNSAFE = re.compile(r"[\"\\\x00-\x1f\x7f-\U0010ffff]+")
_MAX_PROBE_LINE = 160


def _probe_pieces(text: str) -> tuple[str, ...]:
    """The parts of `text`'s first line that survive JSON escaping unchanged."""
    line = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    line = line[:_MAX_PROBE_LINE]
    pieces = [p.strip() for p in _UNSAFE.split(line)]
    return tuple(p for p in pieces if len(p) >= 2 and re.search(r"[A-Za-z0-9]", p))


def _is_safe(probe: str) -> bool:
    return len(probe) >= 2 and _UNSAFE.search(probe) is None and probe == probe.strip()


@dataclass
class _FileRecord:
    state: FileState
    where: list[int]
    created_here: bool = False
    in_diff: bool = False


def _apply(
    records: dict[str, _FileRecord], path: str, op: _FileOp, index: int, known: bool
) -> None:
    record = records.get(path)
    if record is None:
        state: FileState = ("modified" if known else "created") if op == "written" else op
        records[path] = _FileRecord(state, [index], created_here=state == "created")
        return
    record.where.append(index)
    if op == "deleted":
        record.state = "deleted"
    elif record.state == "deleted" and op in ("created", "written"):
        record.state = "created"
        record.created_here = True


def extract_probes(conversation: Conversation) -> list[Fact]:
    """Facts read off a raw session: files changed, commands run, the last failing test, the
    final diff's files (rules in the module docstring). Deterministic; every probe string is a
    substring of `session_text(conversation)`; every fact is uncued."""
    messages = conversation.messages
    texts = [message_text(m) for m in messages]
    folded = [t.casefold() for t in texts]
    sizes = [len(t) for t in texts]
    pinned = "\n".join(f for m, f in zip(messages, folded, strict=True) if m.role == "system")
    actions = _actions(conversation)

    records: dict[str, _FileRecord] = {}
    named: set[str] = set()  # paths earlier actions named
    shown: list[str] = []  # earlier tool outputs, folded
    for action in actions:
        for raw, op in _file_ops(action):
            path = _normalize_path(raw, action.cwd)
            if path is None:
                continue
            known = op == "written" and (
                path in named or any(path.casefold() in out for out in shown)
            )
            _apply(records, path, op, action.index, known)
        mentioned = _named_path(action)
        if mentioned is not None:
            normalized = _normalize_path(mentioned, action.cwd)
            if normalized:
                named.add(normalized)
        if action.output:
            shown.append(action.output.casefold())
    for index, message in enumerate(messages):
        if message.role != "assistant" or message.tool_calls or _SEARCH not in texts[index]:
            continue
        for raw, op in _search_replace_edits(texts[index]):
            path = _normalize_path(raw, None)
            if path is not None:
                known = path in named or any(path.casefold() in t for t in folded[:index])
                _apply(records, path, op, index, op == "written" and known)

    diff = _final_diff(conversation, actions)
    if diff is not None:
        text, index = diff
        for path, state in _diff_files(text):
            record = records.get(path)
            if record is None:
                needle = path.casefold()
                hits = [index] if index >= 0 else [i for i, t in enumerate(folded) if needle in t]
                record = records[path] = _FileRecord(state, hits or [len(messages) - 1])
            record.state = state
            record.in_diff = True

    candidates: list[Candidate] = []
    for path, record in records.items():
        note = ""
        if record.state == "deleted" and record.created_here:
            note = " (a file it had created itself)"
        if record.in_diff:
            note += "; the final diff includes it"
        category = cast(FactCategory, f"file_{record.state}")
        text = f"The agent {record.state} {path}{note}."
        candidates.append(Candidate(category, text, (path,), tuple(record.where), True))

    commands: dict[tuple[str, ...], list[int]] = {}
    first_lines: dict[tuple[str, ...], str] = {}
    for action in actions:
        command = action.command
        if command is None:
            continue
        pieces = _probe_pieces(command)
        if sum(len(p) for p in pieces) < 4:
            continue
        commands.setdefault(pieces, []).append(action.index)
        first_lines.setdefault(pieces, command.strip().split("\n", 1)[0])
    for pieces, ran_at in commands.items():
        text = f"The agent ran `{first_lines[pieces]}`."
        candidates.append(Candidate("command", text, pieces, tuple(ran_at), True))

    tests = _test_runs(actions)
    if tests.failing:
        last = max(tests.failing, key=tests.failing.__getitem__)
        text = f"The test {last} is failing and has not passed since."
        candidates.append(Candidate("error_open", text, (last,), tuple(tests.where[last]), True))
    elif tests.resolved:
        last = max(tests.resolved, key=tests.resolved.__getitem__)
        text = f"The test {last} failed, then passed again."
        fixed_at = tuple(tests.where[last])
        candidates.append(Candidate("error_resolved", text, (last,), fixed_at, False))
    candidates.extend(state_candidates(messages, texts, [_tool_run(a) for a in actions]))

    facts: list[Fact] = []
    counters: dict[str, int] = {}
    probed: set[tuple[str, ...]] = set()
    for candidate in candidates:
        category, probe, where = candidate.category, candidate.probe, candidate.where
        required = candidate.required
        if not probe or not all(_is_safe(p) for p in probe):
            continue  # a path or test id that JSON escaping would change
        needles = [p.casefold() for p in probe]
        if not all(any(n in t for t in folded) for n in needles):
            continue  # the session never shows it in a form a probe can find
        if all(n in pinned for n in needles):
            continue  # already in a system message, which no strategy drops
        if tuple(needles) in probed:
            continue  # one fact per probe: an error line that is also a failing test's id
        probed.add(tuple(needles))
        prefix = candidate.id_prefix or category.split("_", 1)[0]
        counters[prefix] = counters.get(prefix, 0) + 1
        first = min(where) if where else len(messages) - 1
        facts.append(
            Fact(
                id=f"{prefix}-{counters[prefix]}",
                category=category,
                text=candidate.text,
                probe=probe,
                depth=_depth_of(sizes, first),
                cued=False,
                critical=required and category in REQUIRED_CATEGORIES,
                required=required,
                stale=tuple(s for s in candidate.stale if _is_safe(s)),
                planted_in=tuple(sorted(set(where))),
            )
        )
    return facts


def _tool_run(action: _Action) -> ToolRun:
    mentioned = _named_path(action)
    return ToolRun(
        index=action.index,
        name=action.name,
        arguments=action.arguments,
        command=action.command,
        output=action.output,
        output_index=action.output_index,
        output_error=action.output_error,
        path=_normalize_path(mentioned, action.cwd) if mentioned else None,
    )
