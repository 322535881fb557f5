from __future__ import annotations

import json

from compaction.messages import Message, TextPart, ToolCallPart, ToolResultPart
from compaction.summarize import signals
from compaction.summarize.ledger import LEVELS, extract_ledger, parse_ledger, render_ledger


def call(call_id: str, name: str, **arguments: object) -> Message:
    return Message("assistant", (ToolCallPart(call_id, name, json.dumps(arguments)),))


def result(call_id: str, text: str, *, is_error: bool = False) -> Message:
    return Message("tool", (ToolResultPart(call_id, (TextPart(text),), is_error),))


def say(role: str, text: str) -> Message:
    return Message.text_message(role, text)  # type: ignore[arg-type]


def test_files_by_operation_and_precedence() -> None:
    ledger = extract_ledger(
        [
            call("1", "read_file", path="src/app.py"),
            result("1", "print('x')"),
            call("2", "edit_file", path="src/app.py", old="x", new="y"),
            result("2", "ok"),
            call("3", "write_file", path="src/new.py", content="x"),
            result("3", "ok"),
            call("4", "bash", command="rm build/old.txt && sed -i 's/a/b/' setup.cfg"),
            result("4", ""),
            call("5", "read_file", path="README.md"),
            result("5", "# readme"),
        ]
    )
    assert ledger.files == {
        "src/app.py": "modified",
        "src/new.py": "created",
        "build/old.txt": "deleted",
        "setup.cfg": "modified",
        "README.md": "read",
    }


def test_commands_outcomes_and_errors_resolve_when_the_command_passes() -> None:
    failing = (
        "tests/test_x.py F\nE       KeyError: 'session_id'\n"
        "FAILED tests/test_x.py::test_login - KeyError: 'session_id'\n1 failed, 3 passed in 0.2s"
    )
    ledger = extract_ledger(
        [
            call("1", "bash", command="pytest tests/test_x.py"),
            result("1", failing),
            call("2", "bash", command="pip install nope"),
            result("2", "ERROR: No matching distribution found for nope\nexit code 1"),
        ]
    )
    assert [(c.command, c.outcome) for c in ledger.commands] == [
        ("pytest tests/test_x.py", "failed"),
        ("pip install nope", "exit 1"),
    ]
    assert any("KeyError: 'session_id'" in e.text for e in ledger.errors if e.open)
    assert ledger.test_status is not None and "1 failed, 3 passed" in ledger.test_status
    later = extract_ledger(
        [
            call("1", "bash", command="pytest tests/test_x.py"),
            result("1", failing),
            call("9", "bash", command="pytest tests/test_x.py"),
            result("9", "4 passed in 0.1s"),
        ]
    )
    assert not [e for e in later.errors if e.open]
    assert later.test_status is not None and later.test_status.startswith("4 passed")


def test_uncued_decisions_and_todos_are_found() -> None:
    ledger = extract_ledger(
        [
            say(
                "assistant",
                "Let's open the config loader first. I'll go with an LRU here since the keys "
                "are bounded. Still left: wire the --verbose flag into the CLI. "
                "We'll also need to update the changelog.",
            ),
            say("assistant", "Going with option B — the adapter keeps the client untouched."),
        ]
    )
    assert any("LRU" in d for d in ledger.decisions)
    assert any("option B" in d for d in ledger.decisions)
    assert not any("open the config loader" in d for d in ledger.decisions)
    assert any("--verbose flag" in t for t in ledger.todos)
    assert any("changelog" in t for t in ledger.todos)


def test_done_closes_a_todo() -> None:
    ledger = extract_ledger(
        [
            say("assistant", "TODO: add retry to fetch_remote."),
            say("assistant", "Added retry to fetch_remote with exponential backoff."),
        ]
    )
    assert ledger.todos == []


def test_user_values_latest_wins() -> None:
    ledger = extract_ledger(
        [
            say("user", "Please set the timeout to 30s."),
            say("user", "Actually, set the timeout to 45 seconds and retries should be 5."),
        ]
    )
    assert ledger.values["timeout"] == ("45 seconds", ["30s"])
    assert ledger.values["retries"] == ("5", [])


def test_long_user_message_keeps_head_tail_and_constraints() -> None:
    middle = " ".join(f"Filler sentence number {i} about nothing." for i in range(200))
    text = (
        "Start of the task. "
        + middle
        + " You must never touch the migrations folder. "
        + middle
        + " End."
    )
    ledger = extract_ledger([say("user", text)], user_chars=400)
    kept = ledger.user_messages[0]
    assert kept.startswith("Start of the task.")
    assert kept.endswith("End.")
    assert "never touch the migrations folder" in kept
    assert len(kept) < len(text) // 5


def test_render_parse_round_trip_preserves_the_ledger() -> None:
    ledger = extract_ledger(
        [
            say("user", "Fix the login bug.\nDon't touch the migrations folder."),
            call("1", "edit_file", path="src/auth.py"),
            result("1", "ok"),
            call("2", "bash", command="pytest -x"),
            result("2", "E   ValueError: bad token\n1 failed in 0.1s"),
            say("assistant", "Decision: use sqlite for the cache. TODO: add a migration test."),
            say("user", "set the port to 8080"),
        ]
    )
    text = render_ledger(ledger, LEVELS[0])
    parsed = parse_ledger(text)
    assert parsed.user_messages == ledger.user_messages
    assert parsed.files == ledger.files
    assert [(c.command, c.outcome) for c in parsed.commands] == [
        (c.command, c.outcome) for c in ledger.commands
    ]
    assert [e.text for e in parsed.errors] == [e.text for e in ledger.errors if e.open]
    assert parsed.decisions == ledger.decisions
    assert parsed.todos == ledger.todos
    assert parsed.values == ledger.values
    assert render_ledger(parsed, LEVELS[0]) == text


def test_error_lines_prefer_the_exception_line() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    main()\n"
        "ZeroDivisionError: division by zero\n"
    )
    assert signals.error_lines(trace)[0] == "ZeroDivisionError: division by zero"
    assert signals.error_lines("all good\n3 passed") == []


def test_paths_and_non_paths() -> None:
    assert signals.looks_like_path("src/app/models.py")
    assert signals.looks_like_path("README.md")
    assert not signals.looks_like_path("e.g.")
    assert not signals.looks_like_path("https://example.com/x.py")
    assert not signals.looks_like_path("3.14")


def test_json_wrapped_shell_output_is_read_as_text() -> None:
    wrapped = json.dumps(
        {
            "stdout": "collecting ...\nE   KeyError: 'etag'\n1 failed, 2 passed in 0.1s",
            "stderr": "",
            "exit_code": 1,
        }
    )
    outcome, errors = signals.outcome_of(wrapped)
    assert outcome == "exit 1"
    assert any("KeyError: 'etag'" in e for e in errors)
    assert signals.test_summary(wrapped) == "1 failed, 2 passed"
    plain_json = json.dumps({"items": [1, 2], "next": None})
    assert signals.unwrap_output(plain_json) == plain_json


def test_identifiers_from_json_and_prose() -> None:
    reply = json.dumps({"deployment_id": "dep_28338044c6a6d33f", "status": "ok", "n": 3})
    assert signals.identifiers(reply) == ("deployment_id=dep_28338044c6a6d33f",)
    found = signals.identifiers("see JIRA-4821 and 123e4567-e89b-12d3-a456-426614174000, UTF-8")
    assert found == ("JIRA-4821", "123e4567-e89b-12d3-a456-426614174000")


def test_identifiers_survive_masking_into_the_digest() -> None:
    reply = json.dumps({"request_id": "req_daa2d6ffef589c88", "rows": list(range(400))})
    ledger = extract_ledger([call("1", "http_get", url="/api"), result("1", reply)])
    assert ledger.identifiers == ["request_id=req_daa2d6ffef589c88"]
    text = render_ledger(ledger, LEVELS[0])
    assert "request_id=req_daa2d6ffef589c88" in text
    assert parse_ledger(text).identifiers == ledger.identifiers


def test_notes_keep_known_failures_and_identifiers_from_prose() -> None:
    ledger = extract_ledger(
        [
            say(
                "assistant",
                "Got it, acct_5290f2bf2dac is the sandbox account. scripts/sync.py still fails "
                "with `validation error for CohortPayload`; not caused by this work, so I'm not "
                "touching it. Looks good otherwise.",
            )
        ]
    )
    assert any("acct_5290f2bf2dac" in n for n in ledger.notes)
    assert any("validation error for CohortPayload" in n for n in ledger.notes)
    assert not any("Looks good" in n for n in ledger.notes)


def test_tighter_levels_keep_user_words_longest() -> None:
    ledger = extract_ledger(
        [say("user", "Never log tokens or API keys, not even at debug level.")]
        + [say("assistant", f"I'll go with option {i} since it is simpler.") for i in range(30)]
    )
    sizes = [len(render_ledger(ledger, level)) for level in LEVELS]
    assert sizes == sorted(sizes, reverse=True)
    for level in LEVELS:
        assert "Never log tokens or API keys" in render_ledger(ledger, level)


def test_shell_commands_redirections_and_quotes() -> None:
    ops = signals.file_ops_of_command(
        "cat 'notes v2.md' > out.txt; mv a.py b.py && python run.py 2>&1 >log.txt # x.py"
    )
    assert ops == (
        ("out.txt", "written"),
        ("log.txt", "written"),
        ("a.py", "deleted"),
        ("b.py", "created"),
        ("run.py", "read"),
    )
