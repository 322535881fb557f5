"""An OpenHands-style family: `execute_bash` with its exit-code footer, `str_replace_editor`
with its sub-commands (`view`, `create`, `str_replace`), `task_tracker` plans with
todo/in_progress/done, `finish`; pytest output; a user who writes in full sentences and
changes values in yet other words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Voice

ROOT = "/workspace/ledgerline"


class OpenHandsVoice(Voice):
    family = "openhands-style"
    system_prompt = (
        "You are OpenHands agent, a helpful AI assistant that can interact with a computer to "
        "solve tasks. Use execute_bash to run commands, str_replace_editor to view and edit "
        "files, and task_tracker to keep your task list; call finish when you are done."
    )
    src = "ledgerline"
    ext = "py"
    commands: ClassVar[list[str]] = [
        "python -m ledgerline.cli reconcile --module {module} --dry-run",
        "ruff check ledgerline/{module}.py",
        "make docs-{module}",
    ]
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Our {module} reconciliation job double-counts entries when it is retried. Please "
            "track down the cause and fix it; note that {other} calls the same helpers.",
            "Could you fix the {module} job? Retried runs count entries twice, and {other} "
            "goes through the same code path.",
        ],
        "set_value": ["Please use {value} as the {key}.", "For the {key}, {value} works for us."],
        "ack": ["Understood.", "Sure, I will keep that in mind.", "Got it, thanks."],
        "constraint": ["One more thing: {rule}.", "Please keep this in mind: {rule}.", "{rule}."],
        "plan": [
            "My approach: keep the pending entries in {plan} and let {module} reconcile them.",
            "I intend to stage entries in {plan}, with {module} reconciling from there.",
        ],
        "change_value": [
            "Sorry, I got that wrong earlier: the {key} needs to be {new}, not {old}.",
            "Let's go with {new} for the {key} after all ({old} was too conservative).",
            "Update on the {key}: {new} now, rather than {old}.",
        ],
        "ack_value": ["The {key} is now {new}.", "I have changed the {key} to {new}."],
        "reverse": [
            "On reflection {old} is the wrong tool here; I am moving to {new}, since {why}.",
            "I am abandoning {old} in favour of {new}: {why}.",
        ],
        "question": [
            "Which commit was it that slowed the reconciliation down? Please note the hash, "
            "I need it for the release notes.",
            "Can you tell me the hash of the commit behind the slowdown? It goes in the "
            "release notes.",
        ],
        "commit": ["Tidy imports", "Bump pydantic", "Docs touch-up", "Refactor config load"],
        "answer": ["That was {sha}.", "The slowdown came in with {sha}."],
        "last": [
            "I stopped here: {test} still fails and {todo} is still in progress; every other "
            "task is done.",
            "Summary: {todo} is in progress, {test} keeps failing, the remaining tasks are done.",
        ],
    }

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"tests/test_{module}.py::{name}"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        footer = f"[The command completed with exit code {exit_code}.]"
        text = f"{output}\n{footer}" if output else footer
        self.s.call("execute_bash", {"command": command, "is_input": "false"}, text, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        numbered = "\n".join(f"{i:6}\t{line}" for i, line in enumerate(content.split("\n"), 1))
        text = f"Here's the result of running `cat -n` on {ROOT}/{path}:\n{numbered}"
        arguments = {"command": "view", "path": f"{ROOT}/{path}"}
        self.s.call("str_replace_editor", arguments, text, filler=filler)

    def edit(self, path: str, old: str, new: str) -> None:
        arguments = {
            "command": "str_replace",
            "path": f"{ROOT}/{path}",
            "old_str": old,
            "new_str": new,
        }
        text = (
            f"The file {ROOT}/{path} has been edited. Review the changes and make sure they "
            "are as expected."
        )
        self.s.call("str_replace_editor", arguments, text)

    def create(self, path: str, content: str) -> None:
        arguments = {"command": "create", "path": f"{ROOT}/{path}", "file_text": content}
        self.s.call("str_replace_editor", arguments, f"File created successfully at: {ROOT}/{path}")

    def delete(self, path: str) -> None:
        self.shell(f"rm {ROOT}/{path}", "")

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        status = {"pending": "todo", "in_progress": "in_progress", "completed": "done"}
        task_list = [
            {"id": str(i), "title": text, "status": status[state]}
            for i, (text, state) in enumerate(items, 1)
        ]
        self.s.call(
            "task_tracker",
            {"command": "plan", "task_list": task_list},
            "Task list has been updated.",
        )

    def finish(self, text: str) -> None:
        self.s.call("finish", {"message": text}, "")

    def command_output(self, k: int) -> str:
        return ["reconciled 240 entries (0 duplicates)",
                "All checks passed!",
                "docs built in 2.4s"][k]  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = f"ImportError: cannot import name 'reconcile_batch' from 'ledgerline.{module}'"
        line = f'Traceback (most recent call last):\n  File "<string>", line 1\n{probe}'
        return line, probe, f"python -c 'import ledgerline.{module}'"

    def build_ok(self) -> str:
        return ""

    def test_command(self) -> str:
        return "python -m pytest -q tests"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed} failed, {passed} passed"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = [*(f"FAILED {t} - AssertionError: totals differ" for t in failing)]
        lines.append(f"{self.test_counts(failed, passed)} in 3.41s")
        return "\n".join(lines)
