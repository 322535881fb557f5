"""A Desktop-Commander-style family, telling the story's second-thoughts variant: a Gleam
service (`kittiwake`, a webhook relay on the BEAM: gleam.toml, wisp and mist, pog, gleam_otp;
`gleam build`, gleeunit tests run by `gleam test`, `gleam format --check`, a benchmark module
run with `gleam run -m bench/drain` for the variant's figure) worked on by Claude Code with its
built-in tools denied, acting only through the Desktop Commander MCP server
(wonderwhy-er/DesktopCommanderMCP). Claude Code names an MCP tool `mcp__<server>__<tool>`, and
the server is registered as `desktop-commander` (its README: `claude mcp add --scope user
desktop-commander -- npx -y @wonderwhy-er/desktop-commander@latest`). Anthropic Messages is
Claude Code's own dialect: the benchmark measures this family in it too
(`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`).

Verified in wonderwhy-er/DesktopCommanderMCP at 1eccc8b0 (version 0.2.46): argument names in
`src/tools/schemas.ts`, results in `src/handlers/*.ts`, `src/tools/*.ts` and
`src/search-manager.ts`, `src/utils/files/text.ts`, `src/utils/process-detection.ts`.
- `start_process` {command, timeout_ms}: "Process started with PID N (shell: S)\\nInitial
  output:\\n…" and a state line after the output: "🔄 Process N is waiting for input
  (detected: \\">\\")", "✅ Process N has finished execution", or, when the timeout came first,
  "⏳ Process is running. Use read_process_output to get more output."; which one is
  `analyzeProcessState`'s reading of the output (REPL prompts on the last line, completion
  words anywhere, error words on the last three lines), ported here as `process_state`. A
  process that exits before its timeout gets no state line and no exit code.
- `read_process_output` {pid, timeout_ms}: "[Reading N new lines (total: N lines)]\\n\\n…" and
  "✅ Process completed with exit code 0 (runtime: 21.40s)"; a completed session keeps no read
  position, so it answers its whole output from the first line.
- `interact_with_process` {pid, input}: "✅ Input executed in process N:\\n\\n📤 Output:\\n…"
  and the state line after two blank lines; the output is `cleanProcessOutput`'s (the shell's
  next prompt stays, trimmed).
- `read_file` {path, offset, length}: "[Reading N lines from start (total: T lines, R
  remaining)]\\n\\n…"; a negative offset reads the tail: "[Reading last N lines (total: T
  lines)]". `read_multiple_files` {paths}: several content blocks, a summary ("<path>:
  text/plain (text)") then "\\n--- <path> contents: ---\\n…" per file. `get_file_info`
  {path}: `key: value` rows, dates as JSON strings, then lineCount, lastLine, appendPosition.
- `write_file` {path, content, mode}: "Successfully wrote to <path> (N lines) " (and
  "appended to" for `append`; the trailing blank is the empty performance note); the tool's
  description asks for chunks of at most 30 lines, so a new file is a `rewrite` and appends.
- `edit_block` {file_path, old_string, new_string, expected_replacements}: on success the
  edited region, ten lines either side of the change, as "[Reading N lines from line L
  (total: T lines, R remaining)]\\n\\n…" (T counts the empty string after the last newline).
- `list_directory` {path, depth}: "[DIR] x" / "[FILE] x/y.gleam" rows relative to the path.
  `create_directory` {path}: "Successfully created directory <path>"; `move_file` {source,
  destination}: "Successfully moved <source> to <destination>".
- `start_search` {path, pattern, searchType, filePattern, contextLines}: "Started content
  search session: search_N_<ms>\\nPattern: \\"…\\"\\nPath: …\\nStatus: COMPLETED\\nRuntime:
  Nms\\nTotal results: N\\n\\nInitial results:\\n📄 <file>:<line> - <match>" (ten at most, then
  "... and N more results"), "\\n✅ Search completed."; a match row shows the matched text
  only (ripgrep's first submatch), a context row its trimmed line, and the total counts
  matches only. `get_more_search_results` {sessionId, offset, length}: "Search session: …\\n
  Status: COMPLETED\\nRuntime: Ns\\nTotal results found: N (M matches)\\nShowing results A-B\\n
  \\nResults:\\n…".
- No delete tool: deletions are `git rm` through `start_process`. No to-do tool: the
  assistant keeps its plan as a Markdown checklist in its own replies, rewritten whole when
  it changes (`- [x]` done, `- [ ] … ← in progress`, `- [ ] ~~…~~ (dropped)`).
- Processes start in the server's working directory; the assistant prefixes every command
  with `cd <project> && `, as its instructions ask, and passes absolute paths everywhere, as
  the tools' descriptions ask.

Verified in gleam-lang/gleam at 952c3012 and lpil/gleeunit at ce6d418b (1.9.0): the CLI's
progress lines ("  Compiling kittiwake", "   Compiled in 0.84s", "    Running
kittiwake_test.main", "   Exported kittiwake", right-aligned to eleven columns, on stderr and
without colour off a terminal); the type error's box ("error: Unknown variable", the "┌─"
location line, the gutter, the carets, "The name `tenant_id` is not in scope here.");
`gleam export erlang-shipment`'s closing text; `gleam shell` running `erl` ("    Running
Erlang shell"); gleeunit's reporter, which colours its output with ANSI escapes whatever the
terminal: a green dot per passing test, an `assert` failure as "assert <file>:<line>", " test:
<erlang module>.<function>", " code:", " left:", "right:", " info: Assertion failed.", and
"\\n41 passed, 1 failures" in red at the end.

This family's own reading, where no source says more (not verified): the system prompt
(Claude Code's opening line, its environment block, and the project's CLAUDE.md, which
Claude Code sends in a reminder of its own and which is folded into the system prompt here);
that Claude Code hands an MCP result's content blocks to the model as they are (one text
block each, several for read_multiple_files) and gives its calls `toolu_01…` ids; both
sides' wording and the texts the assistant writes before some calls; the panic's file as a
path relative to the project (gleeunit reads that file back, from the project root, to show
the code); both uses of the unknown name reported in one build, and the absolute path in
the compiler's location line; `gleam run -m` running a module of the `dev` directory; `erl`
printing its banner and prompts with its input a pipe, and not echoing what it is sent; the
Erlang/OTP and erts versions; the project's replay, bench and fixtures; PIDs, search session
ids, runtimes and timings.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel

PROJECT = "kittiwake"
ROOT = f"/home/dev/{PROJECT}"
SRC = f"src/{PROJECT}"
#: How Claude Code names the server's tools.
PREFIX = "mcp__desktop-commander__"
SHELL = "/bin/bash"
BUILD = "gleam build"
TESTS_COMMAND = "gleam test"
BENCH = "gleam run -m bench/drain"
#: How the assistant opens its checklist in its own replies.
PLAN_HEADING = "Checklist for the redelivery work:"
IN_PROGRESS = " ← in progress"
DROPPED = " (dropped)"
#: gleeunit's colours (`gleeunit/internal/reporting.gleam`).
ESC = "\x1b"
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
#: The failing tests: (function, the assert, the left value, line of the assert).
TESTS = {
    "retries": ("gives_up_after_third_failure_test", "assert attempts == 3", "2", 41),
    "orders_batches": ("replays_oldest_first_test",
                       "assert list.map(sent, fn(d) { d.seq }) == [1, 2, 3]", "[2, 1, 3]", 66),
    "handles_empty": ("empty_outbox_sends_nothing_test", "assert sent == []",
                      '[Delivery(seq: 1, tenant: "acme")]', 23),
}  # fmt: skip
_HEAD = (
    "import gleam/dict.{type Dict}", "import gleam/int", "import gleam/list",
    "import gleam/option.{type Option}", "import gleam/result",
    f"import {PROJECT}/client.{{type Client}}", f"import {PROJECT}/config.{{type Settings}}",
    f"import {PROJECT}/error.{{type Error, EmptyBatch, UnexpectedStatus}}", "",
)  # fmt: skip
#: `analyzeProcessState`'s prompts (in its order), completion and error patterns.
_PROMPTS = (">>> ", "... ", "> ", "... ", "> ", "+ ", "julia> ", "       ", "$ ", "# ",
            "% ", "bash-", "zsh-", "mysql> ", "    -> ", "=# ", "-# ", "redis> ", "> ",
            "... ")  # fmt: skip
_COMPLETION = re.compile(
    r"Process finished|Command completed|\[Process completed\]|Program terminated|Exit code:", re.I
)
_ERROR_END = re.compile(
    r"Error:|Exception:|Traceback|SyntaxError|NameError|TypeError|ValueError|ReferenceError"
    r"|Uncaught|at Object\.",
    re.I,
)
_CARET = re.compile(r"^\s*\^", re.M)
#: Texts the assistant writes before a call of the story's, by kind.
_LEADS = {
    "read": ("Let me open {name} first.", "Reading {name}.", ""),
    "edit": ("Now the change in {name}.", "Updating {name}.", ""),
    "run": ("Running `{name}`.", "Let me run `{name}`.", "", ""),
}


def process_state(output: str) -> tuple[str, str]:
    """`analyzeProcessState`: ("waiting", prompt), ("finished", "") or ("running", "")."""
    if not output.strip():
        return "running", ""
    lines = output.split("\n")
    last = lines[-1]
    for prompt in _PROMPTS:
        if last.endswith(prompt) or prompt in last:
            return "waiting", prompt
    if _COMPLETION.search(output):
        return "finished", ""
    tail = "\n".join(lines[-3:])
    if _ERROR_END.search(tail) or _CARET.search(tail):
        return "finished", ""
    return "running", ""


def gleam_line(line: str) -> str:
    """A story line as the Gleam it stands for: a limit is a `let` in a function, the send
    before the fix passes a `tenant_id` that is not in scope, the fix the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    if limit.startswith("limit"):
        return f"  let {module}_limit = {value}"
    tenant = "batch.tenant_id" if fixed else "tenant_id"
    return f"use _ <- result.try({module}_send(batch, {tenant}))"


def _status(read: int, total: int, offset: int = 0) -> str:
    """The status line of a ranged read (`generateEnhancedStatusMessage`)."""
    where = "start" if offset == 0 else f"line {offset}"
    remaining = max(0, total - offset - read)
    return f"[Reading {read} lines from {where} (total: {total} lines, {remaining} remaining)]"


def _green(text: str) -> str:
    return f"{ESC}[32m{text}{ESC}[39m"


def _cyan(text: str) -> str:
    return f"{ESC}[36m{text}{ESC}[39m"


def _grey(text: str) -> str:
    return f"{ESC}[90m{text}{ESC}[39m"


class DesktopCommanderVoice(Voice):
    family = "dc-style"
    system_prompt = (
        "You are Claude Code, Anthropic's official CLI for Claude.\n\n"
        "You are an interactive agent that helps users with software engineering tasks. Use "
        "the instructions below and the tools available to you to assist the user. Be "
        "concise; do what has been asked, nothing more. Mark your progress as you work and "
        "tell the user what you changed.\n\n"
        "Here is useful information about the environment you are running in:\n<env>\n"
        f"Working directory: {ROOT}\nIs directory a git repo: Yes\nPlatform: linux\n"
        "OS Version: Linux 6.8.0-51-generic\nToday's date: 2026-11-20\n</env>\n\n"
        f"Contents of {ROOT}/CLAUDE.md (project instructions, checked into the codebase):\n\n"
        f"# {PROJECT}\n\n"
        "Webhook relay on the BEAM: Gleam 1.13 on Erlang/OTP 28, wisp and mist for HTTP, pog "
        "for Postgres, gleam_otp actors for the delivery workers. Configuration is read from "
        "config/kittiwake.toml into `config.Settings`.\n\n"
        "## Tools\n\n"
        "Bash, Read, Edit, Write, Glob, Grep and TodoWrite are denied in .claude/settings.json. "
        "Work only through the desktop-commander MCP server:\n"
        "- files: read_file (offset/length for ranges, a negative offset for the tail), "
        "read_multiple_files, get_file_info, list_directory, write_file (new files in chunks "
        "of at most 30 lines: mode rewrite, then append), edit_block (old_string must match "
        "exactly; set expected_replacements when it occurs more than once), create_directory, "
        "move_file;\n"
        "- search: start_search (searchType content, filePattern *.gleam), then "
        "get_more_search_results for the rest;\n"
        "- commands: start_process with a timeout_ms; it runs from the server's directory, "
        f"so start every command with `cd {ROOT} && `. A process still running at the "
        "timeout is read with read_process_output; `gleam shell` is an Erlang shell you talk "
        "to with interact_with_process. There is no delete tool: use git rm.\n"
        "- Always pass absolute paths.\n"
        "- There is no todo tool either: keep the plan as a markdown checklist in your "
        "replies (- [x] done, - [ ] open) and post it again whenever it changes.\n\n"
        "## Commands\n\n"
        f"- `{BUILD}` compiles; `{TESTS_COMMAND}` runs the gleeunit suite (test/kittiwake); CI "
        "rejects anything gleam format would change.\n"
        "- The replay module (kittiwake/replay) has a dry-run mode that shows what a replay "
        "would send.\n"
        "- Benchmarks are dev modules under dev/bench, run through gleam run.\n"
        "- Releases are Erlang shipments built by gleam export.\n"
        "- Never commit or push; the user reviews the working tree."
    )
    src = SRC
    ext = "gleam"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "gleam run -m kittiwake/replay -- --queue {module} --dry-run",
        "gleam format --check src test",
        "gleam export erlang-shipment",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("outbox sweep interval", "400 ms", "9000 ms", "2500 ms"),
        ("gleam_otp supervisor restart intensity", "2 restarts", "40 restarts", "9 restarts"),
        ("mist acceptor pool", "8 acceptors", "200 acceptors", "50 acceptors"),
        ("pog pool size", "3 pooled connections", "64 pooled connections",
         "12 pooled connections"),
        ("parked delivery retention", "3 days", "90 days", "21 days"),
        ("release scheduler flag", "+S 2:2", "+S 32:32", "+S 8:8"),
    )  # fmt: skip
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a process.send_after loop in the HTTP handler process",
         "a supervised gleam_otp actor that owns the parked queue",
         "a handler process dies with its request and takes the timer along",
         "a Postgres LISTEN/NOTIFY trigger that wakes the sender",
         "the actor polls the table even when nothing is parked"),
        ("an ETS table for the parked deliveries",
         "a DETS file next to the release",
         "ETS is gone whenever the node restarts",
         "a parked_deliveries table in Postgres through pog",
         "DETS corrupts on an unclean shutdown and stops at 2 GB"),
        ("decoding payloads with dynamic.field chains",
         "gleam/dynamic/decode decoders per payload type",
         "the field chains give errors nobody can read",
         "storing the raw payload and decoding only at send time",
         "most parked payloads expire before anyone decodes them"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "kittiwake bug: when a partner endpoint goes down, {module} parks the deliveries, "
            "but once the partner is back nothing ever sends them. Make parked deliveries go "
            "out again, oldest first. {other} goes through the same code and is stuck too.",
            "Since Tuesday's deploy the parked deliveries in {module} just sit there after the "
            "partner recovers. Can you get them redelivered in the order they were parked? "
            "Same for {other}, it shares that path.",
        ],
        "set_value": [
            "use {value} as the {key} for now",
            "let's begin with the {key} at {value}",
        ],
        "ack": [
            "Got it — I'll keep to that for the rest of this.",
            "Understood, that holds for every change from here.",
            "OK, noted; nothing I touch will break that.",
        ],
        "constraint": [
            "also, for all of kittiwake: {rule}",
            "non-negotiable: {rule}",
            "before you go further — {rule}",
        ],
        "plan": [
            "Approach: {plan}, so that what {module} parks survives a restart and gets picked "
            "up again.",
            "I'll build the redelivery on {plan}; that way {module}'s parked deliveries are "
            "found again after a restart.",
        ],
        "change_value": [
            "the {key} at {old} is too tight for the slow partners, make it {new}",
            "actually {new} for the {key}, not {old}",
            "on-call says {old} as the {key} pages them at night. go to {new}",
        ],
        "change_again": [
            "the {key} again, sorry: {old} hogs the node. set {new}",
            "{old} for the {key} didn't survive the soak test either. {new}, final",
        ],
        "ack_value": [
            "Updated: the {key} is {new} in config/kittiwake.toml.",
            "Changed the {key} to {new} in config/kittiwake.toml.",
        ],
        "reverse": [
            "Rethinking this: {old} won't hold up, because {why}. Going with {new} instead.",
            "I'm dropping {old} — {why}. The redelivery moves to {new}.",
        ],
        "reverse_again": [
            "{old} has its own problem: {why}. Switching to {new}.",
            "On second look {old} is out too, since {why}. Moving to {new}.",
        ],
        "question": [
            "which commit broke the redelivery? I need its hash for the incident doc",
            "can you find the commit that introduced this? the postmortem wants the hash",
        ],
        "commit": [
            "deps: bump gleam_stdlib to 0.65",
            "test: share the fake partner server between modules",
            "docs: document the replay module's flags",
            "ci: cache build/packages between runs",
        ],
        "answer": [
            "It's {sha} — that commit moved delivery onto the shared httpc client, and the "
            "retry wrapper didn't come along.",
            "{sha} introduced it: switching to the shared httpc client dropped the retry wrapper.",
        ],
        "measure_question": [
            "how long does draining one batch take? run the drain bench and give me the mean, "
            "I'll need that number for capacity planning",
            "benchmark draining a single batch and tell me the mean time. keep the figure, it "
            "goes in the design review",
        ],
        "measure_answer": [
            "The drain bench puts one batch at a mean of {figure} µs.",
            "Draining a single batch takes {figure} µs on average, per bench/drain.",
        ],
        "last": [
            "Pausing here: {test} is still red, and I'm in the middle of the item to {todo}. "
            "Everything else on the checklist is checked off, dropped or waiting.",
            "Where this stands: the one failing test is {test}, and the open item I'm on is "
            "to {todo}. The rest of the checklist is done, dropped or still queued.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last read or written
        self._pid = 41000 + self.rng.randint(0, 6000)  # the last PID handed out
        self._shell: tuple[int, int] | None = None  # the gleam shell's PID, its next prompt
        self._searches = 0
        self._clock = 1795100000000 + self.rng.randint(0, 10**8)  # Date.now(), ms
        self._failed_before: list[str] = []

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        function = TESTS[name.removeprefix(f"test_{module}_")][0]
        return f"{PROJECT}@{module}_test.{function}"

    # --- Gleam source ---------------------------------------------------------------------

    def _declaration(self) -> list[str]:
        a, b, c = self.rng.sample(_WORDS, 3)
        n = self.rng.choice((16, 64, 250, 1000))
        kind = self.rng.randrange(4)
        if kind == 0:
            return [f"pub type {camel(a)}{camel(b)} {{",
                    f"  {camel(a)}{camel(b)}(id: Int, {a}_id: String, {b}: Option(String), "
                    f"{c}_count: Int)", "}", ""]  # fmt: skip
        if kind == 1:
            return [f"pub fn {a}_{b}s({a}: {camel(a)}, {c}: Option(String)) -> List(String) {{",
                    f'  let key = option.unwrap({c}, "{b}")', f"  {a}.items",
                    f"  |> list.filter(fn(item) {{ item.{c} == key }})", f"  |> list.take({n})",
                    "  |> list.map(fn(item) { item.id })", "}", ""]  # fmt: skip
        if kind == 2:
            return [f"fn {c}_totals({a}: {camel(a)}) -> Dict(String, Int) {{", f"  {a}.items",
                    f"  |> list.group(fn(item) {{ item.{c} }})",
                    "  |> dict.map_values(fn(_, items) {",
                    f"    list.fold(items, 0, fn(acc, item) {{ acc + item.{b}_count }})",
                    "  })", "}", ""]  # fmt: skip
        return [f"pub fn fetch_{a}_{c}(client: Client, ids: List(Int)) -> Result(Int, Error) {{",
                "  use first <- result.try(list.first(ids) |> result.replace_error(EmptyBatch))",
                f'  let path = "/v2/{a}s/{c}?limit={n}&page=" <> int.to_string(first)',
                "  use resp <- result.try(client.get(client, path))", "  case resp.status {",
                "    200 -> Ok(list.length(ids))", "    404 -> Ok(0)",
                f'    status -> Error(UnexpectedStatus("{b}", status))', "  }", "}",
                ""]  # fmt: skip

    def _gleam(self, lines: int, *, exact: bool = False) -> list[str]:
        """Whole declarations, about `lines` of them (`exact`: just as many, the last few
        made of one-line constants and a doc comment)."""
        out: list[str] = []
        while len(out) < lines - (10 if exact else 0):
            out += self._declaration()
        while exact and lines - len(out) >= 2:
            a, b = self.rng.sample(_WORDS, 2)
            out += [f"const {a}_{b}_page = {self.rng.choice((25, 50, 100, 200))}", ""]
        if exact and len(out) < lines:
            out.append("/// Sends what is parked, batch by batch, and stops at the first error.")
        return out

    def _render(self, content: str) -> list[str]:
        """A file the story describes, as the Gleam module it stands for: imports,
        declarations of about as many lines as the story's filler, then its own lines."""
        body = content.split("\n")
        story = [gleam_line(x) for x in body if STORY_LINE.match(x)]
        size = sum(1 for x in body if not STORY_LINE.match(x))
        out = [*_HEAD, *self._gleam(size)]
        for line in story:
            name = line.split()[1].removesuffix("_limit")
            out += [f"pub fn {name}_window(settings: Settings, inflight: Int) -> Int {{", line,
                    f"  int.min({name}_limit, inflight)", "}", ""]  # fmt: skip
        return out[:-1] if out[-1] == "" else out

    def _full(self, path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    # --- the conversation -----------------------------------------------------------------

    def _call(self, tool: str, arguments: dict[str, Any], result: str | Sequence[str], *,
              text: str = "", filler: bool = False) -> None:  # fmt: skip
        """One MCP tool call and its result: the content blocks the server returned."""
        ident = "toolu_01" + "".join(
            self.rng.choice(string.ascii_letters + string.digits) for _ in range(22)
        )
        blocks = [result] if isinstance(result, str) else list(result)
        messages = self.s.messages
        messages.append({
            "role": "assistant",
            "content": text or None,
            "tool_calls": [{"id": ident, "type": "function",
                            "function": {"name": PREFIX + tool,
                                         "arguments": json.dumps(arguments)}}],
        })  # fmt: skip
        if filler:
            self.s.filler_at.add(len(messages) - 1)
        messages.append({"role": "tool", "tool_call_id": ident,
                         "content": [{"type": "text", "text": b} for b in blocks]})  # fmt: skip
        if filler:
            self.s.filler_at.add(len(messages) - 1)

    def _lead(self, kind: str, name: str) -> str:
        return self.pick(_LEADS[kind]).format(name=name)

    def _next_pid(self) -> int:
        self._pid += self.rng.randint(3, 90)
        return self._pid

    def _started(self, pid: int, output: str, *, blocked: bool = False) -> str:
        """`startProcess`'s answer: the output so far and what state it reads from it."""
        state, prompt = process_state(output)
        status = ""
        if state == "waiting":
            status = f'\n🔄 Process {pid} is waiting for input (detected: "{prompt.strip()}")'
        elif state == "finished":
            status = f"\n✅ Process {pid} has finished execution"
        elif blocked:
            status = "\n⏳ Process is running. Use read_process_output to get more output."
        return f"Process started with PID {pid} (shell: {SHELL})\nInitial output:\n{output}{status}"

    # --- tools ----------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command.startswith("tail -n "):
            # A log's tail is a read_file with a negative offset (the tool says to prefer it).
            count, path = command.removeprefix("tail -n ").split(" ", 1)
            total = int(count) + self.rng.randint(40, 4000)
            result = f"[Reading last {count} lines (total: {total} lines)]\n\n{output}"
            self._call("read_file", {"path": self._full(path), "offset": -int(count)}, result,
                       filler=filler)  # fmt: skip
            return
        if command == BENCH:
            self._bench(output)
            return
        if output and not output.endswith("\n"):
            output += "\n"  # a command's output ends its last line
        timeout = 120000 if command.startswith(("gleam test", "gleam export")) else (
            60000 if command.startswith("gleam") else 10000)  # fmt: skip
        pid = self._next_pid()
        arguments = {"command": f"cd {ROOT} && {command}", "timeout_ms": timeout}
        text = "" if filler else self._lead("run", command)
        self._call("start_process", arguments, self._started(pid, output), text=text,
                   filler=filler)  # fmt: skip

    def _bench(self, output: str) -> None:
        """The benchmark outlasts its timeout: the first lines, then the rest once it ends."""
        lines = output.rstrip("\n").split("\n")
        warm = next(k for k, line in enumerate(lines) if line.startswith("warming up")) + 1
        pid = self._next_pid()
        first = "\n".join(lines[:warm]) + "\n"
        self._call("start_process", {"command": f"cd {ROOT} && {BENCH}", "timeout_ms": 30000},
                   self._started(pid, first, blocked=True),
                   text="The bench takes a while; starting it.")  # fmt: skip
        runtime = f"{self.rng.randint(18, 40)}.{self.rng.randint(10, 99)}"
        result = (f"[Reading {len(lines) + 1} new lines (total: {len(lines) + 1} lines)]\n\n"
                  f"{output.rstrip(chr(10))}\n\n✅ Process completed with exit code 0 "
                  f"(runtime: {runtime}s)")  # fmt: skip
        self._call("read_process_output", {"pid": pid, "timeout_ms": 60000}, result)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(content)
        full = self._full(path)
        if not filler:
            self._seen[path] = lines
            self._read(full, lines, text=self._lead("read", path.rsplit("/", 1)[-1]))
            return
        roll = self.rng.random()
        if self._failed_before and self._shell is None:
            # Once tests fail, a module's function is tried in the Erlang shell.
            self._evaluate(path, filler=True)
        elif roll < 0.5:
            self._read(full, lines, filler=True)
        elif roll < 0.7:
            # Two modules at once: a summary block, then one block per file.
            other_path = f"{SRC}/{self.rng.choice(_WORDS)}_{self.rng.choice(_WORDS)}.gleam"
            other = self._render("\n" * self.rng.randint(30, 70))
            paths = [full, self._full(other_path)]
            if paths[0] == paths[1]:
                paths.pop()
            blocks = ["\n".join(f"{p}: text/plain (text)" for p in paths)]
            for p, body in zip(paths, (lines, other), strict=False):
                status = _status(len(body), len(body))
                blocks.append(f"\n--- {p} contents: ---\n{status}\n\n" + "\n".join(body))
            self._call("read_multiple_files", {"paths": paths}, blocks, filler=True)
        elif roll < 0.85:
            # A size check first, then the start of the file.
            self._info(full, lines)
            self._read(full, lines, length=60, filler=True)
        else:
            self._evaluate(path, filler=True)

    def _read(self, full: str, lines: list[str], *, offset: int = 0, length: int = 0,
              text: str = "", filler: bool = False) -> None:  # fmt: skip
        arguments: dict[str, Any] = {"path": full}
        if offset or length:
            arguments.update(offset=offset, length=length)
        shown = lines[offset : offset + length] if length else lines[offset:]
        result = _status(len(shown), len(lines), offset) + "\n\n" + "\n".join(shown)
        self._call("read_file", arguments, result, text=text, filler=filler)

    def _info(self, full: str, lines: list[str]) -> None:
        size = sum(len(line) + 1 for line in lines)

        def stamp() -> str:
            return (f'"2026-11-{self.rng.randint(1, 19):02d}T{self.rng.randint(0, 23):02d}:'
                    f'{self.rng.randint(0, 59):02d}:{self.rng.randint(0, 59):02d}.'
                    f'{self.rng.randint(0, 999):03d}Z"')  # fmt: skip

        rows = [f"size: {size}", f"created: {stamp()}", f"modified: {stamp()}",
                f"accessed: {stamp()}", "isDirectory: false", "isFile: true", "permissions: 644",
                "fileType: text", f"lineCount: {len(lines)}", f"lastLine: {len(lines) - 1}",
                f"appendPosition: {len(lines)}"]  # fmt: skip
        self._call("get_file_info", {"path": full}, "\n".join(rows), filler=True)

    def _evaluate(self, path: str, *, filler: bool) -> None:
        """A function of a module tried in `gleam shell`, opened the first time."""
        if self._shell is None:
            pid = self._next_pid()
            banner = (
                f"  Compiling {PROJECT}\n   Compiled in {self.rng.randint(1, 3)}."
                f"{self.rng.randint(10, 99)}s\n    Running Erlang shell\nErlang/OTP 28 "
                "[erts-16.0.2] [source] [64-bit] [smp:8:8] [ds:8:8:10] [async-threads:1] "
                "[jit:ns]\n\nEshell V16.0.2 (press Ctrl+G to abort, type help(). for help)\n1> "
            )
            self._call("start_process", {"command": f"cd {ROOT} && gleam shell",
                                         "timeout_ms": 15000},
                       self._started(pid, banner), filler=filler)  # fmt: skip
            self._shell = (pid, 2)
        pid, prompt = self._shell
        module = path.removeprefix("src/").removesuffix(".gleam").replace("/", "@")
        a, b, c = self.rng.sample(_WORDS, 3)
        call = f'{module}:{a}_{b}s({{{a}, []}}, {{some, <<"{c}">>}}).'
        ids = [f'<<"{a}-{self.rng.randint(100, 999)}">>' for _ in range(self.rng.randint(0, 4))]
        out = f"[{','.join(ids)}]\n{prompt}>"
        self._shell = (pid, prompt + 1)
        result = (f"✅ Input executed in process {pid}:\n\n📤 Output:\n{out}\n\n\n🔄 Process "
                  f'{pid} is waiting for input (detected: ">")')  # fmt: skip
        self._call("interact_with_process", {"pid": pid, "input": call}, result, filler=filler)

    def _locate(self, path: str, before: str) -> None:
        """The compiler named two lines of a file not read yet: read around them."""
        stem = path.rsplit("/", 1)[-1].removesuffix(".gleam")
        lines = [*_HEAD, *self._gleam(83 - len(_HEAD), exact=True)]
        lines += [f"pub fn drain_{stem}(batches: List(Batch)) -> Result(Nil, Error) {{",
                  "  list.try_each(batches, fn(batch) {",
                  "    use <- bool.guard(list.is_empty(batch.deliveries), Ok(Nil))",
                  '    logging.log(logging.Debug, "draining " <> batch.id)', f"    {before}",
                  "    Ok(Nil)", "  })", "}", "",
                  f"pub fn retry_{stem}(batch: Batch) -> Result(Nil, Error) {{",
                  "  use <- bool.guard(batch.attempts >= max_attempts, Error(GaveUp(batch.id)))",
                  f"  {before}", "  Ok(Nil)", "}", "", *self._gleam(30)[:-1]]  # fmt: skip
        assert lines[87].strip() == lines[94].strip() == before, stem
        self._seen[path] = lines
        self._read(self._full(path), lines, offset=80, length=20,
                   text="The compiler points at lines 88 and 95; reading around them.")  # fmt: skip

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = gleam_line(old), gleam_line(new)
        lines = self._seen.get(path, [])
        if not any(before in line for line in lines):
            self._locate(path, before.strip())
            lines = self._seen[path]
            before, after = before.strip(), after.strip()
            # The call itself, the same in both places.
            before = before.removeprefix("use _ <- result.try(").removesuffix(")")
            after = after.removeprefix("use _ <- result.try(").removesuffix(")")
        content = "\n".join(lines) + "\n"
        count = content.count(before)
        first = content.index(before)
        new_content = content.replace(before, after)
        new_lines = new_content.split("\n")
        self._seen[path] = new_lines[:-1]
        # `performSearchReplace`'s preview: ten lines either side of the first change.
        total = len(new_lines)
        at = new_content[:first].count("\n")
        start, end = max(0, at - 10), min(total, at + after.count("\n") + 1 + 10)
        result = _status(end - start, total, start) + "\n\n" + "\n".join(new_lines[start:end])
        arguments = {"file_path": self._full(path), "old_string": before, "new_string": after,
                     "expected_replacements": count}  # fmt: skip
        self._call("edit_block", arguments, result,
                   text=self._lead("edit", path.rsplit("/", 1)[-1]))  # fmt: skip

    def create(self, path: str, content: str) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        full = self._full(path)
        chunks = [lines[k : k + 28] for k in range(0, len(lines), 28)]
        for k, chunk in enumerate(chunks):
            text = "\n".join(chunk) + "\n"
            mode = "rewrite" if k == 0 else "append"
            verb = "wrote to" if k == 0 else "appended to"
            lead = f"Writing {path.rsplit('/', 1)[-1]} in {len(chunks)} chunks." if k == 0 else ""
            self._call("write_file", {"path": full, "content": text, "mode": mode},
                       f"Successfully {verb} {full} ({text.count(chr(10)) + 1} lines) ",
                       text=lead)  # fmt: skip

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = self._full(source.replace("testdata/", "test/fixtures/", 1))
        destination = self._full(destination.replace("testdata/", "test/fixtures/", 1))
        folder = destination.rsplit("/", 1)[0]
        self._call("create_directory", {"path": folder}, f"Successfully created directory {folder}")
        self._call("move_file", {"source": source, "destination": destination},
                   f"Successfully moved {source} to {destination}")  # fmt: skip

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        """A content search with two lines of context: ripgrep's rows, a match as the text it
        matched, a context line as itself."""
        by_file: dict[str, set[int]] = {}
        for hit in hits:
            path, line, _ = hit.split(":", 2)
            by_file.setdefault(self._full(path), set()).add(int(line))
        rows: list[str] = []
        matches = 0
        for path in sorted(by_file):
            matched = by_file[path]
            near = sorted({n for m in matched for n in range(max(1, m - 2), m + 3)})
            for n in near:
                if n in matched:
                    matches += 1
                    rows.append(f"📄 {path}:{n} - {pattern}")
                else:
                    rows.append(f"📄 {path}:{n} - {self._context_line()}")
        self._searches += 1
        self._clock += self.rng.randint(20000, 900000)
        session = f"search_{self._searches}_{self._clock}"
        arguments = {"path": self._full(root), "pattern": pattern, "searchType": "content",
                     "filePattern": "*.gleam", "contextLines": 2}  # fmt: skip
        text = (f'Started content search session: {session}\nPattern: "{pattern}"\n'
                f"Path: {self._full(root)}\nStatus: COMPLETED\n"
                f"Runtime: {self.rng.randint(18, 60)}ms\nTotal results: {matches}\n\n"
                "Initial results:\n" + "".join(f"{row}\n" for row in rows[:10]))  # fmt: skip
        if len(rows) > 10:
            text += f"... and {len(rows) - 10} more results\n"
        self._call("start_search", arguments, text + "\n✅ Search completed.", filler=filler)
        if len(rows) <= 10:
            return
        rest = rows[10:110]
        hint = "\n📖 More results available. Use get_more_search_results with offset: 110"
        more = (f"Search session: {session}\nStatus: COMPLETED\n"
                f"Runtime: {self.rng.randint(2, 9)}s\n"
                f"Total results found: {len(rows)} ({matches} matches)\n"
                f"Showing results 10-{10 + len(rest) - 1}\n\nResults:\n"
                + "".join(f"{row}\n" for row in rest) + (hint if len(rows) > 110 else "")
                + "\n✅ Search completed.")  # fmt: skip
        self._call("get_more_search_results", {"sessionId": session, "offset": 10, "length": 100},
                   more, filler=filler)  # fmt: skip

    def _context_line(self) -> str:
        a, b, c = self.rng.sample(_WORDS, 3)
        return self.pick([f"|> list.filter(fn(item) {{ item.{b} == key }})",
                          f"let key = option.unwrap({c}, \"{a}\")",
                          f"pub fn {a}_{b}s({a}: {camel(a)}, {c}: Option(String)) {{",
                          "}", f"{a}.items", "|> list.map(fn(item) { item.id })"])  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        names = sorted({p.removeprefix(f"{root}/") for p in paths})
        rows = ["[DIR] internal", *(f"[FILE] {name}" for name in names)]
        self._call("list_directory", {"path": self._full(root), "depth": 1}, "\n".join(rows),
                   filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        rows = []
        for text, status in items:
            if status == "completed":
                rows.append(f"- [x] {text}")
            elif status == "in_progress":
                rows.append(f"- [ ] {text}{IN_PROGRESS}")
            elif status == "cancelled":
                rows.append(f"- [ ] ~~{text}~~{DROPPED}")
            else:
                rows.append(f"- [ ] {text}")
        self.say("\n".join([PLAN_HEADING, *rows]))

    # --- what the commands print ----------------------------------------------------------

    def _compiled(self) -> list[str]:
        return [f"  Compiling {PROJECT}",
                f"   Compiled in {self.rng.randint(0, 2)}.{self.rng.randint(10, 99)}s"]  # fmt: skip

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 80)
            return "\n".join([
                *self._compiled(), f"    Running {PROJECT}/replay.main",
                "dry run: nothing will be sent", "tenant      parked  due",
                f"acme        {parked:<7} 0", f"northwind   {parked // 4:<7} 0",
                f"total parked: {parked + parked // 4}, due now: 0",
            ])  # fmt: skip
        if k == 1:
            return ""  # gleam format --check prints nothing when every file is formatted
        deps = ("gleam_stdlib", "gleam_erlang", "gleam_otp", "gleam_json", "gleam_http",
                "gleam_crypto", "logging", "mist", "wisp", "pog")  # fmt: skip
        return "\n".join([
            *(f"  Compiling {dep}" for dep in deps), *self._compiled(),
            f"   Exported {PROJECT}", "",
            f"Your Erlang shipment has been generated to {ROOT}/build/erlang-shipment.", "",
            "It can be copied to a compatible server with Erlang installed and run with",
            "one of the following scripts:", "    - entrypoint.ps1 (PowerShell script)",
            "    - entrypoint.sh (POSIX Shell script)", "",
        ])  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        path = f"{ROOT}/{SRC}/{module}.gleam"
        message = "The name `tenant_id` is not in scope here."
        out = [f"  Compiling {PROJECT}"]
        call = gleam_line(f"{module}_send(batch)")
        for at, indent in ((88, "    "), (95, "  ")):
            source = f"{indent}{call}"
            column = source.index("tenant_id") + 1
            out += ["error: Unknown variable", f"   ┌─ {path}:{at}:{column}", "   │",
                    f"{at} │ {source}", f"   │ {' ' * (column - 1)}{'^' * len('tenant_id')}",
                    "", message, ""]  # fmt: skip
        return "\n".join(out), message.removesuffix("."), BUILD

    def build_ok(self) -> str:
        return "\n".join(self._compiled())

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        runs = self.rng.choice((1000, 2000, 5000))
        lines = [
            *self._compiled(),
            "    Running bench/drain.main",
            "warming up: 200 runs",
            f"drain_one_batch: {runs} runs",
            f"  mean    {figure}{self.rng.randint(10, 99)} µs",
            f"  min     {mean * 0.91:.2f} µs",
            f"  p50     {mean * 0.98:.2f} µs",
            f"  p99     {mean * 1.37:.2f} µs",
            f"  max     {mean * 2.6:.2f} µs",
        ]
        return "\n".join(lines), BENCH

    def test_command(self) -> str:
        return TESTS_COMMAND

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{passed} passed, {failed} failures"

    def _failure(self, test: str) -> str:
        module, function = test.removeprefix(f"{PROJECT}@").split(".", 1)
        key = next(k for k, v in TESTS.items() if v[0] == function)
        _, code, left, line = TESTS[key]
        where = _grey(f"test/{PROJECT}/{module}.gleam:{line}")
        return (f"\n{ESC}[1m{ESC}[31massert{ESC}[39m{ESC}[22m {where}\n"
                f"{_cyan(' test')}: {test}\n{_cyan(' code')}: {code}\n"
                f"{_cyan(' left')}: {left}\n{_cyan('right')}: {_grey('literal')}\n"
                f"{_cyan(' info')}: Assertion failed.\n")  # fmt: skip

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        self._failed_before = list(dict.fromkeys([*failing, *self._failed_before]))
        # Dots in the order the modules run, the failures among them.
        slots = sorted(self.rng.sample(range(passed + 1), len(failing)))
        out = "\n".join([*self._compiled(), f"    Running {PROJECT}_test.main"]) + "\n"
        dots = 0
        for test, slot in zip(failing, slots, strict=True):
            out += _green(".") * (slot - dots) + self._failure(test)
            dots = slot
        out += _green(".") * (passed - dots)
        return out + f"{ESC}[31m\n{self.test_counts(failed, passed)}{ESC}[39m"
