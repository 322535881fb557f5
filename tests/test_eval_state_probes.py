"""The ruler's state rules (`compaction.eval.state_probes`, through `extract_probes`): user
constraints, the last errors, open to-dos, the final test status and the last message, plus
the files and commands of agents that act in text (aider, mini-SWE-agent) or name files by
`absolutePath` (Cline)."""

from __future__ import annotations

import json
from typing import Any

from compaction.dialects import ANTHROPIC, OPENAI
from compaction.eval.datasets import extract_probes, session_text
from compaction.eval.probes import Fact
from compaction.messages import Conversation

_ids = iter(range(10_000))


def chat(*messages: dict[str, Any] | list[dict[str, Any]]) -> Conversation:
    flat: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."}]
    for m in messages:
        flat.extend(m if isinstance(m, list) else [m])
    return OPENAI.decode({"model": "gpt-4o", "messages": flat})


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool(name: str, result: str, **arguments: Any) -> list[dict[str, Any]]:
    call_id = f"c{next(_ids)}"
    function = {"name": name, "arguments": json.dumps(arguments)}
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def of(facts: list[Fact], category: str) -> list[tuple[tuple[str, ...], bool]]:
    return [(f.probe, f.required) for f in facts if f.category == category]


# --- constraints --------------------------------------------------------------------------------


def test_rules_in_the_users_own_words_are_constraints_questions_and_code_are_not() -> None:
    conv = chat(
        user("Fix the exporter."),
        say("On it."),
        user(
            "Never write to the production bucket from tests. Should we also bump the version?\n"
            "```\nyou must not read this, it is code\n```"
        ),
        *tool("bash", "You must restart the server after this.", command="make deploy"),
        user("# TODO LIST UPDATE REQUIRED - You MUST include the task_progress parameter"),
        say("Done."),
    )
    constraints = of(extract_probes(conv), "constraint")
    assert constraints == [(("Never write to the production bucket from tests.",), True)]


def test_a_constraint_with_quotes_is_probed_by_its_longest_safe_piece() -> None:
    rule = 'Always warm the cache up before the "legacy" flag flips.'
    conv = chat(user("x"), say("y"), user(rule))
    [(probe, _)] = of(extract_probes(conv), "constraint")
    assert probe == ("Always warm the cache up before the",)
    assert probe[0] in session_text(conv)


# --- errors -------------------------------------------------------------------------------------


def test_an_error_a_later_run_of_the_same_command_fixed_is_resolved_and_optional() -> None:
    conv = chat(
        user("Run it."),
        *tool("bash", "ModuleNotFoundError: No module named yaml_loader", command="python app.py"),
        *tool("bash", "started on :8080", command="python app.py"),
        *tool("bash", "Error: connect ECONNREFUSED 127.0.0.1:5432", command="npm run migrate"),
        say("The migration still cannot reach the database."),
    )
    facts = extract_probes(conv)
    assert of(facts, "error_resolved") == [
        (("ModuleNotFoundError: No module named yaml_loader",), False)
    ]
    assert of(facts, "error_open") == [(("Error: connect ECONNREFUSED 127.0.0.1:5432",), True)]


def test_only_the_last_three_errors_are_probed_and_file_contents_are_not_errors() -> None:
    runs = [
        tool("bash", f"fatal: bad revision number{n}", command=f"git show r{n}") for n in range(5)
    ]
    conv = chat(
        user("Look around."),
        *tool("read_file", "raise ValueError: this is source code, not an error", path="a.py"),
        *[m for run in runs for m in run],
        say("Nothing found."),
    )
    errors = [f.probe[0] for f in extract_probes(conv) if f.category == "error_open"]
    assert errors == [f"fatal: bad revision number{n}" for n in (2, 3, 4)]


# --- to-dos -------------------------------------------------------------------------------------


def test_the_last_todowrite_list_decides_what_is_open() -> None:
    def item(content: str, status: str) -> dict[str, str]:
        return {"content": content, "status": status, "activeForm": content}

    first = [item("Port the parser", "in_progress"), item("Delete the old shim", "pending")]
    last = [item("Port the parser", "completed"), item("Write the changelog", "pending")]
    conv = chat(
        user("Go."),
        *tool("TodoWrite", "Todos have been modified successfully.", todos=first),
        *tool("TodoWrite", "Todos have been modified successfully.", todos=last),
        say("Parser ported."),
    )
    assert of(extract_probes(conv), "todo") == [
        (("Write the changelog",), True),
        (("Port the parser",), False),
    ]


def test_codex_plans_openhands_trackers_cline_checklists_and_claude_tasks_are_read() -> None:
    plan = [{"step": "Add the retry test", "status": "pending"},
            {"step": "Wire the exporter", "status": "completed"}]  # fmt: skip
    assert of(
        extract_probes(chat(user("a"), *tool("update_plan", "Plan updated", plan=plan))), "todo"
    ) == [
        (("Add the retry test",), True),
        (("Wire the exporter",), False),
    ]
    tracker = [{"id": "1", "title": "Reproduce the crash", "status": "in_progress"}]
    conv = chat(user("a"), *tool("task_tracker", "ok", command="plan", task_list=tracker))
    assert of(extract_probes(conv), "todo") == [(("Reproduce the crash",), True)]
    progress = "- [x] Analyze the codebase\n- [ ] Update the bucket names"
    conv = chat(user("a"), *tool("read_file", "x", path="a.ts", task_progress=progress))
    assert of(extract_probes(conv), "todo") == [
        (("Update the bucket names",), True),
        (("Analyze the codebase",), False),
    ]
    conv = chat(
        user("a"),
        *tool("TaskCreate", "Task #1 created successfully: Fix secrets", subject="Fix secrets"),
        *tool("TaskCreate", "Task #2 created successfully: Unify enums", subject="Unify enums"),
        *tool("TaskUpdate", "Updated task #1 status", taskId="1", status="completed"),
    )
    assert of(extract_probes(conv), "todo") == [(("Unify enums",), True), (("Fix secrets",), False)]


# --- tests and the last message -------------------------------------------------------------------


def test_the_final_test_status_is_the_last_summary_and_earlier_runs_of_it_are_stale() -> None:
    conv = chat(
        user("Make the tests pass."),
        *tool("bash", "..F\n=== 1 failed, 2 passed in 0.1s ===", command="pytest -q"),
        *tool("bash", "Tests:       3 passed, 3 total", command="npx jest"),
        *tool("bash", "test result: ok. 3 passed; 0 failed; 0 ignored", command="cargo test"),
        *tool("bash", "...\n=== 3 passed in 0.1s ===", command="pytest -q"),
        say("All green."),
    )
    [fact] = [f for f in extract_probes(conv) if f.category == "test_status"]
    assert fact.probe == ("3 passed",)
    # Only an earlier run of the same command is superseded; jest and cargo ran other tests.
    assert fact.stale == ("1 failed, 2 passed",)
    assert fact.required


def test_a_missing_recording_or_a_declined_call_is_not_an_error() -> None:
    declined = "The user doesn't want to proceed with this tool use. The tool use was rejected."

    def turn(call_id: str, name: str, result: str) -> list[dict[str, Any]]:
        use = {"type": "tool_use", "id": call_id, "name": name, "input": {"file_path": "a.py"}}
        answer = {"type": "tool_result", "tool_use_id": call_id, "content": result,
                  "is_error": True}  # fmt: skip
        return [
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [answer]},
        ]

    conv = ANTHROPIC.decode(
        {
            "messages": [
                {"role": "user", "content": "Go."},
                *turn("t1", "Read", "(no result recorded)"),
                *turn("t2", "Edit", declined),
                *turn("t3", "Edit", "String to replace not found in file."),
                {"role": "assistant", "content": "Stopped."},
            ]
        }
    )
    errors = [f.probe for f in extract_probes(conv) if f.category.startswith("error")]
    assert errors == [("String to replace not found in file.",)]


def test_the_last_message_is_a_required_fact() -> None:
    conv = chat(user("Go."), say("<thinking>\nhmm\n</thinking>\nShipped it: v2.4.1 is tagged."))
    [fact] = [f for f in extract_probes(conv) if f.category == "last_message"]
    assert fact.required and fact.critical
    assert "Shipped it: v2.4.1 is tagged." in fact.probe
    assert fact.planted_in == (2,)


# --- agents that act in text, and absolutePath ----------------------------------------------------


def test_aider_search_replace_blocks_name_the_files_they_edit() -> None:
    reply = (
        "Here are the *SEARCH/REPLACE* blocks:\n\nsrc/model.py\n```python\n<<<<<<< SEARCH\n"
        "x = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\nscripts/gen.py\n```python\n"
        "<<<<<<< SEARCH\n=======\nprint(1)\n>>>>>>> REPLACE\n```"
    )
    facts = extract_probes(chat(user("Edit src/model.py please."), say(reply)))
    assert [(f.category, f.probe) for f in facts if f.category.startswith("file")] == [
        ("file_modified", ("src/model.py",)),
        ("file_created", ("scripts/gen.py",)),
    ]


def test_mini_swe_agent_actions_are_commands_and_unrun_suggestions_are_not() -> None:
    conv = chat(
        user("Fix the issue."),
        say("Let me look.\n\n```mswea_bash_command\ncat src/missing_colon.py\n```"),
        user("<returncode>0</returncode>\n<output>\ndef f(x)\n</output>"),
        say("You could run this yourself:\n```bash\nmake release-all\n```"),
        user("thanks"),
    )
    commands = [f.probe for f in extract_probes(conv) if f.category == "command"]
    assert commands == [("cat src/missing_colon.py",)]


def test_cline_files_named_by_a_windows_absolute_path_are_probed_by_their_name() -> None:
    conv = chat(
        user("Create the storage module."),
        *tool(
            "write_to_file",
            "The content was successfully saved.",
            absolutePath="c:\\Apps\\MRA\\src\\lib\\gcs-storage.ts",
            content="export {}",
        ),
    )
    files = [(f.category, f.probe) for f in extract_probes(conv) if f.category.startswith("file")]
    assert files == [("file_created", ("gcs-storage.ts",))]
