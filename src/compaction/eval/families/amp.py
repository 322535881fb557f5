"""An Amp-style family, telling the story's second-thoughts variant: a C++20 telemetry relay
built with CMake and Ninja (clang, GoogleTest under CTest, clang-tidy, perf) worked on through
the tools of Sourcegraph's Amp agent, by a user who writes terse lower-case review-chat notes
and an assistant who answers in a line or two and links every file it names.

Tools and argument names, as Amp declares them to the model (its tool list in the Claude
Sonnet 4 prompt, collected in x1xhlol/system-prompts-and-models-of-ai-tools and mirrored in
JamesANZ/system-prompts-mcp-server, `prompts/Amp/claude-4-sonnet.yaml`); every path is
absolute:

- `Bash` {cmd, cwd}: `cwd` instead of a `cd`; independent commands are separate calls.
- `Read` {path, read_range}: `read_range` is [first, last], 1-indexed; each line comes back
  as `<n>: <text>`.
- `edit_file` {path, old_str, new_str, replace_all}: "returns a git-style diff … along with
  the line range ([startLine, endLine])"; `replace_all` changes every match.
- `create_file` {path, content}; `undo_edit` {path} and `format_file` {path} answer with a
  diff as well.
- `Grep` {pattern, path} (ripgrep, at most 15 matches a file); `glob` {filePattern};
  `list_directory` {path}.
- `todo_write` {todos: [{id, content, status, priority}]} with status `todo`, `in-progress`
  or `completed` and priority `high`, `medium` or `low`; each call replaces the whole list.
  There is no cancelled state: a dropped item is left out of the next list. `todo_read` {}.
- `Task` {prompt, description}: a sub-agent whose summary comes back as the result;
  `mermaid` {code}: a diagram shown to the user.

Amp's thread files keep a result as `run.result`, a string or an object (`{"output",
"exitCode"}` for `Bash`, as thread-export readers such as letta-ai/trajectory decode them);
an object reaches the model here as its JSON. The keys of the edit tools' result
(`diff`, `lineRange`) and the texts of `create_file`, `Grep`, `glob`, `list_directory`,
`todo_write` and `mermaid` are not published and are this family's reading. Amp has no
delete, move or final-answer tool: files go with `git rm` and `git mv` through `Bash`, and the
session ends on the assistant's text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel

ROOT = "/home/dev/code/tidewater"
BUILD = f"{ROOT}/build"
_CONFIG_LINK = f"[config/tidewater.toml](file://{ROOT}/config/tidewater.toml)"
#: To-do status in the story → Amp's `todo_write` status (no cancelled state: left out).
TODO_STATUS = {"pending": "todo", "in_progress": "in-progress", "completed": "completed"}
#: GoogleTest's failure text and line for each failing test the story names.
ASSERTIONS = {
    "Retries": (34, ("Expected equality of these values:", "  attempts", "    Which is: 2", "  3")),
    "OrdersBatches": (
        51,
        ("Value of: std::ranges::is_sorted(sent_ids)", "  Actual: false", "Expected: true"),
    ),
    "HandlesEmpty": (
        66,
        ("Expected equality of these values:", "  pending.size()", "    Which is: 1", "  0u",
         "    Which is: 0"),
    ),
}  # fmt: skip
#: Test suites that pass beside the ones the story's failures live in, and their cases.
OTHER_SUITES = ("FrameCodecTest", "RingBufferTest", "ConfigLoaderTest", "MonotonicClockTest")
OTHER_CASES = (
    "RoundTrips", "RejectsTruncated", "WrapsAround", "KeepsOrder", "ReadsDefaults",
    "RejectsUnknownKeys", "AdvancesOnly", "ParsesHeaders", "SplitsLargePayloads",
    "EncodesVarints", "SkipsPadding", "HonoursDeadline",
)  # fmt: skip
#: The lines the compiler points at (line 88 holds the first call), as `Read` shows 80-95.
FLUSH_WINDOW = (
    "}",
    "",
    "void Relay::flush_pending(const Batch& batch, std::string_view tenant_id) {",
    "    if (batch.empty()) {",
    "        return;",
    "    }",
    '    metrics_.increment("relay.flushes");',
    "    const auto started = clock_.now();",
    "    {call}",
    '    metrics_.observe("relay.flush_ms", clock_.since(started));',
    "}",
    "",
    "void Relay::retry_pending(const Batch& batch, std::string_view tenant_id) {",
    "    backoff_.wait();",
    "    {call}",
    "}",
)
#: A story line (`throttle_limit = 4`, `outbox_send(batch)`) before it is C++.


def cpp_line(line: str) -> str:
    """A story line as the C++ statement it stands for (`outbox_send(batch);`)."""
    return f"    {line};" if STORY_LINE.match(line) else line


def _diff(path: str, hunks: Sequence[tuple[int, Sequence[str]]]) -> str:
    """A unified diff of `path` as Amp's edit tools show it: fenced, one hunk per change."""
    lines = [
        "```diff",
        f"Index: {path}",
        "=" * 67,
        f"--- {path}\toriginal",
        f"+++ {path}\tmodified",
    ]
    for start, body in hunks:
        old = sum(not b.startswith("+") for b in body)
        new = sum(not b.startswith("-") for b in body)
        lines.append(f"@@ -{start},{old} +{start},{new} @@")
        lines += body
    return "\n".join([*lines, "```"])


class AmpVoice(Voice):
    family = "amp-style"
    system_prompt = (
        "You are Amp, a powerful AI coding agent built by Sourcegraph. You help the user with "
        "software engineering tasks. Use the instructions below and the tools available to "
        "you to help the user.\n\n# Task Management\n\nUse todo_write and todo_read very "
        "frequently to plan the task and show the user your progress; mark a todo completed "
        "as soon as it is done.\n\n# Conventions & Rules\n\n- File system tools (Read, "
        "edit_file, create_file, list_directory) take absolute paths.\n- After a change, run "
        "the build and the tests the project uses.\n- Never run background processes with "
        "`&`.\n\n# Communication\n\nBe concise: fewer than 4 lines unless asked for detail. "
        "Link every file you mention with a file:// URL, with a #L line fragment where it "
        "helps.\n\n# Environment\n\nClient: Amp for VS Code\n"
        f"Working directory: {ROOT}\nWorkspace root folder: {ROOT}"
        "\nOperating system: linux on x64\nRepository: https://github.com/tidewater-io/"
        "tidewater\n\nAGENTS.md:\n- build: cmake --build build\n- test: ctest "
        "--output-on-failure (in build/)\n- lint: clang-tidy -p build <file>"
    )
    src = "src"
    ext = "cpp"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "clang-tidy -p build src/{module}.cpp",
        "./build/tools/tidewater-replay --stage {module} --dry-run",
        "git diff --stat origin/main -- include/tidewater/{module}.hpp",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("socket send buffer", "192 KiB", "3072 KiB", "768 KiB"),
        ("reconnect backoff ceiling", "45 seconds", "300 seconds", "90 seconds"),
        ("worker thread count", "6 threads", "32 threads", "12 threads"),
        ("flush batch size", "96 records", "1536 records", "384 records"),
        ("heartbeat interval", "700 ms", "4000 ms", "1500 ms"),
        ("spill file cap", "48 MiB", "900 MiB", "320 MiB"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a std::deque behind a mutex", "a memory-mapped ring buffer file",
         "the deque dies with the process and the supervisor restarts us several times a day",
         "a RocksDB column family for pending frames",
         "the ring file tears on power loss because that filesystem does not order the flushes"),
        ("an in-process SQLite table", "a spill file per stream with a CRC on every record",
         "the SQLite write lock stalls the send loop during checkpoints",
         "a Kafka topic on the existing cluster",
         "spill files pile up with nothing to compact them when a collector stays down for days"),
        ("a Redis list on the collector host", "LMDB in the relay data directory",
         "the collector host is exactly what goes away during a restart",
         "a write-ahead log segment per stream",
         "the single LMDB writer puts all eight streams behind one lock"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "tidewater drops frames from {module} whenever the collector restarts, they never "
            "get resent. find out why and fix it. afaict {other} has the same reconnect path, "
            "look at it too",
            "bug: after a collector bounce {module} stops resending its queued frames. "
            "root-cause it, fix it. {other} shares the reconnect code fwiw, check it as well",
        ],
        "set_value": [
            "start the {key} at {value}, we tune later",
            "fwiw {key} = {value} to begin with",
        ],
        "ack": [
            "Noted, will hold to that.",
            "Understood, will keep to it.",
            "OK, keeping that in mind.",
        ],
        "constraint": [
            "heads up: {rule}",
            "hard rule in this repo: {rule}",
            "nit but important: {rule}",
        ],
        "plan": [
            "Going with {plan} to hold the frames {module} has not sent yet.",
            "Starting point: {plan} keeps unsent frames until {module} reconnects.",
        ],
        "change_value": [
            "{old} for the {key} is too low, bump it to {new}",
            "change of plan on the {key}: {new}, not {old}",
            "ops pinged me, {key} needs to be {new}. {old} trips their alerts",
        ],
        "change_again": [
            "sorry, {key} again: {new}. {old} overloads the small collectors",
            "last word on the {key}, promise: {new}. staging choked on {old}",
            "revisiting the {key} once more, {old} is too much for the edge boxes. make it {new}",
        ],
        "ack_value": [
            "Set the {key} to {new} in " + _CONFIG_LINK + ".",
            _CONFIG_LINK + " now has the {key} at {new}.",
        ],
        "reverse": [
            "Problem with {old}: {why}. Moving to {new}.",
            "Backing out of {old}, since {why}. {new} instead.",
        ],
        "reverse_again": [
            "Same story with {old}: {why}. Switching again, to {new}.",
            "Not {old} either, because {why}. Going with {new}.",
        ],
        "question": [
            "when did resending break? want the offending commit hash for the incident doc, "
            "note it down",
            "need the commit that regressed this, hash goes in the postmortem timeline. keep "
            "it handy",
        ],
        "commit": [
            "build: bump googletest to 1.15",
            "ci: ccache for the clang job",
            "style: clang-format 18",
            "test: split codec fixtures",
        ],
        "answer": [
            "{sha}. It moved the resend path onto the shared connection pool and lost the "
            "replay hook.",
            "Introduced in {sha}: the shared connection pool replaced the per-stream socket, "
            "and the replay hook went with it.",
        ],
        "measure_question": [
            "while you're there: perf stat the replay of the small fixture, i want the "
            "task-clock number for the capacity doc. keep it",
            "how long does one replay of the small fixture take under perf stat? need the "
            "msec figure later for sizing",
        ],
        "measure_answer": [
            "task-clock: {figure} msec on average over 10 runs.",
            "perf stat averages {figure} msec of task-clock per replay (10 runs).",
        ],
        "last": [
            "{test} still fails, and the to-do to {todo} is in progress; stopping there. The "
            "rest of the list is done or dropped.",
            "Two things remain: the to-do to {todo} is underway and {test} is still red. "
            "Everything else is done or off the list.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._edits = 0
        self._creates = 0
        self._todo_writes = 0
        self._last_todos: list[dict[str, Any]] = []
        self._tests: list[str] = []

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{camel(module)}Test.{camel(name.removeprefix(f'test_{module}_'))}"

    @staticmethod
    def _abs(path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    @staticmethod
    def _result(value: object) -> str:
        """A `run.result` as the model reads it: a string as is, an object as its JSON."""
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    # --- Bash ---------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        cwd = ROOT
        if command == self.test_command():
            cwd = BUILD  # ctest runs in the build tree; Amp takes the directory as `cwd`
            exit_code = 8 if exit_code else 0  # what ctest returns when a test fails
        arguments = {"cmd": command, "cwd": cwd}
        result = self._result({"output": output, "exitCode": exit_code})
        self.s.call("Bash", arguments, result, filler=filler)

    # --- files --------------------------------------------------------------------------

    def _read(self, path: str, lines: Sequence[str], first: int, *, ranged: bool,
              filler: bool = False) -> None:  # fmt: skip
        """`Read` of `lines`, which start at line `first`; `ranged` gives the read_range."""
        arguments: dict[str, object] = {"path": self._abs(path)}
        if ranged:
            arguments["read_range"] = [first, first + len(lines) - 1]
        numbered = "\n".join(f"{n}: {line}" for n, line in enumerate(lines, first))
        self.s.call("Read", arguments, numbered, filler=filler)

    @staticmethod
    def _source(path: str, body: Sequence[str]) -> list[str]:
        stem = path.rsplit("/", 1)[-1].removesuffix(".cpp")
        return [f'#include "tidewater/{stem}.hpp"', "", "#include <string>",
                "#include <string_view>", "#include <vector>", "", "namespace tidewater {", "",
                *body, "", "}  // namespace tidewater"]  # fmt: skip

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._source(path, [cpp_line(line) for line in content.split("\n")])
        if filler and self.rng.random() < 0.3:
            first = self.rng.randint(10, max(10, len(lines) // 3))
            last = min(len(lines), first + self.rng.randint(25, 60))
            self._read(path, lines[first - 1 : last], first, ranged=True, filler=True)
            return
        self._read(path, lines, 1, ranged=False, filler=filler)

    def _edit_file(self, path: str, old: str, new: str, hunks: Sequence[int], *,
                   replace_all: bool = False) -> None:  # fmt: skip
        """One `edit_file` call and the diff it answers with, a hunk at each line in `hunks`."""
        full = self._abs(path)
        arguments: dict[str, object] = {"path": full, "old_str": old, "new_str": new}
        if replace_all:
            arguments["replace_all"] = True
        # Edited lines are statements in a function body: the diff shows their indent.
        diff = _diff(full, [(line, [f"-    {old}", f"+    {new}"]) for line in hunks])
        result = {"diff": diff, "lineRange": [hunks[0], hunks[-1]]}
        self.s.call("edit_file", arguments, self._result(result))

    def edit(self, path: str, old: str, new: str) -> None:
        old_cpp, new_cpp = cpp_line(old), cpp_line(new)
        if "tenant_id" in new and "tenant_id" not in old:
            self._fix_calls(path, old_cpp, new_cpp)
            return
        self._edits += 1
        line = self.rng.randint(20, 60)
        if self._edits == 3:
            self._edit_undone(path, old_cpp, new_cpp, line)
            return
        self._edit_file(path, old_cpp.strip(), new_cpp.strip(), [line])

    def _edit_undone(self, path: str, old: str, new: str, line: int) -> None:
        """An edit that reads the setting through a getter the settings struct does not
        have (its fields are plain members), undone, then made again as a member read."""
        wrong = new.strip().removesuffix(";") + "();"
        self._edit_file(path, old.strip(), wrong, [line])
        full = self._abs(path)
        reverted = _diff(full, [(line, [f"-    {wrong}", f"+    {old.strip()}"])])
        self.s.call("undo_edit", {"path": full}, self._result({"diff": reverted}))
        self._edit_file(path, old.strip(), new.strip(), [line])

    def _fix_calls(self, path: str, old: str, new: str) -> None:
        """The compiler's fix: read the lines it named, then pass the tenant to both calls in
        one edit (`replace_all`: the same call stands on lines 88 and 94)."""
        window = [line.replace("{call}", old.strip()) for line in FLUSH_WINDOW]
        self._read(path, window, 80, ranged=True)
        self._edit_file(path, old.strip(), new.strip(), [88, 94], replace_all=True)

    def create(self, path: str, content: str) -> None:
        full = self._abs(path)
        body = "\n".join(self._source(path, content.split("\n"))) + "\n"
        self.s.call("create_file", {"path": full, "content": body},
                    f"Successfully created file {full}")  # fmt: skip
        self._creates += 1
        if self._creates == 2:
            # A long line the new file's first function got; clang-format wraps it.
            first = content.split("\n", 1)[0]
            head, _, rest = first.partition("(")
            hunk = [f"-{first}", f"+{head}(", f"+        {rest}"]
            diff = _diff(full, [(9, hunk)])
            self.s.call("format_file", {"path": full}, self._result({"diff": diff}))

    def delete(self, path: str) -> None:
        self.shell(f"git rm -q {path}", "")

    def move(self, source: str, destination: str) -> None:
        # The C++ tree keeps test data under tests/data.
        source = source.replace("testdata/", "tests/data/", 1)
        destination = destination.replace("testdata/", "tests/data/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        per_file: dict[str, int] = {}
        lines = []
        for hit in hits:
            path, line, text = hit.split(":", 2)
            per_file[path] = per_file.get(path, 0) + 1
            if per_file[path] <= 15:  # Amp's Grep keeps 15 matches a file
                lines.append(f"{self._abs(path)}:{line}:    {text.strip()};")
        arguments = {"pattern": pattern, "path": self._abs(root)}
        self.s.call("Grep", arguments, "\n".join(lines), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = sorted(set(paths))
        if self.rng.random() < 0.5:
            names = "\n".join(p.rsplit("/", 1)[-1] for p in unique)
            self.s.call("list_directory", {"path": self._abs(root)}, names, filler=filler)
            return
        found = self._result([self._abs(p) for p in unique])
        self.s.call("glob", {"filePattern": f"{root}/**/*.cpp"}, found, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        self._todo_writes += 1
        if self._todo_writes == 1:
            self._survey()
        todos = [
            {
                "id": str(n),
                "content": text,
                "status": TODO_STATUS[status],
                "priority": "high" if n == 1 else "medium" if n < 4 else "low",
            }
            for n, (text, status) in enumerate(items, 1)
            if status != "cancelled"  # Amp's list has no cancelled state: left out
        ]
        if self._todo_writes == 3:
            self.s.call("todo_read", {}, self._result(self._last_todos))
        self._last_todos = todos
        self.s.call("todo_write", {"todos": todos}, self._result(todos))

    def _survey(self) -> None:
        """Before the plan: a sub-agent maps the reconnect path, and a diagram shows it."""
        prompt = (
            f"In {ROOT}, find every place a frame is queued, sent and acknowledged on the "
            "reconnect path of the relay. Read only, change nothing. Return the files and "
            "functions involved, in call order, with one line on what each does."
        )
        summary = (
            "The reconnect path runs Relay::on_disconnect -> Relay::park_frames -> "
            "Connector::dial -> Relay::flush_pending. Frames are parked in memory only; "
            "nothing replays them after Connector::dial succeeds, so whatever was parked "
            "before the drop is discarded when the next batch starts."
        )
        self.s.call("Task", {"prompt": prompt, "description": "Map the reconnect path"}, summary)
        code = (
            "sequenceDiagram\n    participant R as Relay\n    participant C as Connector\n"
            "    R->>R: park_frames()\n    R->>C: dial()\n    C-->>R: connected\n"
            "    R->>R: flush_pending() (parked frames never replayed)"
        )
        self.s.call("mermaid", {"code": code}, "Rendered the diagram for the user.")

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        return [
            "2 warnings generated.\nSuppressed 2 warnings (2 in non-user code).\nUse "
            "-header-filter=.* to display errors from all non-system headers. Use "
            "-system-headers to display errors from system headers as well.",
            "replay: dry run, 0 of 37 parked frames would be resent",
            "",
        ][k]

    def build_error(self, module: str) -> tuple[str, str, str]:
        call = f"{module}_send"
        probe = f"error: no matching function for call to '{call}'"
        source = f"{ROOT}/src/{module}.cpp"
        header = f"{ROOT}/include/tidewater/{module}.hpp"
        first = (
            f"{source}:88:5: {probe}\n   88 |     {call}(batch);\n      |     "
            f"^{'~' * (len(call) - 1)}\n{header}:31:6: note: candidate function not viable: "
            "requires 2 arguments, but 1 was provided\n   31 | void "
            f"{call}(const Batch& batch, std::string_view tenant_id);\n      |      "
            f"^{'~' * (len(call) - 1)} ~~~~~~~~~~~~~~~~~~  ~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        )
        second = first.replace(":88:5:", ":94:5:").replace("   88 |", "   94 |")
        compile_line = (
            '/usr/bin/clang++ -DTIDEWATER_VERSION=\\"0.9.2\\" -I/home/dev/code/tidewater/'
            "include -O2 -g -std=c++20 -Wall -Wextra -Werror=return-type -MD -MT "
            f"CMakeFiles/tidewater.dir/src/{module}.cpp.o -MF CMakeFiles/tidewater.dir/src/"
            f"{module}.cpp.o.d -o CMakeFiles/tidewater.dir/src/{module}.cpp.o -c {source}"
        )
        output = (
            f"[1/6] Building CXX object CMakeFiles/tidewater.dir/src/{module}.cpp.o\n"
            f"FAILED: CMakeFiles/tidewater.dir/src/{module}.cpp.o \n{compile_line}\n"
            f"{first}{second}2 errors generated.\nninja: build stopped: subcommand failed."
        )
        return output, probe, "cmake --build build"

    def build_ok(self) -> str:
        return (
            "[1/4] Building CXX object CMakeFiles/tidewater.dir/src/relay.cpp.o\n"
            "[2/4] Linking CXX static library libtidewater.a\n"
            "[3/4] Linking CXX executable tools/tidewater-replay\n"
            "[4/4] Linking CXX executable tests/tidewater_tests"
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        msec = float(figure)
        command = "perf stat -r 10 ./build/tools/tidewater-replay --fixture tests/data/small.bin"
        output = (
            f"\n Performance counter stats for './build/tools/tidewater-replay --fixture "
            "tests/data/small.bin' (10 runs):\n\n"
            f"{figure:>18} msec task-clock                       #    0.993 CPUs utilized"
            "               ( +-  0.84% )\n"
            f"{41:>18}      context-switches                 #   {41000 / msec:.3f} /sec"
            "                        ( +-  3.10% )\n"
            f"{2:>18}      cpu-migrations                   #    {2000 / msec:.3f} /sec"
            "                        ( +- 21.08% )\n"
            f"{'3,912':>18}      page-faults                      #    "
            f"{3912 / msec:.3f} K/sec                       ( +-  0.02% )\n\n"
            f"{msec / 993:>18.5f} +- {msec / 993 * 0.0084:.5f} seconds time elapsed  "
            "( +-  0.84% )\n"
        )
        return output, command

    def test_command(self) -> str:
        return "ctest --output-on-failure"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed} tests failed out of {failed + passed}"

    def _test_names(self, failing: Sequence[str], total: int) -> list[str]:
        """Every test CTest knows (one per GoogleTest case, as gtest_discover_tests
        registers them), in one order from run to run; later runs add the tests written
        since at the end."""
        if not self._tests:
            suites = sorted({*OTHER_SUITES, *(t.split(".")[0] for t in failing)})
            others: list[str] = []
            while len(others) < total - len(failing):
                name = f"{self.rng.choice(suites)}.{self.rng.choice(OTHER_CASES)}"
                if name not in others:
                    others.append(name)
            for name in failing:
                others.insert(self.rng.randint(0, len(others)), name)
            self._tests = others
        while len(self._tests) < total:
            name = f"{self.rng.choice(OTHER_SUITES)}.{self.rng.choice(OTHER_CASES)}"
            if name not in self._tests:
                self._tests.append(name)
        return self._tests

    def _gtest_failure(self, test: str) -> list[str]:
        """What one failing test prints when CTest runs it alone (`--gtest_filter`)."""
        suite, case = test.split(".")
        line, message = ASSERTIONS[case]
        file = f"{ROOT}/tests/{suite.removesuffix('Test').lower()}_test.cpp"
        return [
            "Running main() from /usr/src/googletest/googletest/src/gtest_main.cc",
            f"Note: Google Test filter = {test}",
            "[==========] Running 1 test from 1 test suite.",
            "[----------] Global test environment set-up.",
            f"[----------] 1 test from {suite}",
            f"[ RUN      ] {test}",
            f"{file}:{line}: Failure",
            *message,
            "",
            f"[  FAILED  ] {test} (0 ms)",
            f"[----------] 1 test from {suite} (0 ms total)",
            "",
            "[----------] Global test environment tear-down",
            "[==========] 1 test from 1 test suite ran. (0 ms total)",
            "[  PASSED  ] 0 tests.",
            "[  FAILED  ] 1 test, listed below:",
            f"[  FAILED  ] {test}",
            "",
            " 1 FAILED TEST",
        ]

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        total = failed + passed
        names = self._test_names(failing, total)
        width = len(str(total))
        lines = [f"Test project {BUILD}"]
        for n, name in enumerate(names, 1):
            dots = "." * max(3, 44 - len(name))
            seconds = f"{self.rng.randint(1, 40) / 100:.2f}"
            lines.append(f"      Start {n:>{width}}: {name}")
            prefix = f"{n:>{width}}/{total} Test {'#' + str(n):>{width + 1}}: {name} {dots}"
            if name in failing:
                lines.append(f"{prefix}***Failed    {seconds} sec")
                lines += self._gtest_failure(name)
                lines.append("")
            else:
                lines.append(f"{prefix}   Passed    {seconds} sec")
        percent = round(100 * passed / total)
        percent = min(percent, 99) if failed else percent
        lines += [
            "",
            f"{percent}% tests passed, {self.test_counts(failed, passed)}",
            "",
            f"Total Test time (real) = {self.rng.randint(80, 240) / 100:>7.2f} sec",
            "",
            "The following tests FAILED:",
            *(f"\t{n:>3} - {t} (Failed)" for n, t in enumerate(names, 1) if t in failing),
            "Errors while running CTest",
            f"Output from these tests are in: {BUILD}/Testing/Temporary/LastTest.log",
            'Use "--rerun-failed --output-on-failure" to re-run the failed cases verbosely.',
        ]
        return "\n".join(lines)
