from __future__ import annotations

import json

import pytest

from compaction.messages import Message, TextPart, ToolCallPart, ToolResultPart
from compaction.strategies.mask import MASK_PREFIX, MaskStrategy
from compaction.summarize import signals
from compaction.summarize.digest import (
    Ledger,
    LedgerBuilder,
    bounded_user_text,
    extract_ledger,
    parse_ledger,
    render,
    summary_message,
)
from compaction.summarize.digest.events import outcome_of_result, output_in_text
from compaction.summarize.digest.sections import _sentence_forms


def rendered(ledger: Ledger, budget: int | None = None) -> str:
    return summary_message(render(ledger, budget), ledger.messages).text


def user_messages(ledger: Ledger) -> list[str]:
    return [text for _, text in ledger.state("user").texts]


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
    assert ledger.state("files").files == {
        "src/app.py": "modified",
        "src/new.py": "created",
        "build/old.txt": "deleted",
        "setup.cfg": "modified",
        "README.md": "read",
    }


def test_a_file_the_user_turns_the_assistant_away_from_says_where_it_was_sent() -> None:
    messages = [
        say("user", "Add rate limiting to the public API."),
        say("assistant", "This router has the auth middleware; I'll hook the limiter there."),
        call("1", "read_file", absolute_path="/srv/app/internal/admin/router.go"),
        result("1", "package admin"),
        say("user", "Not that one, the admin one is VPN-only. The public: internal/api/router.go."),
        call("2", "read_file", absolute_path="/srv/app/internal/api/router.go"),
        result("2", "package api"),
        call("3", "read_file", absolute_path="/srv/app/go.mod"),
        result("3", "module app"),
        # Naming a path without turning the assistant away sets nothing aside.
        say("user", "Also look at internal/api/errors.go."),
        call("4", "read_file", absolute_path="/srv/app/internal/store/cache.go"),
        result("4", "package store"),
        say("user", "No, that's fine — and internal/api/errors.go can stay as it is."),
    ]
    ledger = extract_ledger(messages)
    text = rendered(ledger)
    assert "- /srv/app/internal/store/cache.go (read)" in text
    assert (
        "- /srv/app/internal/admin/router.go (read; the user pointed to internal/api/router.go "
        "instead)" in text
    )
    assert "- /srv/app/go.mod (read)\n" in text
    # Read back (a digest of a digest), the line keeps where the user pointed.
    again = rendered(parse_ledger(text))
    assert "(read; the user pointed to internal/api/router.go instead)" in again
    # Summarised between the read and the user's turn, the file the user's words describe
    # ("the admin router") is the one set aside.
    summary = summary_message(render(extract_ledger(messages[:4])), 4)
    resumed = rendered(extract_ledger([summary, *messages[4:]]))
    assert "router.go (read; the user pointed to internal/api/router.go instead)" in resumed
    # A file read before a command that named another is not what the user turned away from.
    commanded = rendered(
        extract_ledger(
            [
                *messages[:4],
                call("9", "bash", command="sed -n '1,40p' web/server/export.ts"),
                result("9", "export {}"),
                *messages[4:],
            ]
        )
    )
    assert "- /srv/app/internal/admin/router.go (read)\n" in commanded
    # The file the turn names among those just touched is the one turned away from, the
    # path it points to one not just touched; changed since, it stays where the user pointed.
    edits = [
        say("user", "Add the search endpoint."),
        call("5", "Edit", file_path="app/api/v1/listings.py", old_string="a", new_string="b"),
        result("5", "ok"),
        call("6", "Edit", file_path="app/core/config.py", old_string="a", new_string="b"),
        result("6", "ok"),
        say("user", "That's the wrong router. app/api/v1/listings.py is frozen; put the endpoint "
                    "in app/api/v2/listings.py."),
        call("7", "Edit", file_path="app/api/v1/listings.py", old_string="b", new_string="a"),
        result("7", "ok"),
    ]  # fmt: skip
    moved = rendered(extract_ledger(edits))
    assert "- app/api/v1/listings.py (modified; the user pointed to app/api/v2/listings.py" in moved
    # Summarised between the edit and the turn, the file the turn names among those the
    # summary lists is the one turned away from, not where it points.
    resumed_edit = summary_message(render(extract_ledger(edits[:5])), 5)
    again = rendered(extract_ledger([resumed_edit, *edits[5:]]))
    assert "- app/api/v1/listings.py (modified; the user pointed to app/api/v2/listings.py" in again
    assert "- app/core/config.py (modified)\n" in moved
    # Said later in the first sentence ("— wrong place"); and not a wrong value or status.
    elsewhere = [
        *edits[:3],
        say(
            "user",
            "That's the HTML controller — wrong place, undo that. "
            "Uploads go through app/api/import_controller.ex.",
        ),
    ]
    assert "(modified; the user pointed to app/api/import_controller.ex instead)" in rendered(
        extract_ledger(elsewhere)
    )
    wrong = say("user", "Wrong handler. app/api/v1/listings.py is frozen; everything new goes "
                        "through app/api/v2/listings.py.")  # fmt: skip
    assert "(modified; the user pointed to app/api/v2/listings.py instead)" in rendered(
        extract_ledger([*edits[:3], wrong])
    )
    # The place pointed to read just before (the assistant looked at it, then edited the
    # other): the turn names the file away first, where to work after it.
    looked = [call("8", "Read", file_path="app/api/v2/listings.py"), result("8", "router = 1")]
    assert "(modified; the user pointed to app/api/v2/listings.py instead)" in rendered(
        extract_ledger([edits[0], *looked, *edits[1:3], wrong])
    )
    stop = say("user", "Stop — app/api/v1/listings.py is never edited by hand. Everything goes "
                       "into app/api/v2/listings.py.")  # fmt: skip
    assert "(modified; the user pointed to app/api/v2/listings.py instead)" in rendered(
        extract_ledger([*edits[:3], stop])
    )
    status = [*edits[:3], say("user", "It returns the wrong status code. See app/api/errors.py.")]
    assert "pointed to" not in rendered(extract_ledger(status))


def test_code_the_assistant_wrote_names_what_it_defines_and_imports_from_the_project() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: src/export/pages.ts\n"
        '+import { selectInvoicePage, type InvoiceRow } from "../db/invoices";\n'
        '+import { z } from "zod";\n'
        "+export function csvStream(db: Db): ReadableStream<string> {\n"
        "+  return selectInvoicePage(db);\n+}\n"
        "*** Update File: src/db/invoices.ts\n@@\n"
        "-export async function selectPage(db: Db) {\n"
        "+export async function selectInvoicePage(db: Db, after: InvoiceRow | null) {\n"
        "*** End Patch"
    )
    ledger = extract_ledger(
        [
            say("user", "Stream the invoice export."),
            call("1", "apply_patch", input=patch),
            result("1", "Success. Updated the following files:\nA src/export/pages.ts"),
            call("2", "Edit", file_path="/repo/app/jobs.py", old_string="def run_old(x):",
                 new_string="from .queue import enqueue_retry, RetryPolicy\n\n"
                            "class Runner:\n    def run_once(self, job):\n"
                            "        enqueue_retry(job)\n"),
            result("2", "The file /repo/app/jobs.py has been updated."),
            call("3", "bash", command="docker compose logs api --tail 5"),
            result("3", '{"reqId": "req-8156", "path": "/x"}\n{"reqId": "req-268", "path": "/y"}'),
        ]
    )  # fmt: skip
    text = rendered(ledger)
    assert "- src/export/pages.ts: defines csvStream; imports selectInvoicePage, InvoiceRow" in text
    assert "- src/db/invoices.ts: defines selectInvoicePage" in text
    # What it takes out is not what it wrote; a package's import is not the project's code.
    assert "run_old" not in text and "selectPage" not in text and " z" not in text
    jobs = "- /repo/app/jobs.py: defines Runner, run_once; imports enqueue_retry, RetryPolicy"
    assert jobs in text
    # A member of an imported project name the code calls is named with it (Java's
    # `TenantHolder.merchantIdOrThrow()`: the accessor the work depends on).
    java = (
        "package com.acme.pay;\n\nimport com.acme.pay.security.TenantHolder;\n"
        "import java.util.Optional;\n\npublic class IdempotencyFilter {\n"
        "    String merchant() { return TenantHolder.merchantIdOrThrow(); }\n}\n"
    )
    created = extract_ledger(
        [call("6", "str_replace_editor", command="create", path="/w/IdempotencyFilter.java",
              file_text=java), result("6", "File created successfully.")]
    )  # fmt: skip
    assert "imports TenantHolder.merchantIdOrThrow" in rendered(created)
    # Under room for a few lines, the names in code written go before identifiers seen only
    # in an output.
    assert "reqId=req-8156" in text
    tight = rendered(ledger, 520)
    assert "selectInvoicePage" in tight and "reqId=req-8156" not in tight
    # Read back, the lines stay.
    assert "- src/db/invoices.ts: defines selectInvoicePage" in rendered(parse_ledger(text))
    # What an edit defines is what it adds; an edit that takes a definition out (a revert)
    # takes it from the file's names.
    upload, new = "  def upload(conn, params) do\n    :ok\n  end\n\n", "  def new(conn, _params) do"
    reverted = extract_ledger(
        [
            say("user", "Add the upload action."),
            call("4", "edit", filePath="/app/web/stock_controller.ex",
                 oldString=new, newString=upload + new),
            result("4", "Edit applied successfully."),
            call("5", "edit", filePath="/app/web/stock_controller.ex",
                 oldString=upload + new, newString=new),
            result("5", "Edit applied successfully."),
        ]
    )  # fmt: skip
    assert "stock_controller.ex:" not in rendered(reverted)
    # Code written in the assistant's text: aider's SEARCH/REPLACE edits (what the REPLACE
    # half adds), and SQL it hands over in its reply.
    reply = (
        "For the DBA ticket:\n\n```sql\nCREATE INDEX CONCURRENTLY ix_listings_title_trgm\n"
        "    ON listings USING gin (title gin_trgm_ops);\n```\n\n"
        "app/search.py\n```python\n<<<<<<< SEARCH\ndef search(q):\n=======\n"
        "def search_trigram(q):\n>>>>>>> REPLACE\n```\n"
    )
    texted = rendered(extract_ledger([say("user", "Use trigrams."), say("assistant", reply)]))
    assert "- app/search.py: defines search_trigram" in texted
    assert "defines ix_listings_title_trgm" in texted
    # What it wrote in a file the user then turned it away from is not the work's.
    away = say("user", "That's the wrong file — app/search.py is frozen. Use app/v2/search.py.")
    turned = rendered(extract_ledger([say("user", "Use trigrams."), say("assistant", reply), away]))
    assert "app/search.py: defines" not in turned and "ix_listings_title_trgm" in turned


def test_the_turns_aiders_harness_writes_are_commands_files_and_commits_not_the_users_words() -> (
    None
):
    pytest_out = (
        "..F\n=================================== FAILURES ===================================\n"
        "___________________________ test_ties_do_not_repeat ___________________________\n"
        "E       assert 41 == 40\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/api/test_pages.py::test_ties_do_not_repeat - assert 41 == 40\n"
        "1 failed, 39 passed in 0.84s\n"
    )
    messages = [
        say("user", "Add a search endpoint. Production runs Python 3.9."),
        say("assistant", "To add it I need tidepool/api/v2/listings.py."),
        say("user", "I added these files to the chat: tidepool/api/v2/listings.py, "
                    "tidepool/core/config.py\nLet me know if there are others we should add."),
        say("assistant", "tidepool/core/config.py\n```python\n<<<<<<< SEARCH\n    size: int = 25\n"
                         "=======\n    size: int = 30\n>>>>>>> REPLACE\n```"),
        say("user", "I committed the changes with git hash deeb1c4 & commit msg: chore: set the "
                    "page size to 30"),
        say("assistant", "Ok."),
        say("user", "# Fix any errors below, if possible.\n\n## Running: /venv/bin/python -m "
                    "flake8 --select=F821 --show-source tidepool/services/search.py\n\n"
                    "tidepool/services/search.py:25:21: F821 undefined name 'func'\n"),
        say("assistant", "Ok."),
        say("user", "I ran this command:\n\ngit rm tidepool/services/fulltext.py\n\n"
                    "And got this output:\n\nrm 'tidepool/services/fulltext.py'\n"),
        say("assistant", "Ok."),
        say("user", f"I ran this command:\n\npytest -q\n\nAnd got this output:\n\n{pytest_out}"),
        say("assistant", "Ok."),
    ]  # fmt: skip
    ledger = extract_ledger(messages)
    said = user_messages(ledger)
    assert said == ["Add a search endpoint. Production runs Python 3.9."]
    files = ledger.state("files").files
    assert files["tidepool/api/v2/listings.py"] == "read"
    assert files["tidepool/core/config.py"] == "modified"
    assert files["tidepool/services/fulltext.py"] == "deleted"
    commands = {c.command: c for c in ledger.state("commands").commands.values()}
    assert commands["pytest -q"].outcome == "exit 1" or commands["pytest -q"].outcome == "failed"
    assert 'git commit -m "chore: set the page size to 30"' in commands
    lint = next(c for c in commands if "flake8" in c)
    assert commands[lint].outcome != "ok"
    text = rendered(ledger)
    assert "F821 undefined name 'func'" in text
    assert "1 failed, 39 passed" in text and "test_ties_do_not_repeat" in text
    # The outputs in these turns are masked as outputs, the harness's header kept.
    mask = MaskStrategy(min_chars=40)
    masked = mask.mask_text(messages[10], None, messages[9])
    assert masked is not None and masked.text.startswith("I ran this command:\n\npytest -q\n\n")
    assert "1 failed, 39 passed" in masked.text and "= FAILURES =" not in masked.text


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
    assert [(c.command, c.outcome) for c in ledger.state("commands").commands.values()] == [
        ("pytest tests/test_x.py", "failed"),
        ("pip install nope", "exit 1"),
    ]
    errors = ledger.state("errors").errors
    assert any("KeyError: 'session_id'" in e.text for e in errors if e.open)
    assert ledger.state("tests").runs["pytest tests/test_x.py"].latest == "1 failed, 3 passed"
    later = extract_ledger(
        [
            call("1", "bash", command="pytest tests/test_x.py"),
            result("1", failing),
            call("9", "bash", command="pytest tests/test_x.py"),
            result("9", "4 passed in 0.1s"),
        ]
    )
    assert not [e for e in later.state("errors").errors if e.open]
    run = later.state("tests").runs["pytest tests/test_x.py"]
    assert run.latest == "4 passed"
    assert run.first_failure == "1 failed, 3 passed", "the failure fixed since is kept"


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
    decisions = [d.text for d in ledger.state("decisions").decisions]
    todos = ledger.state("todos").prose
    assert any("LRU" in d for d in decisions)
    assert any("option B" in d for d in decisions)
    assert not any("open the config loader" in d for d in decisions)
    assert any("--verbose flag" in t for t in todos)
    assert any("changelog" in t for t in todos)


def test_done_closes_a_todo() -> None:
    ledger = extract_ledger(
        [
            say("assistant", "TODO: add retry to fetch_remote."),
            say("assistant", "Added retry to fetch_remote with exponential backoff."),
        ]
    )
    assert ledger.state("todos").prose == []


def test_user_values_latest_wins() -> None:
    ledger = extract_ledger(
        [
            say("user", "Please set the timeout to 30s."),
            say("user", "Actually, set the timeout to 45 seconds and retries should be 5."),
        ]
    )
    values = ledger.state("values").values
    assert (values["timeout"].value, values["timeout"].earlier) == ("45 seconds", ["30s"])
    assert (values["retries"].value, values["retries"].earlier) == ("5", [])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # An IDE agent's user turn: its context blocks around the request.
        (
            "<context>\nThe current date is November 27, 2026.\n<todoList>\n- [ ] docs\n"
            "</todoList>\n</context>\n<editorContext>\nThe user's current file is a.swift.\n"
            "</editorContext>\n<reminderInstructions>\nPrefer small edits.\n"
            "</reminderInstructions>\n<userRequest>\nSet the dead-letter TTL to 36 hours.\n"
            "</userRequest>",
            "Set the dead-letter TTL to 36 hours.",
        ),
        # A reminder the agent appends to what the user typed.
        (
            "Fix the login redirect.\n\n<system-reminder>\nYour todo list is empty.\n"
            "</system-reminder>",
            "Fix the login redirect.",
        ),
        # The task block and the environment dump beside it.
        (
            "<task>\nAdd a dark mode toggle.\n</task>\n<environment_details>\n"
            "# Visible Files\nsrc/App.tsx\n</environment_details>",
            "Add a dark mode toggle.",
        ),
        # Windsurf's Cascade: the request, and the editor's state as metadata after it.
        (
            "<USER_REQUEST>\nOK, final answer from the vets: 42 hours after all.\n"
            "</USER_REQUEST>\n<ADDITIONAL_METADATA>\nThe current local time is: "
            "2026-03-20T10:13:13+01:00.\nActive Document: /app/docs/runbook.md\n"
            "</ADDITIONAL_METADATA>",
            "OK, final answer from the vets: 42 hours after all.",
        ),
        # Markup the user pasted is the user's own: kept as it was.
        (
            "Why does this render twice?\n<div>\n  <span>hi</span>\n</div>",
            "Why does this render twice?\n<div>\n  <span>hi</span>\n</div>",
        ),
    ],
)
def test_the_user_words_are_read_out_of_an_agents_wrapping(text: str, words: str) -> None:
    assert user_messages(extract_ledger([say("user", text)])) == [words]


@pytest.mark.parametrize(
    "pin",
    [
        "Production runs Python 3.9.",
        "The service still ships on Java 11 for now.",
        "It has to build with Go 1.22, the base image pins that toolchain.",
        "CI is on Node 18.19 until the runners are upgraded.",
    ],
)
def test_a_runtime_pinned_to_a_version_is_a_constraint(pin: str) -> None:
    # The version a user pins rules out what the code may use ("no PEP 604 unions").
    assert signals.is_constraint(pin)
    assert not signals.is_constraint("The p95 went from 1.1 s to 0.4 s with the index.")


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
    [kept] = [
        line for line in rendered(ledger).splitlines() if line.startswith("- Start of the task")
    ]
    kept = kept[2:]
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
    text = rendered(ledger)
    parsed = parse_ledger(text)
    parsed.messages = ledger.messages
    assert user_messages(parsed) == user_messages(ledger)
    assert parsed.state("files").files == ledger.state("files").files
    assert parsed.state("commands").commands.keys() == ledger.state("commands").commands.keys()
    assert [e.text for e in parsed.state("errors").errors] == [
        e.text for e in ledger.state("errors").errors
    ]
    assert [d.text for d in parsed.state("decisions").decisions] == [
        d.text for d in ledger.state("decisions").decisions
    ]
    assert parsed.state("todos").prose == ledger.state("todos").prose
    assert parsed.state("values").values.keys() == ledger.state("values").values.keys()
    assert rendered(parsed) == text


def test_error_lines_prefer_the_exception_line() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    main()\n"
        "ZeroDivisionError: division by zero\n"
    )
    assert signals.error_lines(trace)[0] == "ZeroDivisionError: division by zero"
    assert signals.error_lines("all good\n3 passed") == []


def test_a_clojure_error_report_keeps_its_cause_from_the_line_below() -> None:
    # clojure.main's report: where on one line, what on the next.
    out = (
        "Syntax error compiling at (heronry/delivery/retry_worker.clj:45:64).\n"
        "Unable to resolve symbol: next-attempt-at in this context\n\n"
        "Full report at:\n/tmp/clojure-4249171921363137742.edn\n"
    )
    assert signals.error_lines(out) == [
        "Syntax error compiling at (heronry/delivery/retry_worker.clj:45:64). "
        "Unable to resolve symbol: next-attempt-at in this context"
    ]
    assert signals.outcome_of(out, is_error=True)[1] == tuple(signals.error_lines(out))


@pytest.mark.parametrize(
    ("output", "kept"),
    [
        # GHC: where and a code on the error's line, what went wrong in the bullets below.
        (
            "src/Shop/Cart.hs:41:9: error: [GHC-83865]\n"
            "    \u2022 Couldn't match expected type: IO ()\n"
            "                  with actual type: Currency -> IO ()\n"
            "    \u2022 Probable cause: \u2018chargeCart\u2019 is applied to too few arguments\n"
            "   |\n41 |         chargeCart cart\n   |         ^^^^^^^^^^^^^^^\n",
            "is applied to too few arguments",
        ),
        # R: the call that failed, then the message on the next line.
        (
            "Error in charge(order, currency = cur) : \n  object 'cur' not found\n"
            "Calls: checkout -> charge\nExecution halted\n",
            "object 'cur' not found",
        ),
        # Rust: a test's panic, then the assertion and its operands.
        (
            "thread 'refund_is_capped' panicked at tests/refunds.rs:33:5:\n"
            "assertion `left == right` failed\n  left: 500\n right: 450\n"
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
            "left: 500",
        ),
        # Laravel's error page in a terminal: the exception's class, a blank line, its message.
        (
            '\n   ParseError \n\n  syntax error, unexpected token "}"\n\n'
            "  at app/Http/Controllers/CartController.php:58\n     54\u2595     $total = 0;\n",
            'syntax error, unexpected token "}"',
        ),
        # A compiler that names the error, shows the source, then says what is wrong.
        (
            "error: Unknown variable\n   \u250c\u2500 /srv/till/src/cart.gleam:12:5\n   \u2502\n"
            "12 \u2502   total(items, rate)\n   \u2502                ^^^^\n\n"
            "The name `rate` is not in scope here.\n",
            "The name `rate` is not in scope here.",
        ),
    ],
)
def test_an_error_line_that_only_names_its_kind_keeps_what_went_wrong_below_it(
    output: str, kept: str
) -> None:
    # The line a reader knows as an error says where, or what kind; the message is under it.
    lines = signals.error_lines(output)
    assert lines and kept in lines[0], lines
    assert signals.outcome_of(output, is_error=True)[1][0] == lines[0]


def test_an_error_line_that_says_what_went_wrong_takes_nothing_below_it() -> None:
    rustc = (
        "error[E0599]: no method named `fill` found for struct `Rng` in the current scope\n"
        "  --> src/token.rs:14:9\n   |\n14 |     rng.fill(&mut buf);\n"
    )
    assert signals.error_lines(rustc) == [
        "error[E0599]: no method named `fill` found for struct `Rng` in the current scope"
    ]
    # Lines below that are errors of their own are not one's detail.
    npm = "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! till@1.0.0 build: `tsc`\n"
    assert signals.error_lines(npm)[0] == "npm ERR! code ELIFECYCLE"


@pytest.mark.parametrize(
    ("output", "line"),
    [
        # PHP: an exception's class in its namespace, backslashes between the parts.
        (
            "1) App\\Tests\\CartTest::testTotal\n"
            "Doctrine\\DBAL\\Exception\\TableNotFoundException: An exception occurred while "
            'executing a query: relation "cart_line" does not exist\n',
            "Doctrine\\DBAL\\Exception\\TableNotFoundException: An exception occurred while "
            'executing a query: relation "cart_line" does not exist',
        ),
        # Gradle's Checkstyle task: the tool's tag before the level.
        (
            "> Task :api:checkstyleMain\n[ant:checkstyle] [ERROR] /w/api/src/Cart.java:14:8: "
            "Unused import - java.util.List. [UnusedImports]\n",
            "[ant:checkstyle] [ERROR] /w/api/src/Cart.java:14:8: Unused import - java.util.List. "
            "[UnusedImports]",
        ),
        # MSBuild: a line number alone in the brackets after the file.
        (
            "  Till.Tests test net8.0 failed with 1 error(s) (2.5s)\n"
            "    /src/Till.Tests/CartTests.cs(22): error TESTERROR: \n"
            "      Till.Tests.CartTests.TotalsRoundDown (23ms): Error Message: Assert.Equal() "
            "Failure: Values differ\n",
            "/src/Till.Tests/CartTests.cs(22): error TESTERROR: — Till.Tests.CartTests."
            "TotalsRoundDown (23ms): Error Message: Assert.Equal() Failure: Values differ",
        ),
        # RSpec: the error's class on a line of its own, its message indented under it.
        (
            "  1) Till::Cart totals a basket\n     Failure/Error: Till::Cart.new\n\n"
            "     NameError:\n       uninitialized constant Till::Cart\n"
            "     # ./spec/cart_spec.rb:4:in `block (2 levels)'\n",
            "NameError: — uninitialized constant Till::Cart",
        ),
    ],
)
def test_error_lines_in_more_runners_shapes(output: str, line: str) -> None:
    assert line in signals.error_lines(output)


def test_a_rust_tests_failure_is_one_error_line_with_its_panic() -> None:
    # libtest names the failing test twice: "test x ... FAILED", then its panic, which says
    # what the assertion saw. One failure, one line.
    out = (
        "running 2 tests\ntest refunds::capped ... FAILED\ntest refunds::zero ... ok\n\n"
        "failures:\n\n---- refunds::capped stdout ----\n\n"
        "thread 'refunds::capped' panicked at src/refunds.rs:33:5:\n"
        "assertion `left == right` failed\n  left: 500\n right: 450\n\n"
        "test result: FAILED. 1 passed; 1 failed; 0 ignored\n"
    )
    assert signals.error_lines(out) == [
        "test refunds::capped ... FAILED — panicked at src/refunds.rs:33:5: "
        "assertion `left == right` failed left: 500 right: 450"
    ]


def test_an_error_short_of_room_leaves_out_its_paths_directories() -> None:
    ghc = (
        "src/Shop/Cart.hs:41:9: error: [GHC-83865]\n"
        "    \u2022 Couldn't match expected type: IO ()\n"
        "    \u2022 Probable cause: \u2018chargeCart\u2019 is applied to too few arguments\n"
    )
    ledger = extract_ledger(
        [call("1", "bash", command="cabal build"), result("1", f"{ghc}\nExit code: 1")]
    )
    [item] = ledger.items()[[s.name for s in ledger.sections].index("errors")]
    assert "is applied to too few arguments" in item.forms[0]
    assert item.forms[-1].startswith("- open: Cart.hs:41:9: error: [GHC-83865] — ")
    # Read back, the line is what it showed.
    again = parse_ledger(rendered(ledger))
    assert "too few arguments" in again.state("errors").errors[0].text


def test_without_dirs_leaves_out_a_files_directories_and_nothing_else() -> None:
    assert signals.without_dirs("/home/u/app/tests/CartTests.cs(22): error x") == (
        "CartTests.cs(22): error x"
    )
    assert signals.without_dirs("at src/cart.rs:3:5 and ./lib/a.py") == "at cart.rs:3:5 and a.py"
    for kept in (
        "request to https://example.com/dist/engine.gz failed",  # a URL
        "[14:46:44 ERR] Exporter/retries a timed-out delivery",  # a test's group
        "FAIL internal/outbox.TestRetries (0.01s)",  # a Go package
    ):
        assert signals.without_dirs(kept) == kept


def _codebuff_call(prose: str, *calls: dict[str, object]) -> Message:
    blocks = [
        "<codebuff_tool_call>\n"
        + json.dumps({"cb_tool_name": c["name"], **{k: v for k, v in c.items() if k != "name"}})
        + "\n</codebuff_tool_call>"
        for c in calls
    ]
    return say("assistant", "\n\n".join([prose, *blocks]))


def _codebuff_results(*results: tuple[str, str, object]) -> Message:
    return Message(
        "user",
        tuple(
            TextPart(
                "<tool_result>\n"
                + json.dumps({"toolName": n, "toolCallId": i, "output": o}, indent=2)
                + "\n</tool_result>"
            )
            for n, i, o in results
        ),
    )


def test_tool_calls_written_in_text_as_codebuff_does_are_read_as_calls() -> None:
    # Codebuff makes no provider tool calls: each call is JSON in a <codebuff_tool_call>
    # element of the reply, each result a <tool_result> user message, the user's words in
    # <user_message>.
    ledger = extract_ledger(
        [
            say(
                "user",
                "<user_message>fix the cart totals. never touch payments.</user_message>",
            ),
            _codebuff_call(
                "Tracking it, then reading the cart.",
                {
                    "name": "add_subgoal",
                    "id": "1",
                    "objective": "Round totals once",
                    "status": "IN_PROGRESS",
                },
                {
                    "name": "add_subgoal",
                    "id": "2",
                    "objective": "Email receipts",
                    "status": "NOT_STARTED",
                },
                {"name": "read_files", "paths": ["src/cart.ts"]},
            ),
            _codebuff_results(
                ("add_subgoal", "a1", {"message": "Successfully added subgoal"}),
                ("add_subgoal", "a2", {"message": "Successfully added subgoal"}),
                ("read_files", "a3", [{"path": "src/cart.ts", "content": "export const x = 1;\n"}]),
            ),
            _codebuff_call(
                "I'll round once, in `cartTotal()`, rather than per line.",
                {
                    "name": "str_replace",
                    "path": "src/cart.ts",
                    "replacements": [{"old": "1", "new": "2"}],
                },
                {"name": "run_terminal_command", "command": "pnpm test", "cb_easp": True},
            ),
            _codebuff_results(
                ("str_replace", "b1", {"file": "src/cart.ts", "message": "Updated file"}),
                (
                    "run_terminal_command",
                    "b2",
                    {
                        "command": "pnpm test",
                        "stdout": "FAIL cart.test.ts > rounds\n Tests  1 failed | 9 passed (10)\n",
                        "exitCode": 1,
                    },
                ),
            ),
            _codebuff_call(
                "Receipts are out of scope.",
                {"name": "update_subgoal", "id": "2", "status": "ABORTED"},
                {"name": "update_subgoal", "id": "1", "status": "COMPLETE"},
            ),
            _codebuff_results(
                ("update_subgoal", "c1", {"message": "Successfully updated subgoal."}),
                ("update_subgoal", "c2", {"message": "Successfully updated subgoal."}),
            ),
        ]
    )
    assert ledger.state("files").files == {"src/cart.ts": "modified"}
    text = rendered(ledger)
    assert "`pnpm test` → exit 1" in text
    assert "1 failed | 9 passed" in text
    todos = {t.text: t.status for t in ledger.state("todos").listed}
    assert todos == {"Round totals once": "completed", "Email receipts": "cancelled"}
    said = user_messages(ledger)
    assert said == ["fix the cart totals. never touch payments."]
    assert "I'll round once, in `cartTotal()`" in text and "codebuff_tool_call" not in text


def test_results_of_calls_written_in_text_are_masked_inside_their_element() -> None:
    # Codebuff's results are user messages of `<tool_result>` elements: each large output
    # gives way to a placeholder in its element, which the digest reads as the outcome.
    big = "\n".join(f"line {n} of the build log" for n in range(400))
    messages = [
        say("user", "<user_message>build it</user_message>"),
        _codebuff_call("Building.", {"name": "run_terminal_command", "command": "pnpm build"}),
        _codebuff_results(
            ("run_terminal_command", "a1", {"command": "pnpm build", "stdout": big, "exitCode": 2})
        ),
        say("assistant", "The build failed; looking at the log."),
        say("user", "<user_message>ok</user_message>"),
    ]
    masked = MaskStrategy().mask_text_results(messages[2], messages[1])
    assert masked is not None
    element = json.loads(masked.text.removeprefix("<tool_result>").removesuffix("</tool_result>"))
    assert element["toolName"] == "run_terminal_command" and element["toolCallId"] == "a1"
    assert element["output"].startswith(MASK_PREFIX) and "`pnpm build`" in element["output"]
    assert len(masked.text) < len(messages[2].text) // 10
    ledger = extract_ledger([*messages[:2], masked, *messages[3:]])
    assert "`pnpm build` → exit 2" in rendered(ledger)


@pytest.mark.parametrize(
    ("output", "kept"),
    [
        # A long analyzer line keeps its end, where the rule's code is.
        (
            "  error - lib/src/sync/report_service.dart:31:40 - The named parameter 'limit' "
            "isn't defined. Try correcting the name to an existing named parameter's name, or "
            "defining a named parameter with the name 'limit'. - undefined_named_parameter\n",
            "undefined_named_parameter",
        ),
        # RuboCop's offenses: file:line:col, a severity letter, the cop.
        (
            "Offenses:\n\napp/jobs/till_job.rb:13:7: C: [Correctable] Style/GuardClause: Use a "
            "guard clause instead of wrapping the code inside a conditional expression.\n",
            "Style/GuardClause",
        ),
        # Perl's die: the message, then where.
        (
            "cp lib/Till/Cart.pm blib/lib/Till/Cart.pm\nToo few arguments for subroutine "
            "'Till::Cart::total' (got 1; expected 2) at lib/Till/Cart.pm line 57.\n",
            "Too few arguments for subroutine 'Till::Cart::total'",
        ),
        # clojure.test: the exception a test threw, as what it got.
        (
            "ERROR in (totals-round) (QueryExecutorImpl.java:2725)\nUncaught exception, not in "
            "assertion.\nexpected: nil\n  actual: org.postgresql.util.PSQLException: ERROR: "
            'relation "cart_lines" does not exist\n',
            'PSQLException: ERROR: relation "cart_lines" does not exist',
        ),
        # PHPStan's table: the file above, each row's line and message, its identifier under.
        (
            " ------ ---------------------------------------------\n"
            "  Line   src/Service/CartTotals.php\n"
            " ------ ---------------------------------------------\n"
            "  41     Method App\\Service\\CartTotals::sum() should return\n"
            "         int but returns mixed.\n"
            "         \U0001faaa  return.type\n"
            " ------ ---------------------------------------------\n\n"
            " [ERROR] Found 1 error\n",
            "CartTotals.php:41 Method App\\Service\\CartTotals::sum() should return int but "
            "returns mixed. (return.type)",
        ),
    ],
)
def test_error_lines_of_more_tools(output: str, kept: str) -> None:
    assert any(kept in line for line in signals.error_lines(output)), signals.error_lines(output)


def test_a_tools_error_tag_is_read_through_and_denos_failed_tests_are_error_lines() -> None:
    # An agent that wraps a failed run's output in an error tag: the output is what failed.
    wrapped = (
        "Error: <tool-runtime-error>Command exited with code: 1\noutput: running 2 tests "
        "from ./lib/cart_test.ts\ncart totals round once ... ok (3ms)\n"
        "cart totals survive the DST switch ... FAILED (7ms)\n\n ERRORS \n\n"
        "cart totals survive the DST switch => ./lib/cart_test.ts:62:6\n"
        "error: AssertionError: Values are not equal.\n</tool-runtime-error>"
    )
    outcome, errors = signals.outcome_of(wrapped, is_error=True)
    assert outcome == "exit 1"
    assert "cart totals survive the DST switch ... FAILED (7ms)" in errors
    assert not any("Command exited" in e or "tool-runtime-error" in e for e in errors)
    # deno check's and deno lint's own error lines.
    checked = (
        "Check file:///w/routes/api/orders.ts\nTS2345 [ERROR]: Argument of type 'string | null' "
        "is not assignable to parameter of type 'string'.\n\nerror[no-unused-vars]: `left` is "
        "never used\n  --> /w/islands/Cart.tsx:24:9\n"
    )
    assert [e[:14] for e in signals.error_lines(checked)] == ["TS2345 [ERROR]", "error[no-unuse"]


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


def test_a_failed_pytest_assertion_is_one_error_line_not_its_introspection() -> None:
    out = (
        "..F\n=================================== FAILURES ===================================\n"
        "_________________________ test_ties_do_not_repeat __________________________\n"
        "    def test_ties_do_not_repeat(client):\n"
        ">       assert len(seen) == 60\n"
        "E       assert 59 == 60\n"
        "E        +  where 59 = len([132, 150, 280, 311, 402, 518, ...])\n"
        "tests/api/test_pages.py:41: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/api/test_pages.py::test_ties_do_not_repeat - assert 59 == 60\n"
        "1 failed, 39 passed in 0.84s\n"
    )
    outcome, errors = signals.outcome_of(out)
    assert outcome == "failed"
    assert errors == ("FAILED tests/api/test_pages.py::test_ties_do_not_repeat - assert 59 == 60",)


def test_labelled_streams_are_read_as_the_output_and_an_exit_status_is_no_error_line() -> None:
    # Gemini CLI's shell result: each stream after its label, the first line on the label's
    # line; "Error:" holds a status that says no more than the exit code.
    build = (
        "Command: go build ./...\nDirectory: (root)\nStdout: (empty)\n"
        "Stderr: # example.com/svc/internal/ratelimit\n"
        "internal/ratelimit/limiter.go:22:39: unknown field window in struct literal\n"
        "Error: Command exited with code 1\nExit Code: 1\nSignal: (none)\n"
        "Background PIDs: (none)\nProcess Group PGID: 6331"
    )
    outcome, errors = signals.outcome_of(build)
    assert outcome == "exit 1"
    assert errors == (
        "internal/ratelimit/limiter.go:22:39: unknown field window in struct literal",
    )
    lint = (
        "Command: golangci-lint run ./...\nDirectory: (root)\n"
        "Stdout: internal/ratelimit/limiter.go:31:14: Error return value of `l.rdb.ScriptLoad` "
        "is not checked (errcheck)\n\tl.rdb.ScriptLoad(ctx, src)\n1 issues:\n* errcheck: 1\n"
        "Stderr: (empty)\nError: Command exited with code 1\nExit Code: 1"
    )
    outcome, errors = signals.outcome_of(lint)
    assert outcome == "exit 1" and errors[0].endswith("is not checked (errcheck)")
    assert all("exited with code" not in e for e in errors)
    # A status alone is still no reason: the outcome says it.
    assert signals.outcome_of("Error: Process exited with code 2\nExit Code: 2") == ("exit 2", ())


def test_identifiers_from_json_and_prose() -> None:
    reply = json.dumps({"deployment_id": "dep_28338044c6a6d33f", "status": "ok", "n": 3})
    assert signals.identifiers(reply) == ("deployment_id=dep_28338044c6a6d33f",)
    found = signals.identifiers("see JIRA-4821 and 123e4567-e89b-12d3-a456-426614174000, UTF-8")
    assert found == ("JIRA-4821", "123e4567-e89b-12d3-a456-426614174000")


def test_identifiers_survive_masking_into_the_digest() -> None:
    reply = json.dumps({"request_id": "req_daa2d6ffef589c88", "rows": list(range(400))})
    ledger = extract_ledger([call("1", "http_get", url="/api"), result("1", reply)])
    assert ledger.state("identifiers").identifiers == ["request_id=req_daa2d6ffef589c88"]
    text = rendered(ledger)
    assert "request_id=req_daa2d6ffef589c88" in text
    assert parse_ledger(text).state("identifiers").identifiers == [
        "request_id=req_daa2d6ffef589c88"
    ]


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
    notes = [text for _, _, text in ledger.state("notes").notes]
    assert any("acct_5290f2bf2dac" in n for n in notes)
    assert any("validation error for CohortPayload" in n for n in notes)
    assert not any("Looks good" in n for n in notes)


def test_a_smaller_room_keeps_the_user_words_longest_and_is_never_empty() -> None:
    ledger = extract_ledger(
        [say("user", "Never log tokens or API keys, not even at debug level.")]
        + [say("assistant", f"I'll go with option {i} since it is simpler.") for i in range(30)]
    )
    budgets = (None, 2000, 1000, 400, 150, 60, 0)
    sizes = [len("\n".join(render(ledger, b))) for b in budgets]
    assert sizes == sorted(sizes, reverse=True)
    for budget in budgets:
        lines = render(ledger, budget)
        if budget is not None:
            assert len("\n".join(lines)) <= max(budget, len("\n".join(lines[:3])))
        assert any("Never log tokens or API keys" in line for line in lines), budget


def test_a_long_command_is_cut_short_rather_than_left_out_for_room() -> None:
    command = (
        'git add .gitignore && git commit -m "$(cat <<EOF\n'
        + "Ignore build output. " * 12
        + '\nEOF\n)"'
    )
    ledger = extract_ledger(
        [
            call("c1", "Bash", command="git status"),
            result("c1", "clean"),
            call("c2", "Bash", command=command),
            result("c2", "error: hook declined\nexit code 1"),
        ]
    )
    full = "\n".join(render(ledger))
    room = len(full) - 120
    lines = render(ledger, room)
    assert len("\n".join(lines)) <= room
    assert any(line.startswith("- `git add .gitignore && git commit") for line in lines)
    assert any("`git status` → ok" in line for line in lines)


def test_the_output_of_an_action_a_summary_ends_on_is_that_actions_outcome() -> None:
    # An agent compacted while its action ran: the summary ends on the command, its output
    # arrives after it. Read again, the output is the command's: its test run counts.
    test = "Rscript -e 'devtools::test()'"
    first = extract_ledger(
        [
            say("user", "Fix the outbox."),
            say("assistant", f"Running the tests.\n```sh\n{test}\n```"),
        ]
    )
    assert f"- `{test}` → no output seen" in render(first)
    output = (
        "Observation:\n══ Failed ══\nError: sends nothing\n[ FAIL 1 | WARN 0 | SKIP 0 | PASS 36 ]"
    )
    again = extract_ledger([summary_message(render(first), first.messages), say("user", output)])
    text = rendered(again)
    assert f"- [ FAIL 1 | WARN 0 | SKIP 0 | PASS 36 ] (`{test}`)" in text
    assert "no output seen" not in text and "an action the summary holds" not in text


def test_a_room_too_small_for_the_first_item_shows_one_that_fits() -> None:
    # A summary that cannot show its first line is dropped for want of room; a shorter line
    # that fits keeps it, with its full text beside for a later compaction to restore.
    rule = "One hard rule for this repo: usage errors must keep exit status 2 in the CLI."
    ledger = extract_ledger(
        [
            say("user", rule),
            call("c1", "write_file", path="src/q.py", content="x = 1\n"),
            Message("tool", (ToolResultPart("c1", "ok"),)),
        ]
    )
    full = render(ledger)
    file_line = next(line for line in full if "src/q.py" in line)
    room = len(file_line) + 40
    assert room < len(rule)
    lines = render(ledger, room)
    assert any("src/q.py" in line for line in lines)
    assert len("\n".join(lines)) <= room + 2  # the blank line before a heading
    # No room for any line: the first in order, as before.
    assert any(rule in line for line in render(ledger, 0))


def test_a_span_no_section_keeps_is_still_told_by_its_last_words() -> None:
    # A span of one acknowledgement holds no file, command, decision or telling token:
    # its digest still says what was said, and says it again after a re-digest.
    ledger = extract_ledger([say("assistant", "Fine by me, I'll hold to that rule.")])
    for budget in (None, 200, 0):
        assert any("Fine by me, I'll hold to that rule." in line for line in render(ledger, budget))
    again = parse_ledger(rendered(ledger))
    assert "Fine by me, I'll hold to that rule." in rendered(again)
    # Where any section keeps something, the last words are not shown beside it.
    busy = extract_ledger(
        [say("user", "Keep the API stable."), say("assistant", "Fine by me, I'll hold to that.")]
    )
    assert "Fine by me" not in rendered(busy)


def test_a_digest_read_back_does_not_revise_its_own_decisions_by_its_own_subjects() -> None:
    # The subject line holds the very message the decision came from: read back alone, the
    # digest stands as it was, and the plan it called unworkable is not made current.
    ledger = extract_ledger(
        [
            say("user", "Pending jobs must resume after a restart."),
            say(
                "assistant",
                "A crontab line per web node won't hold up here: every web node fires the same "
                "run at the same minute. I'm switching to the Laravel scheduler with onOneServer.",
            ),
        ]
    )
    before = [(d.text, d.superseded_by) for d in ledger.state("decisions").decisions]
    # The reversal with the sentences that say what it reverses: one statement.
    assert before == [
        (
            "A crontab line per web node won't hold up here: every web node fires the same run "
            "at the same minute. I'm switching to the Laravel scheduler with onOneServer.",
            "",
        )
    ]
    again = extract_ledger([summary_message(render(ledger), ledger.messages)])
    assert [(d.text, d.superseded_by) for d in again.state("decisions").decisions] == before


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


def test_git_rm_deletes_its_files_but_not_when_it_only_untracks_them() -> None:
    assert signals.file_ops_of_command("git rm -q src/legacy.cpp docs/old.md") == (
        ("src/legacy.cpp", "deleted"),
        ("docs/old.md", "deleted"),
    )
    assert signals.file_ops_of_command("git rm --cached build/app.o") == ()


def todo_call(call_id: str, *items: tuple[str, str]) -> Message:
    todos = [{"content": text, "status": status, "activeForm": text} for text, status in items]
    return call(call_id, "TodoWrite", todos=todos)


def test_the_latest_todo_list_is_the_state_and_done_items_are_not_open() -> None:
    ledger = extract_ledger(
        [
            todo_call("1", ("Add the retry flag", "pending"), ("Write the docs", "pending")),
            result("1", "Todos have been modified successfully."),
            todo_call("2", ("Add the retry flag", "completed"), ("Write the docs", "in_progress")),
            result("2", "Todos have been modified successfully."),
        ]
    )
    text = rendered(ledger)
    assert "- [in progress] Write the docs" in text
    assert "- [completed] Add the retry flag" in text
    assert "- Add the retry flag" not in text, "a to-do later done is not listed as open"


@pytest.mark.parametrize(
    ("line", "name"),
    [
        # munit's `==> X` (an `[error]` line under sbt); vitest's cross mark.
        ("[error] ==> X com.acme.OutboxSuite.keeps batches in order  0.02s munit.FailException",
         "com.acme.OutboxSuite.keeps batches in order"),
        (" × src/outbox.test.ts > outbox > keeps batches in order 4ms",
         "src/outbox.test.ts > outbox > keeps batches in order"),
    ],
)  # fmt: skip
def test_a_marked_failed_test_line_names_the_test(line: str, name: str) -> None:
    out = "\n".join(
        ["running 12 tests", line, "[info] + decodes a payload 0.01s", "1 failed, 11 passed"]
    )
    outcome, errors = signals.outcome_of(out)
    assert outcome == "failed"
    assert any(name in e for e in errors), errors
    assert not any("decodes a payload" in e for e in errors)


@pytest.mark.parametrize(
    ("out", "name"),
    [
        # busted: the spec's location, then its name on the next line.
        (
            "●●◼●\n3 successes / 1 failure / 0 errors / 0 pending : 0.5 seconds\n\n"
            "Failure → spec/webhook_spec.lua @ 31\nwebhook retries a timed-out delivery\n"
            "spec/webhook_spec.lua:34: Expected objects to be the same.\nPassed in:\n(number) 2",
            "webhook retries a timed-out delivery",
        ),
        # testthat: the name inside its rule line.
        (
            "══ Failed tests ══\n── Failure (test-outbox.R:31:3): retries a timed-out delivery ──\n"
            "Expected `attempts` to equal 3.\n\n[ FAIL 1 | WARN 0 | SKIP 0 | PASS 36 ]",
            "retries a timed-out delivery",
        ),
        # Test::More under prove (TAP): the name quoted, its location on the next line.
        (
            "t/flush.t ...... 1/? \n#   Failed test 'retries a timed-out delivery'\n"
            "#   at t/flush.t line 31.\n#          got: '2'\n#     expected: '3'\n"
            "# Looks like you failed 1 test of 16.\nt/flush.t ...... Dubious, test returned 1\n"
            "Failed 1/16 subtests \n\nTest Summary Report\n-------------------\n"
            "t/flush.t (Wstat: 256 (exited 1) Tests: 16 Failed: 1)\n  Failed test:  4\n"
            "Files=1, Tests=16,  1 wallclock secs ( 0.04 usr +  0.70 cusr =  0.74 CPU)\n"
            "Result: FAIL",
            "retries a timed-out delivery",
        ),
        # gleeunit: what failed and where, the test's name on the next line.
        (
            "    Running relay_test.main\n..\nassert test/relay/queue_test.gleam:41\n"
            " test: relay@queue_test.gives_up_after_third_failure_test\n code: assert n == 3\n"
            " left: 2\nright: literal\n info: Assertion failed.\n.\n52 passed, 1 failure",
            "relay@queue_test.gives_up_after_third_failure_test",
        ),
        # clojure.test's reporter: the test's var in brackets, then where it failed.
        (
            "Testing ferry.queue-test\n\nFAIL in (retries-timed-out-delivery) "
            "(queue_test.clj:31)\nretries a timed-out delivery three times\n"
            "expected: (= 3 (attempts r))\n  actual: (not (= 3 2))\n\n"
            "Ran 12 tests containing 43 assertions.\n1 failures, 0 errors.",
            "retries-timed-out-delivery",
        ),
    ],
)
def test_failed_tests_named_around_their_location_are_read(out: str, name: str) -> None:
    outcome, errors = signals.outcome_of(out)
    assert outcome == "failed"
    assert any(name in e for e in errors), errors


@pytest.mark.parametrize(
    "out",
    [
        "Request failed with status code 404",
        "EISDIR: illegal operation on a directory, read",
        "\n  Repository not found.\n\nVisit the page to index it.",
    ],
)
def test_a_result_the_tool_flags_as_an_error_says_why_in_its_own_words(out: str) -> None:
    # A fetch or a read that failed reports it in a line no error reader knows: flagged as
    # an error by the tool, the output is the error, and the digest keeps it.
    first_line = next(line.strip() for line in out.splitlines() if line.strip())
    outcome, errors = signals.outcome_of(out, is_error=True)
    assert outcome != "ok" and errors == (first_line,)
    ledger = extract_ledger(
        [call("1", "WebFetch", url="https://example.com/a"), result("1", out, is_error=True)]
    )
    assert first_line in rendered(ledger)
    # Not flagged, the same words are a page's content, not an error.
    assert signals.outcome_of(out) == ("ok", ())


def test_a_lua_error_with_its_stack_traceback_is_a_failure() -> None:
    out = "\n".join(
        [
            "lua: src/outbox.lua:88: attempt to index a nil value (local 'tenant')",
            "stack traceback:",
            "        src/outbox.lua:88: in function 'outbox.send'",
            "        [C]: in ?",
        ]
    )
    outcome, errors = signals.outcome_of(out)
    assert outcome != "ok"
    assert any("attempt to index a nil value (local 'tenant')" in e for e in errors), errors


def test_an_item_the_list_closes_in_its_own_word_is_told_in_that_word() -> None:
    # "- [x] ~~Backfill last week~~ (dropped)": the list says how the item ended; the digest
    # says it in the list's word, and reads it back.
    listed = "- [x] Persist state\n- [x] ~~Backfill last week~~ (dropped)\n- [ ] ~~Old alert~~\n"
    ledger = extract_ledger(
        [
            call("1", "update_todo_list", todos=listed),
            result("1", "Todo list updated successfully."),
        ]
    )
    text = rendered(ledger)
    assert "- [dropped] Backfill last week" in text
    assert "- [cancelled] Old alert" in text
    assert "- [dropped] Backfill last week" in rendered(parse_ledger(text))
    assert parse_ledger(text).state("todos").listed[1].status == "cancelled"


def test_a_todo_left_out_of_a_whole_list_is_told_as_removed_not_lost() -> None:
    # The tool states the whole list each time: an open item a later list leaves out was
    # removed from it (not said done, nor cancelled: what became of it is not said). Saying
    # so keeps the agent from doing it again; it is never shown as open.
    first = todo_call("1", ("Add the retry flag", "pending"), ("Remove the old shim", "pending"))
    second = todo_call("2", ("Add the retry flag", "completed"))
    ledger = extract_ledger(
        [first, result("1", "Todos updated."), second, result("2", "Todos updated.")]
    )
    text = rendered(ledger)
    assert "- [removed from the list] Remove the old shim" in text
    assert "- Remove the old shim" not in text
    assert "- [completed] Add the retry flag" in text
    # The same when the two lists are in two spans digested apart, then merged.
    earlier = extract_ledger([first, result("1", "Todos updated.")])
    later = extract_ledger([second, result("2", "Todos updated.")])
    assert "- [removed from the list] Remove the old shim" in rendered(earlier.merge(later))
    again = parse_ledger(rendered(earlier.merge(later)))
    assert "- [removed from the list] Remove the old shim" in rendered(again)
    # Read back from a digest first: the open items of the list it showed are the list's,
    # and one a later list leaves out was removed from it.
    third = todo_call("3", ("Add the retry flag", "completed"), ("Write the docs", "pending"))
    both = todo_call("4", ("Add the retry flag", "completed"), ("Remove the old shim", "pending"),
                     ("Write the docs", "pending"))  # fmt: skip
    summary = summary_message(render(extract_ledger([both, result("4", "Todos updated.")])), 2)
    resumed = rendered(extract_ledger([summary, third, result("3", "Todos updated.")]))
    assert "- [removed from the list] Remove the old shim" in resumed
    assert "- Write the docs" in resumed

    # A list numbered anew gives a left-out item's id to another: an id naming other words
    # is another item (one renamed keeps most of its words).
    def numbered(call_id: str, *items: tuple[int, str, str]) -> Message:
        todo_list = [{"id": n, "title": t, "status": st} for n, t, st in items]
        return call(call_id, "manage_todo_list", todoList=todo_list)

    done = (1, "Persist reminders", "completed")
    titles = (
        "Backfill booked visits",
        "Alert on the outbox backlog",
        "Alert on the backlog over 500",
    )
    lists = [(2, title, "not-started") for title in titles]
    renumbered = extract_ledger(
        [
            message
            for k, item in enumerate(lists)
            for message in (numbered(str(k), done, item), result(str(k), "Wrote the todo list"))
        ]
    )
    text = rendered(renumbered)
    assert "- [removed from the list] Backfill booked visits" in text
    assert "- Alert on the backlog over 500" in text
    assert "- [removed from the list] Alert on the outbox backlog\n" not in text


def test_bracketed_fail_verdicts_name_the_tests_that_failed() -> None:
    # alcotest prints one line per test, the verdict in brackets first.
    alcotest = "\n".join(
        [
            "Testing `tidemark'.",
            "  [FAIL]        signer             0   retries a timed-out delivery three times.",
            *(f"  [OK]          signer             {n}   decodes case {n}." for n in range(1, 9)),
            "Full test results in `_build/_tests/tidemark'.",
            "1 failure! in 0.020s. 9 tests run.",
        ]
    )
    outcome, errors = signals.outcome_of(alcotest)
    assert outcome == "failed"
    assert any("retries a timed-out delivery three times" in e for e in errors)
    assert not any("decodes case" in e for e in errors)


def test_a_count_summary_keeps_the_line_of_how_many_ran_just_above_it() -> None:
    # clojure.test: "Ran 23 tests containing 48 assertions." then "1 failures, 0 errors.":
    # the two lines are the summary; the second alone says nothing of how many ran.
    out = (
        "Testing heronry.signing-test\n\nRan 23 tests containing 48 assertions.\n"
        "1 failures, 0 errors.\nTest failures or errors occurred.\n"
    )
    summary = signals.test_summary(out)
    assert summary == "Ran 23 tests containing 48 assertions. 1 failures, 0 errors."
    assert signals.summary_fails(summary)
    # A count line with no such line above it is read alone, as before.
    assert signals.test_summary("ok\n3 failed, 10 passed in 2.1s\n") == "3 failed, 10 passed"


def test_a_summary_of_capitalized_outcome_counts_is_read() -> None:
    # sbt prints `Failed: Total 34, Failed 1, Errors 0, Passed 33` (and `Passed: Total …`).
    out = "\n".join(
        [
            "[info] + retries a timed-out delivery 0.01s",
            "[error] ==> X com.acme.OutboxSuite.keeps batches  0.02s munit.FailException",
            "[error] Failed: Total 34, Failed 1, Errors 0, Passed 33",
            "[error] Failed tests:",
            "[error] \tcom.acme.OutboxSuite",
            "[error] (Test / test) sbt.TestsFailedException: Tests unsuccessful",
            "[error] Total time: 12 s, completed Nov 27, 2026, 10:02:11 AM",
        ]
    )
    summary = signals.test_summary(out)
    assert summary is not None and "Total 34, Failed 1, Errors 0, Passed 33" in summary
    assert signals.summary_fails(summary)
    assert signals.outcome_of(out)[0] == "failed"
    ok = "[info] Passed: Total 61, Failed 0, Errors 0, Passed 61\n[success] Total time: 9 s"
    assert "Total 61, Failed 0, Errors 0, Passed 61" in (signals.test_summary(ok) or "")
    assert not signals.summary_fails(signals.test_summary(ok) or "")
    # testthat's closing tally, bars between the counts.
    tally = "✔ | F W  S  OK | Context\n══ Failed tests ══\n[ FAIL 1 | WARN 0 | SKIP 0 | PASS 36 ]"
    assert "[ FAIL 1 | WARN 0 | SKIP 0 | PASS 36 ]" in (signals.test_summary(tally) or "")
    assert signals.summary_fails(signals.test_summary(tally) or "")
    assert not signals.summary_fails("[ FAIL 0 | WARN 0 | SKIP 0 | PASS 37 ]")
    # Words and numbers that are no list of counts are not a summary.
    assert signals.test_summary("GET /api/items 404\nretry 3 of 5\nerror 2 times") is None


def test_dotnets_terminal_logger_summary_of_labelled_counts_is_read() -> None:
    # .NET's terminal logger closes `dotnet test` with `Test summary: total: N, failed: F, …`,
    # then the build's verdict ("Build failed with 1 error(s)", which is no test count).
    failed = (
        "  Tailwag.Api.Tests test net8.0 failed with 1 error(s) (2.6s)\n\n"
        "Test summary: total: 47, failed: 1, succeeded: 46, skipped: 0, duration: 2.6s\n"
        "Build failed with 1 error(s) in 4.5s\n\nCommand exited with code 1"
    )
    summary = signals.test_summary(failed)
    assert summary is not None and "total: 47, failed: 1, succeeded: 46" in summary
    assert signals.summary_fails(summary)
    passed = "Test summary: total: 40, failed: 0, succeeded: 40, skipped: 0, duration: 1.0s\n"
    passed += "Build succeeded in 6.8s"
    assert not signals.summary_fails(signals.test_summary(passed) or "failed")


def test_a_markdown_heading_is_no_sentence_of_the_prose_below_it() -> None:
    # "## Change of plan" over the reversal: joined to it, the heading took the place of the
    # sentence naming the replacement, and the line quoted nothing the assistant wrote.
    reversal = (
        "I'm not going ahead with a cron job calling the resend endpoint: it skips runs "
        "during upgrades. Switching to a scheduler inside the relay."
    )
    assert signals.sentences("## Change of plan\n" + reversal) == (
        "I'm not going ahead with a cron job calling the resend endpoint: it skips runs "
        "during upgrades.",
        "Switching to a scheduler inside the relay.",
    )
    ledger = extract_ledger(
        [
            say("assistant", "I'll go with a cron job calling the resend endpoint."),
            say("assistant", "## Change of plan\n" + reversal),
        ]
    )
    text = rendered(ledger)
    assert "## Change of plan" not in text
    assert reversal in text


@pytest.mark.parametrize(
    "reversal",
    [
        "Because the platform team will not provision it, I'm dropping a compacted Kafka "
        "topic too; a Postgres outbox table replaces it.",
        "I'm not going ahead with a compacted Kafka topic: a Postgres outbox table it is.",
        "We're giving up on a compacted Kafka topic, a Postgres outbox table is simpler.",
        "Hmm, a compacted Kafka topic read by the relay has a problem too: a topic per "
        "tenant. So I'm changing course again, to a Postgres outbox table.",
        "That rules out a compacted Kafka topic read by the relay as well, since it needs a "
        "topic per tenant. I'll go with a Postgres outbox table.",
        "I have to revise the design once more: a topic per tenant would be needed, so a "
        "compacted Kafka topic read by the relay is out as well. Going with a Postgres outbox "
        "table.",
        "Revising once more: a compacted Kafka topic read by the relay brings its own trouble, "
        "a topic per tenant. The fix will use a Postgres outbox table.",
        "A compacted Kafka topic read by the relay is no good either, because it needs a topic "
        "per tenant. Replacing it with a Postgres outbox table.",
        "A compacted Kafka topic read by the relay is not good enough either, since it needs a "
        "topic per tenant. Replacing it with a Postgres outbox table.",
        "A compacted Kafka topic read by the relay is no good either, because it needs a topic "
        "per tenant. Replacing it with a Postgres outbox table.\n\nNext, run this in the "
        "repository root:\n\n```sh\ntail -n 60 logs/relay.log\n```",
    ],
)
def test_a_plan_dropped_in_other_words_no_longer_stands(reversal: str) -> None:
    plan = "The approach is now a compacted Kafka topic read by the relay."
    ledger = extract_ledger([say("assistant", plan), say("assistant", reversal)])
    lines = render(ledger)
    decisions = lines[lines.index("## Decisions and plans (standing)") :]
    decisions = decisions[: decisions.index("") if "" in decisions else None]
    # The reversal may quote the old plan; the old plan's own line no longer stands.
    assert "- The approach is now a compacted Kafka topic read by the relay." not in decisions
    assert any(line.startswith("- superseded") for line in decisions), decisions
    # The same when the two were digested apart and merge (a session compacted again).
    earlier = extract_ledger([say("assistant", plan)])
    merged = render(earlier.merge(extract_ledger([say("assistant", reversal)])))
    assert f"- {plan}" not in merged, merged


def test_a_code_agents_steps_are_read_as_actions_and_observations() -> None:
    # smolagents' CodeAgent: code in the assistant's text, the environment's reply (and the
    # user's next task after it) in a user message.
    def step(code: str) -> Message:
        record = "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': "
        record += f"{{'name': 'python_interpreter', 'arguments': {code!r}}}}}]"
        return say("assistant", f"Thought: next.\n<code>\n{code}\n</code>\n{record}")

    ledger = extract_ledger(
        [
            say("user", "New task:\nResend the parked envelopes."),
            step('print(read_file(path="R/backoff.R"))'),
            say(
                "user",
                "Observation:\nExecution logs:\nbackoff <- function(x) x\n"
                "Last output from code snippet:\nNone",
            ),
            step("print(run_shell(command=\"Rscript -e 'devtools::test()'\"))"),
            say(
                "user",
                "Observation:\nExecution logs:\n[ FAIL 1 | WARN 0 | SKIP 0 | PASS 36 ]\n"
                "Last output from code snippet:\nNone\nNew task:\n"
                "Keep this in mind: don't change the public signature of signer_send.",
            ),
            step('final_answer("Going with a DBI outbox table; 1976e5d is the culprit.")'),
        ]
    )
    text = rendered(ledger)
    assert "R/backoff.R (read)" in text
    assert "Rscript -e 'devtools::test()'" in text
    assert "don't change the public signature of signer_send" in text
    assert "1976e5d is the culprit" in text
    said = "\n".join(user_messages(ledger))
    assert "Execution logs" not in said and "backoff <- function" not in said
    assert "Calling tools" not in text


def test_a_new_value_in_the_next_sentence_of_the_message_naming_it_is_read() -> None:
    ledger = extract_ledger(
        [
            say("user", "Set the parked envelope retention to 90 days."),
            say(
                "user",
                "90 days for the parked envelope retention broke the load test. "
                "Use 30 days, and that is final.",
            ),
        ]
    )
    text = rendered(ledger)
    assert "- parked envelope retention: 30 days" in text
    # A sentence that sets a value of its own keeps it.
    other = extract_ledger(
        [
            say("user", "Set the parked envelope retention to 90 days."),
            say("user", "The parked envelope retention stays as it is. The cache ttl is 30 days."),
        ]
    )
    assert "- parked envelope retention: 90 days" in rendered(other)


def test_a_reversal_cut_short_keeps_what_replaces_the_plan() -> None:
    # Its end names the new plan: a short form that keeps the head names only the old one,
    # and reads as if it stood.
    reversal = (
        "a Redis list written through redux will not do either, because the shared Redis "
        "evicts keys under memory pressure at night. Replacing it with a DBI outbox table in "
        "Postgres drained by a later::later loop."
    )
    ledger = extract_ledger(
        [
            say("assistant", "I am switching to a Redis list written through redux."),
            say("assistant", reversal),
        ]
    )
    full = "\n".join(render(ledger))
    for budget in range(len(full), 60, -10):
        lines = [line for line in render(ledger, budget) if "Redis evicts" in line or "DBI" in line]
        assert lines and all("a DBI outbox table in Postgres" in line for line in lines), lines


def test_an_error_fixed_later_is_kept_with_what_fixed_it() -> None:
    ledger = extract_ledger(
        [
            call("1", "Bash", command="pytest tests/test_api.py"),
            result("1", "E   TypeError: unsupported operand\n1 failed, 4 passed in 0.3s"),
            call("2", "Edit", file_path="src/api.py", old_string="a", new_string="b"),
            result("2", "The file src/api.py has been updated."),
            call("3", "Bash", command="pytest tests/test_api.py"),
            result("3", "5 passed in 0.2s"),
        ]
    )
    text = rendered(ledger)
    assert "fixed: E   TypeError: unsupported operand" in text or "fixed: TypeError" in text
    assert "`pytest tests/test_api.py` passed after changing src/api.py" in text
    assert "- open:" not in text
    assert "5 passed (`pytest tests/test_api.py`) (earlier: 1 failed, 4 passed)" in text


def test_a_reversed_plan_shows_only_the_standing_one_as_current() -> None:
    ledger = extract_ledger(
        [
            say("assistant", "I'll use Redis for the session cache since it is shared."),
            say("assistant", "Scrap the Redis cache idea: switching to an in-process LRU cache."),
        ]
    )
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert standing == ["Scrap the Redis cache idea: switching to an in-process LRU cache."]
    text = rendered(ledger)
    assert "- superseded (by: Scrap the Redis cache idea" in text


def test_the_react_format_around_an_answer_is_not_the_assistants_words() -> None:
    # CrewAI and LangChain agents write every answer as `Thought: I now know the final
    # answer` then `Final Answer: …`: the format's words, shared by every answer, neither
    # tie an acknowledgement to the decision before it nor show in the digest.
    def answer(words: str) -> Message:
        return say("assistant", f"Thought: I now know the final answer\nFinal Answer: {words}")

    ledger = extract_ledger(
        [
            answer("I am going with one Mutex around the whole redelivery loop, for now."),
            answer("Got it, that rule applies to the rest of the work."),
            answer("config/relaycast.yml now has the redelivery jitter at 700 milliseconds."),
        ]
    )
    decisions = ledger.state("decisions").decisions
    assert [d.superseded_by for d in decisions] == [""] * len(decisions)
    text = rendered(ledger)
    assert "- I am going with one Mutex around the whole redelivery loop, for now." in text
    assert "Final Answer" not in text and "I now know the final answer" not in text


def test_a_value_changed_in_other_words_is_never_stated_stale() -> None:
    ledger = extract_ledger(
        [
            say("user", "Set the cache ttl to 10 minutes."),
            say("user", "Hmm, make it 30 minutes instead of 10 minutes."),
            say("user", "Set the flush interval to 750 ms."),
            say("user", "Make the flush interval 1500 milliseconds."),
        ]
    )
    text = rendered(ledger)
    assert "- cache ttl: 30 minutes (earlier: 10 minutes)" in text
    assert "- flush interval: 1500 milliseconds" in text
    assert "- flush interval: 750" not in text


def test_a_change_the_readers_cannot_parse_is_quoted_not_guessed() -> None:
    ledger = extract_ledger(
        [
            say("user", "Set the batch size to 64."),
            say("user", "On reflection the batch size of 64 is too big, halve it."),
        ]
    )
    text = rendered(ledger)
    assert "- batch size: 64" not in text
    assert "batch size: unsettled" in text and "halve it" in text


def test_a_change_naming_neither_value_nor_setting_in_the_same_kind_of_unit_unsettles_it() -> None:
    # "Finance wants the keys kept for 7 days, so settle on 7 days.": the retention, set in
    # hours, was stated as current; the change names neither, but a duration is a duration.
    ledger = extract_ledger(
        [
            say("user", "Set the retention to 24 hours. Set the batch size to 64."),
            say("user", "Make the retention 48 hours instead of 24 hours."),
            say("user", "Finance wants the keys kept for 7 days, so settle on 7 days."),
        ]
    )
    text = rendered(ledger)
    assert "- retention: 48 hours" not in text
    assert "retention: unsettled" in text and "settle on 7 days" in text
    assert "- batch size: 64" in text  # a count is no duration


def test_make_that_a_new_count_unsettles_the_one_count_the_user_set() -> None:
    # "Thinking about it more: make that 21 tries.": the attempts, set as a count, were stated
    # as current; the change names neither setting nor old value, and tries are no duration.
    ledger = extract_ledger(
        [
            say("user", "Bump the max attempts to 18 attempts. Set the flush interval to 750 ms."),
            say("user", "Thinking about it more: make that 21 tries. Partners deploy on weekends."),
        ]
    )
    text = rendered(ledger)
    assert "- max attempts: 18 attempts" not in text
    assert "max attempts: unsettled" in text and "make that 21 tries" in text
    assert "- flush interval: 750 ms" in text  # a duration is no count
    # A bare figure after a word of second thoughts: "Thinking again: 28 at a time."
    again = extract_ledger(
        [
            say("user", "Make the batch 17 reports. Set the flush interval to 750 ms."),
            say("user", "Thinking again: 28 at a time. The new gateway takes bigger bodies."),
        ]
    )
    assert "- batch: 17 reports" not in rendered(again)
    assert "batch: unsettled" in rendered(again) and "28 at a time" in rendered(again)
    # With two counts set, which one "that" is cannot be told: neither is touched.
    two = extract_ledger(
        [
            say("user", "Bump the max attempts to 18 attempts. Set the pool size to 20 workers."),
            say("user", "Thinking about it more: make that 21 tries."),
        ]
    )
    assert "- max attempts: 18 attempts" in rendered(two)
    assert "- pool size: 20 workers" in rendered(two)


def test_the_users_words_in_a_tool_result_are_the_users_and_a_denied_use_did_nothing() -> None:
    denied = (
        '{"status":"denied","message":"The user denied this operation and provided the '
        'following feedback","feedback":"Not that one. app/Legacy/V1.php is frozen. Everything '
        'new goes into app/Reminder.php."}'
    )
    completion = (
        "The user has provided feedback on the results. Consider their input to continue the "
        "task, and then attempt completion again.\n<feedback>\nRaise the throttle to 40 per "
        "minute, the gateway raised our limit.\n</feedback>"
    )
    ledger = extract_ledger(
        [
            say("user", "Send reminders. Keep the throttle at 20 per minute."),
            call("1", "read_file", path="app/Legacy/V1.php"),
            result("1", "<?php class V1 {}"),
            call("2", "apply_diff", path="app/Legacy/V1.php", diff="<<<<<<< SEARCH\n..."),
            result("2", denied),
            call("3", "attempt_completion", result="Reminders are queued."),
            result("3", completion),
        ]
    )
    text = rendered(ledger)
    assert "- Raise the throttle to 40 per minute, the gateway raised our limit." in text
    # What a denied write would have defined is not the code's.
    write = {
        "path": "app/Jobs/Sweep.php",
        "content": "<?php\nclass OutboxSweeper {\n}\n",
        "line_count": 3,
    }
    refused_write = extract_ledger(
        [
            say("user", "Add the sweeper."),
            call("9", "write_to_file", **write),
            result("9", '{"status":"denied","message":"The user denied this operation"}'),
        ]
    )
    assert "OutboxSweeper" not in rendered(refused_write)
    # A denied command did not run: listed as denied.
    refused = extract_ledger(
        [
            say("user", "Restart the proxy."),
            call("4", "execute_command", command="taskkill /F /IM proxy.exe"),
            result(
                "4", "[execute_command for 'taskkill'] Result:\nThe user denied this operation."
            ),
        ]
    )
    assert "- `taskkill /F /IM proxy.exe` → denied by the user" in rendered(refused)
    assert "app/Legacy/V1.php (read; the user pointed to app/Reminder.php instead)" in text
    assert "(modified" not in text


def test_the_users_feedback_in_a_result_written_as_xml_is_theirs_and_asks() -> None:
    # Cline written in text: the tool use is XML in the assistant's reply, its result a
    # user turn `[tool] Result:`. Feedback on a completion is the user's words, and a request
    # in it ("give me the mean") is a question the assistant's next figure answers.
    ledger = extract_ledger(
        [
            say("user", "Fix the redelivery."),
            say(
                "assistant",
                "<attempt_completion>\n<result>Redelivery is back.</result>\n</attempt_completion>",
            ),
            say(
                "user",
                "[attempt_completion] Result: Done\nThe user has provided feedback on the "
                "results. Consider their input to continue the task, and then attempt "
                "completion again.\n<feedback>\ntime the drain of a single batch and give me "
                "the mean. hold on to that number\n</feedback>",
            ),
            say(
                "assistant",
                "<execute_command>\n<command>racket bench/drain.rkt</command>\n</execute_command>",
            ),
            say("user", "[execute_command for 'racket bench/drain.rkt'] Result:\nmean: 484.5013"),
            say(
                "assistant",
                "Per bench/drain.rkt, one batch takes 484.50 µs on average.\n\n"
                "<read_file>\n<path>private/scheduler.rkt</path>\n</read_file>",
            ),
        ]
    )
    text = rendered(ledger)
    assert "- time the drain of a single batch and give me the mean." in text
    answers = text.split("## Answers given to the user")[1]
    assert "484.50 µs" in answers
    # Denied, a command written in text did not run, and the user's reason is theirs.
    refused = rendered(
        extract_ledger(
            [
                say("user", "Restart the proxy."),
                say(
                    "assistant",
                    "<execute_command>\n<command>taskkill /F /IM proxy.exe</command>\n"
                    "</execute_command>",
                ),
                say(
                    "user",
                    "[execute_command for 'taskkill /F /IM proxy.exe'] Result:\nThe user "
                    "denied this operation.\n<feedback>\nnot on my machine, use the staging "
                    "box\n</feedback>",
                ),
            ]
        )
    )
    assert "- `taskkill /F /IM proxy.exe` → denied by the user" in refused
    assert "- not on my machine, use the staging box" in refused


def test_a_sentence_introducing_a_code_block_is_kept_with_the_code_it_introduces() -> None:
    # "For the DBA ticket, instead of the search_vector index:" then the SQL: the sentence
    # alone names nothing; the statement it introduces is what was given.
    text = rendered(
        extract_ledger(
            [
                say("user", "Give me the SQL for the index, I'll put it in their ticket."),
                say(
                    "assistant",
                    "For the DBA ticket, instead of the search_vector index:\n\n```sql\n"
                    "CREATE EXTENSION IF NOT EXISTS pg_trgm;\nCREATE INDEX CONCURRENTLY "
                    "ix_listings_title_trgm\n    ON listings USING gin (title gin_trgm_ops);\n"
                    "```\n\nHere are the *SEARCH/REPLACE* blocks:\n\napp/search.py\n```python\n"
                    "<<<<<<< SEARCH\nimport a\n=======\nimport b\n>>>>>>> REPLACE\n```",
                ),
            ]
        )
    )
    assert "instead of the search_vector index: `CREATE EXTENSION IF NOT EXISTS pg_trgm;" in text
    assert "ix_listings_title_trgm ON listings USING gin (title gin_trgm_ops);`" in text
    # An edit's block follows its path, not a sentence: it stays out of the prose.
    assert "`<<<<<<< SEARCH" not in text


@pytest.mark.parametrize(
    ("run", "started", "poll"),
    [
        # Windsurf's Cascade: a non-blocking `run_command`, then `command_status`.
        (
            {"CommandLine": "./gradlew test", "Cwd": "/app", "Blocking": False},
            "Background command ID: 9ae2d415-0001",
            ("command_status", {"CommandId": "9ae2d415-0001", "WaitDurationSeconds": 60}),
        ),
        # Claude Code: `Bash` with `run_in_background`, then `BashOutput`.
        (
            {"command": "./gradlew test", "run_in_background": True},
            "Command running in background with ID: bash_3",
            ("BashOutput", {"bash_id": "bash_3"}),
        ),
    ],
)
def test_a_background_commands_later_output_is_that_commands_outcome(
    run: dict[str, object], started: str, poll: tuple[str, dict[str, object]]
) -> None:
    # The run's last word comes through a poll of its id, not through the call that ran it:
    # "18 tests completed, 2 failed" from an earlier run must not stand as the latest.
    tool = "run_command" if "CommandLine" in run else "Bash"
    ledger = extract_ledger(
        [
            say("user", "Run the tests."),
            call("1", tool, **run),
            result("1", "> Task :test\n18 tests completed, 2 failed\nBUILD FAILED"),
            call("2", tool, **run),
            result("2", started),
            call("3", poll[0], **poll[1]),
            result("3", "Status: DONE\n> Task :test\n25 tests completed, 1 failed\nBUILD FAILED"),
        ]
    )
    tests = rendered(ledger).split("## Test status (latest per command)")[1]
    assert "25 tests completed, 1 failed" in tests
    assert "18 tests completed, 2 failed (" not in tests


def test_a_file_named_by_its_absolute_and_its_relative_path_is_one_file() -> None:
    # Windsurf writes with an absolute `TargetFile`, then removes with `rm` relative to its
    # `Cwd`: one migration created and deleted, not one created and another deleted.
    created = "/Users/radka/code/api/src/main/resources/db/migration/V7_sms_outbox.sql"
    text = rendered(
        extract_ledger(
            [
                say("user", "Add the outbox table."),
                call("1", "write_to_file", TargetFile=created,
                     CodeContent="CREATE TABLE sms_outbox ();"),
                result("1", "Created file"),
                call("2", "run_command", CommandLine="rm src/main/resources/db/migration/"
                     "V7_sms_outbox.sql", Cwd="/Users/radka/code/api"),
                result("2", "The command completed successfully."),
            ]
        )
    )  # fmt: skip
    assert f"- {created} (deleted)" in text
    assert "(created)" not in text
    # What a deleted file defined is no name of the code any more.
    assert "defines sms_outbox" not in text


def test_a_report_of_a_figure_set_revises_no_decision_and_states_no_value() -> None:
    # "Set to 11 attempts; the new test covers the limit." reports a setting: the values
    # section has the user's figure, and when the user changes it again the report must not
    # stand as what replaced a decision ("superseded (by: Set to 11 attempts …)").
    ledger = extract_ledger(
        [
            say("user", "Give up after 5 attempts."),
            say("assistant", "Adding a test pinned to the configured limit rather than a literal."),
            say("user", "bump it to 11 attempts."),
            say("assistant", "Set to 11 attempts; the new test covers the limit."),
            say("user", "ok, 7 attempts after all."),
            say("assistant", "Done."),
        ]
    )
    decisions = rendered(ledger).split("## Decisions and plans (standing)")[1].split("## ")[0]
    assert "11 attempts" not in decisions
    assert "- Adding a test pinned to the configured limit rather than a literal." in decisions


def test_a_remark_on_what_went_wrong_revises_no_decision() -> None:
    # "Both poller failures are the same missing table" speaks of the outbox design's
    # words (poller, table) but reports a failure; the design still stands.
    ledger = extract_ledger(
        [
            say("user", "Three pods must not send the same reminder twice."),
            say(
                "assistant",
                "Scrapping both the ticker and the CronJob: an outbox table, `reminder_queue`, "
                "one row per appointment, that every pod's poller claims with FOR UPDATE SKIP "
                "LOCKED.",
            ),
            say(
                "assistant",
                "Both poller failures are the same missing outbox table, the migration was "
                "skipped. Let me look at the names:",
            ),
        ]
    )
    decisions = rendered(ledger).split("## Decisions and plans (standing)")[1].split("## ")[0]
    assert "superseded" not in decisions
    assert "`reminder_queue`" in decisions


def test_a_proposal_the_user_agrees_to_is_a_decision() -> None:
    # "… so I'd stop at once and set `disabled_at` … OK?" — "Yes, pause it.": what was
    # proposed now stands; a proposal the user turns down does not.
    proposal = (
        "One behaviour to settle before I write the worker: an endpoint answering 410 Gone. "
        "Retrying that is wasted work, so I'd stop at once and set `disabled_at` on the "
        "subscription. OK?"
    )
    agreed = extract_ledger(
        [
            say("user", "Retry failed webhooks."),
            say("assistant", proposal),
            say("user", "Yes, pause it. Ops can unpause by hand."),
            say("assistant", "Writing the worker."),
        ]
    )
    text = rendered(agreed)
    assert "## Decisions and plans (standing)" in text
    decisions = text.split("## Decisions and plans (standing)")[1].split("## ")[0]
    assert "410 Gone" in decisions and "`disabled_at`" in decisions
    refused = extract_ledger(
        [
            say("user", "Retry failed webhooks."),
            say("assistant", proposal),
            say("user", "No, keep retrying those too."),
        ]
    )
    text = rendered(refused)
    standing = text.split("## Decisions and plans (standing)")[1:] or [""]
    assert "`disabled_at`" not in standing[0].split("## ")[0]


def test_what_the_assistant_states_in_a_question_to_the_user_is_its_own_words() -> None:
    # Roo Code's `ask_followup_question {question}`: the statements before the question are
    # the assistant's, as if written in its reply.
    asked = (
        "Texts go out under the alphanumeric sender ID TAILW24 from config/services.php. "
        "Is `schedule:run` active on the production workers?"
    )
    ledger = extract_ledger(
        [
            say("user", "Send appointment reminders."),
            call("1", "ask_followup_question", question=asked, follow_up=[{"text": "Yes"}]),
            result("1", "<answer>\nNo, there is no scheduler.\n</answer>"),
        ]
    )
    text = rendered(ledger)
    assert "TAILW24" in text and "- No, there is no scheduler." in text


def test_the_answer_to_a_user_question_is_kept_verbatim() -> None:
    ledger = extract_ledger(
        [
            say("user", "Which commit introduced the regression?"),
            say("assistant", "It is dd72245. That commit changed the retry loop."),
        ]
    )
    assert "It is dd72245." in rendered(ledger)


def test_an_answer_read_back_from_a_digest_still_ranks_as_an_answer() -> None:
    # Read back, an answer was a note like any other: in a smaller room, plain commands
    # that ran ok outranked the figure the user asked to be told and to keep.
    runs = [
        m
        for k in range(30)
        for m in (call(f"c{k}", "shell", command=f"tail -n 9 logs/w{k}.log"), result(f"c{k}", "ok"))
    ]
    ledger = extract_ledger(
        [
            say("user", "How long does one flush take? Keep the figure for the design doc."),
            say("assistant", "One flush takes 818.39 µs per run, by the benchmark harness."),
            *runs,
        ]
    )
    full = rendered(ledger)
    again = parse_ledger(full)
    room = len(full) // 2
    assert "818.39" in "\n".join(render(ledger, room))
    assert "818.39" in "\n".join(render(again, room))


def test_a_digest_of_a_digest_keeps_its_content() -> None:
    first = extract_ledger(
        [
            say("user", "Keep the public API stable."),
            call("1", "Write", file_path="src/new.py", content="x"),
            result("1", "File created successfully at: src/new.py"),
        ]
    )
    second = extract_ledger(
        [
            summary_message(render(first), first.messages),
            call("2", "Edit", file_path="src/old.py", old_string="a", new_string="b"),
            result("2", "ok"),
        ]
    )
    text = rendered(second)
    for expected in (
        "Keep the public API stable.",
        "src/new.py (created)",
        "src/old.py (modified)",
    ):
        assert expected in text


def test_a_note_read_back_from_a_digest_keeps_its_rank_below_the_must_haves() -> None:
    # A flagged note is a must-have; a sentence kept for the figures it carries is not, and
    # a later compaction reading the digest back must not promote it above files and
    # commands (growing sessions are re-digested at every compaction).
    ledger = extract_ledger(
        [
            say("user", "Speed up the search."),
            say(
                "assistant",
                "Note: the staging database is read-only until Friday. "
                "Raising the statement timeout to 1500 ms in tidepool/core/config.py.",
            ),
        ]
    )
    tiers = {item.forms[0]: item.tier for item in ledger.items()[ledger_index(ledger, "notes")]}
    assert sorted(tiers.values()) == [2, 3]
    again = parse_ledger(rendered(ledger))
    assert {
        item.forms[0]: item.tier for item in again.items()[ledger_index(again, "notes")]
    } == tiers


def ledger_index(ledger: Ledger, name: str) -> int:
    return [section.name for section in ledger.sections].index(name)


def test_todos_changed_one_at_a_time_are_tracked_by_id() -> None:
    ledger = extract_ledger(
        [
            call("1", "TaskCreate", subject="Port the parser", description="x"),
            result("1", "Task #1 created successfully: Port the parser"),
            call("2", "TaskCreate", subject="Update the README", description="y"),
            result("2", "Task #2 created successfully: Update the README"),
            call("3", "TaskUpdate", taskId="1", status="completed"),
            result("3", "Updated task #1 status"),
        ]
    )
    text = rendered(ledger)
    assert "- Update the README" in text
    assert "- [completed] Port the parser" in text


def test_fenced_actions_answered_in_user_messages_are_commands_not_user_words() -> None:
    ledger = extract_ledger(
        [
            say("assistant", "Let me look.\n\n```bash\npytest -q tests/test_io.py\n```"),
            say(
                "user",
                "<returncode>1</returncode>\n<output>\nE   OSError: disk\n1 failed\n</output>",
            ),
        ]
    )
    assert list(ledger.state("commands").commands) == ["pytest -q tests/test_io.py"]
    assert user_messages(ledger) == []


def test_text_caches_are_bounded_by_the_bytes_they_hold() -> None:
    from compaction._textcache import text_cache

    @text_cache(max_chars=10_000)
    def length(text: str) -> int:
        return len(text)

    for i in range(50):
        assert length(f"{i:04d}" + "x" * 996) == 1000
    assert length.held_chars() <= 10_000  # type: ignore[attr-defined]
    assert length("y" * 50_000) == 50_000, "too large to cache, still answered"
    assert length.held_chars() <= 10_000  # type: ignore[attr-defined]


def test_a_text_cache_of_several_arguments_keys_on_all_of_them_and_is_bounded() -> None:
    from compaction._textcache import text_cache

    calls: list[tuple[str, int]] = []

    @text_cache(max_chars=10_000)
    def head(text: str, limit: int = 3) -> str:
        calls.append((text, limit))
        return text[:limit]

    assert (
        head("abcdef") == "abc" and head("abcdef", 2) == "ab" and head("abcdef", limit=4) == "abcd"
    )
    assert head("abcdef") == "abc" and len(calls) == 3  # the repeat was a hit
    for i in range(50):
        head(f"{i:04d}" + "x" * 996, 5)
    assert head.held_chars() <= 10_000  # type: ignore[attr-defined]


def test_images_in_a_digested_span_are_named_with_their_archive_handle() -> None:
    from compaction.messages import ImagePart, handle_for

    shot = Message(
        "user",
        (TextPart("Here is the failing screen."), ImagePart("data:image/png;base64,iVBORw0KGgo=")),
    )
    read = Message(
        "tool",
        (ToolResultPart("1", (TextPart("plot written"), ImagePart("https://example.test/p.png"))),),
    )
    ledger = extract_ledger([shot, call("1", "view_image", path="plot.png"), read])
    text = rendered(ledger)
    assert f"image in a user message (original kept as {handle_for(shot)})" in text
    assert f"image in view_image(plot.png) output (original kept as {handle_for(read)})" in text
    assert render(parse_ledger(text)) == render(ledger)


def test_a_merged_ledger_read_further_leaves_its_inputs_as_they_were() -> None:
    earlier = extract_ledger(
        [
            call("1", "Bash", command="pytest tests/test_a.py"),
            result("1", "E   KeyError: 'x'\n1 failed in 0.1s"),
            say("user", "Set the timeout to 30s."),
            todo_call("2", ("Write the docs", "pending")),
            result("2", "ok"),
        ]
    )
    before = rendered(earlier)
    builder = LedgerBuilder()
    builder.ledger = builder.ledger.merge(earlier)
    for message in [
        call("3", "Edit", file_path="src/a.py", old_string="a", new_string="b"),
        result("3", "ok"),
        call("4", "Bash", command="pytest tests/test_a.py"),
        result("4", "3 passed in 0.1s"),
        say("user", "Hmm, make it 45s instead of 30s."),
        todo_call("5", ("Write the docs", "completed")),
        result("5", "ok"),
    ]:
        builder.add(message)
    assert "fixed:" in rendered(builder.snapshot())
    assert rendered(earlier) == before


def test_cue_patterns_read_any_case_and_refuse_upper_case_patterns() -> None:
    # Cues are searched in lower-cased text (a case-insensitive `re` scan is several times
    # slower); the readers must still find them whatever case the prose is written in.
    assert signals.is_decision("DECIDED: We'll Use SQLite for the cache.")
    assert signals.is_todo("TODO: wire the retry")
    assert signals.is_note("Heads-up: the suite is FLAKY on CI")
    assert signals.is_note("NB the port is fixed")
    assert not signals.is_note("Nothing to see here")
    assert signals.outcome_of("build finished\nEXIT CODE: 3") == ("exit 3", ())
    with pytest.raises(ValueError, match="lower case"):
        signals.cue(r"\bTodo\b")
    assert signals.cue(r"\S+\b").search("x") is not None  # escapes are not letters


def test_a_shell_envelopes_code_and_ok_flag_are_its_exit_status() -> None:
    failed = {"ok": False, "code": 2, "stdout": "Analyzing app...\n", "stderr": "", "took_ms": 9}
    assert signals.outcome_of(json.dumps(failed))[0] == "exit 2"
    assert signals.outcome_of(json.dumps({**failed, "code": 0, "ok": True}))[0] == "ok"
    # No code at all: the envelope's own flag says it failed.
    flagged = {"success": False, "stdout": "Analyzing app...\n"}
    assert signals.outcome_of(json.dumps(flagged))[0] == "failed"


def test_an_envelope_one_level_down_is_read_and_a_build_summary_keeps_its_counts() -> None:
    # The run's streams and code in an object of their own, beside the command.
    output = (
        "error: 'queue.test.retries a timed out delivery' failed: expected 3, found 2\n"
        "Build Summary: 3/5 steps succeeded; 1 failed; 35/36 tests passed; 1 failed\n"
        "test transitive failure\n\u2514\u2500 run test 35/36 passed, 1 failed\n"
        "error: the following build command failed with exit code 1:"
    )
    wrapped = json.dumps(
        {"command": "zig build test", "command_finished": {"output": output, "exit_code": 1}}
    )
    outcome, errors = signals.outcome_of(wrapped)
    assert outcome == "exit 1"
    assert errors[0].startswith("error: 'queue.test.retries a timed out delivery' failed")
    # The line that calls itself the summary, over the step tree after it.
    summary = signals.test_summary(wrapped)
    assert summary is not None and "35/36 tests passed; 1 failed" in summary
    assert signals.summary_fails(summary)


def test_julias_failed_tests_are_what_failed_and_its_summary_is_no_error_of_its_own() -> None:
    first = (
        "     Testing Running tests...\n"
        "queue retries a timed-out delivery: Test Failed at /w/test/test_queue.jl:31\n"
        "  Expression: attempts(result) == 3\n   Evaluated: 2 == 3\n\nStacktrace:\n"
        " [1] macro expansion\n"
        "ERROR: LoadError: Some tests did not pass: 46 passed, 3 failed, 0 errored, 0 broken.\n"
        "ERROR: Package Ferry errored during testing\n\nExit Code: 1"
    )
    outcome, errors = signals.outcome_of(first)
    assert outcome == "exit 1"
    assert errors[0] == (
        "queue retries a timed-out delivery: Test Failed at /w/test/test_queue.jl:31"
    )
    assert not any("46 passed" in e for e in errors)  # the test status says it
    # The same command fails again, on another test: the first one's failure is gone.
    second = first.replace("queue retries a timed-out delivery", "log drops nothing").replace(
        "46 passed, 3 failed", "48 passed, 1 failed"
    )
    ledger = extract_ledger(
        [
            call("1", "executeBash", command="julia --project -e 'using Pkg; Pkg.test()'"),
            result("1", first),
            call("2", "executeBash", command="julia --project -e 'using Pkg; Pkg.test()'"),
            result("2", second),
        ]
    )
    text = rendered(ledger)
    assert "- fixed: queue retries a timed-out delivery: Test Failed at" in text
    assert "- open: log drops nothing: Test Failed at" in text
    # The earlier counts only beside the latest ones, in the test status.
    assert all("48 passed" in line for line in text.splitlines() if "46 passed" in line)


def test_an_error_from_a_command_with_parentheses_survives_a_re_digest() -> None:
    command = "julia --project -e 'using Pkg; Pkg.test()'"
    ledger = extract_ledger(
        [call("1", "bash", command=command), result("1", "ERROR: disk full\nexit code 1")]
    )
    again = parse_ledger(rendered(ledger))
    assert [(e.text, e.source, e.open) for e in again.state("errors").errors] == [
        ("ERROR: disk full", command, True)
    ]


def test_a_to_do_read_back_then_done_is_not_listed_open_as_well() -> None:
    # A pending item of the tool's list reads back like a prose to-do; done later, it is
    # one item, done, and not also open.
    earlier = extract_ledger([todo_call("1", ("add a regression test", "pending"))])
    ledger = extract_ledger(
        [
            summary_message(render(earlier), earlier.messages),
            call("2", "taskStatus", task="add a regression test", status="completed"),
            result("2", "ok"),
        ]
    )
    lines = [line for line in render(ledger) if "add a regression test" in line]
    assert lines == ["- [completed] add a regression test"]


def test_dart_and_flutter_output_is_read() -> None:
    analyze = (
        "Analyzing app...\n\n"
        "  error \u2022 Undefined name 'tenantId' \u2022 lib/src/signer.dart:88:39 \u2022 "
        "undefined_identifier\n\n1 issue found. (ran in 3.4s)\n"
    )
    outcome, errors = signals.outcome_of(analyze)
    assert outcome == "failed"
    assert errors[0].startswith("error \u2022 Undefined name 'tenantId'")
    # `dart analyze` of Dart 3 separates its fields with dashes, the location first.
    dashed = (
        "Analyzing app...\n\n  error - lib/src/signer.dart:88:39 - Undefined name 'tenantId'. "
        "Try correcting the name to one that is defined. - undefined_identifier\n\n"
        "1 issue found.\n"
    )
    outcome, errors = signals.outcome_of(dashed)
    assert outcome == "failed"
    assert errors[0].startswith("error - lib/src/signer.dart:88:39 - Undefined name 'tenantId'")
    run = (
        "00:01 +3: /w/test/queue_test.dart: Queue keeps order\n"
        "00:02 +3 -1: /w/test/queue_test.dart: Queue retries a timed-out delivery [E]\n"
        "  Expected: <2>\n    Actual: <3>\n"
        "00:03 +12 -1: Some tests failed.\n"
    )
    assert signals.test_summary(run) == "+12 -1: Some tests failed."
    outcome, errors = signals.outcome_of(run)
    assert outcome == "failed"
    assert "Queue retries a timed-out delivery [E]" in errors[0]
    passed = "00:01 +3: /w/test/queue_test.dart: Queue keeps order\n00:02 +4: All tests passed!\n"
    assert signals.test_summary(passed) == "+4: All tests passed!"
    assert signals.outcome_of(passed) == ("ok", ())


def test_a_shell_tools_empty_error_field_is_not_an_error() -> None:
    # Gemini CLI's run_shell_command reports every field, "Error: (none)" when there is none.
    output = "Command: ls\nDirectory: (root)\nOutput: a.go\nError: (none)\nExit Code: 0"
    assert signals.error_lines(output) == []
    assert signals.error_lines("stderr: none\nErrors: 0\nERROR: disk full") == ["ERROR: disk full"]


def test_a_failed_build_keeps_its_compiler_diagnostics_without_the_word_error() -> None:
    # Go's compiler prints `file:line:col: message`, with no "error" in it.
    output = (
        "# github.com/acme/relay/internal\n"
        "internal/ratelimit.go:88:14: not enough arguments in call to send\n"
        "\thave (Batch)\n\twant (Batch, string)\nExit code 1"
    )
    outcome, errors = signals.outcome_of(output)
    assert outcome == "exit 1"
    assert errors == ("internal/ratelimit.go:88:14: not enough arguments in call to send",)
    # A passing command's `file:line:col:` lines (a search's hits) are not errors.
    assert signals.outcome_of("src/a.go:3:1: func main() {\nexit code 0") == ("ok", ())


def test_go_test_summaries_are_read() -> None:
    assert signals.test_summary(
        "=== FAIL: x TestA (0.01s)\n\nDONE 37 tests, 1 failure in 4.213s"
    ) == ("37 tests, 1 failure")
    assert signals.test_summary("DONE 12 tests, 2 skipped in 0.5s\n") == "12 tests, 2 skipped"
    assert signals.outcome_of("DONE 5 tests, 2 failures in 1.0s")[0] == "failed"


@pytest.mark.parametrize(
    ("plan", "reversal"),
    [
        (
            "I intend to stage entries in a global lock, with tenancy reconciling from there.",
            "On reflection a global lock is the wrong tool here; I am moving to per-tenant "
            "advisory locks, since one slow tenant would block everyone.",
        ),
        (
            "My approach: keep the pending entries in protobuf.",
            "Protobuf was the wrong choice; we're switching to msgpack, the consumers decode it.",
        ),
    ],
)
def test_plans_and_reversals_in_plain_words(plan: str, reversal: str) -> None:
    ledger = extract_ledger(
        [
            say("assistant", plan),
            say("assistant", "Sure, I will keep that in mind."),
            say("assistant", reversal),
        ]
    )
    decisions = ledger.state("decisions").decisions
    standing = [d.text for d in decisions if not d.superseded_by]
    assert standing == [reversal]
    assert [d.text for d in decisions if d.superseded_by] == [plan]


def test_gradle_and_kotlin_output_is_read() -> None:
    gradle = (
        "> Task :test FAILED\n\nLedgerTest > rejectsDuplicates() FAILED\n"
        "    org.opentest4j.AssertionFailedError at LedgerTest.kt:41\n\n"
        "61 tests completed, 1 failed\n\nFAILURE: Build failed with an exception.\n"
        "BUILD FAILED in 14s"
    )
    assert signals.test_summary(gradle) == "61 tests completed, 1 failed"
    assert signals.outcome_of(gradle)[0] == "failed"
    kotlin = "e: file:///w/src/Ledger.kt:88:14 No value passed for parameter 'tenantId'.\n"
    outcome, errors = signals.outcome_of(kotlin + "\nBUILD FAILED in 3s")
    assert outcome == "error"
    assert errors[0].startswith("e: file:///w/src/Ledger.kt:88:14 No value passed")


@pytest.mark.parametrize(
    "sentence",
    [
        "My pick for the counters is a Micrometer registry.",
        "The shared limiter turned out to be a dead end, so per-route buckets it is.",
        "Per-route buckets are off the table as well; token leases from now on.",
    ],
)
def test_more_plain_decisions_are_read(sentence: str) -> None:
    assert signals.is_decision(sentence)


def test_a_value_taken_to_a_new_number_is_a_change() -> None:
    ledger = extract_ledger(
        [
            say("user", "Set the retry budget to 4 retries."),
            say("user", "Take the retry budget to 2 retries, 4 retries isn't right for us."),
        ]
    )
    text = rendered(ledger)
    assert "retry budget: 2 retries" in text
    assert "retry budget: 4 retries" not in text


@pytest.mark.parametrize(
    "change",
    [
        "Honestly 12 workers for the ingest pool was a stab in the dark; we need 32 workers.",
        "The ingest pool: 32 workers. 12 workers was never going to keep up.",
        "Could you run the ingest pool with 32 workers from here on",
    ],
)
def test_a_value_named_again_with_a_new_amount_in_its_unit_is_a_change(change: str) -> None:
    # No change verb at all: the key again, and an amount in its unit it did not have.
    ledger = extract_ledger(
        [say("user", "Set the ingest pool to 12 workers."), say("user", change)]
    )
    text = rendered(ledger)
    assert "- ingest pool: 32 workers (earlier: 12 workers)" in text


def test_a_value_named_again_with_its_own_amount_stays() -> None:
    ledger = extract_ledger(
        [
            say("user", "Set the ingest pool to 12 workers."),
            say("user", "Keep the ingest pool at 12 workers while you test 3 shards."),
        ]
    )
    assert "- ingest pool: 12 workers" in rendered(ledger)


def test_a_measured_value_keeps_its_whole_unit() -> None:
    ledger = extract_ledger([say("user", "The redis pool should be 20 connections.")])
    assert "- redis pool: 20 connections" in rendered(ledger)


def test_a_plan_replaced_twice_points_at_the_standing_one() -> None:
    first = "My pick for the store is SQLite."
    second = "SQLite turned out to be a dead end, so Postgres it is."
    third = "Postgres is off the table as well; DuckDB from now on."
    fourth = "Back to the drawing board on DuckDB: we switch to plain files."
    said = (first, second, third, fourth)
    text = rendered(extract_ledger([say("assistant", t) for t in said]))
    for earlier in said[:-1]:
        assert f"- superseded (by: {fourth}): {earlier}" in text


def test_a_long_reversal_keeps_the_sentence_that_names_what_replaces_the_plan() -> None:
    first = "Backing out of the timer: it fires in every replica. Switching to a batch arena."
    second = (
        "Changing course again since an arena keeps a whole batch alive until its slowest "
        "message is acked, so a batch arena goes. Replacing it with a fixed message pool."
    )
    ledger = extract_ledger([say("assistant", first), say("assistant", second)])
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert standing == [second]


def test_a_superseded_plan_is_shown_with_what_stands_whole_or_not_at_all() -> None:
    # A long reversal cut short would name the old plan without the new one.
    first = "My pick: park the undelivered notifications in a timer in every worker."
    second = (
        "Changing direction once more, because the scheduled jobs need a shared lock, and "
        "the only lock store we have is that evicting Redis cluster in the staging region: "
        "scrap the timer in every worker, a single Kubernetes CronJob that calls harborctl "
        "takes its place."
    )
    ledger = extract_ledger([say("assistant", first), say("assistant", second)])
    assert any(line.startswith("- superseded") for line in render(ledger))
    for budget in (None, 2000, 600, 400, 250):
        for line in render(ledger, budget):
            if line.startswith("- superseded"):
                assert second in line, (budget, line)


def test_a_reversal_in_a_later_span_supersedes_a_plan_an_earlier_summary_holds() -> None:
    earlier = extract_ledger([say("assistant", "My pick for the store is SQLite.")])
    later = extract_ledger([say("assistant", "SQLite is off the table; DuckDB from now on.")])
    merged = earlier.merge(later)
    standing = [d.text for d in merged.state("decisions").decisions if not d.superseded_by]
    assert standing == ["SQLite is off the table; DuckDB from now on."]


def test_a_design_that_does_not_survive_a_finding_is_replaced_by_what_follows() -> None:
    # "The queue design doesn't survive that: …. So expiry moves to a cron trigger …": the
    # plan is named as failing, and the sentence after it says what comes instead.
    ledger = extract_ledger(
        [
            say("assistant", "I'll use delayed queue messages to expire holds, one per hold."),
            say("user", "queues cap delays at 12 hours, no?"),
            say(
                "assistant",
                "Confirmed, 12 hours is the ceiling. The queue design doesn't survive that: a "
                "hold outlives any single message. So expiry moves to a cron trigger that "
                "sweeps the holds table every 20 minutes.",
            ),
        ]
    )
    decisions = ledger.state("decisions").decisions
    standing = [d.text for d in decisions if not d.superseded_by]
    assert [d.superseded_by != "" for d in decisions[:1]] == [True]
    assert any("cron trigger" in s for s in standing)
    assert not any("delayed queue messages" in s for s in standing)
    # A design that works is no reversal.
    assert not ledger_decisions_of("The queue design works: every hold expires on time.")


def ledger_decisions_of(text: str) -> list[str]:
    return [d.text for d in extract_ledger([say("assistant", text)]).state("decisions").decisions]


def test_a_report_of_work_done_is_no_new_word_on_a_decision() -> None:
    # "Done: X. Each hold stores its own deadline, …": what was done, told; the decision on
    # how holds expire stands.
    decided = "Going with a cron trigger that sweeps the holds table for expired holds."
    ledger = extract_ledger(
        [
            say("assistant", decided),
            say(
                "assistant",
                "Done: `HOLD_HOURS = 36` in holds.ts. Each hold stores its own expiry in the "
                "holds table, so holds already running keep their old deadline.",
            ),
        ]
    )
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert standing == [decided]


def test_a_step_of_a_plan_written_in_prose_that_a_reversal_replaces_is_no_open_to_do() -> None:
    # With no to-do tool, the numbered plan is the list; a later reversal naming one of its
    # steps replaces that step, which is then not listed as still to do.
    plan = (
        "Plan:\n1. Schema for holds and waitlists.\n"
        "2. Expiry through a queue: a delayed message per hold expires it.\n"
        "3. Retire the old endpoint."
    )
    ledger = extract_ledger(
        [
            Message(
                "assistant",
                (TextPart(plan), ToolCallPart("1", "read", json.dumps({"path": "a.ts"}))),
            ),
            result("1", "export {}"),
            say(
                "assistant",
                "The queue design doesn't survive that: a hold outlives any message. So expiry "
                "moves to a cron trigger that sweeps the holds.",
            ),
        ]
    )
    states = {t.text[:10]: (t.status, t.word) for t in ledger.state("todos").listed}
    assert states["Expiry thr"] == ("cancelled", "replaced")
    assert states["Schema for"] == ("pending", None)
    text = rendered(ledger)
    assert "- [replaced] Expiry through a queue" in text
    # Read back, it is still closed.
    again = parse_ledger(text).state("todos").listed
    assert [t.status for t in again if t.text.startswith("Expiry")] == ["cancelled"]


def test_a_new_shape_announced_replaces_what_it_says_goes() -> None:
    ledger = extract_ledger(
        [
            say("assistant", "I'll use delayed queue messages to expire holds, one per hold."),
            say(
                "assistant",
                "You're right, delays stop at 12 hours. Not worth it.\n\nNew shape: no queue at "
                "all. A cron trigger sweeps the holds table every 20 minutes.",
            ),
        ]
    )
    decisions = ledger.state("decisions").decisions
    standing = [d.text for d in decisions if not d.superseded_by]
    assert decisions[0].superseded_by
    assert any("cron trigger" in s for s in standing), standing


def test_a_message_that_opens_on_what_was_done_is_no_new_word_on_a_decision() -> None:
    decided = "Going with a cron trigger that sweeps the holds table for expired holds."
    ledger = extract_ledger(
        [
            say("assistant", decided),
            say(
                "assistant",
                "Changed the hold to 48 hours in holds.ts. The sweep reads each hold's expiry "
                "from the holds table, so nothing else needs touching.",
            ),
        ]
    )
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert standing == [decided]


def test_a_step_told_by_its_action_revises_no_decision_and_a_second_thought_does() -> None:
    # "Routing the photo tasks to their own queue; …" tells what is being done now, beside
    # the standing design; "Rethinking the chord: … so a counter now" revises it.
    decided = (
        "Scrapping the chord. Instead each listing keeps a `pending_photos` counter that "
        "every `process_photo` run decrements."
    )
    step = (
        "Routing `listings.tasks.*` to a new `photos` queue; `process_photo` is acks_late, so "
        "a listing's photos survive a worker dying."
    )
    ledger = extract_ledger([say("assistant", decided), say("assistant", step)])
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert decided in standing
    second = (
        "Rethinking the `pending_photos` counter: every `process_photo` run of a listing "
        "writes one row, so a listing's photos get a status column now."
    )
    ledger = extract_ledger([say("assistant", decided), say("assistant", second)])
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert decided not in standing


def test_no_x_after_all_replaces_the_plan_that_had_x() -> None:
    ledger = extract_ledger(
        [
            say(
                "assistant",
                "How I'll build it: a fan-out, each short station one `kv.enqueue` message.",
            ),
            say(
                "assistant",
                "Delivery is at-least-once. No per-station kv.enqueue after all: a single "
                "Deno.cron job runs the sweep and plans every move in one pass.",
            ),
        ]
    )
    decisions = ledger.state("decisions").decisions
    assert decisions[0].superseded_by
    assert any("Deno.cron" in d.text for d in decisions if not d.superseded_by)
    # Said of how a thing turned out, "after all" replaces nothing.
    kept = extract_ledger(
        [
            say("assistant", "I'll use one `kv.enqueue` message per station."),
            say("assistant", "The queue delivered every message after all, in order."),
        ]
    )
    assert not kept.state("decisions").decisions[0].superseded_by


def test_a_command_that_failed_then_passed_keeps_its_error_in_little_room() -> None:
    # In little room the errors section goes before the commands do: the command's own line
    # says what failed before it passed.
    messages = [
        call("1", "Bash", command="npx tsc --noEmit"),
        result("1", "src/a.ts(3,5): error TS2554: Expected 2 arguments, but got 1.\nExit code 2"),
        call("2", "Bash", command="npx tsc --noEmit"),
        result("2", "Exit code 0"),
    ]
    for n in range(12):
        messages += [call(f"g{n}", "Bash", command=f"grep -rn item{n} src"), result(f"g{n}", "x")]
    ledger = extract_ledger(messages)
    full = "\n".join(render(ledger))
    assert "`npx tsc --noEmit` → ok (failed earlier: src/a.ts(3,5): error TS2554" in full
    short = "\n".join(render(ledger, len(full) * 2 // 3))
    assert "error TS2554" in short
    # And it reads back.
    again = parse_ledger(rendered(ledger))
    assert "error TS2554" in "\n".join(render(again))


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (
            "FAIL src/a.test.ts\n  ● test webhook retries\n\n    expect(x)\nTests: 1 failed",
            "● test webhook retries",
        ),
        (
            "=== RUN   TestA\n--- FAIL: TestA (0.00s)\nFAIL\nexit status 1",
            "--- FAIL: TestA (0.00s)",
        ),
        (
            "test sched::tests::retries ... FAILED\nfailures:",
            "test sched::tests::retries ... FAILED",
        ),
        (
            "FAIL internal/outbox.TestRetries (0.01s)\nDONE 3 tests",
            "FAIL internal/outbox.TestRetries (0.01s)",
        ),
        (
            "LedgerTest > rejectsDuplicates() FAILED\n    AssertionFailedError",
            "LedgerTest > rejectsDuplicates() FAILED",
        ),
    ],
)
def test_failing_test_names_are_error_lines(output: str, line: str) -> None:
    assert line in signals.error_lines(output)


def test_jest_console_blocks_are_not_errors() -> None:
    assert signals.error_lines("  ● Console\n\n    console.log\n      hello\nTests: 3 passed") == []


@pytest.mark.parametrize(
    ("output", "summary", "fails"),
    [
        # Maven Surefire
        (
            "[INFO] Results:\n[ERROR] Tests run: 12, Failures: 2, Errors: 0, Skipped: 1\n"
            "[INFO] BUILD FAILURE",
            "Tests run: 12, Failures: 2, Errors: 0, Skipped: 1",
            True,
        ),
        # PHPUnit
        (
            "FAILURES!\nTests: 30, Assertions: 71, Failures: 1.\n",
            "Tests: 30, Assertions: 71, Failures: 1",
            True,
        ),
        # Swift's XCTest
        (
            "\t Executed 14 tests, with 0 failures (0 unexpected) in 0.212 (0.215) seconds\n"
            "✔ Test run with 0 tests passed after 0.001 seconds.\n",
            "Executed 14 tests, with 0 failures (0 unexpected)",
            False,
        ),
        # vitest
        (
            " Test Files  1 failed | 3 passed (4)\n      Tests  2 failed | 40 passed (42)\n"
            "   Start at  10:01:12\n",
            "2 failed | 40 passed",
            True,
        ),
        # ExUnit / RSpec style: a noun count, then a failure count
        (
            "Finished in 0.3 seconds\n21 tests, 0 failures, 2 excluded\n",
            "21 tests, 0 failures, 2 excluded",
            False,
        ),
        # mocha: the counts on lines of their own
        (
            "  7 passing (31ms)\n  2 failing\n\n  1) cart totals:\n     AssertionError: x\n",
            "7 passing, 2 failing",
            True,
        ),
        # CTest: a count, its noun, then the outcome, out of a total
        (
            "95% tests passed, 3 tests failed out of 59\n\nTotal Test time (real) =   0.96 sec\n"
            "\nThe following tests FAILED:\n\t 10 - TenancyTest.OrdersBatches (Failed)\n",
            "3 tests failed out of 59",
            True,
        ),
        (
            "100% tests passed, 0 tests failed out of 12\n\nTotal Test time (real) =   0.20 sec\n",
            "0 tests failed out of 12",
            False,
        ),
        # nimble: the tests passed out of all, as a fraction
        (
            "  [OK] caches the digest\nTool call failed with error:\n"
            "Error: execution of an external program failed: '/srv/tests/tauditlog'\n"
            "     Error: Only 45/48 tests passed\n",
            "Only 45/48 tests passed",
            True,
        ),
        ("  [OK] caches the digest\n   Success: 48/48 tests passed\n", "48/48 tests passed", False),
        # elm-test: the verdict, then one labelled count per line
        (
            "TEST RUN FAILED\n\nDuration: 812 ms\nPassed:   52\nFailed:   1\n",
            "Passed:   52, Failed:   1",
            True,
        ),
        ("TEST RUN PASSED\n\nDuration: 640 ms\nPassed:   53\nFailed:   0\n", "Failed:   0", False),
    ],
)
def test_test_summaries_are_read_by_their_shape(output: str, summary: str, fails: bool) -> None:
    found = signals.test_summary(output)
    assert found is not None and summary in found
    assert signals.summary_fails(found) is fails
    assert (signals.outcome_of(output)[0] == "failed") is fails


@pytest.mark.parametrize(
    ("output", "summary", "fails"),
    [
        # prove (Perl's TAP harness): each failing file's `Failed N/M subtests`, then the verdict
        (
            "t/flush.t ...... Dubious, test returned 1 (wstat 256, 0x100)\nFailed 1/16 subtests \n"
            "t/routing.t .... ok\n\nTest Summary Report\n-------------------\n"
            "t/flush.t (Wstat: 256 (exited 1) Tests: 16 Failed: 1)\n  Failed test:  13\n"
            "  Non-zero exit status: 1\nFiles=5, Tests=33,  3 wallclock secs ( 0.04 usr  0.01 sys"
            " +  0.70 cusr  0.08 csys =  0.83 CPU)\nResult: FAIL\n",
            "Failed 1/16 subtests",
            True,
        ),
        (
            "t/00-load.t .... ok\nt/flush.t ...... ok\nAll tests successful.\n"
            "Files=5, Tests=33,  2 wallclock secs ( 0.04 usr +  0.70 cusr =  0.74 CPU)\n"
            "Result: PASS\n",
            "Files=5, Tests=33",
            False,
        ),
    ],
)
def test_prove_is_read_by_its_per_file_counts_and_its_verdict(
    output: str, summary: str, fails: bool
) -> None:
    found = signals.test_summary(output)
    assert found is not None and summary in found
    assert signals.summary_fails(found) is fails
    # prove's own exit status (the number of failing files) is the outcome it reports.
    assert (signals.outcome_of(output)[0] != "ok") is fails


@pytest.mark.parametrize(
    "output",
    [
        " 3 files changed, 10 insertions(+), 2 deletions(-)\n",
        "2026-11-03T10:00:01Z INFO batch done: 500 records in 3 batches\n",
        "Step 3/7 : RUN make\n",
    ],
)
def test_counts_that_are_not_a_test_run_are_not_read_as_one(output: str) -> None:
    assert signals.test_summary(output) is None


def test_a_checkers_verdict_fails_a_command_that_prints_no_exit_status() -> None:
    # A type checker that ends on its count of errors, with `file:line: message` diagnostics.
    output = (
        "app/models/order.rb:41: Method `total` does not exist on `NilClass`\n"
        "    41 |    order.total\n\nErrors: 1\n"
    )
    outcome, errors = signals.outcome_of(output)
    assert outcome == "failed"
    assert errors == ("app/models/order.rb:41: Method `total` does not exist on `NilClass`",)
    assert signals.outcome_of("No errors! Great job.\n")[0] == "ok"
    assert signals.outcome_of("Found 2 errors.\n")[0] == "failed"
    assert signals.outcome_of("Errors: 0\n")[0] == "ok"


def test_a_statement_threads_onto_the_subject_it_shares_most_with_not_the_latest() -> None:
    # The revision shares a few words with the subject spoken of last, and names the one
    # before it in full: it is that subject's latest word, not the other's.
    first = "My approach is keeping parked envelopes in the Elm model only, so notifier keeps them."
    other = "The page reload test of the settings screen saves nothing yet."
    again = (
        "I am abandoning keeping parked envelopes in the Elm model only, since the model "
        "empties on every page reload; a localStorage port saves them instead."
    )
    ledger = extract_ledger(
        [say("assistant", first), say("assistant", other), say("assistant", again)]
    )
    latest = [t.latest for t in ledger.state("subjects").threads]
    assert first not in latest
    assert again in latest and other in latest


def test_a_later_sentence_on_a_decision_is_its_subjects_latest_word_without_a_cue() -> None:
    # No reversal word: the sentence names the decision's subject and says something new.
    decided = "I'll keep the user sessions in Memcached behind the login service."
    again = (
        "Thinking about Memcached sessions again: evictions under memory pressure would log "
        "people out, so the login service writes sessions to Postgres now."
    )
    ledger = extract_ledger(
        [
            say("assistant", decided),
            say("assistant", "Reading the handler."),
            say("assistant", again),
        ]
    )
    text = rendered(ledger)
    assert f"- superseded (by: {again}): {decided}" in text
    # It stands as the decision, and is shown once: the subject's line would say it twice.
    assert f"\n- {again}\n" in text
    assert text.count(again) == 2
    # And it reads back from the digest, so the next compaction keeps it.
    body = text.split("<earlier-context-summary>")[1]
    assert rendered(parse_ledger(text)).split("<earlier-context-summary>")[1] == body


def test_a_message_that_speaks_of_a_decision_then_decides_anew_replaces_it() -> None:
    plan = "My plan: compress each nightly archive with zstd at level 19."
    ledger = extract_ledger(
        [
            say("assistant", plan),
            say(
                "assistant",
                "Level 19 zstd on the nightly archive takes four minutes per batch. "
                "I'll use lz4 for it, which keeps a batch under ten seconds.",
            ),
        ]
    )
    decisions = ledger.state("decisions").decisions
    assert [d.text for d in decisions if d.superseded_by] == [plan]
    standing = [d.text for d in decisions if not d.superseded_by]
    assert standing == ["I'll use lz4 for it, which keeps a batch under ten seconds."]


@pytest.mark.parametrize(
    "remark",
    [
        "The Redis cache for pricing is in place with LRU eviction configured.",
        "Redis cache for pricing works; eviction under the replay load looks right.",
        # A setting whose words meet the decision's, given a value: the values' news.
        "Set the Redis pricing cache eviction size to 512 entries in config/app.toml.",
        # Settings named beside their figures, with no word of a setting between.
        "Pricing cache eviction 512 entries and Redis replay TTL 30 minutes, as you asked:",
    ],
)
def test_a_remark_on_how_a_decision_goes_does_not_replace_it(remark: str) -> None:
    decided = "I'll use a Redis cache with LRU eviction in front of the pricing service."
    ledger = extract_ledger([say("assistant", decided), say("assistant", remark)])
    assert not ledger.state("decisions").decisions[0].superseded_by


def test_a_decision_added_beside_one_does_not_replace_it() -> None:
    decided = "I'll use a Redis cache with LRU eviction in front of the pricing service."
    ledger = extract_ledger(
        [
            say("assistant", decided),
            say(
                "assistant",
                "The Redis cache for pricing is in place with LRU eviction configured. "
                "I'll also keep a counter of its hit rate on the metrics endpoint.",
            ),
        ]
    )
    decisions = ledger.state("decisions").decisions
    assert decisions[0].text == decided
    assert all(not d.superseded_by for d in decisions)


def test_a_word_on_where_the_work_starts_does_not_revise_the_plan() -> None:
    # "Starting with the exporter's record path." names the plan's words and says only what
    # comes first; the plan stands until a statement replaces it.
    plan = (
        "Plan: a `std::deque<Sample>` guarded by a `std::mutex` inside the exporter; `record()` "
        "pushes, and a flusher drains it when it reaches the batch size."
    )
    ledger = extract_ledger(
        [say("assistant", plan), say("assistant", "Starting with the exporter's record path.")]
    )
    assert all(not d.superseded_by for d in ledger.state("decisions").decisions)


def test_what_a_decision_goes_on_to_say_in_its_own_message_does_not_replace_it() -> None:
    # "Then switching to a `fanout_attempts` table: … No `retry_on`. After the last attempt
    # the delivery moves to `fanout_dead_letters`.": the last sentence shares the decision's
    # words and decides nothing; it goes on with the decision, it does not revise it.
    decided = (
        "Then switching to a `fanout_attempts` table: every POST writes one row per delivery "
        "attempt, and `RedeliverJob` schedules the next attempt itself. No `retry_on`."
    )
    ledger = extract_ledger(
        [
            say("assistant", "A failed delivery enqueues a job with `retry_on` doing the backoff."),
            say(
                "assistant",
                f"{decided} After the last attempt the delivery moves to `dead_letters`.",
            ),
        ]
    )
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert any(t.startswith("Then switching to a `fanout_attempts` table") for t in standing)
    assert "superseded (by: After the last attempt" not in rendered(ledger)
    # What follows a reversal in its message is what replaces the plan: it stands too.
    dropping = extract_ledger(
        [
            say(
                "assistant", "Hashing goes through a crossbeam-channel worker pool in src/pool.rs."
            ),
            say(
                "assistant",
                "I'm dropping the crossbeam-channel worker pool. Re-sorting its output would "
                "mean buffering every row anyway. Instead: hash each chunk of the sorted paths "
                "on a std::thread::scope thread, so the output keeps its order and no worker "
                "pool is needed.",
            ),
        ]
    )
    standing = [d.text for d in dropping.state("decisions").decisions if not d.superseded_by]
    assert any("std::thread::scope thread" in t for t in standing)


def test_a_name_ruled_out_later_is_not_the_latest_word_on_its_subject() -> None:
    # "First design: add a `next_retry_at` column …", later "No `retry_on`, no
    # `next_retry_at`.": the first design's sentence is no longer what stands on its subject.
    first = (
        "Endpoints sign each body under the signature header; I'll keep that header on every "
        "retry. First design: add a `next_retry_at` column to `webhook_deliveries` and a rake "
        "task that polls for due rows every minute and redelivers them."
    )
    ledger = extract_ledger(
        [
            say("assistant", first),
            say("user", "Scrap the polling rake task, nothing would ever call it."),
            say(
                "assistant",
                "Switching to a `fanout_attempts` table instead. "
                "No `retry_on`, no `next_retry_at`.",
            ),
        ]
    )
    latest = [t.latest for t in ledger.state("subjects").threads]
    assert any("I'll keep that header on every retry." in t for t in latest)
    assert not any("First design: add a `next_retry_at` column" in t for t in latest)


def test_the_latest_word_on_a_subject_the_assistant_came_back_to_is_kept_without_cues() -> None:
    first = "Sessions sit in a sqlite file beside the worker binary for a start."
    last = (
        "That sqlite file beside the worker binary locks up under parallel writers. "
        "Sessions go into a Redis hash keyed by tenant from here."
    )
    ledger = extract_ledger(
        [
            say("assistant", first),
            say("assistant", "Reading the handler."),
            say("assistant", "Tenant quotas look fine in the handler code paths."),
            say("assistant", last),
        ]
    )
    text = rendered(ledger)
    assert "## What the assistant said last, by subject" in text
    assert f"- {last}" in text and first not in text
    # Read back, it stays the latest word, and a later word on it replaces it.
    later = "Redis hash keyed by tenant needs a TTL per session so idle tenants age out."
    builder = LedgerBuilder()
    builder.add(summary_message(render(ledger), ledger.messages))
    builder.add(say("assistant", later))
    again = rendered(builder.snapshot()).split("by subject")[1]
    assert f"- {later}" in again and last not in again


def test_a_subject_spoken_of_once_goes_last_but_is_kept_for_a_later_word_to_find() -> None:
    plan = "Uploads stream through a tus server on the edge nodes for a start."
    other = "Billing exports look fine in the nightly job's output."
    ledger = extract_ledger([say("assistant", plan), say("assistant", other)])
    lines = render(ledger)
    # Spoken of once: shown only in room nothing else wants.
    assert f"- {plan}" in lines
    section = ledger.section("subjects")
    assert [i.tier for i in section.items(ledger.state("subjects"))] == [4, 4]
    # A digest that kept it lets the next compaction follow the subject: after being read
    # back, a revision in words no reader knows is shown as the subject's latest word.
    builder = LedgerBuilder()
    builder.add(summary_message(lines, ledger.messages))
    revision = (
        "The tus server on the edge nodes drops resumable uploads; uploads go to S3 multipart."
    )
    builder.add(say("assistant", revision))
    assert f"- {revision}" in rendered(builder.snapshot())


def test_a_line_two_sections_hold_is_shown_once() -> None:
    said = "Set: the p95 of the staging run is 412 ms with 2 replicas of the gateway."
    ledger = extract_ledger(
        [
            say("assistant", "The staging run of the gateway with 2 replicas is going."),
            say("assistant", said),
        ]
    )
    assert rendered(ledger).count(said) == 1


@pytest.mark.parametrize(
    ("output", "failed"),
    [
        (
            "  1) test drains the queue (Relay.QueueTest)\n     test/queue_test.exs:14\n"
            "     Assertion with == failed\n\nFinished in 0.2 seconds\n9 tests, 1 failure\n",
            "1) test drains the queue (Relay.QueueTest)",
        ),
        (
            "Failures:\n\n  1) Cart totals rounds half up\n     Failure/Error: expect(x).to eq(3)\n"
            "\n12 examples, 1 failure\n",
            "1) Cart totals rounds half up",
        ),
        (
            "  Failed Shop.Tests.CartTests.RoundsHalfUp [14 ms]\n  Error Message:\n"
            "   Assert.Equal()\n"
            "Failed!  - Failed:     1, Passed:    11, Skipped:     0, Total:    12\n",
            "Failed Shop.Tests.CartTests.RoundsHalfUp [14 ms]",
        ),
        # GoogleTest's verdict line (not its "N tests, listed below" count)
        (
            "[ RUN      ] CartTest.RoundsHalfUp\ntests/cart_test.cpp:51: Failure\n"
            "[  FAILED  ] CartTest.RoundsHalfUp (0 ms)\n[  PASSED  ] 11 tests.\n"
            "[  FAILED  ] 1 test, listed below:\n[  FAILED  ] CartTest.RoundsHalfUp\n"
            "\n 1 FAILED TEST\n",
            "[  FAILED  ] CartTest.RoundsHalfUp (0 ms)",
        ),
        # a test runner logging each failure at the error level (Expecto: `[hh:mm:ss ERR]`)
        (
            "[14:46:44 ERR] Exporter/retries a timed-out delivery failed in 00:00:00.72.\n"
            "delivery attempts\nexpected: 3\n  actual: 2\n\n[14:46:46 INF] EXPECTO! 53 tests run"
            " in 00:00:01.97 – 52 passed, 0 ignored, 1 failed, 0 errored. Failure!\n",
            "[14:46:44 ERR] Exporter/retries a timed-out delivery failed in 00:00:00.72.",
        ),
        # CTest's list of the tests that failed
        (
            "92% tests passed, 1 tests failed out of 12\n\nThe following tests FAILED:\n"
            "\t  4 - CartTest.RoundsHalfUp (Failed)\nErrors while running CTest\n",
            "4 - CartTest.RoundsHalfUp (Failed)",
        ),
    ],
)
def test_a_failing_runs_list_of_failed_tests_is_read_by_its_shape(output: str, failed: str) -> None:
    outcome, errors = signals.outcome_of(output)
    assert outcome == "failed"
    assert errors[0] == failed
    # A passing run's numbered lines (a listing, a plan) are not failures.
    assert signals.outcome_of("1) build the image\n2) push it\n3 tests, 0 failures\n") == ("ok", ())


def test_a_run_that_exits_non_zero_names_the_tests_it_lists_as_failed() -> None:
    output = (
        "  1) test drains the queue (Relay.QueueTest)\n     Assertion with == failed\n"
        "9 tests, 1 failure\nexit code 2"
    )
    assert signals.outcome_of(output) == ("exit 2", ("1) test drains the queue (Relay.QueueTest)",))


def test_maven_output_names_its_errors_and_the_tests_that_failed() -> None:
    output = (
        "[INFO] Running com.acme.CartTest\n"
        "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.2 s "
        "<<< FAILURE! - in com.acme.CartTest\n"
        "[INFO] Results:\n[INFO] \n[ERROR] Failures: \n"
        "[ERROR]   CartTest.roundsHalfUp:31 expected:<3> but was:<2>\n[INFO] \n"
        "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0\n[INFO] BUILD FAILURE\n"
    )
    outcome, errors = signals.outcome_of(output)
    assert outcome == "failed"
    assert errors[0] == "[ERROR]   CartTest.roundsHalfUp:31 expected:<3> but was:<2>"
    compile_error = "[ERROR] /w/src/main/java/com/acme/Cart.java:[12,5] cannot find symbol"
    assert signals.error_lines(f"[INFO] Compiling 4 files\n{compile_error}\n") == [compile_error]


def test_a_later_summarys_uncued_word_on_an_earlier_summarys_decision_supersedes_it() -> None:
    # Compacted twice apart: the decision in one summary, the revision in the next, which
    # held no decision of its own. Merged, the decision is no longer shown as standing.
    decided = "I'll keep the job queue in an ETS table owned by the supervisor."
    revision = (
        "Hit a wall with the ETS table owned by the supervisor: a node restart loses every "
        "queued job, so the queue moves to Oban jobs in Postgres."
    )
    first = extract_ledger([say("assistant", decided)])
    second = extract_ledger([say("assistant", revision)])
    builder = LedgerBuilder()
    builder.add(summary_message(render(first), first.messages))
    builder.add(summary_message(render(second), second.messages))
    decisions = builder.snapshot().state("decisions").decisions
    assert [(d.text, d.superseded_by) for d in decisions] == [(decided, revision), (revision, "")]


def test_a_sentence_announcing_what_its_own_message_does_is_no_note_subject_or_to_do() -> None:
    # "I'll run `X`" beside the call that runs X says nothing the commands and files sections
    # do not; a sentence naming something the message does not act on still tells.
    def acting(text: str, call_id: str, name: str, **arguments: object) -> Message:
        return Message(
            "assistant", (TextPart(text), ToolCallPart(call_id, name, json.dumps(arguments)))
        )

    def step(text: str, code: str) -> Message:
        return say("assistant", f"Thought: {text}\n<code>\n{code}\n</code>")

    ledger = extract_ledger(
        [
            say("user", "Fix the flaky retry test."),
            acting(
                "Next, `pytest tests/test_retry.py -x` in the shell.",
                "1",
                "bash",
                command="pytest tests/test_retry.py -x",
            ),
            result("1", "1 passed"),
            acting("I need to see src/retry.py first.", "2", "read_file", path="src/retry.py"),
            result("2", "x = 1"),
            step(
                "Now I'll change that line of R/notifier.R.",
                'edit_file(path="R/notifier.R", old_text="a", new_text="b")',
            ),
            say("user", "Observation:\nExecution logs:\nReplaced 1 occurrence\n"),
            acting(
                "The retry cap in src/retry.py is 45 seconds, per `RETRY_CAP`.",
                "3",
                "read_file",
                path="src/retry.py",
            ),
            result("3", "RETRY_CAP = 45"),
        ]
    )
    notes = [text for _, _, text in ledger.state("notes").notes]
    subjects = [thread.latest for thread in ledger.state("subjects").threads]
    todos = ledger.state("todos").prose
    for said in ("`pytest tests/test_retry.py -x`", "I need to see", "that line of R/notifier.R"):
        assert not any(said in text for text in notes + subjects + todos), said
    assert any("45 seconds" in n for n in notes)
    text = rendered(ledger)
    assert "pytest tests/test_retry.py -x" in text and "R/notifier.R (modified)" in text


def test_a_code_agents_reply_right_after_a_summary_is_output_not_the_users_words() -> None:
    # The step that the reply answers was compacted into the summary, while the reply stayed
    # verbatim as the turn the model was about to read; read again later, it is still output.
    earlier = summary_message(
        render(extract_ledger([say("user", "New task:\nResend the parked envelopes.")])), 1
    )
    ledger = extract_ledger(
        [
            earlier,
            say(
                "user",
                "Observation:\nExecution logs:\nexit status: 0\nresent 12 envelopes\n"
                "Last output from code snippet:\nNone\nNew task:\nKeep the retention at 30 days.",
            ),
            say("assistant", "Thought: done.\n<code>\nfinal_answer('Resent.')\n</code>"),
        ]
    )
    said = "\n".join(user_messages(ledger))
    assert "Resend the parked envelopes." in said
    assert "Keep the retention at 30 days." in said
    assert "Execution logs" not in said and "resent 12 envelopes" not in said


def test_an_environments_reply_to_an_action_a_summary_holds_keeps_its_errors() -> None:
    # mini-SWE-agent: the action was compacted, its reply (the turn the model was about to
    # read) stayed; read again, the error it shows is still an error.
    earlier = summary_message(
        render(extract_ledger([say("user", "Fix the date parsing in utils/dates.py.")])), 1
    )
    ledger = extract_ledger(
        [
            earlier,
            say(
                "user",
                "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n"
                '  File "utils/dates.py", line 12, in parse\n'
                "ValueError: unconverted data remains: Z\n</output>",
            ),
            say("assistant", "THOUGHT: the suffix.\n\n```bash\nsed -n 1,20p utils/dates.py\n```"),
        ]
    )
    text = rendered(ledger)
    assert "ValueError: unconverted data remains: Z" in text
    assert "<returncode>" not in "\n".join(user_messages(ledger))


def test_a_thinking_tools_thoughts_are_read_as_the_assistants_prose_and_plan() -> None:
    ledger = extract_ledger(
        [
            say("user", "Make the outbox resend parked envelopes."),
            call(
                "1",
                "sequentialthinking",
                thought="Steps:\nStep 1 [in progress]: wire the "
                "exporter\nStep 2 [not started]: mirror the batch change in the deploy values",
                thoughtNumber=1,
                totalThoughts=4,
                nextThoughtNeeded=True,
            ),
            result("1", '{"thoughtNumber": 1, "totalThoughts": 4}'),
            call(
                "2",
                "sequentialthinking",
                thought="Approach: keep parked envelopes in one Lock around the dispatcher.",
                thoughtNumber=2,
            ),
            result("2", '{"thoughtNumber": 2}'),
            call(
                "3",
                "sequentialthinking",
                thought="One Lock around the dispatcher will not "
                "work, because a slow tenant holds it. Switching to one AsyncQueue per "
                "tenant.",
                thoughtNumber=3,
                isRevision=True,
                revisesThought=2,
            ),
            result("3", '{"thoughtNumber": 3}'),
        ]
    )
    text = rendered(ledger)
    decisions = text.split("## Decisions and plans (standing)")[1].split("\n## ")[0]
    assert "one AsyncQueue per tenant" in decisions
    assert "superseded" in decisions and "one Lock around the dispatcher." in decisions
    assert "- [in progress] wire the exporter" in text
    assert "- mirror the batch change in the deploy values" in text


def test_a_stateful_agents_packets_give_the_users_words_and_no_system_events() -> None:
    # Letta (MemGPT) sends the user's words as a JSON packet and its own events (heartbeats,
    # logins, memory alerts) in user messages too; the agent speaks through `send_message`.
    def packet(kind: str, **fields: str) -> Message:
        body = {"type": kind, **fields, "time": "2026-11-24 09:17:55 AM UTC+0000"}
        return say("user", json.dumps(body, indent=2))

    ledger = extract_ledger(
        [
            packet("login", last_login="Never (first login)"),
            packet("user_message", message="Which commit broke the resend? I need its hash."),
            call(
                "1",
                "send_message",
                message="It was 4fe3b43: it lost the retry wrapper.",
                inner_thoughts="Answer with the hash.",
                request_heartbeat=False,
            ),
            result("1", '{"status": "OK", "message": "None", "time": "2026-11-24"}'),
            packet(
                "heartbeat",
                reason="[This is an automated system message hidden from "
                "the user] Function called using request_heartbeat=true, returning control",
            ),
            packet(
                "system_alert",
                message="Note: prior messages have been hidden from view "
                "due to conversation memory constraints.",
            ),
        ]
    )
    assert user_messages(ledger) == ["Which commit broke the resend? I need its hash."]
    text = rendered(ledger)
    assert "It was 4fe3b43" in text
    assert "heartbeat" not in text and "first login" not in text


def test_the_users_answer_to_an_agents_question_tool_is_the_users_words() -> None:
    # Cline and Roo Code ask through `ask_followup_question`; the user's answer comes back
    # as the call's result, `<answer>…</answer>`.
    def ask(call_id: str) -> Message:
        follow_up = [{"text": "Carry on", "mode": None}]
        return call(call_id, "ask_followup_question", question="Anything?", follow_up=follow_up)

    ledger = extract_ledger(
        [
            say("user", "<task>\nFix the relay's redelivery.\n</task>"),
            ask("1"),
            result("1", "<answer>\nKeep this in mind: usage errors keep exit status 2.\n</answer>"),
            ask("2"),
            result("2", "<answer>\nWhich commit broke it? I need the hash.\n</answer>"),
            say("assistant", "It was 4fe3b43."),
        ]
    )
    assert user_messages(ledger)[1:] == [
        "Keep this in mind: usage errors keep exit status 2.",
        "Which commit broke it? I need the hash.",
    ]
    answers = ledger.state("answers").answers
    assert any("4fe3b43" in text for _, text in answers)


@pytest.mark.parametrize(
    ("change", "then", "shown"),
    [
        # the new value in the next sentence, in other words than "use"
        (
            "3 workers is too short for the chronos worker count with our slower partners. "
            "Raise it to 24 workers.",
            "Bring the chronos worker count to 12 workers instead; 24 workers failed.",
            "- chronos worker count: 12 workers (earlier: 3 workers, 24 workers)",
        ),
        # no new value: unsettled until a later message names one
        (
            "3 workers is too short for the chronos worker count with our slower partners.",
            "Bring the chronos worker count to 12 workers instead.",
            "- chronos worker count: 12 workers (earlier: 3 workers)",
        ),
        # a later message naming two new values settles nothing, and is quoted too
        (
            "3 workers is too short for the chronos worker count with our slower partners.",
            "Bring the chronos worker count to 12 workers instead; 24 workers failed.",
            "“Bring the chronos worker count to 12 workers instead; 24 workers failed.”",
        ),
    ],
)
def test_a_value_left_unsettled_is_settled_by_a_later_message_naming_a_new_one(
    change: str, then: str, shown: str
) -> None:
    ledger = extract_ledger(
        [
            say("user", "For now the chronos worker count should be 3 workers."),
            say("user", change),
            say("user", then),
        ]
    )
    assert shown in rendered(ledger)


def test_a_value_a_message_sets_is_not_unsettled_by_its_next_sentence() -> None:
    # "Raise it to 24 workers." gives the value the sentence before it names: the change is
    # read, and the sentence that gave it does not unread it.
    ledger = extract_ledger(
        [
            say("user", "For now the chronos worker count should be 3 workers."),
            say(
                "user",
                "3 workers is too short for the chronos worker count with our slower "
                "partners. Raise it to 24 workers.",
            ),
        ]
    )
    assert "- chronos worker count: 24 workers (earlier: 3 workers)" in rendered(ledger)


def test_an_unsettled_value_quotes_the_users_words_on_it_newest_kept() -> None:
    # Where a change cannot be read, the quote is the sentence that names the value and the
    # one after it, not the message's preamble; cut short, the oldest words go first.
    preamble = "[Problem statement]: We are currently solving the following issue. " * 8
    changes = [
        f"The chronos worker count is still too low for partner {n}, raise it again."
        for n in range(3, 12)
    ]
    ledger = extract_ledger(
        [
            say("user", "For now the chronos worker count should be 3 workers."),
            *(say("user", preamble + change) for change in changes),
        ]
    )
    line = next(li for li in rendered(ledger).splitlines() if "chronos worker count:" in li)
    assert "unsettled" in line and "Problem statement" not in line
    assert f"“{changes[-1]}”" in line


def test_a_preposition_is_never_the_name_of_a_value() -> None:
    # "… batch set to 50 envelopes": the setting named before its verb is not "to"; a key
    # "to" was in every later message, and each was quoted as a word on it.
    assert signals.value_settings("Begin with the outbox drain batch set to 50 envelopes.") == ()
    ledger = extract_ledger(
        [
            say("user", "Begin with the outbox drain batch set to 50 envelopes."),
            say("user", "Set the parked envelope expiry to 45 days."),
        ]
    )
    assert ledger.state("values").values.keys() == {"parked envelope expiry"}


def test_a_measurement_of_the_work_is_no_word_on_the_plan() -> None:
    ledger = extract_ledger(
        [
            say(
                "assistant",
                "Approach: keep the parked envelopes in a global table inside "
                "the dispatcher, so they survive a restart.",
            ),
            say(
                "assistant",
                "On reflection a global table of parked envelopes inside the dispatcher is the "
                "wrong foundation. Moving the fix to a Redis list written through nim-redis.",
            ),
            say("assistant", "One flush of 10,000 parked envelopes averages 715.250 ms."),
            say(
                "assistant",
                "Revising once more: a Redis list written through nim-redis "
                "brings its own trouble. The fix will use an SQLite outbox table.",
            ),
        ]
    )
    standing = [d.text for d in ledger.state("decisions").decisions if not d.superseded_by]
    assert len(standing) == 1 and "an SQLite outbox table" in standing[0], standing


def test_a_checklist_kept_in_an_agents_memory_is_its_to_do_list() -> None:
    # Letta edits its memory blocks line by line: items inserted, each one's box changed.
    def edit(call_id: str, name: str, **arguments: object) -> list[Message]:
        return [call(call_id, name, label="plan", **arguments), result(call_id, '{"status": "OK"}')]

    ledger = extract_ledger(
        [
            *edit("1", "memory_insert", new_str="- [>] wire the exporter\n- [ ] add a test"),
            *edit(
                "2",
                "memory_replace",
                old_str="- [>] wire the exporter",
                new_str="- [x] wire the exporter",
            ),
            *edit("3", "memory_insert", new_str="- [ ] mirror the batch change", insert_line=-1),
            *edit(
                "4",
                "core_memory_replace",
                old_content="- [ ] add a test",
                new_content="- [>] add a test",
            ),
        ]
    )
    assert [(t.text, t.status) for t in ledger.state("todos").listed] == [
        ("wire the exporter", "completed"),
        ("add a test", "in_progress"),
        ("mirror the batch change", "pending"),
    ]


def test_a_file_only_read_that_the_user_named_outranks_later_reads() -> None:
    # The user asked about the notifier: reading src/notifier.nim was reading what the task
    # is about, the logs read after it were not.
    messages = [say("user", "Parked envelopes in notifier are never redelivered. Fix it.")]
    reads = ["src/notifier.nim", *(f"logs/run{i}.log" for i in range(12))]
    for i, path in enumerate(reads):
        messages += [call(str(i), "read_file", path=path), result(str(i), "x")]
    ledger = extract_ledger(messages)
    room = len("\n".join(render(ledger))) - sum(
        len(f"- logs/run{i}.log (read)\n") for i in range(8)
    )
    lines = render(ledger, room)
    assert "- src/notifier.nim (read)" in lines and "- logs/run0.log (read)" not in lines
    # Read back (a later compaction), it still ranks first among the reads.
    again = parse_ledger(rendered(ledger, room))
    assert "- src/notifier.nim (read)" in render(again, room)


def test_code_blocks_run_by_a_user_proxy_are_commands_and_its_reply_their_output() -> None:
    # AutoGen: the assistant writes ```sh blocks; the user proxy runs them and answers
    # `exitcode: N (execution succeeded|failed)` then `Code output:`.
    ledger = extract_ledger(
        [
            say("user", "Fix the review findings in the outbox."),
            say("assistant", "Let me run `npx elm-review`.\n\n```sh\nnpx elm-review\n```"),
            say(
                "user",
                "exitcode: 1 (execution failed)\nCode output: -- ELM-REVIEW ERROR --- "
                "src/Outbox.elm:88:1\nNoUnused.Variables: `tenantId` is not used.",
            ),
            say(
                "assistant",
                "First I need to see src/Backoff.elm.\n\n```sh\ncat src/Backoff.elm\n```",
            ),
            say(
                "user",
                "exitcode: 0 (execution succeeded)\nCode output: module Backoff exposing (..)",
            ),
        ]
    )
    commands = ledger.state("commands").commands
    assert [(c.command, c.outcome) for c in commands.values()] == [
        ("npx elm-review", "exit 1"),
        ("cat src/Backoff.elm", "ok"),
    ]
    assert ledger.state("files").files == {"src/Backoff.elm": "read"}
    assert user_messages(ledger) == ["Fix the review findings in the outbox."]


def test_a_react_agents_steps_are_actions_and_their_observations_output() -> None:
    # CrewAI (LangChain's ReAct text protocol): `Action:` and `Action Input:` in the text,
    # the tool's answer appended to the same message after `Observation:`.
    def step(thought: str, tool: str, arguments: dict[str, object], observation: str) -> Message:
        return say(
            "assistant",
            f"Thought: {thought}\nAction: {tool}\nAction Input: {json.dumps(arguments)}\n"
            f"Observation: {observation}",
        )

    ledger = extract_ledger(
        [
            say("user", "Current Task: make the outbox resend parked envelopes."),
            step(
                "Let me read src/tenancy.cr first.",
                "read_a_files_content",
                {"file_path": "src/tenancy.cr"},
                "def account_depot(session)\n  x\nend",
            ),
            step(
                "Run the specs.",
                "run_shell_command",
                {"command": "crystal spec"},
                "exit code: 1\n37 examples, 1 failures, 0 errors, 0 pending",
            ),
            step(
                "Write the queue.",
                "file_writer_tool",
                {"filename": "outbox_queue.cr", "directory": "src", "content": "x"},
                "Content successfully written to src/outbox_queue.cr",
            ),
            say(
                "assistant",
                "Thought: I now know the final answer\nFinal Answer: Going with a "
                "bounded worker pool of fibers.",
            ),
        ]
    )
    files = ledger.state("files").files
    assert files["src/tenancy.cr"] == "read" and files["src/outbox_queue.cr"] == "created"
    assert [c.command for c in ledger.state("commands").commands.values()] == ["crystal spec"]
    text = rendered(ledger)
    assert "37 examples, 1 failures" in text
    assert "account_depot" not in text, "a tool's answer is no prose of the assistant"
    assert "bounded worker pool of fibers" in text


def test_a_to_do_tool_called_in_text_changes_the_list_as_a_call_would() -> None:
    # A ReAct step calling a checklist tool: the items are read as the call's would be.
    items = [
        {"step": "wire the exporter", "status": "done"},
        {"step": "mirror it", "status": "todo"},
    ]
    ledger = extract_ledger(
        [
            say(
                "assistant",
                "Thought: keep the checklist.\nAction: task_checklist\n"
                f"Action Input: {json.dumps({'items': items})}\nObservation: Checklist saved.",
            )
        ]
    )
    assert [(t.text, t.status) for t in ledger.state("todos").listed] == [
        ("wire the exporter", "completed"),
        ("mirror it", "pending"),
    ]


def test_lines_every_user_turn_repeats_give_way_before_the_users_own_words() -> None:
    # A framework wraps each of the user's turns in the same lines (a header, an
    # instruction to the model). Shortened for room, a turn kept its head and its tail, which
    # were those lines, and elided the user's own sentence between them.
    frame = (
        "Note from the runner: treat the text above as feedback on your last output.\n"
        "Respond only through your tools, and do not add commentary of your own."
    )
    turns = [
        "Please keep this for the whole task: every request to the billing API must carry "
        "the idempotency key, and retries must reuse the same key.",
        "Go on.",
        "Next look at the exporter module.",
        "Fine, continue with the rest.",
    ]
    read = [call("c1", "read_file", path="src/exporter.py"), result("c1", "x = 1\n" * 40)]
    ledger = extract_ledger([*(say("user", f"{turn}\n{frame}") for turn in turns), *read])
    full = rendered(ledger)
    assert full.count("Respond only through your tools") == len(turns)  # verbatim in full
    tight = rendered(ledger, 520)
    assert "retries must reuse the same key" in tight
    # The wrapping comes back last: a file the agent read is shown before it is repeated.
    roomy = rendered(ledger, 600)
    assert "src/exporter.py" in roomy
    # Said once, in the newest turn that says it: a line a user pastes again and again may
    # be their own words.
    assert roomy.count("Respond only through your tools") == 1
    # Kept where it is said once: one message's own lines are never dropped as repeats.
    alone = extract_ledger([say("user", f"{turns[0]}\n{frame}")])
    assert "Respond only through your tools" in rendered(alone)


@pytest.mark.parametrize(
    ("sentence", "setting"),
    [
        (
            "Switch the parked queue bound from 256 envelopes to 9000 envelopes, please.",
            ("parked queue bound", "9000 envelopes"),
        ),
        ("Change the poll interval from 5s to 30s.", ("poll interval", "30s")),
        ("Bump the worker pool from 4 workers to 12.", ("worker pool", "12 workers")),
    ],
)
def test_a_change_from_one_value_to_another_sets_the_setting_not_its_old_value(
    sentence: str, setting: tuple[str, str]
) -> None:
    # "X from A to B" was read as a setting named "X from A" with the value B, its unit lost:
    # a table line stating neither what was changed nor to what.
    assert signals.value_settings(sentence) == (setting,)


@pytest.mark.parametrize(
    ("sentence", "setting"),
    [
        ("Raise the throttle to 40 per minute, the gateway raised our limit.",
         ("throttle", "40 per minute")),
        ("Set the rate limit to 300 requests/min.", ("rate limit", "300 requests/min")),
        ("Make the alert threshold 50 an hour.", ("alert threshold", "50 an hour")),
    ],
)  # fmt: skip
def test_a_rate_is_set_with_what_it_counts_per(sentence: str, setting: tuple[str, str]) -> None:
    # "Raise the throttle to 40 per minute" set the throttle to "40": a figure saying
    # nothing of what it counts, beside the user's "20 per minute" kept verbatim.
    assert signals.value_settings(sentence) == (setting,)


def test_the_answer_to_a_question_is_the_prose_after_the_action_the_question_needed() -> None:
    # "Which commit broke it? Keep its hash." The assistant announces its command beside the
    # call ("Running `git log …`."), and answers after reading its output. The announcement
    # took the question, and the answer ranked as any other sentence: dropped for room
    # while the question was kept.
    log = "git log --oneline -n 7 -- lib/src/ratelimit.dart"
    messages = [
        say("user", "Which commit broke the redelivery? Our incident report needs its hash."),
        Message(
            "assistant",
            (
                TextPart(f"Running `{log}`."),
                ToolCallPart("c1", "shell", json.dumps({"command": log})),
            ),
        ),
        result("c1", "ad61d6c move delivery onto the shared client\n0c1d2e3 docs"),
        say("assistant", "The culprit is ad61d6c: it moved delivery onto the shared client."),
        *(
            say("assistant", f"Reading module {n}: it keeps {n} queues in `src/m{n}.dart`.")
            for n in range(30)
        ),
    ]
    ledger = extract_ledger(messages)
    assert "The culprit is ad61d6c" in rendered(ledger, 700)


@pytest.mark.parametrize(
    "request_",
    [
        "Benchmark a single flush and tell me the runtime. Keep that number.",
        "Time one flush with the harness and let me know the mean.",
        "What does one flush take? Keep that number.",
    ],
)
def test_a_request_to_be_told_is_answered_like_a_question(request_: str) -> None:
    bench = "dart run benchmark/flush_benchmark.dart"
    messages = [
        say("user", request_),
        Message(
            "assistant",
            (
                TextPart(f"Running `{bench}`."),
                ToolCallPart("c1", "shell", json.dumps({"command": bench})),
            ),
        ),
        result("c1", "FlushOneBatch(RunTime): 867.5512 us."),
        say("assistant", "Flushing one batch takes 867.55 µs per run."),
        *(
            say("assistant", f"Reading module {n}: it keeps {n} queues in `src/m{n}.dart`.")
            for n in range(30)
        ),
    ]
    assert "867.55 µs" in rendered(extract_ledger(messages), 700)


@pytest.mark.parametrize(
    ("change", "shown"),
    [
        # the new value in a short sentence of its own after the one naming the setting
        (
            "The soak test did not like 240 s as the webhook idle timeout. Final value: 90 s.",
            "- webhook idle timeout: 90 s (earlier: 240 s)",
        ),
        # a verdict on the value with no new one: no longer current, the user's words quoted
        (
            "The soak test did not like 240 s as the webhook idle timeout.",
            "- webhook idle timeout: unsettled",
        ),
    ],
)
def test_a_verdict_on_a_value_is_a_change_of_it(change: str, shown: str) -> None:
    ledger = extract_ledger(
        [
            say("user", "Start the webhook idle timeout at 15 s."),
            say("user", "Change the webhook idle timeout to 240 s; 15 s is too tight."),
            say("user", change),
        ]
    )
    text = rendered(ledger)
    assert shown in text
    assert "- webhook idle timeout: 240 s" not in text


def test_a_reply_wrapped_as_the_system_is_the_actions_output_not_the_users_words() -> None:
    # gptme sends its tools' output back as a user turn wrapped in <system> tags.
    ledger = extract_ledger(
        [
            say("user", "Make the redelivery run oldest first."),
            say("assistant", "Running the tests.\n```shell\nzig build test\n```"),
            say(
                "user",
                "<system>Ran command: `zig build test`\n\n```stderr\nerror: 'outbox.test.keeps "
                "order' failed: expected 3, found 2\nBuild Summary: 2/3 steps succeeded; 1 failed"
                "\n```\n\nReturn code: 1</system>",
            ),
            say("assistant", 'Noted.\n```todo write\nadd "fix the order"\n```'),
            say("user", "<system>Added todo 1: fix the order</system>"),
        ]
    )
    assert user_messages(ledger) == ["Make the redelivery run oldest first."]
    text = rendered(ledger)
    assert "`zig build test` → exit 1" in text


def test_a_test_run_through_a_tool_of_its_own_is_the_test_status() -> None:
    # Moatless's `RunTests {test_files}` runs no command line; its summary is the status.
    run = call("c1", "RunTests", test_files=["src/test/kotlin/TenancySpec.kt"])
    out = "TenancySpec > sends nothing FAILED\n\nTotal: 59 passed, 1 failed, 0 errors, 0 skipped."
    text = rendered(extract_ledger([say("user", "Fix it."), run, result("c1", out)]))
    assert "Total: 59 passed, 1 failed, 0 errors, 0 skipped." in text.split("## Test status")[1]


def test_a_to_do_tools_reply_by_id_keeps_the_list() -> None:
    # gptme's `todo write` block answers each operation on a line of its own, by id.
    def write(ops: str, reply: str) -> list[Message]:
        return [
            say("assistant", f"Updating the todo list:\n```todo write\n{ops}\n```"),
            say("user", f"<system>{reply}</system>"),
        ]

    # The sentence that leads into the block names the list; it is no to-do of its own.
    assert not signals.is_todo("Updating the todo list:")
    assert not signals.is_todo("Keeping track of this in the to-do list:")
    assert signals.is_todo("TODO: list the parked envelopes")
    ledger = extract_ledger(
        [
            say("user", "Fix the redelivery."),
            *write('add "wire the exporter"\nadd "document the TTL"',
                   "Added todo 1: wire the exporter\nAdded todo 2: document the TTL"),
            *write('add "mirror the change in the deploy values"',
                   "Added todo 3: mirror the change in the deploy values"),
            *write("update 1 completed\nremove 2",
                   "Updated todo 1 state to: completed\nRemoved todo 2: document the TTL"),
        ]
    )  # fmt: skip
    todos = rendered(ledger).split("## To-dos")[1]
    assert "- mirror the change in the deploy values" in todos
    assert "[completed] wire the exporter" in todos
    assert "- document the TTL" not in todos  # removed: no longer open
    assert "Updating the todo list" not in todos


def test_a_statement_that_also_announces_its_action_is_still_said() -> None:
    # "X is no good either … Replacing it with Y. I'll print src/Courier.elm." beside the
    # call that prints it: the last sentence announces the action, the first two do not.
    # Read as one announcement, the statement was skipped and the subject ended on X.
    cat = "cat src/Courier.elm"
    ledger = extract_ledger(
        [
            say("user", "Make the partner status live."),
            say("assistant", "I am switching to a WebSocket port subscription for partner status."),
            Message(
                "assistant",
                (
                    TextPart(
                        "A WebSocket port subscription for partner status is no good either, "
                        "because the proxy drops idle WebSockets. Replacing it with server-sent "
                        "events through an EventSource port. I'll print src/Courier.elm."
                    ),
                    ToolCallPart("c1", "shell", json.dumps({"command": cat})),
                ),
            ),
            result("c1", "module Courier exposing (..)"),
        ]
    )
    said = rendered(ledger).split("## What the assistant said last, by subject")[1]
    assert "EventSource port" in said
    assert "I am switching to a WebSocket" not in said


def test_a_subject_said_again_in_its_own_words_ends_on_the_newer_statement() -> None:
    # "X has the arena chunk size at 2048 KiB now. Opening y." then "X has the arena chunk
    # size at 512 KiB now.": the second adds no word of its own to the subject (its value
    # is no word), and was a subject of its own; a later status naming the subject took
    # it over, and the subject ended on 2048 KiB.
    ledger = extract_ledger(
        [
            say("user", "Tune the arena."),
            say("assistant", "Set: `src/settings.zig` has the arena chunk size at 2048 KiB now. "
                "Opening `invoice_depot.zig`."),
            say("assistant", "Set: `src/settings.zig` has the arena chunk size at 512 KiB now."),
            say("assistant", "Where things stand: the todo in progress is to document the arena "
                "chunk size setting in the README; the other items are completed."),
        ]
    )  # fmt: skip
    latest = [thread.latest for thread in ledger.state("subjects").threads]
    assert latest and not any("2048 KiB" in statement for statement in latest)


def test_a_question_after_a_decision_leaves_the_decision_said() -> None:
    # A short message is one statement; one ending in a question was no statement at all,
    # and the plan it replaced stayed the subject's last word.
    ledger = extract_ledger(
        [
            say("user", "Keep parked envelopes across restarts."),
            say("assistant", "A priority queue won't do. I'll use a memory-mapped append-only "
                "journal file instead."),
            say("assistant", "A memory-mapped append-only journal file has its own problem: "
                "compaction needs a second writer. Going with a SQLite table behind the "
                "zig-sqlite binding. Where is `invoice` used?"),
        ]
    )  # fmt: skip
    latest = [thread.latest for thread in ledger.state("subjects").threads]
    assert any("SQLite table" in statement for statement in latest)
    assert not any("I'll use a memory-mapped" in statement for statement in latest)


def test_a_turn_that_only_lets_the_agent_go_on_gives_its_room_first() -> None:
    # "OK, keep going." holds no fact: in a tight room it goes before a file or a command.
    ledger = extract_ledger(
        [
            say("user", "Fix the scheduler's retries."),
            call("c1", "read_file", path="src/main/kotlin/Scheduler.kt"),
            result("c1", "class Scheduler"),
            *(say("user", text) for text in ("OK, keep going.", "Sounds right. Continue.",
                                             "Fine, go on.", "Yes, carry on with that.")),
        ]
    )  # fmt: skip
    assert "Fine, go on." in rendered(ledger)  # verbatim when there is room
    lines = render(ledger, sum(len(line) + 1 for line in render(ledger)) - 20)
    assert any("Scheduler.kt" in line for line in lines)
    assert "- Fix the scheduler's retries." in lines
    acks = (
        "OK, keep going.",
        "Sounds right. Continue.",
        "Fine, go on.",
        "Yes, carry on with that.",
    )
    assert sum(f"- {ack}" in lines for ack in acks) < len(acks)


@pytest.mark.parametrize(
    ("sentence", "decides"),
    [
        ("I'll stick to that in everything I change.", False),
        ("Understood, I will keep to it from here on.", False),
        ("I'll stick to that approach instead of the cron job.", True),
        ("Going with a SQLite table behind the binding.", True),
    ],
)
def test_a_rule_acknowledged_is_no_decision(sentence: str, decides: bool) -> None:
    # "I'll stick to that" answers a rule the user set: it decides nothing, and took a
    # line of the standing decisions.
    [(_, _todo, _done, decision, _note)] = signals.prose_signals(sentence)
    assert decision is decides


def test_an_error_cut_short_for_room_still_names_its_command_and_is_fixed_by_its_next_run() -> None:
    # The short form of a long error line once cut `(from `dart analyze`)` off: read back,
    # the error had no command, and the analyzer's next clean run could not close it.
    long = (
        "error - lib/src/backoff.dart:88:37 - Undefined name 'tenantId'. Try correcting the "
        "name to one that is defined, or defining the name. - undefined_identifier"
    )
    earlier = extract_ledger(
        [
            call("1", "shell", command="dart analyze"),
            result("1", f"Analyzing app...\n\n  {long}\n\n1 issue found.\nexit code 3"),
        ]
    )
    summary = summary_message(render(earlier, 240), earlier.messages)
    short = summary.text
    assert "- open: error - backoff.dart:88:37" in short
    assert "(from `dart analyze`)" in short
    builder = LedgerBuilder()
    builder.add(summary)
    assert builder.ledger.state("errors").errors[0].source == "dart analyze"
    builder.add(call("2", "shell", command="dart analyze"))
    builder.add(result("2", "Analyzing app...\nNo issues found!"))
    assert "- fixed: error - backoff.dart:88:37" in rendered(builder.snapshot())


def test_an_error_one_summary_left_open_is_fixed_by_the_next_summarys_clean_run() -> None:
    # Two summaries merged: the first saw `dart analyze` fail, the second only its clean
    # run. The merged digest said the command passed and still listed its errors as open.
    failed = extract_ledger(
        [
            call("1", "shell", command="dart analyze"),
            result(
                "1",
                "  error - lib/a.dart:8:3 - Undefined name 'x'. - undefined_identifier\n"
                "1 issue found.\nexit code 3",
            ),
        ]
    )
    passed = extract_ledger(
        [call("2", "shell", command="dart analyze"), result("2", "No issues found!")]
    )
    text = rendered(parse_ledger(rendered(failed)).merge(parse_ledger(rendered(passed))))
    assert "`dart analyze` → ok (failed earlier" in text
    assert "- fixed: error - lib/a.dart:8:3" in text and "- open:" not in text


def test_a_plan_the_next_summary_replaces_as_well_is_superseded_when_they_merge() -> None:
    # "I'm replacing X as well, because …": the later span replaces the plan the earlier
    # one ended on. "as well" is the replacing's, not a plan added beside X.
    earlier = extract_ledger(
        [
            say("user", "Parked deliveries must be picked up again after a restart."),
            say(
                "assistant",
                "Dropping a future looping in -main that polls the outbox: nobody stops it. "
                "I'm switching to a core.async go-loop woken by a timeout channel.",
            ),
        ]
    )
    later = extract_ledger(
        [
            say(
                "assistant",
                "I'm replacing a core.async go-loop woken by a timeout channel as well, because "
                "the go-loop blocks on JDBC. Going with a chime schedule started by Integrant.",
            ),
        ]
    )
    merged = parse_ledger(rendered(earlier)).merge(parse_ledger(rendered(later)))
    standing = [d.text for d in merged.state("decisions").decisions if not d.superseded_by]
    assert not any("switching to a core.async go-loop" in d for d in standing), standing
    assert any("chime schedule" in d for d in standing)


def test_a_long_user_message_cut_short_once_is_not_cut_again_on_each_re_digest() -> None:
    # Read back, a long message the digest had cut (head, tail, the constraint sentences of
    # its middle) was cut again as if it were the user's own text: each re-digest of a
    # growing session lost more of the constraints it had kept.
    rules = [
        f"Module {k} must keep its public API stable and documented in docs/api_{k}.md."
        for k in range(5)
    ]
    filler = "The bus schedule import runs nightly and feeds the arrival board. " * 30
    text = "Context from the last session follows.\n" + filler + " ".join(rules) + filler + "End."
    once = bounded_user_text(text, 3600)
    assert all(rule in once for rule in rules)
    assert bounded_user_text(once, 3600) == once
    ledger = extract_ledger([say("user", text), say("assistant", "Understood.")])
    for _ in range(3):
        ledger = extract_ledger([summary_message(render(ledger), ledger.messages)])
        said = user_messages(ledger)[0]
        assert all(rule in said for rule in rules), said[-600:]
    # Cut shorter still, it keeps what it kept, cutting only its head and tail further.
    shorter = bounded_user_text(once, 1200)
    assert all(rule in shorter for rule in rules) and len(shorter) < len(once)


def test_a_long_user_message_cut_short_keeps_the_sentence_naming_where_the_work_goes() -> None:
    # "That's the wrong router. … Put the endpoint in app/api/v2/listings.py …": the cut
    # took the one sentence that said where to work, and the line read as if the wrong
    # router still stood.
    middle = "The old Android app still calls it on every launch, and it is frozen. " * 6
    text = (
        "That's the wrong router. app/api/v1/listings.py is the frozen v1 API. " + middle
        + "Put the endpoint in app/api/v2/listings.py, next to the other v2 routes. " + middle
        + "Redo it there."
    )  # fmt: skip
    cut = bounded_user_text(text, 300)
    assert "elided; kept: Put the endpoint in app/api/v2/listings.py" in cut
    assert bounded_user_text(cut, 300) == cut
    # A summary written before (its label "constraints kept") reads back the same.
    older = cut.replace("; kept: ", "; constraints kept: ")
    assert "Put the endpoint in app/api/v2/listings.py" in bounded_user_text(older, 200)


def test_a_long_user_message_cut_short_keeps_the_sentence_changing_a_value() -> None:
    # "… 9 bits turned out too loose … Let's go with 7 rather than 9.": cut from the middle,
    # the change went and the earlier "bump it to 9 bits" read as standing.
    text = (
        "Two changes. Call the report `clusters.json` instead, dupes.json collides with what "
        "the old Python tool leaves around on the share. And 9 bits turned out too loose: it "
        "merges different shots of the same whiteboard. Let's go with 7 rather than 9.\n\n"
        "Also, which commit introduced the old single-threaded walker? I want to credit it."
    )
    cut = bounded_user_text(text, 160)
    assert "elided; kept: Let's go with 7 rather than 9." in cut
    assert bounded_user_text(cut, 160) == cut


def test_a_user_message_just_over_the_limit_is_not_cut_for_a_few_characters() -> None:
    # "[…30 chars elided…]" saved ten characters and took "Switch to keyset pagination".
    text = (
        "Next, paging. Deep pages are slow and the offset pagination repeats rows. "
        "Switch to keyset pagination. "
        "Order by similarity, then id, and give the client an opaque next_cursor."
    )
    assert bounded_user_text(text, len(text) - 20) == text
    longer = text.replace("Switch to", "The old listing export still pages that way. " * 4 + "Use")
    assert "elided" in bounded_user_text(longer, len(text) - 20)


def test_a_long_user_message_cut_short_keeps_its_last_sentence_whole() -> None:
    # The tail began mid-sentence: "…, there should be no CommonJS usage in dist/." lost
    # the start of the rule it ends on.
    rule = (
        "After completing this, there should be no CommonJS usage anywhere in the dist/ "
        "folder of the package."
    )
    text = "Please scan every file under dist/.\n" + "- Convert one more form of export.\n" * 40
    text += rule
    for limit in (1200, 600, 300, 160):
        assert bounded_user_text(text, limit).endswith(rule), limit
        assert bounded_user_text(text, limit).startswith("Please scan every file under dist/.")
    once = bounded_user_text(text, 600)
    assert bounded_user_text(once, 600) == once


def test_an_error_and_a_test_run_of_a_command_of_several_lines_survive_a_re_digest() -> None:
    # A command of two lines was shown as it was, on two lines: read back line by line,
    # its error and its test status were lost.
    listing = "ls /w/unit_tests/src/\necho done"
    tests = "cd /w/unit_tests\nmvn -q test"
    ledger = extract_ledger(
        [
            call("1", "Bash", command=listing),
            result("1", "ls: /w/unit_tests/src/: No such file or directory\ndone\nexit code 1"),
            call("2", "Bash", command=tests),
            result("2", "Tests run: 9, Failures: 1, Errors: 0, Skipped: 0\nexit code 1"),
        ]
    )
    again = parse_ledger(rendered(ledger))
    [error] = again.state("errors").errors
    assert error.open and error.source == listing
    assert list(again.state("tests").runs) == [tests]
    assert "Tests run: 9, Failures: 1" in again.state("tests").runs[tests].latest


def test_prose_wrapped_at_a_fixed_width_is_read_as_the_sentences_it_holds() -> None:
    # A sentence wrapped onto two lines was two sentences: a decision cut in half, its
    # second half a note.
    wrapped = "Decision: we will use the fixed pool from\nsrc/pool.py for the workers, not threads."
    assert signals.sentences(wrapped) == (wrapped.replace("\n", " "),)
    assert signals.sentences("The steps are:\n- read the log\n- fix the retry") == (
        "The steps are:", "read the log", "fix the retry",
    )  # fmt: skip
    assert signals.sentences("port: 8443\nIt came with 4fe3b43.") == (
        "port: 8443", "It came with 4fe3b43.",
    )  # fmt: skip


def test_a_final_answer_of_several_lines_is_read_back_whole() -> None:
    # The final answer's lines were items' lines: read back, a line not starting `- `
    # ("Changes:") was lost, and the list under it became answers of their own.
    answer = "Fixed the relay.\n\nChanges:\n- src/relay.py: retry with backoff\n- tests: 3 retries"
    ledger = extract_ledger(
        [
            say("user", "Fix the relay."),
            call("1", "attempt_completion", result=answer),
        ]
    )
    again = parse_ledger(rendered(ledger))
    assert [text for _, text in again.state("answers").answers] == [answer]
    assert rendered(again) == rendered(ledger).replace("3 messages", "0 messages").replace(
        "2 messages", "0 messages"
    )


def test_colour_codes_in_a_tools_output_are_not_read_as_its_words() -> None:
    # gleeunit colours its report whatever the terminal: the test status read
    # `52 passed, 3 failures\x1b[39m`, escape and all.
    out = (
        "\x1b[32m.\x1b[39m\x1b[32m.\x1b[39m\n\x1b[1m\x1b[31mFAILED\x1b[39m\x1b[22m tests/q.py::t\n"
        "\x1b[31m\n52 passed, 3 failures\x1b[39m\n"
    )
    arguments = '{"command": "gleam test"}'
    _outcome, errors, tests = outcome_of_result("Bash", arguments, out, is_error=False)
    assert tests == "52 passed, 3 failures"
    assert errors and all("\x1b" not in e for e in errors)


def test_an_error_of_a_tool_call_with_a_long_target_is_read_back_whole_from_its_short_form() -> (
    None
):
    # An MCP tool's name and its target pass the hundred characters a command is cut to:
    # cut, the call's name no longer parsed back, and the error was lost.
    url = "https://status.partner.example/" + "/".join(f"tenant_{k}" for k in range(9))
    name = "mcp__browser-tools__fetch_page"
    ledger = extract_ledger(
        [
            call("1", name, url=url),
            result("1", "Request failed with status code 502", is_error=True),
        ]
    )
    [error] = ledger.state("errors").errors
    assert len(error.source) > 100
    shown = 0
    for budget in range(60, 400, 10):
        text = summary_message(render(ledger, budget), ledger.messages).text
        if "Request failed" in text:
            [again] = parse_ledger(text).state("errors").errors
            assert again.source == error.source and again.open, budget
            shown += 1
    assert shown


def test_a_passive_verb_after_should_be_is_no_value_set() -> None:
    # "target should be computed as a linear combination …" was read as the setting
    # `target: computed`, and stated under the values the user set.
    said = (
        "Use a random normal distribution for the sensor values and target should be "
        "computed as a linear combination of the 4 sensor values."
    )
    assert signals.value_settings(said) == ()
    assert signals.value_settings("The result cache should be disabled.") == (
        ("result cache", "disabled"),
    )
    assert signals.value_settings("Retries should be 5.") == (("retries", "5"),)


def test_tool_uses_written_as_xml_and_their_results_are_actions_and_output() -> None:
    # Cline's classic protocol: one XML tool use at the end of the assistant's text, its
    # result a user turn `[tool for 'x'] Result:`; MCP tools through `use_mcp_tool`.
    def use(server: str, tool: str, arguments: dict[str, object]) -> Message:
        return say(
            "assistant",
            f"Next step.\n\n<use_mcp_tool>\n<server_name>{server}</server_name>\n"
            f"<tool_name>{tool}</tool_name>\n<arguments>\n{json.dumps(arguments)}\n"
            "</arguments>\n<task_progress>\n- [x] read the relay\n- [ ] fix the retry\n"
            "</task_progress>\n</use_mcp_tool>",
        )

    details = "\n\n<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"
    messages = [
        say("user", "<task>\nFix the relay's retry.\n</task>" + details),
        use("filesystem", "write_file", {"path": "/w/private/retry.rkt", "content": "x"}),
        say(
            "user",
            "[use_mcp_tool for 'filesystem'] Result:\nSuccessfully wrote to "
            "/w/private/retry.rkt" + details,
        ),
        use("commands", "run_process", {"command_line": "raco test tests"}),
        say(
            "user",
            "The user provided the following feedback:\n<feedback>\nKeep the retry cap "
            "at 3.\n</feedback>\n\n[use_mcp_tool for 'commands'] Result:\nEXIT_CODE: 1\n"
            "1/12 test failures" + details,
        ),
        say(
            "assistant",
            "<ask_followup_question>\n<question>Anything else?</question>\n"
            "</ask_followup_question>",
        ),
        say(
            "user",
            "[ask_followup_question for 'Anything else?'] Result:\n<answer>\nNever log "
            "the API key.\n</answer>" + details,
        ),
        say(
            "assistant",
            "<attempt_completion>\n<result>\nThe retry is fixed.\n</result>\n</attempt_completion>",
        ),
    ]
    ledger = extract_ledger(messages)
    text = rendered(ledger)
    said = user_messages(ledger)
    assert "Never log the API key." in said  # the answer to the agent's question
    question, answer = messages[-3], messages[-2]
    assert output_in_text(answer, question) is None  # never masked as output
    header = "[use_mcp_tool for 'filesystem'] Result:\n"
    assert output_in_text(messages[2], messages[1]) == (0, len(header))
    assert not any("Result:" in s or "Successfully wrote" in s for s in said), said
    assert any("Keep the retry cap at 3." in s for s in said)
    assert "/w/private/retry.rkt (created)" in text
    assert "`raco test tests` → " in text and "`raco test tests` → ok" not in text
    assert "[ ] fix the retry" in text or "- fix the retry" in text
    assert "The retry is fixed." in text


def test_a_tool_use_written_as_xml_is_no_prose_and_its_flagged_error_fails() -> None:
    # The XML of a tool use is the action, not the assistant's words: its JSON arguments
    # and task_progress checklist were read as notes and as what the assistant said last.
    # Cline puts "Error:" first in the result of an MCP tool flagged as an error: the build
    # it ran failed, and the fix the later clean run made was lost ("→ ok").
    def run(command: str, reason: str) -> Message:
        return say(
            "assistant",
            f"{reason}\n\n<use_mcp_tool>\n<server_name>commands</server_name>\n"
            "<tool_name>run_process</tool_name>\n<arguments>\n"
            + json.dumps({"command_line": command, "cwd": "/w/sandpiper"}, indent=2)
            + "\n</arguments>\n<task_progress>\n- [x] read the relay\n"
            "- [ ] fix the retry\n</task_progress>\n</use_mcp_tool>",
        )

    details = "\n\n<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"
    messages = [
        say("user", "<task>\nFix the relay's retry.\n</task>" + details),
        run("raco make main.rkt", "The retry module now uses the shared client."),
        say(
            "user",
            "[use_mcp_tool for 'commands'] Result:\nError:\n1\n\n"
            "/w/sandpiper/private/scheduler.rkt:88:28: tenant-id: unbound identifier\n"
            "  in: tenant-id\n" + details,
        ),
        run("raco make main.rkt", "Bound tenant-id in the scheduler."),
        say("user", "[use_mcp_tool for 'commands'] Result:\n" + details),
    ]
    ledger = extract_ledger(messages)
    text = rendered(ledger)
    assert "tenant-id: unbound identifier" in text, text
    assert '"cwd"' not in text and "<use_mcp_tool>" not in text and "run_process" not in text
    assert "The retry module now uses the shared client." in text
    # The masked output says the same.
    masked = MaskStrategy(min_chars=10).mask_text(messages[2], None, messages[1])
    assert masked is not None and "tenant-id: unbound identifier" in masked.text


def test_rackunit_failures_are_named() -> None:
    output = (
        'raco test: "tests/notifier-test.rkt"\n3/40 test failures\n\n\n'
        "--------------------\nnotifier: gives up after the third failed attempt\nFAILURE\n"
        "name:       check-equal?\nlocation:   /w/tests/notifier-test.rkt:41:4\n"
        "actual:     2\nexpected:   3\n--------------------\n"
        "--------------------\nFAILURE\nname:       check-true\n"
        "location:   /w/tests/scheduler-test.rkt:12:2\n--------------------\n"
    )
    outcome, errors = signals.outcome_of(output, is_error=True)
    assert outcome != "ok"
    assert errors[0] == (
        "notifier: gives up after the third failed attempt (/w/tests/notifier-test.rkt:41:4)"
    )


def test_an_xml_tool_result_among_other_text_blocks_is_output() -> None:
    # Cline's user turn is several text blocks: the user's feedback, the tool's result,
    # a reminder, the environment details. The result is masked where it stands; the
    # other blocks stay.
    use = say(
        "assistant",
        "Reading the log.\n\n<use_mcp_tool>\n<server_name>filesystem</server_name>\n"
        "<tool_name>read_text_file</tool_name>\n<arguments>\n"
        '{"path": "/w/logs/relay.log", "tail": 60}\n</arguments>\n</use_mcp_tool>',
    )
    log = "\n".join(f"2026-11-20T14:{i:02d}:00Z relay delivered batch {i}" for i in range(60))
    feedback = "The user provided the following feedback:\n<feedback>\nKeep it short.\n</feedback>"
    details = "<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"
    reply = Message(
        role="user",
        parts=(
            TextPart(feedback),
            TextPart("[use_mcp_tool for 'filesystem'] Result:\n" + log),
            TextPart(details),
        ),
    )
    header = "[use_mcp_tool for 'filesystem'] Result:\n"
    assert output_in_text(reply, use) == (1, len(header))  # the header stays
    masked = MaskStrategy().mask_text(
        reply, ("read_text_file", '{"path": "/w/logs/relay.log"}'), use
    )
    assert masked is not None
    assert masked.parts[0] == reply.parts[0] and masked.parts[2] == reply.parts[2]
    assert "relay delivered batch 30" not in masked.text
    assert masked.parts[1].text.startswith(header)  # type: ignore[union-attr]
    # Older Cline: the header is a block of its own, the output the next.
    split = Message(
        role="user",
        parts=(
            TextPart("[use_mcp_tool for 'filesystem'] Result:"),
            TextPart(log),
            TextPart(details),
        ),
    )
    assert output_in_text(split, use) == (1, 0)
    # The user's words alone in several blocks are never output.
    words = Message(role="user", parts=(TextPart("Keep it short."), TextPart(details)))
    assert output_in_text(words, use) is None


def test_codeact_actions_in_text_and_their_observations() -> None:
    # OpenHands' CodeAct agent (text protocol): `<execute_bash>` and `<execute_ipython>`
    # blocks in the assistant's text, the agent-skills called positionally in a cell, the
    # environment's reply a user message "OBSERVATION:" (the user's words never).
    trailer = "\n[Python Interpreter: /usr/bin/python]\nopenhands@a1b2:/workspace/dd $ "
    messages = [
        say("user", "Add a --since flag to shutterdedup; keep MSRV at 1.74."),
        say(
            "assistant",
            "Starting with the flag, parsed with the `time` crate.\n<execute_ipython>\n"
            "edit_file_by_replace(\n    '/workspace/dd/src/cli.rs',\n"
            '    to_replace="""    pub root: PathBuf,""",\n'
            '    new_content="""    pub root: PathBuf,\n    pub since: Option<Date>,""",\n)\n'
            "</execute_ipython>",
        ),
        say(
            "user",
            "OBSERVATION:\n[File: /workspace/dd/src/cli.rs (86 lines total after edit)]\n"
            "(this is the beginning of the file)\n1|use std::path::PathBuf;\n"
            "[File updated (edited at line 9). Please review the changes and make sure they "
            "are correct (correct indentation, no duplicate lines, etc). Edit the file again "
            "if necessary.]\n[Jupyter current working directory: /workspace/dd]",
        ),
        say(
            "assistant",
            "Opening the scanner.\n<execute_ipython>\nopen_file('src/scan.rs')\n</execute_ipython>",
        ),
        say(
            "user", "OBSERVATION:\n[File: /workspace/dd/src/scan.rs (174 lines total)]\n1|//! Walks"
        ),
        say(
            "assistant",
            "Clippy:\n<execute_bash>\ncargo clippy --all-targets -- -D warnings\n</execute_bash>",
        ),
        say(
            "user",
            "OBSERVATION:\nerror: unused import: `std::fs`\n --> src/pool.rs:2:5\n"
            'error: could not compile `shutterdedup` (bin "shutterdedup") due to 1 previous error'
            + trailer
            + "\n[Command -1 finished with exit code 101]",
        ),
        say(
            "assistant",
            "Removed the import.\n<execute_bash>\ncargo clippy --all-targets -- -D warnings\n"
            "</execute_bash>",
        ),
        say(
            "user",
            "OBSERVATION:\n    Finished `dev` profile"
            + trailer
            + "\n[Command -1 finished with exit code 0]",
        ),
        say("assistant", "Done: --since is in.\n<finish></finish>"),
    ]
    ledger = extract_ledger(messages)
    text = rendered(ledger)
    said = user_messages(ledger)
    assert said == ["Add a --since flag to shutterdedup; keep MSRV at 1.74."], said
    assert "/workspace/dd/src/cli.rs (modified)" in text
    assert "src/scan.rs (read)" in text
    assert "`cargo clippy --all-targets -- -D warnings` → ok (failed earlier" in text, text
    assert "unused import" in text
    assert "<execute_" not in text and "edit_file_by_replace" not in text
    assert "Starting with the flag, parsed with the `time` crate." in text
    # The observation is output: masked like a tool result, never the user's words, also
    # after a cell the readers find no action in.
    assert output_in_text(messages[6], messages[5]) == (0, 0)
    scrolled = [
        say("user", "Look at the scanner."),
        say("assistant", "Next page.\n<execute_ipython>\nscroll_down()\n</execute_ipython>"),
        say("user", "OBSERVATION:\n[File: /workspace/dd/src/scan.rs (174 lines total)]\n"),
    ]
    assert user_messages(extract_ledger(scrolled)) == ["Look at the scanner."]


def test_a_subjects_shorter_form_ends_between_sentences() -> None:
    # Cut inside its second sentence, a reversal kept the plan it drops and lost the plan
    # that replaced it ("Typed Racket … is out as well,..."), stated as the latest word.
    latest = (
        "Noted, I'll hold to that from here on. Second change of plan: Typed Racket for the "
        "delivery modules is out as well, since the typed/untyped boundary puts the same "
        "contract cost back. Using contracts only at the module boundary, plain functions inside."
    )
    forms = _sentence_forms(f"- {latest}", 400, 200, 120)
    assert forms[0] == f"- {latest}"
    assert all(f.endswith(("back. ...", "on. ...")) for f in forms[1:]), forms


def test_a_later_figure_for_the_same_subject_replaces_the_earlier_one() -> None:
    # The assistant's status said "Threshold is at 9 bits."; the user moved it to 7 and the
    # assistant said so. The earlier figure is no longer said anywhere as what stands.
    messages = [
        say("user", "Make the photo de-dup parallel."),
        say(
            "assistant",
            "Where things stand: 1. `--since` — in, done. 2. the report — writes "
            "clusters.json; builds now. 3. README usage section — still to do. "
            "Threshold is at 9 bits.",
        ),
        say("assistant", "The first batch takes 5 ms on the fixture library."),
        say("user", "9 bits is too loose. Let's go with 7 rather than 9."),
        say("assistant", "Set it — the threshold is now 7 bits."),
        say("assistant", "The second batch takes 7 ms on the fixture library."),
    ]
    text = rendered(extract_ledger(messages))
    assert "threshold is now 7 bits" in text
    assert "Threshold is at 9 bits" not in text, text
    assert "README usage section — still to do" in text  # the rest of the status stays
    # Figures of other subjects stand: two batches are two subjects.
    assert "The first batch takes 5 ms" in text and "The second batch takes 7 ms" in text
    assert signals.figures("Threshold is at 9 bits; the binary is 3.8 MB.") == (
        ("bits", "9"),
        ("mb", "3.8"),
    )


def test_a_separator_inside_quotes_does_not_split_the_command() -> None:
    # sed's script `/^mod pool;$/d` was cut at its `;`: "/^mod" was a modified file.
    ops = signals.file_ops_of_command(
        "rm src/pool.rs && sed -i '/^mod pool;$/d' src/main.rs && git status --short"
    )
    assert ops == (("src/pool.rs", "deleted"), ("src/main.rs", "modified")), ops
    assert signals.file_ops_of_command('echo "a | b; c" > notes.txt') == (("notes.txt", "written"),)


def test_words_beside_an_action_that_say_nothing_of_their_own_do_not_answer() -> None:
    # "Looking up the walker's history first." beside the `git log` it runs was taken for
    # the answer to "which commit introduced the walker?"; the answer came after the output.
    messages = [
        say("user", "Also, which commit introduced the old single-threaded walker?"),
        say(
            "assistant",
            "Looking up the walker's history first.\n<execute_bash>\n"
            "git log --format='%h %s' --follow -- src/scan.rs | grep -i walk\n</execute_bash>",
        ),
        say(
            "user",
            "OBSERVATION:\n4c12a35 scan: walk the library with walkdir\n"
            "[Command -1 finished with exit code 0]",
        ),
        say("assistant", "It was 4c12a35; the later commits only renamed it."),
    ]
    text = rendered(extract_ledger(messages))
    answered = text.split("## Answers given to the user\n")[1].split("\n\n")[0]
    assert answered == "- It was 4c12a35; the later commits only renamed it.", text


def test_a_question_still_open_when_the_span_ends_is_shown_and_answered_after_a_merge() -> None:
    # The user asked "How big is it right now?"; the span ended before the answer. The
    # summary says the question is open, and the answer after it, in the next span, is
    # read as the answer (a merged digest lost it: its question was not carried over).
    asked = [
        say("user", "One more rule: the binary stays under 5 MB. How big is it right now?"),
        say(
            "assistant",
            "Building it.\n<execute_bash>\ncargo build --release && ls -lh target/release/dd\n"
            "</execute_bash>",
        ),
    ]
    first = extract_ledger(asked)
    text = rendered(first)
    assert "- not yet answered: “How big is it right now?”" in text, text
    assert parse_ledger(text).state("answers").waiting == "How big is it right now?"
    summary = summary_message(render(first), first.messages)
    later = [
        summary,
        say("user", "OBSERVATION:\n-rwxr-xr-x 1 dd dd 3.8M target/release/dd\n"),
        say("assistant", "The release binary is 3.8 MB, unstripped, so it fits."),
    ]
    merged = rendered(extract_ledger(later))
    answered = merged.split("## Answers given to the user\n")[1].split("\n\n")[0]
    assert answered.split("\n</")[0] == "- The release binary is 3.8 MB, unstripped, so it fits."
    # The command the first span ended on, its output then unseen, did not fail.
    assert "`cargo build --release && ls -lh target/release/dd` → ok\n" in merged


def test_what_the_user_replaces_by_name_is_no_longer_said_as_standing() -> None:
    # "Call the report `clusters.json` instead — dupes.json collides …": the assistant's
    # earlier status ("the report — writes dupes.json") and plan ("a CHANGELOG entry under
    # 0.10.0", then "make the release 0.9.3 rather than 0.10.0") no longer stand.
    messages = [
        say("user", "Add a duplicate report to the photo tool."),
        say(
            "assistant",
            "Where things stand: 1. `--since` — in, done. 2. the report — writes dupes.json; "
            "builds now. 3. README usage section — still to do.",
        ),
        say("assistant", "The changelog gets an entry under 0.10.0 once the report is in."),
        say(
            "user",
            "Call the report `clusters.json` instead — dupes.json collides with the old tool. "
            "And make the release 0.9.3 rather than 0.10.0.",
        ),
        say("assistant", "Renaming the report output now."),
    ]
    text = rendered(extract_ledger(messages))
    said_by_assistant = text.split("## What the user said")[1].split("\n\n", 1)[1]
    assert "dupes.json" not in said_by_assistant, text
    assert "under 0.10.0" not in said_by_assistant, text
    assert "README usage section — still to do" in text  # the rest of the status stands
    assert "Call the report `clusters.json` instead" in text  # the user's words, verbatim
    # The same when the user's words come after a summary of the assistant's.
    first = extract_ledger(messages[:3])
    assert "writes dupes.json" in rendered(first)
    again = rendered(extract_ledger([summary_message(render(first), 3), *messages[3:]]))
    said_by_assistant = again.split("## What the user said")[1].split("\n\n", 1)[1]
    assert "dupes.json" not in said_by_assistant and "under 0.10.0" not in said_by_assistant
    assert "README usage section — still to do" in again, again


def test_a_sub_agents_report_is_read_for_its_telling_sentences() -> None:
    # Claude Code's Task: the sub-agent's report named the function every later edit was
    # about; the report was read for nothing but errors, and the name was lost.
    report = (
        "The outbound request is made in `/w/hookrelay/delivery/transport.py` by "
        "`_signed_post(url, body, secret)`: it signs the body with HMAC-SHA256.\n\n"
        "Its only caller is `DeliveryWorker.deliver()`, which catches every exception.\n\n"
        "No retry happens anywhere on that path."
    )
    messages = [
        say("user", "Add retries to webhook delivery."),
        call("t1", "Task", description="Find the send path", prompt="Find where it sends."),
        result("t1", report),
        say("assistant", "Adding the retry around the send."),
    ]
    text = rendered(extract_ledger(messages))
    notes = text.split("## Notes by the assistant\n")[1].split("\n\n")[0]
    assert "`_signed_post(url, body, secret)`" in notes, text  # its first finding
    assert "No retry happens anywhere" not in notes  # nothing telling in it
    # Masked, its placeholder keeps what it found, and the digest reads it from there.
    calls = {"t1": messages[1].tool_calls[0]}
    masked = MaskStrategy(min_chars=10).mask_message(messages[2], calls)
    assert masked is not None
    assert "found: The outbound request is made in" in masked.tool_results[0].text
    again = rendered(extract_ledger([*messages[:2], masked, messages[3]]))
    assert "`_signed_post(url, body, secret)`" in again.split("## Notes by the assistant\n")[1]


def test_claude_codes_interruption_marker_is_not_the_users_words() -> None:
    said = (
        "[Request interrupted by user for tool use]\nactually, stop — don't touch the CLI. "
        "Ops parse `hookrelayctl` output."
    )
    assert signals.own_words(said) == (
        "actually, stop — don't touch the CLI. Ops parse `hookrelayctl` output."
    )
    assert signals.own_words("[Request interrupted by user]") == ""
    assert signals.own_words("Please [Request interrupted by user] quote it.") == (
        "Please [Request interrupted by user] quote it."
    )


def test_amazon_qs_framed_entries_are_read_for_the_users_words() -> None:
    # Amazon Q Developer CLI frames each prompt: a context entry (the time), then the
    # user's message (crates/chat-cli/src/cli/chat/{conversation,message}.rs).
    said = (
        "--- CONTEXT ENTRY BEGIN ---\nCurrent time: Friday, 2026-11-20T11:46:05+01:00\n"
        "--- CONTEXT ENTRY END ---\n\n--- USER MESSAGE BEGIN ---\nStop — terraform/envs/prod/"
        "main.tf is never edited by hand. Everything goes into terraform/envs/staging/main.tf."
        "--- USER MESSAGE END ---\n\n"
    )
    assert signals.own_words(said) == (
        "Stop — terraform/envs/prod/main.tf is never edited by hand. "
        "Everything goes into terraform/envs/staging/main.tf."
    )


def test_eslints_stylish_report_names_its_errors() -> None:
    output = (
        "\n/w/packages/reports/src/routes/invoices.export.ts\n"
        "  1:10  error    'Readable' is defined but never used  @typescript-eslint/no-unused-vars\n"
        "  4:1   warning  Unexpected console statement  no-console\n\n"
        "✖ 2 problems (1 error, 1 warning)\n\n ELIFECYCLE  Command failed with exit code 1."
    )
    outcome, errors = signals.outcome_of(output, is_error=False)
    assert outcome != "ok"
    assert errors[0].startswith("1:10  error    'Readable' is defined but never used"), errors
    assert not any("no-console" in e for e in errors)


def test_a_fixed_error_short_of_room_keeps_its_line_without_how_and_reads_back_fixed() -> None:
    messages = [
        call("1", "bash", command="pytest -q tests/test_pool.py"),
        result("1", "E   AssertionError: expected 3 retries, got 2\n1 failed, 4 passed"),
        call("2", "bash", command="pytest -q tests/test_pool.py"),
        result("2", "E   KeyError: 'tenant'\n1 failed, 4 passed"),
    ]
    ledger = extract_ledger(messages)
    [gone, _open] = ledger.state("errors").errors
    assert not gone.open and gone.fixed_by.startswith("not seen in a later run")
    line = f"- fixed: {gone.text} (from `pytest -q tests/test_pool.py`)"
    full = "\n".join(render(ledger))
    assert f"{line} — {gone.fixed_by}" in full
    # Some room shows the fixed error without how it went away, rather than not at all.
    shorts = [
        text
        for room in range(len(full), 0, -4)
        if line + "\n" in (text := "\n".join(render(ledger, room)))
    ]
    assert shorts
    short = shorts[0]
    again = extract_ledger([summary_message(short.split("\n"), 4)])
    [(text, is_open)] = [
        (e.text, e.open) for e in again.state("errors").errors if "retries" in e.text
    ]
    assert text == gone.text and not is_open
    assert line in "\n".join(render(again))


def test_a_lowercase_question_inside_a_casual_turn_is_answered() -> None:
    # "… — which one? ops wants to talk to the customer.": the question mark sits inside
    # what reads as one sentence (the next one starts lowercase); the answer was not kept.
    ledger = extract_ledger(
        [
            say(
                "user",
                "quick one: a subscription got hammered with 429s — which one? ops wants it.",
            ),
            call("1", "grep", pattern="429", path="log/"),
            result("1", "log/app.log:12: retry {:sub sub_QB5HZB :status 429}"),
            say(
                "assistant",
                "`sub_QB5HZB` (dunmore-tickets): 11 of the 14 throttled retries were for it.",
            ),
        ]
    )
    answers = rendered(ledger).split("## Answers given to the user\n")[1]
    assert answers.startswith("- `sub_QB5HZB` (dunmore-tickets)")


def _decisions(*texts: str) -> list[tuple[str, str]]:
    ledger = extract_ledger([say("assistant", text) for text in texts])
    return [(d.text, d.superseded_by) for d in ledger.state("decisions").decisions]


def test_a_decision_goes_on_through_the_sentences_of_its_paragraph_that_say_how() -> None:
    # The decision named the table; how it is claimed came in the next sentence, uncued,
    # and was lost with it.
    decided = "Going with the design we discussed: a new `outbound_retries` table in Postgres."
    how = "A worker in each pod claims due rows with `FOR UPDATE SKIP LOCKED` and posts them."
    [(text, _)] = _decisions(f"{decided} {how}\n\nThe files:\n- src/worker.clj: polls.")
    assert text == f"{decided} {how}"  # the list after the paragraph is not the decision
    # A sentence announcing what its own message does next is no part of it.
    message = Message(
        "assistant",
        (
            TextPart(f"{decided} I'll print src/worker.clj."),
            ToolCallPart("c1", "shell", json.dumps({"command": "cat src/worker.clj"})),
        ),
    )
    decisions = extract_ledger([message]).state("decisions").decisions
    assert [d.text for d in decisions] == [decided]


def test_changing_my_mind_and_a_sentence_opening_instead_replace_a_plan() -> None:
    plan = "Plan: the email links to GET /auth/magic-link?token= and the handler checks it."
    mind = "Changing my mind on the GET /auth/magic-link?token= route: tokens end up in the logs."
    assert _decisions(plan, mind) == [(plan, mind), (mind, "")]
    pool = "I'm going with a crossbeam-channel worker pool for the hashing."
    dropping = "I'm dropping the crossbeam-channel worker pool."
    reason = (
        "Re-sorting its output would mean buffering every row anyway, and the manifest has to "
        "stay in path order for the diff the NAS script takes of it every night."
    )
    instead = (
        "Instead: split the sorted paths into one chunk per core and hash each chunk on a "
        "std::thread::scope thread, joining in chunk order."
    )
    decisions = _decisions(pool, f"{dropping} {reason} {instead}")
    standing = [text for text, by in decisions if not by]
    assert standing[-1] == instead  # too long to join the reversal: a decision of its own
    assert all(by for text, by in decisions if text == pool)


@pytest.mark.parametrize(
    "report",
    [
        "Four uploads went through the local worker, and the listing flipped to published.",
        "Retries are off the request path: the worker inserts into `outbound_retries`, and "
        "the suite is green.",
        "The cap test for the `outbound_retries` worker fails now that the window can grow.",
    ],
)
def test_a_report_of_how_a_run_went_revises_no_decision(report: str) -> None:
    decided = (
        "Going with a new `outbound_retries` table: each listing upload inserts rows, and a "
        "worker claims due rows and publishes the listing."
    )
    assert _decisions(decided, report)[0] == (decided, "")


def test_words_of_order_and_quantity_name_no_subject() -> None:
    # "every" and "after" were the two words an acknowledgement shared with the plan.
    plan = (
        "Plan: contracts on every internal function of the delivery modules. That way parked "
        "deliveries are found again after the process restarts."
    )
    assert _decisions(plan, "Understood; every change after this respects it.")[0] == (plan, "")


def test_an_answer_to_the_users_question_revises_no_decision() -> None:
    # The user asked what stalled a listing; the answer shares the session's words with the
    # standing decision ("listing", "photo") and replaced it, uncued.
    decided = (
        "Scrapping the chord. Instead each listing keeps a `pending_photos` counter that every "
        "photo task decrements, and the task that brings it to zero publishes the listing."
    )
    ledger = extract_ledger(
        [
            say("assistant", decided),
            say("user", "Side question: why did listing 59468 never publish?"),
            say(
                "assistant",
                "The last photo task of listing 59468 timed out on the partner's CDN and was "
                "not retried, so the import never marked the listing complete.",
            ),
        ]
    )
    decisions = ledger.state("decisions").decisions
    assert [(d.text, d.superseded_by) for d in decisions] == [(decided, "")]


def test_a_reversal_naming_code_replaces_only_the_decisions_that_hold_it() -> None:
    # The route was part of a plan already replaced; the standing decision shares only the
    # word "link" with the reversal's "GET /auth/magic-link" and was marked replaced.
    plan = "Plan: stateless signed tokens, and the email links to GET /auth/magic-link?token=."
    table = (
        "Agreed, scrap the stateless tokens. Links become rows in a `login_links` table, so "
        "every link is single-use."
    )
    route = (
        "Scratch the GET /auth/magic-link?token= route: the request span logs the full URI. "
        "The email opens the /signin page instead, which posts the token to "
        "POST /auth/magic-link/redeem."
    )
    mind = "Changing my mind on the redeem route: it goes under /api as well, with the token."
    decisions = dict(_decisions(plan, table, route, mind))
    assert decisions[table] == ""
    assert decisions[plan] == table


def test_a_long_reversal_keeps_what_comes_instead_and_its_sentences_are_no_notes() -> None:
    # Each sentence ~150 characters: together past a decision's 300, the reversal stood
    # without the route that replaced the old one, and a note repeated the old route.
    drop = (
        "Changing my mind on the redeem route. telemetry.rs puts `uri` on every request span, "
        "so a token in GET /auth/magic-link?token= would be written to the logs verbatim."
    )
    comes = (
        "Redeem becomes POST /auth/magic-link/redeem with the token in the JSON body; the link "
        "in the email opens the frontend's /signin page, which posts it."
    )
    ledger = extract_ledger([say("assistant", f"{drop} {comes}")])
    [decision] = ledger.state("decisions").decisions
    assert decision.text == f"{drop} {comes}"
    text = rendered(ledger)
    assert "## Notes by the assistant" not in text
    # Short of room, the line keeps its end: what comes instead.
    [item] = ledger.items()[ledger.sections.index(ledger.section("decisions"))]
    assert all(form.endswith("which posts it.") for form in item.forms)


def test_a_sentence_opening_replacing_x_with_y_replaces_the_plan() -> None:
    plan = "Plan: a delayed job per reservation, dispatched with the pickup deadline."
    why = "The docs confirm a dispatched job cannot be cancelled. So the delayed jobs are out."
    new = "Replacing them with `PickupSweep`, a scheduled job that lapses past the pickup deadline."
    decisions = _decisions(plan, f"{why} {new}")
    assert decisions[0][1].endswith(new) and decisions[-1] == (decisions[0][1], "")


def _manus(call_id: str, name: str, output: str, **arguments: object) -> list[Message]:
    # OpenManus hands every tool's output back under one line naming the tool.
    return [
        call(call_id, name, **arguments),
        result(call_id, f"Observed output of cmd `{name}` executed:\n{output}"),
    ]


def test_openmanus_planning_states_its_steps_and_ask_human_brings_the_users_words() -> None:
    steps = ["Map the checkout", "Hold seats", "List holds in the back office", "Document it"]

    def plan(marks: str) -> str:
        lines = [
            f"{n}. [{mark}] {step}" for n, (mark, step) in enumerate(zip(marks, steps, strict=True))
        ]
        return (
            "Plan: Seat holds (ID: holds)\n====\n\nProgress: …\n\nSteps:\n"
            + "\n".join(lines)
            + "\n"
        )

    ledger = extract_ledger(
        [
            *_manus("1", "planning", plan("    "), command="create", plan_id="holds", steps=steps),
            *_manus(
                "2",
                "ask_human",
                "no. put them in postgres. and keep PHPStan at level 8.",
                inquire="Redis or Postgres for the holds?",
            ),
            *_manus(
                "3", "planning", plan("✓→  "), command="mark_step", plan_id="holds", step_index=1
            ),
        ]
    )
    text = rendered(ledger)
    todos = text.split("## To-dos\n")[1].split("\n\n")[0]
    assert "- [in progress] Hold seats" in todos and "- Document it" in todos
    assert "[completed] Map the checkout" in todos
    said = text.split("## What the user said (verbatim, oldest first)\n")[1].split("\n\n")[0]
    assert said == "- no. put them in postgres. and keep PHPStan at level 8."


def test_the_users_answer_to_an_ask_tool_is_never_masked_nor_a_placeholder_their_words() -> None:
    answer = "no. redis is flushed on every deploy, put the holds in postgres. " * 8
    messages = [
        say("user", "Hold seats during checkout."),
        *_manus("1", "ask_human", answer, inquire="Redis or Postgres?"),
    ]
    calls = {"1": messages[1].tool_calls[0]}
    assert MaskStrategy(min_chars=10).mask_message(messages[2], calls) is None
    # A placeholder where an answer was (written before) is no answer of the user's.
    masked = [
        *messages[:2],
        result(
            "1",
            f"{MASK_PREFIX} ask_human; 1 lines, 500 chars; ok; original kept as m-0123456789ab]",
        ),
    ]
    said = user_messages(extract_ledger(masked))
    assert said == ["Hold seats during checkout."]


@pytest.mark.parametrize(
    "step",
    [
        "Now the service that takes and releases holds: expired holds on the requested seats "
        "are deleted inside the same transaction, so a stale row never blocks the index.",
        "Last, payment releases the cart's holds once the booking is confirmed.",
    ],
)
def test_a_step_of_the_work_told_as_it_goes_revises_no_decision(step: str) -> None:
    # An agent that narrates each step ("Now the …", "Last, …") spoke of the standing
    # decision's subject in every step, and each step replaced it in turn.
    decided = (
        "Changing course. The lock version is dropped: holds will be rows in a seat_hold "
        "table keyed by sailing and seat, with an expires_at column, released on payment."
    )
    assert _decisions(decided, step)[-1] == (decided, "")


def test_a_plan_already_replaced_names_what_later_replaced_the_code_it_held() -> None:
    # The plan held the GET route; the table decision replaced the plan, the route reversal
    # came later and named code only the plan held: the plan's line named the table alone,
    # and so stated the old route with nothing replacing it.
    plan = "Plan: stateless signed tokens, and the email links to GET /auth/magic-link?token=."
    table = "Agreed, scrap the stateless tokens. Links become rows in a `login_links` table."
    route = (
        "Scratch the GET /auth/magic-link?token= route: the request span logs the full URI. "
        "Redeeming becomes POST /auth/magic-link/redeem with the token in the body."
    )
    ledger = extract_ledger([say("assistant", t) for t in (plan, table, route)])
    line = next(x for x in rendered(ledger).splitlines() if x.endswith(plan))
    assert line == f"- superseded (by: {table}; later by: {route}): {plan}"
    # Read back, it is the same.
    again = extract_ledger([summary_message(render(ledger), ledger.messages)])
    first = again.state("decisions").decisions[0]
    assert (first.text, first.superseded_by, first.later) == (
        plan,
        table,
        (route,),
    )


def test_a_reversal_naming_no_standing_decision_marks_the_replaced_plan_holding_its_code() -> None:
    plan = "Plan: stateless signed tokens, and the email links to GET /auth/magic-link?token=."
    table = "Agreed, scrap the stateless tokens. Links become rows in a `login_links` table."
    mind = (
        "Changing my mind on the redeem route: a token in GET /auth/magic-link?token= would "
        "be logged. Redeem becomes POST /auth/magic-link/redeem with the token in the body."
    )
    decisions = extract_ledger([say("assistant", t) for t in (plan, table, mind)]).state(
        "decisions"
    )
    assert [(d.text, d.superseded_by, d.later) for d in decisions.decisions] == [
        (plan, table, (mind,)),
        (table, "", ()),
        (mind, "", ()),
    ]


def test_a_long_turn_every_step_repeats_is_the_harness_prompt_not_the_users_words() -> None:
    # OpenManus writes its next-step prompt as a user turn before every step.
    prompt = (
        "Based on user needs, proactively select the most appropriate tool or combination of "
        "tools. For complex tasks, you can break down the problem and use different tools "
        "step by step to solve it."
    )
    messages = [say("user", "Hold seats during checkout; no new Composer packages.")]
    for n in range(4):
        messages += [
            say("user", prompt),
            say("assistant", f"Step {n} done."),
            say("user", "Carry on."),
        ]
    said = rendered(extract_ledger(messages)).split(
        "## What the user said (verbatim, oldest first)\n"
    )[1]
    said = said.split("\n\n")[0]
    assert "proactively select" not in said
    assert "- Hold seats during checkout; no new Composer packages." in said
    assert "- Carry on." in said  # a short word every turn repeats is still the user's
