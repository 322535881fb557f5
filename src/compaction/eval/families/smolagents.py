"""A smolagents-style family, telling the story's second-thoughts variant: an R package
(devtools, testthat 3, lintr, `devtools::check()`'s rcmdcheck summary, bench::mark for the
variant's figure) worked on through a Hugging Face smolagents `CodeAgent`, recorded as OpenAI
chat the way the agent replays its memory to the model (`write_memory_to_messages()`, then
the model's `get_clean_message_list` with `tool_role_conversions`).

There are no provider tool calls: the agent acts in Python code inside its own text, as
smolagents 1.2x writes a step (`memory.ActionStep.to_messages`, `CodeAgent._step_stream`):

- the assistant's message is the model output, `Thought: …` then the code between the
  default code block tags `<code>` and `</code>`, and after it (a `tool-call` message turned
  assistant, merged into the same message) `Calling tools:` and the Python repr of the one
  call, `[{'id': 'call_N', 'type': 'function', 'function': {'name': 'python_interpreter',
  'arguments': <the code>}}]`, N being the number of memory steps before it;
- the environment's answer (a `tool-response` message turned user) is `Observation:\\n` then
  `Execution logs:\\n<what the code printed>Last output from code snippet:\\n<the value of
  the last line>` (`None` after a `print`), or, when the code raised, `Call id: call_N\\n
  Error:\\n<the executor's message>\\nNow let's retry: …` (the local executor's `Code
  execution failed at line '…' due to: InterpreterError: Forbidden function evaluation: …`);
- the user's messages are task steps, `New task:\\n<text>` (each a new `agent.run(…,
  reset=False)`), and a run ends with a step whose code calls `final_answer(…)`, its
  observation holding the answer: that is how the assistant speaks to the user. Work the
  developer's loop resumes without new words starts a run with a short "carry on" task;
- planning steps (`planning_interval`) carry the to-do list: the first in the initial-plan
  form ("Here are the facts I know and the plan of action that I will follow …", `## 1. Facts
  survey` / `## 2. Plan`), later ones in the update form ("I still need to solve the task I
  was given: …", `## 1. Updated facts survey` with its four parts), each answered by the user
  message "Now proceed and carry out this plan."; a step's status is written after it,
  `(done)`, `(in progress)` or `(dropped)`;
- consecutive messages of one role are merged into one, as `get_clean_message_list` does
  (an observation and the next task share a user message); content is a list of text parts.

The tools are the developer's own `@tool` functions, listed in the system prompt as
`Tool.to_code_prompt` renders them: `run_shell(command)` answering `exit status: N` and the
command's output, `read_file(path)` the file's text, `write_file(path, content)` `Wrote N
bytes to <path>`, `edit_file(path, old_text, new_text)` `Replaced 1 occurrence in <path>`,
`search_files(pattern, directory)` `path:line: text` lines, `list_files(directory)` the
paths, and smolagents' `final_answer(answer)`. Files are deleted and moved with `git rm` and
`git mv` through `run_shell`.

Outputs follow the real tools: `Rscript -e 'devtools::test()'` with testthat's progress table
(`✔ | F W  S  OK | Context`), its failure blocks, `══ Failed tests ══` with `── Failure
(test-outbox.R:31:3): … ──` and `[ FAIL 1 | WARN 0 | SKIP 0 | PASS 58 ]`; an R error `Error
in outbox_send(batch, tenant = tenant_id) :` / `object 'tenant_id' not found` / `Calls: …` /
`Execution halted`, then a clean run; lintr's `file:line:col: style: [linter] message`;
`devtools::check()`'s `── R CMD check results ──` and `0 errors ✔ | 0 warnings ✔ | 1 note ✖`;
bench::mark's tibble.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, code_file

ROOT = "/home/dev/relaypost"
PACKAGE = "relaypost"
VERSION = "0.4.0"
TEST = "Rscript -e 'devtools::test()'"
BUILD = "Rscript inst/scripts/smoke.R"
BENCH = "Rscript bench/flush-bench.R"
#: The default code block tags of `CodeAgent` (smolagents 1.20 and later).
OPEN_CODE, CLOSE_CODE = "<code>", "</code>"
RETRY = (
    "Now let's retry: take care not to repeat previous errors! If you have retried several "
    "times, try a completely different approach.\n"
)
PROCEED = "Now proceed and carry out this plan."
#: The story's to-do statuses as the plan writes them after a step (pending: nothing).
PLAN_STATUS = {"pending": "", "in_progress": " (in progress)", "completed": " (done)",
               "cancelled": " (dropped)"}  # fmt: skip
#: What each failing test checks (its description, `{m}` the module), the object compared,
#: what it expected and what it got, and the line of the expectation in its test file.
EXAMPLES = {
    "retries": ("retries a timed-out {m} delivery three times", "attempts", "3", "2", 31),
    "orders_batches": ("keeps {m} batches in enqueue order", "ids", "c(1, 2, 3)",
                       "c(1, 3, 2)", 47),
    "handles_empty": ("sends nothing for an empty {m} queue", "sent", "0", "1", 62),
}  # fmt: skip
#: Test files (contexts) that always run beside the ones the story's failures live in.
OTHER_CONTEXTS = ("envelope", "signature", "routing")
RULE = "─" * 80
_SEND = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")
#: The developer's tools, as `Tool.to_code_prompt` lists them in the system prompt.
TOOLS = (
    ("run_shell", "command: string", "string",
     f"Runs a shell command with bash in the package root ({ROOT}) and returns 'exit status: "
     "N' followed by its combined stdout and stderr.",
     "command: The command line to run."),
    ("read_file", "path: string", "string", "Returns the text of a file of the package.",
     "path: The file's path, relative to the package root."),
    ("write_file", "path: string, content: string", "string",
     "Writes a whole file, creating its folder if needed.",
     "path: The file's path, relative to the package root.\ncontent: The new text."),
    ("edit_file", "path: string, old_text: string, new_text: string", "string",
     "Replaces the one occurrence of old_text in a file with new_text; raises if old_text "
     "is not found exactly once.",
     "path: The file's path.\nold_text: The exact text to replace.\nnew_text: Its replacement."),
    ("search_files", "pattern: string, directory: string", "string",
     "Searches files for a regular expression; returns path:line: text lines.",
     "pattern: The regular expression.\ndirectory: Where to search."),
    ("list_files", "directory: string", "string", "Lists the files under a directory.",
     "directory: The directory, relative to the package root."),
    ("final_answer", "answer: any", "any", "Provides a final answer to the given problem.",
     "answer: The final answer to the problem"),
)  # fmt: skip


def r_line(line: str) -> str:
    """A story line as the R it stands for: the send before the fix passes a `tenant_id` that
    is not bound, the fix the batch's; a limit is assigned with `<-`."""
    found = STORY_LINE.match(line)
    if not found:
        return line
    module = found.group(1)
    send = _SEND.match(line)
    if send:
        tenant = "batch$tenant_id" if send.group(2) else "tenant_id"
        return f"  {module}_send(batch, tenant = {tenant})"
    value = found.group(3).replace("settings.", "settings$")
    return f"{module}_limit <- {value}"


def py(text: str) -> str:
    """A Python string literal as the agent writes one: double quotes, or single ones when the
    text holds a double quote, triple quotes around several lines."""
    if "\n" in text:
        return '"""' + text + '"""' if '"""' not in text else repr(text)
    if '"' not in text:
        return f'"{text}"'
    return repr(text) if "'" in text else f"'{text}'"


def call(name: str, **arguments: str) -> str:
    """A tool call as the agent writes it: keyword arguments only (its system prompt says so)."""
    return f"{name}(" + ", ".join(f"{k}={py(v)}" for k, v in arguments.items()) + ")"


def system_prompt() -> str:
    tools = []
    for name, signature, output, description, args in TOOLS:
        args_doc = "\n".join("    " + line for line in args.split("\n"))
        doc = f'"""{description}\n\nArgs:\n{args_doc}\n"""'
        body = "\n".join("    " + line if line else "" for line in doc.split("\n"))
        tools.append(f"def {name}({signature}) -> {output}:\n{body}")
    listed = "\n\n".join(tools)
    return (
        "You are an expert assistant who can solve any task using code blobs. You will be given "
        "a task to solve as best you can.\nTo do so, you have been given access to a list of "
        "tools: these tools are basically Python functions which you can call with code.\nTo "
        "solve the task, you must plan forward to proceed in a series of steps, in a cycle of "
        "Thought, Code, and Observation sequences.\n\nAt each step, in the 'Thought:' sequence, "
        "you should first explain your reasoning towards solving the task and the tools that "
        "you want to use.\nThen in the Code sequence you should write the code in simple "
        f"Python. The code sequence must be opened with '{OPEN_CODE}', and closed with "
        f"'{CLOSE_CODE}'.\nDuring each intermediate step, you can use 'print()' to save "
        "whatever important information you will then need.\nThese print outputs will then "
        "appear in the 'Observation:' field, which will be available as input for the next "
        "step.\nIn the end you have to return a final answer using the `final_answer` tool.\n\n"
        "On top of performing computations in the Python code snippets that you create, you "
        "only have access to these tools, behaving like regular python functions:\n"
        f"{OPEN_CODE}\n{listed}\n{CLOSE_CODE}\n\n"
        "Here are the rules you should always follow to solve your task:\n"
        f"1. Always provide a 'Thought:' sequence, and a '{OPEN_CODE}' sequence ending with "
        f"'{CLOSE_CODE}', else you will fail.\n2. Use only variables that you have defined!\n"
        "3. Always use the right arguments for the tools. DO NOT pass the arguments as a dict, "
        "but use the arguments directly.\n"
        "9. You can use imports in your code, but only from the following list of modules: "
        "['collections', 'datetime', 'itertools', 'json', 'math', 're', 'statistics', 'time']\n"
        "10. The state persists between code executions.\n\n"
        f"The package is {PACKAGE} {VERSION}, an R package (R 4.4, devtools, testthat 3e, "
        f"lintr) at {ROOT}. Run its tests with {TEST}.\n\nNow Begin!"
    )


class SmolagentsVoice(Voice):
    family = "smolagents-style"
    system_prompt = system_prompt()
    src = "R"
    ext = "R"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "Rscript inst/scripts/replay.R --queue {module} --dry-run",
        "Rscript -e 'lintr::lint_package()'",
        "Rscript -e 'devtools::check(document = FALSE)'",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("retry backoff cap", "12 seconds", "90 seconds", "45 seconds"),
        ("outbox batch size", "60 envelopes", "400 envelopes", "150 envelopes"),
        ("parked envelope retention", "7 days", "90 days", "30 days"),
        ("mirai daemon count", "2 daemons", "16 daemons", "5 daemons"),
        ("webhook signature tolerance", "5 minutes", "180 minutes", "20 minutes"),
        ("httr2 request timeout", "3 seconds", "60 seconds", "15 seconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an environment in the package namespace holding parked envelopes",
         "a Redis list written through redux",
         "that environment is empty again after every R restart",
         "a DBI outbox table in Postgres drained by a later::later loop",
         "the shared Redis evicts keys under memory pressure"),
        ("one filelock around the whole dispatcher", "a callr background process per tenant",
         "a slow tenant holds the lock while every other tenant waits",
         "one mirai daemon per tenant fed from a queue",
         "each callr process loads the whole package and opens its own connection pool"),
        ("a cron line running Rscript resend.R", "a systemd timer beside the Plumber API",
         "cron drops the runs missed while the host was down",
         "a resend loop inside the Plumber process scheduled with later",
         "ops will not ship another unit file per region"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "relaypost's {module} outbox never resends the webhook envelopes it parked while a "
            "partner was unreachable. Get them delivered again, oldest first. The {other} "
            "module goes through the same flush code, fix it there as well.",
            "Envelopes parked by {module} stay parked forever once the partner endpoint is back "
            "up. They should go out again in parking order; {other} calls the same flush "
            "function, so it needs the fix too.",
        ],
        "set_value": [
            "Use {value} for the {key} to begin with.",
            "Take {value} as the {key} for now.",
        ],
        "ack": [
            "Noted, I will keep to it for the rest of this work.",
            "Understood, I have taken that into account.",
            "Agreed, that stays in force from here on.",
        ],
        "noted": [
            "Noted. Carrying on with the resend fix.",
            "Taken into account; back to the parked envelopes.",
        ],
        "paused": [
            "I have read the flush path so far and will go on with the fix next.",
            "Progress so far: the flush code is mapped out; the fix itself comes next.",
        ],
        "continue": [
            "Carry on with the fix.",
            "Keep going from where you stopped.",
            "Continue, please.",
        ],
        "constraint": [
            "One rule for this whole change: {rule}.",
            "Keep this in mind while you work: {rule}.",
            "The maintainers insist: {rule}.",
        ],
        "plan": [
            "Approach: {plan}, so that {module} still has its parked envelopes after a restart.",
            "I will start with {plan}; that way nothing {module} parks is lost.",
        ],
        "change_value": [
            "The {key} of {old} is too short for the slow partners; make it {new}.",
            "Operations asked to move the {key} from {old} to {new}.",
            "Set the {key} to {new} instead, {old} keeps waking up the on-call.",
        ],
        "change_again": [
            "The {key} has to change once more: {old} overloads the partners. Settle on {new}.",
            "{old} for the {key} broke the load test. Use {new}, and that is final.",
            "Bring the {key} down to {new}; {old} did not survive staging.",
        ],
        "ack_value": [
            "Done: inst/config.yml now sets the {key} to {new}.",
            "inst/config.yml updated, the {key} is {new} now.",
        ],
        "reverse": [
            "Change of plan: {old} will not work, because {why}. I am switching to {new}.",
            "I am dropping {old}, since {why}. Going with {new} instead.",
        ],
        "reverse_again": [
            "Another change of plan: {old} has a problem of its own, {why}. Now going with {new}.",
            "{old} will not do either, because {why}. Replacing it with {new}.",
        ],
        "question": [
            "Which commit broke the resend? I need its hash for the incident write-up.",
            "Find me the commit that broke resending and give me its hash, it goes in the "
            "postmortem.",
        ],
        "commit": [
            "deps: require httr2 1.0",
            "tests: move fixtures to tests/testthat/fixtures",
            "docs: regenerate the roxygen pages",
            "ci: cache the renv library",
        ],
        "answer": [
            "The commit is {sha}: it moved the outbox onto the shared httr2 client and lost "
            "the retry wrapper.",
            "{sha} is the one. It put the outbox on the shared httr2 client, and the retries "
            "were dropped on the way.",
        ],
        "measure_question": [
            "Time a single flush batch with bench::mark and give me the median. That number "
            "goes into the design doc, so keep it.",
            "What is the median time of one flush batch? Measure it with bench::mark and hold "
            "on to the figure for the write-up.",
        ],
        "measure_answer": [
            "bench::mark gives a median of {figure} microseconds for one flush batch.",
            "One flush batch takes {figure} microseconds at the median, per bench::mark.",
        ],
        "last": [
            "I am stopping here: the test '{test}' still fails, and the step in progress is to "
            "{todo}. The other steps are done or were dropped.",
            "Status: testthat still reports '{test}' as failing, and I am on the step to "
            "{todo}. Everything else in the plan is finished or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._steps = 0  # memory steps so far: tasks, plans and actions
        self._run = False  # a run is under way (a task was given, no final answer yet)
        self._acted = False  # the run under way has taken an action step
        self._task = ""  # the task of the run under way
        self._planned = False  # a planning step has been written
        self._read: set[str] = set()
        self._written: list[str] = []
        self._failed_before: list[str] = []

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{stem}.R"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return EXAMPLES[name.removeprefix(f"test_{module}_")][0].format(m=module)

    # --- messages, as get_clean_message_list leaves them --------------------------------

    def _append(self, role: str, text: str, *, filler: bool = False) -> None:
        messages = self.s.messages
        if messages and messages[-1]["role"] == role:
            # Consecutive messages of one role are merged; the merged one is filler no more.
            last = len(messages) - 1
            messages[-1]["content"][-1]["text"] += "\n" + text
            if not filler:
                self.s.filler_at.discard(last)
            return
        messages.append({"role": role, "content": [{"type": "text", "text": text}]})
        if filler:
            self.s.filler_at.add(len(messages) - 1)

    def _new_task(self, text: str) -> None:
        self._append("user", f"New task:\n{text}")
        self._steps += 1
        self._run, self._acted, self._task = True, False, text

    def _ensure_run(self) -> None:
        if not self._run:
            self._new_task(self.phrase("continue"))

    def _step(
        self,
        thought: str,
        code: str,
        *,
        logs: str = "",
        output: str = "None",
        error: str | None = None,
        filler: bool = False,
    ) -> None:
        """One action step: the model's Thought and code, the call record, the observation."""
        self._ensure_run()
        call_id = f"call_{self._steps}"
        self._steps += 1
        self._acted = True
        record = [{"id": call_id, "type": "function",
                   "function": {"name": "python_interpreter", "arguments": code}}]  # fmt: skip
        text = f"Thought: {thought}\n{OPEN_CODE}\n{code}\n{CLOSE_CODE}\nCalling tools:\n{record}"
        self._append("assistant", text, filler=filler)
        if error is not None:
            answer = f"Call id: {call_id}\nError:\n{error}\n{RETRY}"
            if logs:
                answer = f"Observation:\nExecution logs:\n{logs}\n{answer}"
        else:
            printed = f"{logs}\n" if logs else ""
            answer = (
                f"Observation:\nExecution logs:\n{printed}Last output from code snippet:\n{output}"
            )
        self._append("user", answer, filler=filler)

    def _printed(self, thought: str, tool_call: str, result: str, *, filler: bool = False) -> None:
        self._step(thought, f"print({tool_call})", logs=result, filler=filler)

    # --- how the user and the assistant speak --------------------------------------------

    def user(self, text: str) -> None:
        if self._run:
            # The run the last task started ends before the next one is given.
            which = "paused" if self._acted else "noted"
            self._final(self.pick(["I have what I need.", "Noted."]), self.phrase(which))
        self._new_task(text)

    def say(self, text: str) -> None:
        self._final(self.pick(["I can answer now.", "Let me report back.", "Time to answer."]),
                    text)  # fmt: skip

    def finish(self, text: str) -> None:
        self._final("That is as far as I get in this session; I'll report where things stand.",
                    text)  # fmt: skip

    def _final(self, thought: str, text: str) -> None:
        self._step(thought, f"final_answer({py(text)})", output=text)
        self._run = False

    # --- the developer's tools -----------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        result = f"exit status: {exit_code}" + (f"\n{output}" if output else "")
        thought = self.pick([f"I'll run `{command}`.", f"Next, `{command}` in the shell."])
        self._printed(thought, call("run_shell", command=command), result, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        text = "\n".join(r_line(x) for x in content.split("\n")).rstrip("\n")
        if filler and self.rng.random() < 0.12:
            # Reading through `open` is not allowed in the sandbox: the executor says so.
            code = f"with open('{path}') as f:\n    print(f.read())"
            error = (
                f"Code execution failed at line '{code}' due to: InterpreterError: Forbidden "
                "function evaluation: 'open' is not among the explicitly allowed tools or "
                "defined/imported in the preceding code"
            )
            self._step(f"Let me read {path}.", code, error=error, filler=True)
            thought = "open is not allowed here, so I'll use the read_file tool."
        else:
            thought = self.pick([f"Let me read {path}.", f"I need to see {path} first."])
        self._read.add(path)
        self._printed(thought, call("read_file", path=path), text, filler=filler)

    def _read_around(self, path: str, line: str) -> None:
        before = code_file(self.rng, "R", 12).split("\n")
        text = "\n".join([*before, "flush_parked <- function(batch) {", line, "}"])
        self._read.add(path)
        self._printed(f"The error points into {path}; let me read it.",
                      call("read_file", path=path), text)  # fmt: skip

    def edit(self, path: str, old: str, new: str) -> None:
        old_line, new_line = r_line(old), r_line(new)
        if path not in self._read:
            self._read_around(path, old_line)
        tool_call = call("edit_file", path=path, old_text=old_line, new_text=new_line)
        self._printed(f"Now I'll change that line of {path}.", tool_call,
                      f"Replaced 1 occurrence in {path}")  # fmt: skip

    def create(self, path: str, content: str) -> None:
        module = path.rsplit("/", 1)[-1].removesuffix(".R")
        text = f"#' {module.replace('_', ' ')}: the parked envelopes' side of the outbox.\n"
        text += f"#' @noRd\n{content}\n"
        self._written.append(path)
        code = f"content = {py(text)}\nprint(write_file(path={py(path)}, content=content))"
        self._step(f"I'll create {path}.", code,
                   logs=f"Wrote {len(text.encode())} bytes to {path}")  # fmt: skip

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "tests/testthat/fixtures/", 1)
        destination = destination.replace("testdata/", "tests/testthat/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        self._printed(f"Where is `{pattern}` used?", call("search_files", pattern=pattern,
                      directory=root), "\n".join(hits), filler=filler)  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        found = "\n".join(sorted(set(paths)))
        self._printed(f"Which files are in {root}?", call("list_files", directory=root), found,
                      filler=filler)  # fmt: skip

    # --- planning steps ------------------------------------------------------------------

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        self._ensure_run()
        steps = "\n".join(f"{k}. {text}{PLAN_STATUS[status]}"
                          for k, (text, status) in enumerate(items, 1))  # fmt: skip
        if not self._planned:
            survey = (
                "## 1. Facts survey\n### 1.1. Facts given in the task\n"
                "- Parked envelopes are never resent once the partner is back.\n"
                "- They must go out oldest first, and the other module shares the flush code.\n"
                "### 1.2. Facts to look up\n- Where the flush path drops parked envelopes.\n"
                "### 1.3. Facts to derive\n- Which tests cover the resend path.\n\n## 2. Plan\n"
            )
            plan = ("Here are the facts I know and the plan of action that I will follow to "
                    f"solve the task:\n```\n{survey}{steps}\n```")  # fmt: skip
        else:
            survey = (
                "## 1. Updated facts survey\n### 1.1. Facts given in the task\n"
                "- Parked envelopes must be resent, oldest first.\n"
                f"### 1.2. Facts that we have learned\n- {len(self._read)} files read so far; "
                f"tests run with {TEST}.\n### 1.3. Facts still to look up\n- Nothing yet.\n"
                "### 1.4. Facts still to derive\n- Whether the last failing test shares the "
                "cause.\n\n## 2. Plan\n"
            )
            plan = (
                f"I still need to solve the task I was given:\n```\n{self._task}\n```\n\n"
                "Here are the facts I know and my new/updated plan of action to solve the "
                f"task:\n```\n{survey}{steps}\n```"
            )
        self._planned = True
        self._steps += 1
        self._append("assistant", plan)
        self._append("user", PROCEED)

    # --- what the commands print ---------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return (
                "[replay] dry run: nothing is sent\n"
                f"[replay] parked: {parked}, eligible: 0, oldest: none"
            )
        if k == 1:
            path = self._written[-1] if self._written else f"R/{PACKAGE}.R"
            column = self.rng.randint(81, 96)
            return (
                f"{path}:4:{column}: style: [line_length_linter] Lines should not be more than "
                f"80 characters. This line is {column + 6} characters.\n"
                f"  found <- Filter(function(x) identical(x$batch_id, batch$id), "
                "parked_envelopes_for_tenant)\n" + " " * 80 + "~" * (column - 74)
            )
        seconds = f"{self.rng.randint(40, 99)}.{self.rng.randint(0, 9)}"
        head = f"── R CMD check results ──────────────────────────────── {PACKAGE} {VERSION} ────"
        return "\n".join(
            [
                "══ Documenting ═════════════════════════════════════════════════════════════════",
                "══ Building ════════════════════════════════════════════════════════════════════",
                f"✔  checking for file ‘{PACKAGE}/DESCRIPTION’",
                f"─  building ‘{PACKAGE}_{VERSION}.tar.gz’",
                "══ Checking ════════════════════════════════════════════════════════════════════",
                "✔  checking package dependencies",
                "✔  checking R code for possible problems",
                "N  checking for future file timestamps",
                "   unable to verify current time",
                "✔  checking tests",
                "",
                head,
                f"Duration: 1m {seconds}s",
                "",
                "❯ checking for future file timestamps ... NOTE",
                "  unable to verify current time",
                "",
                "0 errors ✔ | 0 warnings ✔ | 1 note ✖",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        line = r_line(f"{module}_send(batch)").strip()
        probe = "object 'tenant_id' not found"
        output = "\n".join(
            [
                f"ℹ Loading {PACKAGE}",
                f"Error in {line} : ",
                f"  {probe}",
                f"Calls: flush_parked -> {module}_send",
                "Execution halted",
            ]
        )
        return output, probe, BUILD

    def build_ok(self) -> str:
        envelopes, tenants = self.rng.randint(8, 40), self.rng.randint(2, 6)
        return (
            f"ℹ Loading {PACKAGE}\n"
            f"smoke: flushed {envelopes} parked envelopes for {tenants} tenants"
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        median = float(figure)
        low = f"{int(median * 0.93)}µs"
        shown = f"{int(median)}µs"
        per_second = f"{1e6 / median:.0f}."
        output = "\n".join(
            [
                "# A tibble: 1 × 6",
                "  expression               min   median `itr/sec` mem_alloc `gc/sec`",
                "  <bch:expr>          <bch:tm> <bch:tm>     <dbl> <bch:byt>    <dbl>",
                f"1 flush_parked(batch) {low:>8} {shown:>8} {per_second:>9}    2.31MB     "
                f"{self.rng.randint(5, 19)}.{self.rng.randint(0, 9)}",
                f"median per flush (microseconds): {figure}",
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return TEST

    def test_counts(self, failed: int, passed: int) -> str:
        return f"[ FAIL {failed} | WARN 0 | SKIP 0 | PASS {passed} ]"

    @staticmethod
    def _parse(test: str) -> tuple[str, str]:
        """(context, example key) of one of the story's test descriptions."""
        for key, (template, *_) in EXAMPLES.items():
            before, after = template.split("{m}")
            if test.startswith(before) and test.endswith(after):
                return test[len(before) : len(test) - len(after)], key
        raise ValueError(test)

    def _failure(self, test: str, *, boxed: bool) -> list[str]:
        context, key = self._parse(test)
        _, name, expected, actual, at = EXAMPLES[key]
        where = f"test-{context}.R:{at}:3"
        head = f"Failure ({where}): {test}"
        if boxed:
            head = f"── {head} " + "─" * max(4, 76 - len(head))
        return [
            head,
            f"Expected `{name}` to equal {expected}.",
            "Differences:",
            f"`actual`:   {actual}",
            f"`expected`: {expected}",
            "",
        ]

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # An earlier run's failures still run in a later one, where their contexts pass.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        contexts = list(dict.fromkeys(self._parse(t)[0] for t in named)) + list(OTHER_CONTEXTS)
        share, extra = divmod(passed, len(contexts))
        lines = [f"ℹ Testing {PACKAGE}", "✔ | F W  S  OK | Context"]
        for k, context in enumerate(contexts):
            ok = share + (1 if k < extra else 0)
            bad = [t for t in failing if self._parse(t)[0] == context]
            mark, f = ("✖", f"{len(bad)}") if bad else ("✔", " ")
            seconds = f" [0.{self.rng.randint(1, 9)}s]" if bad else ""
            # Under `F W  S  OK`: the failures, no warnings, no skips, the passes right-aligned.
            lines.append(f"{mark} | {f}     {ok:>4} | {context}{seconds}")
            for test in bad:
                lines += [RULE, *self._failure(test, boxed=False), RULE]
        lines += [
            "",
            "══ Results " + "═" * 69,
            f"Duration: {self.rng.randint(1, 6)}.{self.rng.randint(0, 9)} s",
            "",
        ]
        if failing:
            lines.append("══ Failed tests " + "═" * 64)
            for test in failing:
                lines += self._failure(test, boxed=True)
        lines.append(self.test_counts(failed, passed))
        return "\n".join(lines)


def code_blocks(text: str) -> list[str]:
    """The code of an assistant message's code blocks (what the executor runs)."""
    return re.findall(f"{OPEN_CODE}\n(.*?)\n{CLOSE_CODE}", text, re.DOTALL)
