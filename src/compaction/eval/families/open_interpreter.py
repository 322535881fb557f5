"""An Open Interpreter-style family, telling the story's second-thoughts variant: a Lua 5.4
library and worker (a LuaRocks rock, specs in busted, lint by luacheck) worked on through Open
Interpreter (`interpreter`), whose model has one function and nothing else. Open Interpreter
drives Claude as readily as GPT models; the benchmark measures this family in the Anthropic
Messages dialect too (`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`), where every call is
a `tool_use` block and every result a `tool_result` block.

Where the shape comes from (the OpenInterpreter/open-interpreter sources):
- The one function, `execute` {language, code}: "Executes code on the user's machine, **in
  the users local environment**, and returns the output", `language` one of python, R,
  shell, applescript, javascript, html, powershell (`interpreter/llm/functions/schema.py`,
  and the same schema in the tool-calling loop). This story runs `shell` and `python`.
- Its result is the console output of the code and nothing more: what a shell command
  printed, with no exit status line (a failing command shows only in what it printed); what
  Python printed, the value of its last expression as Jupyter displays it (the kernel runs
  the code), and errors as Python tracebacks. An empty output is sent as "No output"
  (`convert_to_openai_messages`).
- There are no file tools: files are read with `cat`/`sed -n` or `print(open(path).read())`,
  edited with `sed -i` or Python's `str.replace` written back through `open(path, "w")` or
  `pathlib`, created with a heredoc or `Path(path).write_text(…)`, removed with `os.remove`,
  moved with `shutil.move`.
- There is no to-do tool. The default system message asks the model to start with a plan,
  and older ones to "recap the plan between each code block": the plan is a numbered list in
  the assistant's prose ("Here's the plan:" … then recaps marking steps done, in progress or
  dropped), and the assistant narrates what it is about to run ("Let me …").
The session ends on the assistant's text.

What is this family's own reading, where no source says more: the recap's markers (`— done`,
`— in progress`, `— dropped`), the assistant's narration, and the project's scripts
(`bin/replay.lua`, `bin/flush_once.lua`, `bench/flush_bench.lua`) and their output.

Tool outputs follow the real tools: busted's utfTerminal output (the `●`/`◼` dots line, `N
successes / M failures / 0 errors / 0 pending : 0.21 seconds`, then each `Failure →
spec/outbox_spec.lua @ 31` block with the test's full name, `spec/outbox_spec.lua:34:
Expected objects to be the same.`, `Passed in:` and `Expected:` with luassert's `(number) 2`
or table dumps); `luacheck`'s per-file `Checking … OK` lines and `Total: 0 warnings / 0
errors in 12 files`; `luarocks make`'s build lines and "… is now installed in …"; the Lua
interpreter's runtime error `lua: src/outbox.lua:88: attempt to index a nil value (local
'tenant')` with its stack traceback, then the run passing once the call passes the tenant.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, code_file

ROOT = "/home/dev/code/mailroom"
ROCKSPEC = "mailroom-scm-1.rockspec"
LUA = "Lua 5.4.6"
#: The run whose runtime error the story fixes, the specs, and the variant's benchmark.
FLUSH = "lua bin/flush_once.lua --queue {module}"
TEST = "busted"
BENCH = "lua bench/flush_bench.lua"
#: The runtime error of a send called without its tenant (the probe).
NIL_TENANT = "attempt to index a nil value (local 'tenant')"
#: What each failing spec expected, what it got (luassert's dumps), and its `it` line.
TESTS = {
    "retries": ("retries a timed-out delivery three times", ["(number) 3"], ["(number) 2"], 31),
    "orders_batches": (
        "keeps batches in enqueue order",
        ["(table: 0x55d0c8a3f1c0) {", "  [1] = 1", "  [2] = 2", "  [3] = 3 }"],
        ["(table: 0x55d0c8a3e2b0) {", "  [1] = 1", "  [2] = 3", "  [3] = 2 }"],
        47,
    ),
    "handles_empty": ("does nothing for an empty queue", ["(number) 0"], ["(number) 1"], 62),
}
#: How a plan step reads in the assistant's recaps, by the story's status.
PLAN_MARKS = {"completed": " — done", "in_progress": " — in progress", "pending": "",
              "cancelled": " — dropped"}  # fmt: skip
PLAN_OPENERS = ("Here's the plan:", "Recap of the plan:")
#: What the assistant says before a look around (no fact in it).
_LOOKS = (
    "Let me look at this file.",
    "Let me check how this part is wired.",
    "I'll take a quick look here before changing anything.",
    "Let me see what else touches this.",
)
_LUA_HEADER = ['local settings = require("mailroom.settings")', "", "local M = {}", ""]


def lua_line(line: str) -> str:
    """A story line as the Lua it stands for: a limit is a module local, the send before the
    fix leaves out the tenant the callee indexes."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, _ = match.groups()
    if limit.startswith("limit"):
        return f"local {module}_limit = {value}"
    return f"  {line}"


def _py(text: str) -> str:
    """A Python string literal of `text`, as the model writes one."""
    return json.dumps(text)


class OpenInterpreterVoice(Voice):
    family = "open-interpreter-style"
    system_prompt = (
        "You are Open Interpreter, a world-class programmer that can complete any goal by "
        "executing code.\nFor advanced requests, start by writing a plan.\nWhen you execute "
        "code, it will be executed **on the user's machine**. The user has given you **full "
        "and complete permission** to execute any code necessary to complete the task. "
        "Execute the code.\nYou can install new packages.\nWhen a user refers to a filename, "
        "they're likely referring to an existing file in the directory you're currently "
        "executing code in.\nWrite messages to the user in Markdown.\nIn general, try to "
        "**make plans** with as few steps as possible. As for actually executing code to "
        "carry out that plan, for *stateful* languages (like python, javascript, shell) "
        "**it's critical not to try to do everything in one code block.** You should try "
        "something, print information about it, then continue from there in tiny, informed "
        "steps.\nYou are capable of **any** task.\n\n"
        f"User's Name: dev\nUser's OS: Linux\nWorking directory: {ROOT} ({LUA}, LuaRocks "
        "3.11, busted 2.2, luacheck 1.2)"
    )
    src = "src"
    ext = "lua"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "lua bin/replay.lua --queue {module} --dry-run",
        "luacheck src spec",
        f"luarocks make --local {ROCKSPEC}",
    ]
    #: (setting, first value, second, third): no value is part of another, in its row or
    #: across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("redelivery backoff", "4 seconds", "90 seconds", "35 seconds"),
        ("poll interval", "300 ms", "5000 ms", "1600 ms"),
        ("worker coroutines", "3 coroutines", "64 coroutines", "16 coroutines"),
        ("dead-letter retention", "2 days", "45 days", "10 days"),
        ("flush batch size", "40 envelopes", "500 envelopes", "150 envelopes"),
        ("partner socket timeout", "6 sec", "120 sec", "30 sec"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a Lua table of pending envelopes kept in the worker",
         "Redis lists through redis-lua",
         "the table is empty again after every worker restart",
         "an SQLite outbox table through lsqlite3",
         "ops will not run a Redis instance for one worker"),
        ("one global lock around the dispatcher", "a separate Lua process per tenant",
         "one slow tenant holds the lock while everyone else waits",
         "per-tenant queues drained by copas coroutines in one process",
         "a process per tenant multiplies the memory and every partner connection"),
        ("a crontab entry calling the resend endpoint", "a systemd timer running bin/resend.lua",
         "cron skips its runs while the host is being patched",
         "a copas timer loop inside the worker itself",
         "a second process means a second set of partner connections"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "envelopes that {module} parks while a partner is down never go out again once "
            "the partner is back. can you make the worker resend them, oldest first? the "
            "{other} queue runs on the same code so fix it there too",
            "after the worker restarts, nothing {module} parked is ever delivered, it just "
            "stays in the outbox. please fix it. {other} is wired the same way and has the "
            "same bug",
        ],
        "set_value": [
            "start the {key} at {value}",
            "for now put the {key} at {value}",
        ],
        "ack": [
            "Okay, I'll follow that from here on.",
            "Noted. I'll work within that.",
            "Understood, I'll keep to it.",
        ],
        "constraint": [
            "one rule for this change: {rule}",
            "important: {rule}",
            "also, {rule}",
        ],
        "plan": [
            "My approach: {plan}, so that what {module} parks survives a restart. Let me "
            "start by reading the {module} module.",
            "I'll use {plan} for this. That way nothing {module} parks gets lost. First let "
            "me read the {module} code.",
        ],
        "change_value": [
            "{old} for the {key} is too aggressive for the slow partners, change it to {new}",
            "ops asked for the {key} to be {new} rather than {old}",
            "make the {key} {new}, {old} keeps tripping the alerts",
        ],
        "change_again": [
            "sorry, the {key} again: {old} is more than the partners accept. go with {new}",
            "{old} for the {key} failed the overnight soak. {new} is the final value",
            "bring the {key} down to {new}, {old} was fine on paper but not in staging",
        ],
        "ack_value": [
            "Done, `config/mailroom.lua` now has the {key} at {new}.",
            "I've set the {key} to {new} in `config/mailroom.lua`.",
        ],
        "reverse": [
            "Actually, {old} won't work here: {why}. I'm switching to {new} instead.",
            "I'm going to back out of {old}, because {why}. The new approach is {new}.",
        ],
        "reverse_again": [
            "Hmm, {old} has a problem too: {why}. So I'm changing course again, to {new}.",
            "That rules out {old} as well, since {why}. I'll go with {new}.",
        ],
        "question": [
            "which commit broke the redelivery? i need the hash for the incident notes, keep it",
            "can you find the commit that introduced this? the postmortem needs its hash",
        ],
        "commit": [
            "spec: split the fixtures per queue",
            "rockspec: pin luasocket 3.1",
            "ci: cache the luarocks tree",
            "docs: describe the replay script",
        ],
        "answer": [
            "It's {sha}. That commit moved the worker onto the shared http client and the "
            "retry wrapper went missing on the way.",
            "The commit is {sha}: it switched the worker to the shared http client and lost "
            "the retries.",
        ],
        "measure_question": [
            "how long does flushing one batch take? run the benchmark and give me the mean, "
            "i'm putting that number in the design doc so keep it",
            "benchmark a single batch flush for me and tell me the mean per op, i'll quote it "
            "in the write-up",
        ],
        "measure_answer": [
            "The benchmark puts one batch flush at {figure} us/op on average.",
            "Mean over the runs: {figure} us/op for a single batch flush.",
        ],
        "last": [
            "That's where this stands. {test} still fails, and I'm in the middle of {todo}; "
            "every other step of the plan is done or dropped.",
            "Stopping here for now. Still failing: {test}. Working on: {todo}. The rest of "
            "the plan is done or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last shown or written
        self._plans = 0  # plans and recaps written so far
        self._broken: str | None = None  # the queue whose flush fails, until it runs

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module} {TESTS[name.removeprefix(f'test_{module}_')][0]}"

    # --- the one function -----------------------------------------------------------------

    def execute(
        self, language: str, code: str, output: str, *, text: str = "", filler: bool = False
    ) -> None:
        result = output if output.strip() else "No output"
        self.s.call("execute", {"language": language, "code": code}, result, text=text,
                    filler=filler)  # fmt: skip

    def _look(self) -> str:
        return self.pick(_LOOKS) if self.rng.random() < 0.5 else ""

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # The console shows what the command printed; its exit status is not reported.
        text = self._look() if filler else "Let me run that."
        self.execute("shell", command, output, text=text, filler=filler)

    # --- files ------------------------------------------------------------------------------

    def _render(self, content: str) -> list[str]:
        return [*_LUA_HEADER, *(lua_line(x) for x in content.split("\n")), "", "return M"]

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        text = self._look() if filler else "Let me read it first."
        kind = self.rng.random()
        if kind < 0.45:
            self.execute("shell", f"cat {path}", "\n".join(lines), text=text, filler=filler)
        elif kind < 0.8 or len(lines) < 60:
            code = f"print(open({_py(path)}).read())"
            self.execute("python", code, "\n".join(lines) + "\n", text=text, filler=filler)
        else:
            last = self.rng.randint(40, len(lines) - 5)
            shown = "\n".join(lines[:last])
            self.execute("shell", f"sed -n '1,{last}p' {path}", shown, text=text, filler=filler)

    def _locate(self, path: str, before: str) -> None:
        """A `grep -n` for a line in a file the agent has not shown: the send the runtime
        error points at, called at one place, defined above it."""
        module = before.strip().split("_send", 1)[0]
        lines = [*_LUA_HEADER, *code_file(self.rng, "lua", 150).split("\n")]
        lines[85] = f"local function {module}_send(batch, tenant)"
        lines[87] = '  local key = tenant.id .. ":" .. batch.id'
        lines[120] = before
        self._seen[path] = lines
        found = f"86:{lines[85]}\n121:{before}"
        self.execute("shell", f"grep -n '{module}_send' {path}", found,
                     text="Let me find the call.")  # fmt: skip

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = lua_line(old), lua_line(new)
        if before not in self._seen.get(path, []):
            self._locate(path, before)
        lines = self._seen[path]
        count = sum(line == before for line in lines)
        self._seen[path] = [after if line == before else line for line in lines]
        old_text, new_text = before.strip(), after.strip()
        kind = self.rng.random()
        text = "Now let me make the change."
        if kind < 0.35:
            self.execute("shell", f"sed -i 's/{old_text}/{new_text}/' {path}", "", text=text)
        elif kind < 0.7:
            code = "\n".join(
                [
                    f"path = {_py(path)}",
                    "with open(path) as f:",
                    "    source = f.read()",
                    f"print(source.count({_py(old_text)}))",
                    f"source = source.replace({_py(old_text)}, {_py(new_text)})",
                    'with open(path, "w") as f:',
                    "    f.write(source)",
                ]
            )
            self.execute("python", code, f"{count}\n", text=text)
        else:
            code = "\n".join(
                [
                    "from pathlib import Path",
                    f"p = Path({_py(path)})",
                    "text = p.read_text()",
                    f"assert {_py(old_text)} in text",
                    f"p.write_text(text.replace({_py(old_text)}, {_py(new_text)}))",
                    'print("updated", p)',
                ]
            )
            self.execute("python", code, f"updated {path}\n", text=text)

    def create(self, path: str, content: str) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        body = "\n".join(lines) + "\n"
        text = "I'll create the new module."
        if self.rng.random() < 0.5:
            self.execute("shell", f"cat > {path} <<'EOF'\n{body}EOF", "", text=text)
            return
        code = f"from pathlib import Path\nPath({_py(path)}).write_text('''{body}''')"
        # Jupyter shows the last expression's value: the characters written.
        self.execute("python", code, str(len(body)), text=text)

    def delete(self, path: str) -> None:
        code = f"import os\nos.remove({_py(path)})\nprint(os.path.exists({_py(path)}))"
        self.execute("python", code, "False\n", text="That file is unused now; removing it.")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "spec/fixtures/", 1)
        destination = destination.replace("testdata/", "spec/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        code = (
            f"import os, shutil\nos.makedirs({_py(folder)}, exist_ok=True)\n"
            f"shutil.move({_py(source)}, {_py(destination)})"
        )
        text = "Moving the golden file next to the other fixtures of that queue."
        self.execute("python", code, repr(destination), text=text)

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        command = f"grep -rn {pattern} {root}"
        if self.rng.random() < 0.5:
            command = f"grep -rn --include='*.lua' '{pattern}' {root}"
        rows = []
        for hit in hits:
            where, line, code = hit.split(":", 2)
            rows.append(f"{where}:{line}:  local {pattern}s = {code.strip()}")
        self.execute("shell", command, "\n".join(rows), text=self._look(), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        listed = sorted(set(paths))
        if self.rng.random() < 0.5:
            self.execute("shell", f"find {root} -name '*.lua' | sort", "\n".join(listed),
                         text=self._look(), filler=filler)  # fmt: skip
            return
        names = sorted(p.rsplit("/", 1)[-1] for p in listed)
        code = f"import os\nsorted(os.listdir({_py(root)}))"
        self.execute("python", code, repr(names), text=self._look(), filler=filler)

    # --- the plan, in prose -----------------------------------------------------------------

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        # No to-do tool: the plan is a numbered list the assistant writes, then recaps.
        self._plans += 1
        opener = PLAN_OPENERS[0 if self._plans == 1 else 1]
        steps = [f"{n}. {item}{PLAN_MARKS[status]}" for n, (item, status) in enumerate(items, 1)]
        closing = (
            "Let me start with the first step."
            if self._plans == 1
            else "Continuing with the step in progress."
        )
        self.s.say("\n".join([opener, "", *steps, "", closing]))

    # --- what the commands print ------------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return (
                "replay: dry run, nothing is sent\n"
                f"replay: {parked} parked envelopes, 0 due for redelivery"
            )
        if k == 1:
            files = ["src/mailroom/init.lua", "src/mailroom/settings.lua", "spec/helper.lua"]
            files += [f"spec/{w}_spec.lua" for w in ("envelope", "route", "signature")]
            lines = [f"Checking {f:<40} OK" for f in files]
            return "\n".join([*lines, "", f"Total: 0 warnings / 0 errors in {len(files)} files"])
        return "\n".join(
            [
                "mailroom scm-1 depends on lua >= 5.3 (5.4-1 provided by VM)",
                "mailroom scm-1 depends on luasocket >= 3.1 (3.1.0-1 installed)",
                "mailroom scm-1 depends on lsqlite3 >= 0.9 (0.9.6-1 installed)",
                "mailroom scm-1 depends on copas >= 4.7 (4.7.1-1 installed)",
                "No existing manifest. Attempting to rebuild...",
                "mailroom scm-1 is now installed in /home/dev/.luarocks (license: MIT)",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        self._broken = module
        output = "\n".join(
            [
                f"lua: src/{module}.lua:88: {NIL_TENANT}",
                "stack traceback:",
                f"\tsrc/{module}.lua:88: in upvalue '{module}_send'",
                f"\tsrc/{module}.lua:121: in function '{module}.flush_pending'",
                "\tbin/flush_once.lua:14: in main chunk",
                "\t[C]: in ?",
            ]
        )
        return output, NIL_TENANT, FLUSH.format(module=module)

    def build_ok(self) -> str:
        module, self._broken = self._broken, None
        return f"{module}: flushed {self.rng.randint(5, 40)} envelopes, 0 left parked"

    def measurement(self, figure: str) -> tuple[str, str]:
        score = float(figure)
        runs = [score * (1 + self.rng.randint(-4, 4) / 100) for _ in range(5)]
        lines = [f"flush_bench: one batch, 2000 iterations x 5 runs ({LUA})"]
        lines += [f"run {k}: {r:.2f} us/op" for k, r in enumerate(runs, 1)]
        lines.append(f"mean: {figure} us/op")
        return "\n".join(lines), BENCH

    def test_command(self) -> str:
        return TEST

    def test_counts(self, failed: int, passed: int) -> str:
        failures = "failure" if failed == 1 else "failures"
        return f"{passed} successes / {failed} {failures} / 0 errors / 0 pending"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        total = failed + passed
        at = sorted(self.rng.sample(range(total), failed))
        dots = "".join("◼" if k in at else "●" for k in range(total))
        seconds = f"{self.rng.randint(120, 900) / 1000:.6f}"
        lines = [dots, f"{self.test_counts(failed, passed)} : {seconds} seconds", ""]
        for test in failing:
            module, name = test.split(" ", 1)
            key = next(k for k, v in TESTS.items() if v[0] == name)
            _, expected, got, line = TESTS[key]
            spec = f"spec/{module}_spec.lua"
            lines += [
                f"Failure → {spec} @ {line}",
                test,
                f"{spec}:{line + 3}: Expected objects to be the same.",
                "Passed in:",
                *got,
                "Expected:",
                *expected,
                "",
            ]
        return "\n".join(lines).rstrip("\n")
