"""User datasets (`compaction.eval.datasets`): every input format, every error with its place,
probes files, and probes extracted from raw sessions — checked against expectations written
by hand from reading the sessions, never against the digest's own readers."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from compaction.dialects import ANTHROPIC, OPENAI
from compaction.eval import CATEGORIES, Fact, text_of_payload
from compaction.eval.datasets import extract_probes, load_dataset, parse_facts, session_text
from compaction.eval.sessions import EvalSession
from compaction.eval.state_probes import ID_PREFIXES
from compaction.exceptions import DecodeError, InputError
from compaction.messages import Conversation, Message, TextPart, ToolCallPart, ToolResultPart

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swe-agent-trajectories"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared trajectories not present")


# --- builders ---------------------------------------------------------------------------------


def openai_chat() -> list[dict[str, Any]]:
    """A small OpenAI session: a task, a shell call, a write, a failing test run."""
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make the rounding in money.py exact. Keep the API."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "write_file",
                        "arguments": json.dumps({"path": "src/money_v2.py", "content": "x = 1"}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "wrote 5 bytes"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "arguments": json.dumps({"command": "pytest -q tests/test_money.py"}),
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "F.\nFAILED tests/test_money.py::test_half_even - assert 2 == 3\n"
            "1 failed, 1 passed in 0.02s",
        },
        {"role": "assistant", "content": "The half-even test still fails."},
    ]


def anthropic_request() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You are a coding agent.",
        "messages": [
            {"role": "user", "content": "Fix the bug in app/util.py"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Editing the helper."},
                    {
                        "type": "tool_use",
                        "id": "tu_1",
                        "name": "str_replace_based_edit_tool",
                        "input": {
                            "command": "str_replace",
                            "path": "app/util.py",
                            "old_str": "a",
                            "new_str": "b",
                        },
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "tu_1", "content": "Edited app/util.py"}
                ],
            },
            {"role": "assistant", "content": "Done."},
        ],
    }


def traj(history: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {"history": history, **top}


def swe_step(action: str, thought: str = "Next step.") -> dict[str, Any]:
    """A SWE-agent action without function calling: the action is in the text and the field."""
    return {
        "role": "assistant",
        "content": f"{thought}\n```\n{action}\n```",
        "action": action,
        "message_type": "action",
        "agent": "primary",
    }


def swe_obs(text: str, open_file: str = "n/a", cwd: str = "/repo") -> dict[str, Any]:
    return {
        "role": "user",
        "content": f"{text}\n(Open file: {open_file})\n(Current directory: {cwd})\nbash-$",
        "message_type": "observation",
        "agent": "primary",
    }


def swe_task(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "message_type": "observation", "agent": "primary"}


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def call(call_id: str, name: str, **arguments: Any) -> Message:
    return Message("assistant", (ToolCallPart(call_id, name, json.dumps(arguments)),))


def result(call_id: str, text: str, *, is_error: bool = False) -> Message:
    return Message("tool", (ToolResultPart(call_id, (TextPart(text),), is_error),))


def conversation(*messages: Message) -> Conversation:
    return Conversation(
        (
            Message.text_message("system", "You are a coding agent."),
            Message.text_message("user", "Please fix the failing tests."),
            *messages,
        ),
        dialect="openai",
    )


def action_facts(facts: Iterable[Fact]) -> list[Fact]:
    """The facts of the action rules (files, commands, failing tests, the final diff); the
    state rules' facts are tested in test_eval_state_probes.py."""
    return [f for f in facts if not f.id.startswith(ID_PREFIXES)]


def by_category(facts: Iterable[Fact]) -> dict[str, list[tuple[str, ...]]]:
    """The action rules' facts' probes by category."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for fact in action_facts(facts):
        out.setdefault(fact.category, []).append(fact.probe)
    return out


# --- formats ----------------------------------------------------------------------------------


def test_openai_list_file_is_one_session_named_by_its_file(tmp_path: Path) -> None:
    path = write_json(tmp_path / "chat.json", openai_chat())
    [session] = load_dataset(str(path))
    assert session.name == "chat.json"
    assert session.source == str(path)
    assert session.tags == {"format": "openai", "probes": "extracted"}
    assert len(session.conversation) == 7
    assert by_category(session.facts) == {
        "file_created": [("src/money_v2.py",)],
        "command": [("pytest -q tests/test_money.py",)],
        "error_open": [("tests/test_money.py::test_half_even",)],
    }


def test_openai_request_object_and_anthropic_request_are_detected(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", {"model": "gpt-4o", "messages": openai_chat()})
    write_json(tmp_path / "b.json", anthropic_request())
    a, b = load_dataset(tmp_path)
    assert (a.name, a.tags["format"]) == ("a.json", "openai")
    assert (b.name, b.tags["format"]) == ("b.json", "anthropic")
    assert by_category(b.facts) == {"file_modified": [("app/util.py",)]}


def test_jsonl_holds_one_session_per_line_and_skips_blank_lines(tmp_path: Path) -> None:
    lines = [json.dumps(openai_chat()), "", json.dumps(anthropic_request()), "   "]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sessions = load_dataset(path)
    assert [s.name for s in sessions] == ["runs.jsonl:1", "runs.jsonl:3"]
    assert [s.source for s in sessions] == [f"{path}:1", f"{path}:3"]
    assert [s.tags["format"] for s in sessions] == ["openai", "anthropic"]


@pytest.mark.parametrize(
    ("bad_line", "fragment"),
    [
        ('{"messages": [', "line 1 col"),
        ("42", "cannot tell the dialect"),
        ('[{"role": "robot", "content": "hi"}]', "robot"),
        ("NaN", "NaN is not valid JSON"),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path: Path, bad_line: str, fragment: str) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(openai_chat()) + "\n\n" + bad_line + "\n", encoding="utf-8")
    with pytest.raises(DecodeError) as info:
        load_dataset(path)
    assert str(info.value).startswith(f"{path}:3: ")
    assert fragment in str(info.value)


def test_a_blank_jsonl_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(InputError, match="every line is blank"):
        load_dataset(path)


def test_traj_file_decodes_as_a_trajectory(tmp_path: Path) -> None:
    history = [
        {"role": "system", "content": "SETTING: an autonomous programmer.", "agent": "primary"},
        swe_task("Fix the crash.\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"),
        swe_step("create scratch.py"),
        swe_obs("[File: /repo/scratch.py (1 lines total)]", "/repo/scratch.py"),
        swe_step("python scratch.py"),
        swe_obs("ok", "/repo/scratch.py"),
    ]
    path = write_json(tmp_path / "run.traj", traj(history))
    [session] = load_dataset(path)
    assert session.tags["format"] == "traj"
    assert by_category(session.facts) == {
        "file_created": [("scratch.py",)],
        "command": [("python scratch.py",)],
    }


def test_malformed_files_give_located_errors_not_tracebacks(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": [}', encoding="utf-8")
    with pytest.raises(DecodeError, match=r"broken\.json: line 1 col 15"):
        load_dataset(broken)
    bad_traj = write_json(tmp_path / "bad.traj", {"history": [{"role": "wizard"}]})
    with pytest.raises(DecodeError, match=r"bad\.traj: history\[0\]\.role: unknown role"):
        load_dataset(bad_traj)
    with pytest.raises(InputError, match="no such file or directory"):
        load_dataset(tmp_path / "missing.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("not a session", encoding="utf-8")
    with pytest.raises(InputError, match="no sessions found"):
        load_dataset(empty)


def test_directory_is_read_in_sorted_order_skipping_other_files(tmp_path: Path) -> None:
    write_json(tmp_path / "b.json", openai_chat())
    write_json(tmp_path / "a.json", anthropic_request())
    (tmp_path / "c.jsonl").write_text(json.dumps(openai_chat()) + "\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    (tmp_path / ".hidden.json").write_text("not even json", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    write_json(tmp_path / "sub" / "deeper.json", openai_chat())
    names = [s.name for s in load_dataset(tmp_path)]
    assert names == ["a.json", "b.json", "c.jsonl:1"]
    assert names == [s.name for s in load_dataset(str(tmp_path))]


# --- probes files -----------------------------------------------------------------------------


def test_probes_beside_a_session_file_replace_extraction(tmp_path: Path) -> None:
    path = write_json(tmp_path / "chat.json", openai_chat())
    write_json(
        tmp_path / "chat.json.probes.json",
        [
            {"id": "api", "category": "constraint", "probe": ["Keep the API"]},
            {
                "id": "test",
                "category": "error_open",
                "probe": ["test_half_even"],
                "text": "half-even rounding is still broken",
                "stale": ["test_half_up"],
                "critical": False,
                "cued": True,
                "depth": "early",
            },
        ],
    )
    [session] = load_dataset(path)
    assert session.tags["probes"] == "file"
    api, test = session.facts
    assert api == Fact(
        id="api",
        category="constraint",
        text="Keep the API",
        probe=("Keep the API",),
        depth="early",
        cued=False,
        critical=True,  # a required constraint is critical unless the file says otherwise
        planted_in=(1,),
    )
    assert (test.text, test.stale, test.critical, test.cued, test.depth) == (
        "half-even rounding is still broken",
        ("test_half_up",),
        False,
        True,
        "early",
    )
    assert test.planted_in == (5,)


def test_stem_probes_file_is_found_too(tmp_path: Path) -> None:
    path = write_json(tmp_path / "chat.json", openai_chat())
    write_json(tmp_path / "chat.probes.json", [{"id": "a", "category": "todo", "probe": ["API"]}])
    [session] = load_dataset(path)
    assert [f.id for f in session.facts] == ["a"]
    write_json(tmp_path / "chat.json.probes.json", [])
    with pytest.raises(InputError, match="two probes files"):
        load_dataset(path)


def test_jsonl_probes_map_session_names_or_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(
        json.dumps(openai_chat()) + "\n" + json.dumps(anthropic_request()) + "\n", encoding="utf-8"
    )
    write_json(
        tmp_path / "runs.jsonl.probes.json",
        {"runs.jsonl:1": [{"id": "x", "category": "constraint", "probe": ["Keep the API"]}]},
    )
    first, second = load_dataset(path)
    assert [f.id for f in first.facts] == ["x"]
    assert first.tags["probes"] == "file"
    assert second.tags["probes"] == "extracted"
    write_json(
        tmp_path / "runs.jsonl.probes.json",
        {"2": [{"id": "y", "category": "file_modified", "probe": ["app/util.py"]}]},
    )
    first, second = load_dataset(path)
    assert first.tags["probes"] == "extracted"
    assert [f.id for f in second.facts] == ["y"]


def test_directory_probes_file_maps_session_names(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", anthropic_request())
    write_json(tmp_path / "b.json", openai_chat())
    write_json(
        tmp_path / "probes.json",
        {"b.json": [{"id": "k", "category": "constraint", "probe": ["keep the api"]}]},
    )
    a, b = load_dataset(tmp_path)
    assert a.tags["probes"] == "extracted"
    assert [f.probe for f in b.facts] == [("keep the api",)]  # probes match case-insensitively


def test_directory_probes_naming_an_unknown_session_is_an_error(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", anthropic_request())
    write_json(tmp_path / "probes.json", {"a": []})
    with pytest.raises(InputError) as info:
        load_dataset(tmp_path)
    message = str(info.value)
    assert message.startswith(str(tmp_path / "probes.json"))
    assert "unknown session(s) a;" in message
    assert "a.json" in message


def test_facts_given_twice_for_one_session_are_an_error(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", anthropic_request())
    write_json(tmp_path / "probes.json", {"a.json": []})
    write_json(tmp_path / "a.json.probes.json", [])
    with pytest.raises(InputError, match="given both here and in the directory"):
        load_dataset(tmp_path)


def test_a_list_of_facts_for_a_multi_session_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(openai_chat()) + "\n" + json.dumps(openai_chat()), encoding="utf-8")
    write_json(tmp_path / "runs.probes.json", [])
    with pytest.raises(InputError, match="holds 2 sessions"):
        load_dataset(path)


GOOD = {"id": "f", "category": "constraint", "probe": ["Keep the API"]}


@pytest.mark.parametrize(
    ("facts", "where", "fragment"),
    [
        ({"id": "f"}, "[0]", "not a list"),
        ([GOOD, {"id": "g", "category": "todo"}], "[1]", "missing required key 'probe'"),
        ([{**GOOD, "category": "wish"}], "[0].category", "unknown category 'wish'"),
        ([{**GOOD, "probe": "Keep the API"}], "[0].probe", "expected a list, got a string"),
        ([{**GOOD, "probe": []}], "[0].probe", "at least one string"),
        ([{**GOOD, "probe": ["Keep", 3]}], "[0].probe[1]", "expected a string, got a number"),
        ([{**GOOD, "probe": ["  "]}], "[0].probe[0]", "must not be empty"),
        ([{**GOOD, "critical": "yes"}], "[0].critical", "expected a boolean, got a string"),
        ([{**GOOD, "colour": "red"}], "[0].colour", "unknown key"),
        ([GOOD, GOOD], "[1].id", "duplicate fact id 'f'"),
        ([{**GOOD, "probe": ["never said"]}], "[0].probe[0]", "does not occur in the session"),
        ([{**GOOD, "depth": "deep"}], "[0].depth", "unknown depth 'deep'"),
        ([{**GOOD, "stale": [None]}], "[0].stale[0]", "expected a string, got null"),
        (["f"], "[0]", "expected a fact object, got a string"),
    ],
)
def test_probes_file_errors_name_file_index_and_key(
    tmp_path: Path, facts: Any, where: str, fragment: str
) -> None:
    path = write_json(tmp_path / "chat.json", openai_chat())
    probes = write_json(tmp_path / "chat.json.probes.json", facts)
    if isinstance(facts, dict):
        fragment, where = "no session named 'id'", ""
    with pytest.raises(InputError) as info:
        load_dataset(path)
    message = str(info.value)
    assert message.startswith(str(probes)), message
    if where:
        assert f"chat.json{where}: " in message, message
    assert fragment in message, message


def test_probes_file_that_is_not_json_names_its_position(tmp_path: Path) -> None:
    path = write_json(tmp_path / "chat.json", openai_chat())
    probes = tmp_path / "chat.json.probes.json"
    probes.write_text('[{"id": "a",}]', encoding="utf-8")
    with pytest.raises(DecodeError, match=r"chat\.json\.probes\.json: line 1 col 13"):
        load_dataset(path)


def test_parse_facts_takes_depth_from_where_the_probe_first_appears() -> None:
    filler = "x" * 1000
    conv = conversation(
        Message.text_message("assistant", filler + " alpha"),
        Message.text_message("assistant", filler + " beta"),
        Message.text_message("assistant", filler + " gamma"),
    )
    raw = [{"id": n, "category": "decision", "probe": [n]} for n in ("alpha", "beta", "gamma")]
    facts = parse_facts(raw, conv, location="here")
    assert [f.depth for f in facts] == ["early", "middle", "late"]
    assert [f.planted_in for f in facts] == [(2,), (3,), (4,)]


# --- extraction on hand-made sessions ---------------------------------------------------------


def test_shell_commands_that_change_files_are_read_without_running_them() -> None:
    command = (
        "sed -i 's/a|b/c/' src/x.py && rm -f old.py; echo done > out.txt 2> err.log\n"
        "cat > gen.py << 'EOF'\nrm = 3  # a heredoc line, not a command\nEOF\n"
        "touch new.py # rm kept.py\nmv a.py b.py; cp tpl.cfg app.cfg; perl -pi -e 's/x/y/' z.py"
    )
    conv = conversation(call("c1", "bash", command=command), result("c1", "done"))
    facts = {f.probe[0]: f.category for f in extract_probes(conv) if f.category != "command"}
    assert facts == {
        "src/x.py": "file_modified",
        "old.py": "file_deleted",
        "out.txt": "file_created",
        "gen.py": "file_created",
        "new.py": "file_created",
        "a.py": "file_deleted",
        "b.py": "file_created",
        "app.cfg": "file_created",
        "z.py": "file_modified",
    }


def test_an_extensions_shell_tool_goose_style_is_a_shell() -> None:
    # Goose names an extension's tools `extension__tool`: `developer__shell` runs commands.
    conv = conversation(
        call("c1", "developer__shell", command="rm src/legacy.kt && git mv a.kt b/a.kt"),
        result("c1", ""),
    )
    facts = {f.probe[0]: f.category for f in extract_probes(conv) if f.category != "command"}
    assert facts == {"src/legacy.kt": "file_deleted", "a.kt": "file_deleted",
                     "b/a.kt": "file_created"}  # fmt: skip


def test_copilots_terminal_tool_and_file_path_argument_are_read() -> None:
    # GitHub Copilot's agent mode runs commands through `run_in_terminal` and names every
    # file in a `filePath` argument.
    outbox, store = "/ws/Sources/App/Outbox.swift", "/ws/Sources/App/OutboxStore.swift"
    edited = "The following files were successfully edited:\n{}\n"
    conv = conversation(
        call("c1", "read_file", filePath=outbox, startLine=1, endLine=9),
        result("c1", "```swift\nstruct Outbox {}\n```"),
        call("c2", "replace_string_in_file", filePath=outbox, oldString="struct Outbox {}",
             newString="struct Outbox: Sendable {}"),
        result("c2", edited.format(outbox)),
        call("c3", "create_file", filePath=store, content="import NIO"),
        result("c3", edited.format(store)),
        call("c4", "run_in_terminal", command="git rm Sources/App/Legacy.swift",
             explanation="Remove the legacy file.", isBackground=False),
        result("c4", "rm 'Sources/App/Legacy.swift'"),
    )  # fmt: skip
    found = extract_probes(conv)
    facts = {f.probe[0]: f.category for f in found if f.category.startswith("file_")}
    assert facts == {
        outbox: "file_modified",
        store: "file_created",
        "Sources/App/Legacy.swift": "file_deleted",
    }


def test_warps_edit_files_names_its_files_inside_its_diff_lists() -> None:
    # Warp's agent mode edits through `edit_files` (the ApplyFileDiffs tool of its protocol):
    # the files sit in `diffs`, `new_files` and `deleted_files` lists, each item naming its
    # `file_path`, not in a top-level argument.
    outbox, ring, legacy = "src/outbox.zig", "src/ring.zig", "src/legacy_outbox.zig"
    conv = conversation(
        call("c1", "read_files", files=[{"name": outbox}]),
        result("c1", '{"text_files_success": {"files": []}}'),
        call("c2", "edit_files", summary="Pass the tenant through",
             diffs=[{"file_path": outbox, "search": "a", "replace": "b"},
                    {"file_path": outbox, "search": "c", "replace": "d"}]),
        result("c2", '{"success": {}}'),
        call("c3", "edit_files", summary="Add the ring buffer",
             new_files=[{"file_path": ring, "content": "const std = @import(\"std\");"}]),
        result("c3", '{"success": {}}'),
        call("c4", "edit_files", summary="Drop the legacy outbox",
             deleted_files=[{"file_path": legacy}]),
        result("c4", '{"success": {}}'),
    )  # fmt: skip
    found = extract_probes(conv)
    facts = {f.probe[0]: f.category for f in found if f.category.startswith("file_")}
    assert facts == {outbox: "file_modified", ring: "file_created", legacy: "file_deleted"}


def test_kiros_file_tools_and_their_target_file_argument_are_read() -> None:
    # Kiro's agent edits with `strReplace` {path, oldStr, newStr}, writes with `fsWrite`
    # {path, text} and names the file it deletes in `targetFile`.
    conv = conversation(
        call("c1", "readFile", path="src/outbox.jl", explanation="Reading it first."),
        result("c1", "outbox_limit = 4"),
        call("c2", "strReplace", path="src/outbox.jl", oldStr="outbox_limit = 4",
             newStr="outbox_limit = settings.outbox_limit"),
        result("c2", "Replaced text in src/outbox.jl"),
        call("c3", "fsWrite", path="src/outbox_store.jl", text="module Store end"),
        result("c3", "Wrote 1 lines to src/outbox_store.jl"),
        call("c4", "deleteFile", targetFile="src/legacy_outbox.jl",
             explanation="No callers are left."),
        result("c4", "Deleted src/legacy_outbox.jl"),
    )  # fmt: skip
    found = extract_probes(conv)
    facts = {f.probe[0]: f.category for f in found if f.category.startswith("file_")}
    assert facts == {
        "src/outbox.jl": "file_modified",
        "src/outbox_store.jl": "file_created",
        "src/legacy_outbox.jl": "file_deleted",
    }


def test_writing_a_file_seen_before_modifies_it_and_unseen_creates_it() -> None:
    conv = conversation(
        call("c1", "read_file", path="src/app.py"),
        result("c1", "1: import os"),
        call("c2", "write_file", path="src/app.py", content="import sys"),
        result("c2", "ok"),
        call("c3", "write_file", path="src/fresh.py", content="x = 1"),
        result("c3", "ok"),
        call("c4", "delete_file", path="src/fresh.py"),
        result("c4", "ok"),
    )
    facts = extract_probes(conv)
    assert [(f.category, f.probe, f.text) for f in facts] == [
        ("file_modified", ("src/app.py",), "The agent modified src/app.py."),
        (
            "file_deleted",
            ("src/fresh.py",),
            "The agent deleted src/fresh.py (a file it had created itself).",
        ),
    ]
    assert facts[1].planted_in == (6, 8)


def test_an_edit_the_environment_rejected_is_not_a_modification() -> None:
    history = [
        {"role": "system", "content": "SETTING: an autonomous programmer.", "agent": "primary"},
        swe_task("Fix it.\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"),
        swe_step("open lib/core.py"),
        swe_obs("[File: /repo/lib/core.py (10 lines total)]", "/repo/lib/core.py"),
        swe_step("edit 2:2\n  bad indent\nend_of_edit"),
        swe_obs(
            "Your proposed edit has introduced new syntax error(s).\nE999 IndentationError",
            "/repo/lib/core.py",
        ),
        swe_step("open lib/other.py"),
        swe_obs("[File: /repo/lib/other.py (3 lines total)]", "/repo/lib/other.py"),
        swe_step("edit 1:1\nx = 2\nend_of_edit"),
        swe_obs("[File: /repo/lib/other.py (3 lines total)]\nFile updated.", "/repo/lib/other.py"),
        swe_step("submit"),
    ]
    [session] = _load_traj(history)
    assert by_category(session.facts) == {"file_modified": [("lib/other.py",)]}


def _load_traj(history: list[dict[str, Any]], **top: Any) -> list[EvalSession]:
    from compaction.dialects import TRAJ

    conv = TRAJ.decode(traj(history, **top))
    return [EvalSession("t", conv, tuple(extract_probes(conv)), "test")]


def test_last_failing_test_is_the_last_one_not_passing_since() -> None:
    conv = conversation(
        call("c1", "bash", command="pytest -q"),
        result(
            "c1",
            "FAILED tests/test_a.py::test_one - assert 1 == 2\n"
            "FAILED tests/test_b.py::test_two - KeyError: 'k'\n"
            "2 failed, 5 passed in 0.3s",
        ),
        call("c2", "bash", command="pytest -q tests/test_b.py"),
        result("c2", "=========== 3 passed in 0.1s ===========", is_error=False),
    )
    errors = [f for f in extract_probes(conv) if f.category.startswith("error")]
    # test_b passed in a run that named its file; test_a was not in that run.
    assert [(f.category, f.probe, f.required) for f in errors] == [
        ("error_open", ("tests/test_a.py::test_one",), True)
    ]
    assert errors[0].planted_in == (3,)


def test_a_whole_suite_run_without_failures_resolves_every_test() -> None:
    conv = conversation(
        call("c1", "bash", command="python -m pytest tests/test_a.py -x"),
        result("c1", "FAILED tests/test_a.py::test_one - assert 1 == 2\n1 failed in 0.1s"),
        call("c2", "bash", command="python -m pytest"),
        result("c2", "============ 12 passed in 1.2s ============"),
    )
    errors = [f for f in extract_probes(conv) if f.category.startswith("error")]
    assert [(f.category, f.probe, f.required, f.critical) for f in errors] == [
        ("error_resolved", ("tests/test_a.py::test_one",), False, False)
    ]


def test_verbose_and_unittest_outputs_are_read() -> None:
    conv = conversation(
        call("c1", "bash", command="pytest -v"),
        result(
            "c1",
            "tests/test_a.py::test_one FAILED  [ 50%]\ntests/test_a.py::test_two PASSED  [100%]",
        ),
        call("c2", "bash", command="pytest -v tests/test_a.py::test_one"),
        result("c2", "tests/test_a.py::test_one PASSED  [100%]\n"),
        call("c3", "bash", command="python -m unittest"),
        result(
            "c3",
            "FAIL: test_parse (tests.test_io.ParserTest)\n----\nRan 4 tests in 0.01s\n\n"
            "FAILED (failures=1)",
        ),
    )
    errors = [f for f in extract_probes(conv) if f.category.startswith("error")]
    assert [(f.category, f.probe) for f in errors] == [
        ("error_open", ("test_parse (tests.test_io.ParserTest)",))
    ]


def test_files_of_a_final_git_diff_are_facts() -> None:
    diff = (
        "diff --git a/src/a.py b/src/a.py\nindex 1..2 100644\n--- a/src/a.py\n+++ b/src/a.py\n"
        "@@ -1 +1 @@\n-x\n+y\n"
        "diff --git a/docs/new.md b/docs/new.md\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/docs/new.md\n@@ -0,0 +1 @@\n+hi\n"
    )
    conv = conversation(call("c1", "bash", command="git diff"), result("c1", diff))
    files = [(f.category, f.probe, f.text) for f in extract_probes(conv) if "file" in f.category]
    assert files == [
        (
            "file_modified",
            ("src/a.py",),
            "The agent modified src/a.py; the final diff includes it.",
        ),
        (
            "file_created",
            ("docs/new.md",),
            "The agent created docs/new.md; the final diff includes it.",
        ),
    ]


def test_command_probes_are_the_escaping_safe_pieces_of_its_first_line() -> None:
    command = 'grep -rn "def main" src/ | head -5\nsecond line "ignored"'
    conv = conversation(call("c1", "bash", command=command), result("c1", "src/x.py:1:def main"))
    [fact] = [f for f in extract_probes(conv) if f.category == "command"]
    assert fact.probe == ("grep -rn", "def main", "src/ | head -5")
    # The pieces survive JSON escaping: they are in the raw wire payload as well as the text.
    wire = json.dumps(OPENAI.encode(conv))
    assert all(p in wire for p in fact.probe)
    assert fact.cued is False


def test_short_commands_and_facts_already_in_the_system_prompt_are_dropped() -> None:
    conv = Conversation(
        (
            Message.text_message("system", "Always run `make check` before you finish."),
            Message.text_message("user", "Tidy up."),
            call("c1", "bash", command="ls"),
            result("c1", "a b"),
            call("c2", "bash", command="make check"),
            result("c2", "ok"),
            call("c3", "bash", command="make lint"),
            result("c3", "ok"),
        ),
        dialect="openai",
    )
    assert [f.probe for f in extract_probes(conv)] == [("make lint",)]


def test_commands_repeated_are_one_fact_with_every_place() -> None:
    conv = conversation(
        call("c1", "bash", command="pytest -q"),
        result("c1", "ok"),
        call("c2", "bash", command="pytest -q"),
        result("c2", "ok"),
    )
    [fact] = extract_probes(conv)
    assert (fact.id, fact.probe, fact.planted_in) == ("command-1", ("pytest -q",), (2, 4))


def test_depth_follows_the_first_evidence_by_characters() -> None:
    pad = "y" * 3000
    conv = conversation(
        call("c1", "bash", command="make first"),
        result("c1", pad),
        call("c2", "bash", command="make second"),
        result("c2", pad),
        call("c3", "bash", command="make third"),
        result("c3", pad),
    )
    assert [(f.probe, f.depth) for f in action_facts(extract_probes(conv))] == [
        (("make first",), "early"),
        (("make second",), "middle"),
        (("make third",), "late"),
    ]


def test_extraction_is_deterministic_and_ignores_plain_chat() -> None:
    chat = conversation(Message.text_message("assistant", "I would edit main.py and run tests."))
    assert action_facts(extract_probes(chat)) == []
    conv = conversation(call("c1", "bash", command="sed -i 's/a/b/' m.py"), result("c1", ""))
    assert extract_probes(conv) == extract_probes(conv)


# --- the real trajectories ----------------------------------------------------------------------


@cache
def real_sessions() -> dict[str, EvalSession]:
    return {s.name: s for s in load_dataset(DATA)}


@needs_data
def test_every_real_trajectory_loads_with_extracted_uncued_facts() -> None:
    sessions = real_sessions()
    assert len(sessions) == len(list(DATA.glob("*.traj")))
    assert list(sessions) == sorted(sessions)
    for session in sessions.values():
        assert session.tags == {"format": "traj", "probes": "extracted"}
        assert session.facts, session.name
        assert all(not f.cued and f.category in CATEGORIES for f in session.facts)
        assert len({f.id for f in session.facts}) == len(session.facts)


@needs_data
def test_every_extracted_probe_is_a_substring_of_the_session_as_scored() -> None:
    for session in real_sessions().values():
        payload = OPENAI.encode(session.conversation)
        text = text_of_payload(payload).casefold()
        wire = json.dumps(payload).casefold()
        own = session_text(session.conversation).casefold()
        for fact in session.facts:
            for probe in fact.probe:
                needle = probe.casefold()
                assert needle in text and needle in wire and needle in own, (session.name, fact)


@needs_data
def test_marshmallow_run_files_and_commands_match_a_hand_reading() -> None:
    # Read by hand: the agent creates reproduce.py, edits it, fixes fields.py line 1475 after a
    # rejected first attempt, runs the script twice, deletes it and submits.
    for name in (
        "marshmallow-1867__default__install_from_source.traj",
        "marshmallow-1867__function_calling__install-1.traj",
        "marshmallow-1867__xml_sys-env_cursors_window100.traj",
    ):
        facts = by_category(real_sessions()[name].facts)
        assert facts["file_modified"] == [("src/marshmallow/fields.py",)], name
        assert facts["file_deleted"] == [("reproduce.py",)], name
        assert "file_created" not in facts, name
        assert ("python reproduce.py",) in facts["command"], name
        assert ("rm reproduce.py",) in facts["command"], name
        assert not any(
            p[0].startswith(("open ", "edit", "create ", "submit")) for p in facts["command"]
        )
    install = by_category(
        real_sessions()["marshmallow-1867__default__install_from_source.traj"].facts
    )
    assert ("pip install -e .[dev]",) in install["command"]


@needs_data
def test_ctf_runs_created_files_and_a_rejected_edit_match_a_hand_reading() -> None:
    sessions = real_sessions()
    baby = by_category(sessions["crypto__BabyEncryption.traj"].facts)
    # chall.py was opened and an edit tried, but the environment rejected it (syntax error).
    assert baby == {"file_created": [("decrypt.py",)], "command": [("python decrypt.py",)]}
    capsule = by_category(sessions["crypto__BabyTimeCapsule.traj"].facts)
    # `RsaCtfTool.py --createpub … > pub1.pub`: written by redirection, never seen before.
    assert capsule["file_created"] == [("pub1.pub",), ("pub2.pub",), ("pub3.pub",)]
    assert len(capsule["command"]) == 4
    katy = by_category(sessions["crypto__katy.traj"].facts)
    assert katy["file_created"] == [
        ("retrieve_random_numbers.py",),
        ("get_seed.py",),
        ("recover_flag.py",),
    ]


@needs_data
def test_function_calling_edit_acts_on_the_open_file() -> None:
    facts = by_category(real_sessions()["demonstrations__function_calling_simple.traj"].facts)
    assert facts == {
        "file_modified": [("tests/missing_colon.py",)],
        "command": [("python tests/missing_colon.py",)],
    }
    pydicom = by_category(
        real_sessions()["swe-bench-dev-easy_first_only__default__pydicom__pydicom-1458.traj"].facts
    )
    assert pydicom["file_modified"] == [("pydicom/pixel_data_handlers/numpy_handler.py",)]
    assert pydicom["file_deleted"] == [("reproduce_bug.py",)]


@needs_data
def test_real_trajectories_report_failing_tests_only_where_a_test_failed() -> None:
    for session in real_sessions().values():
        text = session_text(session.conversation)
        for fact in action_facts(session.facts):
            if fact.category in ("error_open", "error_resolved"):
                assert f"FAILED {fact.probe[0]}" in text or f"FAIL: {fact.probe[0]}" in text


@needs_data
def test_a_real_trajectory_with_a_pytest_run_appended_reports_the_failing_test(
    tmp_path: Path,
) -> None:
    source = DATA / "marshmallow-1867__default__install_from_source.traj"
    data = json.loads(source.read_text(encoding="utf-8"))
    cwd = "/marshmallow-code__marshmallow"
    data["history"] += [
        swe_step("pytest tests/test_fields.py -q"),
        swe_obs(
            "FAILED tests/test_fields.py::TestTimeDelta::test_round - assert 344 == 345\n"
            "1 failed, 90 passed in 1.1s",
            "/marshmallow-code__marshmallow/src/marshmallow/fields.py",
            cwd,
        ),
    ]
    path = write_json(tmp_path / "extended.traj", data)
    [session] = load_dataset(path)
    errors = [f for f in session.facts if f.category == "error_open"]
    assert [f.probe for f in errors] == [("tests/test_fields.py::TestTimeDelta::test_round",)]
    assert errors[0].depth == "late"


@needs_data
def test_real_dataset_counts_are_stable() -> None:
    counts = Counter(f.category for s in real_sessions().values() for f in action_facts(s.facts))
    assert counts == {"command": 75, "file_modified": 13, "file_created": 10, "file_deleted": 9}


def test_a_copied_trajectory_directory_loads_the_same(tmp_path: Path) -> None:
    if not DATA.is_dir():
        pytest.skip("shared trajectories not present")
    for name in ("crypto__katy.traj", "rev__rock.traj"):
        shutil.copy(DATA / name, tmp_path / name)
    assert [s.facts for s in load_dataset(tmp_path)] == [
        real_sessions()[n].facts for n in ("crypto__katy.traj", "rev__rock.traj")
    ]


def test_anthropic_sessions_keep_probes_in_the_wire_payload(tmp_path: Path) -> None:
    path = write_json(tmp_path / "a.json", anthropic_request())
    [session] = load_dataset(path)
    wire = json.dumps(ANTHROPIC.encode(session.conversation))
    assert session.facts
    assert all(p in wire for f in session.facts for p in f.probe)


def test_editor_tools_change_files_by_their_command_not_their_name() -> None:
    editor = "str_replace_based_edit_tool"
    conv = conversation(
        call("c1", editor, command="view", path="/repo/app.py"),
        result("c1", "1: x = 1"),
        call("c2", editor, command="create", path="/repo/notes.md", file_text="hi"),
        result("c2", "File created"),
        call("c3", editor, command="str_replace", path="/repo/app.py", old_str="1", new_str="2"),
        result("c3", "The file /repo/app.py has been edited."),
        call("c4", "apply_patch", input="*** Begin Patch\n*** Add File: lib/new.py\n+x\n"),
        result("c4", "Done"),
    )
    assert [(f.category, f.probe) for f in extract_probes(conv)] == [
        ("file_created", ("/repo/notes.md",)),
        ("file_modified", ("/repo/app.py",)),
        ("file_created", ("lib/new.py",)),
    ]


def test_a_tool_named_for_running_commands_runs_its_command() -> None:
    # Composio's `SHELLTOOL_EXEC_COMMAND {cmd, shell_id}`: no known shell tool's name, but
    # its name says it runs a command and `cmd` holds it.
    conversation = Conversation(
        [
            Message.text_message("user", "Remove the legacy module."),
            Message(
                "assistant",
                (
                    ToolCallPart(
                        "c1",
                        "SHELLTOOL_EXEC_COMMAND",
                        json.dumps({"cmd": "git rm src/Legacy.hs", "shell_id": "a1b2c3"}),
                    ),
                ),
            ),
            Message("tool", (ToolResultPart("c1", "rm 'src/Legacy.hs'"),)),
            Message.text_message("assistant", "Removed."),
        ]
    )
    probes = {(f.category, f.probe[0]) for f in extract_probes(conversation)}
    assert ("file_deleted", "src/Legacy.hs") in probes


def test_a_tool_block_the_system_answers_is_an_action() -> None:
    # gptme writes its tools as fenced blocks and answers them in a `<system>` user turn.
    conversation = Conversation(
        [
            Message.text_message("user", "Drop the legacy module, then save the new one."),
            Message.text_message("assistant", "Removing it.\n```shell\ngit rm src/legacy.zig\n```"),
            Message.text_message("user", "<system>Ran command: `git rm src/legacy.zig`</system>"),
            Message.text_message(
                "assistant", "Writing it.\n```save /home/dev/t/src/outbox.zig\nconst a = 1;\n```"
            ),
            Message.text_message("user", "<system>Saved to /home/dev/t/src/outbox.zig</system>"),
            Message.text_message("assistant", "Done.\n```shell\nrm -rf build\n```"),
            Message.text_message("user", "Don't run that."),
        ]
    )
    probes = {(f.category, f.probe[0]) for f in extract_probes(conversation)}
    assert ("file_deleted", "src/legacy.zig") in probes
    assert any(c == "file_created" and p.endswith("src/outbox.zig") for c, p in probes)
    # A block the user answered, not the system, did not run.
    assert not any("rm -rf build" in p for _, p in probes)


def test_a_tool_use_written_as_xml_and_its_result_are_an_action() -> None:
    # Cline's classic protocol: the use at the end of the assistant's text, its result in
    # the next user turn; an MCP tool through `use_mcp_tool` with JSON arguments.
    def use(tool: str, arguments: dict[str, Any]) -> Message:
        return Message.text_message(
            "assistant",
            "Next.\n\n<use_mcp_tool>\n<server_name>s</server_name>\n"
            f"<tool_name>{tool}</tool_name>\n<arguments>\n{json.dumps(arguments)}\n"
            "</arguments>\n</use_mcp_tool>",
        )

    conversation = Conversation(
        [
            Message.text_message("user", "<task>\nFix the relay.\n</task>"),
            use("write_file", {"path": "/w/private/retry.rkt", "content": "x"}),
            Message.text_message(
                "user", "[use_mcp_tool for 's'] Result:\nSuccessfully wrote to /w/private/retry.rkt"
            ),
            use("run_process", {"command_line": "git rm private/old.rkt"}),
            Message.text_message("user", "[use_mcp_tool for 's'] Result:\nrm 'private/old.rkt'"),
            use("edit_file", {"path": "/w/private/a.rkt", "edits": []}),
            Message.text_message("user", "Not that file."),  # no result: it did not run
        ]
    )
    probes = {(f.category, f.probe[0]) for f in extract_probes(conversation)}
    assert any(c == "file_created" and p.endswith("private/retry.rkt") for c, p in probes)
    assert ("file_deleted", "private/old.rkt") in probes
    assert ("command", "git rm private/old.rkt") in probes
    assert not any(p.endswith("a.rkt") for _, p in probes)


def test_tool_calls_written_as_json_in_the_text_and_their_results_are_actions() -> None:
    # Codebuff's protocol: each call a JSON element of the reply, each result a
    # `<tool_result>` element of the next user turn.
    def calls(*items: dict[str, Any]) -> Message:
        blocks = [f"<codebuff_tool_call>\n{json.dumps(i)}\n</codebuff_tool_call>" for i in items]
        return Message.text_message("assistant", "On it.\n\n" + "\n\n".join(blocks))

    def results(*items: tuple[str, Any]) -> Message:
        parts = [
            f"<tool_result>\n{json.dumps({'toolName': n, 'toolCallId': 'x', 'output': o})}\n"
            "</tool_result>"
            for n, o in items
        ]
        return Message.text_message("user", "\n".join(parts))

    conversation = Conversation(
        [
            Message.text_message("user", "<user_message>fix the cart</user_message>"),
            calls(
                {"cb_tool_name": "str_replace", "path": "src/cart.ts", "replacements": []},
                {
                    "cb_tool_name": "run_terminal_command",
                    "command": "pnpm vitest run",
                    "cb_easp": True,
                },
            ),
            results(
                ("str_replace", {"file": "src/cart.ts", "message": "Updated file"}),
                (
                    "run_terminal_command",
                    {
                        "stdout": "FAILED src/cart.test.ts > rounds\nTypeError: x is undefined",
                        "exitCode": 1,
                    },
                ),
            ),
        ]
    )
    probes = {(f.category, f.probe[0]) for f in extract_probes(conversation)}
    assert ("file_modified", "src/cart.ts") in probes
    assert ("command", "pnpm vitest run") in probes
    assert any(c == "error_open" and "x is undefined" in p for c, p in probes)


def test_a_file_tool_naming_its_operation_deletes_moves_and_copies() -> None:
    def op(call_id: str, **arguments: Any) -> Message:
        return Message("assistant", (ToolCallPart(call_id, "file_op", json.dumps(arguments)),))

    def done(call_id: str) -> Message:
        return Message("tool", (ToolResultPart(call_id, (TextPart("ok"),)),))

    conversation = Conversation(
        [
            Message.text_message("user", "Tidy the scripts."),
            op("1", operation="delete", path="scripts/old_sync.ts"),
            done("1"),
            op("2", operation="move", path="scripts/plan.ts", destination="src/plan.ts"),
            done("2"),
            op("3", operation="mkdir", path="src/vans"),
            done("3"),
        ]
    )
    probes = {(f.category, f.probe[0]) for f in extract_probes(conversation)}
    assert ("file_deleted", "scripts/old_sync.ts") in probes
    assert ("file_deleted", "scripts/plan.ts") in probes
    assert any(c == "file_created" and p.endswith("src/plan.ts") for c, p in probes)
    assert not any("src/vans" in p for _, p in probes)


def test_codeact_blocks_an_observation_answers_are_actions() -> None:
    observed = "OBSERVATION:\n[File updated (edited at line 3).]\n[Command finished]"
    conversation = Conversation(
        [
            Message.text_message("user", "Add the flag."),
            Message.text_message(
                "assistant",
                "Editing.\n<execute_ipython>\nedit_file_by_replace(\n    '/w/src/cli.rs',\n"
                "    to_replace='a',\n    new_content='b',\n)\n</execute_ipython>",
            ),
            Message.text_message("user", observed),
            Message.text_message(
                "assistant", "Dropping it.\n<execute_bash>\nrm src/pool.rs\n</execute_bash>"
            ),
            Message.text_message("user", observed),
            Message.text_message(
                "assistant", "<execute_ipython>\ncreate_file('/w/x.rs')\n</execute_ipython>"
            ),
            Message.text_message("user", "Stop, don't."),  # not an observation: nothing ran
        ]
    )
    probes = {(f.category, f.probe[0]) for f in extract_probes(conversation)}
    assert any(c == "file_modified" and p.endswith("src/cli.rs") for c, p in probes), probes
    assert ("file_deleted", "src/pool.rs") in probes
    assert not any(p.endswith("x.rs") for _, p in probes)
