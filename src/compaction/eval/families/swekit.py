"""A SWE-kit-style family, telling the story's second-thoughts variant: a Haskell service (GHC
9.8 with cabal-install 3.10, hspec through `cabal test`, hlint, ormolu, a criterion benchmark
for the variant's figure) worked on by an agent built on Composio's SWE-kit tool sets
(ComposioHQ/composio, `python/composio/tools/local/`): an OpenAI function-calling model in a
plain chat loop, as Composio's OpenAI examples run it (`toolset.get_tools(apps=[App.FILETOOL,
App.SHELLTOOL])`, each call run with `toolset.execute_tool_call` and its answer sent back as a
`tool` message holding `json.dumps` of it), inside a Docker workspace where the repository is
cloned under `/home/user`. The user reports the issue and steers; the assistant answers in
short plain sentences and keeps its work items in its own messages.

Where the names come from: composio commit 15fdea111 (30 June 2025, the last one holding the
local tools), `python/composio/tools/local/filetool/actions/*.py` and
`shelltool/shell_exec/actions/*.py`; the action names are the app name and the action class
in snake case (`FILETOOL_OPEN_FILE`, `SHELLTOOL_EXEC_COMMAND`), as `python/swe/agent/agent.py`
requests them.
- `FILETOOL_OPEN_FILE` {file_path, line_number?, window_size?}: `OpenFileResponse`
  {message "File opened successfully. 500 lines after the cursor displayed.", lines}, the
  lines as `File.format_text` prints them: "[File: <abs path>] (N lines total)]", "(K line
  above)", `N:text` with the number left-aligned to the widest, "(M line below)".
- `FILETOOL_EDIT_FILE` {file_path, text, start_line, end_line}: replaces lines start..end;
  `EditFileResponse` {old_text, updated_text}, `format_text` windows of the file before and
  after (`File.edit`: from start-4 to end+4 before, to start+len(text)+5 after).
- `FILETOOL_CREATE_FILE` {path, is_directory?}: `CreateFileResponse` {path}, absolute; the
  content follows with `FILETOOL_WRITE` {file_path, text}, whose `WriteResponse` holds only
  `error` "" and the working directory.
- `FILETOOL_SEARCH_WORD` {word, pattern?}: `SearchWordResponse` {results: path → [[line,
  stripped text]]}; `FILETOOL_FIND_FILE` {pattern, include?}: {results: sorted relative
  paths}; `FILETOOL_LIST_FILES` {} lists only the working directory ({files: [[name,
  "file"|"dir"]]}), so the agent moves there with `FILETOOL_CHANGE_WORKING_DIRECTORY`
  {path} first and back after.
- `FILETOOL_RENAME_FILE` {old_file_path, new_file_path}: {message "File renamed
  successfully."} (this action alone does not report the working directory).
- `FILETOOL_GIT_PATCH` {new_file_paths}: `git add` of those, `git add -u`, then the
  `git diff --cached` as {patch}.
- `SHELLTOOL_CREATE_SHELL` {}: {shell_id}, six letters and digits (`env/id.py`);
  `SHELLTOOL_EXEC_COMMAND` {cmd, shell_id?}: `ShellExecResponse` {stdout, stderr, exit_code,
  current_shell_pwd "Currently in <dir>"}; the shell is one bash session, so a `cd` holds.
- Every response model starts with the base fields `error` and `current_working_directory`
  (`actions/base_action.py`, set by `include_cwd`), and `LocalToolMixin.execute` wraps it as
  {"data": …, "error": null, "successful": true} (`composio/tools/base/local.py`).
- Every FILETOOL and SHELLTOOL call carries `thought`: SWE-kit's agent adds that required
  argument to their schemas and pops it before the action runs (`add_thought_to_request`,
  `pop_thought_from_request` in `python/swe/agent/agent.py`).
The system message opens with SWE-kit's software-engineer prompt (`python/swe/agent/
prompts.py`) and keeps its editing rules; the session ends, as that prompt asks, with
`FILETOOL_GIT_PATCH` and "PATCH COMPLETED". Composio has no to-do tool and no delete tool:
the assistant keeps its work items in its own messages (a "Work items:" list of DONE / NOW /
TODO / DROP lines, this family's own layout), and deletes go through `git rm`. The
CODE_ANALYSIS_TOOL actions index Python files only (`codeanalysis/actions/create_codemap.py`),
so on this Haskell repository the agent does without them.

Tool outputs follow the real tools, in the workspace's C.UTF-8 locale: cabal-install 3.10's
`Build profile` / `In order, the following will be built` / `[ 9 of 24] Compiling` lines on
stdout and "Error: cabal: Failed to build …" on stderr; GHC 9.8's `error: [GHC-83865]` with
"• Couldn't match expected type" / "• Probable cause: ‘f’ is applied to too few arguments"
and its caret display; hspec's `checks` formatter (`[✔]` / `[✘]` after each example), its
`Failures:` block ("  1) Module.group, requirement", `expected:` / ` but got:`, "To rerun
use: --match"), "Randomized with seed N", "Finished in 0.0312 seconds" and "N examples, F
failures" inside `cabal test`'s "Test suite …: RUNNING..." / "FAIL" frame; hlint's hint
blocks and count; criterion's `benchmarking` block (its `secs` formatting, four significant
figures) and its `--csv` report, from which the agent reads the mean to two decimals.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from string import ascii_letters, digits
from typing import Any, ClassVar

from compaction.eval.families._base import (
    STORY_LINE,
    Session,
    Voice,
    camel,
    code_file,
    filled_groups,
    hexid,
    lower_camel,
)

REPO = "tollgate"
ROOT = f"/home/user/{REPO}"
PACKAGE = f"{REPO}-0.3.1.0"
GHC = "ghc-9.8.4"
SUITE = f"{REPO}-spec"
BUILD_DIR = f"{ROOT}/dist-newstyle/build/x86_64-linux/{GHC}/{PACKAGE}"
#: The build whose type error the story fixes, the test run and the variant's benchmark.
BUILD = "cabal build all"
TESTS_RUN = f"cabal test {SUITE} --test-show-details=direct"
BENCH_CSV = "bench-drain.csv"
BENCH = f"cabal bench {REPO}-bench --benchmark-options='--match prefix drain/ --csv {BENCH_CSV}'"
BENCH_READ = (
    "awk -F, 'NR==2 {printf \"%s mean %.2f us\\n\", $1, $2*1e6}' " + BENCH_CSV
)  # fmt: skip
OPENED = "File opened successfully. 500 lines after the cursor displayed."
#: How the assistant's work-item lists open, and the word each status takes in them.
PLAN_HEADING = "Work items:"
PLAN_WORDS = {"completed": "DONE", "in_progress": "NOW", "pending": "TODO", "cancelled": "DROP"}
#: The failing examples: (describe block, requirement, expected, got, line of the expectation).
EXAMPLES = {
    "retries": ("retryDelivery", "gives up after the third failed attempt", "3", "2", 34),
    "orders_batches": ("drainBatches", "drains batches in the order they were queued",
                       "[1,2,3]", "[2,1,3]", 58),
    "handles_empty": ("flushQueue", "sends nothing when the queue is empty", "0", "1", 71),
}  # fmt: skip
#: Spec modules that run beside the ones the story's failures live in, and their examples.
OTHER_SPECS = ("Tollgate.Envelope", "Tollgate.Route", "Tollgate.Signature")
_BLOCKS = ("decodeEnvelope", "encodeEnvelope", "verifyHmac", "parseRoute", "expireLease")
_REQUIREMENTS = (
    "accepts a well-formed body",
    "rejects a truncated body",
    "round-trips through JSON",
    "keeps unknown headers",
    "fails on a stale timestamp",
    "is stable under reordering",
    "ignores trailing whitespace",
)
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
#: Marks where a command's stdout ends and its stderr begins, in the outputs built here.
STDERR = "\n\x00stderr\x00\n"


def hs_line(line: str) -> str:
    """A story line as the Haskell it stands for: a limit is a top-level binding, the send
    before the fix leaves out the tenant its function now takes, the fix passes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    name = lower_camel(module)
    if limit.startswith("limit"):
        if value.startswith("settings."):
            value = f"Config.{name}Limit cfg"
        return f"{name}Limit = {value}"
    return f"    {name}Send batch{' (batchTenant batch)' if fixed else ''}"


def module_of(path: str) -> str:
    """`src/Tollgate/Outbox.hs` → `Tollgate.Outbox`."""
    return path.removeprefix("src/").removesuffix(".hs").replace("/", ".")


def format_text(path: str, lines: dict[int, str], total: int) -> str:
    """Lines of a file as Composio's `File.format_text` prints them."""
    if not lines:
        return ""
    numbers = list(lines)
    width = len(str(max(numbers)))
    body = "\n".join(f"{n:<{width}}:{text.rstrip()}" for n, text in lines.items())
    return (
        f"[File: {ROOT}/{path}] ({total} lines total)]\n({numbers[0] - 1} line above)\n"
        f"{body}\n({total - numbers[-1]} line below)\n"
    )


def answer(data: dict[str, Any]) -> str:
    """A Composio action's answer as the loop sends it back: `json.dumps` of the wrapped
    response (ASCII-escaped, as `json.dumps` does by default)."""
    return json.dumps({"data": data, "error": None, "successful": True})


def criterion_time(us: float) -> str:
    """A time of microseconds as criterion's `secs` prints it (four significant figures)."""
    if us >= 1000:
        return f"{us / 1000:.3f} ms" if us < 10_000 else f"{us / 1000:.2f} ms"
    if us >= 100:
        return f"{us:.1f} μs"
    if us >= 10:
        return f"{us:.2f} μs"
    return f"{us:.3f} μs"


class SweKitVoice(Voice):
    family = "swekit-style"
    system_prompt = (
        "You are an autonomous software engineer tasked with solving coding issues. Your role "
        "is to understand the issue, inspect the code, make the change and verify it.\n"
        "A workspace is initialized for you, and you will be working on workspace. The git "
        f"repo is cloned in the path {ROOT} and you need to work in this directory.\n"
        "MAKE SURE THE EXISTING FUNCTIONALITY ISN'T BROKEN BY SOLVING THE ISSUE, THAT IS, THE "
        "SOLUTION SHOULD BE MINIMAL AND SHOULD NOT BREAK THE EXISTING FUNCTIONALITY.\n\n"
        "Tools: the FILETOOL actions open, scroll, search, edit, create and write files; "
        "SHELLTOOL_EXEC_COMMAND runs one shell command at a time (no interactive commands "
        "such as ghci).\n"
        "- Open the file at the edit location using FILETOOL_OPEN_FILE action to read the "
        "code you are going to edit.\n"
        "- Pay close attention to line numbers, indentation, and syntax. Provide the correct "
        'input format, with "start_line", "end_line", "file_path" and "text" as keys.\n'
        "- Provide a short and concise thought regarding the next steps whenever you call a "
        "tool, based on the output of the tool.\n"
        "- When the issue is fixed, generate the patch with FILETOOL_GIT_PATCH and respond "
        "with PATCH COMPLETED.\n\n"
        f"The project: a Haskell service built with cabal (GHC 9.8); `{BUILD}` to build, "
        f"`{TESTS_RUN}` for the hspec suite, hlint and ormolu must stay clean, benchmarks "
        "use criterion."
    )
    src = "src"
    ext = "hs"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "cabal run tollgate-admin -- queue-stats --queue {module}",
        "ormolu --mode check $(git ls-files '*.hs')",
        "hlint src test",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("redelivery attempt ceiling", "4 retries", "19 retries", "7 retries"),
        ("partner connection pool", "6 sockets", "72 sockets", "20 sockets"),
        ("GHC RTS allocation area", "-A4m", "-A128m", "-A32m"),
        ("parked queue bound", "256 envelopes", "9000 envelopes", "2048 envelopes"),
        ("drain tick", "250 ms", "4000 ms", "1300 ms"),
        ("Warp request timeout", "15 seconds", "180 seconds", "65 seconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an IORef holding the parked envelopes",
         "a TBQueue drained by one worker thread",
         "the IORef forgets every parked envelope when the process restarts",
         "a SQLite outbox table written through sqlite-simple",
         "the TBQueue lives in memory too and blocks every writer once it fills"),
        ("one forkIO thread per parked envelope", "a fixed pool of eight async workers",
         "thousands of threads would open thousands of sockets to the partner at once",
         "a drain loop per tenant supervised with the ki library",
         "one slow tenant fills the fixed pool and every other tenant waits behind it"),
        ("a crontab entry running the tollgate-drain executable",
         "a Kubernetes CronJob calling the admin drain endpoint",
         "the crontab fires on every replica and sends each envelope twice",
         "a drain thread inside the server with its schedule from the retry package",
         "the CronJob stops running while the cluster is being upgraded"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Bug report from ops: envelopes that {module} parks while a partner is unreachable "
            "are never retried once the partner comes back. Please make tollgate redeliver "
            "them in enqueue order. {other} shares the drain code and has the same problem.",
            "Issue: after a partner outage the parked envelopes of {module} sit in the outbox "
            "forever. Fix the redelivery so they drain oldest first once the partner answers "
            "again; {other} is affected as well.",
        ],
        "set_value": [
            "For a first cut, the {key} is {value}.",
            "Configure the {key} as {value} for now.",
        ],
        "ack": [
            "Understood, every change from here respects that.",
            "Got it. I'll hold to it for the rest of the fix.",
            "Acknowledged; the remaining work follows that.",
        ],
        "constraint": [
            "A hard requirement: {rule}.",
            "Please note before you go on: {rule}.",
            "Non-negotiable for this fix: {rule}.",
        ],
        "plan": [
            "Approach: {plan}, so that {module} gets its parked envelopes back after a restart.",
            "I'll build the fix on {plan}; that way {module} never loses what it parked.",
        ],
        "change_value": [
            "On reflection the {key} of {old} is too tight for the slower partners. Use {new}.",
            "Switch the {key} from {old} to {new}, please.",
            "SRE reviewed the {key}: {old} pages them at night. Make it {new}.",
        ],
        "change_again": [
            "One more change to the {key}: {old} overshoots what the partners allow. Settle "
            "on {new}.",
            "The soak test didn't like a {key} of {old}. Final value: {new}.",
            "Bring the {key} down to {new}; {old} was fine locally but not under staging load.",
        ],
        "ack_value": [
            "The {key} is now {new} in `config/tollgate.yaml`.",
            "Updated `config/tollgate.yaml`: {key} set to {new}.",
        ],
        "reverse": [
            "Change of approach: {old} is out because {why}. Moving to {new}.",
            "Dropping {old}, since {why}. The fix will use {new}.",
        ],
        "reverse_again": [
            "No good either: with {old}, {why}. Final approach: {new}.",
            "Revising once more: {why}, so {old} goes as well. Using {new}.",
        ],
        "question": [
            "Which commit introduced the regression? Keep the hash somewhere you'll remember, "
            "the incident ticket needs it.",
            "Track down the commit that broke redelivery, please. I need its hash for the "
            "incident ticket.",
        ],
        "commit": [
            "build: raise the base upper bound to < 4.20",
            "test: regenerate the golden envelopes",
            "docs: document the queue-stats subcommand",
            "ci: cache ~/.cabal/store between runs",
        ],
        "answer": [
            "The regression is {sha}: it moved the relay onto the shared http-client Manager "
            "and the retry wrapper was lost in the move.",
            "{sha} did it. Switching to the shared http-client Manager dropped the retry policy.",
        ],
        "measure_question": [
            "Benchmark draining one batch with the criterion suite and report the mean. I'm "
            "quoting it in the design review, so hang on to it.",
            "What does a single drain batch cost? Run the criterion benchmark and keep the mean "
            "for the design review.",
        ],
        "measure_answer": [
            "criterion puts the mean for draining one batch at {figure} μs.",
            "Mean time to drain one batch: {figure} μs (criterion, read from its CSV report).",
        ],
        "last": [
            "Status: {test} is still failing; in progress: {todo}. Everything else in the "
            "work items is done or dropped.",
            "Where things stand: one failing example remains, {test}; the item under way is "
            "{todo}. The other work items are complete or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last read or written
        self._shell = ""  # the shell session's id, once created
        self._hunks: dict[str, list[tuple[int, list[str]]]] = {}  # file → (first line, body)
        self._created: list[str] = []
        self._deleted: list[str] = []
        self._moved: list[tuple[str, str]] = []
        self._failed_before: list[str] = []
        self._tested = False  # whether the suite ran before (cabal then names another reason)
        self._broken = ""  # the module the last failed build named

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"Tollgate/{camel(stem)}.hs"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        block, requirement, *_ = EXAMPLES[name.removeprefix(f"test_{module}_")]
        return f"Tollgate.{camel(module)}.{block}, {requirement}"

    # --- calls ----------------------------------------------------------------------------

    def _call(self, name: str, arguments: dict[str, Any], data: dict[str, Any], thought: str,
              *, filler: bool = False) -> None:  # fmt: skip
        """One action call, with SWE-kit's `thought` argument, and its wrapped answer."""
        self.s.call(name, {**arguments, "thought": thought}, answer(data), filler=filler)

    def _file_data(self, **fields: Any) -> dict[str, Any]:
        return {"error": None, "current_working_directory": ROOT, **fields}

    # --- Haskell source -------------------------------------------------------------------

    def _render(self, path: str, content: str) -> list[str]:
        body = [hs_line(line) for line in content.split("\n")]
        names = sorted({line.split(" ", 1)[0] for line in body
                        if line[:1].islower() and " :: " in line})[:4]  # fmt: skip
        exports = ", ".join(names)
        return [
            "{-# LANGUAGE OverloadedStrings #-}",
            f"module {module_of(path)} ({exports}) where",
            "",
            "import Data.Maybe (fromMaybe)",
            "import Data.Text (Text)",
            "import qualified Tollgate.Config as Config",
            "",
            *body,
        ]

    # --- tools ----------------------------------------------------------------------------

    def _open_shell(self) -> None:
        if self._shell:
            return
        # `env/id.py`'s `random_string`: six of ascii_letters and digits.
        self._shell = "".join(self.rng.choice(ascii_letters + digits) for _ in range(6))
        self._call("SHELLTOOL_CREATE_SHELL", {}, {"shell_id": self._shell},
                   "I need a shell session for cabal, git and the linters.")  # fmt: skip
        self._exec(f"cd {ROOT}", "", 0, "Moving the shell into the repository root.")

    def _exec(self, cmd: str, output: str, exit_code: int, thought: str, *,
              filler: bool = False) -> None:  # fmt: skip
        stdout, _, stderr = output.partition(STDERR)
        if stdout and not stdout.endswith("\n"):
            stdout += "\n"
        if stderr and not stderr.endswith("\n"):
            stderr += "\n"
        data = {"stdout": stdout, "stderr": stderr, "exit_code": exit_code,
                "current_shell_pwd": f"Currently in {ROOT}"}  # fmt: skip
        self._call("SHELLTOOL_EXEC_COMMAND", {"cmd": cmd, "shell_id": self._shell}, data, thought,
                   filler=filler)  # fmt: skip

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        self._open_shell()
        if command == BENCH:
            self._bench(output)
            return
        command = command.replace("| grep legacy", "| grep -i legacy")
        if command.startswith("hlint ") and "No hints" not in output:
            exit_code = 1  # hlint fails the run when it has hints
        if filler:
            thought = self.pick(["Checking the recent log lines for anything related.",
                                 "Looking at the service log around the failures."])  # fmt: skip
        elif command.startswith("cabal test"):
            thought = "Running the hspec suite to see which examples fail."
        elif command.startswith("cabal build"):
            thought = "Building everything to check that it compiles."
        elif command.startswith("git log"):
            thought = "The history of this file should show when the behaviour changed."
        else:
            thought = self.pick(["Running this to check the current state.",
                                 "Let me run this and read the output."])  # fmt: skip
        self._exec(command, output, exit_code, thought, filler=filler)

    def _bench(self, output: str) -> None:
        """criterion prints four significant figures; the agent reads the mean off the CSV
        report the run wrote."""
        run, _, mean = output.partition(STDERR)
        self._exec(BENCH, run, 0, "Running the criterion benchmark for one drain batch.")
        self._exec(BENCH_READ, mean, 0,
                   "criterion rounds the mean; the CSV report has it in full.")  # fmt: skip

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        shown = format_text(path, dict(enumerate(lines, start=1)), len(lines))
        thought = (
            f"Reading {path} for context on the surrounding code."
            if filler
            else self.pick([f"Opening {path} to see how it handles this.",
                            f"I need the contents of {path} before changing anything."])
        )  # fmt: skip
        data = self._file_data(message=OPENED, lines=shown)
        self._call("FILETOOL_OPEN_FILE", {"file_path": path}, data, thought, filler=filler)

    def _locate(self, path: str, needle: str) -> None:
        """The compiler named two lines of a file not read yet: find them, then open the file
        just above them."""
        send = f"{lower_camel(module_of(path).split('.')[-1])}Send"
        lines = [f"module {module_of(path)} (drainParked, {send}) where", ""]
        lines += code_file(self.rng, "hs", 140).split("\n")[:138]
        for at in (88, 93):
            lines[at - 1] = needle
        self._seen[path] = lines
        results = {path: [[88, needle.strip()], [93, needle.strip()]]}
        self._call("FILETOOL_SEARCH_WORD", {"word": needle.strip(), "pattern": path},
                   {"error": "", "current_working_directory": ROOT, "results": results,
                    "message": ""},
                   "Finding the call sites the compiler complains about.")  # fmt: skip
        start = 84
        shown = format_text(path, {n: lines[n - 1] for n in range(start + 1, len(lines) + 1)},
                            len(lines))  # fmt: skip
        self._call("FILETOOL_OPEN_FILE", {"file_path": path, "line_number": start},
                   self._file_data(message=OPENED, lines=shown),
                   "Opening the file just above those lines to see the do block.")  # fmt: skip

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = hs_line(old), hs_line(new)
        if before not in self._seen.get(path, []):
            self._locate(path, before)
        at = [k + 1 for k, line in enumerate(self._seen[path]) if line == before]
        for n in at:
            original = list(self._seen[path])
            self._seen[path][n - 1] = after
            lines = self._seen[path]
            total = len(lines)
            old_window = {x + 1: original[x] for x in range(max(0, n - 5), min(total, n + 4))}
            new_window = {x + 1: lines[x] for x in range(max(0, n - 5), min(total, n + 6))}
            data = self._file_data(old_text=format_text(path, old_window, total),
                                   updated_text=format_text(path, new_window, total))  # fmt: skip
            arguments = {"file_path": path, "text": after, "start_line": n, "end_line": n}
            self._call("FILETOOL_EDIT_FILE", arguments, data,
                       f"Replacing line {n} of {path} with the corrected version.")  # fmt: skip
        # The hunk `git diff` will show for these lines: three lines of context around them.
        lines = self._seen[path]
        first, last = max(1, min(at) - 3), min(len(lines), max(at) + 3)
        body = []
        for n in range(first, last + 1):
            body += [f"-{before}", f"+{after}"] if n in at else [f" {lines[n - 1]}"]
        self._hunks.setdefault(path, []).append((first, body))

    def create(self, path: str, content: str) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        self._created.append(path)
        self._call("FILETOOL_CREATE_FILE", {"path": path},
                   self._file_data(path=f"{ROOT}/{path}"),
                   f"Creating {path} for the new module.")  # fmt: skip
        self._call("FILETOOL_WRITE", {"file_path": path, "text": "\n".join(lines) + "\n"},
                   {"error": "", "current_working_directory": ROOT},
                   f"Writing the contents of {path}.")  # fmt: skip

    def delete(self, path: str) -> None:
        self._open_shell()
        self._deleted.append(path)
        self._exec(f"git rm {path}", f"rm '{path}'", 0,
                   "Nothing imports the legacy module any more, so it can go.")  # fmt: skip

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "test/golden/", 1)
        destination = destination.replace("testdata/", "test/golden/", 1)
        folder = destination.rsplit("/", 1)[0]
        self._call("FILETOOL_CREATE_FILE", {"path": folder, "is_directory": True},
                   self._file_data(path=f"{ROOT}/{folder}"),
                   "The golden file gets a folder of its own.")  # fmt: skip
        self._call("FILETOOL_RENAME_FILE",
                   {"old_file_path": source, "new_file_path": destination},
                   {"error": "", "current_working_directory": "",
                    "message": "File renamed successfully."},
                   "Moving the golden envelope file into that folder.")  # fmt: skip
        self._moved.append((source, destination))

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        results: dict[str, list[list[Any]]] = {}
        for hit in hits:
            path, line, text = hit.split(":", 2)
            function, _, argument = text.strip().rstrip(")").partition("(")
            code = f"{lower_camel(function)} {argument}"
            results.setdefault(path, []).append([int(line), code])
        arguments = {"word": pattern, "pattern": f"{root}/**/*.hs"}
        data = {"error": "", "current_working_directory": ROOT, "results": results,
                "message": ""}  # fmt: skip
        self._call("FILETOOL_SEARCH_WORD", arguments, data,
                   f"Searching for {pattern} to see where it is used.", filler=filler)  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        folder = f"{root}/Tollgate"
        names = sorted({p.removeprefix(f"{folder}/") for p in paths})
        if self.rng.random() < 0.6:
            found = [f"{folder}/{n}" for n in names]
            data = {"error": "", "current_working_directory": ROOT, "results": found,
                    "message": ""}  # fmt: skip
            self._call("FILETOOL_FIND_FILE", {"pattern": "*.hs", "include": [folder]}, data,
                       f"Listing the modules under {folder}.", filler=filler)  # fmt: skip
            return
        # FILETOOL_LIST_FILES lists the working directory only: go there, list, come back.
        here = f"{ROOT}/{folder}"
        self._call("FILETOOL_CHANGE_WORKING_DIRECTORY", {"path": folder},
                   {"error": None, "current_working_directory": here},
                   f"Moving into {folder} to list it.", filler=filler)  # fmt: skip
        order = list(names)
        self.rng.shuffle(order)  # `iterdir` order, not sorted
        self._call("FILETOOL_LIST_FILES", {},
                   {"error": "", "current_working_directory": here,
                    "files": [[n, "file"] for n in order]},
                   "Listing the modules here.", filler=filler)  # fmt: skip
        self._call("FILETOOL_CHANGE_WORKING_DIRECTORY", {"path": ROOT},
                   {"error": None, "current_working_directory": ROOT},
                   "Back to the repository root.", filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        rows = [f"- {PLAN_WORDS[status]:<4} {text}" for text, status in items]
        self.say(f"{PLAN_HEADING}\n" + "\n".join(rows))

    def finish(self, text: str) -> None:
        self._call("FILETOOL_GIT_PATCH",
                   {"new_file_paths": [*self._created, *(new for _, new in self._moved)]},
                   self._file_data(patch=self._patch()),
                   "Generating the final patch with every change.")  # fmt: skip
        self.say(f"{text}\n\nPATCH COMPLETED")

    def _patch(self) -> str:
        """`git diff --cached` of the session's changes: edits with three lines of context,
        new files, the deleted module and the moved fixture."""
        out: list[str] = []
        for path, hunks in self._hunks.items():
            out += [f"diff --git a/{path} b/{path}",
                    f"index {hexid(self.rng)}..{hexid(self.rng)} 100644",
                    f"--- a/{path}", f"+++ b/{path}"]  # fmt: skip
            for first, body in sorted(hunks):
                count = sum(not line.startswith("+") for line in body)
                out += [f"@@ -{first},{count} +{first},{count} @@", *body]
        for path in self._created:
            lines = self._seen[path]
            out += [f"diff --git a/{path} b/{path}", "new file mode 100644",
                    f"index 0000000..{hexid(self.rng)}", "--- /dev/null", f"+++ b/{path}",
                    f"@@ -0,0 +1,{len(lines)} @@", *(f"+{line}" for line in lines)]  # fmt: skip
        for path in self._deleted:
            lines = [f"module {module_of(path)} where", "",
                     *code_file(self.rng, "hs", 10).split("\n")]  # fmt: skip
            out += [f"diff --git a/{path} b/{path}", "deleted file mode 100644",
                    f"index {hexid(self.rng)}..0000000", f"--- a/{path}", "+++ /dev/null",
                    f"@@ -1,{len(lines)} +0,0 @@", *(f"-{line}" for line in lines)]  # fmt: skip
        for source, destination in self._moved:
            out += [f"diff --git a/{source} b/{destination}", "similarity index 100%",
                    f"rename from {source}", f"rename to {destination}"]  # fmt: skip
        return "\n".join(out) + "\n"

    # --- what the commands print ----------------------------------------------------------

    def _profile(self, component: str, reason: str) -> list[str]:
        return [
            "Build profile: -w ghc-9.8.4 -O1",
            "In order, the following will be built (use -v for more details):",
            f" - {PACKAGE} ({component}) ({reason})",
        ]

    def _compiling(self, k: int, of: int, module: str) -> str:
        source = f"src/{module.replace('.', '/')}.hs"
        obj = f"{BUILD_DIR}/build/{module.replace('.', '/')}"
        return f"[{k:>2} of {of}] Compiling {module:<18} ( {source}, {obj}.o, {obj}.dyn_o )"

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(18, 70)
            oldest = f"2026-03-{self.rng.randint(2, 9):02d}T0{self.rng.randint(1, 9)}:14:07Z"
            return "\n".join(
                [
                    *self._profile("exe:tollgate-admin", "configuration changed"),
                    f"Configuring executable 'tollgate-admin' for {PACKAGE}..",
                    f"Preprocessing executable 'tollgate-admin' for {PACKAGE}..",
                    f"Building executable 'tollgate-admin' for {PACKAGE}..",
                    "tenant        parked  oldest                attempts",
                    f"acme          {parked:<7} {oldest}  0",
                    f"northwind     {parked // 3:<7} {oldest}  0",
                    f"total parked: {parked + parked // 3}, redeliverable now: 0",
                ]
            )
        if k == 1:
            return ""
        return "\n".join(
            [
                "src/Tollgate/Metrics.hs:41:15-52: Suggestion: Use <$>",
                "Found:",
                "  fmap renderGauge (readIORef gauges)",
                "Perhaps:",
                "  renderGauge <$> readIORef gauges",
                "",
                "test/Tollgate/RouteSpec.hs:27:9-40: Warning: Redundant bracket",
                "Found:",
                "  (parseRoute input)",
                "Perhaps:",
                "  parseRoute input",
                "",
                "2 hints",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        path = f"src/{self.file_name(module)}"
        self._broken = path
        name = module_of(path)
        call = hs_line(f"{module}_send(batch)")
        function = f"{lower_camel(module)}Send"
        column = len(call) - len(call.lstrip()) + 1
        stdout = [
            *self._profile("lib", f"file {path} changed"),
            f"Preprocessing library for {PACKAGE}..",
            f"Building library for {PACKAGE}..",
            self._compiling(9, 24, name),
        ]
        stderr = []
        for at in (88, 93):
            stderr += [
                "",
                f"{path}:{at}:{column}: error: [GHC-83865]",
                "    • Couldn't match expected type: IO ()",
                "                  with actual type: TenantId -> IO ()",
                f"    • Probable cause: ‘{function}’ is applied to too few arguments",
                f"      In a stmt of a 'do' block: {call.strip()}",
                "      In an equation for ‘drainParked’:",
                "   |",
                f"{at} | {call}",
                f"   | {' ' * (column - 1)}{'^' * len(call.strip())}",
            ]
        stderr.append(f"Error: cabal: Failed to build {PACKAGE}.")
        output = "\n".join(stdout) + STDERR + "\n".join(stderr)
        return output, "is applied to too few arguments", BUILD

    def build_ok(self) -> str:
        modules = ("Tollgate.Outbox.Drain", "Tollgate.Relay", "Tollgate.Server")
        return "\n".join(
            [
                *self._profile("lib", f"file {self._broken} changed"),
                f"Preprocessing library for {PACKAGE}..",
                f"Building library for {PACKAGE}..",
                *(self._compiling(k, 24, m) for k, m in enumerate(modules, start=9)),
            ]
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        ols = mean * self.rng.randint(97, 100) / 100
        dev = mean * self.rng.randint(15, 40) / 1000
        run = "\n".join(
            [
                *self._profile("bench:tollgate-bench", "first run"),
                f"Preprocessing benchmark '{REPO}-bench' for {PACKAGE}..",
                f"Building benchmark '{REPO}-bench' for {PACKAGE}..",
                "Running 1 benchmarks...",
                f"Benchmark {REPO}-bench: RUNNING...",
                "benchmarking drain/500",
                f"time                 {criterion_time(ols)}   ({criterion_time(ols * 0.99)} .. "
                f"{criterion_time(ols * 1.012)})",
                "                     0.999 R²   (0.998 R² .. 1.000 R²)",
                f"mean                 {criterion_time(mean)}   ({criterion_time(mean * 0.992)}"
                f" .. {criterion_time(mean * 1.009)})",
                f"std dev              {criterion_time(dev)}   ({criterion_time(dev * 0.74)} .. "
                f"{criterion_time(dev * 1.38)})",
                f"variance introduced by outliers: {self.rng.randint(10, 19)}% "
                "(moderately inflated)",
                "",
                f"Benchmark {REPO}-bench: FINISH",
            ]
        )
        return f"{run}{STDERR}drain/500 mean {figure} us", BENCH

    def test_command(self) -> str:
        return TESTS_RUN

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} examples, {failed} failure{'' if failed == 1 else 's'}"

    def _specs(self, named: Sequence[str], total: int) -> list[tuple[str, list[str]]]:
        """Spec modules with their `block/requirement` examples: the story's named ones
        first, then the others filled in until `total` examples run."""
        groups: dict[str, list[str]] = {}
        for test in named:
            path, requirement = test.split(", ", 1)
            module, block = path.rsplit(".", 1)
            groups.setdefault(module, []).append(f"{block}/{requirement}")
        names = [f"{b}/{r}" for b in _BLOCKS for r in _REQUIREMENTS]
        filled = filled_groups(groups, OTHER_SPECS, total, names)
        # hspec runs a module's examples describe block by describe block.
        blocks = [[e.split("/", 1)[0] for e in examples] for _, examples in filled]

        # hspec-discover runs the spec modules in alphabetical order.
        def by_block(order: list[str]) -> Callable[[str], int]:
            return lambda example: order.index(example.split("/", 1)[0])

        pairs = zip(filled, blocks, strict=True)
        return sorted((module, sorted(examples, key=by_block(order)))
                      for (module, examples), order in pairs)  # fmt: skip

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        self._tested, tested = True, self._tested
        log = f"{BUILD_DIR}/t/{SUITE}/test/{PACKAGE}-{SUITE}.log"
        lines = [
            *self._profile(f"test:{SUITE}", "dependency rebuilt" if tested else "first run"),
            f"Preprocessing test suite '{SUITE}' for {PACKAGE}..",
            f"Building test suite '{SUITE}' for {PACKAGE}..",
            "Running 1 test suites...",
            f"Test suite {SUITE}: RUNNING...",
            "",
        ]
        failures: list[str] = []
        for module, examples in self._specs(named, failed + passed):
            lines.append(module)
            block = ""
            for example in examples:
                this_block, requirement = example.split("/", 1)
                if this_block != block:
                    block = this_block
                    lines.append(f"  {block}")
                test = f"{module}.{block}, {requirement}"
                bad = test in failing
                lines.append(f"    {requirement} [{'✘' if bad else '✔'}]")
                if not bad:
                    continue
                key = next(k for k, v in EXAMPLES.items() if v[1] == requirement)
                _, _, expected, got, at = EXAMPLES[key]
                spec = f"test/{module.replace('.', '/')}Spec.hs"
                failures += [
                    f"  {spec}:{at}:7: ",
                    f"  {len(failures) // 7 + 1}) {test}",
                    f"       expected: {expected}",
                    f"        but got: {got}",
                    "",
                    f'  To rerun use: --match "/{module}/{block}/{requirement}/"',
                    "",
                ]
        lines += ["", "Failures:", "", *failures] if failures else [""]
        if failures:
            lines += [f"Randomized with seed {self.rng.randint(100_000_000, 999_999_999)}", ""]
        lines += [
            f"Finished in 0.{self.rng.randint(100, 999)}{self.rng.randint(0, 9)} seconds",
            self.test_counts(failed, passed),
            "",
            f"Test suite {SUITE}: {'FAIL' if failed else 'PASS'}",
            "Test suite logged to:",
            log,
            f"{0 if failed else 1} of 1 test suites ({0 if failed else 1} of 1 test cases) passed.",
        ]
        output = "\n".join(lines)
        if failed:
            output += f"{STDERR}Error: cabal: Tests failed for test:{SUITE} from {PACKAGE}."
        return output
