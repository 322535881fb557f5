"""A warp-style family, telling the story's second-thoughts variant: a Zig message relay (Zig
0.13, `zig build`, `zig build test`, `zig test`, `zig fmt`) worked on through the Warp
terminal's agent mode, by a user who types short lowercase requests into the terminal input
and an assistant who answers in plain, brief terminal prose. Warp's agents run on Claude as
often as on GPT models; the benchmark measures this family in the Anthropic Messages dialect
too (`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`), where every call below is a `tool_use`
block and every result a `tool_result` block.

Where the names come from. The tool names are the ones Warp's agent-mode system prompt gives
its model (`run_command`, `read_files`, `edit_files` with search/replace blocks, `create_file`,
`grep`, `file_glob`, `search_codebase`). The argument names are the fields of the tool-call
messages in Warp's published protocol (warpdotdev/warp-proto-apis,
`apis/multi_agent/v1/task.proto`): RunShellCommand {command, is_read_only, uses_pager,
is_risky, wait_until_complete}; ReadShellCommandOutput {command_id, on_completion};
ReadFiles {files: [{name, line_ranges: [{start, end}]}]}; ApplyFileDiffs, which `edit_files`
is, {summary, diffs: [{file_path, search, replace}], deleted_files: [{file_path}]}, and its
NewFile {file_path, content} for `create_file`; Grep {queries, path}; FileGlob {patterns,
path}; SearchCodebase {query, path_filters, codebase_path}; the to-do operations of
`todo.proto` as three tools, `create_todo_list` {initial_todos: [{id, title}]},
`mark_todos_completed` {todo_ids} and `update_pending_todos` {updated_pending_todos: [{id,
title}]} (the whole pending list; a to-do left out of it is dropped). Warp's to-dos know
pending and completed only: the first pending one is the one being worked on.

What is this family's own reading. How Warp's server shows a result to the model is not
published. Here a result is the JSON form of the protocol's result message with its field
names: {"command", "command_finished": {"output", "exit_code", "command_id"}} or
{"command", "long_running_command_snapshot": {"output", "command_id"}} for a command left
running (`wait_until_complete` false, read back by `read_shell_command_output`);
{"text_files_success": {"files": [{"file_path", "content", "line_range"}]}};
{"success": {"updated_files_v2": [{"file": {"file_path", "content", "line_range"},
"was_edited_by_user"}]}} with the edited lines (a created file: its line range alone), or
{"success": {"deleted_files": [...]}};
grep's {"success": {"matched_files": [{"file_path", "matched_lines": [{"line_number"}]}]}}
(line numbers only, as the protocol carries them); file_glob's newline-joined
{"success": {"matched_files": "…"}}; the to-do tools answer with the ids pending and completed.
Paths are absolute and commands avoid `cd`, as the prompt asks; `git` runs with `--no-pager`;
the agent reads logs with `read_files` and a line range, never `tail`.

Tool outputs follow Zig 0.13: compile errors `src/x.zig:88:31: error: use of undeclared
identifier 'tenant_id'` with the source line and caret, "error: the following command failed
with N compilation errors:" and the build runner's "Build Summary: 0/3 steps succeeded; 1
failed" tree; a successful `zig build` prints nothing; `zig build test` reports each failed
test as `error: 'module.test.name' failed: expected 3, found 2` with the error return trace and
closes on "Build Summary: 3/5 steps succeeded; 1 failed; 45/48 tests passed; 3 failed"; the
test runner run directly in Warp's terminal (a tty) prints `1/1 module.test.name...FAIL
(TestExpectedEqual)` and "0 passed; 0 skipped; 1 failed."; `--summary all` shows the step tree
of a passing build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, hexid

ROOT = "/Users/dev/code/relay"
ZIG_LIB = "/opt/homebrew/Cellar/zig/0.13.0/lib/zig"
#: The benchmark the variant's figure comes from; it is left running and read back.
BENCH = "zig build bench -Doptimize=ReleaseFast"
#: The story's test names, as the Zig tests are named, with what `expectEqual` printed, and
#: the line of the failing `try`.
TEST_NAMES = {
    "retries": ("retries a timed out delivery", "expected 3, found 2", 131),
    "orders_batches": ("flushes batches in enqueue order", "expected 2, found 3", 158),
    "handles_empty": ("returns early on an empty queue", "expected 0, found 1", 176),
}
#: The lines the compiler points at (88 and 93 hold the calls), as read_files shows 84-96.
SEND_WINDOW = (
    "    pub fn flushPending(self: *Outbox, batch: *Batch) !void {",
    "        if (batch.isEmpty()) return;",
    "        self.metrics.flushes += 1;",
    '        log.debug("flushing {d} messages", .{batch.len()});',
    "{call}",
    "    }",
    "",
    "    pub fn retryPending(self: *Outbox, batch: *Batch) !void {",
    "        self.metrics.retries += 1;",
    "{call}",
    "    }",
    "",
    "    pub fn deinit(self: *Outbox) void {",
)
_HEADER = ('const std = @import("std");', 'const config = @import("config.zig");',
           'const log = std.log.scoped(.relay);', "")  # fmt: skip


def zig_line(line: str) -> str:
    """A story line (`throttle_limit = 4`, `outbox_send(batch)`) as the Zig it stands for: the
    call before the fix names a `tenant_id` that is not in scope, the fix takes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, _, value, tenant = match.groups()
    if value is None:
        fun = camel(module)[:1].lower() + camel(module)[1:]
        source = "batch.tenant_id" if tenant else "tenant_id"
        return f"        try {fun}Send(batch, {source});"
    if value.startswith("settings."):
        return f"pub const {module}_limit: u32 = config.{value.removeprefix('settings.')};"
    return f"pub const {module}_limit: u32 = {value};"


def result(**fields: Any) -> str:
    """A tool result as this family renders it: the protocol's result message as JSON."""
    return json.dumps(fields)


def _trace(where: str, line: int, source: str, expected: str) -> list[str]:
    """An error return trace as Zig prints it: the std frame that returned the error, then
    the test's own `try`."""
    return [
        f"{ZIG_LIB}/std/testing.zig:93:17: 0x1002ae2f3 in expectEqualInner__anon_1290 (test)",
        "                return error.TestExpectedEqual;",
        "                ^",
        f"{where}:{line}:5: 0x1002af5b7 in {source} (test)",
        f"    try std.testing.expectEqual(@as(u32, {expected}), outcome.attempts);",
        "    ^",
    ]


class WarpVoice(Voice):
    family = "warp-style"
    system_prompt = (
        "You are Agent Mode, the AI agent inside Warp, a terminal. You help with software "
        "questions and tasks from the terminal itself; you have no browser.\n\n"
        "A question about how to do something gets short instructions and an offer to do it; "
        "a task gets done.\n\n"
        "Tools:\n"
        "- run_command runs a shell command in the user's session. No interactive or "
        "full-screen programs, no pagers (`git --no-pager`), absolute paths instead of `cd`. "
        "Set wait_until_complete to false for long runs and read them back with "
        "read_shell_command_output.\n"
        "- read_files reads files, whole or by line ranges; never read files with cat, head "
        "or tail.\n"
        "- edit_files applies exact search/replace diffs (enough context for each search to "
        "match once, one hunk per change) and deletes files; create_file writes a new one.\n"
        "- grep (extended regular expressions), file_glob and search_codebase find code.\n"
        "- create_todo_list, mark_todos_completed and update_pending_todos keep the to-do "
        "list.\n\n"
        f"The user's working directory is {ROOT}, a Zig 0.13 project built with zig build. "
        "Do what was asked, no more: do not commit or push unless told to."
    )
    src = "src"
    ext = "zig"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "zig build run -- replay --queue {module} --dry-run",
        "zig fmt --check src build.zig build.zig.zon",
        "zig build -Dtarget=aarch64-linux-musl -Doptimize=ReleaseSafe --summary all",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("reconnect backoff ceiling", "6 seconds", "75 seconds", "30 seconds"),
        ("ring buffer capacity", "512 slots", "8192 slots", "2048 slots"),
        ("arena chunk size", "64 KiB", "1024 KiB", "256 KiB"),
        ("heartbeat period", "2500 ms", "9000 ms", "4000 ms"),
        ("max frame length", "16 KB", "96 KB", "48 KB"),
        ("stale lease cutoff", "3 minutes", "40 minutes", "15 minutes"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("one std.Thread.Mutex around the whole outbox", "a lock-free ring buffer per peer",
         "every sender waits on that mutex while a slow peer drains",
         "a single io_uring event loop that owns every queue",
         "each ring buffer needs a drain thread of its own"),
        ("persisting the queue as one JSON file", "an append-only log file per tenant",
         "rewriting the whole JSON file on every enqueue makes each enqueue O(n)",
         "a SQLite WAL database through the zig-sqlite bindings",
         "thousands of tenants would hold thousands of open file descriptors"),
        ("std.heap.GeneralPurposeAllocator for every message", "an ArenaAllocator per batch",
         "allocating message by message dominates the flush profile",
         "a fixed pool from std.heap.MemoryPool",
         "an arena keeps a whole batch alive until its slowest message is acked"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "the {module} module in relay stops resending after the broker reconnects, queued "
            "messages just sit there. find out why and fix it. {other} goes through the same "
            "flush path, look at that too",
            "after a broker restart nothing queued in {module} ever gets delivered. track it "
            "down and fix it; {other} copies that flush loop so check it as well",
        ],
        "set_value": [
            "start the {key} at {value} for now",
            "set {key} to {value}, we'll tune it once staging has run for a day",
        ],
        "ack": [
            "Got it, I'll work within that.",
            "Understood, applying that from here on.",
            "Okay, that holds for the rest of this.",
        ],
        "constraint": [
            "heads up before you touch anything: {rule}",
            "non-negotiable in this repo: {rule}",
            "keep this in mind the whole time: {rule}",
        ],
        "plan": [
            "First pass: {plan}, so {module} can hold undelivered messages across a reconnect.",
            "I'll start with {plan} to park whatever {module} fails to deliver.",
        ],
        "change_value": [
            "change of plan on the {key}: {new} instead of {old}, staging kept tripping on it",
            "bump the {key} from {old} to {new}",
            "{old} for the {key} is wrong, make it {new}",
        ],
        "change_again": [
            "ugh, the {key} again. {new}. {old} blew the memory budget on the small boxes",
            "one more change to the {key}: go with {new}, drop {old}",
            "final answer on the {key} is {new}. forget {old}, the soak test hated it",
        ],
        "ack_value": [
            "Updated: src/config.zig now sets the {key} to {new}.",
            "Done, the {key} in src/config.zig reads {new} now.",
        ],
        "reverse": [
            "Backing out of {old}: {why}. Switching to {new}.",
            "{old} won't hold up here, {why}. Going with {new} instead.",
        ],
        "reverse_again": [
            "Reversing once more: {old} is out too, because {why}. Final approach: {new}.",
            "Changing course again since {why}, so {old} goes. Replacing it with {new}.",
        ],
        "question": [
            "which commit introduced this? put the hash in your answer, it goes in the "
            "incident ticket",
            "what's the commit that broke resends? i need its hash for the postmortem",
        ],
        "commit": [
            "build: bump zig to 0.13.0",
            "ci: cache .zig-cache between jobs",
            "docs: broker failover runbook",
            "test: fuzz the frame decoder",
        ],
        "answer": [
            "It's {sha}. That commit moved the outbox onto the shared connection pool and "
            "dropped the resend hook on the way.",
            "{sha}. The outbox started borrowing pooled connections there, and the reconnect "
            "callback that triggered resends was never registered again.",
        ],
        "measure_question": [
            "also: benchmark one flush batch in ReleaseFast and tell me the mean. it's going "
            "in the perf budget doc, so hold on to the number",
            "need a number for the perf budget. run the flush bench with ReleaseFast and "
            "report the mean per batch",
        ],
        "measure_answer": [
            "Mean per flush batch: {figure} us (ReleaseFast, 1000 runs).",
            "The bench reports {figure} us per batch on average in ReleaseFast.",
        ],
        "last": [
            "That's where it stands: {test} is still failing, and I'm partway through {todo}. "
            "The rest of the list is done or dropped.",
            "Pausing here with two things open: {test} fails and {todo} is under way. "
            "Everything else on the list is finished or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._files: dict[str, list[str]] = {}
        self._broken: str | None = None  # the module whose build fails, until it passes
        self._rerun = True  # run the first failing test alone once, after the first test run
        self._todo_ids: dict[str, str] = {}  # to-do title → id
        self._todo_status: dict[str, str] = {}  # id → pending / completed
        self._pending: list[str] = []  # the pending list's ids, in order

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module}.test.{TEST_NAMES[name.removeprefix(f'test_{module}_')][0]}"

    @staticmethod
    def _abs(path: str) -> str:
        return f"{ROOT}/{path}"

    def _block_id(self) -> str:
        return f"precmd-{hexid(self.rng, 8)}-{hexid(self.rng, 4)}"

    # --- run_command ------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if filler and command.startswith("tail -n "):
            self._read_log(command, output)
            return
        if command.startswith("git log"):
            command = "git --no-pager " + command.removeprefix("git ")
        if command == BENCH:
            self._long_run(command, output)
            return
        read_only = command.startswith(("git --no-pager", "git ls-files", "zig fmt --check"))
        risky = command.startswith(("rm ", "git rm", "git mv", "mkdir"))
        arguments = {"command": command, "is_read_only": read_only, "uses_pager": False,
                     "is_risky": risky}  # fmt: skip
        finished = {"output": output, "exit_code": exit_code, "command_id": self._block_id()}
        self.s.call("run_command", arguments, result(command=command, command_finished=finished),
                    filler=filler)  # fmt: skip
        if command == "zig build" and not exit_code and self._broken:
            self._tests_of(self._broken)
            self._broken = None
        if command == self.test_command() and exit_code and self._rerun:
            self._rerun = False
            self._run_one(output)

    def _long_run(self, command: str, output: str) -> None:
        """A run left going (`wait_until_complete` false), read back when it completes."""
        block = self._block_id()
        arguments = {"command": command, "is_read_only": False, "uses_pager": False,
                     "is_risky": False, "wait_until_complete": False}  # fmt: skip
        snapshot = {"output": "bench: warming up (3 rounds)", "command_id": block}
        self.s.call("run_command", arguments,
                    result(command=command, long_running_command_snapshot=snapshot))  # fmt: skip
        finished = {"output": f"bench: warming up (3 rounds)\n{output}", "exit_code": 0,
                    "command_id": block}  # fmt: skip
        self.s.call("read_shell_command_output", {"command_id": block, "on_completion": True},
                    result(command=command, command_finished=finished))  # fmt: skip

    def _tests_of(self, module: str) -> None:
        """After the build passes, the tests of the file the compiler flagged, by a filter."""
        passed = self.rng.randint(4, 9)
        output = "\n".join(
            [
                f"Build Summary: 3/3 steps succeeded; {passed}/{passed} tests passed",
                "test success",
                f"└─ run test {passed} passed 4ms MaxRSS:2M",
                "   └─ zig test Debug native success 3s MaxRSS:181M",
            ]
        )
        self.shell("zig build test -Dtest-filter=tenant --summary all", output)

    def _run_one(self, output: str) -> None:
        """The first failing test run alone with `zig test`, in Warp's terminal (a tty)."""
        name = re.search(r"^error: '(\S+?)\.test\.(.+?)' failed: (.+)$", output, re.M)
        if name is None:
            return
        module, description, complaint = name.groups()
        line = next(v[2] for v in TEST_NAMES.values() if v[0] == description)
        rows = [
            complaint,
            f"1/1 {module}.test.{description}...FAIL (TestExpectedEqual)",
            *_trace(
                self._abs(f"src/{module}.zig"),
                line,
                f"test.{description}",
                complaint.split()[1].rstrip(","),
            ),
            "0 passed; 0 skipped; 1 failed.",
            "error: the following test command failed with exit code 1:",
            f"{ROOT}/.zig-cache/o/{hexid(self.rng, 32)}/test",
        ]
        self.shell(f'zig test src/{module}.zig --test-filter "{description}"', "\n".join(rows),
                   exit_code=1)  # fmt: skip

    # --- files ------------------------------------------------------------------------------

    def _read(self, path: str, lines: Sequence[str], first: int | None, *,
              filler: bool = False) -> None:  # fmt: skip
        name = self._abs(path)
        item: dict[str, Any] = {"name": name}
        content: dict[str, Any] = {"file_path": name, "content": "\n".join(lines)}
        if first is not None:
            span = {"start": first, "end": first + len(lines) - 1}
            item["line_ranges"] = [span]
            content["line_range"] = span
        answer = result(text_files_success={"files": [content]})
        self.s.call("read_files", {"files": [item]}, answer, filler=filler)

    def _read_log(self, command: str, output: str) -> None:
        lines = output.split("\n")
        total = self.rng.randint(400, 3000)
        self._read(command.rsplit(maxsplit=1)[-1], lines, total - len(lines) + 1, filler=True)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = [*_HEADER, *(zig_line(line) for line in content.split("\n"))]
        if not filler:
            self._files[path] = lines
        if filler and self.rng.random() < 0.3:
            first = self.rng.randint(5, max(5, len(lines) // 3))
            last = min(len(lines), first + self.rng.randint(25, 60))
            self._read(path, lines[first - 1 : last], first, filler=True)
            return
        self._read(path, lines, None, filler=filler)

    def _updated(self, path: str, lines: Sequence[str], first: int) -> str:
        span = {"start": first, "end": first + len(lines) - 1}
        updated = {"file": {"file_path": self._abs(path), "content": "\n".join(lines),
                            "line_range": span}, "was_edited_by_user": False}  # fmt: skip
        return result(success={"updated_files_v2": [updated]})

    def edit(self, path: str, old: str, new: str) -> None:
        old_zig, new_zig = zig_line(old), zig_line(new)
        if "tenant_id" in new and "tenant_id" not in old:
            self._fix_calls(path, old_zig, new_zig)
            return
        lines = self._files.get(path, [])
        at = lines.index(old_zig) if old_zig in lines else 0
        if old_zig in lines:
            lines[at] = new_zig
        diff = {"file_path": self._abs(path), "search": old_zig, "replace": new_zig}
        summary = "Read the limit from config instead of a constant"
        self.s.call("edit_files", {"summary": summary, "diffs": [diff]},
                    self._updated(path, [new_zig], at + 1))  # fmt: skip

    def _fix_calls(self, path: str, old: str, new: str) -> None:
        """The compiler's fix: read the lines it named, then one diff per call, each with the
        line above it so that its search matches once."""
        window = [old if line == "{call}" else line for line in SEND_WINDOW]
        self._read(path, window, 84)
        diffs = []
        for at in (88, 93):
            before = window[at - 85]
            diffs.append({"file_path": self._abs(path), "search": f"{before}\n{old}",
                          "replace": f"{before}\n{new}"})  # fmt: skip
        summary = "Pass the batch's tenant to both send calls"
        fixed = [new if line == old else line for line in window]
        self.s.call("edit_files", {"summary": summary, "diffs": diffs},
                    self._updated(path, fixed[3:10], 87))  # fmt: skip

    def create(self, path: str, content: str) -> None:
        text = "\n".join([*_HEADER, *content.split("\n")]) + "\n"
        arguments = {"file_path": self._abs(path), "content": text}
        span = {"start": 1, "end": text.count("\n")}
        written = {"file": {"file_path": self._abs(path), "line_range": span},
                   "was_edited_by_user": False}  # fmt: skip
        self.s.call("create_file", arguments, result(success={"updated_files_v2": [written]}))

    def delete(self, path: str) -> None:
        gone = {"file_path": self._abs(path)}
        summary = "Remove the legacy module"
        self.s.call("edit_files", {"summary": summary, "deleted_files": [gone]},
                    result(success={"deleted_files": [gone]}))  # fmt: skip

    def move(self, source: str, destination: str) -> None:
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {ROOT}/{folder} && git mv {ROOT}/{source} {ROOT}/{destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        by_file: dict[str, list[int]] = {}
        for hit in hits:
            path, line, _ = hit.split(":", 2)
            by_file.setdefault(self._abs(path), []).append(int(line))
        if filler and self.rng.random() < 0.3:
            snippets = []
            for hit in list(hits)[:6]:
                path, line, text = hit.split(":", 2)
                number = int(line)
                snippets.append({"file_path": self._abs(path), "content": text.strip(),
                                 "line_range": {"start": number, "end": number}})  # fmt: skip
            arguments = {"query": f"where {pattern} records are looked up",
                         "path_filters": [root], "codebase_path": ROOT}  # fmt: skip
            self.s.call("search_codebase", arguments, result(success={"files": snippets}),
                        filler=True)  # fmt: skip
            return
        matched = [
            {"file_path": path, "matched_lines": [{"line_number": n} for n in sorted(set(lines))]}
            for path, lines in by_file.items()
        ]
        answer = result(success={"matched_files": matched})
        self.s.call("grep", {"queries": [pattern], "path": root}, answer, filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        found = "\n".join(self._abs(p) for p in sorted(set(paths)))
        answer = result(success={"matched_files": found})
        self.s.call("file_glob", {"patterns": ["*.zig"], "path": root}, answer, filler=filler)

    # --- to-dos -----------------------------------------------------------------------------

    def _todo_state(self) -> str:
        completed = [i for i, s in self._todo_status.items() if s == "completed"]
        return result(pending=list(self._pending), completed=completed)

    def _new_todo_id(self) -> str:
        return f"{hexid(self.rng, 8)}-{hexid(self.rng, 4)}"

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        first = not self._todo_ids
        for title, _ in items:
            if title not in self._todo_ids:
                self._todo_ids[title] = self._new_todo_id()
                self._todo_status[self._todo_ids[title]] = "pending"
        if first:
            initial = [{"id": self._todo_ids[t], "title": t} for t, _ in items]
            self._pending = [item["id"] for item in initial]
            self.s.call("create_todo_list", {"initial_todos": initial}, self._todo_state())
            return
        done = [self._todo_ids[t] for t, s in items if s == "completed"
                and self._todo_status.get(self._todo_ids[t]) == "pending"]  # fmt: skip
        if done:
            for todo in done:
                self._todo_status[todo] = "completed"
            self._pending = [p for p in self._pending if p not in done]
            self.s.call("mark_todos_completed", {"todo_ids": done}, self._todo_state())
        pending = [self._todo_ids[t] for t, s in items if s in ("pending", "in_progress")]
        if pending != self._pending:
            for todo in self._pending:
                if todo not in pending:  # left out of the pending list: dropped
                    self._todo_status.pop(todo, None)
            self._pending = pending
            titles = {v: k for k, v in self._todo_ids.items()}
            listed = [{"id": p, "title": titles[p]} for p in pending]
            self.s.call("update_pending_todos", {"updated_pending_todos": listed},
                        self._todo_state())  # fmt: skip

    # --- what the commands print ------------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            return "info(replay): 23 parked messages, 0 eligible for resend (dry run, nothing sent)"
        if k == 1:
            return ""  # zig fmt --check names the files it would change: none
        return "\n".join(
            [
                "Build Summary: 3/3 steps succeeded",
                "install success",
                "└─ install relay success",
                "   └─ zig build-exe relay ReleaseSafe aarch64-linux-musl success 14s MaxRSS:412M",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        call = zig_line(f"{module}_send(batch)")
        column = call.index("tenant_id") + 1
        probe = "use of undeclared identifier 'tenant_id'"
        rows = ["install", "└─ install relay", "   └─ zig build-exe relay Debug native 2 errors"]
        for at in (88, 93):
            rows += [f"src/{module}.zig:{at}:{column}: error: {probe}", call,
                     " " * (column - 1) + "^~~~~~~~~"]  # fmt: skip
        rows += [
            "error: the following command failed with 2 compilation errors:",
            f"/opt/homebrew/bin/zig build-exe -ODebug -Mroot={ROOT}/src/main.zig --cache-dir "
            f"{ROOT}/.zig-cache --global-cache-dir /Users/dev/.cache/zig --name relay --listen=-",
            "Build Summary: 0/3 steps succeeded; 1 failed",
            "install transitive failure",
            "└─ install relay transitive failure",
            "   └─ zig build-exe relay Debug native 2 errors",
            *self._build_failed(),
        ]
        self._broken = module
        return "\n".join(rows), probe, "zig build"

    def _build_failed(self) -> list[str]:
        return [
            "error: the following build command failed with exit code 1:",
            f"{ROOT}/.zig-cache/o/{hexid(self.rng, 32)}/build /opt/homebrew/bin/zig {ROOT} "
            f"{ROOT}/.zig-cache /Users/dev/.cache/zig --seed 0x{hexid(self.rng, 8)} "
            f"-Z{hexid(self.rng, 16)}",
        ]

    def build_ok(self) -> str:
        return ""  # a passing zig build prints nothing

    def measurement(self, figure: str) -> tuple[str, str]:
        output = f"flush_batch: 1000 runs, mean {figure} us, min {float(figure) * 0.93:.2f} us"
        return output, BENCH

    def test_command(self) -> str:
        return "zig build test"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{passed}/{passed + failed} tests passed; {failed} failed"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        total = failed + passed
        tree = f"run test {passed}/{total} passed, {failed} failed"
        rows = ["test", f"└─ {tree}"]
        for test in failing:
            module, description = test.split(".test.", 1)
            _, complaint, line = next(v for v in TEST_NAMES.values() if v[0] == description)
            rows.append(f"error: '{test}' failed: {complaint}")
            rows += _trace(
                self._abs(f"src/{module}.zig"),
                line,
                f"test.{description}",
                complaint.split()[1].rstrip(","),
            )
        rows += [
            f"Build Summary: 3/5 steps succeeded; 1 failed; {self.test_counts(failed, passed)}",
            "test transitive failure",
            f"└─ {tree}",
            *self._build_failed(),
        ]
        return "\n".join(rows)
