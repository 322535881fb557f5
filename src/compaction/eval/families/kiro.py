"""A Kiro-style family, telling the story's second-thoughts variant: a Julia package (Julia 1.10
LTS, `Pkg.test()` with the Test stdlib, Aqua's quality checks, BenchmarkTools for the variant's
figure) worked on through the agent of AWS's Kiro IDE, recorded as OpenAI chat, by a user who
talks the language of Kiro's specs (requirements, acceptance criteria, design notes) and an
assistant who answers in Kiro's warm, decisive register.

Tool names, as the sources name them (Kiro execution-log readers on GitHub list `executeBash`,
`readFile`, `readMultipleFiles`, `fsWrite`, `fsAppend`, `strReplace`, `deleteFile`,
`listDirectory`, `grepSearch`, `fileSearch` and `getDiagnostics`). Argument names the sources
show: `fsWrite` and `fsAppend` {path, text}; `strReplace` {path, oldStr, newStr} (a steering
file warns that a call without `newStr` fails with "Invalid operation - missing newStr", and
that `newStr: ""` removes text); `deleteFile` {targetFile}; `readFile` {path}; `executeBash`
{command} (a captured tool schema, where `command` is the one required property). User turns
carry Kiro's `<EnvironmentContext>` with the `<OPEN-EDITOR-FILES>` (a captured request).

This family's own reading, where no source says more: the `explanation` argument on reads,
searches, listings and deletes (one sentence on why the tool is used); `readFile`'s
`start_line`/`end_line` (1-based, inclusive) for part of a file; `readMultipleFiles` {paths,
explanation}; `listDirectory` {path, explanation}; `grepSearch` {query, includePattern,
explanation}; `fileSearch` {query, explanation}; `getDiagnostics` {paths}; and the result
texts: `executeBash` answers the command's output and then `Exit Code: N`; `readFile` the
text itself; `readMultipleFiles` each file under a `=== path ===` line; `fsWrite`/`fsAppend`
"Wrote N lines to <path>" / "Appended N lines to <path>"; `strReplace` "Replaced text in
<path>"; `deleteFile` "Deleted <path>"; `grepSearch` "Found N matches in M files:" and the
hits grouped by file; `getDiagnostics` "<path>: No diagnostics found".

Kiro tracks a spec's implementation plan in `.kiro/specs/<name>/tasks.md`, one `- [ ] N. task`
checkbox a task. The plan is written with `fsWrite`, a task added on the way with `fsAppend`,
and a task's state changed with a `taskStatus` tool {taskFilePath, task, status}, status
not_started / in_progress / completed; the tool's name and shape are this family's reading of
Kiro's task-status mechanism (Kiro's docs say tasks are tracked and updated, not through which
call). The plan has no cancelled state: a dropped task is cut out of tasks.md with a
`strReplace` whose `newStr` is empty. Steering (`.kiro/steering/*.md`, always included) is in
the system prompt. Kiro has no move or final-answer tool: files move with `git mv` in
`executeBash`, and the session ends on the assistant's text.

Tool outputs follow Julia's real ones: `Pkg.test()`'s `Testing`/`Status` lines, a failing
`@test` as `<testset>: Test Failed at <file>:<line>` with its `Expression:` and `Evaluated:`
lines and the stack, the `Test Summary: | Pass  Fail  Total  Time` table (children of a testset
with failures listed under it, zero counts left blank), then `ERROR: LoadError: Some tests did
not pass: P passed, F failed, 0 errored, 0 broken.`; precompilation failing on `ERROR:
LoadError: UndefVarError: `tenant_id` not defined` (Julia 1.10's wording) and then passing;
Aqua's per-check summaries; BenchmarkTools' `Trial` display.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Session, Voice, hexid

ROOT = "/home/dev/code/Ferry.jl"
PACKAGE = "Ferry"
PACKAGE_UUID = "6a2d0c4e-93b1-4f57-8e0a-1c5f7b3d9e21"
JULIA = "~/.julia/juliaup/julia-1.10.5+0.x64.linux.gnu/share/julia/stdlib/v1.10"
#: The spec whose implementation plan the session keeps.
TASKS = ".kiro/specs/outbox-resend/tasks.md"
#: The story's statuses as the `taskStatus` tool spells them (cancelled: cut from tasks.md).
TASK_STATES = {"pending": "not_started", "in_progress": "in_progress", "completed": "completed"}
#: The benchmark the variant's figure comes from.
BENCH = "julia --project=bench bench/flush_batch.jl"
PRECOMPILE = "julia --project -e 'using Ferry'"
#: What each failing test asserted, how it evaluated, and the line of its `@test`.
ASSERTIONS = {
    "retries": ("retries a delivery that timed out", "attempts(result) == 3", "2 == 3", 31),
    "orders_batches": ("flushes batches in enqueue order", "flushed_ids(sink) == [1, 2, 3]",
                       "[1, 3, 2] == [1, 2, 3]", 47),
    "handles_empty": ("returns early on an empty queue", "length(sent) == 0", "1 == 0", 62),
}  # fmt: skip
#: Test files that always run beside the ones the story's failures live in.
OTHER_TEST_FILES = ("envelope_codec", "route_table", "signature_check")
_VERBS = ("decodes", "encodes", "signs", "rejects", "parses", "caches", "expires", "merges")
_NOUNS = ("a payload", "the header", "an envelope", "a receipt", "the digest", "a timestamp",
          "the nonce")  # fmt: skip
#: Files open in the editor, as each user turn's environment context lists them: never a file
#: a fact is about.
OPEN_FILES = ("Project.toml", "test/runtests.jl", TASKS, ".kiro/specs/outbox-resend/design.md")
#: Aqua's checks, as `Aqua.test_all` runs them, with their test counts.
AQUA_CHECKS = (
    ("Method ambiguity", 1),
    ("Unbound type parameters", 1),
    ("Undefined exports", 1),
    ("Compare Project.toml and test/Project.toml", 1),
    ("Stale dependencies", 1),
    ("Compat bounds", 4),
    ("Piracy", 1),
    ("Persistent tasks", 1),
)
#: The lines the stack trace points at (88 and 93 hold the calls), as readFile shows 80-95.
DISPATCH_WINDOW = (
    "end",
    "",
    "function flush_pending(batch::Batch)",
    "    isempty(batch) && return nothing",
    "    metrics_increment!(:ferry_flushes)",
    '    @debug "flushing envelopes" n = length(batch)',
    "    # deliver what the batch still holds",
    "    tenant_scope = scope_of(batch)",
    "{call}",
    "end",
    "",
    "function retry_pending(batch::Batch)",
    "    metrics_increment!(:ferry_retries)",
    "{call}",
    "end",
    "",
)
_USER_KEYS = frozenset(
    {"task", "set_value", "constraint", "change_value", "change_again", "question",
     "measure_question"}
)  # fmt: skip
_STORY_LINE = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")


def julia_line(line: str) -> str:
    """A story line as the Julia it stands for: the send call before the fix names a
    `tenant_id` that is not defined in the function, the fix takes the batch's."""
    match = _STORY_LINE.match(line)
    if not match:
        return line
    module, fixed = match.groups()
    source = "batch.tenant_id" if fixed else "tenant_id"
    return f"    {module}_send(batch; tenant = {source})"


def _julia_file(stem: str, body: Sequence[str]) -> list[str]:
    return [f"# {stem}.jl: part of module {PACKAGE}", "", "using Dates: now, UTC", "", *body]


def _duration(seconds: float) -> str:
    return f"{seconds:.1f}s"


def summary_table(rows: Sequence[tuple[int, str, int, int, float]]) -> list[str]:
    """Julia's `Test Summary:` table: (depth, name, passed, failed, seconds) a row, the
    columns as Test.jl pads them, a zero count left blank, Fail shown only when a test failed."""
    align = max(len("Test Summary:"), *(2 * d + len(n) for d, n, *_ in rows))
    fails = any(f for *_, f, _ in rows)
    pass_width = max(len("Pass"), *(len(str(p)) for _, _, p, _, _ in rows))
    fail_width = max(len("Fail"), *(len(str(f)) for *_, f, _ in rows)) if fails else 0
    total_width = max(len("Total"), *(len(str(p + f)) for _, _, p, f, _ in rows))
    times = [_duration(s) for *_, s in rows]
    time_width = max(len("Time"), *(len(t) for t in times))
    header = f"{'Test Summary:':<{align}} | {'Pass':>{pass_width}}  "
    if fails:
        header += f"{'Fail':>{fail_width}}  "
    header += f"{'Total':>{total_width}}  {'Time':>{time_width}}"
    lines = [header]
    for (depth, name, passed, failed, _), time in zip(rows, times, strict=True):
        line = f"{'  ' * depth + name:<{align}} | {passed or ''!s:>{pass_width}}  "
        if fails:
            line += f"{failed or ''!s:>{fail_width}}  "
        line += f"{passed + failed:>{total_width}}  {time:>{time_width}}"
        lines.append(line)
    return lines


class KiroVoice(Voice):
    family = "kiro-style"
    system_prompt = (
        "# Identity\nYou are Kiro, an AI assistant and IDE built to assist developers.\n"
        "You are managed by an autonomous process which takes your output, performs the "
        "actions you requested, and is supervised by a human user.\n\n# Rules\n"
        "- Work through the spec in .kiro/specs: requirements.md says what, design.md says "
        "how, tasks.md is the plan. Update a task's status as you start and finish it.\n"
        "- Read a file before you edit it. Edit with strReplace; write new files with "
        "fsWrite and grow long ones with fsAppend.\n"
        "- Run commands with executeBash from the workspace root; never start long-running "
        "servers in it.\n- Check files you changed with getDiagnostics.\n\n"
        "# Steering\n## Included Rules (tech.md)\n<user-rule id=tech.md>\n```\n---\n"
        "inclusion: always\n---\n# Tech stack\n- Julia 1.10 LTS; the package is Ferry.jl, "
        f"checked out at {ROOT}.\n- Tests: julia --project -e 'using Pkg; Pkg.test()'\n"
        "- Quality: Aqua.test_all before a task is marked complete.\n- Benchmarks live in "
        "bench/ with their own environment.\n```\n</user-rule>\n\n# Current Context\n"
        "Operating System: Linux\nPlatform: linux\nShell: bash"
    )
    src = "src"
    ext = "jl"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "julia --project scripts/replay_outbox.jl --queue {module} --dry-run",
        "julia --project=@. scripts/format_check.jl src test",
        "julia --project -e 'using Aqua, Ferry; Aqua.test_all(Ferry)'",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("webhook timeout", "9 seconds", "52 seconds", "27 seconds"),
        ("replay window", "6 hours", "72 hours", "30 hours"),
        ("outbox batch size", "40 envelopes", "900 envelopes", "350 envelopes"),
        ("worker thread count", "2 threads", "16 threads", "8 threads"),
        ("backoff ceiling", "45 s", "600 s", "180 s"),
        ("dedupe cache size", "5000 keys", "80000 keys", "20000 keys"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a Channel buffered inside the worker process", "a Redis stream through Jedis.jl",
         "the Channel starts out empty after every restart",
         "a LibPQ.jl outbox table drained by a Timer task",
         "our Redis evicts keys as soon as memory runs short"),
        ("a ReentrantLock around the whole dispatcher", "one Distributed.jl worker per tenant",
         "a single slow tenant holds that lock for everyone",
         "per-tenant queues drained by Threads.@spawn tasks in one process",
         "every Distributed worker loads its own HTTP.jl client and token cache"),
        ("polling the partner API once a minute", "the partner's signed webhooks",
         "polling eats through the partner's rate limit",
         "a nightly reconciliation CSV with webhooks for the deltas",
         "the partner retries a webhook only twice, so deltas go missing"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "New bugfix spec. Current behavior: envelopes that {module} parks in the outbox "
            "during a partner outage are never resent once the partner is back. Expected "
            "behavior: they go out again, oldest first. Unchanged behavior: {other} shares the "
            "flush path and has to keep working, so cover it too.",
            "Bugfix spec, please. WHEN a worker restarts in the middle of a batch, THE {module} "
            "service SHALL resend whatever its outbox had parked. Today the envelopes just sit "
            "there. {other} was copied from the same code, so give it the same treatment.",
        ],
        "set_value": [
            "For the first cut of the design, put the {key} at {value}.",
            "Design note: the {key} starts at {value}; we revisit it after the canary.",
        ],
        "ack": [
            "On it, I'll hold to that for the rest of the spec.",
            "Makes sense. I've folded that into the design notes.",
            "Got it, that shapes everything from here.",
        ],
        "constraint": [
            "Acceptance criterion that isn't up for negotiation: {rule}.",
            "Add this to the requirements as a hard rule: {rule}.",
            "Before you go further, a non-functional requirement: {rule}.",
        ],
        "plan": [
            "Here's my first take on the design: {plan}, so that {module} finds its parked "
            "envelopes again after a restart.",
            "Design, first pass: {plan}, so nothing {module} parks goes missing.",
        ],
        "change_value": [
            "Update to the design: the {key} becomes {new}. The canary showed {old} is too "
            "tight for the slower partners.",
            "Revise the requirement: {new} for the {key}, not {old}. Ops asked for the change.",
            "The {key} at {old} keeps paging on-call. Make it {new}.",
        ],
        "change_again": [
            "Sorry, one more revision on the {key}: {old} overshoots what the partners can take. "
            "Settle on {new}.",
            "Final call on the {key}, and I mean it this time: {new}. {old} failed the soak "
            "test over the weekend.",
            "Walk the {key} back to {new}; {old} looked right in the design review but not in "
            "staging.",
        ],
        "ack_value": [
            "Nice, the {key} is {new} now in config/ferry.toml.",
            "Done. config/ferry.toml carries {new} for the {key}.",
        ],
        "reverse": [
            "Heads up, I'm changing the design: {old} won't hold up, because {why}. Going with "
            "{new} instead.",
            "Scratch {old}; {why}. The design moves to {new}.",
        ],
        "reverse_again": [
            "I have to revisit the design once more: {old} has its own problem, {why}. "
            "Switching to {new}.",
            "Another turn in the design, since {why}: {old} is out and {new} replaces it.",
        ],
        "question": [
            "For the bugfix spec's root-cause section I need the commit that introduced this. "
            "Find the hash and keep it.",
            "Which commit broke the resend? The root-cause write-up needs its hash, so hold "
            "on to it.",
        ],
        "commit": [
            "deps: bump HTTP.jl to 1.10",
            "test: split runtests into files",
            "docs: document the replay script",
            "ci: cache the depot between runs",
        ],
        "answer": [
            "Found it: {sha}. That commit moved the outbox onto the shared HTTP.jl client and "
            "dropped the retry layer along the way.",
            "The regression traces to {sha}, where the outbox switched to the shared HTTP.jl "
            "client and lost its retry layer.",
        ],
        "measure_question": [
            "The design needs a number: benchmark one flush batch and give me the median. "
            "It goes into the performance section, so keep it.",
            "Could you time a single flush batch with BenchmarkTools? The median belongs in "
            "design.md and I'll need it later.",
        ],
        "measure_answer": [
            "A flush batch takes {figure} μs at the median (BenchmarkTools, 10000 samples).",
            "Median time for one flush batch: {figure} μs.",
        ],
        "last": [
            "Here's where things landed: {test} still fails and {todo} is underway. The rest "
            "of tasks.md is checked off or struck.",
            "Pausing the spec here with {todo} in progress and {test} still red. Every other "
            "task is either complete or no longer in the plan.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._turns = 0
        self._files: dict[str, list[str]] = {}
        self._tasks: dict[str, str] = {}  # task text → status, in tasks.md order
        self._numbers: dict[str, int] = {}  # task text → its number in tasks.md
        self._failed_before: list[str] = []  # tests an earlier run reported failing

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module} {ASSERTIONS[name.removeprefix(f'test_{module}_')][0]}"

    # --- the user's turns ---------------------------------------------------------------

    def phrase(self, which: str, /, **values: str) -> str:
        text = super().phrase(which, **values)
        if which not in _USER_KEYS:
            return text
        # Kiro appends what the editor has open to every user turn.
        self._turns += 1
        files = OPEN_FILES[: 1 + self._turns % len(OPEN_FILES)]
        listed = "\n".join(files)
        return (
            f"{text}\n\n<EnvironmentContext>\n<OPEN-EDITOR-FILES>\n{listed}\n"
            "</OPEN-EDITOR-FILES>\n</EnvironmentContext>"
        )

    # --- executeBash ----------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        result = (output if output.strip() else "(no output)") + f"\n\nExit Code: {exit_code}"
        self.s.call("executeBash", {"command": command}, result, filler=filler)

    # --- files ----------------------------------------------------------------------------

    def _read_range(self, path: str, lines: Sequence[str], first: int, *,
                    filler: bool = False) -> None:  # fmt: skip
        arguments = {
            "path": path,
            "start_line": first,
            "end_line": first + len(lines) - 1,
            "explanation": "Reading the lines the stack trace points at.",
        }
        if filler:
            arguments["explanation"] = "Looking at the rest of this function."
        self.s.call("readFile", arguments, "\n".join(lines), filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        stem = path.rsplit("/", 1)[-1].removesuffix(".jl")
        lines = _julia_file(stem, [julia_line(line) for line in content.split("\n")])
        if not filler:
            self._files[path] = lines
            arguments = {"path": path, "explanation": "Reading the file before changing it."}
            self.s.call("readFile", arguments, "\n".join(lines))
            return
        kind = self.rng.random()
        if kind < 0.25:
            first = self.rng.randint(3, max(3, len(lines) // 3))
            last = min(len(lines), first + self.rng.randint(20, 50))
            self._read_range(path, lines[first - 1 : last], first, filler=True)
        elif kind < 0.5:
            # The file and its tests, in one call.
            test_path = f"test/test_{stem}.jl"
            test_lines = [f'@testset "{stem.replace("_", " ")}" begin']
            test_lines += [f"    @test {stem}(fixture(:{w})) !== nothing" for w in _VERBS[:5]]
            test_lines.append("end")
            body = (
                f"=== {path} ===\n"
                + "\n".join(lines)
                + f"\n\n=== {test_path} ===\n"
                + "\n".join(test_lines)
            )
            why = "Reading the source file together with its tests."
            both = {"paths": [path, test_path], "explanation": why}
            self.s.call("readMultipleFiles", both, body, filler=True)
        else:
            arguments = {"path": path, "explanation": "Checking how this file is put together."}
            self.s.call("readFile", arguments, "\n".join(lines), filler=True)

    def edit(self, path: str, old: str, new: str) -> None:
        old_jl, new_jl = julia_line(old), julia_line(new)
        if "tenant_id" in new and "tenant_id" not in old:
            self._fix_calls(path, old_jl, new_jl)
            return
        lines = self._files.get(path, [])
        if old_jl in lines:
            lines[lines.index(old_jl)] = new_jl
        arguments = {"path": path, "oldStr": old_jl, "newStr": new_jl}
        self.s.call("strReplace", arguments, f"Replaced text in {path}")

    def _fix_calls(self, path: str, old: str, new: str) -> None:
        """The stack trace's fix: read the lines it named, replace each call with the line
        before it as context (the call alone occurs twice), then ask for the diagnostics."""
        window = [line.replace("{call}", old) for line in DISPATCH_WINDOW]
        self._read_range(path, window, 80)
        for at in (88, 93):
            before = window[at - 81]
            arguments = {"path": path, "oldStr": f"{before}\n{old}", "newStr": f"{before}\n{new}"}
            self.s.call("strReplace", arguments, f"Replaced text in {path}")
        self.s.call("getDiagnostics", {"paths": [path]}, f"{path}: No diagnostics found")

    def create(self, path: str, content: str) -> None:
        stem = path.rsplit("/", 1)[-1].removesuffix(".jl")
        text = "\n".join(_julia_file(stem, content.split("\n"))) + "\n"
        written = f"Wrote {text.count(chr(10))} lines to {path}"
        self.s.call("fsWrite", {"path": path, "text": text}, written)

    def delete(self, path: str) -> None:
        arguments = {"targetFile": path, "explanation": "The legacy module has no callers left."}
        self.s.call("deleteFile", arguments, f"Deleted {path}")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "test/fixtures/", 1)
        destination = destination.replace("testdata/", "test/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        by_file: dict[str, list[str]] = {}
        for hit in hits:
            path, line, text = hit.split(":", 2)
            by_file.setdefault(path, []).append(f"  {line}: {text.strip()}")
        blocks = [f"{path}\n" + "\n".join(rows) for path, rows in by_file.items()]
        found = f"Found {len(hits)} matches in {len(by_file)} files:\n\n" + "\n\n".join(blocks)
        arguments = {"query": pattern, "includePattern": f"{root}/**/*.jl",
                     "explanation": f"Finding where {pattern} is used."}  # fmt: skip
        self.s.call("grepSearch", arguments, found, filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = sorted(set(paths))
        if self.rng.random() < 0.5:
            rows = [f"[file] {p} ({self.rng.randint(300, 30000)} bytes)" for p in unique]
            arguments = {"path": root, "explanation": "Getting an overview of the sources."}
            self.s.call("listDirectory", arguments, "\n".join(rows), filler=filler)
            return
        arguments = {"query": ".jl", "explanation": "Looking for the package's source files."}
        self.s.call("fileSearch", arguments, "\n".join(unique), filler=filler)

    # --- the spec's task list ---------------------------------------------------------------

    @staticmethod
    def _task_lines(number: int, text: str) -> str:
        return f"- [ ] {number}. {text}\n  - _Requirements: {1 + number // 2}.{1 + number % 2}_\n"

    def _set_status(self, text: str, status: str) -> None:
        arguments = {"taskFilePath": TASKS, "task": f"{self._numbers[text]}. {text}",
                     "status": status}  # fmt: skip
        self.s.call("taskStatus", arguments, f"Task status updated to {status}")
        self._tasks[text] = status

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        if not self._tasks:
            body = "".join(self._task_lines(n, text) for n, (text, _) in enumerate(items, 1))
            text = f"# Implementation Plan\n\n{body}"
            self.s.call("fsWrite", {"path": TASKS, "text": text},
                        f"Wrote {text.count(chr(10))} lines to {TASKS}")  # fmt: skip
            for n, (item, _) in enumerate(items, 1):
                self._tasks[item] = "not_started"
                self._numbers[item] = n
        for item, _ in items:
            if item not in self._tasks:
                number = len(self._numbers) + 1
                line = self._task_lines(number, item)
                self.s.call("fsAppend", {"path": TASKS, "text": line},
                            f"Appended {line.count(chr(10))} lines to {TASKS}")  # fmt: skip
                self._tasks[item] = "not_started"
                self._numbers[item] = number
        for item, status in items:
            if status != "cancelled" and self._tasks.get(item) != TASK_STATES[status]:
                self._set_status(item, TASK_STATES[status])
        for item, status in items:
            if status == "cancelled" and item in self._tasks:
                line = self._task_lines(self._numbers[item], item)
                self.s.call("strReplace", {"path": TASKS, "oldStr": line, "newStr": ""},
                            f"Replaced text in {TASKS}")  # fmt: skip
                del self._tasks[item]

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            return (
                f"[ Info: {PACKAGE} replay, dry run\n"
                f"0 of {self.rng.randint(20, 60)} parked envelopes would be resent"
            )
        if k == 1:
            return f"Checked {self.rng.randint(20, 40)} files: 0 need formatting."
        lines: list[str] = []
        for name, count in AQUA_CHECKS:
            seconds = self.rng.randint(1, 90) / 10
            lines += summary_table([(0, name, count, 0, seconds)])
        return "\n".join(lines)

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = "UndefVarError: `tenant_id` not defined"
        output = "\n".join(
            [
                f"[ Info: Precompiling {PACKAGE} [{PACKAGE_UUID}]",
                f"ERROR: LoadError: {probe}",
                "Stacktrace:",
                " [1] flush_pending(batch::Ferry.Batch)",
                f"   @ {PACKAGE} {ROOT}/src/{module}.jl:88",
                " [2] macro expansion",
                f"   @ {ROOT}/src/precompile.jl:9 [inlined]",
                " [3] macro expansion",
                "   @ ~/.julia/packages/PrecompileTools/L8A3n/src/workloads.jl:78 [inlined]",
                " [4] top-level scope",
                f"   @ {ROOT}/src/precompile.jl:7",
                " [5] include(mod::Module, _path::String)",
                "   @ Base ./Base.jl:495",
                " [6] include(x::String)",
                f"   @ {PACKAGE} {ROOT}/src/{PACKAGE}.jl:1",
                f"in expression starting at {ROOT}/src/precompile.jl:7",
                f"in expression starting at {ROOT}/src/{PACKAGE}.jl:1",
                f"ERROR: Failed to precompile {PACKAGE} [{PACKAGE_UUID}] to "
                f'"/home/dev/.julia/compiled/v1.10/{PACKAGE}/jl_{hexid(self.rng, 6)}".',
            ]
        )
        return output, probe, PRECOMPILE

    def build_ok(self) -> str:
        return f"[ Info: Precompiling {PACKAGE} [{PACKAGE_UUID}]"

    def measurement(self, figure: str) -> tuple[str, str]:
        median = float(figure)
        low, mean = median * 0.93, median * 1.04
        output = "\n".join(
            [
                "BenchmarkTools.Trial: 10000 samples with 1 evaluation.",
                f" Range (min \u2026 max):  {low:.2f} \u03bcs \u2026   {median * 2.7 / 1000:.2f} ms"
                "  \u250a GC (min \u2026 max): 0.00% \u2026 48.12%",
                f" Time  (median):     {figure} \u03bcs              \u250a GC (median):    0.00%",
                f" Time  (mean \u00b1 \u03c3):   {mean:.2f} \u03bcs \u00b1  "
                f"{median * 0.11:.2f} \u03bcs  \u250a GC (mean \u00b1 \u03c3):  "
                "1.84% \u00b1  5.90%",
                "",
                " Memory estimate: 96.52 KiB, allocs estimate: 1203.",
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return "julia --project -e 'using Pkg; Pkg.test()'"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{passed} passed, {failed} failed, 0 errored, 0 broken"

    def _per_file(self, named: Sequence[str], total: int) -> list[tuple[str, list[str]]]:
        """(test file's testset, its tests) for every file runtests.jl includes, `total` tests
        in all: the files of the `named` tests first, each holding them."""
        groups: dict[str, list[str]] = {}
        for test in named:
            groups.setdefault(test.split(" ", 1)[0], [])
            if test not in groups[test.split(" ", 1)[0]]:
                groups[test.split(" ", 1)[0]].append(test)
        for stem in OTHER_TEST_FILES:
            groups[stem.replace("_", " ")] = []
        names = [f"{v} {n}" for v in _VERBS for n in _NOUNS]
        order = list(groups)
        k = 0
        while sum(len(t) for t in groups.values()) < total:
            groups[order[k % len(order)]].append(names[k % len(names)])
            k += 1
        return [(group, groups[group]) for group in order]

    def _header(self) -> list[str]:
        env = f"/tmp/jl_{hexid(self.rng, 6)}"
        return [
            f"     Testing {PACKAGE}",
            f"      Status `{env}/Project.toml`",
            "  [cd3eb016] HTTP v1.10.8",
            "  [0f8b85d8] JSON3 v1.14.0",
            f"  [{PACKAGE_UUID[:8]}] {PACKAGE} v0.7.1 `{ROOT}`",
            "  [8dfed614] Test v1.10.0",
            f"      Status `{env}/Manifest.toml`",
            "  [ade2ca70] Dates v1.10.0",
            "  [56ddb016] Logging v1.10.0",
            "  [8dfed614] Test v1.10.0",
            f"  Precompiling project...\n  \u2713 {PACKAGE}\n  1 dependency successfully "
            f"precompiled in {self.rng.randint(4, 19)} seconds. 61 already precompiled.",
            "     Testing Running tests...",
        ]

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # An earlier run's failures still run in a later one, where they pass.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        lines = self._header()
        rows: list[tuple[int, str, int, int, float]] = []
        for group, tests in self._per_file(named, failed + passed):
            test_file = f"{ROOT}/test/test_{group.replace(' ', '_')}.jl"
            children = []
            for test in tests:
                bad = test in failing
                if bad:
                    key = next(k for k, v in ASSERTIONS.items() if test.endswith(v[0]))
                    _, expression, evaluated, at = ASSERTIONS[key]
                    lines += [
                        f"{test}: Test Failed at {test_file}:{at}",
                        f"  Expression: {expression}",
                        f"   Evaluated: {evaluated}",
                        "",
                        "Stacktrace:",
                        " [1] macro expansion",
                        f"   @ {JULIA}/Test/src/Test.jl:672 [inlined]",
                        " [2] macro expansion",
                        f"   @ {test_file}:{at} [inlined]",
                        " [3] macro expansion",
                        f"   @ {JULIA}/Test/src/Test.jl:1577 [inlined]",
                        " [4] top-level scope",
                        f"   @ {test_file}:{at - 4}",
                    ]
                children.append((2, test, 0 if bad else 1, int(bad),
                                 self.rng.randint(0, 4) / 10))  # fmt: skip
            group_failed = sum(c[3] for c in children)
            seconds = sum(c[4] for c in children) + 0.2
            rows.append((1, group, len(tests) - group_failed, group_failed, seconds))
            if group_failed:  # Test.jl lists the children of a testset with failures
                rows += children
        top_seconds = sum(r[4] for r in rows if r[0] == 1) + 1.3
        rows.insert(0, (0, PACKAGE, passed, failed, top_seconds))
        lines += summary_table(rows)
        lines += [
            f"ERROR: LoadError: Some tests did not pass: {self.test_counts(failed, passed)}.",
            f"in expression starting at {ROOT}/test/runtests.jl:4",
            f"ERROR: Package {PACKAGE} errored during testing",
        ]
        return "\n".join(lines)
