"""The tool table: what each agent's tool calls, patches, prose actions and results mean.

Argument shapes are the agents' own (their public tool schemas); each case asserts the exact
actions read from one call.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from compaction.summarize import tools
from compaction.summarize.tools import (
    TOOLS,
    Action,
    Todo,
    ToolMeaning,
    actions_in_text,
    actions_of_call,
    command_exit_status,
    command_text,
    files_in_patch,
    is_command_tool,
    meaning_of,
    todo_id_in_result,
)


def file(path: str | None, op: tools.FileOp) -> Action:
    return Action("file", path=path, op=op)


def command(text: str) -> Action:
    return Action("command", command=text)


def todos(*items: Todo) -> Action:
    return Action("todos", todos=items)


CODEX_ADD = "*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n*** End Patch\n"
CHECKLIST = (
    "- [x] Analyze the codebase\n- [ ] Phase 1: storage\n  - [-] Install @google-cloud/storage"
)
CHECKLIST_TODOS = todos(
    Todo("Analyze the codebase", "completed"),
    Todo("Phase 1: storage", "pending"),
    Todo("Install @google-cloud/storage", "in_progress"),
)

CALLS: list[tuple[str, str, dict[str, object], tuple[Action, ...]]] = [
    # --- Claude Code
    (
        "claude-code",
        "Bash",
        {"command": "rm -f build/out.o && git status", "description": "Clean", "timeout": 60000},
        (command("rm -f build/out.o && git status"), file("build/out.o", "deleted")),
    ),
    (
        "claude-code",
        "Read",
        {"file_path": "/repo/src/app.py", "offset": 10, "limit": 50},
        (file("/repo/src/app.py", "read"),),
    ),
    (
        "claude-code",
        "Edit",
        {
            "file_path": "/repo/src/app.py",
            "old_string": "a",
            "new_string": "b",
            "replace_all": False,
        },
        (file("/repo/src/app.py", "modified"),),
    ),
    (
        "claude-code",
        "MultiEdit",
        {"file_path": "/repo/src/app.py", "edits": [{"old_string": "a", "new_string": "b"}]},
        (file("/repo/src/app.py", "modified"),),
    ),
    (
        "claude-code",
        "Write",
        {"file_path": "/repo/NEW.md", "content": "# new"},
        (file("/repo/NEW.md", "written"),),
    ),
    (
        "claude-code",
        "NotebookEdit",
        {
            "notebook_path": "/repo/nb.ipynb",
            "cell_id": "c1",
            "new_source": "x",
            "edit_mode": "replace",
        },
        (file("/repo/nb.ipynb", "modified"),),
    ),
    (
        "claude-code",
        "Grep",
        {"pattern": "def main", "path": "/repo/src", "output_mode": "content", "-n": True},
        (Action("search", path="/repo/src", text="def main"),),
    ),
    ("claude-code", "Glob", {"pattern": "**/*.py"}, (Action("search", text="**/*.py"),)),
    (
        "claude-code",
        "TodoWrite",
        {
            "todos": [
                {"content": "Port module", "status": "completed", "activeForm": "Porting module"},
                {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
                {
                    "content": "Update docs",
                    "status": "pending",
                    "activeForm": "Updating",
                    "id": "3",
                },
            ]
        },
        (
            todos(
                Todo("Port module", "completed"),
                Todo("Write tests", "in_progress"),
                Todo("Update docs", "pending", "3"),
            ),
        ),
    ),
    (
        "claude-code",
        "TaskCreate",
        {"subject": "Remove default secrets", "description": "Fail fast", "activeForm": "Removing"},
        (Action("todo", todos=(Todo("Remove default secrets", "pending"),)),),
    ),
    (
        "claude-code",
        "TaskUpdate",
        {"taskId": "1", "status": "completed"},
        (Action("todo", todos=(Todo("", "completed", "1"),)),),
    ),
    (
        "claude-code",
        "TaskUpdate",
        {"taskId": "2", "status": "deleted"},
        (Action("todo", todos=(Todo("", "cancelled", "2"),)),),
    ),
    ("claude-code", "TodoWrite", {"todos": []}, (todos(),)),
    ("claude-code", "TaskUpdate", {"taskId": "3", "owner": "agent-2", "addBlockedBy": ["1"]}, ()),
    (
        "claude-code",
        "Task",
        {
            "description": "Explore auth",
            "prompt": "Read the auth module",
            "subagent_type": "Explore",
        },
        (Action("delegate", text="Explore auth"),),
    ),
    (
        "claude-code",
        "ExitPlanMode",
        {"plan": "# Plan\n1. Fix IDOR", "planFilePath": "/p.md"},
        (Action("plan", text="# Plan\n1. Fix IDOR"),),
    ),
    ("claude-code", "WebFetch", {"url": "https://example.org", "prompt": "Summarize"}, ()),
    ("claude-code", "TaskList", {}, ()),
    (
        "claude-code",
        "mcp__filesystem__write_file",
        {"path": "/data/a.txt", "content": "x"},
        (file("/data/a.txt", "written"),),
    ),
    # --- Codex CLI
    (
        "codex",
        "shell",
        {
            "command": ["bash", "-lc", "sed -i 's/a/b/' src/x.py"],
            "workdir": "/repo",
            "timeout_ms": 1,
        },
        (command("sed -i 's/a/b/' src/x.py"), file("src/x.py", "modified")),
    ),
    ("codex", "shell", {"command": ["ls", "-la", "my dir"]}, (command("ls -la 'my dir'"),)),
    (
        "codex",
        "shell",
        {"command": ["apply_patch", CODEX_ADD]},
        (file("docs/notes.md", "created"),),
    ),
    (
        "codex",
        "shell_command",
        {"command": "git diff", "workdir": "/repo", "login": True},
        (command("git diff"),),
    ),
    (
        "codex",
        "exec_command",
        {"cmd": "pytest -x", "yield_time_ms": 1000, "max_output_tokens": 6000},
        (command("pytest -x"),),
    ),
    (
        "codex",
        "exec_command",
        {
            "cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n"
            "*** End Patch\nEOF"
        },
        (file("src/app.py", "modified"),),
    ),
    (
        "codex",
        "local_shell",
        {"action": {"type": "exec", "command": ["bash", "-lc", "make test"]}},
        (command("make test"),),
    ),
    (
        "codex",
        "apply_patch",
        {"input": "*** Begin Patch\n*** Delete File: old.py\n*** End Patch"},
        (file("old.py", "deleted"),),
    ),
    (
        "codex",
        "update_plan",
        {
            "explanation": "Bug is in the parser",
            "plan": [
                {"step": "Read the parser", "status": "completed"},
                {"step": "Fix the bug", "status": "in_progress"},
                {"step": "Run tests", "status": "pending"},
            ],
        },
        (
            todos(
                Todo("Read the parser", "completed"),
                Todo("Fix the bug", "in_progress"),
                Todo("Run tests", "pending"),
            ),
        ),
    ),
    ("codex", "write_stdin", {"session_id": 3, "chars": "y\n"}, ()),
    ("codex", "view_image", {"path": "/repo/shot.png"}, (file("/repo/shot.png", "read"),)),
    # --- OpenCode
    (
        "opencode",
        "bash",
        {"command": "npm test", "description": "Runs tests", "timeout": 120000, "workdir": "C:\\r"},
        (command("npm test"),),
    ),
    (
        "opencode",
        "read",
        {"filePath": "C:\\Users\\me\\repo\\app.ts", "offset": 1, "limit": 200},
        (file("C:\\Users\\me\\repo\\app.ts", "read"),),
    ),
    (
        "opencode",
        "edit",
        {"filePath": "/repo/a.ts", "oldString": "a", "newString": "b", "replaceAll": False},
        (file("/repo/a.ts", "modified"),),
    ),
    (
        "opencode",
        "write",
        {"filePath": "/repo/b.ts", "content": "x"},
        (file("/repo/b.ts", "written"),),
    ),
    (
        "opencode",
        "apply_patch",
        {
            "patchText": "*** Begin Patch\n*** Add File: docker-compose.yml\n+version: 3\n"
            "*** Update File: harbor/Dockerfile\n@@\n-FROM a\n+FROM b\n*** End Patch"
        },
        (file("docker-compose.yml", "created"), file("harbor/Dockerfile", "modified")),
    ),
    ("opencode", "patch", {"patchText": CODEX_ADD}, (file("docs/notes.md", "created"),)),
    (
        "opencode",
        "todowrite",
        {
            "todos": [
                {"content": "Scaffold", "status": "completed", "priority": "high", "id": "1"},
                {"content": "Drop SQLite", "status": "cancelled", "priority": "low", "id": "2"},
            ]
        },
        (todos(Todo("Scaffold", "completed", "1"), Todo("Drop SQLite", "cancelled", "2")),),
    ),
    (
        "opencode",
        "grep",
        {"pattern": "TODO", "path": "src", "include": "*.ts"},
        (Action("search", path="src", text="TODO"),),
    ),
    (
        "opencode",
        "task",
        {"description": "Find usages", "prompt": "Find every caller", "subagent_type": "general"},
        (Action("delegate", text="Find usages"),),
    ),
    ("opencode", "todoread", {}, ()),
    # --- Cline
    (
        "cline",
        "execute_command",
        {"command": "npm install", "requires_approval": True, "task_progress": CHECKLIST},
        (command("npm install"), CHECKLIST_TODOS),
    ),
    (
        "cline",
        "write_to_file",
        {"absolutePath": "c:\\Apps\\src\\lib\\gcs.ts", "content": "x", "task_progress": CHECKLIST},
        (file("c:\\Apps\\src\\lib\\gcs.ts", "written"), CHECKLIST_TODOS),
    ),
    (
        "cline",
        "replace_in_file",
        {
            "absolutePath": "c:\\Apps\\src\\a.ts",
            "diff": "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n",
        },
        (file("c:\\Apps\\src\\a.ts", "modified"),),
    ),
    (
        "cline",
        "replace_in_file",
        {"path": "src/a.ts", "diff": "x"},
        (file("src/a.ts", "modified"),),
    ),
    ("cline", "read_file", {"path": "src/app.ts"}, (file("src/app.ts", "read"),)),
    (
        "cline",
        "attempt_completion",
        {"result": "Refactor complete", "command": "npm start"},
        (Action("final", text="Refactor complete"),),
    ),
    (
        "cline",
        "search_files",
        {"path": "src", "regex": "getStorage", "file_pattern": "*.ts"},
        (Action("search", path="src", text="getStorage"),),
    ),
    (
        "cline",
        "new_task",
        {"context": "Continue with phase 2"},
        (Action("delegate", text="Continue with phase 2"),),
    ),
    (
        "cline",
        "ask_followup_question",
        {"question": "Which bucket?", "options": "[]"},
        (Action("ask", text="Which bucket?"),),
    ),
    # --- Cline's SDK agent
    (
        "cline-sdk",
        "read_files",
        {"files": [{"path": "/r/a.ts", "start_line": 1, "end_line": 40}, {"path": "/r/b.ts"}]},
        (file("/r/a.ts", "read"), file("/r/b.ts", "read")),
    ),
    ("cline-sdk", "read_files", {"file_paths": ["/r/c.ts"]}, (file("/r/c.ts", "read"),)),
    (
        "cline-sdk",
        "editor",
        {"path": "/r/a.ts", "old_text": "a", "new_text": "b"},
        (file("/r/a.ts", "modified"),),
    ),
    (
        "cline-sdk",
        "editor",
        {"path": "/r/a.ts", "new_text": "b", "insert_line": 3},
        (file("/r/a.ts", "modified"),),
    ),
    (
        "cline-sdk",
        "editor",
        {"path": "/r/new.ts", "old_text": None, "new_text": "x"},
        (file("/r/new.ts", "written"),),
    ),
    (
        "cline-sdk",
        "run_commands",
        {"commands": ["npm test", {"command": "rm", "args": ["-f", "out.log"]}]},
        (command("npm test"), command("rm -f out.log"), file("out.log", "deleted")),
    ),
    (
        "cline-sdk",
        "search_codebase",
        {"queries": ["getStorage", "firebase-admin"]},
        (Action("search", text="getStorage | firebase-admin"),),
    ),
    (
        "cline-sdk",
        "submit_and_exit",
        {"summary": "Fixed and verified", "verified": True},
        (Action("final", text="Fixed and verified"),),
    ),
    # --- Roo-Code
    (
        "roo-code",
        "update_todo_list",
        {"todos": "[x] Analyze requirements\n[-] Implement core logic\n[ ] Write tests"},
        (
            todos(
                Todo("Analyze requirements", "completed"),
                Todo("Implement core logic", "in_progress"),
                Todo("Write tests", "pending"),
            ),
        ),
    ),
    (
        "roo-code",
        "apply_diff",
        {
            "path": "src/a.ts",
            "diff": "<<<<<<< SEARCH\n:start_line:1\n-------\na\n=======\nb\n>>>>>>> REPLACE",
        },
        (file("src/a.ts", "modified"),),
    ),
    (
        "roo-code",
        "insert_content",
        {"path": "src/a.ts", "line": 0, "content": "x"},
        (file("src/a.ts", "modified"),),
    ),
    (
        "roo-code",
        "search_and_replace",
        {"path": "src/a.ts", "search": "a", "replace": "b"},
        (file("src/a.ts", "modified"),),
    ),
    (
        "roo-code",
        "edit",
        {"file_path": "src/a.ts", "old_string": "a", "new_string": "b", "replace_all": True},
        (file("src/a.ts", "modified"),),
    ),
    (
        "opencode",
        "multiedit",
        {"filePath": "/repo/a.ts", "edits": [{"oldString": "a", "newString": "b"}]},
        (file("/repo/a.ts", "modified"),),
    ),
    (
        "roo-code",
        "search_replace",
        {"file_path": "src/a.ts", "old_string": "a", "new_string": "b"},
        (file("src/a.ts", "modified"),),
    ),
    (
        "roo-code",
        "read_file",
        {"files": [{"path": "src/a.ts", "line_ranges": ["1-20"]}, {"path": "src/b.ts"}]},
        (file("src/a.ts", "read"), file("src/b.ts", "read")),
    ),
    (
        "roo-code",
        "execute_command",
        {"command": "npm run build", "cwd": "frontend", "timeout": None},
        (command("npm run build"),),
    ),
    (
        "roo-code",
        "new_task",
        {"mode": "code", "message": "Implement X", "todos": "[ ] a"},
        (Action("delegate", text="Implement X"),),
    ),
    ("roo-code", "apply_patch", {"patch": CODEX_ADD}, (file("docs/notes.md", "created"),)),
    # --- OpenHands
    (
        "openhands",
        "execute_bash",
        {"command": "python reproduce.py", "is_input": "false", "security_risk": "LOW"},
        (command("python reproduce.py"), file("reproduce.py", "read")),
    ),
    (
        "openhands",
        "str_replace_editor",
        {"command": "view", "path": "/workspace/a.py", "view_range": [1, 20]},
        (file("/workspace/a.py", "read"),),
    ),
    (
        "openhands",
        "str_replace_editor",
        {"command": "create", "path": "/workspace/new.py", "file_text": "x = 1\n"},
        (file("/workspace/new.py", "created"),),
    ),
    (
        "openhands",
        "str_replace_editor",
        {"command": "str_replace", "path": "/workspace/a.py", "old_str": "a", "new_str": "b"},
        (file("/workspace/a.py", "modified"),),
    ),
    (
        "openhands",
        "str_replace_editor",
        {"command": "insert", "path": "/workspace/a.py", "insert_line": 3, "new_str": "b"},
        (file("/workspace/a.py", "modified"),),
    ),
    (
        "openhands",
        "str_replace_editor",
        {"command": "undo_edit", "path": "/workspace/a.py"},
        (file("/workspace/a.py", "modified"),),
    ),
    ("openhands", "str_replace_editor", {"command": "rewind", "path": "/workspace/a.py"}, ()),
    (
        "openhands",
        "task_tracker",
        {
            "command": "plan",
            "task_list": [
                {"id": "1", "title": "Reproduce", "status": "done"},
                {"id": "2", "title": "Fix", "status": "in_progress"},
                {"id": "3", "title": "Test", "status": "todo", "notes": "unit + e2e"},
            ],
        },
        (
            todos(
                Todo("Reproduce", "completed", "1"),
                Todo("Fix", "in_progress", "2"),
                Todo("Test", "pending", "3"),
            ),
        ),
    ),
    ("openhands", "task_tracker", {"command": "view"}, ()),
    (
        "openhands",
        "finish",
        {"message": "Fixed the bug."},
        (Action("final", text="Fixed the bug."),),
    ),
    (
        "openhands",
        "think",
        {"thought": "Maybe the cache"},
        (Action("thought", text="Maybe the cache"),),
    ),
    (
        "openhands",
        "edit_file",
        {"path": "/workspace/a.py", "content": "x", "start": 1, "end": -1},
        (file("/workspace/a.py", "modified"),),
    ),
    ("openhands", "terminal", {"command": "ls"}, (command("ls"),)),
    (
        "openhands",
        "file_editor",
        {"command": "create", "path": "/w/x.py", "file_text": "x"},
        (file("/w/x.py", "created"),),
    ),
    ("openhands", "execute_ipython_cell", {"code": "print(1)"}, (command("print(1)"),)),
    # --- SWE-agent (function calling)
    (
        "swe-agent",
        "bash",
        {"command": "python -m pytest tests/"},
        (command("python -m pytest tests/"),),
    ),
    (
        "swe-agent",
        "str_replace_editor",
        {"command": "str_replace", "path": "/testbed/x.py", "old_str": "a", "new_str": "b"},
        (file("/testbed/x.py", "modified"),),
    ),
    ("swe-agent", "open", {"path": "src/a.py", "line_number": 10}, (file("src/a.py", "read"),)),
    ("swe-agent", "create", {"filename": "reproduce.py"}, (file("reproduce.py", "created"),)),
    ("swe-agent", "edit", {"search": "a", "replace": "b"}, (file(None, "modified"),)),
    (
        "swe-agent",
        "find_file",
        {"file_name": "setup.py", "dir": "/testbed"},
        (Action("search", path="/testbed", text="setup.py"),),
    ),
    ("swe-agent", "submit", {}, (Action("final"),)),
    ("swe-agent", "goto", {"line_number": 40}, ()),
    # --- mini-SWE-agent (tool calling)
    (
        "mini-swe-agent",
        "bash",
        {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"},
        (command("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"), Action("final")),
    ),
    # --- Gemini CLI
    (
        "gemini-cli",
        "run_shell_command",
        {"command": "npm test", "description": "Test", "dir_path": "web"},
        (command("npm test"),),
    ),
    (
        "gemini-cli",
        "read_file",
        {"file_path": "/p/a.ts", "start_line": 1, "end_line": 20},
        (file("/p/a.ts", "read"),),
    ),
    ("gemini-cli", "read_file", {"absolute_path": "/p/a.ts"}, (file("/p/a.ts", "read"),)),
    (
        "gemini-cli",
        "write_file",
        {"file_path": "/p/b.ts", "content": "x"},
        (file("/p/b.ts", "written"),),
    ),
    (
        "gemini-cli",
        "replace",
        {"file_path": "/p/a.ts", "instruction": "rename", "old_string": "a", "new_string": "b"},
        (file("/p/a.ts", "modified"),),
    ),
    (
        "gemini-cli",
        "read_many_files",
        {"include": ["src/a.ts", "src/**/*.test.ts"]},
        (file("src/a.ts", "read"),),
    ),
    (
        "gemini-cli",
        "write_todos",
        {
            "todos": [
                {"description": "A", "status": "completed"},
                {"description": "B", "status": "blocked"},
                {"description": "C", "status": "cancelled"},
            ]
        },
        (todos(Todo("A", "completed"), Todo("B", "pending"), Todo("C", "cancelled")),),
    ),
    (
        "gemini-cli",
        "grep_search",
        {"pattern": "foo", "dir_path": "src", "include_pattern": "*.ts"},
        (Action("search", path="src", text="foo"),),
    ),
    (
        "gemini-cli",
        "search_file_content",
        {"pattern": "foo", "path": "src"},
        (Action("search", path="src", text="foo"),),
    ),
    ("gemini-cli", "list_directory", {"dir_path": "src"}, (Action("search", path="src"),)),
    # --- MCP filesystem server
    (
        "mcp-filesystem",
        "read_text_file",
        {"path": "/data/a.txt", "head": 10},
        (file("/data/a.txt", "read"),),
    ),
    (
        "mcp-filesystem",
        "read_multiple_files",
        {"paths": ["/data/a.txt", "/data/b.txt"]},
        (file("/data/a.txt", "read"), file("/data/b.txt", "read")),
    ),
    (
        "mcp-filesystem",
        "edit_file",
        {"path": "/data/a.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": False},
        (file("/data/a.txt", "modified"),),
    ),
    (
        "mcp-filesystem",
        "edit_file",
        {"path": "/data/a.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": True},
        (),
    ),
    (
        "mcp-filesystem",
        "move_file",
        {"source": "/data/a.txt", "destination": "/data/old/a.txt"},
        (file("/data/a.txt", "deleted"), file("/data/old/a.txt", "created")),
    ),
    ("mcp-filesystem", "create_directory", {"path": "/data/new"}, ()),
    (
        "mcp-filesystem",
        "search_files",
        {"path": "/data", "pattern": "*.md", "excludePatterns": []},
        (Action("search", path="/data", text="*.md"),),
    ),
    (
        "mcp-filesystem",
        "mcp__filesystem__read_text_file",
        {"path": "/data/a.txt"},
        (file("/data/a.txt", "read"),),
    ),
    # --- Goose (block/goose: the developer extension, the to-do tool)
    (
        "goose",
        "developer__shell",
        {"command": "rm old.kt"},
        (command("rm old.kt"), file("old.kt", "deleted")),
    ),
    (
        "goose",
        "developer__text_editor",
        {"command": "write", "path": "/w/src/A.kt", "file_text": "class A"},
        (file("/w/src/A.kt", "written"),),
    ),
    (
        "goose",
        "developer__text_editor",
        {"command": "str_replace", "path": "/w/src/A.kt", "old_str": "A", "new_str": "B"},
        (file("/w/src/A.kt", "modified"),),
    ),
    (
        "goose",
        "developer__text_editor",
        {"command": "view", "path": "/w/src/A.kt"},
        (file("/w/src/A.kt", "read"),),
    ),
    ("goose", "todo__write", {"content": CHECKLIST}, (CHECKLIST_TODOS,)),
    # goose's todo platform extension (crates/goose/src/agents/platform_extensions/todo.rs):
    # `todo_write` under the extension `todo`, the whole checklist each time.
    ("goose", "todo__todo_write", {"content": CHECKLIST}, (CHECKLIST_TODOS,)),
    ("goose", "todo__todo_read", {}, ()),
    # --- GitHub Copilot agent mode (microsoft/vscode-copilot-chat)
    (
        "copilot",
        "run_in_terminal",
        {"command": "dotnet test", "explanation": "Run the tests.", "isBackground": False},
        (command("dotnet test"),),
    ),
    (
        "copilot",
        "create_file",
        {"filePath": "/w/src/A.cs", "content": "x"},
        (file("/w/src/A.cs", "created"),),
    ),
    (
        "copilot",
        "replace_string_in_file",
        {"filePath": "/w/src/A.cs", "oldString": "a", "newString": "b"},
        (file("/w/src/A.cs", "modified"),),
    ),
    (
        "copilot",
        "multi_replace_string_in_file",
        {
            "explanation": "Two edits.",
            "replacements": [
                {"filePath": "/w/appsettings.json", "oldString": "a", "newString": "b"},
                {"filePath": "/w/src/B.cs", "oldString": "c", "newString": "d"},
            ],
        },
        (file("/w/appsettings.json", "modified"), file("/w/src/B.cs", "modified")),
    ),
    (
        "copilot",
        "manage_todo_list",
        {
            "todoList": [
                {"id": 1, "title": "Persist", "status": "completed"},
                {"id": 2, "title": "Alert", "status": "not-started"},
            ]
        },
        (todos(Todo("Persist", "completed", "1"), Todo("Alert", "pending", "2")),),
    ),
    ("copilot", "manage_todo_list", {"operation": "read"}, ()),
    # pi (badlogic/pi-mono packages/coding-agent/src/core/tools/): `path` for every file tool.
    ("pi", "read", {"path": "src/a.ts", "offset": 10}, (file("src/a.ts", "read"),)),
    (
        "pi",
        "edit",
        {"path": "src/routes/[slug]/+page.ts", "oldText": "a", "newText": "b"},
        (file("src/routes/[slug]/+page.ts", "modified"),),
    ),
    ("pi", "write", {"path": "src/b.ts", "content": "x"}, (file("src/b.ts", "written"),)),
    ("pi", "bash", {"command": "pnpm test", "timeout": 60}, (command("pnpm test"),)),
    # Codebuff (calls written as JSON in the reply, `text_calls`).
    (
        "codebuff",
        "read_files",
        {"paths": ["a.ts", "b.ts"]},
        (file("a.ts", "read"), file("b.ts", "read")),
    ),
    (
        "codebuff",
        "str_replace",
        {"path": "src/c.ts", "replacements": [{"old": "a", "new": "b"}]},
        (file("src/c.ts", "modified"),),
    ),
    ("codebuff", "run_terminal_command", {"command": "pnpm test"}, (command("pnpm test"),)),
    (
        "codebuff",
        "update_subgoal",
        {"id": "2", "status": "ABORTED"},
        (Action("todo", todos=(Todo("", "cancelled", "2"),)),),
    ),
]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        pytest.param(name, arguments, expected, id=f"{agent}:{name}")
        for agent, name, arguments, expected in CALLS
    ],
)
def test_actions_of_known_calls(
    name: str, arguments: dict[str, object], expected: tuple[Action, ...]
) -> None:
    assert actions_of_call(name, arguments) == expected


def test_every_agent_named_in_the_cases_has_rows() -> None:
    agents = {agent for row in TOOLS for agent in row.agents}
    assert {agent for agent, *_ in CALLS} <= agents | {"mcp-filesystem"}


def test_table_has_no_duplicate_name_agent_rows() -> None:
    pairs = Counter((name, agent) for row in TOOLS for name in row.names for agent in row.agents)
    assert [pair for pair, count in pairs.items() if count > 1] == []


def test_rows_state_what_their_kind_needs() -> None:
    for row in TOOLS:
        where = f"{row.names} ({row.agents})"
        if row.kind == "file":
            assert row.op or row.subcommand_ops or row.move_keys, where
            assert row.path_keys or row.move_keys or row.acts_on_open_file, where
        if row.kind == "command":
            assert row.command_keys, where
        if row.kind == "patch":
            assert row.patch_keys, where
        if row.kind == "todos":
            assert row.todos_key and row.todo_shape, where


def test_same_named_tools_must_agree_on_what_they_do() -> None:
    reads = ToolMeaning(("read_file",), "file", ("a",), op="read", path_keys=("path",))
    writes = ToolMeaning(("read_file",), "file", ("b",), op="written", path_keys=("path",))
    with pytest.raises(ValueError, match="disagree"):
        tools._index((reads, writes))


def test_a_name_sent_by_several_agents_tries_all_their_path_keys() -> None:
    row = meaning_of("read_file")
    assert row is not None
    assert {"cline", "roo-code", "gemini-cli", "mcp-filesystem", "codex"} <= set(row.agents)
    assert {"path", "absolutePath", "file_path", "absolute_path", "files"} <= set(row.path_keys)


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("open_source_file", {"filepath": "src/a.py"}, (file("src/a.py", "read"),)),
        ("delete_file", {"target_file": "src/old.py"}, (file("src/old.py", "deleted"),)),
        ("saveDocument", {"filename": "notes.md"}, (file("notes.md", "written"),)),
        ("create_component", {"path": "web/Button.tsx"}, (file("web/Button.tsx", "created"),)),
        ("str_edit", {"file": "C:\\repo\\main.go"}, (file("C:\\repo\\main.go", "modified"),)),
        (
            "run_terminal_cmd",
            {"command": "make lint", "is_background": False},
            (command("make lint"),),
        ),
        ("container.exec", {"cmd": ["bash", "-lc", "ls /app"]}, (command("ls /app"),)),
        (
            "propose_change",
            {"diff": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"},
            (file("x.py", "modified"),),
        ),
        (
            "todo_update",
            {"todos": [{"text": "Ship it", "status": "done"}, {"title": "Docs", "status": "open"}]},
            (todos(Todo("Ship it", "completed"), Todo("Docs", "pending")),),
        ),
        ("mcp__serena__read_memory", {"memory_file_name": "overview"}, ()),
        (
            "mcp__siyuan-mcp__create_doc",
            {"notebook": "n1", "path": "Daily notes", "markdown": "x"},
            (),
        ),
        ("lookup", {"query": "src/a.py"}, ()),
        ("read_things", {"path": "not a path at all"}, ()),
    ],
)
def test_unknown_tools_fall_back_to_argument_names_and_name_words(
    name: str, arguments: dict[str, object], expected: tuple[Action, ...]
) -> None:
    assert meaning_of(name) is None
    assert actions_of_call(name, arguments) == expected


def test_a_known_tool_without_effect_does_not_fall_back() -> None:
    # `plan_mode_respond` carries no path, but a look-alike unknown name with a path would
    # read as a file: the table's `none` keeps known tools out of the fallback.
    assert (
        actions_of_call("plan_mode_respond", {"response": "see src/a.py", "path": "src/a.py"}) == ()
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Bash", True),
        ("bash", True),
        ("shell", True),
        ("exec_command", True),
        ("execute_command", True),
        ("run_shell_command", True),
        ("execute_bash", True),
        ("run_terminal_cmd", True),
        ("Read", False),
        ("apply_patch", False),
        ("run_slash_command", False),
        ("read_command_output", False),
        ("TodoWrite", False),
    ],
)
def test_is_command_tool(name: str, expected: bool) -> None:
    assert is_command_tool(name) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("  git status  ", "git status"),
        (["bash", "-lc", "cd src && make"], "cd src && make"),
        (["/bin/zsh", "-lc", "ls"], "ls"),
        (["powershell.exe", "-Command", "Get-ChildItem -Force"], "Get-ChildItem -Force"),
        (["git", "commit", "-m", "fix: it's done"], "git commit -m 'fix: it'\"'\"'s done'"),
        ({"type": "exec", "command": ["ls", "-a"]}, "ls -a"),
        ("", None),
        ([], None),
        (["ls", 3], None),
    ],
)
def test_command_text(value: object, expected: str | None) -> None:
    assert command_text(value) == expected


# --- patches --------------------------------------------------------------------------------

PATCHES = [
    (
        "codex add, update, delete",
        "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: b.py\n@@ def f():\n-    pass\n"
        "+    return 1\n*** Delete File: c.py\n*** End Patch\n",
        (("a.py", "created"), ("b.py", "modified"), ("c.py", "deleted")),
    ),
    (
        "codex move",
        "*** Begin Patch\n*** Update File: src/old.py\n*** Move to: src/new.py\n"
        "@@\n-a\n+b\n*** End Patch",
        (("src/old.py", "deleted"), ("src/new.py", "created")),
    ),
    (
        "unified a/ b/",
        "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
        (("src/x.py", "modified"),),
    ),
    (
        "unified /dev/null both ways",
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n--- a/gone.txt\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-bye\n",
        (("new.txt", "created"), ("gone.txt", "deleted")),
    ),
    (
        "unified with timestamps, no prefixes",
        "--- lib/util.c\t2024-01-01 10:00:00\n+++ lib/util.c\t2024-01-02 10:00:00\n"
        "@@ -1 +1 @@\n-a\n+b\n",
        (("lib/util.c", "modified"),),
    ),
    (
        "hunk lines that look like headers are content",
        "--- a/doc.md\n+++ b/doc.md\n@@ -1,2 +1,2 @@\n--- old rule\n+++ new rule\n other\n",
        (("doc.md", "modified"),),
    ),
    (
        "diff --git: mode lines and renames",
        "diff --git a/src/x.py b/src/x.py\nindex 1..2 100644\n--- a/src/x.py\n+++ b/src/x.py\n"
        "@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n"
        "@@ -0,0 +1 @@\n+hi\n"
        "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n"
        "diff --git a/a.py b/b.py\nsimilarity index 90%\nrename from a.py\nrename to b.py\n"
        "diff --git a/bin.dat b/bin.dat\nBinary files a/bin.dat and b/bin.dat differ\n",
        (
            ("src/x.py", "modified"),
            ("new.txt", "created"),
            ("old.txt", "deleted"),
            ("a.py", "deleted"),
            ("b.py", "created"),
            ("bin.dat", "modified"),
        ),
    ),
    (
        "wrong hunk counts do not swallow the next file",
        "--- a/one.py\n+++ b/one.py\n@@ -1,9 +1,9 @@\n-a\n+b\ndiff --git a/two.py b/two.py\n"
        "--- a/two.py\n+++ b/two.py\n@@ -1 +1 @@\n-c\n+d\n",
        (("one.py", "modified"), ("two.py", "modified")),
    ),
    (
        "aider udiff without hunk counts",
        "--- mathweb/app.py\n+++ mathweb/app.py\n@@ ... @@\n-class A:\n+class B:\n"
        "--- /dev/null\n+++ mathweb/new.py\n@@ ... @@\n+x = 1\n",
        (("mathweb/app.py", "modified"), ("mathweb/new.py", "created")),
    ),
    ("not a patch", "just some text\n--- not followed by plus\n", ()),
]


@pytest.mark.parametrize(("text", "expected"), [pytest.param(t, e, id=i) for i, t, e in PATCHES])
def test_files_in_patch(text: str, expected: tuple[tuple[str, str], ...]) -> None:
    assert files_in_patch(text) == expected


# --- actions written in assistant text ------------------------------------------------------

AIDER = """I'll create the scripts and update the README.

sync-afi.sh
```bash
<<<<<<< SEARCH
=======
#!/bin/bash
echo "Syncing"
>>>>>>> REPLACE
```

README.md
```markdown
<<<<<<< SEARCH
# AFI
=======
# AFI core
>>>>>>> REPLACE
```

```markdown
<<<<<<< SEARCH
Old line
=======
New line
>>>>>>> REPLACE
```

`src/app.py`:
<<<<<<< SEARCH
def f():
=======
def g():
>>>>>>> REPLACE

sync-afi.sh
```bash
<<<<<<< SEARCH
echo "Syncing"
=======
echo "Syncing all"
>>>>>>> REPLACE
```
"""

TEXTS = [
    (
        "aider SEARCH/REPLACE",
        AIDER,
        (
            file("sync-afi.sh", "created"),
            file("README.md", "modified"),
            file("src/app.py", "modified"),
        ),
    ),
    (
        "aider udiff and a suggested command",
        "Here is the diff:\n\n```diff\n--- web/src/App.tsx\n+++ web/src/App.tsx\n"
        "@@ ... @@\n-a\n+b\n```\n\n"
        "Then run:\n\n```bash\nnpm test\n```\n",
        (file("web/src/App.tsx", "modified"), command("npm test")),
    ),
    (
        "mini-SWE-agent fenced action",
        "THOUGHT: look at the file.\n\n```mswea_bash_command\ncat src/app.py | head -50\n```",
        (command("cat src/app.py | head -50"), file("src/app.py", "read")),
    ),
    (
        "mini-SWE-agent final",
        "Done.\n\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
        (command("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"), Action("final")),
    ),
    (
        "the last block is the action",
        "First I ran:\n```bash\nls\n```\nNow:\n```bash\nrm -rf build/cache.db\n```",
        (command("rm -rf build/cache.db"), file("build/cache.db", "deleted")),
    ),
    (
        "SWE-agent open",
        'DISCUSSION\nLet me open the file.\n\n```\nopen "src/app.py" 120\n```',
        (file("src/app.py", "read"),),
    ),
    (
        "SWE-agent create",
        "DISCUSSION\nA reproduction script.\n```\ncreate reproduce.py\n```",
        (file("reproduce.py", "created"),),
    ),
    (
        "SWE-agent edit acts on the open file",
        "DISCUSSION\nFix the off-by-one.\n```\nedit 12:14\n    return n + 1\nend_of_edit\n```",
        (file(None, "modified"),),
    ),
    (
        "SWE-agent str_replace_editor in a command tag",
        "<command>\nstr_replace_editor create /testbed/r.py --file_text 'print(1)'\n</command>",
        (file("/testbed/r.py", "created"),),
    ),
    ("SWE-agent submit", "DISCUSSION\nAll done.\n```\nsubmit\n```", (Action("final"),)),
    ("SWE-agent scroll", "```\nscroll_down\n```", ()),
    (
        "SWE-agent shell command",
        "<command>\npython reproduce.py\n</command>",
        (command("python reproduce.py"), file("reproduce.py", "read")),
    ),
    ("a code sample is not an action", "Use this:\n```python\nprint('hi')\n```", ()),
    (
        "a whole file after its name is not an action",
        "src/config.ts\n```\nexport const ttl = 30;\n```",
        (),
    ),
    ("quoted prose in a fence is not an action", "It says:\n```\n## Found Code\n- x\n```", ()),
    ("prose only", "I think the bug is in the parser.", ()),
    ("an unclosed fence is not an action", "Run:\n```bash\nls\n", ()),
    (
        "a longer fence closes a shorter one",
        "````bash\nmake test\n`````\n",
        (command("make test"),),
    ),
    (
        "a nested fence stays inside its outer block",
        "````markdown\n```bash\nrm -rf /\n```\n````\n",
        (),
    ),
]


@pytest.mark.parametrize(("text", "expected"), [pytest.param(t, e, id=i) for i, t, e in TEXTS])
def test_actions_in_text(text: str, expected: tuple[Action, ...]) -> None:
    assert actions_in_text(text) == expected


# --- exit status in results -----------------------------------------------------------------

RESULTS = [
    ("claude code failure", "Bash", "Exit code 127\nmvn: command not found", 127),
    ("claude code success states nothing", "Bash", "On branch main\nnothing to commit", None),
    ("claude code shape is Bash's own", "execute_command", "Exit code 1\nboom", None),
    ("codex freeform", "shell", "Exit code: 2\nWall time: 0.3 seconds\nOutput:\nFAILED", 2),
    (
        "codex unified exec",
        "exec_command",
        "Chunk ID: 36c2f2\nWall time: 0.0000 seconds\nProcess exited with code 0\n"
        "Original token count: 12\nOutput:\nok",
        0,
    ),
    (
        "codex unified exec with its command line",
        None,
        "Command: /bin/zsh -lc 'make'\nChunk ID: 1\nWall time: 1.0 seconds\n"
        "Process exited with code 2\nOutput:\n",
        2,
    ),
    (
        "codex session still running",
        "exec_command",
        "Chunk ID: 1\nWall time: 1.0 seconds\nProcess running with session ID 7\nOutput:\n",
        None,
    ),
    (
        "codex json",
        "shell",
        '{"output": "x", "metadata": {"exit_code": 4, "duration_seconds": 0.1}}',
        4,
    ),
    (
        "cline success",
        "execute_command",
        "[execute_command for 'cd c:\\Apps && npm install'] Result:\n"
        "Command executed successfully (exit code 0).\nOutput:\nup to date",
        0,
    ),
    (
        "cline failure",
        "execute_command",
        "[execute_command for 'npm test'] Result:\nCommand failed with exit code 1.\nOutput:\nFAIL",
        1,
    ),
    ("cline without a status", "execute_command", "Command executed.\nOutput:\nhello", None),
    (
        "cline timed out",
        "execute_command",
        "Command timed out after 30 seconds. Running in background.",
        None,
    ),
    ("cline sdk", "run_commands", "ok\n[Command completed with exit code 3]\n", 3),
    (
        "roo success",
        "execute_command",
        "Command executed in terminal within working directory '/w'. Exit code: 0\nOutput:\nok",
        0,
    ),
    (
        "roo failure",
        "execute_command",
        "Command executed in terminal within working directory '/w'. Command execution was not "
        "successful, inspect the cause and adjust as needed.\nExit code: 2\nOutput:\nerr",
        2,
    ),
    (
        "openhands",
        "execute_bash",
        "ok\n[The command completed with exit code 1.]\n[Current working directory: /w]\n"
        "[Command finished with exit code 1]",
        1,
    ),
    (
        "openhands: the last trailer wins",
        None,
        "$ echo '[Command finished with exit code 0]'\n[Command finished with exit code 0]\n"
        "[Command finished with exit code 5]",
        5,
    ),
    ("mini xml", None, "<returncode>1</returncode>\n<output>\nboom\n</output>", 1),
    ("mini json", "bash", '{"returncode": 0, "output": "hello\\n"}', 0),
    (
        "mini json long output",
        "bash",
        '{"returncode": 2, "output_head": "a", "output_tail": "b"}',
        2,
    ),
    ("json without an output is not a result", "bash", '{"returncode": 2}', None),
    (
        "gemini failure",
        "run_shell_command",
        "Command: ls nope\nDirectory: (root)\nOutput: ls: nope: No such file\nError: (none)\n"
        "Exit Code: 2\nSignal: (none)",
        2,
    ),
    ("gemini success states nothing", "run_shell_command", "Output: a.txt", None),
    (
        "swe-agent empty output",
        "bash",
        "Your command ran successfully and did not produce any output.",
        0,
    ),
    ("opencode states nothing", "bash", "3 passed in 0.1s", None),
    (
        "a program's own words are not a status",
        None,
        "Build finished. exit code 0 reported by make",
        None,
    ),
    (
        "a status shape inside the output is not the tool's",
        "execute_command",
        "Running the suite...\nCommand failed with exit code 2.\n(from a nested runner)",
        None,
    ),
]


@pytest.mark.parametrize(
    ("name", "output", "expected"), [pytest.param(n, o, e, id=i) for i, n, o, e in RESULTS]
)
def test_command_exit_status(name: str | None, output: str, expected: int | None) -> None:
    assert command_exit_status(name, output) == expected


def test_todo_id_in_result() -> None:
    assert todo_id_in_result("TaskCreate", "Task #12 created successfully: Fix it") == "12"
    assert todo_id_in_result("TaskCreate", "No tasks found") is None
    assert todo_id_in_result("TaskUpdate", "Task #12 created successfully: Fix it") is None


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        # Another agent's `read_file` names its file `target_file`; `write_file` takes `file`.
        (
            "read_file",
            {"target_file": "src/App/Cart.cs", "start_line": 1},
            file("src/App/Cart.cs", "read"),
        ),
        ("write_file", {"file": "notes/plan.md", "content": "x"}, file("notes/plan.md", "written")),
    ],
)
def test_a_known_tool_name_with_other_argument_names_still_names_its_file(
    name: str, arguments: dict[str, object], expected: Action
) -> None:
    assert actions_of_call(name, arguments) == (expected,)
    # Nothing that looks like a path: nothing made up.
    assert actions_of_call(name, {"target_file": "not a path at all"}) == ()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        # Another agent's `Bash` takes `cmd`; another's `run_shell_command` takes `CommandLine`.
        ("Bash", {"cmd": "git rm -q src/legacy.cpp", "cwd": "/w"}),
        ("run_shell_command", {"CommandLine": "git rm -q src/legacy.cpp"}),
        # A tool the table does not know, its command under a name of its own.
        ("shell_exec", {"cmdline": "git rm -q src/legacy.cpp", "workdir": "/w"}),
    ],
)
def test_a_known_shell_tool_with_other_argument_names_still_names_its_command(
    name: str, arguments: dict[str, object]
) -> None:
    assert actions_of_call(name, arguments) == (
        command("git rm -q src/legacy.cpp"),
        file("src/legacy.cpp", "deleted"),
    )
    # An id of a command is not one (Cascade's `command_status` takes `CommandId`).
    assert actions_of_call("command_status", {"CommandId": "a1b2c3", "WaitSeconds": 5}) == ()


def test_a_known_to_do_tool_with_another_agents_item_keys_still_states_its_list() -> None:
    # Gemini CLI's `write_todos` items hold `description`; deepagents' hold `content`.
    items = [
        {"content": "wire the exporter", "status": "completed"},
        {"content": "remove the old shim", "status": "pending"},
    ]
    assert actions_of_call("write_todos", {"todos": items}) == (
        todos(Todo("wire the exporter", "completed"), Todo("remove the old shim", "pending")),
    )


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        # Argument names in another case or spelling are the same names to the fallback.
        ("open_source_file", {"AbsolutePath": "/w/app/Cart.php"}, file("/w/app/Cart.php", "read")),
        ("patch_file_text", {"TargetFile": "/w/app/Cart.php"}, file("/w/app/Cart.php", "modified")),
        ("write_to_file", {"TargetFile": "/w/app/New.php", "CodeContent": "x"},
         file("/w/app/New.php", "written")),
        ("shell_exec", {"Command": "composer test"}, command("composer test")),
        ("run_in_terminal", {"CommandLine": "composer test", "Cwd": "/w"},
         command("composer test")),
    ],
)  # fmt: skip
def test_argument_names_are_read_whatever_their_case_or_separator(
    name: str, arguments: dict[str, object], expected: Action
) -> None:
    assert actions_of_call(name, arguments) == (expected,)


def test_an_unknown_tools_lists_of_files_say_what_happened_to_each_by_their_names() -> None:
    # Files inside lists of objects, each list named for what was done to its files.
    assert actions_of_call("read_files", {"files": [{"name": "/w/src/a.zig"}]}) == (
        file("/w/src/a.zig", "read"),
    )
    edit = {
        "summary": "Move the limit into config",
        "diffs": [{"file_path": "/w/src/b.zig", "search": "a", "replace": "b"}],
        "new_files": [{"file_path": "/w/src/n.zig", "content": "x"}],
        "deleted_files": [{"file_path": "/w/src/old.zig"}],
    }
    assert actions_of_call("edit_files", edit) == (
        file("/w/src/b.zig", "modified"),
        file("/w/src/n.zig", "created"),
        file("/w/src/old.zig", "deleted"),
    )
    # Objects with no path in them name no file.
    assert actions_of_call("edit_files", {"diffs": [{"search": "a", "replace": "b"}]}) == ()


def test_a_checklist_written_to_a_plan_file_is_the_to_do_list() -> None:
    plan = "# Plan\n\n- [x] 1. wire the exporter\n- [ ] 2. add a regression test\n"
    assert actions_of_call("fsWrite", {"path": ".kiro/specs/x/tasks.md", "text": plan}) == (
        file(".kiro/specs/x/tasks.md", "written"),
        todos(
            Todo("1. wire the exporter", "completed"), Todo("2. add a regression test", "pending")
        ),
    )
    # Appended: items added to the list, not a new list.
    added = actions_of_call("fsAppend", {"path": "TODO.md", "text": "- [ ] 3. update the docs\n"})
    assert added == (
        file("TODO.md", "modified"),
        Action("todo", todos=(Todo("3. update the docs", "pending"),)),
    )
    # What an edit takes out is not added; a checklist in any other file is not the plan.
    edit = {"path": "tasks.md", "oldStr": "- [ ] 2. add a regression test\n", "newStr": ""}
    assert actions_of_call("strReplace", edit) == (file("tasks.md", "modified"),)
    assert actions_of_call("fsWrite", {"path": "docs/release.md", "text": plan}) == (
        file("docs/release.md", "written"),
    )
    assert actions_of_call("fsWrite", {"path": "src/task_runner.py", "text": plan}) == (
        file("src/task_runner.py", "written"),
    )


def test_a_struck_checklist_item_is_dropped_whatever_its_box_says() -> None:
    # `- [x] ~~Backfill~~ (dropped)`: struck through, or closed by words saying it will not be
    # done, the item is cancelled, named without its markup.
    listed = "- [x] Persist state\n- [x] ~~Backfill last week~~ (dropped)\n- [ ] ~~Old alert~~\n"
    listed += "- [ ] Purge spec (dropped)\n- [ ] Alert on growth — in progress\n"
    assert tools.checklist(listed) == (
        Todo("Persist state", "completed"),
        Todo("Backfill last week", "cancelled"),
        Todo("Old alert", "cancelled"),
        Todo("Purge spec", "cancelled"),
        Todo("Alert on growth", "in_progress"),
    )


def test_an_unknown_to_do_tool_writing_a_checklist_states_the_list() -> None:
    # A tool the table does not know, named for to-dos or a plan, whose text argument is a
    # checklist: the whole list, whatever the argument is called.
    assert actions_of_call("notes__checklist_save", {"markdown": CHECKLIST}) == (CHECKLIST_TODOS,)
    assert actions_of_call("planner_update", {"body": "## Plan\n" + CHECKLIST}) == (
        CHECKLIST_TODOS,
    )
    # The same text under a tool named for anything else is not a to-do list.
    assert actions_of_call("notes__save", {"markdown": CHECKLIST}) == ()


def test_a_to_do_tools_result_stating_the_whole_list_is_the_list() -> None:
    # Amazon Q Developer CLI's `todo_list` answers every command (create, complete, add,
    # remove by index) with the list's whole state.
    state = {
        "tasks": [
            {"task_description": "Read the handler", "completed": True},
            {"task_description": "Alarm on the DLQ", "completed": False},
        ],
        "description": "Make ingestion reliable",
        "context": [],
        "modified_files": [],
        "id": "1795170991018",
    }
    output = f"TODO LIST STATE: {json.dumps(state)}\n\n ID: 1795170991018"
    assert tools.todos_in_result(output) == (
        Todo("Read the handler", "completed"),
        Todo("Alarm on the DLQ", "pending"),
    )
    assert tools.todos_in_result("TODO LIST STATE: not json") is None
    assert tools.todos_in_result('{"tasks": []}') is None


def test_the_users_reply_inside_a_tool_result_is_read() -> None:
    # Cline's and Roo Code's feedback on a use or on a completion, in tags or in Roo's native
    # JSON; Claude Code's rejection, with the reason the user gave.
    feedback = (
        "The user has provided feedback on the results. Consider their input to continue the "
        "task, and then attempt completion again.\n<feedback>\nRaise the throttle to 40 per "
        "minute.\n</feedback>\n<environment_details>\n# Current Time\n</environment_details>"
    )
    assert tools.user_reply_in(feedback) == tools.UserReply("Raise the throttle to 40 per minute.")
    denied = (
        '{"status":"denied","message":"The user denied this operation and provided the '
        'following feedback","feedback":"Not that one. Use app/B.php."}'
    )
    assert tools.user_reply_in(denied) == tools.UserReply("Not that one. Use app/B.php.", True)
    bare = '{"status":"denied","message":"The user denied this operation."}'
    assert tools.user_reply_in(bare) == tools.UserReply("", True)
    xml = (
        "The user denied this operation and provided the following feedback:\n"
        "<feedback>\nNo.\n</feedback>"
    )
    assert tools.user_reply_in(xml) == tools.UserReply("No.", True)
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
        "it was a file edit, the new_string was NOT written to the file). STOP what you are "
        "doing and wait for the user to tell you how to proceed."
    )
    assert tools.user_reply_in(rejected) == tools.UserReply("", True)
    said = rejected.replace(
        "STOP what you are doing and wait for the user to tell you how to proceed.",
        "To tell you how to proceed, the user said:\nKeep v1.",
    )
    assert tools.user_reply_in(said) == tools.UserReply("Keep v1.", True)
    # An output merely holding the words is no reply.
    assert tools.user_reply_in("grep: feedback: No such file or directory") is None
    assert tools.user_reply_in('{"feedback": 3, "status": "ok"}') is None


def test_an_unknown_tool_setting_a_tasks_status_changes_that_to_do() -> None:
    update = {"taskFilePath": "tasks.md", "task": "1. wire the exporter", "status": "completed"}
    assert actions_of_call("taskStatus", update) == (
        Action("todo", todos=(Todo("1. wire the exporter", "completed"),)),
    )
    # A status no to-do has is not a to-do's.
    assert actions_of_call("set_status", {"task": "deploy", "status": "green"}) == ()


def test_an_unknown_to_do_tools_items_and_ids_change_the_list() -> None:
    # Items under an argument named for to-dos, with their ids; later, ids the tool's name
    # says are done.
    created = actions_of_call(
        "create_todo_list", {"initial_todos": [{"id": "a1", "title": "wire the exporter"}]}
    )
    assert created == (Action("todo", todos=(Todo("wire the exporter", "pending", "a1"),)),)
    assert actions_of_call("mark_todos_completed", {"todo_ids": ["a1", "b2"]}) == (
        Action("todo", todos=(Todo("", "completed", "a1"), Todo("", "completed", "b2"))),
    )
    # Ids with no state in the tool's name change nothing.
    assert actions_of_call("get_todos", {"todo_ids": ["a1"]}) == ()


def test_unknown_tools_named_with_hyphens_and_plural_path_lists_are_read() -> None:
    # A process-launching tool runs its command; a list of paths under a plural path name
    # (`file_paths`) names every file, done to as the tool's name says.
    assert actions_of_call(
        "launch-process", {"command": "sbt scalafmtCheckAll", "wait": True, "cwd": "/w"}
    ) == (command("sbt scalafmtCheckAll"),)
    assert actions_of_call("read-process", {"terminal_id": 3}) == ()
    assert actions_of_call("remove-files", {"file_paths": ["src/A.scala", "src/B.scala"]}) == (
        file("src/A.scala", "deleted"),
        file("src/B.scala", "deleted"),
    )


def test_task_lists_of_an_unknown_tool_are_to_dos_with_their_own_state_keys() -> None:
    # Items named `name` under `tasks`, their state under `state`; updates by `task_id`.
    added = actions_of_call(
        "add_tasks",
        {
            "tasks": [
                {"name": "mirror the pool size", "description": "in deploy", "state": "NOT_STARTED"}
            ]
        },
    )
    assert added == (Action("todo", todos=(Todo("mirror the pool size", "pending"),)),)
    updated = actions_of_call("update_tasks", {"tasks": [{"task_id": "a1b2", "state": "COMPLETE"}]})
    assert updated == (Action("todo", todos=(Todo("", "completed", "a1b2"),)),)


def test_code_an_agent_runs_says_what_it_did() -> None:
    # Open Interpreter's one function: shell code is a command, Python code does what its
    # calls with literal paths say.
    assert actions_of_call("execute", {"language": "shell", "code": "busted spec"}) == (
        command("busted spec"),
    )
    code = "\n".join(
        [
            "from pathlib import Path",
            "import os, shutil",
            'path = "src/tenancy.lua"',
            "source = open(path).read()",
            'open(path, "w").write(source.replace("a", "b"))',
            'Path("src/store.lua").write_text("x")',
            'os.remove("src/legacy.lua")',
            'shutil.move("spec/old.lua", "spec/fixtures/old.lua")',
            'print(open("README.md").read())',
        ]
    )
    assert actions_of_call("execute", {"language": "python", "code": code}) == (
        file("src/tenancy.lua", "read"),
        file("src/tenancy.lua", "written"),
        file("src/store.lua", "written"),
        file("src/legacy.lua", "deleted"),
        file("spec/old.lua", "deleted"),
        file("spec/fixtures/old.lua", "created"),
        file("README.md", "read"),
    )
    assert actions_of_call("execute", {"language": "python", "code": "x = (1"}) == ()


def test_a_code_agents_tools_are_the_functions_its_code_calls() -> None:
    # smolagents' CodeAgent calls its tools as Python functions in the code it writes.
    text = "\n".join(
        [
            "Thought: lint, then read the file.",
            "<code>",
            "print(run_shell(command=\"Rscript -e 'lintr::lint_package()'\"))",
            'print(read_file(path="R/backoff.R"))',
            'final_answer("1976e5d is the one.")',
            "</code>",
        ]
    )
    assert actions_in_text(text) == (
        command("Rscript -e 'lintr::lint_package()'"),
        file("R/backoff.R", "read"),
        Action("final", text="1976e5d is the one."),
    )


def test_a_plan_an_agent_writes_as_a_list_is_its_to_do_list() -> None:
    # smolagents' planning step (inside a fence), or a plan recapped in prose: the list under
    # a line naming the plan, each item's state in its own words.
    planning = "\n".join(
        [
            "Here are the facts I know and my new/updated plan of action:",
            "```",
            "## 1. Updated facts survey",
            "- 6 files read so far.",
            "",
            "## 2. Plan",
            "1. wire the exporter into the scheduler (done)",
            "2. update the changelog entry (in progress)",
            "3. remove the old compatibility shim (dropped)",
            "4. mirror the pool size change in the deploy values",
            "```",
        ]
    )
    assert actions_in_text(planning) == (
        Action(
            "todos",
            todos=(
                Todo("wire the exporter into the scheduler", "completed"),
                Todo("update the changelog entry", "in_progress"),
                Todo("remove the old compatibility shim", "cancelled"),
                Todo("mirror the pool size change in the deploy values", "pending"),
            ),
        ),
    )
    recap = (
        "Recap of the plan:\n1. fix the flush path — done\n2. add the regression spec — in progress"
    )
    assert actions_in_text(recap) == (
        Action(
            "todos",
            todos=(
                Todo("fix the flush path", "completed"),
                Todo("add the regression spec", "in_progress"),
            ),
        ),
    )
    # A numbered list that is no plan is not one.
    assert actions_in_text("The failures:\n1. retries\n2. ordering") == ()


def test_a_thinking_tools_thought_is_the_agents_own_reasoning() -> None:
    # The MCP sequential-thinking server (camelCase arguments), Trae Agent's copy of it
    # (snake_case), OpenHands' and Anthropic's `think`: the thought is the agent's prose.
    for name, arguments in (
        ("sequentialthinking", {"thought": "Settling on X.", "thoughtNumber": 2}),
        ("sequential_thinking", {"thought": "Settling on X.", "thought_number": 2}),
        ("think", {"thought": "Settling on X."}),
    ):
        assert tools.actions_of_call(name, arguments) == (Action("thought", text="Settling on X."),)


def test_a_plan_of_numbered_steps_with_their_state_in_brackets_is_the_to_do_list() -> None:
    # "Step N [state]: …" under a line naming the steps (a plan a thinking tool holds).
    for heading in ("Breaking the issue into steps I will work through:", "Updated plan:"):
        plan = "\n".join(
            [
                heading,
                "Step 1 [done]: wire the exporter into the scheduler",
                "Step 2 [in progress]: update the changelog entry",
                "Step 3 [not started]: mirror the batch change in the deploy values",
                "Step 4 [dropped]: remove the old compatibility shim",
            ]
        )
        assert tools.plan_in_prose(plan) == (
            Todo("wire the exporter into the scheduler", "completed"),
            Todo("update the changelog entry", "in_progress"),
            Todo("mirror the batch change in the deploy values", "pending"),
            Todo("remove the old compatibility shim", "cancelled"),
        ), heading


@pytest.mark.parametrize("heading", ["**Progress**", "Progress:", "## Checklist", "Tasks:"])
def test_a_checklist_of_status_marks_under_a_line_naming_it_is_the_to_do_list(
    heading: str,
) -> None:
    # Status written as a mark before each item (emoji or box glyphs, as chat UIs show a
    # to-do list), a struck item dropped; under a line naming progress, a checklist or tasks.
    plan = "\n".join(
        [
            heading,
            "✅ wire the exporter into the scheduler",
            "☒ add a regression test for the retry path",
            "🔄 update the changelog entry",
            "⬜ mirror the batch change in the deploy values",
            "☐ document the idle timeout",
            "🚫 ~~remove the old compatibility shim~~",
        ]
    )
    assert tools.plan_in_prose(plan) == (
        Todo("wire the exporter into the scheduler", "completed"),
        Todo("add a regression test for the retry path", "completed"),
        Todo("update the changelog entry", "in_progress"),
        Todo("mirror the batch change in the deploy values", "pending"),
        Todo("document the idle timeout", "pending"),
        Todo("remove the old compatibility shim", "cancelled"),
    )


def test_a_list_under_remaining_is_the_whole_open_list_even_of_one_item() -> None:
    # aider's assistant closes its turns with what is left ("Remaining:"); each such list is
    # the whole list, down to its last item. A one-item list under a plan-ish sentence is not.
    text = "Page size set.\n\nRemaining:\n1. Document the error code\n2. Check the query plan\n"
    assert tools.plan_in_prose(text) == (
        Todo("Document the error code", "pending"),
        Todo("Check the query plan", "pending"),
    )
    last = "Done.\n\n**Still to do:**\n1. Check the query plan\n\nHere are the blocks:"
    assert tools.plan_in_prose(last) == (Todo("Check the query plan", "pending"),)
    assert tools.plan_in_prose("Next steps of the plan:\n1. Run the tests\n") == ()


def test_a_list_under_a_tool_named_for_a_checklist_is_its_to_do_list() -> None:
    # A custom tool (a CrewAI crew's `task_checklist`): its name says what the list is.
    items = [
        {"step": "wire the exporter", "status": "done"},
        {"step": "remove the old shim", "status": "dropped"},
        {"step": "mirror the batch change", "status": "todo"},
    ]
    [action] = tools.actions_of_call("task_checklist", {"items": items})
    assert action.kind == "todo"
    assert action.todos == (
        Todo("wire the exporter", "completed"),
        Todo("remove the old shim", "cancelled"),
        Todo("mirror the batch change", "pending"),
    )


def test_a_file_named_by_its_uri_is_the_file_the_call_touches() -> None:
    # Void's tools name their file in `uri` (a path or a `file://` URI).
    assert tools.actions_of_call("read_file", {"uri": "/srv/app/src/Outbox.fs"}) == (
        Action("file", path="/srv/app/src/Outbox.fs", op="read"),
    )
    for name, op in (
        ("create_file_or_folder", "created"),
        ("delete_file_or_folder", "deleted"),
        ("rewrite_file", "written"),
        ("edit_file", "modified"),
    ):
        arguments = {"uri": "file:///srv/app/src/Store.fs", "is_recursive": False}
        assert tools.actions_of_call(name, arguments) == (
            Action("file", path="/srv/app/src/Store.fs", op=op),
        ), name


@pytest.mark.parametrize(
    ("block", "op"),
    [
        ("```save /home/dev/tidewire/src/outbox.zig\nconst a = 1;\n```", "written"),
        ("```append /home/dev/tidewire/README.md\nMore.\n```", "modified"),
        (
            "```patch /home/dev/tidewire/src/outbox.zig\n<<<<<<< ORIGINAL\nconst a = 1;\n"
            "=======\nconst a = 2;\n>>>>>>> UPDATED\n```",
            "modified",
        ),
    ],
)
def test_a_block_opened_by_a_tool_and_a_path_acts_on_that_file(block: str, op: str) -> None:
    # gptme's tools are fenced blocks whose opening line names the tool and its file.
    actions = tools.actions_in_text(f"Writing it now:\n{block}")
    assert [(a.kind, a.path, a.op) for a in actions] == [
        ("file", block.split("\n", 1)[0].split(" ", 1)[1], op)
    ]
    # A language and a word after it is no file.
    assert tools.actions_in_text("```text sample output\nhello\n```") == ()


def test_words_to_the_user_sent_through_a_tool_are_the_assistants_prose() -> None:
    # Moatless speaks to the user only through `SendMessage {thoughts, message}`.
    said = "The regression came with 9c2a13d, the switch to the shared client."
    [action] = tools.actions_of_call("SendMessage", {"thoughts": "Telling them.", "message": said})
    assert (action.kind, action.text) == ("message", said)
    # A tool that writes a message into a file is still a file tool.
    [written] = tools.actions_of_call("write_message", {"path": "notes/m.txt", "message": "x"})
    assert (written.kind, written.path) == ("file", "notes/m.txt")


def test_one_tasks_new_state_by_its_id_is_a_to_do_update() -> None:
    # Moatless's `UpdateTask {task_id, state}` after `CreateTasks {tasks: [{id, content}]}`.
    [created] = tools.actions_of_call(
        "CreateTasks", {"tasks": [{"id": "wire-exporter", "content": "wire the exporter"}]}
    )
    assert created.todos == (Todo("wire the exporter", "pending", "wire-exporter"),)
    [updated] = tools.actions_of_call(
        "UpdateTask", {"thoughts": "Done.", "task_id": "wire-exporter", "state": "completed"}
    )
    assert (updated.kind, updated.todos) == ("todo", (Todo("", "completed", "wire-exporter"),))
