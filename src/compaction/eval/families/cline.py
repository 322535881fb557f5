"""A Cline/Gemini-style family: `execute_command`, `read_file` (`path`), `write_to_file` and
`replace_in_file` (`absolutePath`, SEARCH/REPLACE diff text), results as plain text, a
`task_progress` checklist riding on tool calls, `attempt_completion` at the end; jest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Voice

ROOT = "/Users/dev/harbor-portal/"


class ClineVoice(Voice):
    family = "cline-style"
    system_prompt = (
        "You are Cline, a highly skilled software engineer. You use tools one at a time to "
        "accomplish a task, and confirm each result before the next step. When the task is "
        "done, use attempt_completion to present the result."
    )
    src = "src/lib"
    ext = "ts"
    commands: ClassVar[list[str]] = [
        "npm run lint -- --fix src/lib/{module}.ts",
        "npx prisma migrate dev --name add_{module}_table",
        "npm run seed -- --only {module}",
    ]
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "<task>\nThe {module} service loses uploads when the storage API is slow. Please "
            "investigate and fix it; the {other} helper shares the retry code.\n</task>",
            "<task>\nUploads through {module} get lost under load. Please find the cause and "
            "fix it (see {other} as well).\n</task>",
        ],
        "set_value": [
            "<feedback>\nPlease set the {key} to {value}.\n</feedback>",
            "<feedback>\nThe {key} needs to be {value}.\n</feedback>",
        ],
        "ack": ["I will take that into account.", "Understood, proceeding."],
        "constraint": [
            "<feedback>\nPlease keep in mind: {rule}.\n</feedback>",
            "<feedback>\nImportant for this project: {rule}.\n</feedback>",
        ],
        "plan": [
            "I will store pending uploads in {plan} and have {module} process them in order.",
            "My approach: persist pending uploads with {plan}, then let {module} drain them.",
        ],
        "change_value": [
            "<feedback>\nPlease make the {key} {new} instead of {old}.\n</feedback>",
            "<feedback>\nOn second thought, {old} is wrong for the {key}. Use {new}.\n</feedback>",
        ],
        "ack_value": ["I will use {new} for the {key}.", "The {key} is now {new}."],
        "reverse": [
            "After reviewing the deployment, I will scrap {old} and am switching to {new}, "
            "because {why}.",
            "Scrap the {old} plan: switching to {new}, as {why}.",
        ],
        "question": [
            "<feedback>\nWhich commit introduced the timeout regression? Please keep the hash, "
            "we need it for the changelog.\n</feedback>",
        ],
        "commit": ["chore: lint", "build(deps): bump axios", "docs: readme", "refactor: env"],
        "answer": ["It is {sha}.", "The regression was introduced by {sha}."],
        "last": [
            "The upload fix is in place, but {test} still fails and {todo} is in progress. "
            "All other checklist items are complete.",
            "Uploads no longer get lost, although {test} is still failing and {todo} is in "
            "progress. The remaining checklist items are complete.",
        ],
    }

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return name.replace("_", " ")

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        status = "" if exit_code == 0 else f"Exit code: {exit_code}\n"
        result = f"Command executed.\n{status}Output:\n{output or '(no output)'}"
        self.s.call(
            "execute_command", {"command": command, "requires_approval": False}, result,
            filler=filler,
        )  # fmt: skip

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        self.s.call("read_file", {"path": path}, content, filler=filler)

    def edit(self, path: str, old: str, new: str) -> None:
        diff = f"------- SEARCH\n{old}\n=======\n{new}\n+++++++ REPLACE"
        self.s.call(
            "replace_in_file",
            {"absolutePath": ROOT + path, "diff": diff},
            f"The content was successfully saved to {path}.",
        )

    def create(self, path: str, content: str) -> None:
        self.s.call(
            "write_to_file",
            {"absolutePath": ROOT + path, "content": content},
            f"The content was successfully saved to {path}.",
        )

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        progress = "\n".join(
            f"- [{'x' if status == 'completed' else ' '}] {text}" for text, status in items
        )
        self.s.call(
            "execute_command",
            {"command": "git status --short", "requires_approval": False,
             "task_progress": progress},
            "Command executed.\nOutput:\n M package.json",
        )  # fmt: skip

    def finish(self, text: str) -> None:
        self.s.call(
            "attempt_completion",
            {"result": text},
            "The user is reviewing the result.",
        )

    def command_output(self, k: int) -> str:
        return ["\n> harbor-portal@2.3.0 lint\n> eslint --fix\n",
                "Applying migration 20261130_add_table\nYour database is now in sync.",
                "Seeded 40 rows."][k]  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = "error TS2554: Expected 2 arguments, but got 1."
        return f"src/lib/{module}.ts(88,9): {probe}", probe, "npx tsc --noEmit"

    def build_ok(self) -> str:
        return ""

    def test_command(self) -> str:
        return "npx jest --ci"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed} failed, {passed} passed, {failed + passed} total"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = []
        for t in failing:
            suite = t.split()[1]
            lines += [f"FAIL src/lib/__tests__/{suite}.test.ts", f"  \u25cf {t}", "",
                      "    expect(received).toBe(expected)", ""]  # fmt: skip
        lines += [
            f"Test Suites: {len(failing)} failed, 9 passed, {len(failing) + 9} total",
            f"Tests:       {self.test_counts(failed, passed)}",
            "Time:        6.114 s",
        ]
        return "\n".join(lines)
