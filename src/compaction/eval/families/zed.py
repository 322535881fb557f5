"""A Zed-style family, telling the story's second-thoughts variant: an Elixir service (Mix,
ExUnit, Credo) worked on through the built-in tools of Zed's agent panel, by a user who
writes long, chatty messages and an assistant who changes course in words no other family
uses.

Tools and argument shapes, as Zed's agent declares them in its autumn-2025 releases
(zed-industries/zed, `crates/agent2/src/tools/*.rs`; `docs/src/ai/tools.md`). Every path is
project-relative and starts with the name of a worktree root (`switchyard/lib/...`), as the
tools' schemas and the system prompt require:

- `terminal` {command, cd} (`terminal_tool.rs`): `cd` names the root the command runs in;
  the result is the output in a bare fence, "Command executed successfully." when a
  successful command printed nothing, and `Command "<command>" failed with exit code N.`
  before the fence when it failed.
- `read_file` {path, start_line, end_line} (`read_file_tool.rs`): the file's text (or the
  given 1-based, inclusive line range) as the result.
- `edit_file` {display_description, path, mode: edit | create | overwrite}
  (`edit_file_tool.rs`): the tool call carries no text; a second model writes the edit from
  `display_description`, and the result is "Edited <path>:" and the change as a fenced diff.
- `delete_path` {path}: "Deleted <path>"; `move_path` {source_path, destination_path}:
  "Moved <source> to <destination>".
- `grep` {regex, include_pattern} (`grep_tool.rs`): "Found N matches:", then a
  `## Matches in <path>` heading per file and `### L<n>` with the lines fenced, 20 matches a
  page ("Showing matches 1-20 (there were more matches found; use offset: 20 …").
- `find_path` {glob}: "Found N total matches." and one path a line;
  `list_directory` {path}: `# Folders:` / `# Files:` sections of root-prefixed paths.
- `diagnostics` {path}: `warning at line N: …` / `error at line N: …` lines, or "File doesn't
  have errors or warnings!"; `thinking` {content}: "Finished thinking.".

Those releases have no to-do or plan tool (later ones add `update_plan` {title, steps} with
pending / in_progress / completed only, `crates/agent/src/tools/update_plan_tool.rs`; this
family keeps to the releases before it) and no final-answer tool: the assistant writes its
plan as a numbered list in its own messages and restates it with ticks, and the session ends
on the assistant's text. Builds and tests run under Mix: `mix compile` (Elixir 1.17's
`warning:` / `error: undefined function …` blocks, `** (CompileError)`), `mix test` (ExUnit's
numbered failures, "Finished in 0.4 seconds (…)", "42 tests, 1 failure", exit status 2).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Session, Voice, camel

#: The worktree's root name: the first component of every path the tools take.
ROOT_NAME = "switchyard"
ROOT = f"/Users/dev/work/{ROOT_NAME}"
#: The first line of the assistant's plan messages (`todos`): the first, then the restated.
PLAN_OPENERS = ("The plan, step by step:", "The plan again, ticked where I'm done:")
#: Plan status → how the assistant writes step `n`.
PLAN_LINES = {
    "completed": "{n}. ✓ {text}",
    "in_progress": "{n}. {text} ← now",
    "pending": "{n}. {text}",
    "cancelled": "{n}. ~~{text}~~ (no longer needed)",
}
#: A path at the start of a shell word that names the root: the terminal runs inside it.
_ROOTED = re.compile(rf"(?<![\w/.-]){ROOT_NAME}/")


def _in_root(text: str) -> str:
    """`switchyard/lib/x.ex` as a command run in the root sees it: `lib/x.ex`."""
    return _ROOTED.sub("", text)


def _rooted(path: str) -> str:
    return path if path.startswith(f"{ROOT_NAME}/") else f"{ROOT_NAME}/{path}"


class ZedVoice(Voice):
    family = "zed-style"
    system_prompt = (
        "You are a highly skilled software engineer with extensive knowledge in many "
        "programming languages, frameworks, design patterns, and best practices.\n\n"
        "## Tool Use\n\nMake sure to adhere to the tools schema and provide every required "
        "argument.\n\n## Searching and Reading\n\nThe current project contains the following "
        f"root directories:\n\n- `{ROOT}`\n\nWhen providing paths to tools, the path should "
        "always start with the name of a project root directory listed above. When looking "
        "for symbols in the project, prefer the `grep` tool.\n\n## Fixing Diagnostics\n\n"
        "Make 1-2 attempts at fixing diagnostics, then defer to the user.\n\n"
        "## System Information\n\nOperating System: macos"
    )
    src = f"{ROOT_NAME}/lib/{ROOT_NAME}"
    ext = "ex"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "mix switchyard.replay --module {module} --dry-run",
        "mix credo --strict lib/switchyard/{module}.ex",
        "mix xref trace lib/switchyard/{module}.ex --label runtime",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another in its row, so a stale value never hides in a later one.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("carrier send timeout", "4 seconds", "9 seconds", "6 seconds"),
        ("mailbox high-water mark", "500 messages", "2000 messages", "1200 messages"),
        ("restart intensity", "3 restarts", "10 restarts", "5 restarts"),
        ("fan-out chunk size", "50 texts", "200 texts", "120 texts"),
        ("poll jitter", "300 ms", "1100 ms", "650 ms"),
        ("receipt TTL", "3 hours", "48 hours", "12 hours"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an ETS table owned by the supervisor", "a Mnesia disc_copies table",
         "the ETS table dies with the node, so a full restart still drops the queue",
         "Oban jobs in Postgres",
         "Mnesia needs manual healing after every netsplit and nobody here knows how"),
        ("a demand-driven GenStage producer", "Broadway with the RabbitMQ producer",
         "hand-rolled demand tracking loses the batch in flight when the producer crashes",
         "a Task.Supervisor draining a Postgres-backed queue",
         "the RabbitMQ cluster is being retired next quarter"),
        ("bookkeeping in the adapter's process dictionary", "a :persistent_term snapshot",
         "the process dictionary goes away with the adapter every time it crashes",
         "a DETS file per carrier",
         "every :persistent_term update triggers a global garbage collection"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Morning! So here's the thing that has been bugging the on-call folks all week: "
            "whenever one of the carrier adapters crashes, {module} comes back up under its "
            "supervisor but never picks its queue back up, and the texts just sit there until "
            "somebody bounces the node by hand. I'd love for you to dig through it and untangle "
            "it properly, and while you're in there give {other} the same once-over, because "
            "as far as I remember it registers itself in the same Registry and probably has "
            "the same blind spot.",
            "Okay, longer story, bear with me: since the last deploy, texts queued in {module} "
            "go nowhere after a carrier adapter restarts, the process looks alive and well in "
            "observer but nothing ever leaves the queue, and support has been fielding angry "
            "tickets about one-time codes that never arrived. Could you work out why, and make "
            "the fix stick this time? I suspect {other} is in the same boat "
            "since it hangs off the same supervision tree, so please don't leave it out.",
        ],
        "set_value": [
            "Before you get going, and I realise this is a bit arbitrary, let's pencil in "
            "{value} for the {key} so we have something concrete to test against; we can "
            "always revisit it once we see how it behaves.",
            "One practical thing while I think of it: we'll want the {key} sitting at {value} "
            "to start with, which is roughly what the old Ruby service used, if memory serves.",
        ],
        "ack": [
            "Sure thing, that's on my radar now.",
            "Fair enough, I'll work within that.",
            "All clear, I'll respect that as I go.",
        ],
        "constraint": [
            "Oh, and this matters more than it sounds, so please take it seriously: {rule}.",
            "Something the platform team will absolutely hold us to, and I've been burned by "
            "it before: {rule}.",
            "While I remember, because it bit us last quarter: {rule}.",
        ],
        "plan": [
            "The approach I'll try first: hand the queued texts to {plan}, letting {module} "
            "pick them up again after a restart.",
            "Here's my opening move: {plan} holds the queue, and {module} re-reads it from "
            "there whenever its supervisor brings it back.",
        ],
        "change_value": [
            "I talked this over with the carrier's account manager and {old} for the {key} "
            "is going to get us throttled, so I'd rather we had {new} there.",
            "Having slept on it, {old} feels off for the {key}; could you move it to {new}? "
            "That lines up with what the carrier documents.",
            "Small correction from the ops channel: they want the {key} at {new}, because {old} "
            "trips their alerting.",
        ],
        "change_again": [
            "Sorry to flip-flop on you, but the ops folks came back once more about the {key} "
            "after the load test: {old} is more than the smaller nodes can take, so {new} is "
            "where they'd like it.",
            "Right, last adjustment on the {key}, I promise, and then I'll leave it alone: "
            "{new}, because {old} proved too much for the smaller carriers.",
            "The carrier replied to my email, and the {key} they can live with is {new}, not "
            "the {old} I passed along earlier.",
        ],
        "ack_value": [
            "All right, the {key} goes in as {new}.",
            "Okay, I'm putting the {key} down as {new}.",
        ],
        "reverse": [
            "I've hit a wall with {old}: {why}. So I'm rebuilding the queue on {new}.",
            "Plot twist, I'm afraid: {why}, which rules out {old}. I'm moving the queue to {new}.",
        ],
        "reverse_again": [
            "And {old} runs aground on something else: {why}. Third time lucky: {new}.",
            "I have to walk back {old} too: {why}. The queue lands on {new} instead.",
        ],
        "question": [
            "Completely separate question, but it would help me a lot: somewhere in the history "
            "there's a commit that made the queue stop draining, and I'd like to know which "
            "one it was. The retro doc we're writing on Friday has a blank where its hash "
            "goes, so keep it somewhere you won't lose it.",
            "Before I forget, our retro on Friday wants the exact point in history where the "
            "queue stopped draining, so if you could pin down that commit and jot its hash "
            "somewhere safe I'd owe you one.",
        ],
        "commit": [
            "chore: mix deps.update",
            "test: tag slow cases",
            "docs: moduledoc pass",
            "ci: cache _build",
        ],
        "answer": [
            "Tracked it: the stuck queue dates from {sha}, where the adapter's restart "
            "strategy changed to :temporary.",
            "{sha} is the one; it flipped the adapter's restart strategy to :temporary.",
        ],
        "measure_question": [
            "Unrelated to the bug itself, but my manager keeps asking: how long does a single "
            "fan-out batch take on average in the Benchee run? Please keep that number "
            "around, it's going into the quarterly planning deck.",
            "If you have a minute, could you run the fan-out benchmark and tell me the "
            "average time per batch? It's a line item in the planning deck next week, so "
            "don't let it slip away.",
        ],
        "measure_answer": [
            "Benchee's average for one fan-out batch: {figure} ms.",
            "One fan-out batch averages {figure} ms in the Benchee run.",
        ],
        "last": [
            "That's where I'll leave it for now: I'm partway through {todo} and {test} has "
            "yet to pass. Each remaining step is ticked or struck.",
            "I'll hand back to you here with two loose ends, {todo} (started) and {test} (not "
            "passing yet). No other step is left hanging: each is ticked or struck out.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._plans = 0
        self._edits = 0

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        words = name.removeprefix(f"test_{module}_").replace("_", " ")
        return f"test {words} (Switchyard.{camel(module)}Test)"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # The terminal runs inside the root, so paths in it lose the root's name.
        command, output = _in_root(command), _in_root(output).strip()
        if command.startswith("mix test") and exit_code:
            exit_code = 2  # ExUnit's exit status when tests fail
        fenced = f"```\n{output}\n```"
        if exit_code:
            result = f'Command "{command}" failed with exit code {exit_code}.\n\n{fenced}'
        else:
            result = fenced if output else "Command executed successfully."
        arguments = {"command": command, "cd": ROOT_NAME}
        self.s.call("terminal", arguments, result, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        arguments: dict[str, object] = {"path": _rooted(path)}
        if filler and self.rng.random() < 0.3:
            lines = content.split("\n")
            start = self.rng.randint(1, max(1, len(lines) // 3))
            arguments |= {"start_line": start, "end_line": len(lines)}
            content = "\n".join(lines[start - 1 :])
        self.s.call("read_file", arguments, content, filler=filler)

    def _edit_file(self, path: str, mode: str, description: str, diff: str) -> None:
        arguments = {"display_description": description, "path": path, "mode": mode}
        self.s.call("edit_file", arguments, f"Edited {path}:\n\n```diff\n{diff}\n```")

    def edit(self, path: str, old: str, new: str) -> None:
        self._edits += 1
        line = self.rng.randint(20, 90)
        diff = f"@@ -{line},3 +{line},3 @@\n   # ...\n-{old}\n+{new}\n   # ..."
        if "tenant_id" in new and "tenant_id" not in old:
            description = "Pass `tenant_id` through to the send call"
        else:
            description = f"Read `{old.partition(' = ')[0]}` from config instead of a literal"
        # Every third edit rewrites the file whole, as the model may ask for.
        mode = "overwrite" if self._edits % 3 == 0 else "edit"
        self._edit_file(path, mode, description, diff)
        if self._edits % 2:
            self._diagnostics(path)

    def _diagnostics(self, path: str) -> None:
        if self._edits == 1:
            text = (
                f'warning at line {self.rng.randint(10, 60)}: variable "attempt" is unused '
                "(if the variable is not meant to be used, prefix it with an underscore)\n"
            )
        else:
            text = "File doesn't have errors or warnings!"
        self.s.call("diagnostics", {"path": path}, text)

    def create(self, path: str, content: str) -> None:
        lines = content.split("\n")
        diff = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(f"+{line}" for line in lines)
        name = path.rsplit("/", 1)[-1].removesuffix(f".{self.ext}")
        self._edit_file(path, "create", f"Add the `{camel(name)}` module", diff)

    def delete(self, path: str) -> None:
        self.s.call("delete_path", {"path": _rooted(path)}, f"Deleted {_rooted(path)}")

    def move(self, source: str, destination: str) -> None:
        source, destination = _rooted(source), _rooted(destination)
        arguments = {"source_path": source, "destination_path": destination}
        self.s.call("move_path", arguments, f"Moved {source} to {destination}")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        shown = list(hits)[:20]
        grouped: dict[str, list[str]] = {}
        for hit in shown:
            path, line, text = hit.split(":", 2)
            grouped.setdefault(path, []).append(f"\n### L{line}\n```\n{text.strip()}\n```\n")
        body = "".join(f"\n## Matches in {path}\n" + "".join(m) for path, m in grouped.items())
        if len(hits) > len(shown):
            head = (
                f"Showing matches 1-{len(shown)} (there were more matches found; use offset: "
                f"{len(shown)} to see next page):\n"
            )
        else:
            head = f"Found {len(shown)} matches:\n"
        arguments = {"regex": pattern, "include_pattern": f"{root}/**/*.{self.ext}"}
        self.s.call("grep", arguments, head + body, filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = sorted(set(paths))
        if self.rng.random() < 0.5:
            text = "\n# Files:\n" + "\n".join(unique) + "\n"
            self.s.call("list_directory", {"path": root}, text, filler=filler)
            return
        text = f"Found {len(unique)} total matches.\n" + "\n".join(unique)
        self.s.call("find_path", {"glob": f"{root}/**/*.{self.ext}"}, text, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        # No plan tool: the plan lives in the assistant's own messages, numbered.
        self._plans += 1
        if self._plans == 1:
            thought = (
                "The adapter restarts under a one_for_one supervisor, but the queue lives in "
                "the state of the process that crashed. Work out where the queue should "
                "outlive the process, then fix the callers one at a time."
            )
            self.s.call("thinking", {"content": thought}, "Finished thinking.")
        opener = PLAN_OPENERS[0 if self._plans == 1 else 1]
        lines = [opener, ""]
        lines += [
            PLAN_LINES[status].format(n=n, text=text) for n, (text, status) in enumerate(items, 1)
        ]
        self.s.say("\n".join(lines))

    def command_output(self, k: int) -> str:
        return [
            "dry run: 0 of 37 queued texts would be re-sent",
            "Checking 1 source file ...\n\nAnalysis took 0.1 seconds (0.04s to load, 0.06s "
            "running 55 checks on 1 file)\n14 mods/funs, found no issues.",
            "lib/switchyard/registry.ex:31: call Registry.lookup/2 (runtime)\n"
            "lib/switchyard/registry.ex:44: call GenServer.cast/2 (runtime)",
        ][k]

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = f"undefined function {module}_send/1"
        where = f"lib/switchyard/{module}.ex"
        name = f"Switchyard.{camel(module)}"
        output = (
            "Compiling 4 files (.ex)\n"
            '    warning: variable "attempt" is unused (if the variable is not meant to be '
            "used, prefix it with an underscore)\n"
            "    │\n 52 │   defp schedule_retry(attempt, state) do\n"
            "    │                       ~~~~~~~\n    │\n"
            f"    └─ {where}:52:23: {name}.schedule_retry/2\n\n"
            f"    error: {probe} (expected {name} to define such a function or for it to be "
            "imported, but none are available)\n"
            f"    │\n 88 │     {module}_send(batch)\n    │     ^\n    │\n"
            f"    └─ {where}:88:5: {name}.handle_info/2\n\n\n"
            f"== Compilation error in file {where} ==\n"
            f"** (CompileError) {where}: cannot compile module {name} (errors have been logged)"
        )
        return output, probe, "mix compile"

    def build_ok(self) -> str:
        return "Compiling 1 file (.ex)\nGenerated switchyard app"

    def measurement(self, figure: str) -> tuple[str, str]:
        ips = 1000 / float(figure)
        line = (
            "Operating System: macOS\nCPU Information: Apple M2 Pro\n"
            "Number of Available Cores: 12\nElixir 1.17.3\nErlang 27.1\n\n"
            "Benchmark suite executing with the following configuration:\n"
            "warmup: 2 s\ntime: 10 s\nmemory time: 0 ns\nparallel: 1\n\n"
            "Name                  ips        average  deviation         median         99th %\n"
            f"fanout_1000          {ips:.2f}      {figure} ms     ±3.87%      "
            f"{float(figure) * 0.98:.2f} ms      {float(figure) * 1.12:.2f} ms"
        )
        return line, "mix run bench/fanout_bench.exs"

    def test_command(self) -> str:
        return "mix test"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} tests, {failed} failure{'' if failed == 1 else 's'}"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = [f"Running ExUnit with seed: {self.rng.randint(10000, 999999)}, max_cases: 24", ""]
        lines.append("." * min(passed, 30))
        for n, t in enumerate(failing, 1):
            module = t.rsplit("(Switchyard.", 1)[1].removesuffix("Test)").lower()
            spec = f"test/switchyard/{module}_test.exs"
            lines += [
                "",
                f"  {n}) {t}",
                f"     {spec}:41",
                "     Assertion with == failed",
                "     code:  assert length(delivered) == 1",
                "     left:  0",
                "     right: 1",
                "     stacktrace:",
                f"       {spec}:47: (test)",
            ]
        lines += [
            "",
            "." * max(0, passed - 30),
            "Finished in 0.4 seconds (0.1s async, 0.3s sync)",
            self.test_counts(failed, passed),
        ]
        return "\n".join(lines)
