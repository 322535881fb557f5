"""A Claude-Code-style family: Bash/Read/Edit/Write/TodoWrite with absolute `file_path`
arguments, `cat -n` file views, pytest output, a TodoWrite list changing status over time."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Voice

ROOT = "/home/dev/ledgerd/"


class ClaudeCodeVoice(Voice):
    family = "cc-style"
    system_prompt = (
        "You are an interactive CLI tool that helps users with software engineering tasks. "
        "Use the instructions below and the tools available to you to assist the user. "
        "Use the TodoWrite tool to plan and track tasks. Working directory: /home/dev/ledgerd"
    )
    src = "src/ledgerd"
    ext = "py"
    commands: ClassVar[list[str]] = [
        "alembic upgrade head --sql",
        "ruff check src/ledgerd/{module}.py --fix",
        "python -m ledgerd.{module} --dry-run --tenant acme",
    ]
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "The {module} worker drops batches when the provider is slow. Can you track down "
            "why and fix it? The {other} module is probably involved too.",
            "I need the {module} worker to stop losing batches under load. Look at {other} "
            "as well, it shares the retry code.",
        ],
        "set_value": [
            "For this work the {key} should be {value}.",
            "Use a {key} of {value} for now.",
        ],
        "ack": ["Understood.", "Got it, I'll keep that in mind.", "Okay."],
        "constraint": ["One more thing: {rule}.", "Also, {rule}.", "Please note that {rule}."],
        "plan": [
            "I'll move the retry queue to {plan}, then make the {module} worker read from it.",
            "My plan is to put pending batches in {plan} and let {module} drain them.",
        ],
        "change_value": [
            "Actually, make the {key} {new} instead of {old}.",
            "Change of plan on the {key}: make it {new} instead of {old}.",
            "Hmm, {old} is not right for the {key}, make it {new}.",
        ],
        "ack_value": ["Updated: the {key} is {new} now.", "I'll use {new} for the {key}."],
        "reverse": [
            "Looking at the deployment, scrap the {old} idea. I'm switching to {new} instead, "
            "because {why}.",
            "Scrap {old}: switching to {new}, since {why}.",
        ],
        "question": [
            "Which commit did the timeout regression come in with? Keep that hash around, "
            "it goes in the changelog.",
            "Can you find the commit that introduced the timeout regression? I want the hash "
            "for the release notes.",
        ],
        "commit": ["tidy imports", "bump deps", "docs: typo", "refactor config loading"],
        "answer": [
            "It is {sha}. That commit switched the timeouts to the shared client.",
            "The regression came in with {sha}, the commit that moved timeouts to the shared "
            "client.",
        ],
        "last": [
            "Stopping here with {test} still failing and {todo} in progress. The rest of the "
            "list is done; see the to-do list for details.",
            "I have left {test} failing for now and {todo} is still in progress. Everything "
            "else on the list is finished.",
        ],
    }

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"tests/test_{module}.py::{name}"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        shown = output if exit_code == 0 else f"Exit code {exit_code}\n{output}"
        description = self.pick(["Run the command", "Check the output", "Inspect"])
        self.s.call("Bash", {"command": command, "description": description}, shown, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        numbered = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(content.split("\n"), 1))
        self.s.call("Read", {"file_path": ROOT + path}, numbered, filler=filler)

    def edit(self, path: str, old: str, new: str) -> None:
        result = (
            f"The file {ROOT + path} has been updated. Here's the result of running `cat -n` "
            f"on a snippet of the edited file:\n    41\u2192{new}"
        )
        self.s.call(
            "Edit", {"file_path": ROOT + path, "old_string": old, "new_string": new}, result
        )

    def create(self, path: str, content: str) -> None:
        self.s.call(
            "Write",
            {"file_path": ROOT + path, "content": content},
            f"File created successfully at: {ROOT + path}",
        )

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        todos = [
            {"content": text, "status": status, "activeForm": text[:1].upper() + text[1:]}
            for text, status in items
        ]
        self.s.call(
            "TodoWrite",
            {"todos": todos},
            "Todos have been modified successfully. Ensure that you continue to use the todo "
            "list to track your progress. Please proceed with the current tasks if applicable",
        )

    def command_output(self, k: int) -> str:
        return ["-- running upgrade 3f2a -> 9c1d\nALTER TABLE batches ADD COLUMN tenant_id TEXT;",
                "Found 3 errors (3 fixed, 0 remaining).",
                json.dumps({"would_send": 12, "skipped": 0})][k]  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = f"{module}_send() missing 1 required positional argument"
        line = (
            "Traceback (most recent call last):\n"
            f'  File "/home/dev/ledgerd/src/ledgerd/{module}.py", line 88, in run\n'
            f"TypeError: {probe}: 'tenant_id'"
        )
        return line, probe, f"python -m ledgerd.{module} --check"

    def build_ok(self) -> str:
        return "ok: 14 handlers registered"

    def test_command(self) -> str:
        return "python -m pytest -q tests"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed} failed, {passed} passed"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        dots = "." * min(passed, 40) + "F" * failed
        lines = [dots, "", "=" * 20 + " short test summary info " + "=" * 20]
        lines += [f"FAILED {t} - AssertionError: assert 0 == 1" for t in failing]
        lines.append(f"{'=' * 10} {self.test_counts(failed, passed)} in 4.12s {'=' * 10}")
        return "\n".join(lines)
