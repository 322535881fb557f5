"""A Cursor-style family, telling the story's second-thoughts variant: a C# / .NET service
(`dotnet build`, `dotnet test` with xUnit, BenchmarkDotNet, bombardier) worked on through
the tools of Cursor's agent mode, by a terse senior .NET developer and an assistant who
change course in words no other family uses.

Tool names and argument names, as Cursor's agent prompts of mid-2025 declare them
(x1xhlol/system-prompts-and-models-of-ai-tools, `Cursor Prompts/Agent Prompt v1.2.txt` and
`Agent Tools v1.0.json`):

- `run_terminal_cmd` {command, is_background, explanation}. Its result, as recorded from
  Cursor (edobry/minsky `test-verification/phase3-command-tools-analysis.md`): `Exit code:
  N`, `Command output:` with the output fenced, `Command completed.`, and the notes that the
  shell will be reused and which directory it is in. Pagers get `| cat` appended, as the
  tool description asks.
- `read_file` {target_file, should_read_entire_file, start_line_one_indexed,
  end_line_one_indexed_inclusive, explanation}: `Contents of <path>, lines 1-N (entire
  file):` and the text; a partial read says `(total N lines)` and ends on an outline of the
  rest.
- `edit_file` {target_file, instructions, code_edit}: `code_edit` holds only the changed
  lines with `// ... existing code ...` standing for the rest; a new file is the whole
  content in `code_edit`. The result is the apply model's diff, "The apply model made the
  following changes to the file:" and a fenced `-`/`+` diff (as Cursor transcripts show it;
  a new file's diff starts from an empty `- ` line).
- `reapply` {target_file}: a smarter model re-applies the last edit when the diff was not
  the one intended; it answers with the same diff text.
- `delete_file` {target_file, explanation}; `list_dir` {relative_workspace_path,
  explanation} answering `Contents of directory:` and `[file] name (NKB, N lines)` lines;
  `grep_search` {query, include_pattern, explanation} answering `File: file://<abs>` and
  `Line N: text` lines; `file_search` {query, explanation} answering absolute paths and
  "NOTE: These are the first 10 results. There were N total results from the search."
  (minsky's `phase2-search-tools-results.md`).
- `todo_write` {merge, todos: [{id, content, status}]} with pending / in_progress /
  completed / cancelled: `merge: false` writes the whole list, `merge: true` sends only the
  items that changed, by id, leaving unchanged properties out (the prompt's own wording).
  The result restates the merged list as JSON after "Successfully updated TODOs." (as a
  recorded Cursor session shows it).

The text `delete_file` answers was not in the stored sources; a short confirmation stands
for it. Cursor has no move tool and no final-answer tool: the fixture moves with `git mv`
through the terminal, and the session ends on the assistant's text. Every user message is
wrapped in `<user_query>` tags, as Cursor sends it to the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Session, Voice, camel

ROOT = "/Users/dev/src/pagerhook"
#: What Cursor's terminal tool says after every command's output.
SHELL_FOOTER = (
    "Command completed.\n\nThe previous shell command ended, so on the next invocation of "
    "this tool, you will be reusing the shell.\n\nOn the next terminal tool call, the "
    f"directory of the shell will already be {ROOT}."
)
APPLIED = "The apply model made the following changes to the file:"
TODOS_UPDATED = (
    "Successfully updated TODOs. Make sure to follow and update your TODO list as you make "
    "progress. Cancel and add new TODO tasks as needed when the user makes a correction or "
    "follow-up request.\n\nHere are the latest contents of your TODO list:\n"
)
EXISTING = "// ... existing code ..."


def _query(text: str) -> str:
    """A user message as Cursor hands it to the model."""
    return f"<user_query>\n{text}\n</user_query>"


def _todo_id(content: str) -> str:
    """`wire the throttle exporter into …` → `wire_the_throttle`: the model's own ids."""
    return "_".join(content.split()[:3])


class CursorVoice(Voice):
    family = "cursor-style"
    system_prompt = (
        "You are a powerful agentic AI coding assistant. You operate exclusively in Cursor, "
        "the world's best IDE.\n\nYou are pair programming with a USER to solve their coding "
        "task. Each time the USER sends a message, we may attach information about their "
        "current state: open files, cursor position, linter errors. The USER's instructions "
        "are in the <user_query> tag.\n\n<making_code_changes>\nNever output code to the USER "
        "unless requested; use the code edit tools. Mark unchanged code in code_edit with "
        "`// ... existing code ...`.\n</making_code_changes>\n\n<user_info>\nThe user's OS "
        "version is darwin 24.5.0. The absolute path of the user's workspace is "
        f"{ROOT}. The user's shell is /bin/zsh.\n</user_info>"
    )
    src = "src/Pagerhook.Core"
    ext = "cs"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "dotnet run --project src/Pagerhook.Cli -- replay --stage {module} --since 24h --dry-run",
        "dotnet format src/Pagerhook.Core --include src/Pagerhook.Core/{module}.cs "
        "--verify-no-changes",
        "dotnet run -c Release --project bench/Pagerhook.Bench -- --filter '*{module}*'",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("HttpClient handler lifetime", "2 minutes", "20 minutes", "8 minutes"),
        ("Polly retry count", "6 attempts", "2 attempts", "4 attempts"),
        ("dispatch channel capacity", "400 alerts", "4800 alerts", "1600 alerts"),
        ("Kestrel keep-alive timeout", "90 seconds", "25 seconds", "55 seconds"),
        ("EF Core command timeout", "40 seconds", "180 seconds", "75 seconds"),
        ("per-receiver concurrency", "4 requests", "16 requests", "9 requests"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        (
            "a Hangfire recurring job",
            "an Azure Service Bus session queue per receiver",
            "Hangfire polls every fifteen seconds and pages would go out late",
            "a System.Threading.Channels pipeline with one reader per receiver",
            "Service Bus sessions are capped on the tier we pay for",
        ),
        (
            "MassTransit's redelivery filter",
            "a Polly retry pipeline around the HttpClient",
            "the redelivery filter sends every retry to the back of the queue",
            "a retry_schedule table in Postgres drained by a BackgroundService",
            "Polly keeps its pending retries in memory and a pod restart loses them",
        ),
        (
            "an IMemoryCache ordering buffer",
            "Redis sorted sets keyed by receiver",
            "each instance would buffer its own slice and ordering breaks across pods",
            "Postgres row locks taken with FOR UPDATE SKIP LOCKED",
            "the Redis cluster belongs to the billing team and they refused",
        ),
    )
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            _query(
                "{module} reorders pages when a receiver answers 429. Root-cause it and fix "
                "it. {other} sits on the same dispatcher, check that one too."
            ),
            _query(
                "Pages leave {module} out of sequence as soon as a receiver throttles us "
                "(429s). Need the cause and a fix. {other} shares the dispatcher; look there "
                "as well."
            ),
        ],
        "set_value": [
            _query("Initial {key}: {value}."),
            _query("Pin the {key} to {value} for the first cut."),
        ],
        "ack": ["Acknowledged.", "Will respect that.", "Fair enough; that shapes the fix."],
        "constraint": [
            _query("Constraint: {rule}."),
            _query("Ground rule: {rule}."),
            _query("Policy here: {rule}."),
        ],
        "plan": [
            "Proposed design: {plan} between the dispatcher and the receivers, so {module} "
            "hands pages over in sequence.",
            "I'll have {module} pass its pages to {plan} and let that enforce the ordering.",
        ],
        "change_value": [
            _query("{old} for the {key} is wrong. {new}."),
            _query("Correction: the {key} should read {new}; {old} was off."),
            _query("Redo the {key} as {new}. {old} was a placeholder."),
        ],
        "change_again": [
            _query("One more pass on the {key}: {new}. {old} overcorrects."),
            _query("Walk the {key} back to {new} from {old}."),
            _query("Split the difference on the {key}: {new} replaces {old}."),
        ],
        "ack_value": ["{key} → {new}.", "Applied {new} to the {key}."],
        "reverse": [
            "Course correction: {why}, which rules out {old}. {new} takes its place.",
            "Ditching {old}; {why}. {new} covers the ordering.",
        ],
        "reverse_again": [
            "{old} fails as well: {why}. Committing to {new}.",
            "Pulling {old} out too, since {why}; {new} owns the ordering from here.",
        ],
        "question": [
            _query("Which commit introduced the reordering? I need the SHA for the incident doc."),
            _query("Bisect the reordering to a commit. Keep the SHA, it goes into the retro."),
        ],
        "commit": ["build: bump Npgsql", "ci: cache NuGet", "docs: xmldoc pass", "chore: format"],
        "answer": [
            "Bisected to {sha}, the switch to the shared client.",
            "{sha} introduced it (the shared-client timeout switch).",
        ],
        "measure_question": [
            _query(
                "p95 from the bombardier run on staging? Record the number, capacity "
                "planning needs it."
            ),
            _query("Grab the staging p95 from bombardier and hold onto it for capacity planning."),
        ],
        "measure_answer": [
            "bombardier: p95 = {figure} ms on staging.",
            "Staging p95 under bombardier: {figure} ms.",
        ],
        "last": [
            "Pausing with {test} red and {todo} mid-flight. The remaining to-dos are closed "
            "out or cancelled.",
            "Open at handoff: {test} still red, {todo} in flight. Everything else is closed "
            "out or cancelled.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._edits = 0
        self._todos: list[dict[str, str]] = []

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        method = camel(name.removeprefix(f"test_{module}_"))
        return f"Pagerhook.Core.Tests.{camel(module)}Tests.{method}"

    def _explain(self, command: str) -> str:
        verb = " ".join(command.split()[:2])
        return {
            "dotnet build": "Compile the solution to see whether the change builds.",
            "dotnet test": "Run the test suite to see what still fails.",
            "tail -n": "Look at the most recent log lines.",
            "git log": "See which commits touched this file.",
            "git mv": "Move the fixture while keeping its history.",
        }.get(verb, "Run the command the task needs.")

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command.startswith("git log"):
            command += " | cat"  # Cursor's terminal tool asks for it where a pager would run
        arguments = {
            "command": command,
            "is_background": False,
            "explanation": self._explain(command),
        }
        result = (
            f"Exit code: {exit_code}\n\nCommand output:\n\n```\n{output}\n```\n\n{SHELL_FOOTER}"
        )
        self.s.call("run_terminal_cmd", arguments, result, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = content.split("\n")
        if filler and len(lines) > 80 and self.rng.random() < 0.4:
            # A partial read: the first 80 lines and an outline of the rest.
            shown = "\n".join(lines[:80])
            rest = [line for line in lines[80:] if line.startswith("public ")]
            outline = "\n".join(f"{81 + n}: {line}" for n, line in enumerate(rest[:6]))
            text = (
                f"Contents of {path}, lines 1-80 (total {len(lines)} lines):\n\n{shown}\n\n"
                f"Outline of the rest of the file:\n{outline}"
            )
            arguments = {
                "target_file": path,
                "should_read_entire_file": False,
                "start_line_one_indexed": 1,
                "end_line_one_indexed_inclusive": 80,
            }
        else:
            text = f"Contents of {path}, lines 1-{len(lines)} (entire file):\n\n{content}"
            arguments = {
                "target_file": path,
                "should_read_entire_file": True,
                "start_line_one_indexed": 1,
                "end_line_one_indexed_inclusive": len(lines),
            }
        if not filler:
            arguments["explanation"] = "Read the code before changing it."
        self.s.call("read_file", arguments, text, filler=filler)

    def _diff(self, removed: Sequence[str], added: Sequence[str]) -> str:
        body = "\n".join([*(f"- {line}" for line in removed), *(f"+ {line}" for line in added)])
        return f"{APPLIED}\n\n```\n{body}\n```"

    def edit(self, path: str, old: str, new: str) -> None:
        self._edits += 1
        arguments = {
            "target_file": path,
            "instructions": f"I am replacing `{old}` with `{new}` and leaving the rest as is.",
            "code_edit": f"{EXISTING}\n{new}\n{EXISTING}",
        }
        if self._edits == 3:
            # The apply model misreads the sketch and drops a line; the smarter model redoes it.
            self.s.call("edit_file", arguments, self._diff([old, "}"], [new]))
            self.s.call(
                "reapply",
                {"target_file": path},
                self._diff([old], [new]),
                text="That diff also removed a closing brace; having it applied again.",
            )
            return
        self.s.call("edit_file", arguments, self._diff([old], [new]))

    def create(self, path: str, content: str) -> None:
        arguments = {
            "target_file": path,
            "instructions": "I am creating this file with the class below.",
            "code_edit": content,
        }
        self.s.call("edit_file", arguments, self._diff([""], content.split("\n")))

    def delete(self, path: str) -> None:
        arguments = {"target_file": path, "explanation": "Remove the legacy file it replaces."}
        self.s.call("delete_file", arguments, f"File deleted successfully: {path}")

    def move(self, source: str, destination: str) -> None:
        self.shell(f"git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        grouped: dict[str, list[str]] = {}
        for hit in hits:
            path, line, text = hit.split(":", 2)
            grouped.setdefault(path, []).append(f"Line {line}:{text}")
        blocks = [
            f"File: file://{ROOT}/{path}\n" + "\n".join(lines) for path, lines in grouped.items()
        ]
        arguments = {
            "query": pattern,
            "include_pattern": f"*.{self.ext}",
            "explanation": "Find where this is used.",
        }
        self.s.call("grep_search", arguments, "\n\n".join(blocks), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = list(dict.fromkeys(paths))
        if self.rng.random() < 0.5:
            entries = "\n".join(
                f"[file] {p.rsplit('/', 1)[-1]} ({self.rng.randint(1, 40)}KB, "
                f"{self.rng.randint(20, 900)} lines)"
                for p in sorted(unique)
            )
            arguments = {"relative_workspace_path": root}
            self.s.call(
                "list_dir", arguments, f"Contents of directory:\n\n{entries}", filler=filler
            )
            return
        first = "\n".join(f"{ROOT}/{p}" for p in unique[:10])
        note = (
            f"\n\nNOTE: These are the first 10 results. There were {len(unique)} total results "
            "from the search."
        )
        arguments = {"query": f"{root}/", "explanation": "Find the files of this project."}
        self.s.call("file_search", arguments, first + note, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        wanted = [
            {"id": _todo_id(text), "content": text, "status": status} for text, status in items
        ]
        if not self._todos:
            sent: list[dict[str, str]] = wanted
            merge = False
        else:
            # merge=true: only what changed, by id; a known item's content is left out.
            known = {item["id"]: item for item in self._todos}
            sent = []
            for item in wanted:
                before = known.get(item["id"])
                if before is None:
                    sent.append(item)
                elif before["status"] != item["status"]:
                    sent.append({"id": item["id"], "status": item["status"]})
            merge = True
        self._todos = wanted
        listed = json.dumps(
            [{"content": i["content"], "status": i["status"], "id": i["id"]} for i in wanted],
            separators=(",", ":"),
        )
        self.s.call("todo_write", {"merge": merge, "todos": sent}, TODOS_UPDATED + listed)

    def command_output(self, k: int) -> str:
        return [
            "Replaying pages dispatched in the last 24h (dry run)\n"
            "0 of 63 pages would be re-dispatched out of sequence",
            "",
            "// * Summary *\n\n"
            "BenchmarkDotNet v0.14.0, macOS Sequoia 15.5 (24F74) [Darwin 24.5.0]\n"
            "Apple M2 Pro, 1 CPU, 12 logical and 12 physical cores\n.NET SDK 8.0.411\n\n"
            "| Method   | Mean     | Error     | StdDev    | Allocated |\n"
            "|--------- |---------:|----------:|----------:|----------:|\n"
            "| Dispatch | 4.218 us | 0.0412 us | 0.0385 us |   1.23 KB |",
        ][k]

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = "error CS7036: There is no argument given that corresponds to the required "
        probe += "parameter 'tenantId'"
        where = f"{ROOT}/{self.src}/{module}.cs(88,13)"
        csproj = f"[{ROOT}/{self.src}/Pagerhook.Core.csproj]"
        line = f"{where}: {probe} of '{camel(module)}.{module}_send(Batch, string)' {csproj}"
        output = (
            "  Determining projects to restore...\n  All projects are up-to-date for restore.\n"
            f"{line}\n\nBuild FAILED.\n\n{line}\n    0 Warning(s)\n    1 Error(s)\n\n"
            "Time Elapsed 00:00:02.91"
        )
        return output, probe, "dotnet build Pagerhook.sln"

    def build_ok(self) -> str:
        return (
            "  Determining projects to restore...\n  All projects are up-to-date for restore.\n"
            f"  Pagerhook.Core -> {ROOT}/{self.src}/bin/Debug/net8.0/Pagerhook.Core.dll\n"
            f"  Pagerhook.Cli -> {ROOT}/src/Pagerhook.Cli/bin/Debug/net8.0/Pagerhook.Cli.dll\n\n"
            "Build succeeded.\n    0 Warning(s)\n    0 Error(s)\n\nTime Elapsed 00:00:04.87"
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        line = (
            "Bombarding https://staging.pagerhook.example/v1/pages for 30s using 64 "
            "connection(s)\n"
            "Done!\n"
            "Statistics        Avg      Stdev        Max\n"
            "  Reqs/sec      1843.22     311.40    2630.11\n"
            "  Latency       34.61ms    19.02ms   812.44ms\n"
            "  Latency Distribution\n"
            "     50%    28.17ms\n     75%    41.90ms\n     90%    63.55ms\n"
            f"     95%    {figure}ms\n"
            "     99%   948.31ms\n"
            "  HTTP codes:\n    1xx - 0, 2xx - 55291, 3xx - 0, 4xx - 0, 5xx - 0\n    others - 0\n"
            "  Throughput:     1.21MB/s"
        )
        command = "bombardier -c 64 -d 30s -l https://staging.pagerhook.example/v1/pages"
        return line, command

    def test_command(self) -> str:
        return "dotnet test Pagerhook.sln --nologo"

    def test_counts(self, failed: int, passed: int) -> str:
        # `dotnet test` right-aligns each count in five columns.
        return (
            f"Failed: {failed:>5}, Passed: {passed:>5}, Skipped: {0:>5}, "
            f"Total: {failed + passed:>5}"
        )

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        dll = f"{ROOT}/tests/Pagerhook.Core.Tests/bin/Debug/net8.0/Pagerhook.Core.Tests.dll"
        lines = [
            f"Test run for {dll} (.NETCoreApp,Version=v8.0)",
            "VSTest version 17.11.1 (arm64)",
            "",
            "Starting test execution, please wait...",
            "A total of 1 test files matched the specified pattern.",
        ]
        for n, t in enumerate(failing):
            test_class = t.rsplit(".", 1)[0].rsplit(".", 1)[1]
            lines += [
                f"[xUnit.net 00:00:0{n + 1}.02]     {t} [FAIL]",
                f"  Failed {t} [{14 + 3 * n} ms]",
                "  Error Message:",
                "   Assert.Equal() Failure: Collections differ",
                "           ↓ (pos 1)",
                "Expected: [1, 2, 3]",
                "Actual:   [1, 3, 2]",
                "           ↑ (pos 1)",
                "  Stack Trace:",
                f"     at {t}() in {ROOT}/tests/Pagerhook.Core.Tests/{test_class}.cs:line 41",
                "",
            ]
        lines.append(
            f"Failed!  - {self.test_counts(failed, passed)}, Duration: 3 s - "
            "Pagerhook.Core.Tests.dll (net8.0)"
        )
        return "\n".join(lines)
