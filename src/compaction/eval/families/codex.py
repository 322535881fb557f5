"""A Codex-CLI-style family: `shell` with argv lists and a workdir, `apply_patch` with
`*** Update/Add/Delete File:` patch text, `update_plan` steps; JSON tool outputs with exit
codes; cargo test output; a terse user."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Voice

WORKDIR = "/workspace/tollgate"


class CodexVoice(Voice):
    family = "codex-style"
    system_prompt = (
        "You are Codex, a coding agent running in a terminal. You and the user share the same "
        "workspace. Use the shell tool to run commands and apply_patch to edit files; keep "
        "the plan up to date with update_plan."
    )
    src = "crates/core/src"
    ext = "rs"
    commands: ClassVar[list[str]] = [
        "cargo clippy -p core -- -D warnings",
        "cargo run -p cli -- sync --tenant acme --module {module}",
        "just bench-{module}",
    ]
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "the {module} sync drops requests when upstream is slow. find out why and fix it. "
            "{other} shares the retry logic",
            "fix the {module} sync, it loses requests under load ({other} is involved too)",
        ],
        "set_value": ["{key} should be {value}", "go with {value} for the {key}"],
        "ack": ["ok.", "noted.", "will do."],
        "constraint": ["{rule}", "fyi {rule}", "and {rule}"],
        "plan": [
            "Plan: queue pending requests in {plan}, then have {module} drain the queue.",
            "I'll buffer requests in {plan} and drain them from {module}.",
        ],
        "change_value": [
            "make it {new} instead of {old} for the {key}",
            "{key}: {new}, not {old}",
            "bump the {key} to {new} (was {old})",
        ],
        "ack_value": ["{key} set to {new}.", "Using {new} for the {key}."],
        "reverse": [
            "Scrap {old}. Switching to {new}: {why}.",
            "Dropping the {old} approach and switching to {new}, because {why}.",
        ],
        "question": [
            "which commit introduced the timeout regression? keep the hash, it goes in the "
            "changelog",
            "need the hash of the commit that broke the timeouts, for the changelog",
        ],
        "commit": ["chore: fmt", "deps: bump tokio", "docs", "refactor: config"],
        "answer": ["It is {sha}.", "{sha}: it moved the timeouts onto the shared client."],
        "last": [
            "Stopped with {test} still failing and {todo} in progress. All other plan steps "
            "are complete.",
            "Handing off: {test} still fails, {todo} is in progress, the rest is done.",
        ],
    }

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module}::tests::{name}"

    def _out(self, output: str, exit_code: int) -> str:
        metadata = {"exit_code": exit_code, "duration_seconds": round(self.rng.uniform(0.1, 9), 1)}
        return json.dumps({"output": output, "metadata": metadata})

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        arguments = {"command": ["bash", "-lc", command], "workdir": WORKDIR, "timeout_ms": 120000}
        self.s.call("shell", arguments, self._out(output, exit_code), filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        self.shell(f"sed -n 1,200p {path}", content, filler=filler)

    def _patch(self, body: str, changed: str) -> None:
        patch = f"*** Begin Patch\n{body}\n*** End Patch"
        self.s.call(
            "apply_patch",
            {"input": patch},
            self._out(f"Success. Updated the following files:\n{changed}\n", 0),
        )

    def edit(self, path: str, old: str, new: str) -> None:
        self._patch(f"*** Update File: {path}\n@@\n-{old}\n+{new}", f"M {path}")

    def create(self, path: str, content: str) -> None:
        added = "\n".join(f"+{line}" for line in content.split("\n"))
        self._patch(f"*** Add File: {path}\n{added}", f"A {path}")

    def delete(self, path: str) -> None:
        self._patch(f"*** Delete File: {path}", f"D {path}")

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        plan = [{"step": text, "status": status} for text, status in items]
        explanation = self.pick(["Updating the plan.", "Progress so far.", ""])
        self.s.call("update_plan", {"explanation": explanation, "plan": plan}, "Plan updated")

    def command_output(self, k: int) -> str:
        return ["    Checking core v0.4.1\n    Finished dev [unoptimized] target(s) in 3.80s",
                "synced 12 requests (0 skipped)",
                "bench: 48,120 ops/s (+3.1%)"][k]  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = "error[E0061]: this function takes 2 arguments but 1 argument was supplied"
        line = f"{probe}\n  --> crates/core/src/{module}.rs:88:9\nerror: could not compile core"
        return line, probe, "cargo build -p core"

    def build_ok(self) -> str:
        return "   Compiling core v0.4.1\n    Finished dev [unoptimized] target(s) in 6.21s"

    def test_command(self) -> str:
        return "cargo test -p core"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{passed} passed; {failed} failed"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = [f"running {failed + passed} tests"]
        lines += [f"test {t} ... FAILED" for t in failing]
        lines += ["", "failures:", *(f"    {t}" for t in failing), ""]
        lines.append(
            f"test result: FAILED. {self.test_counts(failed, passed)}; 0 ignored; 0 measured; "
            "0 filtered out; finished in 1.32s"
        )
        return "\n".join(lines)
