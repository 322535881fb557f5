"""A crewai-style family, telling the story's second-thoughts variant: a Crystal shard (shards,
`crystal spec`, ameba, `crystal tool format`, Benchmark.ips for the variant's figure) worked on
by one CrewAI agent (crewAIInc/crewAI) with `human_input=True` on its task, recorded as the
OpenAI chat its `CrewAgentExecutor` keeps in `self.messages`.

Based on crewAI's sources (lib/crewai: `translations/en.json`, `agents/crew_agent_executor.py`,
`utilities/agent_utils.py`, `tools/structured_tool.py`, `utilities/string_utils.py`,
`core/providers/human_input.py`; lib/crewai-tools: `FileReadTool`, `FileWriterTool`,
`DirectoryReadTool`). There are no provider tool calls; the agent speaks CrewAI's text ReAct
protocol:

- the system message is the `role_playing` slice ("You are {role}. {backstory}\\nYour
  personal goal is: {goal}") and the `tools` slice, each tool rendered as its composite
  description (`Tool Name: <sanitized name>` / `Tool Arguments: <JSON schema>` / `Tool
  Description: …`); the first user message is the `task` slice (`\\nCurrent Task: …`, the
  `expected_output` slice, "Begin! This is VERY important to you, …", `\\n\\nThought:`);
- each step of the agent is one assistant message: the model's `Thought: …`, `Action: <tool
  name>` and `Action Input: <JSON object>`, then, appended to the same text by
  `handle_agent_action_core` (`formatted_answer.text += f"\\nObservation: {result}"`), the
  tool's answer; the executor appends that text as an assistant message;
- a run ends with `Thought: I now know the final answer` / `Final Answer: …`, the only way
  the agent speaks to the human. The human's words then come back as CrewAI's
  human-input provider passes them, a user message in the `feedback_instructions` slice
  ("User feedback: …\\nInstructions: Use this feedback to enhance the next output
  iteration.\\nNote: Do not respond or add commentary."), and the loop runs again. Work
  resumed without new words comes after a short "carry on" feedback.

Tool names are what `sanitize_tool_name` makes of each tool's `name`: crewai_tools'
`FileReadTool` ("Read a file's content" → `read_a_files_content`, {file_path, start_line,
line_count}, answering the file's text), `FileWriterTool` (`file_writer_tool`, {filename,
content, directory, overwrite}, answering "Content successfully written to <path>"),
`DirectoryReadTool` (`list_files_in_directory`, {directory}, answering "File paths: \\n-…"),
and the crew's own `BaseTool`s: "Run shell command" (`run_shell_command`, {command},
answering `exit code: N` and the output), "Replace text in file" (`replace_text_in_file`,
{file_path, old_text, new_text}), "Search code" (`search_code`, {pattern, directory}) and
"Task checklist" (`task_checklist`, {items: [{step, status}]}, the to-do list, answered with
the list as saved). Files are deleted and moved with `git rm` and `git mv`.

Outputs follow the real tools: `shards install` ("Resolving dependencies", "Fetching …",
"Installing …", "Writing shard.lock"), `shards build` ("Dependencies are satisfied",
"Building: …", a compile error "In src/…:L:C" with its caret line and "Error: undefined
local variable or method 'tenant_id' for top-level"), `crystal spec` (the dot line, the
`Failures:` blocks with `Failure/Error:`, `Expected:`/`got:` and `# spec/…_spec.cr:L`,
`Finished in … milliseconds`, `N examples, M failures, 0 errors, 0 pending`, `Failed
examples:` with `crystal spec spec/…_spec.cr:L # …`), ameba (`[C] Layout/LineLength`,
"N inspected, M failures"), `crystal tool format --check`, and Benchmark.ips's report line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import Session, Voice, camel, code_file

ROOT = "/home/dev/relaycast"
SHARD = "relaycast"
VERSION = "0.7.2"
TEST = "crystal spec"
BUILD = "shards build relaycast"
BENCH = "crystal run --release bench/flush_bench.cr"
ROLE = "Crystal Shard Maintainer"
GOAL = "Keep the relaycast shard correct, formatted and lint-clean while fixing what is asked"
BACKSTORY = (
    "You maintain relaycast, a Crystal shard that delivers signed webhook envelopes to "
    "partner endpoints and parks the ones it cannot deliver. You run its specs before you "
    "call anything done."
)
#: The `feedback_instructions` slice of crewAI's translations/en.json.
FEEDBACK = (
    "User feedback: {feedback}\nInstructions: Use this feedback to enhance the next output "
    "iteration.\nNote: Do not respond or add commentary."
)
#: The `task` slice (with the `expected_output` slice in between, as the task prompt has it).
TASK = (
    "\nCurrent Task: {input}\n\nThis is the expected criteria for your final answer: {expected}"
    "\nyou MUST return the actual complete content as the final answer, not a summary.\n\n"
    "Begin! This is VERY important to you, use the tools available and give your best Final "
    "Answer, your job depends on it!\n\nThought:"
)
EXPECTED = "A short report of what was changed in the shard and what still fails."
FINAL_THOUGHT = "I now know the final answer"
#: The Task checklist tool's statuses, in the story's words, and the marks its answer shows.
STATUS = {"pending": "todo", "in_progress": "doing", "completed": "done",
          "cancelled": "dropped"}  # fmt: skip
MARK = {"todo": "[ ]", "doing": "[>]", "done": "[x]", "dropped": "[-]"}
#: What each failing example checks (`{m}` the module), the expectation, what it expected and
#: what it got, and the line of the `it` in its spec file.
EXAMPLES = {
    "retries": ("retries a timed-out {m} delivery three times", "attempts.should eq(3)",
                "3", "2", 31),
    "orders_batches": ("keeps {m} batches in enqueue order", "ids.should eq([1, 2, 3])",
                       "[1, 2, 3]", "[1, 3, 2]", 47),
    "handles_empty": ("sends nothing for an empty {m} queue", "sent.should eq(0)", "0", "1", 62),
}  # fmt: skip
_SEND = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")


def _schema(title: str, fields: Sequence[tuple[str, str, str]], required: Sequence[str]) -> str:
    """A tool's `Tool Arguments:` JSON schema, as `generate_model_description` renders it."""
    properties: dict[str, Any] = {}
    for name, kind, description in fields:
        entry: dict[str, Any] = {"description": description,
                                 "title": name.replace("_", " ").title()}  # fmt: skip
        if kind == "items":
            entry["items"] = {"additionalProperties": {"type": "string"}, "type": "object"}
            entry["type"] = "array"
        else:
            entry["type"] = kind
        properties[name] = entry
    schema = {"properties": properties, "required": list(required), "title": title,
              "type": "object"}  # fmt: skip
    return json.dumps(schema, indent=2)


#: (sanitized name, schema title, argument fields, required ones, description).
TOOLS: tuple[tuple[str, str, tuple[tuple[str, str, str], ...], tuple[str, ...], str], ...] = (
    ("read_a_files_content", "FileReadToolSchema",
     (("file_path", "string", "Mandatory file full path to read the file"),
      ("start_line", "integer", "Line number to start reading from (1-indexed)"),
      ("line_count", "integer", "Number of lines to read. If None, reads the entire file")),
     ("file_path",),
     "A tool that reads the content of a file. To use this tool, provide a 'file_path' "
     "parameter with the path to the file you want to read. Reads are confined to the tool's "
     "allowed directory; a path that resolves outside it is rejected. Optionally, provide "
     "'start_line' to start reading from a specific line and 'line_count' to limit the number "
     "of lines read."),
    ("file_writer_tool", "FileWriterToolInput",
     (("filename", "string", "The name of the file to write."),
      ("content", "string", "The text content to write to the file."),
      ("directory", "string", "The directory to write the file in."),
      ("overwrite", "string", "Whether to overwrite an existing file.")),
     ("filename", "content"),
     "A tool to write content to a specified file. Accepts filename, content, and optionally "
     "a directory path and overwrite flag as input. Writes are confined to the tool's allowed "
     "directory; a filename or directory that resolves outside it is rejected."),
    ("list_files_in_directory", "DirectoryReadToolSchema",
     (("directory", "string", "Mandatory directory to list content"),), ("directory",),
     "A tool that can be used to recursively list a directory's content."),
    ("run_shell_command", "RunShellCommandInput",
     (("command", "string", "The command line to run with bash in the shard root."),),
     ("command",),
     f"Runs a shell command in {ROOT} and returns 'exit code: N' followed by its combined "
     "stdout and stderr."),
    ("replace_text_in_file", "ReplaceTextInFileInput",
     (("file_path", "string", "The file to change, relative to the shard root."),
      ("old_text", "string", "The exact text to replace; it must occur once."),
      ("new_text", "string", "The text to put in its place.")),
     ("file_path", "old_text", "new_text"),
     "Replaces the one occurrence of old_text in a file with new_text."),
    ("search_code", "SearchCodeInput",
     (("pattern", "string", "A regular expression."),
      ("directory", "string", "Where to search, relative to the shard root.")),
     ("pattern", "directory"),
     "Searches the shard's files for a regular expression; answers path:line: text lines."),
    ("task_checklist", "TaskChecklistInput",
     (("items", "items", "Every step of the work, each {step, status}; status is one of "
       "todo, doing, done, dropped."),), ("items",),
     "Saves the checklist of steps for the current task, replacing the previous one."),
)  # fmt: skip
TOOL_NAMES = tuple(t[0] for t in TOOLS)


def system_prompt() -> str:
    described = "\n".join(
        f"Tool Name: {name}\nTool Arguments: {_schema(title, fields, required)}\n"
        f"Tool Description: {description}"
        for name, title, fields, required, description in TOOLS
    )
    return (
        f"You are {ROLE}. {BACKSTORY}\nYour personal goal is: {GOAL}"
        "\nYou ONLY have access to the following tools, and should NEVER make up tools that are "
        f"not listed here:\n\n{described}\n\nIMPORTANT: Use the following format in your "
        "response:\n\n```\nThought: you should always think about what to do\nAction: the "
        f"action to take, only one name of [{', '.join(TOOL_NAMES)}], just the name, exactly as "
        "it's written.\nAction Input: the input to the action, just a simple JSON object, "
        'enclosed in curly braces, using " to wrap keys and values.\nObservation: the result '
        "of the action\n```\n\nOnce all necessary information is gathered, return the "
        "following format:\n\n```\nThought: I now know the final answer\nFinal Answer: the "
        "final answer to the original input question\n```"
    )


def crystal_line(line: str) -> str:
    """A story line as the Crystal it stands for: the send before the fix passes a `tenant_id`
    nothing binds, the fix the batch's; a limit line is Crystal as it stands."""
    send = _SEND.match(line)
    if send:
        tenant = "batch.tenant_id" if send.group(2) else "tenant_id"
        return f"  {send.group(1)}_send(batch, {tenant})"
    return line


class CrewAIVoice(Voice):
    family = "crewai-style"
    system_prompt = system_prompt()
    src = "src"
    ext = "cr"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "crystal run scripts/replay.cr -- --queue {module} --dry-run",
        "bin/ameba src spec",
        "crystal tool format --check src spec",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("partner connect timeout", "4 seconds", "75 seconds", "25 seconds"),
        ("parked envelope batch", "40 envelopes", "560 envelopes", "120 envelopes"),
        ("dead letter retention", "3 days", "180 days", "21 days"),
        ("fiber pool size", "8 fibers", "256 fibers", "32 fibers"),
        ("HMAC clock skew allowance", "30 seconds", "900 seconds", "120 seconds"),
        ("redelivery jitter", "150 milliseconds", "2200 milliseconds", "700 milliseconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a class-level Array holding the parked envelopes in memory",
         "a Redis sorted set keyed by park time through jgaskins/redis",
         "that Array is empty again every time the worker binary restarts",
         "a parked_envelopes table in Postgres read through crystal-pg",
         "the shared Redis instance evicts keys once it nears maxmemory"),
        ("one Mutex around the whole redelivery loop", "a Channel-fed fiber per partner",
         "a single slow partner holds the Mutex while every other partner waits",
         "a bounded worker pool of fibers reading one shared Channel",
         "a fiber per partner leaves thousands of idle fibers on the big tenants"),
        ("a crontab entry that runs bin/redeliver", "a systemd timer next to the Kemal service",
         "cron silently skips the runs missed while the host was down",
         "a redelivery loop inside the Kemal process driven by a spawned fiber",
         "ops refuses to maintain one more unit file per region"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "relaycast parks webhook envelopes for {module} when a partner is down, but never "
            "redelivers them once the partner recovers. Make them go out again in the order "
            "they were parked. {other} shares that redelivery path, so fix it there too.",
            "The {module} envelopes that relaycast parked stay parked after the partner "
            "endpoint comes back. Redeliver them oldest first; {other} goes through the same "
            "code path and needs the same fix.",
        ],
        "set_value": [
            "Begin the {key} at {value}, please.",
            "For the {key}, go with {value} for the moment.",
        ],
        "ack": [
            "Understood. I will respect that for every change in this task.",
            "Acknowledged; every step from here on follows it.",
            "Got it, that rule applies to the rest of the work.",
        ],
        "continue": [
            "Looks good so far, keep working on it.",
            "Fine, go on with the rest.",
            "Carry on with the redelivery fix.",
        ],
        "paused": [
            "So far I have mapped out the redelivery path of the shard; the fix comes next.",
            "I have gone through the parking and redelivery code and will apply the fix next.",
        ],
        "noted": [
            "Acknowledged. Picking the redelivery fix up again.",
            "Understood; continuing with the parked envelopes.",
        ],
        "constraint": [
            "Hard requirement for this change: {rule}.",
            "Please hold to this throughout: {rule}.",
            "The shard's maintainers require it: {rule}.",
        ],
        "plan": [
            "The way forward is {plan}, so that {module} keeps what it parked across restarts.",
            "I am going to use {plan}; with it nothing {module} parks gets lost.",
        ],
        "change_value": [
            "A {key} of {old} is too tight for the slower partners. Raise it to {new}.",
            "The on-call team wants the {key} moved from {old} to {new}.",
            "Switch the {key} to {new}; {old} keeps paging people at night.",
        ],
        "change_again": [
            "Change the {key} one more time: {old} overwhelms the partners. Make it {new}.",
            "With {old} as the {key} the load test fell over. Go with {new}, final answer.",
            "Lower the {key} to {new}; {old} did not hold up in staging.",
        ],
        "ack_value": [
            "config/relaycast.yml now has the {key} at {new}.",
            "Updated config/relaycast.yml: the {key} is {new}.",
        ],
        "reverse": [
            "I am changing the approach: {old} cannot work, since {why}. Moving to {new}.",
            "{old} is out, because {why}. The fix will use {new} instead.",
        ],
        "reverse_again": [
            "The approach changes again: {old} has its own flaw, {why}. Going with {new} now.",
            "{old} is not good enough either, since {why}. Replacing it with {new}.",
        ],
        "question": [
            "Which commit broke redelivery? The incident report needs its hash.",
            "Track down the commit that stopped redelivery and tell me its hash for the "
            "incident review.",
        ],
        "commit": [
            "shard.yml: bump crystal-pg to 0.28",
            "spec: share the partner fixtures",
            "docs: regenerate the API docs",
            "ci: cache the lib directory",
        ],
        "answer": [
            "It is commit {sha}: it moved the partner calls onto the shared HTTP::Client pool "
            "and dropped the redelivery hook.",
            "Commit {sha} did it. It switched the partner calls to the shared HTTP::Client "
            "pool, and the redelivery hook was lost there.",
        ],
        "measure_question": [
            "Benchmark one redelivery batch with Benchmark.ips and tell me the mean time per "
            "batch. It goes into the design doc, so keep that number.",
            "How long does one redelivery batch take on average? Measure it with "
            "Benchmark.ips and keep the figure for the write-up.",
        ],
        "measure_answer": [
            "Benchmark.ips puts one redelivery batch at {figure} microseconds on average.",
            "One redelivery batch takes {figure} microseconds per Benchmark.ips.",
        ],
        "last": [
            "Stopping here: the example '{test}' still fails, and the step I am on is to "
            "{todo}. The other steps are done or dropped.",
            "Where things stand: crystal spec still fails '{test}', and my current step is to "
            "{todo}. All other checklist steps are done or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._run = False  # the executor's loop is running (no Final Answer since the input)
        self._acted = False  # the loop under way has used a tool
        self._started = False  # the task prompt has been given
        self._installed = False  # `shards install` has run
        self._read: set[str] = set()
        self._written: list[str] = []
        self._failed_before: list[str] = []

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        description = EXAMPLES[name.removeprefix(f"test_{module}_")][0].format(m=module)
        return f"{camel(module)} {description}"

    # --- the executor's messages ---------------------------------------------------------

    def _feedback(self, text: str) -> None:
        self.s.user(FEEDBACK.format(feedback=text))
        self._run, self._acted = True, False

    def _ensure_run(self) -> None:
        if not self._run:
            self._feedback(self.phrase("continue"))

    def _act(
        self, thought: str, tool: str, arguments: dict[str, Any], result: str, *, filler: bool
    ) -> None:
        """One step of the loop: the model's Thought, Action and Action Input, and the tool's
        answer appended to the same text as its Observation."""
        self._ensure_run()
        if not self._installed:
            self._installed = True
            self._shell_step("I should make sure the shard's dependencies are installed first.",
                             "shards install", self._install_output(), 0)  # fmt: skip
        self._acted = True
        text = (
            f"Thought: {thought}\nAction: {tool}\nAction Input: {json.dumps(arguments)}"
            f"\nObservation: {result}"
        )
        self.s.say(text)
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)

    def _final(self, text: str) -> None:
        self.s.say(f"Thought: {FINAL_THOUGHT}\nFinal Answer: {text}")
        self._run = False

    # --- how the human and the agent speak -----------------------------------------------

    def user(self, text: str) -> None:
        if not self._started:
            self._started = True
            self.s.user(TASK.format(input=text, expected=EXPECTED))
            self._run, self._acted = True, False
            return
        if self._run:
            # The executor asks the human only after a Final Answer.
            self._final(self.phrase("paused" if self._acted else "noted"))
        self._feedback(text)

    def say(self, text: str) -> None:
        self._ensure_run()  # after a Final Answer the human speaks first
        self._final(text)

    def finish(self, text: str) -> None:
        self._ensure_run()
        self._final(text)

    # --- the tools -----------------------------------------------------------------------

    def _shell_step(self, thought: str, command: str, output: str, exit_code: int) -> None:
        result = f"exit code: {exit_code}" + (f"\n{output}" if output else "")
        text = (
            f"Thought: {thought}\nAction: run_shell_command\nAction Input: "
            f"{json.dumps({'command': command})}\nObservation: {result}"
        )
        self.s.say(text)

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command in self.commands[1:]:
            exit_code = 1  # ameba with a failure and `format --check` with changes exit 1
        result = f"exit code: {exit_code}" + (f"\n{output}" if output else "")
        thought = self.pick([f"I need to run `{command}`.", f"Let me run `{command}` next."])
        self._act(thought, "run_shell_command", {"command": command}, result, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        text = "\n".join(crystal_line(x) for x in content.split("\n")).rstrip("\n")
        self._read.add(path)
        thought = self.pick([f"I should look at {path}.", f"Let me read {path} first."])
        self._act(thought, "read_a_files_content", {"file_path": path}, text, filler=filler)

    def _read_around(self, path: str, line: str) -> None:
        before = code_file(self.rng, "cr", 12)
        text = "\n".join([before, "def flush_parked(batch : Batch)", line, "end"])
        self._read.add(path)
        self._act(f"The compiler points into {path}; let me read it.", "read_a_files_content",
                  {"file_path": path}, text, filler=False)  # fmt: skip

    def edit(self, path: str, old: str, new: str) -> None:
        old_line, new_line = crystal_line(old), crystal_line(new)
        if path not in self._read:
            self._read_around(path, old_line)
        arguments = {"file_path": path, "old_text": old_line.strip(), "new_text": new_line.strip()}
        self._act(f"Now I will change that line in {path}.", "replace_text_in_file", arguments,
                  f"Replaced 1 occurrence in {path}", filler=False)  # fmt: skip

    def create(self, path: str, content: str) -> None:
        directory, filename = path.rsplit("/", 1)
        module = filename.removesuffix(".cr")
        text = f"# {module.replace('_', ' ')}: the parked envelopes' side of the outbox.\n"
        text += f"module Relaycast\n{content}\nend\n"
        self._written.append(path)
        arguments = {"filename": filename, "directory": directory, "content": text,
                     "overwrite": "False"}  # fmt: skip
        self._act(f"I will create {path}.", "file_writer_tool", arguments,
                  f"Content successfully written to {path}", filler=False)  # fmt: skip

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "spec/fixtures/", 1)
        destination = destination.replace("testdata/", "spec/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        self._act(f"Where is `{pattern}` used?", "search_code",
                  {"pattern": pattern, "directory": root}, "\n".join(hits),
                  filler=filler)  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        found = "\n- ".join(f"{ROOT}/{p}" for p in sorted(set(paths)))
        self._act(f"What is in {root}?", "list_files_in_directory", {"directory": root},
                  f"File paths: \n-{found}", filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        steps = [{"step": text, "status": STATUS[status]} for text, status in items]
        saved = "\n".join(f"{MARK[s['status']]} {s['step']}" for s in steps)
        self._act("I should keep the checklist of this task up to date.", "task_checklist",
                  {"items": steps}, f"Checklist saved:\n{saved}", filler=False)  # fmt: skip

    # --- what the commands print ---------------------------------------------------------

    def _install_output(self) -> str:
        shards = (("db", "0.13.1"), ("pg", "0.28.0"), ("redis", "0.10.0"), ("kemal", "1.6.0"),
                  ("ameba", "1.6.4"))  # fmt: skip
        lines = ["Resolving dependencies"]
        lines += [f"Fetching https://github.com/example-shards/{name}.git" for name, _ in shards]
        lines += [f"Installing {name} ({version})" for name, version in shards]
        lines.append("Writing shard.lock")
        return "\n".join(lines)

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return f"replay: dry run, nothing is sent\nreplay: parked={parked} eligible=0 oldest=-"
        if k == 1:
            path = self._written[-1] if self._written else f"src/{SHARD}.cr"
            column = self.rng.randint(81, 96)
            files = self.rng.randint(30, 60)
            dots = "." * (files - 1) + "F"
            return "\n".join(
                [
                    f"Inspecting {files} files",
                    "",
                    dots,
                    "",
                    f"{path}:4:{column}",
                    "[C] Layout/LineLength: Line too long",
                    "> found = parked_envelopes_for_tenant.select { |e| e.batch_id == batch.id }"
                    ".sort_by(&.parked_at)",
                    " " * column + "^",
                    "",
                    f"Finished in {self.rng.randint(150, 400)}.{self.rng.randint(10, 99)} "
                    "milliseconds",
                    f"{files} inspected, 1 failure",
                ]
            )
        path = self._written[0] if self._written else f"src/{SHARD}.cr"
        return f"formatting '{path}' produced changes"

    def build_error(self, module: str) -> tuple[str, str, str]:
        line = crystal_line(f"{module}_send(batch)")
        at = line.index("tenant_id") + 1
        number = self.rng.randint(12, 40)
        probe = "undefined local variable or method 'tenant_id'"
        output = "\n".join(
            [
                "Dependencies are satisfied",
                f"Building: {SHARD}",
                f"Error target {SHARD} failed to compile:",
                "Showing last frame. Use --error-trace for full trace.",
                "",
                f"In src/{module}.cr:{number}:{at}",
                "",
                f" {number} | {line}",
                " " * (len(str(number)) + 3 + at) + "^--------",
                f"Error: {probe} for top-level",
            ]
        )
        return output, probe, BUILD

    def build_ok(self) -> str:
        return f"Dependencies are satisfied\nBuilding: {SHARD}"

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        per_second = f"{1e6 / mean:.2f}"
        spread = f"{self.rng.randint(1, 4)}.{self.rng.randint(10, 99)}"
        output = (
            f"redeliver_batch   {per_second:>7}  ({figure}µs) (± {spread}%)  "
            f"{self.rng.randint(2, 9)}.{self.rng.randint(0, 9)}kB/op  fastest"
        )
        return output, BENCH

    def test_command(self) -> str:
        return TEST

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} examples, {failed} failures, 0 errors, 0 pending"

    @staticmethod
    def _parse(test: str) -> tuple[str, str]:
        """(module, example key) of one of the story's example names."""
        module, description = test.split(" ", 1)
        module = module.lower()
        for key, (template, *_) in EXAMPLES.items():
            if description == template.format(m=module):
                return module, key
        raise ValueError(test)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        self._failed_before = list(dict.fromkeys([*failing, *self._failed_before]))
        total = failed + passed
        marks = ["."] * total
        for k in range(len(failing)):
            marks[(k * 7 + 3) % total] = "F"
        lines = ["".join(marks), ""]
        if failing:
            lines += ["Failures:", ""]
        for n, test in enumerate(failing, 1):
            module, key = self._parse(test)
            _, expectation, expected, got, at = EXAMPLES[key]
            lines += [
                f"  {n}) {test}",
                f"     Failure/Error: {expectation}",
                "",
                f"       Expected: {expected}",
                f"            got: {got}",
                "",
                f"     # spec/{module}_spec.cr:{at + 1}",
                "",
            ]
        lines += [
            f"Finished in {self.rng.randint(2, 90)}.{self.rng.randint(10, 99)} milliseconds",
            self.test_counts(failed, passed),
        ]
        if failing:
            lines += ["", "Failed examples:", ""]
            for test in failing:
                module, key = self._parse(test)
                lines.append(f"crystal spec spec/{module}_spec.cr:{EXAMPLES[key][4]} # {test}")
        return "\n".join(lines)
