"""A Plandex-style family, telling the story's second-thoughts variant: a Haskell service (GHC
9.6, cabal, hspec, hlint, criterion for the variant's figure) worked on through the Plandex
terminal coding agent, recorded as OpenAI chat, by a user who tells Plandex what to build and
an assistant that plans in subtasks and keeps its changes pending until they are applied.

Plandex works through CLI commands (`plandex load`, `tell`, `build`, `apply`, `exec`) rather
than a published tool schema, and a short search of its documentation named no tool calls.
The tools here are this family's own reading of those commands, with names and argument names
of its own that no other family uses:

- `load_context` {paths, kind}: loads files into the plan's context; answers
  "Loaded N file(s) into context (~T tokens)" and each file under a `📄 <path>` line.
- `write_pending_file` {file_path, content}: a new file in the plan's sandbox; answers
  "Pending change: new file <path> (+N lines)".
- `replace_in_pending_file` {file_path, original, replacement}: answers "Pending change:
  <path> (+1 -1)".
- `remove_pending_file` {file_path}: answers "Pending change: <path> removed".
- `run_exec` {cmd, cwd}: a command in the project; answers its output and
  "[exit status N]". Moves go through `git mv` here.
- `context_grep` {pattern, dir}: answers "N matches" and `path:line: text` hits.
- `project_map` {dir}: Plandex's project map, a file a line with its size in tokens.
- `set_subtasks` {subtasks: [{title, status}]}, the whole list each time, status queued /
  working / finished / removed: answers "Subtasks: F of N finished".
The session ends on the assistant's text (Plandex has no final-answer tool).

Tool outputs follow the real tools: cabal's `Build profile` / `Building library` lines, GHC's
`src/Outbox.hs:88:20: error: [GHC-88464]` with `Variable not in scope: tenantId` and its
caret display, then the build passing; `cabal test` around hspec's spec tree (`[✔]`/`[✘]`),
its `Failures:` block with `expected:`/`but got:` and `To rerun use: --match`, `Finished in
0.0123 seconds` and `N examples, F failures`; hlint's "No hints"; `cabal check`'s verdict;
criterion's `time` / `mean` / `std dev` block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Session, Voice, camel, filled_groups, lower_camel

ROOT = "/home/dev/work/quayside"
PACKAGE = "quayside-0.4.2.0"
SUITE = "quayside-test"
GHC = "ghc-9.6.6"
#: The story's statuses as `set_subtasks` spells them.
SUBTASK_STATES = {"pending": "queued", "in_progress": "working", "completed": "finished",
                  "cancelled": "removed"}  # fmt: skip
#: The benchmark the variant's figure comes from.
BENCH = "cabal bench quayside-bench --benchmark-options='--match prefix flush'"
BUILD = "cabal build lib:quayside"
#: What each failing example expected, what it got, and the line of its expectation.
EXAMPLES = {
    "retries": ("retries a timed-out delivery three times", "3", "2", 31),
    "orders_batches": ("keeps batches in enqueue order", "[1,2,3]", "[1,3,2]", 47),
    "handles_empty": ("does nothing for an empty queue", "0", "1", 62),
}
#: Spec modules that always run beside the ones the story's failures live in.
OTHER_SPECS = ("EnvelopeCodec", "RouteTable", "SignatureCheck")
_VERBS = ("decodes", "encodes", "signs", "rejects", "parses", "caches", "expires", "merges")
_NOUNS = ("a payload", "the header", "an envelope", "a receipt", "the digest", "a timestamp",
          "the nonce")  # fmt: skip
_SEND = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")
_LIMIT = re.compile(r"^([a-z]+)_limit = (\S+)$")


def haskell_line(line: str) -> str:
    """A story line as the Haskell it stands for: the send before the fix names a `tenantId`
    that is not in scope, the fix takes the batch's; a limit is a top-level binding."""
    send = _SEND.match(line)
    if send:
        module, fixed = send.groups()
        tenant = "(batchTenantId batch)" if fixed else "tenantId"
        return f"  {module}Send batch {tenant}"
    limit = _LIMIT.match(line)
    if limit:
        module, value = limit.groups()
        if value.startswith("settings."):
            value = f"cfg{camel(module)}Limit settings"
        return f"{module}Limit = {value}"
    return line


def _haskell_file(module: str, body: Sequence[str]) -> list[str]:
    return [
        f"module {module} where",
        "",
        "import Data.Maybe (fromMaybe)",
        "import Data.Text (Text)",
        "",
        *body,
    ]


class PlandexVoice(Voice):
    family = "plandex-style"
    system_prompt = (
        "You are Plandex, an AI planning and coding assistant running in the user's terminal "
        f"on the Haskell project at {ROOT}.\n\n"
        "How you work:\n"
        "- Break the user's task into subtasks and keep them current with set_subtasks.\n"
        "- Load what you need with load_context; the project map shows the rest.\n"
        "- Changes go to the plan's sandbox as pending changes (write_pending_file, "
        "replace_in_pending_file, remove_pending_file) until the user applies them.\n"
        "- Run builds, tests and scripts with run_exec from the project root.\n\n"
        "Project: cabal package quayside, GHC 9.6.6; tests are hspec (cabal test), lint is "
        "hlint, benchmarks are criterion."
    )
    src = "src"
    ext = "hs"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "cabal run quayside-replay -- --queue {module} --dry-run",
        "hlint src test",
        "cabal check",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("delivery timeout", "7 seconds", "38 seconds", "21 seconds"),
        ("resend window", "3 hours", "96 hours", "40 hours"),
        ("flush batch size", "60 envelopes", "1200 envelopes", "450 envelopes"),
        ("RTS capability count", "3 cores", "16 cores", "8 cores"),
        ("retry backoff cap", "50 ms", "2400 ms", "800 ms"),
        ("idempotency key TTL", "15 minutes", "720 minutes", "90 minutes"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an IORef of parked envelopes inside the worker",
         "a Redis stream read through hedis",
         "the IORef comes back empty after every restart",
         "a postgresql-simple outbox table drained by a forkIO loop",
         "our Redis evicts keys whenever memory gets tight"),
        ("one MVar guarding the whole dispatcher", "a separate worker process per tenant",
         "one slow tenant keeps that MVar taken while everyone else waits",
         "per-tenant TBQueues drained by async workers in a single process",
         "each worker process would open its own http-client Manager and token cache"),
        ("a cron job hitting the resend endpoint", "a systemd timer unit",
         "cron silently skips the runs missed while the host was down",
         "a resend loop inside the service woken by a GHC timer",
         "ops refuse to ship one more unit file per region"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "When the partner is down, {module} parks envelopes in the outbox and then forgets "
            "them: nothing goes out once the partner recovers. Make them go out again, oldest "
            "first. {other} runs through the same flush code, so fix it there as well.",
            "Plan for today: after a worker restart, {module} has to resend what its outbox "
            "parked. Right now those envelopes are stuck for good. {other} is a copy of the "
            "same code and needs the same fix.",
        ],
        "set_value": [
            "Start the {key} at {value} for now.",
            "We'll go with {value} for the {key} to begin with.",
        ],
        "ack": [
            "Noted, I'll keep to that in every subtask.",
            "Understood; the plan accounts for it from here on.",
            "Okay, that's part of the plan now.",
        ],
        "constraint": [
            "One thing you must not break: {rule}.",
            "Keep this in mind for every change you queue: {rule}.",
            "Hard requirement from the team: {rule}.",
        ],
        "plan": [
            "Proposed approach: {plan}, so that {module} can find its parked envelopes after "
            "a restart.",
            "I'll start with {plan}; that way nothing {module} parks is lost.",
        ],
        "change_value": [
            "Change of mind on the {key}: use {new}. {old} turned out too short for the slow "
            "partners.",
            "Bump the {key} from {old} to {new}, ops asked for it.",
            "{old} for the {key} keeps tripping alerts. Go to {new}.",
        ],
        "change_again": [
            "Revisiting the {key} one last time: {old} is more than the partners cope with. "
            "Make it {new}.",
            "I changed my mind again on the {key}. {old} failed the overnight soak; {new} is "
            "the final value.",
            "Take the {key} down to {new}. {old} was fine on paper, not in staging.",
        ],
        "ack_value": [
            "Queued: config/quayside.yaml now sets the {key} to {new}.",
            "The pending change puts {new} in config/quayside.yaml for the {key}.",
        ],
        "reverse": [
            "I'm revising the plan: {old} won't work, because {why}. The new approach is {new}.",
            "Dropping {old} from the plan, since {why}. Moving to {new}.",
        ],
        "reverse_again": [
            "The plan needs one more revision: {old} has a problem too, {why}. Going with {new}.",
            "Revising again, because {why}: {old} is out of the plan, {new} takes its place.",
        ],
        "question": [
            "I need the commit that broke the resend for the incident write-up. Find its hash "
            "and keep it around.",
            "Which commit introduced this? Give me the hash, the postmortem needs it.",
        ],
        "commit": [
            "deps: bump http-client to 0.7.17",
            "test: split the spec into modules",
            "docs: describe the replay executable",
            "ci: cache the cabal store",
        ],
        "answer": [
            "The hash is {sha}: that commit moved the outbox onto the shared http-client "
            "Manager and lost the retry wrapper on the way.",
            "It came in with {sha}, which switched the outbox to the shared http-client "
            "Manager and dropped its retries.",
        ],
        "measure_question": [
            "Benchmark a single flush batch with criterion and tell me the mean time. I want "
            "that number in the design doc, so hold on to it.",
            "How long does one flush batch take? Run the criterion bench and keep the mean for "
            "the write-up.",
        ],
        "measure_answer": [
            "One flush batch takes {figure} μs on average according to criterion.",
            "Criterion's mean for a flush batch: {figure} μs.",
        ],
        "last": [
            "Stopping here with {todo} being worked on and {test} still failing. The other "
            "subtasks are finished or were removed from the plan.",
            "Current state: {test} still fails, and {todo} is the subtask in progress. "
            "Everything else in the plan is either done or removed.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._failed_before: list[str] = []  # examples an earlier run reported failing
        self._broken: str | None = None  # the module that fails to build, until it builds

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.hs"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{camel(module)} {EXAMPLES[name.removeprefix(f'test_{module}_')][0]}"

    # --- run_exec -------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        result = (output + "\n\n" if output.strip() else "") + f"[exit status {exit_code}]"
        self.s.call("run_exec", {"cmd": command, "cwd": ROOT}, result, filler=filler)

    # --- files ----------------------------------------------------------------------------

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        module = path.rsplit("/", 1)[-1].removesuffix(".hs")
        text = "\n".join(_haskell_file(module, [haskell_line(x) for x in content.split("\n")]))
        files = [(path, text)]
        if filler and self.rng.random() < 0.4:
            spec = f"test/{module}Spec.hs"
            body = [f"module {module}Spec (spec) where", "", "import Test.Hspec",
                    f"import {module}", "", "spec :: Spec",
                    f'spec = describe "{module}" $ do']  # fmt: skip
            body += [f'  it "{v} {n}" $ pending' for v, n in zip(_VERBS[:4], _NOUNS, strict=False)]
            files.append((spec, "\n".join(body)))
        tokens = sum(len(t) for _, t in files) // 4
        plural = "file" if len(files) == 1 else "files"
        result = f"Loaded {len(files)} {plural} into context (~{tokens} tokens)\n\n" + "\n\n".join(
            f"📄 {p}\n```haskell\n{t}\n```" for p, t in files
        )
        arguments = {"paths": [p for p, _ in files], "kind": "file"}
        self.s.call("load_context", arguments, result, filler=filler)

    def edit(self, path: str, old: str, new: str) -> None:
        arguments = {"file_path": path, "original": haskell_line(old),
                     "replacement": haskell_line(new)}  # fmt: skip
        self.s.call("replace_in_pending_file", arguments, f"Pending change: {path} (+1 -1)")

    def create(self, path: str, content: str) -> None:
        module = path.rsplit("/", 1)[-1].removesuffix(".hs")
        text = "\n".join(_haskell_file(module, content.split("\n"))) + "\n"
        result = f"Pending change: new file {path} (+{text.count(chr(10))} lines)"
        self.s.call("write_pending_file", {"file_path": path, "content": text}, result)

    def delete(self, path: str) -> None:
        self.s.call("remove_pending_file", {"file_path": path}, f"Pending change: {path} removed")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "test/fixtures/", 1)
        destination = destination.replace("testdata/", "test/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        rows = []
        for hit in hits:
            path, line, text = hit.split(":", 2)
            function, _, argument = text.strip().rstrip(")").partition("(")
            rows.append(f"{path}:{line}:   {lower_camel(function)} {argument}")
        result = f"{len(rows)} matches\n" + "\n".join(rows)
        self.s.call("context_grep", {"pattern": pattern, "dir": root}, result, filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        rows = [f"{p} ({self.rng.randint(80, 4000)} tokens)" for p in sorted(set(paths))]
        self.s.call("project_map", {"dir": root}, "\n".join(rows), filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        subtasks = [{"title": t, "status": SUBTASK_STATES[s]} for t, s in items]
        done = sum(s == "completed" for _, s in items)
        self.s.call("set_subtasks", {"subtasks": subtasks},
                    f"Subtasks: {done} of {len(items)} finished")  # fmt: skip

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            return (
                f"replay: dry run, nothing is sent\n"
                f"replay: 0 of {self.rng.randint(20, 60)} parked envelopes would be resent"
            )
        if k == 1:
            return "No hints"
        return "No errors or warnings could be found in the package."

    def _profile(self, target: str, why: str) -> list[str]:
        return [
            f"Build profile: -w {GHC} -O1",
            "In order, the following will be built (use -v for more details):",
            f" - {PACKAGE} ({target}) ({why})",
        ]

    def build_error(self, module: str) -> tuple[str, str, str]:
        self._broken = module
        name = camel(module)
        probe = "Variable not in scope: tenantId"
        call = haskell_line(f"{module}_send(batch)")
        column = call.index("tenantId") + 1
        output = "\n".join(
            [
                *self._profile("lib", f"file src/{name}.hs changed"),
                f"Preprocessing library for {PACKAGE}..",
                f"Building library for {PACKAGE}..",
                f"[ 7 of 14] Compiling {name:<16} ( src/{name}.hs, dist-newstyle/build/"
                f"x86_64-linux/{GHC}/{PACKAGE}/build/{name}.o )",
                "",
                f"src/{name}.hs:88:{column}: error: [GHC-88464]",
                f"    {probe} :: TenantId",
                "   |",
                f"88 | {call}",
                f"   | {' ' * (column - 1)}^^^^^^^^",
                f"Error: [Cabal-7125]\nFailed to build {PACKAGE}.",
            ]
        )
        return output, probe, BUILD

    def build_ok(self) -> str:
        name = camel(self._broken or "outbox")
        self._broken = None
        return "\n".join(
            [
                *self._profile("lib", f"file src/{name}.hs changed"),
                f"Preprocessing library for {PACKAGE}..",
                f"Building library for {PACKAGE}..",
                f"[ 7 of 14] Compiling {name:<16} ( src/{name}.hs, dist-newstyle/build/"
                f"x86_64-linux/{GHC}/{PACKAGE}/build/{name}.o )",
            ]
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        output = "\n".join(
            [
                "benchmarking flush/one batch",
                f"time                 {mean * 0.99:.2f} μs   ({mean * 0.97:.2f} μs .. "
                f"{mean * 1.02:.2f} μs)",
                "                     0.998 R²   (0.996 R² .. 0.999 R²)",
                f"mean                 {figure} μs   ({mean * 0.98:.2f} μs .. "
                f"{mean * 1.03:.2f} μs)",
                f"std dev              {mean * 0.05:.2f} μs   ({mean * 0.03:.2f} μs .. "
                f"{mean * 0.08:.2f} μs)",
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return "cabal test --test-show-details=direct"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} examples, {failed} failure{'' if failed == 1 else 's'}"

    def _specs(self, named: Sequence[str], total: int) -> list[tuple[str, list[str]]]:
        """(spec module, its examples) for every spec the suite runs, `total` examples in all:
        the modules of the `named` examples first, each holding them."""
        groups: dict[str, list[str]] = {}
        for example in named:
            group, description = example.split(" ", 1)
            groups.setdefault(group, [])
            if description not in groups[group]:
                groups[group].append(description)
        names = [f"{v} {n}" for v in _VERBS for n in _NOUNS]
        return filled_groups(groups, OTHER_SPECS, total, names)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # An earlier run's failures still run in a later one, where they pass.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        log = (f"{ROOT}/dist-newstyle/build/x86_64-linux/{GHC}/{PACKAGE}/t/{SUITE}/test/"
               f"{PACKAGE}-{SUITE}.log")  # fmt: skip
        lines = [
            *self._profile(f"test:{SUITE}", "first run"),
            f"Preprocessing test suite '{SUITE}' for {PACKAGE}..",
            f"Building test suite '{SUITE}' for {PACKAGE}..",
            "Running 1 test suites...",
            f"Test suite {SUITE}: RUNNING...",
            "",
        ]
        failures: list[str] = []
        for group, examples in self._specs(named, failed + passed):
            lines.append(group)
            for description in examples:
                bad = f"{group} {description}" in failing
                lines.append(f"  {description} [{'✘' if bad else '✔'}]")
                if bad:
                    key = next(k for k, v in EXAMPLES.items() if v[0] == description)
                    _, expected, got, at = EXAMPLES[key]
                    failures += [
                        f"  test/{group}Spec.hs:{at}:7: ",
                        f"  {len(failures) // 7 + 1}) {group} {description}",
                        f"       expected: {expected}",
                        f"        but got: {got}",
                        "",
                        f'  To rerun use: --match "/{group}/{description}/"',
                        "",
                    ]
        if failures:
            lines += ["", "Failures:", "", *failures]
        seconds = self.rng.randint(40, 400) / 10000
        lines += [f"Finished in {seconds:.4f} seconds", self.test_counts(failed, passed), ""]
        verdict = "PASS" if not failed else "FAIL"
        lines += [
            f"Test suite {SUITE}: {verdict}",
            "Test suite logged to:",
            log,
            f"{0 if failed else 1} of 1 test suites ({0 if failed else 1} of 1 test cases) passed.",
        ]
        if failed:
            lines.append(f"Error: [Cabal-7125]\nTests failed for test:{SUITE} from {PACKAGE}.")
        return "\n".join(lines)
