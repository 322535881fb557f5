"""A homegrown-style family, telling the story's second-thoughts variant: a Flutter app (Dart 3,
`flutter analyze`, `flutter test` with its compact reporter, `dart format`, build_runner, a
benchmark_harness benchmark) worked on through an in-house agent a mobile team built on
LangGraph's tool calling (OpenAI chat format), with tools of the team's own that no published
agent declares, by a user who writes structured tickets and an assistant who answers in terse
status notes.

The tools are this family's own invention, named and shaped the way an in-house team names
them, and answer in the team's JSON envelope (`json.dumps` of a dict, so non-ASCII output such
as the analyzer's bullets arrives as `\\u2022` escapes):

- `shell_exec` {cmdline, workdir, timeout_s}: {"ok", "code", "stdout", "stderr", "took_ms"},
  `ok` true exactly when `code` is 0.
- `fs_read` {file, from_line, to_line} (repository-relative, 1-based, inclusive; a whole file
  when the range is left out): {"ok", "file", "from_line", "to_line", "total_lines", "text"}.
- `fs_write` {file, text}: {"ok": true, "bytes": N}, N the UTF-8 size written.
- `fs_patch` {file, find, replace}: {"ok": true, "replaced": 1}; a `find` that matches more
  than once is refused with {"ok": false, "error": …, "matches": [line, …]} and nothing
  changes (the agent then patches each place with more context).
- `fs_remove` {file}: {"ok": true, "removed": file}. Moves go through `git mv` in the shell.
- `code_search` {needle, under}: {"ok", "hits": [{"file", "line", "text"}], "truncated"}, 25
  hits at most; `fs_list` {dir, pattern}: {"ok", "entries": [{"name", "size"}]}.
- `plan_set` {steps: [{title, state}]}, state todo / doing / done / dropped, the whole plan
  each time: {"ok": true, "steps": N, "doing": 1}.
- `notify_user` {message}: the final answer goes to the user through it, answered with
  {"ok": true, "delivered": true}; the session ends on that result.

Tool outputs follow the real tools: `flutter analyze`'s `  error • message • file:line:col •
code` lines and "N issues found. (ran in Xs)" / "No issues found! (ran in Xs)"; `flutter test`'s
compact reporter as it prints without a terminal (one `MM:SS +P -F: <absolute test file>: <test
name>` line a test, a failing one marked ` [E]` and followed by matcher's Expected/Actual, the
stack and "To run this test again:", the run closing on "Some tests failed." or "All tests
passed!"); `dart format`'s "Formatted N files (0 changed) in Xs seconds."; build_runner's
`[INFO]` lines; benchmark_harness's `Name(RunTime): X us.`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, lower_camel

ROOT = "/srv/agent/checkouts/fieldkit"
APP = "fieldkit"
FLUTTER = "/opt/flutter"
#: The plan's states, as `plan_set` spells the story's.
PLAN_STATES = {"pending": "todo", "in_progress": "doing", "completed": "done",
               "cancelled": "dropped"}  # fmt: skip
#: The benchmark the variant's figure comes from.
BENCH = "dart run benchmark/flush_batch_benchmark.dart"
#: The story's test names, as the Dart tests describe them, with matcher's complaint and the
#: line of the failing `expect`.
TEST_NAMES = {
    "retries": ("retries a delivery that timed out", "Expected: <3>\n    Actual: <2>", 31),
    "orders_batches": ("flushes batches in enqueue order",
                       "Expected: [1, 2, 3]\n    Actual: [1, 3, 2]\n     Which: at location [1] "
                       "is <3> instead of <2>", 47),
    "handles_empty": ("returns early on an empty queue", "Expected: <0>\n    Actual: <1>", 62),
}  # fmt: skip
#: Test files that always run beside the ones the story's failures live in.
OTHER_TEST_FILES = ("envelope_codec", "route_table", "signature_check")
_VERBS = ("decodes", "encodes", "signs", "rejects", "parses", "caches", "expires", "merges")
_NOUNS = ("a payload", "the header", "an envelope", "a receipt", "the digest", "a timestamp",
          "the nonce")  # fmt: skip
#: The lines the analyzer points at (88 and 93 hold the calls), as fs_read shows 80-95.
DISPATCH_WINDOW = (
    "  }",
    "",
    "  Future<void> _flushPending(Batch batch) async {",
    "    if (batch.isEmpty) {",
    "      return;",
    "    }",
    "    _metrics.increment('fieldkit.flushes');",
    "    _log.fine('flushing ${batch.length} envelopes');",
    "    {call}",
    "  }",
    "",
    "  Future<void> _retryPending(Batch batch) async {",
    "    _metrics.increment('fieldkit.retries');",
    "    {call}",
    "  }",
    "",
)


def dart_line(line: str) -> str:
    """A story line (`throttle_limit = 4`, `outbox_send(batch)`) as the Dart it stands for: the
    call before the fix names a `tenantId` that is not in scope, the fix takes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, _, value, tenant = match.groups()
    name = lower_camel(module)
    if value is None:
        source = "batch.tenantId" if tenant else "tenantId"
        return f"    await {name}Send(batch, tenantId: {source});"
    if value.startswith("settings."):
        return f"  int get {name}Limit => _settings.{name}Limit;"
    return f"  static const {name}Limit = {value};"


def _dart_file(class_name: str, body: Sequence[str]) -> list[str]:
    return [
        "import 'package:fieldkit/src/core/settings.dart';",
        "import 'package:logging/logging.dart';",
        "",
        f"class {class_name} {{",
        *body,
        "}",
    ]


def _stack(frame: str) -> list[str]:
    """A failed `expect`'s stack trace as package:test prints it: locations padded to one
    column, the test's own frame last."""
    frames = [("package:matcher", "expect"),
              ("package:flutter_test/src/widget_tester.dart 473:18", "expect"),
              (frame, "main.<fn>.<fn>")]  # fmt: skip
    width = max(len(where) for where, _ in frames) + 2
    return [f"  {where:<{width}}{member}" for where, member in frames]


def envelope(**fields: Any) -> str:
    """A tool result as the team's tools return it: the dict, JSON-encoded."""
    return json.dumps(fields)


class HomegrownVoice(Voice):
    family = "homegrown-style"
    system_prompt = (
        "You are Relay, the mobile platform team's coding agent for the fieldkit Flutter "
        f"repository, checked out at {ROOT}. You act only through the tools you are given; "
        "every tool answers with a JSON object whose `ok` field says whether it worked.\n\n"
        "House rules:\n"
        "1. Read a file with fs_read before you change it with fs_patch; fs_write is for new "
        "files.\n"
        "2. shell_exec runs one command line in workdir; give long runs (flutter test, "
        "benchmarks) a timeout_s of 600 or more.\n"
        "3. Keep the plan current with plan_set after every step that changes it.\n"
        "4. Run flutter analyze and flutter test before you report.\n"
        "5. When you stop, send the user one notify_user message saying what is done and what "
        "is open. Nothing you write outside notify_user reaches them as a final answer."
    )
    src = "lib/src"
    ext = "dart"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "dart run tool/replay_outbox.dart --queue {module} --dry-run",
        "dart format --output=none --set-exit-if-changed lib test",
        "dart run build_runner build --delete-conflicting-outputs",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("sync interval", "45 seconds", "240 seconds", "120 seconds"),
        ("image cache budget", "64 MiB", "384 MiB", "192 MiB"),
        ("offline outbox cap", "300 envelopes", "2000 envelopes", "750 envelopes"),
        ("connect timeout", "7 s", "31 s", "18 s"),
        ("token refresh lead time", "3 minutes", "20 minutes", "11 minutes"),
        ("upload chunk size", "256 KiB", "4096 KiB", "1024 KiB"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("keeping the outbox in SharedPreferences", "a drift table in the app's SQLite file",
         "SharedPreferences rewrites the whole blob on every enqueue and loses it when the OS "
         "kills the app",
         "one Hive box per signed-in account",
         "the drift table needs a schema migration the release train cannot ship before "
         "January"),
        ("a Timer.periodic in the root widget", "Workmanager background tasks",
         "the timer stops the moment the app is backgrounded",
         "flushing from the connectivity_plus stream when the network returns",
         "iOS runs background tasks when it pleases, sometimes hours apart"),
        ("a global Mutex around the uploader", "one isolate per account",
         "one stuck upload holds up every account",
         "per-account queues inside a single background isolate",
         "each spawned isolate copies the HTTP client and the whole token cache"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Ticket FK-2214\nSymptom: envelopes queued by {module} sit in the outbox forever "
            "after the app comes back from airplane mode.\nAsk: root-cause it and fix it.\n"
            "Also check: {other}, which shares the flush path.",
            "Ticket FK-2290\nSymptom: field techs report that {module} never resends what it "
            "queued offline until they force-quit the app.\nAsk: find out why, then fix.\n"
            "Also check: {other} (same code, copied last spring).",
        ],
        "set_value": [
            "Config: {key} = {value} to begin with. We revisit after the pilot group reports back.",
            "Config for now: {key} at {value}.",
        ],
        "ack": [
            "Noted. Holding to it.",
            "Recorded; every later step respects it.",
            "Acknowledged, it applies from here on.",
        ],
        "constraint": [
            "Guardrail (not up for debate): {rule}.",
            "Repo policy, enforced in review: {rule}.",
            "Hard requirement from the platform leads: {rule}.",
        ],
        "plan": [
            "Approach v1: {plan}, so {module} gets its parked envelopes back after a cold start.",
            "Starting point: {plan} to hold whatever {module} could not send yet.",
        ],
        "change_value": [
            "Config change: {key} goes from {old} to {new}. The pilot group found {old} too "
            "aggressive.",
            "Revision: {key} = {new}, not {old}. Battery complaints from the pilot.",
            "Update the {key}: drop {old}, use {new}. QA signed off on the new figure.",
        ],
        "change_again": [
            "Config change, second round: {key} {old} is too much for the low-end Android "
            "devices. Set {new}.",
            "Correction on the {key} again: {new} is the number product agreed; {old} is off "
            "the table.",
            "Last word on the {key}: {new}. {old} failed the battery soak over the weekend.",
        ],
        "ack_value": [
            "Set: {key} is {new} in lib/src/core/settings.dart.",
            "Applied. lib/src/core/settings.dart now carries {key} = {new}.",
        ],
        "reverse": [
            "Status: abandoning {old}; {why}. Approach v2 is {new}.",
            "Status: {old} is out because {why}. Moving the work to {new}.",
        ],
        "reverse_again": [
            "Status: v2 fails as well, {old} is out since {why}. Approach v3: {new}.",
            "Status: revising once more, because {why}: {old} goes and {new} takes its place.",
        ],
        "question": [
            "Question for the incident doc: which commit introduced this? Record the hash, "
            "the review board asks for it.",
            "Need for the postmortem: the hash of the commit that broke the resend. Keep it "
            "on record.",
        ],
        "commit": [
            "chore(deps): bump dio to 5.7",
            "test: golden files for the job sheet",
            "docs: offline mode runbook",
            "ci: cache pub packages",
        ],
        "answer": [
            "Result: {sha}. It moved the outbox onto the shared Dio instance and lost the "
            "retry interceptor on the way.",
            "Culprit commit: {sha}. The outbox switched to the shared Dio client there, and the "
            "retry interceptor went missing.",
        ],
        "measure_question": [
            "Extra ask: benchmark one flush batch in AOT mode and give me the per-run time. It "
            "goes into the perf budget sheet, so keep the figure.",
            "Perf budget needs a number: time a single flush batch with the benchmark script "
            "and record the result.",
        ],
        "measure_answer": [
            "Measured: one flush batch takes {figure} us per run (benchmark_harness).",
            "Benchmark result: {figure} us per flush batch run.",
        ],
        "last": [
            "Handing back with two items open: {test} still fails and {todo} is in progress. "
            "Everything else in the plan is done or dropped.",
            "Stopping here; {todo} has started and {test} is still red. The remaining plan "
            "steps are finished or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._files: dict[str, list[str]] = {}
        self._failed_before: list[str] = []  # tests an earlier run reported failing
        self._broken: str | None = None  # the module whose analysis fails, until it passes

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        description = TEST_NAMES[name.removeprefix(f"test_{module}_")][0]
        return f"{camel(module)}Outbox {description}"

    # --- shell_exec ---------------------------------------------------------------------

    @staticmethod
    def _timeout(cmdline: str) -> int:
        if cmdline.startswith(("flutter test", BENCH)):
            return 900
        return 120

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        arguments = {"cmdline": command, "workdir": ROOT, "timeout_s": self._timeout(command)}
        result = envelope(
            ok=exit_code == 0,
            code=exit_code,
            stdout=output + ("\n" if output else ""),
            stderr="",
            took_ms=self.rng.randint(40, 9000),
        )
        self.s.call("shell_exec", arguments, result, filler=filler)
        if command == "flutter analyze" and not exit_code and self._broken:
            self._tests_of(self._broken)
            self._broken = None

    def _tests_of(self, module: str) -> None:
        """After the analyzer is clean, the tests of the file it flagged, by name."""
        test_file = f"test/src/{module}_test.dart"
        kinds = ("ids", "headers", "scopes", "tags", "keys", "names", "roles")
        passed = self.rng.randint(3, len(kinds))
        rows = [f"00:00 +0: loading {ROOT}/{test_file}"]
        rows += [
            f"00:0{1 + k // 3} +{k}: {camel(module)}Outbox passes tenant {kind} through"
            for k, kind in enumerate(kinds[:passed])
        ]
        rows.append(f"00:0{1 + passed // 3} +{passed}: All tests passed!")
        output = "\n".join(rows)
        self.shell(f"flutter test {test_file} --plain-name tenant", output)

    # --- files --------------------------------------------------------------------------

    def _read(self, path: str, lines: Sequence[str], first: int, total: int, *,
              filler: bool = False) -> None:  # fmt: skip
        last = first + len(lines) - 1
        whole = first == 1 and last == total
        arguments: dict[str, Any] = {"file": path}
        if not whole:
            arguments |= {"from_line": first, "to_line": last}
        result = envelope(ok=True, file=path, from_line=first, to_line=last, total_lines=total,
                          text="\n".join(lines))  # fmt: skip
        self.s.call("fs_read", arguments, result, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        name = camel(path.rsplit("/", 1)[-1].removesuffix(".dart"))
        lines = _dart_file(name, [dart_line(line) for line in content.split("\n")])
        if not filler:
            self._files[path] = lines
        if filler and self.rng.random() < 0.3:
            first = self.rng.randint(5, max(5, len(lines) // 3))
            last = min(len(lines), first + self.rng.randint(25, 60))
            self._read(path, lines[first - 1 : last], first, len(lines), filler=True)
            return
        self._read(path, lines, 1, len(lines), filler=filler)

    def edit(self, path: str, old: str, new: str) -> None:
        old_dart, new_dart = dart_line(old), dart_line(new)
        if "tenant_id" in new and "tenant_id" not in old:
            self._fix_calls(path, old_dart, new_dart)
            return
        arguments = {"file": path, "find": old_dart.strip(), "replace": new_dart.strip()}
        lines = self._files.get(path, [])
        if old_dart in lines:
            lines[lines.index(old_dart)] = new_dart
        self.s.call("fs_patch", arguments, envelope(ok=True, replaced=1))

    def _fix_calls(self, path: str, old: str, new: str) -> None:
        """The analyzer's fix: read the lines it named, patch the call (it matches twice and
        is refused), then patch each call with the line before it as context."""
        window = [line.replace("{call}", old.strip()) for line in DISPATCH_WINDOW]
        self._read(path, window, 80, 140)
        arguments = {"file": path, "find": old.strip(), "replace": new.strip()}
        refused = envelope(
            ok=False,
            error="find matched 2 locations; add surrounding lines so it matches exactly once",
            matches=[88, 93],
        )
        self.s.call("fs_patch", arguments, refused)
        for at in (88, 93):
            before = window[at - 81]
            find = f"{before}\n{old}"
            self.s.call("fs_patch", {"file": path, "find": find, "replace": f"{before}\n{new}"},
                        envelope(ok=True, replaced=1))  # fmt: skip

    def create(self, path: str, content: str) -> None:
        name = camel(path.rsplit("/", 1)[-1].removesuffix(".dart"))
        text = "\n".join(_dart_file(name, content.split("\n"))) + "\n"
        written = envelope(ok=True, bytes=len(text.encode()))
        self.s.call("fs_write", {"file": path, "text": text}, written)

    def delete(self, path: str) -> None:
        self.s.call("fs_remove", {"file": path}, envelope(ok=True, removed=path))

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "test/fixtures/", 1)
        destination = destination.replace("testdata/", "test/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        found = []
        for hit in list(hits)[:25]:
            path, line, text = hit.split(":", 2)
            found.append({"file": path, "line": int(line), "text": f"    {text.strip()}"})
        result = envelope(ok=True, hits=found, truncated=len(hits) > 25)
        self.s.call("code_search", {"needle": pattern, "under": root}, result, filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        entries = [
            {"name": p.rsplit("/", 1)[-1], "size": self.rng.randint(300, 30000)}
            for p in sorted(set(paths))
        ]
        arguments = {"dir": root, "pattern": "*.dart"}
        self.s.call("fs_list", arguments, envelope(ok=True, entries=entries), filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        steps = [{"title": text, "state": PLAN_STATES[status]} for text, status in items]
        doing = sum(step["state"] == "doing" for step in steps)
        result = envelope(ok=True, steps=len(steps), doing=doing)
        self.s.call("plan_set", {"steps": steps}, result)

    def finish(self, text: str) -> None:
        self.s.call("notify_user", {"message": text}, envelope(ok=True, delivered=True))

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            return (
                "Building package executable...\nBuilt fieldkit:replay_outbox.\n"
                "replay (dry run): 0 of 29 parked envelopes would be resent"
            )
        if k == 1:
            return f"Formatted {self.rng.randint(60, 140)} files (0 changed) in 0.84 seconds."
        return "\n".join(
            [
                "[INFO] Generating build script completed, took 391ms",
                "[INFO] Reading cached asset graph completed, took 88ms",
                "[INFO] Checking for updates since last build completed, took 612ms",
                "[INFO] Running build completed, took 4.2s",
                "[INFO] Caching finalized dependency graph completed, took 61ms",
                "[INFO] Succeeded after 4.3s with 6 outputs (27 actions)",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        call = dart_line(f"{module}_send(batch)")
        column = call.index("tenantId: tenantId") + len("tenantId: ") + 1
        probe = "Undefined name 'tenantId'"
        rows = [
            f"  error \u2022 {probe} \u2022 lib/src/{module}.dart:{at}:{column} \u2022 "
            "undefined_identifier"
            for at in (88, 93)
        ]
        self._broken = module
        output = f"Analyzing {APP}...\n\n" + "\n".join(rows) + "\n\n2 issues found. (ran in 3.4s)"
        return output, probe, "flutter analyze"

    def build_ok(self) -> str:
        return f"Analyzing {APP}...\nNo issues found! (ran in 2.9s)"

    def measurement(self, figure: str) -> tuple[str, str]:
        output = f"FlushBatch(RunTime): {figure} us."
        return output, f"{BENCH} --aot"

    def test_command(self) -> str:
        return "flutter test"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"+{passed} -{failed}: Some tests failed."

    def _per_file(self, named: Sequence[str], total: int) -> list[tuple[str, str, list[str]]]:
        """(test file stem, its group, its test descriptions) for every file the run loads,
        `total` tests in all: the files of the `named` tests first, each holding them."""
        groups: dict[str, list[str]] = {}
        for test in named:
            group, description = test.split(" ", 1)
            groups.setdefault(group, [])
            if description not in groups[group]:
                groups[group].append(description)
        for stem in OTHER_TEST_FILES:
            groups[camel(stem)] = []
        names = [f"{v} {n}" for v in _VERBS for n in _NOUNS]
        order = list(groups)
        k = 0
        while sum(len(d) for d in groups.values()) < total:
            groups[order[k % len(order)]].append(names[k % len(names)])
            k += 1
        stems = {camel(stem): stem for stem in OTHER_TEST_FILES}
        return [
            (stems.get(group) or group.removesuffix("Outbox").lower(), group, groups[group])
            for group in order
        ]

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # An earlier run's failures still run in a later one, where they pass.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        total = failed + passed
        ok = bad = 0
        second = 0
        lines = []
        for stem, group, descriptions in self._per_file(named, total):
            test_file = f"{ROOT}/test/src/{stem}_test.dart"
            lines.append(f"00:{second:02d} +{ok}{f' -{bad}' if bad else ''}: loading {test_file}")
            for description in descriptions:
                second = min(59, second + self.rng.randint(0, 1))
                stamp = f"00:{second:02d}"
                name = f"{group} {description}"
                if name in failing:
                    bad += 1
                    key = next(k for k, v in TEST_NAMES.items() if v[0] == description)
                    _, complaint, line = TEST_NAMES[key]
                    lines += [
                        f"{stamp} +{ok} -{bad}: {test_file}: {name} [E]",
                        f"  {complaint}",
                        "  ",
                        *_stack(f"test/src/{stem}_test.dart {line}:7"),
                        "  ",
                        "",
                        f"To run this test again: {FLUTTER}/bin/cache/dart-sdk/bin/dart test "
                        f"{test_file} -p vm --plain-name '{name}'",
                    ]
                else:
                    ok += 1
                    lines.append(f"{stamp} +{ok}{f' -{bad}' if bad else ''}: {test_file}: {name}")
        lines.append(f"00:{min(59, second + 1):02d} {self.test_counts(failed, passed)}")
        return "\n".join(lines)
