"""A Void-style family, telling the story's second-thoughts variant: an F# service on .NET 8
(dotnet build, Expecto tests run with `dotnet run --project tests`, Fantomas, FSharpLint,
BenchmarkDotNet for the variant's figure) worked on through the agent mode of the Void editor
(voideditor/void, an open-source fork of VS Code), by a user who types short requests and an
assistant who answers in brief Markdown. Void talks to OpenAI-compatible and Anthropic models
alike; the benchmark measures this family in the Anthropic Messages dialect too
(`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`).

Where the names come from: Void's own sources (voideditor/void, `common/prompt/prompts.ts`,
its `builtinTools` table, and `browser/toolsService.ts`, its `stringOfResult` strings):
- `read_file` {uri, start_line?, end_line?, page_number?}: answers the file's path, then its
  contents between triple backticks.
- `ls_dir` {uri, page_number?}: the folder's path, then one `├── ` / `└── ` line per entry,
  folders with a trailing `/`; `get_dir_tree` {uri} a tree of the folder.
- `search_for_files` {query, search_in_folder?, is_regex?, page_number?} and
  `search_pathnames_only` {query, include_pattern?, page_number?}: the matching paths, one a
  line; `search_in_file` {uri, query, is_regex?}: `Line N:` and the line in backticks.
- `read_lint_errors` {uri}: "No lint errors found." or `Error N:` / `Lines Affected:` blocks.
- `create_file_or_folder` {uri}: "URI <path> successfully created."; the content follows with
  `rewrite_file` {uri, new_content} ("Use this tool if you want to edit a file you just
  created"), which answers as `edit_file` does.
- `edit_file` {uri, search_replace_blocks}: one string of `<<<<<<< ORIGINAL` / `=======` /
  `>>>>>>> UPDATED` blocks; answers "Change successfully made to <path>. No lint errors found."
- `delete_file_or_folder` {uri, is_recursive?}: "URI <path> successfully deleted."
- `run_command` {command, cwd?}: the terminal's output and "(exit code N)".
- `open_persistent_terminal` {cwd?}: 'Successfully created persistent terminal.
  persistentTerminalId="…"'; `run_persistent_command` {command, persistent_terminal_id}: the
  output so far and "Terminal command is running in terminal <id>. The given outputs are the
  results after 5 seconds." while it runs; `kill_persistent_terminal` {persistent_terminal_id}:
  'Successfully closed terminal "<id>".'
Paths are full paths (the schema asks for "The FULL path"). Void has no to-do tool and no
move tool: the assistant keeps its checklist in its own messages, and moves go through
`run_command` (`git mv`). The system message opens as Void's agent-mode one does ("You are an
expert coding agent whose job is to help the user develop, run, and make changes to their
codebase.").

This family's own reading, where no source says more: the checklist's layout (`- [x]`,
`- [ ] … (in progress)`, `- [ ] ~~…~~ (cancelled)`), the long benchmark run in a persistent
terminal read back with `cat` of BenchmarkDotNet's GitHub report, and the outputs of the
tools, which follow theirs: MSBuild's `file(88,29): error FS0039: The value or constructor
'tenantId' is not defined. [project]` lines, "Build FAILED." with warning and error counts and
"Time Elapsed"; Expecto's `[hh:mm:ss ERR] <test> failed in 00:00:00.0120000.` blocks and its
"EXPECTO! N tests run in … – P passed, 0 ignored, F failed, 0 errored." summary; Fantomas'
check and FSharpLint's "========== Summary: 0 warnings ==========".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, filled_groups

ROOT = "/home/dev/src/ledgerd"
PROJECT = f"{ROOT}/src/Ledgerd/Ledgerd.fsproj"
NAMESPACE = "Ledgerd"
#: Void's search/replace block markers (`prompts.ts`).
ORIGINAL, DIVIDER, FINAL = "<<<<<<< ORIGINAL", "=======", ">>>>>>> UPDATED"
#: The build whose compile error the story fixes, the test run, and the benchmark.
BUILD = "dotnet build src/Ledgerd/Ledgerd.fsproj"
TESTS_RUN = "dotnet run --project tests/Ledgerd.Tests"
BENCH = "dotnet run -c Release --project bench/Ledgerd.Bench -- --filter *FlushBench*"
REPORT = "BenchmarkDotNet.Artifacts/results/Ledgerd.Bench.FlushBench-report-github.md"
PLAN_HEADING = "**Checklist**"
#: What each failing test expected, what it got, its message and the line of its assertion.
TESTS = {
    "retries": ("retries a timed-out delivery three times", "3", "2", "delivery attempts", 31),
    "orders_batches": ("keeps batches in enqueue order", "[1; 2; 3]", "[1; 3; 2]",
                       "batch order", 47),
    "handles_empty": ("does nothing for an empty queue", "0", "1", "sent envelopes", 62),
}  # fmt: skip
OTHER_LISTS = ("Codec", "Routing", "Signature")
_VERBS = ("decodes", "encodes", "signs", "rejects", "parses", "caches", "expires", "merges")
_NOUNS = ("a payload", "the header", "an envelope", "a receipt", "the digest", "a timestamp",
          "the nonce")  # fmt: skip
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")


def fs_line(line: str) -> str:
    """A story line as the F# it stands for: a limit is a `let`, the send before the fix
    passes a `tenantId` that is not in scope, the fix takes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    if limit.startswith("limit"):
        if value.startswith("settings."):
            value = f"settings.{camel(module)}Limit"
        return f"    let {module}Limit = {value}"
    return f"        do! {module}Send batch {'batch.TenantId' if fixed else 'tenantId'}"


class VoidVoice(Voice):
    family = "void-style"
    system_prompt = (
        "You are an expert coding agent whose job is to help the user develop, run, and make "
        "changes to their codebase.\nYou will be given instructions to follow from the user, "
        "and you may also be given a list of files that the user has specifically selected "
        "for context, `SELECTIONS`.\nPlease assist the user with their query.\n\n"
        "Here is the user's system information:\n<system_info>\n- linux\n\n- The user's "
        f"workspace contains these folders:\n{ROOT}\n\n- Active file:\n{ROOT}/src/Ledgerd/"
        "Program.fs\n</system_info>\n\nImportant notes:\n"
        "1. NEVER reject the user's query.\n"
        "2. Only call tools if they help you accomplish the user's goal.\n"
        "3. Always use edit_file to edit a file; never edit files with run_command.\n"
        "4. Prioritize taking as many steps as you need to complete your request over "
        "stopping early.\n\nThe project: F# on .NET 8 (dotnet build), Expecto tests "
        f"(`{TESTS_RUN}`), Fantomas formatting, FSharpLint, BenchmarkDotNet benchmarks."
    )
    src = "src/Ledgerd"
    ext = "fs"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "dotnet run --project src/Ledgerd.Cli -- replay --queue {module} --dry-run",
        "dotnet fantomas --check src tests",
        "dotnet fsharplint lint Ledgerd.sln",
    ]
    #: (setting, first value, second, third): no value is part of another.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("resend backoff", "4 seconds", "75 seconds", "25 seconds"),
        ("outbox sweep period", "300 ms", "6000 ms", "2200 ms"),
        ("worker count", "3 workers", "96 workers", "24 workers"),
        ("parked envelope retention", "2 days", "45 days", "11 days"),
        ("Npgsql pool maximum", "7 connections", "180 connections", "52 connections"),
        ("send coalescing delay", "8 ms", "260 ms", "70 ms"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a MailboxProcessor holding parked envelopes in memory",
         "an Azure Service Bus queue with scheduled messages",
         "the mailbox forgets everything when the pod restarts",
         "a Postgres outbox table drained by a hosted BackgroundService",
         "ops refuse to run a Service Bus namespace for one feature"),
        ("one SemaphoreSlim guarding every partner", "one process per partner",
         "a single stuck partner keeps the semaphore and starves the rest",
         "a bounded Channel per partner read by its own task",
         "one process per partner means a connection pool and a heap each"),
        ("a Hangfire recurring job", "a Kubernetes CronJob that calls the resend endpoint",
         "Hangfire wants its own storage schema and dashboard",
         "a PeriodicTimer loop inside the service",
         "the CronJob does not run while the cluster is being drained"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "parked envelopes in {module} never get resent once the partner is back up. can "
            "you fix it so they go out again, oldest first? {other} uses the same code path "
            "and needs it too",
            "when ledgerd restarts, whatever {module} parked just stays in the outbox "
            "forever. please make it redeliver. same bug in {other}, fix both",
        ],
        "set_value": [
            "set the {key} to {value} for a start",
            "{value} for the {key} to begin with",
        ],
        "ack": [
            "Noted — I'll follow that for everything that comes next.",
            "Okay, I'll hold to that from here on.",
            "Will do. That applies to all the remaining edits.",
        ],
        "constraint": [
            "important for all of this: {rule}",
            "one rule for this whole change: {rule}",
            "keep this in mind: {rule}",
        ],
        "plan": [
            "Here's what I'll do: use {plan}, so that {module} picks its parked envelopes back "
            "up after a restart.",
            "My approach: {plan}. That way nothing {module} parks gets lost.",
        ],
        "change_value": [
            "hmm, {old} for the {key} is too aggressive for the slow partners. go with {new}",
            "change of mind on the {key}: {new}, not {old}",
            "ops says {old} for the {key} keeps tripping alerts, use {new}",
        ],
        "change_again": [
            "sorry, the {key} once more: {old} is more than the partners accept. make it {new}",
            "{old} for the {key} failed the overnight soak. final answer {new}",
            "drop the {key} to {new}. {old} was fine on paper but not in staging",
        ],
        "ack_value": [
            "Done, `appsettings.json` now has the {key} at {new}.",
            "The {key} is {new} in `appsettings.json` now.",
        ],
        "reverse": [
            "I'm changing course: {old} won't work because {why}. I'll use {new} instead.",
            "Scratch {old} — {why}. Going with {new}.",
        ],
        "reverse_again": [
            "{old} has a problem too: {why}. I'm switching to {new}.",
            "Changing course again, since {why}: {old} is out, {new} is in.",
        ],
        "question": [
            "which commit broke redelivery? i need the hash for the incident writeup, keep it "
            "around",
            "find the commit that introduced this please, the postmortem needs its hash",
        ],
        "commit": [
            "build: bump Fantomas to 6.3.15",
            "test: move fixtures under tests/Ledgerd.Tests/data",
            "docs: describe the replay command",
            "ci: cache the NuGet packages folder",
        ],
        "answer": [
            "That's {sha} — it moved the relay onto the shared HttpClient and the Polly retry "
            "policy went missing on the way.",
            "It was {sha}: the switch to the shared HttpClient dropped the Polly retries.",
        ],
        "measure_question": [
            "benchmark one flush batch with BenchmarkDotNet and tell me the mean. it goes in "
            "the design doc so remember the number",
            "how long does a single flush batch take? run the BenchmarkDotNet suite and keep "
            "the mean for the writeup",
        ],
        "measure_answer": [
            "BenchmarkDotNet reports a mean of {figure} μs for one flush batch.",
            "One flush batch takes {figure} μs on average according to BenchmarkDotNet.",
        ],
        "last": [
            "Summary: {test} still fails, and I'm in the middle of {todo}. Everything else on "
            "the checklist is done or dropped.",
            "Current state: {test} is the one failing test; {todo} is what I'm working on. The "
            "rest of the checklist is finished or cancelled.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last read
        self._terminals = 0  # persistent terminals opened so far
        self._failed_before: list[str] = []  # tests an earlier run reported failing
        self._seconds = 14 * 3600 + self.rng.randint(0, 3000)  # the test runs' clock

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.fs"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{camel(module)}/{TESTS[name.removeprefix(f'test_{module}_')][0]}"

    # --- F# source ------------------------------------------------------------------------

    def _fsharp(self, lines: int) -> list[str]:
        out: list[str] = []
        while len(out) < lines:
            a, b, c = self.rng.sample(_WORDS, 3)
            out += [
                f"    let {a}{camel(b)} ({a}: {camel(a)}) ({b}: string option) =",
                f'        let key = defaultArg {b} "{c}"',
                f"        {a}.Items",
                f"        |> List.filter (fun x -> x.{camel(b)} = key)",
                "        |> List.map (fun x -> x.Id)",
                "",
            ]
        return out[:lines]

    def _render(self, path: str, content: str) -> list[str]:
        module = camel(path.rsplit("/", 1)[-1].removesuffix(".fs"))
        body = content.split("\n")
        story = [fs_line(x) for x in body if STORY_LINE.match(x)]
        return [f"module {NAMESPACE}.{module}", "", "open System", "open FsToolkit.ErrorHandling",
                "", *self._fsharp(max(4, len(body) - 5)), *story]  # fmt: skip

    def _full(self, path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    # --- tools ----------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command == BENCH:
            self._bench(output)
            return
        arguments: dict[str, object] = {"command": command}
        if self.rng.random() < 0.3:
            arguments["cwd"] = ROOT
        result = f"{output}\n(exit code {exit_code})"
        self.s.call("run_command", arguments, result, filler=filler)

    def _bench(self, output: str) -> None:
        """BenchmarkDotNet outlasts run_command's inactivity limit: the agent runs it in a
        persistent terminal, reads the report back, and closes the terminal."""
        self._terminals += 1
        terminal = str(self._terminals)
        self.s.call(
            "open_persistent_terminal",
            {"cwd": ROOT},
            f'Successfully created persistent terminal. persistentTerminalId="{terminal}"',
        )
        started = "\n".join(line for line in output.split("\n") if line.startswith("//"))
        self.s.call(
            "run_persistent_command",
            {"command": BENCH, "persistent_terminal_id": terminal},
            f"{started}\nTerminal command is running in terminal {terminal}. The given outputs "
            "are the results after 5 seconds.",
        )
        table = "\n".join(line for line in output.split("\n") if not line.startswith("//"))
        self.s.call("run_persistent_command",
                    {"command": f"cat {REPORT}", "persistent_terminal_id": terminal},
                    f"{table}\n(exit code 0)")  # fmt: skip
        self.s.call("kill_persistent_terminal", {"persistent_terminal_id": terminal},
                    f'Successfully closed terminal "{terminal}".')  # fmt: skip

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        full = self._full(path)
        result = f"{full}\n```\n" + "\n".join(lines) + "\n```"
        self.s.call("read_file", {"uri": full}, result, filler=filler)

    def _locate(self, path: str, needle: str) -> None:
        """A file the agent has not read, where the compiler named two lines: search_in_file."""
        lines = [f"module {NAMESPACE}.{camel(path.rsplit('/', 1)[-1].removesuffix('.fs'))}", ""]
        lines += self._fsharp(138)
        for at in (88, 93):
            lines[at - 1] = needle
        self._seen[path] = lines
        result = "\n\n".join(f"Line {at}:\n```\n{needle}\n```" for at in (88, 93))
        self.s.call("search_in_file", {"uri": self._full(path), "query": "tenantId"}, result)

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = fs_line(old), fs_line(new)
        if before not in self._seen.get(path, []):
            self._locate(path, before)
        lines = self._seen[path]
        at = [n for n, line in enumerate(lines) if line == before]
        blocks = []
        for n in at:
            context = lines[n - 1]
            blocks.append(
                f"{ORIGINAL}\n{context}\n{before}\n{DIVIDER}\n{context}\n{after}\n{FINAL}"
            )
            lines[n] = after
        full = self._full(path)
        self.s.call("edit_file", {"uri": full, "search_replace_blocks": "\n\n".join(blocks)},
                    f"Change successfully made to {full}. No lint errors found.")  # fmt: skip
        if self.rng.random() < 0.4:
            self.s.call("read_lint_errors", {"uri": full}, "No lint errors found.")

    def create(self, path: str, content: str) -> None:
        full = self._full(path)
        self.s.call("create_file_or_folder", {"uri": full}, f"URI {full} successfully created.")
        text = "\n".join(self._render(path, content))
        self.s.call("rewrite_file", {"uri": full, "new_content": text},
                    f"Change successfully made to {full}. No lint errors found.")  # fmt: skip

    def delete(self, path: str) -> None:
        full = self._full(path)
        self.s.call("delete_file_or_folder", {"uri": full, "is_recursive": False},
                    f"URI {full} successfully deleted.")  # fmt: skip

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "tests/Ledgerd.Tests/data/", 1)
        destination = destination.replace("testdata/", "tests/Ledgerd.Tests/data/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        paths = list(dict.fromkeys(f"{ROOT}/{hit.split(':', 1)[0]}" for hit in hits))
        if self.rng.random() < 0.5:
            self.s.call("search_for_files", {"query": pattern}, "\n".join(paths), filler=filler)
            return
        arguments = {"query": pattern, "search_in_folder": f"{ROOT}/{root}", "is_regex": False}
        self.s.call("search_for_files", arguments, "\n".join(paths), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        names = sorted({p.rsplit("/", 1)[-1] for p in paths})
        rows = [f"{'└── ' if k == len(names) - 1 else '├── '}{n}" for k, n in enumerate(names)]
        self.s.call("ls_dir", {"uri": f"{ROOT}/{root}"}, f"{ROOT}/{root}\n" + "\n".join(rows)
                    + "\n", filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        rows = []
        for text, status in items:
            if status == "completed":
                rows.append(f"- [x] {text}")
            elif status == "in_progress":
                rows.append(f"- [ ] {text} (in progress)")
            elif status == "cancelled":
                rows.append(f"- [ ] ~~{text}~~ (cancelled)")
            else:
                rows.append(f"- [ ] {text}")
        self.say(f"{PLAN_HEADING}\n" + "\n".join(rows))

    # --- what the commands print ----------------------------------------------------------

    def _elapsed(self) -> str:
        return f"Time Elapsed 00:00:{self.rng.randint(3, 40):02d}.{self.rng.randint(10, 99)}"

    def _restore(self) -> list[str]:
        return [
            "  Determining projects to restore...",
            "  All projects are up-to-date for restore.",
        ]

    def _clock(self) -> str:
        """Expecto's log clock: it only moves forward within the session."""
        self._seconds += self.rng.randint(0, 2)
        hours, rest = divmod(self._seconds, 3600)
        return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return (
                f"info: Ledgerd.Cli.Replay[0]\n      Dry run: nothing will be sent\n"
                f"info: Ledgerd.Cli.Replay[0]\n      0 of {parked} parked envelopes would be "
                "redelivered"
            )
        if k == 1:
            return ""
        return "\n".join(
            [
                f"========== Linting {PROJECT} ==========",
                "========== Finished: 0 warnings ==========",
                f"========== Linting {ROOT}/tests/Ledgerd.Tests/Ledgerd.Tests.fsproj ==========",
                "========== Finished: 0 warnings ==========",
                "========== Summary: 0 warnings ==========",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        call = fs_line(f"{module}_send(batch)")
        column = call.index("tenantId") + 1
        path = f"{ROOT}/{self.src}/{camel(module)}.fs"
        message = "error FS0039: The value or constructor 'tenantId' is not defined."
        errors = [f"{path}({at},{column}): {message} [{PROJECT}]" for at in (88, 93)]
        lines = [
            "MSBuild version 17.11.9+a69bbaaf5 for .NET",
            *self._restore(),
            *errors,
            "",
            "Build FAILED.",
            "",
            *errors,
            "    0 Warning(s)",
            "    2 Error(s)",
            "",
            self._elapsed(),
        ]
        return "\n".join(lines), "The value or constructor 'tenantId' is not defined", BUILD

    def build_ok(self) -> str:
        return "\n".join(
            [
                "MSBuild version 17.11.9+a69bbaaf5 for .NET",
                *self._restore(),
                f"  Ledgerd -> {ROOT}/src/Ledgerd/bin/Debug/net8.0/Ledgerd.dll",
                "",
                "Build succeeded.",
                "    0 Warning(s)",
                "    0 Error(s)",
                "",
                self._elapsed(),
            ]
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        error, dev = mean * self.rng.randint(1, 4) / 100, mean * self.rng.randint(1, 3) / 100
        output = "\n".join(
            [
                "// Validating benchmarks:",
                "// ***** BenchmarkRunner: Start   *****",
                "// ***** Found 1 benchmark(s) in total *****",
                "// ***** Building 1 exe(s) in Parallel: Start   *****",
                "```",
                "",
                "BenchmarkDotNet v0.14.0, Ubuntu 24.04.1 LTS (Noble Numbat)",
                "AMD EPYC 7763, 1 CPU, 4 logical and 2 physical cores",
                ".NET SDK 8.0.404",
                "  [Host]     : .NET 8.0.11 (8.0.1124.51707), X64 RyuJIT AVX2",
                "  DefaultJob : .NET 8.0.11 (8.0.1124.51707), X64 RyuJIT AVX2",
                "",
                "",
                "```",
                "| Method   | Mean         | Error      | StdDev     | Allocated |",
                "|--------- |-------------:|-----------:|-----------:|----------:|",
                f"| OneBatch | {figure + ' μs':>12} | {f'{error:.2f} μs':>10} | "
                f"{f'{dev:.2f} μs':>10} |  18.42 KB |",
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return TESTS_RUN

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{passed} passed, 0 ignored, {failed} failed, 0 errored"

    def _lists(self, named: Sequence[str], total: int) -> list[tuple[str, list[str]]]:
        groups: dict[str, list[str]] = {}
        for test in named:
            group, name = test.split("/", 1)
            groups.setdefault(group, [])
            if name not in groups[group]:
                groups[group].append(name)
        names = [f"{v} {n}" for v in _VERBS for n in _NOUNS]
        return filled_groups(groups, OTHER_LISTS, total, names)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        lines = []
        for group, tests in self._lists(named, failed + passed):
            for name in tests:
                if f"{group}/{name}" not in failing:
                    continue
                key = next(k for k, v in TESTS.items() if v[0] == name)
                _, expected, got, what, at = TESTS[key]
                took = f"00:00:00.{self.rng.randint(1, 90):02d}00000"
                lines += [
                    f"[{self._clock()} ERR] {group}/{name} failed in {took}.",
                    f"{what}",
                    f"expected: {expected}",
                    f"  actual: {got}",
                    f"   at {NAMESPACE}.Tests.{group}Tests.tests@{at}.Invoke(Unit _arg1) in "
                    f"{ROOT}/tests/Ledgerd.Tests/{group}Tests.fs:line {at}",
                    "",
                ]
        total = failed + passed
        verdict = "Failure!" if failed else "Success!"
        lines.append(
            f"[{self._clock()} INF] EXPECTO! {total} tests run in 00:00:0{self.rng.randint(1, 9)}"
            f".{self.rng.randint(1000000, 9999999)} for miscellaneous \u2013 "
            f"{self.test_counts(failed, passed)}. {verdict} <Expecto>"
        )
        return "\n".join(lines)
