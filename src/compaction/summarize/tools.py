"""What each known agent tool means: one table, as data.

A tool call is a name and its arguments; what it *did* depends on the agent that sent it.
`TOOLS` says, per tool name and agent, what kind of action the call is (a file read, created,
modified, written whole or deleted; a command run; a search; a to-do list update; a final
answer; a delegated task), and in which argument the path, command, patch or to-do list sits.
`actions_of_call` reads a call through that table into `Action`s; tools the table does not
know fall back to argument-name rules (`path`, `file_path`, `command`, …) and words of their
name (`read`, `write`, `edit`, …). Agents without tool calls write their actions in prose:
`actions_in_text` reads aider's SEARCH/REPLACE blocks, diffs, and the fenced or tagged action
of mini-SWE-agent and SWE-agent; `text_calls` and `text_result` read the calls Codebuff writes
as JSON in its reply, and their results. `command_exit_status` reads the exit status a known tool's
result states in its own shape.

Beside those: `meaning_of` (the merged row for a name), `command_text` and `command_actions`
(a command argument as text, and what running it touched), `todo_id_in_result` (the id a
`TaskCreate` result gives), `todos_in_result` (the whole list a to-do tool's result states),
`user_reply_in` (the user's words a tool's result carries: feedback, a denial),
`EXIT_STATUS_SHAPES` and the `FALLBACK_*` / `NAME_WORD_OPS` rules.

The names and argument names come from the agents' public sources: Claude Code's tool
documentation, openai/codex `codex-rs/core/src/tools/spec.rs`, sst/opencode
`packages/opencode/src/tool/*.ts`, cline `apps/vscode/src/shared/tools.ts` and
`sdk/packages/core/src/extensions/tools/`, Roo-Code
`src/core/prompts/tools/native-tools/`, OpenHands `agenthub/codeact_agent/tools/`, SWE-agent
`tools/*/config.yaml`, mini-SWE-agent `config/*.yaml`, gemini-cli
`packages/core/src/tools/definitions/base-declarations.ts`, block/goose
`crates/goose-mcp/src/developer/` and `crates/goose/src/agents/platform_extensions/todo.rs`,
microsoft/vscode-copilot-chat `src/extension/tools/common/toolNames.ts`, aws/amazon-q-developer-cli
`crates/chat-cli/src/cli/chat/tools/todo.rs`, the MCP filesystem and sequential-thinking
servers, bytedance/trae-agent `trae_agent/tools/`, badlogic/pi-mono
`packages/coding-agent/src/core/tools/` and CodebuffAI/codebuff
`common/src/tools/params/tool/` and `common/src/util/messages.ts`.

Everything here is a pure, deterministic function of names, argument values and strings.
This module must never read a wire format, see a message, count tokens or call a model.
"""

from __future__ import annotations

import ast
import builtins
import functools
import json
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple, cast

from compaction._textcache import text_cache
from compaction.messages import json_object
from compaction.summarize.signals import file_ops_of_command, looks_like_path, name_words

FileOp = Literal["read", "created", "modified", "written", "deleted"]
"""What a call did to a file. `written` means written whole: created if the file was unseen,
modified otherwise (the tool alone cannot tell which)."""

#: `removed`: an item a whole list stated later left out (what became of it is not said).
TodoStatus = Literal["pending", "in_progress", "completed", "cancelled", "removed"]

ActionKind = Literal[
    "file",
    "command",
    "search",
    "todos",
    "todo",
    "plan",
    "final",
    "delegate",
    "thought",
    "message",
    "ask",
    "memory",
]
"""`file`: a file was read or changed. `command`: a command ran. `search`: a search or a
listing. `todos`: the whole to-do list as the tool states it now (it replaces the previous
one). `todo`: one to-do item created or updated (Claude Code's `TaskCreate`/`TaskUpdate`),
merged into the list by `Todo.id`. `plan`: a plan the agent put forward (`ExitPlanMode`).
`final`: the agent's final answer. `delegate`: a task handed to a sub-agent. `thought`: the
agent's own reasoning, written through a thinking tool: read as its prose. `message`: what
the agent says to the user through a tool (Letta's `send_message`): its prose too. `ask`: a
question to the user, whose answer comes back as the call's result (`answer_of`). `memory`:
text the agent wrote into its own memory (Letta's memory blocks): a checklist line in it
is a to-do item, created or changed."""

RowKind = Literal[ActionKind, "patch", "none"]
"""A table row's kind: an `ActionKind`, or `patch` (the files named in a patch argument), or
`none` (a known tool with no effect on files, commands or plans: it must not fall back)."""


@dataclass(frozen=True, slots=True)
class Todo:
    """One to-do item. `id` is the tool's own item id where it has one; a `todo` update may
    leave `text` empty, meaning "unchanged"."""

    text: str
    status: TodoStatus
    id: str | None = None
    # The list's own word for how a cancelled item ended ("dropped", "skipped"), if it said one.
    word: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a tool call (or a prose action) did.

    - `file`: `path` and `op`. `path` is None for an editor command acting on the file the
      environment has open (SWE-agent's `edit`/`insert`): the caller knows which one that is.
    - `command`: `command`, the command line as text (argv lists joined shell-style, a
      `bash -lc SCRIPT` wrapper unwrapped to SCRIPT). The files a command evidently touched
      follow it as `file` actions.
    - `search`: `text` is the pattern or query (may be None for a listing); `path` is where it
      searched, if given — a place, not a file touched.
    - `todos`: `todos` is the whole list; `todo`: `todos` holds the one item updated.
    - `plan`, `final`, `delegate`: `text`.
    """

    kind: ActionKind
    path: str | None = None
    op: FileOp | None = None
    command: str | None = None
    todos: tuple[Todo, ...] = ()
    text: str | None = None


@dataclass(frozen=True)
class TodoShape:
    """How a tool writes its to-do items.

    `items`: a list of objects; the text is under the first of `text_keys` present, the
    status under `status_key`, the id under `id_key`. `checklist`: one markdown checklist
    string (`- [x] done`, `[ ] pending`, `[-] in progress`).
    """

    format: Literal["items", "checklist"] = "items"
    text_keys: tuple[str, ...] = ("content",)
    status_key: str = "status"
    id_key: str | None = "id"


@dataclass(frozen=True)
class ToolMeaning:
    """One row of the table: what the tool `names` mean when sent by `agents`.

    Keys are tried in order and the first present wins (several are listed where agents or
    versions differ: Cline's `path` and `absolutePath`). A path argument holding a list
    names several files.
    """

    names: tuple[str, ...]
    kind: RowKind
    agents: tuple[str, ...]
    op: FileOp | None = None
    path_keys: tuple[str, ...] = ()
    command_keys: tuple[str, ...] = ()
    patch_keys: tuple[str, ...] = ()
    text_keys: tuple[str, ...] = ()
    todos_key: str | None = None
    todo_shape: TodoShape | None = None
    # An editor that names its operation in an argument (`str_replace_editor`'s `command`):
    # each sub-command's file op; a sub-command mapped to None touches no file.
    subcommand_key: str | None = None
    subcommand_ops: tuple[tuple[str, FileOp | None], ...] = ()
    # Sub-commands that state the to-do list (OpenHands' `task_tracker` `plan`).
    todos_subcommands: tuple[str, ...] = ()
    # (source, destination) keys of a move: the source is deleted, the destination created.
    move_keys: tuple[str, str] | None = None
    # An editor command that acts on the open file when no path argument is given.
    acts_on_open_file: bool = False
    # An editor that writes the file whole unless one of these arguments is given (then it
    # edits part of it): Cline's `editor` creates a missing file from `new_text`.
    partial_edit_keys: tuple[str, ...] = ()
    # The command argument holds a list of separate commands (each a string, or an object
    # with `command` and `args`), not one argv.
    command_list: bool = False
    # A call with one of these arguments true only previews its change (the MCP filesystem
    # server's `edit_file` `dryRun`): it touches nothing.
    dry_run_keys: tuple[str, ...] = ()
    # The positional signature of a command written as text (SWE-agent without function
    # calling: `open "<path>" [<line_number>]`), naming each position's argument.
    positional: tuple[str, ...] | None = None
    # A tool that reads the later output of a command sent to the background (Claude Code's
    # `BashOutput`): the arguments naming that command's id (`background_id`).
    poll_keys: tuple[str, ...] = ()


_ITEMS = TodoShape()
_CHECKLIST = TodoShape(format="checklist")
_EDITOR_OPS: tuple[tuple[str, FileOp | None], ...] = (
    ("view", "read"),
    ("create", "created"),
    ("str_replace", "modified"),
    ("insert", "modified"),
    ("undo_edit", "modified"),
)
# Goose's editor writes a file whole with `write` (no `create`).
_GOOSE_EDITOR_OPS: tuple[tuple[str, FileOp | None], ...] = (*_EDITOR_OPS, ("write", "written"))
_SEARCH_TEXT = ("pattern", "regex", "query", "search_term", "file_name", "search")
_CC = ("claude-code",)
_CODEX = ("codex",)
_OPENCODE = ("opencode",)
_CLINE = ("cline",)
_ROO = ("roo-code",)
_CLINE_ROO = ("cline", "roo-code")
_OPENHANDS = ("openhands",)
_SWE = ("swe-agent",)
_GEMINI = ("gemini-cli",)
_GOOSE = ("goose",)
_COPILOT = ("copilot",)
_MCP_FS = ("mcp-filesystem",)
_OPENMANUS = ("openmanus",)
_CODEBUFF = ("codebuff",)
_PI = ("pi",)


def _file(
    names: str | tuple[str, ...], agents: tuple[str, ...], op: FileOp, *keys: str
) -> ToolMeaning:
    return ToolMeaning(_names(names), "file", agents, op=op, path_keys=keys)


def _command(names: str | tuple[str, ...], agents: tuple[str, ...], *keys: str) -> ToolMeaning:
    return ToolMeaning(_names(names), "command", agents, command_keys=keys)


def _search(names: str | tuple[str, ...], agents: tuple[str, ...], *path_keys: str) -> ToolMeaning:
    return ToolMeaning(_names(names), "search", agents, path_keys=path_keys, text_keys=_SEARCH_TEXT)


def _none(names: str | tuple[str, ...], agents: tuple[str, ...]) -> ToolMeaning:
    return ToolMeaning(_names(names), "none", agents)


def _names(names: str | tuple[str, ...]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else names


TOOLS: tuple[ToolMeaning, ...] = (
    # --- Claude Code (code.claude.com/docs/en/tools-reference; MultiEdit, LS, NotebookRead and
    # TodoRead from earlier versions)
    _command("Bash", _CC, "command"),
    _file("Read", _CC, "read", "file_path"),
    _file(("Edit", "MultiEdit"), _CC, "modified", "file_path"),
    _file("Write", _CC, "written", "file_path"),
    _file("NotebookEdit", _CC, "modified", "notebook_path"),
    _file("NotebookRead", _CC, "read", "notebook_path"),
    _search(("Grep", "Glob", "LS"), _CC, "path"),
    ToolMeaning(("TodoWrite",), "todos", _CC, todos_key="todos", todo_shape=_ITEMS),
    ToolMeaning(("TaskCreate",), "todo", _CC, text_keys=("subject", "description")),
    ToolMeaning(("TaskUpdate",), "todo", _CC, text_keys=("subject",)),
    ToolMeaning(("Task", "Agent"), "delegate", _CC, text_keys=("description", "prompt")),
    ToolMeaning(("BashOutput",), "none", _CC, poll_keys=("bash_id", "shell_id")),
    ToolMeaning(("ExitPlanMode",), "plan", _CC, text_keys=("plan",)),
    _none(
        (
            "TaskList",
            "TaskGet",
            "TaskOutput",
            "TaskStop",
            "KillShell",
            "KillBash",
            "WebFetch",
            "WebSearch",
            "AskUserQuestion",
            "Skill",
            "SlashCommand",
            "ToolSearch",
            "EnterPlanMode",
            "EnterWorktree",
            "ExitWorktree",
            "CronCreate",
            "CronDelete",
            "CronList",
            "LSP",
            "ListMcpResourcesTool",
            "ReadMcpResourceTool",
            "TodoRead",
        ),
        _CC,
    ),
    # --- Codex CLI (codex-rs/core/src/tools/spec.rs, handlers/)
    _command(("shell", "shell_command", "local_shell"), _CODEX, "command", "action"),
    _command("exec_command", _CODEX, "cmd"),
    ToolMeaning(
        ("apply_patch",),
        "patch",
        ("codex", "opencode", "cline", "cline-sdk", "roo-code"),
        patch_keys=("input", "patchText", "patch"),
    ),
    ToolMeaning(
        ("update_plan",),
        "todos",
        _CODEX,
        todos_key="plan",
        todo_shape=TodoShape(text_keys=("step",), id_key=None),
    ),
    _file("view_image", ("codex", "swe-agent"), "read", "path", "image_file"),
    _file(
        "read_file",
        ("codex", "cline", "roo-code", "gemini-cli", "mcp-filesystem"),
        "read",
        "file_path",
        "path",
        "absolutePath",
        "absolute_path",
        "files",
    ),
    _search("list_dir", _CODEX, "dir_path", "path"),
    _search("grep_files", _CODEX, "path"),
    ToolMeaning(("write_stdin",), "none", _CODEX, poll_keys=("session_id",)),
    # --- Windsurf's Cascade: a command run with `Blocking: false` is read by its id.
    ToolMeaning(("command_status",), "none", ("windsurf",), poll_keys=("CommandId",)),
    # --- OpenCode (packages/opencode/src/tool/*.ts)
    _command(
        "bash", ("opencode", "swe-agent", "mini-swe-agent", "anthropic-api", "openmanus"), "command"
    ),
    _file("read", _OPENCODE, "read", "filePath"),
    _file("edit", ("opencode", "roo-code"), "modified", "filePath", "file_path"),
    _file("multiedit", _OPENCODE, "modified", "filePath"),
    _file("write", _OPENCODE, "written", "filePath"),
    ToolMeaning(("patch",), "patch", _OPENCODE, patch_keys=("patchText",)),
    ToolMeaning(("todowrite",), "todos", _OPENCODE, todos_key="todos", todo_shape=_ITEMS),
    _search(("glob", "grep", "list", "codesearch"), _OPENCODE, "path"),
    ToolMeaning(("task",), "delegate", _OPENCODE, text_keys=("description", "prompt")),
    _none(("todoread", "webfetch", "websearch", "question", "skill", "lsp"), _OPENCODE),
    # --- Cline (src/shared/tools.ts) and Roo-Code (src/core/prompts/tools/native-tools/)
    _command("execute_command", _CLINE_ROO, "command"),
    _file("write_to_file", _CLINE_ROO, "written", "absolutePath", "path"),
    _file("replace_in_file", _CLINE, "modified", "absolutePath", "path"),
    _file(("apply_diff", "insert_content", "search_and_replace"), _ROO, "modified", "path"),
    _file("search_replace", _ROO, "modified", "file_path", "path"),
    _file("new_rule", _CLINE, "written", "path"),
    _search(
        ("search_files", "list_files", "list_code_definition_names"),
        _CLINE_ROO,
        "absolutePath",
        "path",
    ),
    _search("codebase_search", _ROO, "path"),
    ToolMeaning(("attempt_completion",), "final", _CLINE_ROO, text_keys=("result",)),
    ToolMeaning(("new_task",), "delegate", _CLINE_ROO, text_keys=("message", "context")),
    ToolMeaning(("use_subagents",), "delegate", _CLINE, text_keys=("prompt_1", "prompt")),
    ToolMeaning(("update_todo_list",), "todos", _ROO, todos_key="todos", todo_shape=_CHECKLIST),
    ToolMeaning(
        ("focus_chain",), "todos", _CLINE, todos_key="task_progress", todo_shape=_CHECKLIST
    ),
    # The user's answer comes back as the result, `<answer>\n…\n</answer>`.
    ToolMeaning(("ask_followup_question",), "ask", _CLINE_ROO, text_keys=("question",)),
    _none(("access_mcp_resource", "use_mcp_tool"), _CLINE_ROO),
    _none(
        (
            "plan_mode_respond",
            "act_mode_respond",
            "browser_action",
            "load_mcp_documentation",
            "web_search",
            "condense",
            "summarize_task",
            "report_bug",
            "use_skill",
        ),
        _CLINE,
    ),
    _none(("web_fetch",), ("cline", "gemini-cli")),
    _none(
        (
            "switch_mode",
            "read_command_output",
            "fetch_instructions",
            "run_slash_command",
            "generate_image",
        ),
        _ROO,
    ),
    # --- Cline's SDK agent (sdk/packages/core/src/extensions/tools/)
    _file("read_files", ("cline-sdk", "codebuff"), "read", "files", "paths", "file_paths", "path"),
    ToolMeaning(
        ("editor",),
        "file",
        ("cline-sdk",),
        op="modified",
        path_keys=("path",),
        partial_edit_keys=("old_text", "insert_line"),
    ),
    ToolMeaning(
        ("run_commands",),
        "command",
        ("cline-sdk",),
        command_keys=("commands", "command", "cmd"),
        command_list=True,
    ),
    ToolMeaning(("search_codebase",), "search", ("cline-sdk",), text_keys=("queries",)),
    ToolMeaning(("submit_and_exit",), "final", ("cline-sdk",), text_keys=("summary",)),
    _none(("ask_question", "skills", "fetch_web_content"), ("cline-sdk",)),
    # --- OpenHands (openhands/agenthub/codeact_agent/tools/; the V1 SDK's terminal,
    # file_editor) and Anthropic's text-editor tool, whose sub-commands OpenHands copied.
    _command(("execute_bash", "terminal"), _OPENHANDS, "command"),
    _command("execute_ipython_cell", _OPENHANDS, "code"),
    ToolMeaning(
        ("str_replace_editor",),
        "file",
        ("openhands", "swe-agent", "openmanus"),
        path_keys=("path",),
        subcommand_key="command",
        subcommand_ops=_EDITOR_OPS,
        positional=("command", "path"),
    ),
    ToolMeaning(
        ("file_editor",),
        "file",
        _OPENHANDS,
        path_keys=("path",),
        subcommand_key="command",
        subcommand_ops=_EDITOR_OPS,
    ),
    ToolMeaning(
        ("str_replace_based_edit_tool",),
        "file",
        ("anthropic-api",),
        path_keys=("path",),
        subcommand_key="command",
        subcommand_ops=_EDITOR_OPS,
    ),
    _file("edit_file", ("openhands", "roo-code"), "modified", "path", "file_path", "target_file"),
    ToolMeaning(
        ("task_tracker",),
        "todos",
        _OPENHANDS,
        todos_key="task_list",
        todo_shape=TodoShape(text_keys=("title",)),
        subcommand_key="command",
        todos_subcommands=("plan",),
    ),
    ToolMeaning(("finish",), "final", _OPENHANDS, text_keys=("message", "final_thought")),
    # --- OpenManus (FoundationAgents/OpenManus app/tool; `bash` and `str_replace_editor` as
    # above). Its `planning` tool states the whole plan, each step's status marked, in every
    # result (`todos_in_result`); `ask_human`'s result is the user's answer.
    ToolMeaning(("ask_human",), "ask", _OPENMANUS, text_keys=("inquire",)),
    _none(("planning", "python_execute", "terminate", "browser_use"), _OPENMANUS),
    # OpenHands' agent skills (openhands/runtime/plugins/agent_skills/file_ops), which its
    # CodeAct agent calls in an `<execute_ipython>` cell, arguments by position.
    ToolMeaning(
        ("open_file",),
        "file",
        _OPENHANDS,
        op="read",
        path_keys=("path",),
        positional=("path", "line_number", "context_lines"),
    ),
    ToolMeaning(
        ("create_file",),
        "file",
        _OPENHANDS,
        op="created",
        path_keys=("filename",),
        positional=("filename",),
    ),
    ToolMeaning(
        ("edit_file_by_replace",),
        "file",
        _OPENHANDS,
        op="modified",
        path_keys=("file_name",),
        positional=("file_name", "to_replace", "new_content"),
    ),
    ToolMeaning(
        ("insert_content_at_line",),
        "file",
        _OPENHANDS,
        op="modified",
        path_keys=("file_name",),
        positional=("file_name", "line_number", "content"),
    ),
    ToolMeaning(
        ("append_file",),
        "file",
        _OPENHANDS,
        op="modified",
        path_keys=("file_name",),
        positional=("file_name", "content"),
    ),
    _none(("goto_line",), _OPENHANDS),
    _none(("browser", "request_condensation"), _OPENHANDS),
    # --- SWE-agent (tools/*/config.yaml); text-mode signatures in `positional`
    ToolMeaning(
        ("open",), "file", _SWE, op="read", path_keys=("path",), positional=("path", "line_number")
    ),
    ToolMeaning(
        ("create",), "file", _SWE, op="created", path_keys=("filename",), positional=("filename",)
    ),
    ToolMeaning(
        ("edit", "insert"), "file", _SWE, op="modified", acts_on_open_file=True, positional=()
    ),
    ToolMeaning(
        ("find_file",),
        "search",
        _SWE,
        path_keys=("dir",),
        text_keys=("file_name",),
        positional=("file_name", "dir"),
    ),
    ToolMeaning(
        ("search_dir",),
        "search",
        _SWE,
        path_keys=("dir",),
        text_keys=("search_term",),
        positional=("search_term", "dir"),
    ),
    ToolMeaning(
        ("search_file",),
        "search",
        _SWE,
        path_keys=("file",),
        text_keys=("search_term",),
        positional=("search_term", "file"),
    ),
    ToolMeaning(
        ("filemap",), "file", _SWE, op="read", path_keys=("file_path",), positional=("file_path",)
    ),
    ToolMeaning(("submit", "exit_forfeit"), "final", _SWE, positional=()),
    ToolMeaning(("goto", "scroll_up", "scroll_down"), "none", _SWE, positional=()),
    # --- Goose (block/goose: crates/goose-mcp/src/developer/{shell,text_editor}.rs and
    # crates/goose/src/agents/todo_tools.rs). An extension's tools are `extension__tool`; the
    # shell states no exit status; the to-do tool writes the whole TODO file each time.
    _command("developer__shell", _GOOSE, "command"),
    ToolMeaning(
        ("developer__text_editor",),
        "file",
        _GOOSE,
        path_keys=("path",),
        subcommand_key="command",
        subcommand_ops=_GOOSE_EDITOR_OPS,
    ),
    # Its todo platform extension (crates/goose/src/agents/platform_extensions/todo.rs)
    # names the same tool `todo_write`: `todo__todo_write`.
    ToolMeaning(
        ("todo__write", "todo__todo_write"),
        "todos",
        _GOOSE,
        todos_key="content",
        todo_shape=_CHECKLIST,
    ),
    _none(("todo__read", "todo__todo_read"), _GOOSE),
    # --- GitHub Copilot agent mode (microsoft/vscode-copilot-chat: src/extension/tools/
    # common/toolNames.ts; the terminal and to-do tools from VS Code). `manage_todo_list`
    # writes the whole list, numbered anew as the model likes; `read` only reads it.
    _command("run_in_terminal", _COPILOT, "command"),
    _file("create_file", _COPILOT, "created", "filePath"),
    _file(("replace_string_in_file", "insert_edit_into_file"), _COPILOT, "modified", "filePath"),
    _file("multi_replace_string_in_file", _COPILOT, "modified", "replacements"),
    ToolMeaning(
        ("manage_todo_list",),
        "todos",
        _COPILOT,
        todos_key="todoList",
        todo_shape=TodoShape(text_keys=("title", "description"), id_key="id"),
        subcommand_key="operation",
        todos_subcommands=("write",),
    ),
    _none(("get_terminal_output", "get_errors", "terminal_last_command"), _COPILOT),
    # --- Gemini CLI (packages/core/src/tools/definitions/base-declarations.ts)
    _command("run_shell_command", _GEMINI, "command"),
    _file("write_file", ("gemini-cli", "mcp-filesystem"), "written", "file_path", "path"),
    _file("replace", _GEMINI, "modified", "file_path"),
    _file("read_many_files", _GEMINI, "read", "include", "paths"),
    _search(("glob", "grep_search", "search_file_content"), _GEMINI, "dir_path", "path"),
    _search("list_directory", ("gemini-cli", "mcp-filesystem"), "dir_path", "path"),
    ToolMeaning(
        ("write_todos",),
        "todos",
        _GEMINI,
        todos_key="todos",
        todo_shape=TodoShape(text_keys=("description",), id_key=None),
    ),
    ToolMeaning(("complete_task",), "final", _GEMINI, text_keys=("result", "summary")),
    _none(
        (
            "google_web_search",
            "save_memory",
            "ask_user",
            "enter_plan_mode",
            "exit_plan_mode",
            "activate_skill",
            "get_internal_docs",
            "update_topic",
        ),
        _GEMINI,
    ),
    # --- pi (badlogic/pi-mono packages/coding-agent/src/core/tools/): `path` for every file
    # tool; grep, find and ls are off by default.
    _file("read", _PI, "read", "path"),
    _file("edit", _PI, "modified", "path"),
    _file("write", _PI, "written", "path"),
    _command("bash", _PI, "command"),
    _search(("grep", "find", "ls"), _PI, "path"),
    # --- Codebuff (common/src/tools/params/tool/): calls written as JSON in the reply
    # (`text_calls`); `read_files` is Cline SDK's row. Subgoals are its to-do items, by id.
    _file(("write_file", "create_plan"), _CODEBUFF, "written", "path"),
    _file("str_replace", _CODEBUFF, "modified", "path"),
    _command("run_terminal_command", _CODEBUFF, "command"),
    _search(("code_search", "find_files"), _CODEBUFF, "cwd"),
    ToolMeaning(
        ("add_subgoal", "update_subgoal"),
        "todo",
        _CODEBUFF,
        text_keys=("objective",),
        todo_shape=TodoShape(id_key="id"),
    ),
    ToolMeaning(("think_deeply",), "thought", _CODEBUFF, text_keys=("thought",)),
    _none(
        ("end_turn", "spawn_agents", "browser_logs", "web_search", "read_docs", "set_output"),
        _CODEBUFF,
    ),
    # --- MCP filesystem server (modelcontextprotocol/servers src/filesystem)
    _file(("read_text_file", "read_media_file"), _MCP_FS, "read", "path"),
    _file("read_multiple_files", _MCP_FS, "read", "paths"),
    ToolMeaning(
        ("edit_file",),
        "file",
        _MCP_FS,
        op="modified",
        path_keys=("path",),
        dry_run_keys=("dryRun",),
    ),
    ToolMeaning(("move_file",), "file", _MCP_FS, move_keys=("source", "destination")),
    _search(("search_files",), _MCP_FS, "path"),
    _search(("list_directory_with_sizes", "directory_tree"), _MCP_FS, "path"),
    _none(("create_directory", "get_file_info", "list_allowed_directories"), _MCP_FS),
    # --- Thinking tools: the MCP sequential-thinking server (`thoughtNumber`, `isRevision`,
    # …), Trae Agent's copy of it (snake_case), OpenHands' and Anthropic's `think`.
    ToolMeaning(
        ("sequentialthinking", "sequential_thinking", "think"),
        "thought",
        ("mcp-sequential-thinking", "trae-agent", "openhands"),
        text_keys=("thought",),
    ),
    # --- Letta (letta-ai/letta `functions/function_sets/base.py`): the agent speaks to the
    # user only through `send_message`.
    ToolMeaning(("send_message",), "message", ("letta",), text_keys=("message",)),
    # Its memory blocks, edited line by line (`memory_*` since 0.8, `core_memory_*` before).
    ToolMeaning(
        (
            "memory_insert",
            "memory_replace",
            "memory_rethink",
            "core_memory_append",
            "core_memory_replace",
        ),
        "memory",
        ("letta",),
        text_keys=("new_str", "new_memory", "content", "new_content"),
    ),
)


def _merge(rows: Sequence[ToolMeaning]) -> ToolMeaning:
    """One meaning for a name several agents send: the rows must agree on what the tool does;
    their argument keys are tried in table order."""
    first = rows[0]
    for row in rows[1:]:
        if _behaviour(row) != _behaviour(first):
            raise ValueError(
                f"tool table: {first.names} ({first.agents}) and {row.names} ({row.agents}) "
                f"disagree on what a same-named tool does"
            )

    def union(attribute: str) -> tuple[str, ...]:
        keys: dict[str, None] = {}
        for row in rows:
            keys.update(dict.fromkeys(getattr(row, attribute)))
        return tuple(keys)

    positional = next((r.positional for r in rows if r.positional is not None), None)
    return replace(
        first,
        agents=union("agents"),
        path_keys=union("path_keys"),
        command_keys=union("command_keys"),
        patch_keys=union("patch_keys"),
        text_keys=union("text_keys"),
        dry_run_keys=union("dry_run_keys"),
        acts_on_open_file=any(r.acts_on_open_file for r in rows),
        positional=positional,
    )


def _behaviour(row: ToolMeaning) -> tuple[object, ...]:
    return (
        row.kind,
        row.op,
        row.subcommand_ops,
        row.todos_subcommands,
        row.todos_key,
        row.todo_shape,
        row.move_keys,
        row.partial_edit_keys,
        row.command_list,
    )


def _index(table: Sequence[ToolMeaning]) -> dict[str, ToolMeaning]:
    grouped: dict[str, list[ToolMeaning]] = {}
    for row in table:
        for name in row.names:
            grouped.setdefault(name, []).append(row)
    return {name: _merge(rows) for name, rows in grouped.items()}


_BY_NAME: dict[str, ToolMeaning] = _index(TOOLS)


def meaning_of(name: str) -> ToolMeaning | None:
    """The table's meaning of a tool name (exact, case as the agent sends it), merged over the
    agents that send it; None for a tool the table does not know."""
    return _BY_NAME.get(name)


# --- tool calls -----------------------------------------------------------------------------

# Cline puts its whole to-do checklist in a `task_progress` argument of any tool call.
_CHECKLIST_ARGUMENTS = ("task_progress",)


# How a command sent to the background names its id in its first result: Claude Code's
# "Command running in background with ID: bash_1", Windsurf's "Background command ID: …",
# Codex's "Process running with session ID 12".
_BACKGROUND_ID = re.compile(
    r"\b(?:background\b[^\n]{0,40}?\bID|session ID)[:\s]+([\w.-]+)", re.IGNORECASE
)
# The id opens the result: a long output is not searched whole for it.
_BACKGROUND_HEAD = 2000


@text_cache()
def background_id(result: str) -> str | None:
    """The id a command's result says it went on under in the background, if any."""
    found = _BACKGROUND_ID.search(result[:_BACKGROUND_HEAD])
    return found.group(1) if found else None


def polled_id(name: str, arguments: Mapping[str, object]) -> str | None:
    """The id of the background command whose later output a call of `name` with
    `arguments` reads, by the table's `poll_keys`; None for any other call."""
    row = _row_for(name)
    if row is None:
        return None
    for key in row.poll_keys:
        value = arguments.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
    return None


def actions_of_call(name: str, arguments: Mapping[str, object]) -> tuple[Action, ...]:
    """What one tool call did, read through the table (or the fallback rules for a tool the
    table does not know). A call the table knows to have no such effect gives `()`.

    A freeform tool whose input is not JSON (Codex's `apply_patch` custom tool) is passed as
    `{"input": raw_text}`.
    """
    row = _row_for(name)
    actions = list(_row_actions(row, arguments) if row else _fallback_actions(name, arguments))
    actions.extend(_plan_file_todos(actions, arguments))
    for key in _CHECKLIST_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip() and not (row and row.todos_key == key):
            todos = checklist(value)
            if todos:
                actions.append(Action("todos", todos=todos))
    return tuple(actions)


# A file an agent keeps its plan in (`tasks.md`, `TODO.md`, `plan.md`): a checklist written
# to it is the to-do list, one appended to it adds items.
_PLAN_FILE_WORDS = frozenset({"task", "tasks", "todo", "todos", "plan", "checklist"})
_PLAN_FILE_EXTENSIONS = frozenset({"md", "markdown", "txt", ""})
# Arguments holding what an edit takes out, not what it puts in.
_REPLACED_WORDS = frozenset({"old", "search", "find", "target"})


def _plan_file_todos(
    actions: Sequence[Action], arguments: Mapping[str, object]
) -> Iterator[Action]:
    for action in actions:
        if action.kind != "file" or not action.path or action.op in (None, "read", "deleted"):
            continue
        stem, _, extension = action.path.rsplit("/", 1)[-1].partition(".")
        if (
            extension.lower() not in _PLAN_FILE_EXTENSIONS
            or not name_words(stem) & _PLAN_FILE_WORDS
        ):
            continue
        for key, value in arguments.items():
            if isinstance(value, str) and not name_words(key) & _REPLACED_WORDS:
                found = checklist(value)
                if found:
                    whole = action.op in ("written", "created")
                    yield Action("todos" if whole else "todo", todos=found)
                    return


def is_command_tool(name: str) -> bool:
    """Whether a tool runs commands (a shell, a terminal, a code cell)."""
    row = _row_for(name)
    if row is not None:
        return row.kind == "command"
    return bool(name_words(name) & _SHELL_WORDS)


def is_test_tool(name: str) -> bool:
    """Whether a tool's name says it runs tests (Moatless's `RunTests`): its outcome is a test
    run's, as a command's is."""
    return bool(name_words(name) & _TEST_WORDS)


_TEST_WORDS = frozenset({"test", "tests", "spec", "specs"})


def _row_for(name: str) -> ToolMeaning | None:
    row = _BY_NAME.get(name)
    if row is not None:
        return row
    # MCP tools reach an agent as `mcp__<server>__<tool>` (Claude Code), and the filesystem
    # server's tools mean what the table says under their own names.
    server, tool = _mcp_parts(name)
    if tool is not None and server is not None and "filesystem" in server.lower():
        row = _BY_NAME.get(tool)
        if row is not None and "mcp-filesystem" in row.agents:
            return row
    return None


def _mcp_parts(name: str) -> tuple[str | None, str | None]:
    if not name.startswith("mcp__"):
        return None, None
    server, _, tool = name[5:].partition("__")
    return (server, tool) if tool else (None, None)


def _row_actions(row: ToolMeaning, arguments: Mapping[str, object]) -> Iterator[Action]:
    kind = row.kind
    if kind == "none" or any(arguments.get(k) is True for k in row.dry_run_keys):
        return
    if kind == "command":
        for command in _commands(arguments, row):
            yield from command_actions(command)
        return
    if kind == "patch":
        for key in row.patch_keys:
            value = arguments.get(key)
            if isinstance(value, str):
                yield from (Action("file", path=p, op=op) for p, op in files_in_patch(value))
                return
        return
    if kind == "file":
        yield from _file_actions(row, arguments)
        return
    if kind == "search":
        yield Action(
            "search",
            path=_first_path(arguments, row.path_keys),
            text=_first_text(arguments, row.text_keys),
        )
        return
    if kind == "todos":
        sub = arguments.get(row.subcommand_key or "")
        # A list stated with no subcommand at all is the list (Copilot's current schema).
        stated = sub is None and row.todos_key in arguments
        if row.todos_subcommands and sub not in row.todos_subcommands and not stated:
            return
        todos = _todos(arguments.get(row.todos_key or ""), row.todo_shape or _ITEMS)
        if todos is not None:
            yield Action("todos", todos=todos)
        return
    if kind == "todo":
        yield from _task_update(arguments, row)
        return
    # plan, final, delegate, thought, message, ask, memory
    yield Action(kind, text=_first_text(arguments, row.text_keys))


def _file_actions(row: ToolMeaning, arguments: Mapping[str, object]) -> Iterator[Action]:
    if row.move_keys is not None:
        source, destination = (_first_path(arguments, (k,)) for k in row.move_keys)
        if source:
            yield Action("file", path=source, op="deleted")
        if destination:
            yield Action("file", path=destination, op="created")
        return
    op = row.op
    if row.subcommand_key is not None:
        sub = arguments.get(row.subcommand_key)
        ops = dict(row.subcommand_ops)
        if not isinstance(sub, str) or sub not in ops:
            return
        op = ops[sub]
    if op is None:
        return
    if row.partial_edit_keys and all(arguments.get(k) is None for k in row.partial_edit_keys):
        op = "written"
    paths = _paths(arguments, row.path_keys)
    if not paths:
        # Agents share tool names and differ in argument names (`read_file` takes `path`
        # in one agent and `target_file` in another): the name's meaning, the usual names.
        paths = _fallback_paths(_by_key_form(arguments))
    if not paths and row.acts_on_open_file:
        # An editor command naming no file acts on the one the environment has open.
        yield Action("file", path=None, op=op)
    for path in paths:
        yield Action("file", path=path, op=op)


def _task_update(arguments: Mapping[str, object], row: ToolMeaning) -> Iterator[Action]:
    """Tools that change one item: Claude Code's `TaskCreate` adds a pending one (its id is in
    the result: `todo_id_in_result`), `TaskUpdate` changes one by `taskId`; Codebuff's
    `add_subgoal` and `update_subgoal` name the item's id themselves (`todo_shape.id_key`)."""
    text = _first_text(arguments, row.text_keys) or ""
    id_key = row.todo_shape.id_key if row.todo_shape is not None else "taskId"
    task_id = _id_text(arguments.get(id_key or "taskId"))
    if task_id is None and not text:
        return
    if task_id is not None and not isinstance(arguments.get("status"), str):
        # An update of owner or dependencies says nothing of the item's state.
        return
    status = _status(arguments.get("status"))
    yield Action("todo", todos=(Todo(text, status, task_id),))


_TASK_CREATED = re.compile(r"^Task #(\w+) created successfully")


def todo_id_in_result(name: str, output: str) -> str | None:
    """The id a to-do tool's result gives a new item (`Task #3 created successfully: …` from
    Claude Code's `TaskCreate`), so later updates by id can find it."""
    if name != "TaskCreate":
        return None
    match = _TASK_CREATED.match(output.strip())
    return match.group(1) if match else None


# A to-do tool's result stating the whole list, by agent: Amazon Q Developer CLI's
# `todo_list` (crates/chat-cli/src/cli/chat/tools/todo.rs) answers every command with
# `TODO LIST STATE: {"tasks": [{"task_description", "completed"}], …}`.
_STATED_LISTS = (("TODO LIST STATE: ", "tasks", "task_description", "completed"),)


# A plan's steps as OpenManus's `planning` states them, each under its status mark:
# "Steps:" then "0. [✓] Map the checkout" (→ in progress, ! blocked, a space not started).
_PLAN_STEPS = re.compile(r"^Steps:\n((?:\d+\. \[[ ✓→!]\] .*\n?(?:   .*\n?)*)+)", re.MULTILINE)
_PLAN_STEP = re.compile(r"^\d+\. \[([ ✓→!])\] (.+)$", re.MULTILINE)
_STEP_STATUS: dict[str, TodoStatus] = {"✓": "completed", "→": "in_progress"}


@text_cache()
def todos_in_result(output: str) -> tuple[Todo, ...] | None:
    """The whole to-do list a to-do tool's result states (None where it states none)."""
    if "Steps:\n" in output and (steps := _PLAN_STEPS.search(output)):
        return tuple(
            Todo(text.strip(), _STEP_STATUS.get(mark, "pending"))
            for mark, text in _PLAN_STEP.findall(steps.group(1))
        )
    for prefix, items_key, text_key, done_key in _STATED_LISTS:
        if not output.startswith(prefix):
            continue
        try:
            state, _ = json.JSONDecoder().raw_decode(output, len(prefix))
        except ValueError:
            return None
        items = state.get(items_key) if isinstance(state, dict) else None
        if not isinstance(items, list):
            return None
        return tuple(
            Todo(item[text_key], "completed" if item.get(done_key) is True else "pending")
            for item in items
            if isinstance(item, dict) and isinstance(item.get(text_key), str)
        )
    return None


# A to-do tool's reply, one line an operation (gptme's `todo write`): "Added todo 6: text",
# "Updated todo 6 state to: completed", "Removed todo 6: text".
_TODO_REPLY = re.compile(
    r"^(?:<\w+>)?(?P<op>Added|Updated|Removed) todo (?P<id>\d+)"
    r"(?:: (?P<text>.+?)| state to: (?P<state>\w+))"
    r"(?:</\w+>)?[ \t]*$",
    re.MULTILINE,
)


@text_cache()
def todo_changes_in_reply(output: str) -> tuple[Todo, ...]:
    """The to-do items a to-do tool's reply says it added, updated or removed, by id (a
    removed item is cancelled: it will not be done)."""
    if "todo " not in output:
        return ()
    changes = []
    for match in _TODO_REPLY.finditer(output):
        op, todo_id = match["op"], match["id"]
        if op == "Added":
            changes.append(Todo(match["text"], "pending", todo_id))
        elif op == "Removed":
            changes.append(Todo(match["text"], "cancelled", todo_id))
        elif match["state"]:
            changes.append(Todo("", _status(match["state"]), todo_id))
    return tuple(changes)


# --- commands -------------------------------------------------------------------------------

_SHELL_WRAPPERS = {"bash", "sh", "zsh", "dash", "powershell", "powershell.exe", "pwsh", "cmd"}
_SCRIPT_FLAGS = {"-c", "-lc", "-ic", "-Command", "-command", "/c", "/C"}
_PATCH_PROGRAMS = ("apply_patch", "applypatch")
# mini-SWE-agent ends a run by echoing one of these markers.
_FINAL_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")


def command_text(value: object) -> str | None:
    """A command argument as text: a string as given (stripped), an argv list joined
    shell-style, a `bash -lc SCRIPT` (or `sh -c`, `powershell -Command`) wrapper unwrapped to
    its SCRIPT. None for anything else or an empty command."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, Mapping):
        # Codex's `local_shell` call carries `{"type": "exec", "command": [...]}`.
        return command_text(value.get("command"))
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        argv = cast(list[str], value)
        program = argv[0].rsplit("/", 1)[-1]
        if program in _SHELL_WRAPPERS and len(argv) >= 3 and argv[-2] in _SCRIPT_FLAGS:
            return argv[-1].strip() or None
        if program in _PATCH_PROGRAMS and len(argv) == 2:
            # Codex models call `["apply_patch", PATCH]`; a joined form would quote the patch.
            return f"{argv[0]} <<'EOF'\n{argv[1]}\nEOF"
        return shlex.join(argv).strip() or None
    return None


def command_actions(command: str) -> tuple[Action, ...]:
    """A command run, followed by the files it evidently touched; `apply_patch` (and its
    heredoc form) counts as the patch's file changes, not as a command."""
    stripped = command.strip()
    program = stripped.split(maxsplit=1)[0].rsplit("/", 1)[-1] if stripped else ""
    if program in _PATCH_PROGRAMS:
        return tuple(Action("file", path=p, op=op) for p, op in files_in_patch(stripped))
    actions = [Action("command", command=stripped)]
    actions.extend(_command_file_actions(stripped))
    if "*** Begin Patch" in stripped:
        actions.extend(Action("file", path=p, op=op) for p, op in files_in_patch(stripped))
    if any(marker in stripped for marker in _FINAL_MARKERS):
        actions.append(Action("final"))
    return tuple(actions)


def _command_file_actions(command: str) -> Iterator[Action]:
    for path, op in file_ops_of_command(command):
        yield Action("file", path=path, op=op)


def _commands(arguments: Mapping[str, object], row: ToolMeaning) -> list[str]:
    if not row.command_list:
        command = _first_command(arguments, row.command_keys)
        if command is None:
            # Agents share shell tool names and differ in argument names (`Bash` takes
            # `command` in one agent and `cmd` in another): the usual names, any spelling.
            command = _fallback_command(_by_key_form(arguments))
        return [] if command is None else [command]
    for key in row.command_keys:
        value = arguments.get(key)
        items = value if isinstance(value, list) else [value]
        commands = []
        for item in items:
            if isinstance(item, Mapping):
                args = item.get("args")
                argv = [item.get("command"), *(args if isinstance(args, list) else [])]
                text = command_text(argv if len(argv) > 1 else argv[0])
            else:
                text = command_text(item)
            if text is not None:
                commands.append(text)
        if commands:
            return commands
    return []


def _first_command(arguments: Mapping[str, object], keys: Sequence[str]) -> str | None:
    for key in keys:
        command = command_text(arguments.get(key))
        if command is not None:
            return command
    return None


# --- argument values ------------------------------------------------------------------------

_GLOB_CHARS = re.compile(r"[*?]|\{.*,.*\}")
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")


def _path_value(value: object) -> str | None:
    """A path argument's value, if it names one file or place (not a glob pattern)."""
    if not isinstance(value, str):
        return None
    path = value.strip().removeprefix("file://")
    if not path or "\n" in path or len(path) > 500 or _GLOB_CHARS.search(path):
        return None
    return path


def _paths(arguments: Mapping[str, object], keys: Sequence[str]) -> list[str]:
    """The paths under the first of `keys` present: one string, or a list of strings or of
    objects naming a path (Roo-Code's `files: [{path, line_ranges}]`, `_item_path`)."""
    for key in keys:
        value = arguments.get(key)
        if value is None:
            continue
        if isinstance(value, list):
            found = []
            for item in value:
                path = _item_path(item) if isinstance(item, Mapping) else _path_value(item)
                if path:
                    found.append(path)
            if found:
                return found
            continue
        path = _path_value(value)
        if path:
            return [path]
    return []


def _first_path(arguments: Mapping[str, object], keys: Sequence[str]) -> str | None:
    paths = _paths(arguments, keys)
    return paths[0] if paths else None


def _first_text(arguments: Mapping[str, object], keys: Sequence[str]) -> str | None:
    """The text under the first of `keys` present; a list of strings (several queries)
    joined with ` | `."""
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, list):
            value = " | ".join(v.strip() for v in value if isinstance(v, str) and v.strip())
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


# --- to-do lists ----------------------------------------------------------------------------

_STATUS: dict[str, TodoStatus] = {
    "pending": "pending",
    "todo": "pending",
    "not_started": "pending",
    "open": "pending",
    "blocked": "pending",
    "in_progress": "in_progress",
    "in-progress": "in_progress",
    "inprogress": "in_progress",
    "active": "in_progress",
    "doing": "in_progress",
    "completed": "completed",
    "complete": "completed",
    "done": "completed",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "deleted": "cancelled",
    "skipped": "cancelled",
    "dropped": "cancelled",
    "aborted": "cancelled",
}


def _id_text(value: object) -> str | None:
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value)
    return None


def _status(value: object) -> TodoStatus:
    if isinstance(value, str):
        return _STATUS.get(value.strip().lower(), "pending")
    return "pending"


def _todos(value: object, shape: TodoShape) -> tuple[Todo, ...] | None:
    """The to-do list a tool states, or None when the argument holds none (an empty list is
    a list: every item is gone)."""
    if shape.format == "checklist" or isinstance(value, str):
        return checklist(value) if isinstance(value, str) else None
    if not isinstance(value, list):
        return None
    todos = []
    for item in value:
        if not isinstance(item, Mapping):
            continue
        # Another agent's tool of the same name may key its items otherwise.
        text = _first_text(item, shape.text_keys) or _first_text(item, _FALLBACK_TODOS.text_keys)
        if text is None:
            continue
        todo_id = _id_text(item.get(shape.id_key)) if shape.id_key else None
        status = item.get(shape.status_key, item.get("state"))
        todos.append(Todo(text, _status(status), todo_id))
    return tuple(todos)


_CHECK_ITEM = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?\[([ xX~\-/>])\]\s+(.+?)\s*$")
_CHECK_STATUS: dict[str, TodoStatus] = {
    " ": "pending",
    "x": "completed",
    "X": "completed",
    "-": "in_progress",
    "~": "in_progress",
    "/": "in_progress",
    ">": "in_progress",
}


def checklist(text: str) -> tuple[Todo, ...]:
    """The items of a markdown checklist (Cline's `task_progress`, Roo-Code's
    `update_todo_list`, a checklist in an agent's memory): `[x]` done, `[ ]` pending, `[-]` or `[>]`
    in progress; nested items count."""
    todos = []
    for line in text.splitlines():
        match = _CHECK_ITEM.match(line)
        if match:
            todos.append(_item(match.group(2), _CHECK_STATUS[match.group(1)]))
    return tuple(todos)


def _item(words: str, status: TodoStatus) -> Todo:
    """An item of a written list, its state as its mark or box gives it (`status`) unless
    its words say otherwise: struck through (`~~Backfill~~`) it is dropped; closing words
    (`(dropped)`, `— in progress`) state it."""
    state = _ITEM_STATE.search(words)
    said = (state.group(1) or state.group(2)).lower() if state is not None else None
    if state is not None:
        words = words[: state.start()]
    struck = _STRUCK.match(words.strip())
    if struck is not None:
        return Todo(struck.group(1).strip(), "cancelled", word=_cancel_word(said))
    return _said(words, said) if said is not None else Todo(words.strip(), status)


def _said(words: str, word: str) -> Todo:
    """An item whose own word (`dropped`, `in progress`, `done`) states how it stands."""
    return Todo(words.strip(), _stated(word), word=_cancel_word(word))


def _cancel_word(word: str | None) -> str | None:
    """`word`, where it is one saying an item will not be done."""
    return word if word in _CANCEL_WORDS else None


#: Words a list closes an item with that say it will not be done.
_CANCEL_WORDS = frozenset({"dropped", "skipped", "cancelled"})


def _stated(word: str) -> TodoStatus:
    """The state a list item's own word names (`dropped`, `in progress`, `done`)."""
    return "cancelled" if word == "dropped" else _status(word.replace(" ", "_"))


# --- fallback for tools the table does not know --------------------------------------------

FALLBACK_PATH_KEYS = (
    "path",
    "file_path",
    "filepath",
    "filePath",
    "filename",
    "file",
    "absolutePath",
    "absolute_path",
    "notebook_path",
    "target_file",
    "relative_path",
    "paths",
    "file_paths",
    "files",
    "uri",  # Void's tools
)
FALLBACK_COMMAND_KEYS = ("command", "cmd", "script", "commands", "command_line")
FALLBACK_PATCH_KEYS = ("patch", "patchText", "diff", "input")
_SHELL_WORDS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "shell",
        "terminal",
        "exec",
        "execute",
        "run",
        "command",
        "cmd",
        "powershell",
        "pwsh",
        "console",
        "process",
    }
)
# Precedence: the first row whose words appear in the name decides the operation.
NAME_WORD_OPS: tuple[tuple[FileOp, frozenset[str]], ...] = (
    (
        "deleted",
        frozenset({"delete", "deleted", "remove", "removed", "unlink", "rm", "del", "trash"}),
    ),
    ("created", frozenset({"create", "created", "new", "touch", "mkfile"})),
    (
        "modified",
        frozenset(
            {
                "edit",
                "replace",
                "patch",
                "insert",
                "append",
                "modify",
                "update",
                "apply",
                "change",
                "rename",
            }
        ),
    ),
    ("written", frozenset({"write", "writer", "rewrite", "save", "overwrite", "put"})),
    (
        "read",
        frozenset(
            {"read", "view", "open", "cat", "show", "get", "load", "inspect", "head", "tail"}
        ),
    ),
)
_FALLBACK_TODOS = TodoShape(
    text_keys=("content", "text", "title", "name", "description", "step", "subject")
)
# Where an unknown tool's to-do item may keep its id and its state besides `id`, `status`.
_FALLBACK_TODO_IDS = ("id", "task_id", "todo_id")
_PATCH_START = re.compile(r"^\s*(?:\*\*\* Begin Patch|diff --git |--- \S)", re.MULTILINE)


def _key_form(key: str) -> str:
    """An argument name as the fallback rules compare it: `TargetFile`, `target_file` and
    `targetFile` are one name."""
    return key.replace("_", "").replace("-", "").lower()


_FALLBACK_PATH_FORMS = tuple(dict.fromkeys(map(_key_form, FALLBACK_PATH_KEYS)))
_FALLBACK_COMMAND_FORMS = tuple(dict.fromkeys(map(_key_form, FALLBACK_COMMAND_KEYS)))
_FALLBACK_PATCH_FORMS = tuple(dict.fromkeys(map(_key_form, FALLBACK_PATCH_KEYS)))


def _by_key_form(arguments: Mapping[str, object]) -> dict[str, object]:
    return {_key_form(k): v for k, v in arguments.items()}


def _fallback_command(forms: Mapping[str, object]) -> str | None:
    """The command under the usual names, else under any name that says it holds one
    (`cmdline`, `shell_command`; not `command_id`), in arguments keyed by `_key_form`."""
    command = _first_command(forms, _FALLBACK_COMMAND_FORMS)
    if command is not None:
        return command
    named = [k for k in forms if ("cmd" in k or "command" in k) and not k.endswith(("id", "ids"))]
    return _first_command(forms, named)


def _fallback_paths(forms: Mapping[str, object]) -> list[str]:
    """The paths under the usual path argument names, in arguments keyed by `_key_form`; a
    bare file name beside a directory argument is in that directory (CrewAI's
    FileWriterTool: `directory` and `filename`)."""
    paths = [p for p in _paths(forms, _FALLBACK_PATH_FORMS) if _plausible_path(p)]
    directory = next((forms[k] for k in _DIRECTORY_FORMS if isinstance(forms.get(k), str)), "")
    if isinstance(directory, str) and directory.strip(" ./"):
        paths = [p if "/" in p else f"{directory.rstrip('/')}/{p}" for p in paths]
    return paths


_DIRECTORY_FORMS = ("directory", "dir", "folder")


def _fallback_actions(name: str, arguments: Mapping[str, object]) -> Iterator[Action]:
    """Argument-name rules for a tool the table does not know, names compared in any case or
    spelling (`_key_form`): a shell-named tool with a command argument ran it; a patch
    argument names files; a `todos` argument is the list; a path argument is a file the
    name's words say what happened to (read by default)."""
    forms = _by_key_form(arguments)
    _server, tool = _mcp_parts(name)
    words = name_words(tool or name)
    if words & _SHELL_WORDS:
        command = _fallback_command(forms)
        if command is not None:
            yield from command_actions(command)
            return
        code = forms.get("code")
        language = forms.get("language", forms.get("lang"))
        if isinstance(code, str) and isinstance(language, str):
            # Code in a language (Open Interpreter's `execute`): shell code is a command,
            # Python code does what its calls say.
            if language.strip().lower() in _SHELL_LANGUAGES:
                yield from command_actions(code)
            elif language.strip().lower() in PYTHON_FENCES:
                yield from python_actions(code)
            return
    for key in _FALLBACK_PATCH_FORMS:
        value = forms.get(key)
        if isinstance(value, str) and _PATCH_START.search(value):
            files = files_in_patch(value)
            if files:
                yield from (Action("file", path=p, op=op) for p, op in files)
                return
    if "todos" in forms:
        todos = _todos(forms["todos"], _FALLBACK_TODOS)
        if todos:
            yield Action("todos", todos=todos)
            return
    if words & _CHECKLIST_TOOL_WORDS:
        # A tool named for to-dos or a plan writing a checklist, under any argument name.
        todos = next(
            (t for v in arguments.values() if isinstance(v, str) and (t := checklist(v))), ()
        )
        if todos:
            yield Action("todos", todos=todos)
            return
    changed = tuple(_listed_todo_changes(words, arguments))
    if changed:
        yield Action("todo", todos=changed)
        return
    status = forms.get("status", forms.get("state"))
    if isinstance(status, str) and status.strip().lower() in _STATUS:
        # One task's new state (`{task, status}`), the item named by its text or by its id
        # (Moatless's `UpdateTask {task_id, state}`).
        text = _first_text(forms, ("task", "title", "content", "subject", "step", "todo"))
        todo_id = next(
            (i for k in _FALLBACK_TODO_IDS if (i := _id_text(forms.get(_key_form(k))))), None
        )
        if text or todo_id:
            yield Action("todo", todos=(Todo(text or "", _status(status), todo_id),))
            return
    if words & _MESSAGE_WORDS and not _fallback_paths(forms):
        # Words to the user sent through a tool (Moatless's `SendMessage {message}`).
        said = _first_text(forms, _MESSAGE_FORMS)
        if said:
            yield Action("message", text=said)
            return
    op: FileOp = next((op for op, names in NAME_WORD_OPS if words & names), "read")
    paths = _fallback_paths(forms)
    if paths:
        yield from (Action("file", path=p, op=op) for p in paths)
        return
    yield from _listed_files(arguments, op)


def _listed_todo_changes(words: set[str], arguments: Mapping[str, object]) -> Iterator[Todo]:
    """To-do items an unknown tool names in an argument named for to-dos (or in any list of a
    tool named for them: `task_checklist {items}`): objects with a text (`initial_todos:
    [{id, title}]`), each added or updated by its id; or ids alone (`todo_ids`), set to the
    state the tool's name says (`mark_todos_completed`)."""
    state = next((_STATUS[w] for w in sorted(words) if w in _STATUS), None)
    named = bool(words & _TODO_LIST_WORDS)
    for key, value in arguments.items():
        if not isinstance(value, list) or not (named or name_words(key) & _TODO_LIST_WORDS):
            continue
        items = _todos(value, _FALLBACK_TODOS)
        if items:
            yield from items
        elif state is not None:
            yield from (Todo("", state, i) for v in value if (i := _id_text(v)) is not None)
        else:
            # Items by id, each with its own new state (`[{task_id, state: COMPLETE}]`).
            yield from _todo_updates(value)


_TODO_LIST_WORDS = frozenset({"todo", "todos", "task", "tasks", "checklist"})
_CHECKLIST_TOOL_WORDS = _TODO_LIST_WORDS | {"plan", "planner"}
#: Words of a tool's name that say it speaks to the user, and where its words are.
_MESSAGE_WORDS = frozenset({"message", "respond", "reply"})
_MESSAGE_FORMS = ("message", "text", "content", "response")


def _todo_updates(items: list[object]) -> Iterator[Todo]:
    for item in items:
        if not isinstance(item, Mapping):
            continue
        todo_id = next((i for k in _FALLBACK_TODO_IDS if (i := _id_text(item.get(k)))), None)
        status = item.get("status", item.get("state"))
        if todo_id is not None and isinstance(status, str) and status.strip().lower() in _STATUS:
            yield Todo("", _status(status), todo_id)


def _listed_files(arguments: Mapping[str, object], op: FileOp) -> Iterator[Action]:
    """Files in lists of objects (`files: [{name}]`, `diffs: [{file_path, …}]`), each list
    saying by its own name what was done to its files (`deleted_files`, `new_files`; else
    what the tool's name says, `op`)."""
    for key, value in arguments.items():
        if not isinstance(value, list):
            continue
        paths = [p for p in map(_item_path, value) if p is not None and _plausible_path(p)]
        if not paths:
            continue
        words = name_words(key)
        done: FileOp = next((o for o, names in NAME_WORD_OPS if words & names), op)
        yield from (Action("file", path=p, op=done) for p in paths)


def _item_path(item: object) -> str | None:
    """The path an object in a list of files names: under a usual path argument name, or its
    `name` (a list of files names each by its name)."""
    if not isinstance(item, Mapping):
        return None
    forms = _by_key_form(item)
    return next(
        (p for k in (*_FALLBACK_PATH_FORMS, "name") if (p := _path_value(forms.get(k)))), None
    )


def _plausible_path(value: str) -> bool:
    return looks_like_path(value) or bool(_WINDOWS_PATH.match(value))


# --- patches --------------------------------------------------------------------------------

_PATCH_MARKER = re.compile(
    r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$"
)
_GIT_HEADER = re.compile(r'^diff --git ("?a/.+?"?) ("?b/.+?"?)\s*$')
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_PATCH_OPS: dict[str, FileOp] = {"Add": "created", "Update": "modified", "Delete": "deleted"}


def files_in_patch(text: str) -> tuple[tuple[str, FileOp], ...]:
    """Files a patch names, with what it does to each, in order of first mention.

    Reads the `*** Begin Patch` format of Codex and OpenCode (`*** Add File:` created,
    `*** Update File:` modified, `*** Delete File:` deleted, `*** Move to:` the old path
    deleted and the new one created) and unified diffs (`--- a/x` / `+++ b/x` modified, a
    `/dev/null` side created or deleted; `diff --git` with `new file mode`, `deleted file
    mode`, `rename from`/`rename to`). Lines inside counted hunks are never read as headers.
    """
    files: dict[str, FileOp] = {}

    def note(path: str, op: FileOp) -> None:
        previous = files.get(path)
        if previous == "created" and op == "modified":
            return
        files[path] = op

    lines = text.splitlines()
    updating: str | None = None
    git: tuple[str, str] | None = None
    git_decided = False
    old_left = new_left = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if old_left > 0 or new_left > 0:
            # Inside a hunk with counts its lines are content, whatever they look like,
            # unless they plainly start the next file (model-written counts are often off).
            if _starts_file(lines, index - 1):
                old_left = new_left = 0
            else:
                if line.startswith("-"):
                    old_left -= 1
                elif line.startswith("+"):
                    new_left -= 1
                elif not line.startswith("\\"):
                    old_left, new_left = old_left - 1, new_left - 1
                continue
        marker = _PATCH_MARKER.match(line)
        if marker:
            if marker.group(3) is not None:
                if updating is not None:
                    files[updating] = "deleted"
                    note(marker.group(3), "created")
                continue
            op, path = _PATCH_OPS[marker.group(1)], marker.group(2)
            note(path, op)
            updating = path if op == "modified" else None
            continue
        header = _GIT_HEADER.match(line)
        if header:
            if git is not None and not git_decided:
                note(git[1], "modified")
            git = (
                _strip_side(_diff_path(header.group(1)), "a/"),
                _strip_side(_diff_path(header.group(2)), "b/"),
            )
            git_decided = False
            continue
        if git is not None and not git_decided:
            if line.startswith("new file mode"):
                note(git[1], "created")
                git_decided = True
                continue
            if line.startswith("deleted file mode"):
                note(git[0], "deleted")
                git_decided = True
                continue
            if line.startswith("rename to "):
                note(git[0], "deleted")
                note(git[1], "created")
                git_decided = True
                continue
        hunk = _HUNK.match(line)
        if hunk:
            old_left = int(hunk.group(1)) if hunk.group(1) is not None else 1
            new_left = int(hunk.group(2)) if hunk.group(2) is not None else 1
            continue
        if line.startswith("--- ") and index < len(lines) and lines[index].startswith("+++ "):
            old, new = _diff_path(line[4:]), _diff_path(lines[index][4:])
            index += 1
            if git is not None and git_decided:
                continue
            git_decided = git is not None
            # The side prefixes are git's; a `/dev/null` side means the other one has its own.
            sided = old.startswith("a/") or old == "/dev/null"
            sided = sided and (new.startswith("b/") or new == "/dev/null")
            if git is not None or sided:
                old, new = _strip_side(old, "a/"), _strip_side(new, "b/")
            if old == "/dev/null" and new != "/dev/null":
                note(new, "created")
            elif new == "/dev/null" and old != "/dev/null":
                note(old, "deleted")
            elif new != "/dev/null":
                note(new, "modified")
    if git is not None and not git_decided:
        note(git[1], "modified")
    return tuple(files.items())


# --- turns a harness writes in the user's name ----------------------------------------------


@dataclass(frozen=True)
class HarnessRecord:
    """A user turn an agent's harness writes (aider's), known by how it opens: not the user's
    words, but what it records — a command and its output (`run`; `failed`: the harness
    sends it only when the command failed, as aider's lint report), files added to the chat
    (`files`: named in the opening, or each on the line before its fenced content), a commit
    (`commit`), context it sends every time (`context`: aider's repo map), or nothing worth
    keeping (`none`)."""

    agents: tuple[str, ...]
    opening: re.Pattern[str]
    kind: Literal["run", "files", "commit", "context", "none"]
    failed: bool = False


_AIDER = ("aider",)
HARNESS_RECORDS: tuple[HarnessRecord, ...] = (
    # `/run`, `/test` and the auto-test: `prompts.run_output`.
    HarnessRecord(
        _AIDER,
        re.compile(r"I ran this command:\n\n(?P<command>.+?)\n\nAnd got this output:\n\n?", re.S),
        "run",
    ),
    # The auto-lint's report, sent only when the linter found something.
    HarnessRecord(
        _AIDER,
        re.compile(
            r"# Fix any errors below, if possible\.\n\n## Running: (?P<command>[^\n]+)\n\n?"
        ),
        "run",
        failed=True,
    ),
    # `prompts.added_files`, and the files' content (`files_content_prefix`).
    HarnessRecord(
        _AIDER,
        re.compile(
            r"I added these files to the chat: (?P<files>[^\n]+)\n"
            r"Let me know if there are others we should add\.?"
        ),
        "files",
    ),
    HarnessRecord(
        _AIDER,
        re.compile(r"I have \*added these files to the chat\* so you can go ahead and edit them\."),
        "files",
    ),
    # `repo_content_prefix`: the repo map, sent first, anew with every request.
    HarnessRecord(
        _AIDER,
        re.compile(r"Here are summaries of some files present in my git repository\.\n"),
        "context",
    ),
    # `files_content_gpt_edits`: the commit aider made of the assistant's edits.
    HarnessRecord(
        _AIDER,
        re.compile(
            r"I committed the changes with git hash (?P<hash>[0-9a-f]{7,40}) & commit msg: "
            r"(?P<message>[^\n]+)"
        ),
        "commit",
    ),
    HarnessRecord(
        _AIDER,
        re.compile(
            r"I didn't see any properly formatted edits in your reply\?!"
            r"|I edited the files myself\.|I updated the files\.\s*\Z"
        ),
        "none",
    ),
)


def shell_call(command: str) -> tuple[str, str]:
    """(tool, arguments JSON) of a shell call running `command`: how an action written as
    text, or reported by a harness, is read as a call."""
    return "shell", json.dumps({"command": command})


@dataclass(frozen=True)
class HarnessTurn:
    """What one harness-written turn records (`HarnessRecord`): `output_at` is where the
    output it carries starts (-1: none)."""

    kind: Literal["run", "files", "commit", "context", "none"]
    command: str | None = None
    output_at: int = -1
    failed: bool = False
    files: tuple[str, ...] = ()
    commit: tuple[str, str] | None = None  # (hash, message)


# A file's content in a harness's turn: its path alone on a line, the fence on the next.
_SHOWN_FILE = re.compile(r"^(\S+)\n```", re.MULTILINE)


def harness_turn(text: str) -> HarnessTurn | None:
    """What `text` records, if a harness wrote it (`HARNESS_RECORDS`), else None."""
    start = len(text) - len(text.lstrip())
    if not text.startswith(("I ", "# Fix", "Here are "), start):
        return None
    for record in HARNESS_RECORDS:
        match = record.opening.match(text, start)
        if match is None:
            continue
        named = match.groupdict()
        if record.kind == "run":
            command = named["command"].strip()
            return HarnessTurn("run", command, match.end(), record.failed)
        if record.kind == "files":
            listed = named.get("files")
            if listed:
                files = tuple(f.strip() for f in listed.split(",") if f.strip())
                return HarnessTurn("files", files=files)
            shown = tuple(m.group(1) for m in _SHOWN_FILE.finditer(text, match.end()))
            return HarnessTurn("files", output_at=match.end(), files=shown)
        if record.kind == "commit":
            return HarnessTurn("commit", commit=(named["hash"], named["message"].strip()))
        if record.kind == "context":
            return HarnessTurn("context", output_at=match.end())
        return HarnessTurn("none")
    return None


# --- the code a call wrote -------------------------------------------------------------------

_WRITING_OPS = frozenset({"created", "modified", "written"})


class WrittenCode(NamedTuple):
    """The code a call wrote into one file: what it put in, and what it took out."""

    path: str
    added: str
    removed: str


def written_code(name: str, arguments: Mapping[str, object]) -> tuple[WrittenCode, ...]:
    """For each file a call wrote code into, what it put in and what it took out: a patch's
    added and removed lines per file, or an editor call's new text and the text it replaces
    (`old_string`, a SEARCH half)."""
    row = _row_for(name)
    if row is None or row.kind not in ("file", "patch"):
        return ()
    if row.kind == "patch":
        for key in row.patch_keys:
            value = arguments.get(key)
            if isinstance(value, str):
                return _patch_changes(value)
        return ()
    paths = [a.path for a in _file_actions(row, arguments) if a.path and a.op in _WRITING_OPS]
    if not paths:
        return ()
    values = [(k, v) for k, v in arguments.items() if k not in {*row.path_keys, row.subcommand_key}]
    added = "\n".join(_put_in(v, True) for k, v in values if _puts_in(k))
    removed = "\n".join(
        [_put_in(v, False) for k, v in values if _puts_in(k)]
        + [v for k, v in values if isinstance(v, str) and not _puts_in(k)]
    )
    return (WrittenCode(paths[0], added, removed),) if added.strip() or removed.strip() else ()


@functools.lru_cache(maxsize=512)
def _puts_in(key: str) -> bool:
    """Whether an argument named `key` holds what an edit puts in (not `old_string`)."""
    return not name_words(key) & _REPLACED_WORDS


def _put_in(value: object, added: bool) -> str:
    """The text an argument's value puts into a file (`added`), or takes out of it: a
    string's halves of its SEARCH/REPLACE blocks, when it holds some (else the string, put
    in), or those of a list of edits (their new texts, or their old ones)."""
    if isinstance(value, str):
        if "SEARCH" in value:
            return _block_halves(value, "replace" if added else "search")
        return value if added else ""
    if isinstance(value, list):
        edits = [item for item in value if isinstance(item, Mapping)]
        if added:
            return "\n".join(_put_in(v, True) for e in edits for k, v in e.items() if _puts_in(k))
        return "\n".join(
            _put_in(v, False) if _puts_in(k) else (v if isinstance(v, str) else "")
            for e in edits for k, v in e.items()
        )  # fmt: skip
    return ""


def _block_halves(text: str, half: Literal["search", "replace"]) -> str:
    """The SEARCH or REPLACE halves of the SEARCH/REPLACE blocks in `text` (for REPLACE, all
    of it when it holds no block)."""
    kept: list[str] = []
    state = "out"
    for line in text.splitlines():
        if _SEARCH_START.match(line):
            state = "search"
        elif state == "search" and _DIVIDER.match(line):
            state = "replace"
        elif state == "replace" and _REPLACE_END.match(line):
            state = "out"
        elif state == half:
            kept.append(line)
    if half == "replace" and not kept and "<<<<<<< SEARCH" not in text:
        return text
    return "\n".join(kept)


def _patch_changes(text: str) -> tuple[WrittenCode, ...]:
    """Each file's added and removed lines in a patch (`*** Begin Patch` or unified diff)."""
    changes: dict[str, tuple[list[str], list[str]]] = {}
    current: str | None = None
    for line in text.splitlines():
        marker = _PATCH_MARKER.match(line)
        if marker is not None:
            current = marker.group(2) if marker.group(1) in ("Add", "Update") else None
            current = marker.group(3) or current
        elif line.startswith("+++ "):
            path = _strip_side(_diff_path(line[4:]), "b/")
            current = None if path == "/dev/null" else path
        elif line.startswith("--- "):
            continue
        elif line.startswith(("+", "-")) and current is not None:
            added, removed = changes.setdefault(current, ([], []))
            (added if line[0] == "+" else removed).append(line[1:])
    return tuple(
        WrittenCode(path, "\n".join(added), "\n".join(removed))
        for path, (added, removed) in changes.items()
    )


def _starts_file(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    if line.startswith("diff --git ") or _PATCH_MARKER.match(line):
        return True
    return (
        line.startswith("--- ")
        and index + 2 < len(lines)
        and lines[index + 1].startswith("+++ ")
        and lines[index + 2].startswith("@@")
    )


def _diff_path(raw: str) -> str:
    """A path as a diff header writes it: without a tab-separated timestamp or quotes, and
    without the `a/` / `b/` side prefix of a `diff --git` line."""
    path = raw.split("\t", 1)[0].strip()
    if len(path) >= 2 and path[0] == path[-1] == '"':
        path = path[1:-1]
    return path


def _strip_side(path: str, side: str) -> str:
    return path[len(side) :] if path.startswith(side) else path


# --- actions written as text ----------------------------------------------------------------

_SEARCH_START = re.compile(r"^\s*<{5,9} SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE_END = re.compile(r"^\s*>{5,9} REPLACE\s*$")
_FENCE_LINE = re.compile(r"^\s*`{3,}")
_FENCE_OPEN = re.compile(r"^(`{3,})([\w+.-]*)[ \t]*([^`]*?)[ \t]*$")
# Fence tags a shell action is written in (mini-SWE-agent's own tag included); an untagged
# fence and a `<command>` tag are actions too.
SHELL_FENCES = frozenset(
    {"", "command", "bash", "sh", "shell", "zsh", "console", "terminal", "mswea_bash_command"}
)
# Fence tags (and languages) of Python code an agent runs.
PYTHON_FENCES = frozenset({"py", "python", "python3", "ipython"})
_SHELL_LANGUAGES = SHELL_FENCES | {"powershell", "pwsh", "cmd"}
# Tags an action is written between, by the fence tag they stand for: SWE-agent's
# `<command>`, smolagents' `<code>` (Python), OpenHands CodeAct's `<execute_bash>` and
# `<execute_ipython>`.
_TAG_BLOCKS = {
    "command": ("<command>", "</command>"),
    "py": ("<code>", "</code>"),
    "bash": ("<execute_bash>", "</execute_bash>"),
    "ipython": ("<execute_ipython>", "</execute_ipython>"),
}
_DIFF_FENCES = frozenset({"diff", "patch", "udiff"})


def actions_in_text(text: str) -> tuple[Action, ...]:
    """Actions an agent without tool calls wrote in its message.

    - aider's SEARCH/REPLACE blocks: the file named on the line before the opening fence (or
      before `<<<<<<< SEARCH`; a block without one edits the previous block's file); an empty
      SEARCH section creates the file, any other modifies it;
    - diffs in ```diff fences and `*** Begin Patch` blocks: the files they name;
    - the action of mini-SWE-agent and SWE-agent: the last fenced block (```bash, ```,
      ```mswea_bash_command) or `<command>` tag, when it is the message's last block. A
      SWE-agent editor command (`open`, `create`, `edit`, `str_replace_editor …`, `submit`)
      means what the table says; anything else is a command;
    - the code of a code agent (smolagents' CodeAgent: a `<code>` tag or a ```py fence, the
      message's last block): what `python_actions` reads in it;
    - a plan written as a list (`plan_in_prose`): the to-do list, stated whole.

    Whether a written action actually ran is for the caller to decide (an environment's
    output follows it).
    """
    files: dict[str, FileOp] = {}

    def note(path: str, op: FileOp) -> None:
        if files.get(path) == "created" and op == "modified":
            return
        files[path] = op

    for path, op in _search_replace_files(text):
        note(path, op)
    blocks = _blocks(text)
    for block in blocks:
        if block.tag in _DIFF_FENCES or (block.tag == "" and _PATCH_START.match(block.body)):
            for path, op in files_in_patch(block.body):
                note(path, op)
    if "*** Begin Patch" in text and not any("*** Begin Patch" in b.body for b in blocks):
        for path, op in files_in_patch(text):
            note(path, op)
    actions = [Action("file", path=p, op=op) for p, op in files.items()]
    plan = plan_in_prose(text)
    if plan:
        actions.append(Action("todos", todos=plan))
    step = react_step(text)
    if step is not None:
        actions.extend(actions_of_call(step.tool, step.arguments))
    use = xml_tool_use(text)
    if use is not None:
        actions.extend(actions_of_call(use.tool, use.arguments))
    if blocks:
        tag, body, before, argument = blocks[-1]
        if tag in SHELL_FENCES and not _is_edit_block(body) and _is_action(tag, body, before):
            actions.extend(_text_action(body))
        elif tag in PYTHON_FENCES:
            actions.extend(python_actions(body))
        elif tag and " " not in argument and looks_like_path(argument):
            # A block opened by a tool's name and the file it acts on (gptme's ```save
            # <path>, ```append <path>, ```patch <path>): what the name says of the file.
            actions.extend(a for a in _fallback_actions(tag, {"path": argument}) if a.path)
    return tuple(actions)


# The ReAct text protocol (LangChain's ReAct agents, CrewAI): `Action: <tool>`, then
# `Action Input: <arguments>` (a JSON object, or text), then the tool's answer after
# `Observation:`, in the same message where the executor appends it there (CrewAI).
_REACT_ACTION = re.compile(r"^Action:[ \t]*([\w.-]+)[ \t]*\nAction Input:[ \t]*", re.MULTILINE)
_REACT_OBSERVATION = re.compile(r"[ \t]*\nObservation:[ \t]?")


@dataclass(frozen=True, slots=True)
class ReactStep:
    """A ReAct step written in an assistant's text: the tool, its arguments, the tool's
    answer when the message holds it, and where the step starts (the prose ends there)."""

    tool: str
    arguments: dict[str, object]
    observation: str | None
    start: int


def react_step(text: str) -> ReactStep | None:
    """The ReAct step `text` writes; None when it writes none. Arguments that are no JSON
    object are the tool's one input (`{"input": text}`)."""
    if "Action Input:" not in text:
        return None
    found = _REACT_ACTION.search(text)
    if found is None:
        return None
    observed = _REACT_OBSERVATION.search(text, found.end())
    raw = text[found.end() : observed.start() if observed else len(text)].strip()
    try:
        arguments = json.loads(raw)
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        arguments = {"input": raw}
    observation = text[observed.end() :] if observed else None
    return ReactStep(found.group(1), arguments, observation, found.start())


# A tool use written as XML at the end of the assistant's text (Cline's and Roo Code's classic
# protocol): `<tool>` then one `<parameter>value</parameter>` per argument, then `</tool>`.
_XML_CLOSE = re.compile(r"</([a-z][a-z0-9_]*)>\s*\Z")
_XML_PARAMETER = re.compile(r"<([a-z][a-z0-9_]*)>\n?(.*?)\n?</\1>", re.S)
#: The tool that calls another through an MCP server, and where it names that tool.
_MCP_CALL = "use_mcp_tool"


@dataclass(frozen=True, slots=True)
class XmlToolUse:
    """A tool use written as XML at the end of an assistant's text: the tool, its arguments,
    and where the use starts (the prose ends there)."""

    tool: str
    arguments: dict[str, object]
    start: int


def xml_tool_use(text: str) -> XmlToolUse | None:
    """The tool use written as XML at the end of `text`; an MCP server's tool called through
    `use_mcp_tool` is that tool, with its JSON arguments (and the use's other parameters, a
    `task_progress` checklist). None when `text` ends on none."""
    if not text.rstrip().endswith(">"):
        return None
    close = _XML_CLOSE.search(text, max(len(text.rstrip()) - 80, 0))
    if close is None:
        return None
    name = close.group(1)
    start = text.rfind(f"<{name}>", 0, close.start())
    body = text[start + len(name) + 2 : close.start()] if start != -1 else ""
    if not body.lstrip().startswith("<"):
        return None
    arguments: dict[str, object] = dict(_XML_PARAMETER.findall(body))
    if not arguments:
        return None
    if name == _MCP_CALL and isinstance(arguments.get("tool_name"), str):
        try:
            inner = json.loads(str(arguments.get("arguments") or "{}"))
        except ValueError:
            inner = None
        rest = {
            k: v for k, v in arguments.items() if k not in ("server_name", "tool_name", "arguments")
        }
        name = str(arguments["tool_name"])
        arguments = {**(inner if isinstance(inner, dict) else {}), **rest}
    return XmlToolUse(name, arguments, start)


def _line_before(text: str, position: int) -> str:
    """The line before the one `position` is on, stripped ("" on the first line)."""
    line_start = text.rfind("\n", 0, position)
    if line_start == -1:
        return ""
    return text[text.rfind("\n", 0, line_start) + 1 : line_start].strip()


class _Block(NamedTuple):
    """A fenced or tagged block of a message: its fence tag, body, the line before it, and
    what follows the tag on the opening line (gptme's ```save <path>)."""

    tag: str
    body: str
    before: str
    argument: str = ""


def _blocks(text: str) -> list[_Block]:
    """The fenced blocks and tagged blocks (`_TAG_BLOCKS`) of a message in order; a
    `<command>` tag has the tag `command`, a `<code>` tag `py`. One pass: an unclosed fence
    or tag ends the scan."""
    found: list[tuple[int, _Block]] = []
    lines = text.split("\n")
    offset = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = _FENCE_OPEN.match(line)
        if opening is None:
            offset += len(line) + 1
            index += 1
            continue
        closing = re.compile(f"`{{{len(opening.group(1))},}}[ \t]*")
        end = next((j for j in range(index + 1, len(lines)) if closing.fullmatch(lines[j])), None)
        if end is None:
            break
        before = lines[index - 1].strip() if index else ""
        body = "\n".join(lines[index + 1 : end])
        found.append((offset, _Block(opening.group(2).lower(), body, before, opening.group(3))))
        offset += sum(len(lines[j]) + 1 for j in range(index, end + 1))
        index = end + 1
    for tag, (open_tag, close_tag) in _TAG_BLOCKS.items():
        start = text.find(open_tag)
        while start != -1:
            end = text.find(close_tag, start)
            if end == -1:
                break
            body = text[start + len(open_tag) : end].removeprefix("\n")
            found.append((start, _Block(tag, body, _line_before(text, start))))
            start = text.find(open_tag, end)
    found.sort(key=lambda block: block[0])
    return [block for _, block in found]


_COMMAND_START = re.compile(r"^(?:[A-Za-z_]\w*=\S*\s+)*[\w./~-][\w./~+:-]*(?:\s|$)")


def _is_action(tag: str, body: str, before: str) -> bool:
    """Whether a shell-tagged block reads as an action. An untagged fence is also how models
    quote code and prose, so it counts only when its first line starts like a command and it
    does not follow a file name (aider's whole-file edit format)."""
    if tag:
        return True
    first = body.strip().split("\n", 1)[0]
    if not _COMMAND_START.match(first):
        return False
    return not (before and " " not in before and looks_like_path(before.strip("`*:")))


def _is_edit_block(body: str) -> bool:
    return any(_SEARCH_START.match(line) for line in body.splitlines()) or bool(
        _PATCH_START.match(body)
    )


#: Where code written in the assistant's reply, in no file, is filed.
IN_REPLY = "(code in a reply)"


def code_in_text(text: str) -> tuple[WrittenCode, ...]:
    """Code the assistant wrote in its text: each SEARCH/REPLACE edit's halves by file, and
    the code blocks of its reply that are neither an edit nor a command (SQL it hands over, a
    snippet), under `IN_REPLY`."""
    halves: dict[str, tuple[list[str], list[str]]] = {}
    for name, searched, replaced in _search_replace_edits(text):
        added, removed = halves.setdefault(name, ([], []))
        added.extend(replaced)
        removed.extend(searched)
    found = [WrittenCode(p, "\n".join(a), "\n".join(r)) for p, (a, r) in halves.items()]
    snippets = [
        block.body
        for block in _blocks(text)
        if block.tag
        and block.tag not in SHELL_FENCES
        and block.tag not in _DIFF_FENCES
        and not _is_edit_block(block.body)
    ]
    if snippets:
        found.append(WrittenCode(IN_REPLY, "\n".join(snippets), ""))
    return tuple(found)


def _search_replace_files(text: str) -> Iterator[tuple[str, FileOp]]:
    for name, search, _ in _search_replace_edits(text):
        yield name, ("modified" if "".join(search).strip() else "created")


def _search_replace_edits(text: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """Each SEARCH/REPLACE block of `text`: the file it edits (a block naming none edits the
    file of the block before it), its SEARCH lines and its REPLACE lines."""
    lines = text.splitlines()
    current: str | None = None
    index = 0
    while index < len(lines):
        if not _SEARCH_START.match(lines[index]):
            index += 1
            continue
        current = _aider_filename(lines, index) or current
        end = index + 1
        searched: list[str] = []
        replaced: list[str] = []
        while end < len(lines) and not _DIVIDER.match(lines[end]):
            searched.append(lines[end])
            end += 1
        end += 1
        while end < len(lines) and not _REPLACE_END.match(lines[end]):
            replaced.append(lines[end])
            end += 1
        if current:
            yield current, searched, replaced
        index = end + 1


def _aider_filename(lines: Sequence[str], search_line: int) -> str | None:
    """The file a SEARCH block edits: the line before its opening fence (aider also accepts
    it right before `<<<<<<< SEARCH`), stripped of the `:`, `#`, `*` and backticks models
    wrap it in."""
    before = search_line - 1
    if before >= 0 and _FENCE_LINE.match(lines[before]):
        before -= 1
    if before < 0:
        return None
    name = lines[before].strip().rstrip(":").lstrip("#").strip().strip("`*").strip()
    if not name or _FENCE_LINE.match(name) or len(name) > 250:
        return None
    if " " in name and not looks_like_path(name):
        return None
    return name


def _text_action(body: str) -> tuple[Action, ...]:
    action = body.strip()
    if not action:
        return ()
    first = action.splitlines()[0]
    word = first.split(maxsplit=1)[0]
    row = _BY_NAME.get(word)
    if row is None or row.positional is None:
        return command_actions(action)
    try:
        tokens = shlex.split(first)
    except ValueError:
        tokens = first.split()
    arguments = dict(zip(row.positional, tokens[1:], strict=False))
    return tuple(_row_actions(row, arguments))


# --- tool calls written as JSON in the reply (Codebuff) --------------------------------------

# Codebuff's calls: JSON in an element of the reply, the tool's name under `cb_tool_name`
# and `cb_easp` set in the one that ends the step (common/src/tools/utils.ts).
_TEXT_CALL = re.compile(r"<codebuff_tool_call>\s*(\{.*?\})\s*</codebuff_tool_call>", re.S)
_TEXT_CALL_MARKS = ("cb_tool_name", "cb_easp")
# Its results, each a user message (or a part of one): `<tool_result>` around
# `{toolName, toolCallId, output}` (common/src/util/messages.ts).
_TEXT_RESULT = re.compile(r"\A\s*<tool_result>\s*(\{.*\})\s*</tool_result>\s*\Z", re.S)


@dataclass(frozen=True, slots=True)
class TextCall:
    """A tool call written as JSON in an assistant's reply."""

    name: str
    arguments: dict[str, object]


@dataclass(frozen=True, slots=True)
class TextResult:
    """The result of a call written in text: its tool, its id, its output as text (JSON
    where the tool returned a value)."""

    name: str
    call_id: str
    output: str


@text_cache()
def text_calls(text: str) -> tuple[str, tuple[TextCall, ...]] | None:
    """The tool calls a reply writes as JSON elements (Codebuff's `<codebuff_tool_call>`),
    in order, and its prose without them; None where it writes none."""
    if "<codebuff_tool_call>" not in text:
        return None
    calls = []
    for match in _TEXT_CALL.finditer(text):
        value = json_object(match.group(1))
        if value is not None and isinstance(name := value.get("cb_tool_name"), str):
            arguments = {k: v for k, v in value.items() if k not in _TEXT_CALL_MARKS}
            calls.append(TextCall(name, arguments))
    if not calls:
        return None
    return _TEXT_CALL.sub("", text).strip(), tuple(calls)


@text_cache()
def text_result(text: str) -> TextResult | None:
    """The result of a call written in text that a user message's text is
    (`<tool_result>{toolName, toolCallId, output}</tool_result>`); None where it is none."""
    if "<tool_result>" not in text[:40]:
        return None
    match = _TEXT_RESULT.match(text)
    value = json_object(match.group(1)) if match else None
    if value is None or not isinstance(name := value.get("toolName"), str):
        return None
    output = value.get("output")
    shown = output if isinstance(output, str) else json.dumps(output, indent=2)
    return TextResult(name, str(value.get("toolCallId") or ""), shown)


def text_result_text(result: TextResult, output: str) -> str:
    """A result of a call written in text, as its user message holds it, with `output` (a
    placeholder masking the original) in its place."""
    value = {"toolName": result.name, "toolCallId": result.call_id, "output": output}
    return f"<tool_result>\n{json.dumps(value, indent=2)}\n</tool_result>"


# --- exit status in a command's result ------------------------------------------------------


@dataclass(frozen=True)
class ExitStatusShape:
    """How a tool's result states the command's exit status: `pattern` matched at the start
    of the result (`at="start"`), or its last match in the result's tail (`at="end"`); the
    status is its first group that matched, or `status` where the shape itself is the
    verdict. `tools` limits the shape to those tool names (empty: any). `hint`: text every
    match holds, looked for first (a substring search spares the pattern most outputs)."""

    agents: tuple[str, ...]
    pattern: re.Pattern[str]
    at: Literal["start", "end"] = "start"
    tools: tuple[str, ...] = ()
    status: int | None = None
    hint: str = ""


# Trailers sit at the very end of a result; a long output is not searched whole for them.
_TAIL_CHARS = 4000


_CLINE_PREFIX = r"(?:\[execute_command for '[\s\S]*?'\] Result:\n)?"
EXIT_STATUS_SHAPES: tuple[ExitStatusShape, ...] = (
    # Claude Code's Bash opens a failed command's result with it.
    ExitStatusShape(_CC, re.compile(r"Exit code (-?\d+)(?:\n|\Z)"), tools=("Bash",)),
    # Codex: freeform exec output, then unified exec (`exec_command`, `write_stdin`).
    ExitStatusShape(_CODEX, re.compile(r"Exit code: (-?\d+)\nWall time:")),
    ExitStatusShape(
        _CODEX,
        re.compile(
            r"(?:Command: [^\n]*\n)?(?:Chunk ID: [^\n]*\n)?Wall time: [^\n]*\n"
            r"Process exited with code (-?\d+)"
        ),
    ),
    ExitStatusShape(
        _CLINE,
        re.compile(
            _CLINE_PREFIX + r"Command (?:executed successfully \(exit code (-?\d+)\)"
            r"|failed with exit code (-?\d+))"
        ),
    ),
    ExitStatusShape(
        _CLINE,
        re.compile(r"\[Command completed with exit code (-?\d+)\]\s*\Z"),
        at="end",
        hint="exit code",
    ),
    ExitStatusShape(
        _ROO,
        re.compile(
            _CLINE_PREFIX + r"Command executed in terminal within working directory '[^\n]*'\. "
            r"(?:Command execution was not successful, inspect the cause and adjust as needed\.\n)?"
            r"Exit code: (-?\d+)"
        ),
    ),
    # OpenHands (and SWE-agent's own shell wrapper) close a command's output with a trailer.
    ExitStatusShape(
        ("openhands", "swe-agent"),
        re.compile(
            r"\[(?:Command finished with exit code (-?\d+)"
            r"|The command completed with exit code (-?\d+)\.)\]"
        ),
        at="end",
        hint="exit code",
    ),
    ExitStatusShape(("mini-swe-agent",), re.compile(r"<returncode>(-?\d+)</returncode>")),
    # AutoGen's code executors answer the blocks they ran with it.
    ExitStatusShape(
        ("autogen",), re.compile(r"exitcode: (-?\d+) \(execution (?:succeeded|failed)\)")
    ),
    # Gemini CLI states the exit code only when it is not zero.
    ExitStatusShape(
        _GEMINI,
        re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE),
        at="end",
        tools=("run_shell_command",),
        hint="Exit Code: ",
    ),
    # SWE-agent says so for any command with no output; it does not check the exit status.
    ExitStatusShape(
        _SWE,
        re.compile(r"Your command ran successfully and did not produce any output\.\s*\Z"),
        status=0,
    ),
)
# JSON results: Codex's structured exec output, mini-SWE-agent's tool-calling observation.
_JSON_EXIT_PATHS: tuple[tuple[str, ...], ...] = (("metadata", "exit_code"), ("returncode",))
_JSON_OUTPUT_KEYS = ("output", "output_head")


def command_exit_status(name: str | None, output: str) -> int | None:
    """The exit status a known tool's result states in its own shape (`EXIT_STATUS_SHAPES`,
    Codex's and mini-SWE-agent's JSON); None where the result does not state one. Absence of
    a statement is not read as success: Claude Code and Gemini CLI state only failures."""
    stripped = output.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        status = _json_exit_status(stripped)
        if status is not None:
            return status
    start = len(output) - len(output.lstrip())
    tail = output[-_TAIL_CHARS:]
    for shape in _shapes_for(name):
        if shape.hint and shape.hint not in tail:
            continue
        if shape.at == "start":
            match = shape.pattern.match(output, start)
        else:
            matches = list(shape.pattern.finditer(tail))
            match = matches[-1] if matches else None
        if match is None:
            continue
        if shape.status is not None:
            return shape.status
        value = next((g for g in match.groups() if g is not None), None)
        if value is not None:
            return int(value)
    return None


def _shapes_for(name: str | None) -> tuple[ExitStatusShape, ...]:
    if name is None:
        return EXIT_STATUS_SHAPES
    return tuple(s for s in EXIT_STATUS_SHAPES if not s.tools or name in s.tools)


def _json_exit_status(text: str) -> int | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not any(k in data for k in _JSON_OUTPUT_KEYS):
        return None
    for path in _JSON_EXIT_PATHS:
        value: object = data
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


# --- actions written as Python code (code agents) ------------------------------------------

# Calls that are Python's own, not an agent's tools (`open` is read below).
_BUILTINS = frozenset(dir(builtins)) - {"open"}
_PATH_METHODS: dict[str, FileOp] = {
    "read_text": "read",
    "read_bytes": "read",
    "open": "read",
    "write_text": "written",
    "write_bytes": "written",
    "unlink": "deleted",
    "touch": "created",
}
_MOVES = {("os", "rename"), ("os", "replace"), ("shutil", "move")}
_COPIES = {("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile")}
_REMOVES = {("os", "remove"), ("os", "unlink")}
_RUNS = {("subprocess", n) for n in ("run", "call", "check_call", "check_output", "Popen")}


def python_actions(code: str) -> tuple[Action, ...]:
    """What Python code an agent ran evidently did, call by call in the order written: the
    files it reads, writes, removes or moves by literal paths (`open(p, "w")`,
    `Path(p).write_text(…)`, `os.remove(p)`, `shutil.move(a, b)`; a name bound once to a
    path counts as it), the commands it runs (`subprocess.run(…)`, `os.system(…)`), and the
    tools it calls as functions with literal keyword arguments (a code agent's tools:
    `run_shell(command=…)`, `read_file(path=…)`; `final_answer(…)` is its final answer),
    read through the table. Code that does not parse does nothing."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return ()
    bound = _bound_paths(tree)
    calls = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return tuple(a for call in calls for a in _call_actions(call, bound))


def _bound_paths(tree: ast.AST) -> dict[str, str]:
    """Names assigned once, to a literal string or `Path("…")`."""
    seen: dict[str, int] = {}
    values: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                seen[target.id] = seen.get(target.id, 0) + 1
                value = _path_of(node.value, {})
                if value is not None:
                    values[target.id] = value
    return {name: value for name, value in values.items() if seen[name] == 1}


def _path_of(node: ast.expr, bound: Mapping[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if _plausible_path(node.value) else None
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Call) and _dotted(node.func)[-1:] == ("Path",) and node.args:
        return _path_of(node.args[0], bound)
    return None


def _dotted(node: ast.expr) -> tuple[str, ...]:
    """`os.path.join` as ("os", "path", "join"); () for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return (*base, node.attr) if base else ()
    return ()


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _call_actions(call: ast.Call, bound: Mapping[str, str]) -> Iterator[Action]:
    func = call.func
    args = call.args
    name = _dotted(func)
    if isinstance(func, ast.Attribute) and func.attr in _PATH_METHODS and name[:1] != ("os",):
        path = _path_of(func.value, bound)
        if path is not None:
            yield Action("file", path=path, op=_PATH_METHODS[func.attr])
        return
    pair = name[-2:] if len(name) >= 2 else None
    if pair in _REMOVES and args and (path := _path_of(args[0], bound)):
        yield Action("file", path=path, op="deleted")
    elif pair in _MOVES | _COPIES and len(args) >= 2:
        source, target = _path_of(args[0], bound), _path_of(args[1], bound)
        if source and target:
            moved = pair in _MOVES
            yield Action("file", path=source, op="deleted" if moved else "read")
            yield Action("file", path=target, op="created" if moved else "written")
    elif (pair in _RUNS or name == ("os", "system")) and args:
        command = command_text(_literal(args[0]))
        if command:
            yield from command_actions(command)
    elif name == ("open",) and args and (path := _path_of(args[0], bound)):
        mode = (
            _literal(args[1])
            if len(args) > 1
            else next((_literal(k.value) for k in call.keywords if k.arg == "mode"), "r")
        )
        mode = mode if isinstance(mode, str) else "r"
        op: FileOp = "written" if ("w" in mode or "x" in mode) else "read"
        yield Action("file", path=path, op="modified" if "a" in mode else op)
    elif len(name) == 1 and name[0] not in _BUILTINS:
        arguments = {k.arg: _literal(k.value) for k in call.keywords if k.arg}
        if name[0] == "final_answer":
            answer = _literal(args[0]) if args else arguments.get("answer")
            yield Action("final", text=answer if isinstance(answer, str) else None)
            return
        row = _BY_NAME.get(name[0]) if args else None
        if row is not None and row.positional:
            # A tool with a positional signature (an agent skill: `open_file('a.py')`).
            positions = zip(row.positional, (_literal(a) for a in args), strict=False)
            arguments = {**{k: v for k, v in positions if v is not None}, **arguments}
        if arguments:
            yield from actions_of_call(name[0], arguments)


# --- a plan written as a list ---------------------------------------------------------------

# A line naming the plan the list under it is: `## 2. Plan`, `Here's the plan:`, `Recap of
# the plan:`, `Next steps:`, `To-do:`.
_PLAN_LINE = re.compile(
    r"^\s*(?:#+\s*)?(?:\d+\.\s*)?(?:[\w' ]{0,40}\b)?(?:plan|to-?dos?|(?:next\s+)?steps)\b"
    r"(?:\s+of\s+action)?[^\n]{0,40}:?\s*$",
    re.IGNORECASE,
)
# An item: numbered or bulleted, or "Step N"; its state in a checkbox, or in words in brackets
# after the step's number ("Step 2 [in progress]: …").
_PLAN_ITEM = re.compile(
    r"^\s*(?:(?:\d+[.)]|[-*])\s+|step\s+\d+\b\s*)"
    r"(?:\[([ xX~-])\]\s+|\[(done|completed|in progress|not started|pending|dropped|cancelled)\]"
    r":?\s+|:\s*)?(.+?)\s*$",
    re.IGNORECASE,
)
# A line titling the list under it, that word alone: `**Progress**`, `## Checklist`, `Tasks:`,
# `Remaining:`. The list under such a title is the whole list, one item or more.
_LIST_TITLE = re.compile(
    r"^\s*(?:#+\s*)?\**\s*(?:progress|checklist|tasks?|task\s+list|work\s+items|remaining"
    r"|still\s+to\s+do|left\s+to\s+do|outstanding|open\s+items)\s*\**:?\**\s*$",
    re.IGNORECASE,
)
# An item's state as a mark before it (the glyphs chat UIs draw a to-do list with).
_MARKS: dict[str, TodoStatus] = {
    **dict.fromkeys(("✅", "✔️", "✔", "☑️", "☑", "☒", "✓"), "completed"),
    **dict.fromkeys(("🔄", "⏳", "🚧", "▶️", "▶", "◐"), "in_progress"),
    **dict.fromkeys(("⬜", "☐", "🔲", "◻️", "◻", "○"), "pending"),
    **dict.fromkeys(("🚫", "❌", "✖️", "✖", "✗"), "cancelled"),
}
_MARKED_ITEM = re.compile(
    r"^\s*(?:[-*]\s+)?("
    + "|".join(sorted(map(re.escape, _MARKS), key=len, reverse=True))
    + r")\s*(.+?)\s*$"
)
_STRUCK = re.compile(r"^~~(.+)~~$")
# An item's state in its own words, closing it: `(done)`, `— in progress`, `- dropped`.
_ITEM_STATE = re.compile(
    r"\s*(?:\((done|completed|in progress|dropped|cancelled|skipped)\)"
    r"|[—–-]\s+(done|completed|in progress|dropped|cancelled|skipped))\.?$",
    re.IGNORECASE,
)


_ANSWER = re.compile(r"\A\s*<answer>\s*(.*?)\s*</answer>", re.DOTALL)


# What an agent writes above every tool's output (OpenManus: "Observed output of cmd `bash`
# executed:"): the output proper follows it.
_RESULT_HEADER = re.compile(r"\AObserved output of cmd `[^`\n]{1,80}` executed:\n")


def unwrapped(output: str) -> str:
    """A tool's output without the line an agent writes above every one."""
    header = _RESULT_HEADER.match(output)
    return output[header.end() :] if header else output


def answer_of(result: str) -> str:
    """The user's answer in the result of an `ask` call: inside Cline's and Roo Code's
    `<answer>` tags, or the whole result."""
    answer = _ANSWER.match(result)
    return (answer.group(1) if answer else result).strip()


@dataclass(frozen=True, slots=True)
class UserReply:
    """What the user said in a tool's result (`words`, "" for none), whether they denied the
    use (`denied`: it did nothing), and where the reply starts (`at`: the output before it
    is the tool's)."""

    words: str
    denied: bool = False
    at: int = 0


# Where a tool's result carries the user's reply, by agent:
# Cline and Roo Code put the user's words in `<feedback>` tags (on a use they denied, on a
# completion they answered); Roo Code's native protocol in a JSON object's `feedback`;
# Claude Code, rejecting a use, gives the user's reason after "the user said:".
_FEEDBACK_TAGS = re.compile(r"<feedback>\s*(.*?)\s*</feedback>", re.DOTALL)
_DENIED = re.compile(
    r"\A\s*(?:\[[^\]\n]{1,200}\] Result:\s*)?(?:The user denied this operation"
    r"|The user doesn't want to proceed with this tool use)"
)
_REJECTION_REASON = re.compile(r"the user said:\n(.+)\Z", re.DOTALL)
# Feedback given after a tool's output: "The user provided the following feedback:".
_FEEDBACK_INTRO = re.compile(r"^The user (?:has )?provided (?:the following )?feedback", re.M)
_REPLY_MARKS = ("<feedback>", "The user ", '"feedback"')


@text_cache()
def user_reply_in(result: str) -> UserReply | None:
    """The user's reply a tool's result carries (None where it carries none)."""
    if not any(mark in result for mark in _REPLY_MARKS):
        return None
    denied = _DENIED.match(result) is not None
    if result.lstrip().startswith("{"):
        try:
            parsed = json.loads(result)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            feedback = parsed.get("feedback")
            denied = parsed.get("status") == "denied"
            if isinstance(feedback, str) or denied:
                return UserReply(feedback.strip() if isinstance(feedback, str) else "", denied)
    tagged = _FEEDBACK_TAGS.search(result)
    intro = _FEEDBACK_INTRO.search(result) if tagged is not None and not denied else None
    if tagged is not None and (denied or (intro is not None and intro.start() < tagged.start())):
        at = 0 if denied or intro is None or not result[: intro.start()].strip() else intro.start()
        return UserReply(tagged.group(1).strip(), denied, at)
    if denied:
        reason = _REJECTION_REASON.search(result)
        return UserReply(reason.group(1).strip() if reason else "", True)
    return None


def _marked_item(line: str) -> Todo | None:
    """An item whose state is a mark before it (`✅ done`, `🚫 ~~dropped~~`), or None."""
    marked = _MARKED_ITEM.match(line)
    if marked is None:
        return None
    return _item(marked.group(2), _MARKS[marked.group(1)])


_PLAN_WORDS = (
    "plan", "to-do", "todo", "step", "progress", "checklist", "task", "work item", "remaining",
    "to do", "outstanding", "open item",
)  # fmt: skip


def plan_in_prose(text: str) -> tuple[Todo, ...]:
    """The last plan a message writes as a list (two items or more; one under a title naming
    the list alone, `Remaining:`) under a line naming it,
    each item's state read from its checkbox, the mark before it or its closing words
    (pending otherwise); ()
    when it writes none. Fences are no boundary: a planning step may quote its plan."""
    lowered = text.lower()
    if not any(word in lowered for word in _PLAN_WORDS):
        return ()
    lines = text.split("\n")
    found: tuple[Todo, ...] = ()
    for index, line in enumerate(lines):
        listed = _LIST_TITLE.match(line) is not None
        if not (listed or _PLAN_LINE.match(line)) or _PLAN_ITEM.match(line):
            continue
        items: list[Todo] = []
        for following in lines[index + 1 :]:
            marked = _marked_item(following)
            if marked is not None:
                items.append(marked)
                continue
            item = _PLAN_ITEM.match(following)
            if item is None:
                if items or following.strip():
                    break
                continue
            box, stated, words = item.groups()
            if stated is not None:
                items.append(_said(words, stated.lower()))
            else:
                items.append(_item(words, _CHECK_STATUS.get(box, "pending") if box else "pending"))
        if len(items) >= 2 or (items and listed):
            found = tuple(items)
    return found
