"""An AutoGen-style family, telling the story's second-thoughts variant: an Elm 0.19 web app
(`elm make`, `elm-test`, `elm-review`, `elm-format`, an elm-explorations/benchmark run for
the variant's figure) worked on through Microsoft AutoGen's classic two-agent coding setup,
recorded as the OpenAI chat the assistant agent sends its model.

Where the shape comes from (the microsoft/autogen sources, 0.2 line):
- `AssistantAgent` with its `DEFAULT_SYSTEM_MESSAGE` ("You are a helpful AI assistant. Solve
  tasks using your coding and language skills. …", the `# filename: <filename>` convention,
  'Reply "TERMINATE" in the end when everything is done.'), here followed by the project's
  own lines, as users extend it; a `UserProxyAgent` (`human_input_mode="TERMINATE"`) whose
  `code_execution_config` holds a `LocalCommandLineCodeExecutor`.
- There are no provider tool calls. The assistant writes the code it wants run in markdown
  code blocks (```sh, ```python); the executor runs every block of the message and the user
  proxy answers, as the user, `exitcode: N (execution succeeded|execution failed)\\nCode
  output: <stderr then stdout>` (`_generate_code_execution_reply_using_executor`,
  `_execute_code_dont_check_setup`). A block whose first line is `# filename: <path>` is
  saved under that name (else `tmp_code_<md5>.<lang>`) and run; a block in a language the
  executor does not support is not run, the answer being `exitcode: 1 (execution failed)`
  with `unknown language <lang>`.
- The human speaks when the assistant's message ends on `TERMINATE` (the termination
  message prompts the human under `human_input_mode="TERMINATE"`): their words arrive as a
  user message, as typed. The first message is the task `initiate_chat` sends.
- Each message carries the sender's `name` (`assistant`, `user_proxy`), as
  `ConversableAgent._append_oai_message` records it.
- There are no file tools: files are read with `cat`, searched with `grep -rn`, listed with
  `ls -la`, edited by a Python script saved with `# filename:` (a `str.replace` written back
  through `pathlib`), created with a shell heredoc, removed with `git rm`, moved with `git mv`.
- There is no to-do tool: "If a plan is not provided, explain your plan first." The plan is
  a numbered list in the assistant's prose, each step marked `[done]`, `[in progress]`,
  `[to do]` or `[dropped]`, written with a code block that checks the working tree.

What is this family's own reading, where no source says more: the step markers, the
assistant's narration around its code, the project's scripts (`scripts/replay.sh`,
`bench/run.mjs`) and what they print.

Tool outputs follow the real tools: `elm make`'s `Detected problems in 1 module.` and its
`-- TYPE MISMATCH ---…--- src/Webhook.elm` report (the code excerpt with `^` under it, the
types, `Hint: It looks like it takes too few arguments. I was expecting 1 more.`), then
`Success! Compiled N modules.` with `Main ───> /dev/null`; `elm-test`'s header (`elm-test
0.19.1-revision12`, `Running N tests. To reproduce these results, run: elm-test --fuzz 100
--seed …`), each failure's `↓ Module` / `✗ name` block with the `Expect.equal` box, then
`TEST RUN FAILED` and `Duration:` / `Passed:` / `Failed:`; `elm-review`'s `-- ELM-REVIEW
ERROR --` blocks and `I found N errors in M files.`; `elm-format --validate`'s JSON list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, lower_camel

ROOT = "/home/dev/parcelwise"
APP = "parcelwise"
BUILD = "elm make src/Main.elm --output=/dev/null"
TEST = "npx elm-test"
BENCH = "node bench/run.mjs"
ASSISTANT, PROXY = "assistant", "user_proxy"
TERMINATE = "TERMINATE"
#: The assistant agent's default system message, as AutoGen 0.2 ships it.
DEFAULT_SYSTEM_MESSAGE = """You are a helpful AI assistant.
Solve tasks using your coding and language skills.
In the following cases, suggest python code (in a python coding block) or shell script (in a sh coding block) for the user to execute.
    1. When you need to collect info, use the code to output the info you need, for example, browse or search the web, download/read a file, print the content of a webpage or a file, get the current date/time, check the operating system. After sufficient info is printed and the task is ready to be solved based on your language skill, you can solve the task by yourself.
    2. When you need to perform some task with code, use the code to perform the task and output the result. Finish the task smartly.
Solve the task step by step if you need to. If a plan is not provided, explain your plan first. Be clear which step uses code, and which step uses your language skill.
When using code, you must indicate the script type in the code block. The user cannot provide any other feedback or perform any other action beyond executing the code you suggest. The user can't modify your code. So do not suggest incomplete code which requires users to modify. Don't use a code block if it's not intended to be executed by the user.
If you want the user to save the code in a file before executing it, put # filename: <filename> inside the code block as the first line. Don't include multiple code blocks in one response. Do not ask users to copy and paste the result. Instead, use 'print' function for the output when relevant. Check the execution result returned by the user.
If the result indicates there is an error, fix the error and output the code again. Suggest the full code instead of partial code or code changes. If the error can't be fixed or if the task is not solved even after the code is executed successfully, analyze the problem, revisit your assumption, collect additional info you need, and think of a different approach to try.
When you find an answer, verify the answer carefully. Include verifiable evidence in your response if possible.
Reply "TERMINATE" in the end when everything is done.
    """  # noqa: E501
SYSTEM = (
    DEFAULT_SYSTEM_MESSAGE
    + f"\n\nYou work in {ROOT}, the repository of {APP}, an Elm 0.19.1 web app (elm.json at "
    f"the root, sources in src/, tests in tests/ run with {TEST}, elm-review and elm-format "
    "through npx). The code blocks you write run from the repository root."
)
#: How the plan the assistant writes opens: the first time, and when it restates it.
PLAN_OPENERS = ("My plan for this:", "Where the plan stands now:")
#: The story's to-do statuses as the plan marks them.
STEP_MARK = {"pending": "to do", "in_progress": "in progress", "completed": "done",
             "cancelled": "dropped"}  # fmt: skip
#: What each failing test checks (its name, `{m}` the module), what it got, what it expected.
EXAMPLES = {
    "retries": ("{m} gives a timed-out delivery three tries", "2", "3"),
    "orders_batches": ("{m} flushes parked envelopes oldest first", "[1,3,2]", "[1,2,3]"),
    "handles_empty": ("{m} posts nothing when the queue is empty", "1", "0"),
}
#: The type error of a send called without its tenant (the probe).
TOO_FEW = "Hint: It looks like it takes too few arguments. I was expecting 1 more."
_SEND = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")


def elm_line(line: str) -> str:
    """A story line as the Elm it stands for: a limit is a top-level value read from the
    settings record; the send before the fix leaves out the tenant, the fix passes the
    batch's."""
    found = STORY_LINE.match(line)
    if not found:
        return line
    module = found.group(1)
    send = _SEND.match(line)
    if send:
        tenant = " batch.tenantId" if send.group(2) else ""
        return f"    {module}Send batch{tenant}"
    value = found.group(3)
    if value.startswith("settings."):
        value = "settings." + lower_camel(value.removeprefix("settings."))
    return f"{module}Limit = {value}"


def block(lang: str, code: str) -> str:
    return f"```{lang}\n{code}\n```"


def executed(exit_code: int, output: str) -> str:
    """The user proxy's answer to a message's code blocks."""
    status = "execution succeeded" if exit_code == 0 else "execution failed"
    return f"exitcode: {exit_code} ({status})\nCode output: {output}"


class AutoGenVoice(Voice):
    family = "autogen-style"
    system_prompt = SYSTEM
    src = "src"
    ext = "elm"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "scripts/replay.sh --queue {module} --dry-run",
        "npx elm-review",
        "elm-format --validate src/ tests/",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("delivery retry cap", "4 attempts", "12 attempts", "7 attempts"),
        ("outbox poll interval", "250 milliseconds", "2000 milliseconds", "800 milliseconds"),
        ("parked envelope page size", "25 rows", "300 rows", "60 rows"),
        ("toast display time", "3 seconds", "40 seconds", "9 seconds"),
        ("session refresh window", "5 minutes", "90 minutes", "30 minutes"),
        ("search debounce delay", "150 milliseconds", "600 milliseconds", "350 milliseconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("keeping parked envelopes in the Elm model only",
         "a localStorage port that saves them on every update",
         "the model is empty again after every page reload",
         "an IndexedDB outbox behind a pair of ports drained by a Time.every subscription",
         "localStorage caps out at five megabytes per origin"),
        ("one Http.request per envelope fired all at once", "a Task.sequence chain per tenant",
         "the browser caps concurrent connections and the rest time out",
         "a single batched POST per tenant built with Json.Encode.list",
         "a long chain holds back every later tenant's flush"),
        ("polling the partner status endpoint with Time.every",
         "a WebSocket port subscription for partner status",
         "polling burns the partner's rate limit",
         "server-sent events through an EventSource port",
         "the proxy in front of the partners drops idle WebSockets"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "In parcelwise, the {module} outbox parks envelopes while a partner is offline "
            "and never posts them again once it is back. Make it resend them, oldest first. "
            "{other} shares that flush code, so fix it there too.",
            "Parked envelopes in the {module} outbox of the Elm app stay parked after the "
            "partner recovers. They must go out again in the order they were parked; {other} "
            "uses the same flush, so it needs the same fix.",
        ],
        "set_value": [
            "For now, set the {key} to {value}.",
            "Begin with the {key} at {value}.",
        ],
        "ack": [
            "Understood, I will stick to that from here on.",
            "Got it; everything I write from now on follows that.",
            "Fine, I am taking that into account for the rest of the change.",
        ],
        "constraint": [
            "A rule for this work: {rule}.",
            "Please respect this throughout: {rule}.",
            "The team lead wants this kept: {rule}.",
        ],
        "plan": [
            "My approach is {plan}, so that {module} keeps its parked envelopes.",
            "I will go with {plan} first; then nothing {module} parks gets lost.",
        ],
        "change_value": [
            "{old} is too tight for the {key}, the slow partners miss it. Make it {new}.",
            "Support asked to move the {key} from {old} to {new}.",
            "Switch the {key} to {new}; {old} keeps paging the on-call.",
        ],
        "change_again": [
            "Once more on the {key}: {old} overwhelms the partners. Let's settle on {new}.",
            "{old} for the {key} failed in staging. Go with {new}, final answer.",
        ],
        "ack_value": [
            "src/Settings.elm now sets the {key} to {new}.",
            "Updated src/Settings.elm: the {key} is {new}.",
        ],
        "reverse": [
            "Rethinking this: {old} is not going to work, because {why}. I am switching to {new}.",
            "I am abandoning {old}, since {why}. I will use {new} instead.",
        ],
        "reverse_again": [
            "Rethinking once more: {old} has its own problem, {why}. I am moving to {new}.",
            "{old} is no good either, because {why}. Replacing it with {new}.",
        ],
        "question": [
            "Which commit broke the resend? The incident report needs its hash.",
            "Track down the commit that stopped the resends and tell me its hash for the "
            "postmortem.",
        ],
        "commit": [
            "deps: bump elm/http to 2.0.0",
            "tests: regroup the golden fixtures per outbox",
            "review: enable NoUnused.Exports",
            "ci: cache ~/.elm between runs",
        ],
        "answer": [
            "It is {sha}: that commit moved the outbox onto the shared Http helper and lost "
            "the retry on the way.",
            "The culprit is {sha}. It put the outbox on the shared Http helper, and the retry "
            "was dropped there.",
        ],
        "measure_question": [
            "Benchmark one flush of parked envelopes with elm-explorations/benchmark and tell "
            "me the mean time per run. It goes into the design doc, so keep the number.",
            "How long does one flush of parked envelopes take per run? Measure it with the "
            "benchmark package and keep the figure for the write-up.",
        ],
        "measure_answer": [
            "The benchmark puts one flush at {figure} microseconds per run on average.",
            "One flush takes {figure} microseconds per run, by the benchmark's mean.",
        ],
        "last": [
            "I am stopping at this point: the test '{test}' still fails, and the step in "
            "progress is to {todo}. The other steps are done or dropped.",
            "Where things are: elm-test still reports '{test}' as failing, and I am on the "
            "step to {todo}. The rest of the plan is finished or dropped.",
        ],
        # The assistant's narration around its code, and the human's nudges.
        "look": [
            "Let me look at {path}.",
            "First I need to see {path}.",
            "I'll print {path}.",
        ],
        "run": [
            "Let me run `{command}`.",
            "Next, run this in the repository root:",
            "I'll check with the following shell script.",
        ],
        "pause": [
            "That step ran cleanly. I'll wait for your next instruction.",
            "The output confirms that step. Over to you.",
        ],
        "go_on": [
            "go ahead",
            "ok, continue",
            "carry on",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._pending = ""  # words of the assistant's that ride on its next message
        self._plans = 0
        self._created = 0
        self._exit_next = 0  # the exit status of the command whose output was drawn
        self._failed_before: list[str] = []

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.elm"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return EXAMPLES[name.removeprefix(f"test_{module}_")][0].format(m=module)

    # --- messages, as the assistant agent records them -----------------------------------

    def _append(self, role: str, text: str, *, filler: bool = False) -> None:
        name = ASSISTANT if role == "assistant" else PROXY
        self.s.messages.append({"role": role, "content": text, "name": name})
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)

    def _last_role(self) -> str:
        return self.s.messages[-1]["role"] if self.s.messages else "system"

    def _code(self, intro: str, code: str, exit_code: int, output: str, *,
              filler: bool = False) -> None:  # fmt: skip
        """One assistant message with its code, and the user proxy's answer to it."""
        if self._last_role() == "assistant":
            self._append("user", self.phrase("go_on"))
        said = self._pending
        self._pending = ""
        text = f"{said}\n\n{intro}\n\n{code}" if said else f"{intro}\n\n{code}"
        # Words of the assistant's riding on a filler step make it filler no more.
        self._append("assistant", text, filler=filler and not said)
        self._append("user", executed(exit_code, output), filler=filler)

    def _flush(self) -> None:
        """The assistant's words with no code, handing the turn to the human."""
        if self._pending:
            if self._last_role() == "assistant":
                self._append("user", self.phrase("go_on"))
            self._append("assistant", f"{self._pending}\n\n{TERMINATE}")
            self._pending = ""

    # --- how the user and the assistant speak --------------------------------------------

    def user(self, text: str) -> None:
        self._flush()
        if self._last_role() == "user":
            # The human only speaks once the assistant hands over with TERMINATE.
            self._append("assistant", f"{self.phrase('pause')}\n\n{TERMINATE}")
        self._append("user", text)

    def say(self, text: str) -> None:
        self._pending = f"{self._pending}\n\n{text}" if self._pending else text

    def finish(self, text: str) -> None:
        self.say(text)
        self._flush()

    # --- what the assistant runs ---------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # elm-review exits 1 when it reports findings; grep matches the module's capital.
        exit_code = max(exit_code, self._exit_next)
        self._exit_next = 0
        command = command.replace("| grep legacy", "| grep -i legacy")
        intro = self.phrase("run", command=command)
        out = output + "\n" if output else ""
        self._code(intro, block("sh", command), exit_code, out, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        text = "\n".join(elm_line(x) for x in content.split("\n")).rstrip("\n")
        self._code(self.phrase("look", path=path), block("sh", f"cat {path}"), 0, text + "\n",
                   filler=filler)  # fmt: skip

    def edit(self, path: str, old: str, new: str) -> None:
        old_line, new_line = elm_line(old), elm_line(new)
        stem = path.rsplit("/", 1)[-1].removesuffix(".elm").lower()
        script = "\n".join(
            [
                f"# filename: patch_{stem}.py",
                "from pathlib import Path",
                "",
                f'path = Path("{path}")',
                "text = path.read_text()",
                f"old = {old_line!r}",
                f"new = {new_line!r}",
                'assert text.count(old) == 1, f"expected one match in {path}"',
                "path.write_text(text.replace(old, new))",
                'print(f"patched {path}")',
            ]
        )
        intro = f"I'll save this script and run it to change that line of {path}."
        self._code(intro, block("python", script), 0, f"patched {path}\n")

    def create(self, path: str, content: str) -> None:
        module = path.removeprefix(f"{self.src}/").removesuffix(".elm").replace("/", ".")
        text = f"module {module} exposing (..)\n\n{content}\n"
        self._created += 1
        if self._created == 1:
            # The Elm block is not run: the executor knows no Elm, so it says so.
            self._code(f"Here is the new module {path}.",
                       block("elm", f"-- {path}\n{text}"), 1, "\nunknown language elm")  # fmt: skip
            intro = "The executor cannot save Elm blocks; I'll write it from a shell heredoc."
        else:
            intro = f"I'll create {path} with a heredoc."
        script = f"cat > {path} <<'EOF'\n{text}EOF\nelm-format --yes {path}"
        self._code(intro, block("sh", script), 0, f"Processing file {path}\n")

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "tests/fixtures/", 1)
        destination = destination.replace("testdata/", "tests/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        self.shell(f'grep -rn "{pattern}" {root}', "\n".join(hits), filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        opener = PLAN_OPENERS[0 if not self._plans else 1]
        self._plans += 1
        steps = "\n".join(f"{k}. [{STEP_MARK[status]}] {text}"
                          for k, (text, status) in enumerate(items, 1))  # fmt: skip
        intro = f"{opener}\n{steps}\n\nFirst, the state of the working tree:"
        changed = "\n".join(f" M src/{camel(w)}.elm" for w in ("settings", "main"))
        self._code(intro, block("sh", "git status --short"), 0, changed + "\n")

    # --- what the commands print ---------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return f"replay: dry run, nothing is posted\nreplay: parked={parked} eligible=0"
        if k == 1:
            self._exit_next = 1
            line = self.rng.randint(20, 90)
            rule = "-- ELM-REVIEW ERROR " + "-" * 38 + f" src/Outbox.elm:{line}:1"
            return "\n".join(
                [
                    rule,
                    "",
                    "(fix) NoUnused.Variables: Top-level variable `legacyFlush` is not used",
                    "",
                    f"{line - 1}| ",
                    f"{line}| legacyFlush batch =",
                    "    ^^^^^^^^^^^",
                    f"{line + 1}|     List.map encodeEnvelope batch.envelopes",
                    "",
                    "This top-level variable is never used. You should either use it "
                    "somewhere, or remove it at the location I pointed at.",
                    "",
                    "Errors marked with (fix) can be fixed automatically using `elm-review --fix`.",
                    "",
                    "I found 1 error in 1 file.",
                ]
            )
        return "[]"

    def build_error(self, module: str) -> tuple[str, str, str]:
        line = self.rng.randint(30, 90)
        call = elm_line(f"{module}_send(batch)")
        path = f"src/{camel(module)}.elm"
        head = "-- TYPE MISMATCH " + "-" * (62 - len(path)) + f" {path}"
        output = "\n".join(
            [
                "Detected problems in 1 module.",
                head,
                "",
                "Something is off with the body of the `flushParked` definition:",
                "",
                f"{line}|{call}",
                " " * (len(str(line)) + 5) + "^" * (len(call.strip())),
                f"This `{module}Send` call produces:",
                "",
                "    TenantId -> Cmd Msg",
                "",
                "But the type annotation on `flushParked` says it should be:",
                "",
                "    Cmd Msg",
                "",
                TOO_FEW,
            ]
        )
        return output, TOO_FEW, BUILD

    def build_ok(self) -> str:
        return f"Success! Compiled {self.rng.randint(18, 40)} modules.\n\n    Main ───> /dev/null"

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        output = "\n".join(
            [
                "Outbox",
                "  flushParked, 100 parked envelopes",
                f"    runs/second: {1e6 / mean:,.0f}   goodness of fit: "
                f"{self.rng.randint(95, 99)}.{self.rng.randint(10, 99)}%",
                f"    mean per run (µs): {figure}",
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return TEST

    def test_counts(self, failed: int, passed: int) -> str:
        return f"Passed:   {passed}\nFailed:   {failed}"

    @staticmethod
    def _parse(test: str) -> tuple[str, str]:
        """(module, example key) of one of the story's test names."""
        for key, (template, *_) in EXAMPLES.items():
            after = template.removeprefix("{m}")
            if test.endswith(after):
                return test.removesuffix(after), key
        raise ValueError(test)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        seed = self.rng.randint(10**8, 4 * 10**9)
        lines = [
            "elm-test 0.19.1-revision12",
            "--------------------------",
            "",
            "Compiling > Starting tests",
            "",
            f"Running {failed + passed} tests. To reproduce these results, run: elm-test "
            f"--fuzz 100 --seed {seed}",
            "",
        ]
        for test in failing:
            module, key = self._parse(test)
            _, actual, expected = EXAMPLES[key]
            lines += [
                f"↓ {camel(module)}Test",
                f"↓ {camel(module)}.flushParked",
                f"✗ {test}",
                "",
                f"    {actual}",
                "    ╷",
                "    │ Expect.equal",
                "    ╵",
                f"    {expected}",
                "",
            ]
        lines += [
            "",
            "TEST RUN FAILED" if failed else "TEST RUN PASSED",
            "",
            f"Duration: {self.rng.randint(300, 1900)} ms",
            self.test_counts(failed, passed),
        ]
        return "\n".join(lines)


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each code block of a message, as AutoGen's extractor reads them."""
    return re.findall(r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```", text, re.DOTALL)
