"""The generated families (`compaction.eval.families`): their size, their facts, their tools,
and that the ruler can read them."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from functools import cache
from typing import Any

import pytest

from compaction.dialects import ANTHROPIC, OPENAI
from compaction.eval.datasets import extract_probes
from compaction.eval.families import FAMILIES, family_sessions
from compaction.eval.families._base import Voice
from compaction.eval.metrics import conversation_text
from compaction.eval.probes import CUE_WORDS, score
from compaction.eval.sessions import EvalSession
from compaction.tokens import ConversationCounter

SEEDS = (7, 8)


@cache
def sessions(family: str) -> tuple[EvalSession, ...]:
    return tuple(family_sessions(family, SEEDS, 32_000))


@cache
def counter() -> ConversationCounter:
    return ConversationCounter.for_model("gpt-4o", provider="openai")


def test_there_are_at_least_three_families() -> None:
    assert len(FAMILIES) >= 3


@pytest.mark.parametrize("family", list(FAMILIES))
def test_sessions_are_25k_to_40k_tokens_and_valid_in_both_dialects(family: str) -> None:
    for session in sessions(family):
        tokens = counter().total(session.conversation)
        assert 25_000 <= tokens <= 40_000, (session.name, tokens)
        assert OPENAI.validate(session.conversation) == []
        converted = ANTHROPIC.decode(ANTHROPIC.encode(session.conversation))
        assert ANTHROPIC.validate(converted) == []


@pytest.mark.parametrize("family", list(FAMILIES))
def test_same_seed_same_session_other_seed_other_session(family: str) -> None:
    [again] = family_sessions(family, SEEDS[:1], 32_000)
    first, second = sessions(family)
    assert OPENAI.encode(again.conversation) == OPENAI.encode(first.conversation)
    assert again.facts == first.facts
    assert conversation_text(first.conversation) != conversation_text(second.conversation)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_facts_cover_the_story_uncued_with_stale_forms_in_the_session(family: str) -> None:
    for session in sessions(family):
        text = conversation_text(session.conversation)
        counts = Counter(f.category for f in session.facts)
        assert {"constraint", "file_modified", "decision", "todo", "changed_value"} <= set(counts)
        assert {"error_open", "error_resolved", "test_status", "identifier"} <= set(counts)
        assert counts["last_message"] == 1
        for fact in session.facts:
            assert not fact.cued
            assert all(cue not in fact.probe[0] for cue in CUE_WORDS)
            for stale in fact.stale:
                assert stale.casefold() in text.casefold(), (fact.id, stale)
        # Superseded things are planted: values changed, a plan reversed, to-dos done.
        assert sum(bool(f.stale) for f in session.facts) >= 4
        assert any(f.category == "todo" and not f.required for f in session.facts)
        # The whole session keeps every fact and states nothing stale.
        marks = score(session.facts, text)
        assert marks.overall.kept == marks.overall.total
        assert marks.stale_as_current == []


def test_each_family_speaks_its_agents_tools() -> None:
    def calls(family: str) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for message in sessions(family)[0].conversation.messages:
            for call in message.tool_calls:
                found.setdefault(call.name, set()).update(json.loads(call.arguments))
        return found

    cc = calls("cc-style")
    assert {"Bash", "Read", "Edit", "Write", "TodoWrite"} <= set(cc)
    assert "file_path" in cc["Edit"] and "todos" in cc["TodoWrite"]
    codex = calls("codex-style")
    assert {"shell", "apply_patch", "update_plan"} <= set(codex)
    assert "plan" in codex["update_plan"]
    patches = conversation_text(sessions("codex-style")[0].conversation)
    assert "*** Update File:" in patches and "*** Add File:" in patches
    cline = calls("cline-style")
    assert {"execute_command", "read_file", "write_to_file", "replace_in_file"} <= set(cline)
    assert "absolutePath" in cline["write_to_file"] and "attempt_completion" in cline
    gemini = calls("gemini-style")
    assert {"run_shell_command", "read_file", "write_file", "replace", "write_todos"} <= set(gemini)
    assert {"glob", "search_file_content", "edit_file", "move_file"} <= set(gemini)
    assert "absolute_path" in gemini["read_file"] and "description" in gemini["run_shell_command"]
    assert {"file_path", "old_string", "new_string"} <= gemini["replace"]
    assert {"path", "edits"} <= gemini["edit_file"]
    assert {"source", "destination"} <= gemini["move_file"]
    goose = calls("goose-style")
    assert {"developer__shell", "developer__text_editor", "todo__write", "git__git_log"} <= set(
        goose
    )
    assert {"command", "path", "old_str", "new_str", "file_text"} <= goose["developer__text_editor"]
    assert goose["developer__shell"] == {"command"} and goose["todo__write"] == {"content"}
    assert {"repo_path", "max_count"} <= goose["git__git_log"]
    cont = calls("continue-style")
    builtins = {"builtin_read_file", "builtin_create_new_file", "builtin_edit_existing_file"}
    builtins |= {"builtin_run_terminal_command", "builtin_grep_search"}
    assert builtins <= set(cont) and set(cont) <= builtins | {
        "builtin_ls",
        "builtin_file_glob_search",
    }
    assert cont["builtin_read_file"] == {"filepath"}
    assert cont["builtin_create_new_file"] == {"filepath", "contents"}
    assert cont["builtin_edit_existing_file"] == {"filepath", "changes"}
    assert "command" in cont["builtin_run_terminal_command"]
    assert cont["builtin_grep_search"] == {"query"}
    cursor = calls("cursor-style")
    tools = {"run_terminal_cmd", "read_file", "edit_file", "delete_file", "todo_write"}
    assert tools <= set(cursor) and set(cursor) <= tools | {
        "reapply",
        "grep_search",
        "file_search",
        "list_dir",
    }
    assert cursor["run_terminal_cmd"] == {"command", "is_background", "explanation"}
    assert {"target_file", "should_read_entire_file", "start_line_one_indexed"} <= cursor[
        "read_file"
    ]
    assert "end_line_one_indexed_inclusive" in cursor["read_file"]
    assert cursor["edit_file"] == {"target_file", "instructions", "code_edit"}
    assert cursor["delete_file"] == {"target_file", "explanation"}
    assert cursor["todo_write"] == {"merge", "todos"}
    zed = calls("zed-style")
    assert set(zed) == {
        "terminal", "read_file", "edit_file", "delete_path", "move_path", "grep",
        "find_path", "list_directory", "diagnostics", "thinking",
    }  # fmt: skip
    assert zed["terminal"] == {"command", "cd"}
    assert zed["read_file"] == {"path", "start_line", "end_line"}
    assert zed["edit_file"] == {"display_description", "path", "mode"}
    assert zed["move_path"] == {"source_path", "destination_path"}
    assert zed["grep"] == {"regex", "include_pattern"} and zed["find_path"] == {"glob"}
    assert zed["delete_path"] == zed["list_directory"] == zed["diagnostics"] == {"path"}
    assert zed["thinking"] == {"content"}
    crush = calls("crush-style")
    assert set(crush) == {
        "bash", "view", "edit", "multiedit", "write", "grep", "glob", "ls", "todos",
        "job_output",
    }  # fmt: skip
    assert crush["bash"] == {"description", "command", "run_in_background"}
    assert crush["view"] == {"file_path", "offset", "limit"}
    assert crush["edit"] == {"file_path", "old_string", "new_string"}
    assert crush["multiedit"] == {"file_path", "edits"}
    assert crush["write"] == {"file_path", "content"}
    assert crush["grep"] == {"pattern", "path", "include"}
    assert crush["glob"] == {"pattern", "path"} and crush["ls"] == {"path", "ignore"}
    assert crush["todos"] == {"todos"} and crush["job_output"] == {"shell_id", "wait"}
    windsurf = calls("windsurf-style")
    assert set(windsurf) == {
        "run_command", "command_status", "view_file", "write_to_file", "replace_file_content",
        "grep_search", "find_by_name", "list_dir",
    }  # fmt: skip
    # Every Cascade tool takes a `toolSummary`, given first.
    assert all("toolSummary" in names for names in windsurf.values())
    assert windsurf["run_command"] == {
        "toolSummary", "CommandLine", "Cwd", "Blocking", "SafeToAutoRun", "WaitMsBeforeAsync",
    }  # fmt: skip
    assert windsurf["command_status"] == {
        "toolSummary", "CommandId", "OutputCharacterCount", "WaitDurationSeconds",
    }  # fmt: skip
    assert windsurf["view_file"] == {
        "toolSummary", "AbsolutePath", "StartLine", "EndLine", "IncludeSummaryOfOtherLines",
    }  # fmt: skip
    assert windsurf["write_to_file"] == {"toolSummary", "TargetFile", "CodeContent", "EmptyFile"}
    assert windsurf["replace_file_content"] == {
        "toolSummary", "TargetFile", "CodeMarkdownLanguage", "Instruction", "ReplacementChunks",
    }  # fmt: skip
    assert windsurf["grep_search"] == {
        "toolSummary", "SearchPath", "Query", "MatchPerLine", "Includes", "IsRegex",
        "CaseInsensitive",
    }  # fmt: skip
    assert windsurf["find_by_name"] == {"toolSummary", "SearchDirectory", "Pattern", "Type"}
    assert windsurf["list_dir"] == {"toolSummary", "DirectoryPath"}
    for session in sessions("windsurf-style"):
        for arguments, _ in _calls(session, "replace_file_content"):
            for chunk in arguments["ReplacementChunks"]:
                assert set(chunk) == {"AllowMultiple", "TargetContent", "ReplacementContent"}
    amp = calls("amp-style")
    # Listings draw glob or list_directory: over both seeds each shows up.
    for message in sessions("amp-style")[1].conversation.messages:
        for call in message.tool_calls:
            amp.setdefault(call.name, set()).update(json.loads(call.arguments))
    assert set(amp) == {
        "Bash", "Read", "edit_file", "create_file", "undo_edit", "format_file", "Grep", "glob",
        "list_directory", "todo_write", "todo_read", "Task", "mermaid",
    }  # fmt: skip
    assert amp["Bash"] == {"cmd", "cwd"} and amp["Read"] == {"path", "read_range"}
    assert amp["edit_file"] == {"path", "old_str", "new_str", "replace_all"}
    assert amp["create_file"] == {"path", "content"}
    assert amp["undo_edit"] == amp["format_file"] == amp["list_directory"] == {"path"}
    assert amp["Grep"] == {"pattern", "path"} and amp["glob"] == {"filePattern"}
    assert amp["todo_write"] == {"todos"} and amp["todo_read"] == set()
    assert amp["Task"] == {"prompt", "description"} and amp["mermaid"] == {"code"}
    for session in sessions("amp-style"):
        for arguments, _ in _calls(session, "todo_write"):
            for item in arguments["todos"]:
                assert set(item) == {"id", "content", "status", "priority"}
    copilot = calls("copilot-style")
    tools = {
        "run_in_terminal", "get_terminal_output", "read_file", "create_file",
        "replace_string_in_file", "insert_edit_into_file", "get_errors", "runTests",
        "grep_search", "manage_todo_list",
    }  # fmt: skip
    assert tools <= set(copilot) <= tools | {"file_search", "list_dir"}
    assert copilot["run_in_terminal"] == {"command", "explanation", "isBackground"}
    assert copilot["get_terminal_output"] == {"id"}
    assert copilot["read_file"] == {"filePath", "startLine", "endLine"}
    assert copilot["create_file"] == {"filePath", "content"}
    assert copilot["replace_string_in_file"] == {"filePath", "oldString", "newString"}
    assert copilot["insert_edit_into_file"] == {"explanation", "filePath", "code"}
    assert copilot["get_errors"] == {"filePaths"} and copilot["runTests"] == {"files"}
    assert copilot["grep_search"] == {"query", "isRegexp", "includePattern"}
    assert copilot.get("file_search", {"query"}) == {"query"}
    assert copilot.get("list_dir", {"path"}) == {"path"}
    assert copilot["manage_todo_list"] == {"todoList", "operation"}
    for session in sessions("copilot-style"):
        for arguments, _ in _calls(session, "manage_todo_list"):
            assert arguments["operation"] == "write"
            for item in arguments["todoList"]:
                assert set(item) == {"id", "title", "description", "status"}


def _editor_commands(session: EvalSession) -> list[str]:
    return [
        json.loads(call.arguments)["command"]
        for message in session.conversation.messages
        for call in message.tool_calls
        if call.name == "developer__text_editor"
    ]


def test_goose_style_edits_views_writes_and_undoes_through_one_editor_tool() -> None:
    for session in sessions("goose-style"):
        commands = _editor_commands(session)
        assert {"view", "write", "str_replace", "undo_edit"} <= set(commands)
        # The one undone edit is made again: every edit the story planted stands.
        assert commands.count("undo_edit") == 1
        text = conversation_text(session.conversation)
        assert "Undid the last edit" in text and "BUILD FAILED in" in text
        # Goose's shell has no exit-status footer: only the output tells a failure.
        assert "exit code" not in text.casefold()


def test_crush_style_speaks_crushs_tool_results() -> None:
    from compaction.eval.families.crush import ROOT

    for session in sessions("crush-style"):
        runs = _calls(session, "bash")
        # Output ends on the working directory; nothing printed reads "no output".
        for arguments, result in runs:
            background = result.startswith("Background shell started with ID: ")
            assert background == bool(arguments.get("run_in_background"))
            assert background or result == "no output" or result.endswith(f"\n\n<cwd>{ROOT}</cwd>")
            assert 0 < len(arguments["description"]) <= 30
        builds = [r for a, r in runs if a["command"] == "mvn -q compile"]
        assert len(builds) == 2 and builds[1] == "no output"  # `mvn -q` is silent on success
        assert "[ERROR] COMPILATION ERROR" in builds[0]
        assert "\nexit status 1\nExit code 1\n\n<cwd>" in builds[0]
        tests = [r for a, r in runs if a["command"] == "mvn test"]
        assert len(tests) == 2 and all("[INFO] BUILD FAILURE" in r for r in tests)
        # Surefire's per-class counts add up to the summary line it prints.
        for result in tests:
            per_class = re.findall(r"Tests run: (\d+), Failures: (\d+), Errors: 0, Skipped: 0, "
                                   r"Time elapsed", result)  # fmt: skip
            [(run, failed)] = re.findall(r"\[ERROR\] Tests run: (\d+), Failures: (\d+), "
                                         r"Errors: 0, Skipped: 0\n", result)  # fmt: skip
            assert sum(int(r) for r, _ in per_class) == int(run)
            assert sum(int(f) for _, f in per_class) == int(failed)
            assert result.count("[ERROR]   ") == int(failed)
        # The long JMH run goes to the background and is read back by its shell id.
        [(started, note)] = [(a, r) for a, r in runs if a.get("run_in_background")]
        [(job, output)] = _calls(session, "job_output")
        assert note.startswith(f"Background shell started with ID: {job['shell_id']}\n")
        assert int(job["shell_id"], 16) == runs.index((started, note)) + 1
        assert output.startswith("Status: completed\n\n# JMH version:")
        # `view` numbers lines six wide inside <file> tags, from offset + 1.
        views = _calls(session, "view")
        assert any("File has more lines" in r for _, r in views)
        for arguments, result in views:
            assert result.startswith("<file>\n") and result.endswith("\n</file>\n")
            first = int(result.split("\n", 2)[1].split("|", 1)[0])
            assert first == arguments.get("offset", 0) + 1
            more = re.search(r"read beyond line (\d+)\)", result)
            if more:  # only a slice says so, and it names the last line shown
                last = result.rsplit("\n\n(File has more lines", 1)[0].rsplit("\n", 1)[1]
                assert "offset" in arguments and int(last.split("|", 1)[0]) == int(more[1])
        # Every edited file was viewed first, as Crush's edit tool insists.
        viewed = [a["file_path"] for a, _ in _calls(session, "view")]
        for name in ("edit", "multiedit"):
            for arguments, result in _calls(session, name):
                assert result.startswith("<result>\n")
                if arguments.get("old_string") != "":
                    assert arguments["file_path"] in viewed
        [(many, applied)] = _calls(session, "multiedit")
        assert applied.startswith(f"<result>\nApplied {len(many['edits'])} edits to file: ")
        paths = [a["file_path"] for n in ("view", "edit", "multiedit", "write") for a, _ in
                 _calls(session, n)]  # fmt: skip
        assert all(p.startswith(f"{ROOT}/src/main/java/com/acme/relay/") for p in paths)
        # The todo tool takes no cancelled state and counts what it holds.
        for arguments, result in _calls(session, "todos"):
            statuses = [item["status"] for item in arguments["todos"]]
            assert set(statuses) <= {"pending", "in_progress", "completed"}
            counts = (statuses.count("pending"), statuses.count("in_progress"),
                      statuses.count("completed"))  # fmt: skip
            assert f"Status: {counts[0]} pending, {counts[1]} in progress, {counts[2]} " in result


def _zed_calls(session: EvalSession) -> list[tuple[str, dict[str, object], str]]:
    """(tool, arguments, result text) of every call in a Zed-style session."""
    results = {
        r.tool_call_id: r.text for m in session.conversation.messages for r in m.tool_results
    }
    return [
        (call.name, json.loads(call.arguments), results[call.id])
        for message in session.conversation.messages
        for call in message.tool_calls
    ]


def test_zed_style_paths_start_at_the_worktree_root_and_edits_carry_no_text() -> None:
    from compaction.eval.families.zed import ROOT_NAME

    for session in sessions("zed-style"):
        calls = _zed_calls(session)
        modes = Counter()
        for name, arguments, result in calls:
            for key in ("path", "source_path", "destination_path"):
                if key in arguments:
                    assert str(arguments[key]).startswith(f"{ROOT_NAME}/"), (name, arguments)
            if name == "terminal":
                # The terminal runs in the root: its commands name paths below it.
                assert arguments["cd"] == ROOT_NAME
                assert f" {ROOT_NAME}/" not in f" {arguments['command']}"
            if name == "edit_file":
                # A second model writes the change: the call says what, the result shows it.
                modes[arguments["mode"]] += 1
                assert result.startswith(f"Edited {arguments['path']}:\n\n```diff\n")
        assert set(modes) == {"edit", "create", "overwrite"}
        failed = [(a["command"], r) for n, a, r in calls if n == "terminal" and "failed" in r[:80]]
        assert {command for command, _ in failed} == {"mix compile", "mix test"}
        for command, result in failed:
            code = 2 if command == "mix test" else 1
            assert result.startswith(f'Command "{command}" failed with exit code {code}.')
        text = conversation_text(session.conversation)
        assert "** (CompileError)" in text and "Finished in 0.4 seconds" in text


def test_zed_style_shares_no_tool_shape_with_another_family() -> None:
    # Real agents share names (`read_file`, `edit_file`); what their calls carry differs.
    zed = _shapes("zed-style")
    # Amp declares `list_directory` with a lone `path`, as Zed does: the one shape the two
    # agents' own tool lists share. Qwen Code's `list_directory` (qwenstory-style) is called
    # with its lone required `path` too.
    same_in_both = {("amp-style", "list_directory"), ("qwenstory-style", "list_directory")}
    for family in FAMILIES:
        # zedstory-style speaks Zed's own tools too, with a story of its own.
        if family not in ("zed-style", "zedstory-style"):
            theirs = _shapes(family)
            for name in set(zed) & set(theirs):
                if (family, name) not in same_in_both:
                    assert zed[name] != theirs[name], (family, name)


def test_zed_style_values_never_hide_inside_each_other() -> None:
    # A stale value inside a later one ("2 hours" in "12 hours") would read as current.
    from compaction.eval.families.zed import ZedVoice

    for _, *values in ZedVoice.settings:
        for value in values:
            assert [v for v in values if value in v] == [value], values


def _calls(session: EvalSession, name: str) -> list[tuple[dict[str, Any], str]]:
    """(arguments, result text) of every call to tool `name`."""
    results = {
        r.tool_call_id: r.text for m in session.conversation.messages for r in m.tool_results
    }
    return [
        (json.loads(call.arguments), results[call.id])
        for message in session.conversation.messages
        for call in message.tool_calls
        if call.name == name
    ]


def test_cursor_style_speaks_cursors_tool_results() -> None:
    for session in sessions("cursor-style"):
        # Every user message arrives in Cursor's <user_query> tags.
        users = [m.text for m in session.conversation.messages if m.role == "user"]
        assert users and all(u.startswith("<user_query>\n") for u in users)
        # The terminal tool reports the exit status; the failing build and tests show it.
        runs = _calls(session, "run_terminal_cmd")
        assert all(r.startswith("Exit code: ") and "Command completed." in r for _, r in runs)
        builds = [r for a, r in runs if a["command"].startswith("dotnet build")]
        assert len(builds) == 2 and "Exit code: 1" in builds[0] and "Build FAILED." in builds[0]
        assert "Exit code: 0" in builds[1] and "Build succeeded." in builds[1]
        assert "error CS7036:" in builds[0]
        tests = [r for a, r in runs if a["command"].startswith("dotnet test")]
        assert len(tests) == 2 and all("Failed!  - Failed:" in r for r in tests)
        assert all(a["is_background"] is False for a, _ in runs)
        # Edits are sketches with Cursor's marker; a new file is its whole text.
        edits = _calls(session, "edit_file")
        sketches = [a for a, _ in edits if a["code_edit"].startswith("// ... existing code ...")]
        assert len(sketches) == 4 and len(edits) == 6
        assert all(r.startswith("The apply model made the following changes") for _, r in edits)
        # The one edit applied wrong is re-applied, and only that one.
        [(again, _)] = _calls(session, "reapply")
        assert again["target_file"] in {a["target_file"] for a in sketches}
        [(gone, _)] = _calls(session, "delete_file")
        assert gone["target_file"].endswith(".cs")


def test_cursor_style_merges_todos_by_id_and_restates_the_list() -> None:
    for session in sessions("cursor-style"):
        writes = _calls(session, "todo_write")
        assert [a["merge"] for a, _ in writes] == [False, True, True]
        first = writes[0][0]["todos"]
        assert all(set(item) == {"id", "content", "status"} for item in first)
        for arguments, _ in writes[1:]:
            # Only what changed, by id: never the whole list again.
            assert 0 < len(arguments["todos"]) < len(first)
            known = {item["id"] for item in first}
            for item in arguments["todos"]:
                assert ("content" in item) == (item["id"] not in known)
        # The result restates the merged list, which `_todo_lists` rebuilds on its own.
        _, last = writes[-1]
        listed = json.loads(last.split("contents of your TODO list:\n", 1)[1])
        rebuilt = _todo_lists(session)[-1]
        assert [(i["content"], i["status"]) for i in listed] == [
            (i["description"], i["status"]) for i in rebuilt
        ]


def test_windsurf_style_speaks_cascades_tool_results() -> None:
    from compaction.eval.families.windsurf import ROOT

    for session in sessions("windsurf-style"):
        runs = _calls(session, "run_command")
        for arguments, result in runs:
            command = arguments["CommandLine"]
            # Never a `cd`: the directory is the Cwd argument.
            assert arguments["Cwd"] == ROOT and not command.startswith("cd ")
            # Commands that change the tree wait for the user; the rest run on their own.
            destructive = command.startswith(("rm ", "mkdir", "git mv", "git rm"))
            assert arguments["SafeToAutoRun"] is not destructive, command
            if arguments["Blocking"]:
                assert result.startswith(f"Ran `{command}` in {ROOT}. Exit code: ")
        # The failing and passing analyser runs, with the exit code each reports.
        analyses = [r for a, r in runs if a["CommandLine"].startswith("vendor/bin/phpstan")]
        assert len(analyses) == 2
        assert "Exit code: 1." in analyses[0] and "[ERROR] Found 2 errors" in analyses[0]
        assert "Exit code: 0." in analyses[1] and "[OK] No errors" in analyses[1]
        # PHPUnit: the failures it numbers are the ones its summary counts.
        tests = [r for a, r in runs if a["CommandLine"] == "vendor/bin/phpunit"]
        assert len(tests) == 2
        for result in tests:
            [(total, _, failed)] = re.findall(
                r"\nTests: (\d+), Assertions: (\d+), Failures: (\d+)\.$", result
            )
            assert "\nFAILURES!\n" in result
            numbered = re.findall(r"^(\d+)\) Tests\\Unit\\\w+Test::test\w+$", result, re.M)
            assert numbered == [str(n) for n in range(1, int(failed) + 1)]
            heading = "There was 1 failure:" if failed == "1" else f"There were {failed} failures:"
            assert heading in result
            progress = "".join(re.findall(r"^([.F]+) *\d+ / \d+ \( *\d+%\)$", result, re.M))
            assert len(progress) == int(total) and progress.count("F") == int(failed)
        # The benchmark runs in the background and is read back by its command id.
        [(started, note)] = [(a, r) for a, r in runs if not a["Blocking"]]
        [(status, output)] = _calls(session, "command_status")
        assert note.startswith(f"Background command ID: {status['CommandId']}\n")
        assert started["CommandLine"].startswith("vendor/bin/phpbench run")
        assert output.startswith("Status: DONE\nExit code: 0\n") and "PHPBench" in output
        # view_file numbers its lines from StartLine to EndLine and says whether that is all.
        for arguments, result in _calls(session, "view_file"):
            first, last = arguments["StartLine"], arguments["EndLine"]
            total = int(re.search(r"^Total Lines: (\d+)$", result, re.M)[1])  # type: ignore[index]
            assert f"Showing lines {first} to {last}\n" in result
            assert re.search(rf"^{first}: ", result, re.M)
            assert re.search(rf"^{last}: ", result, re.M)
            assert ("entire, complete file" in result) == (first == 1 and last == total)
        # The analyser's fix: both calls in one edit, one chunk matching more than once.
        edits = _calls(session, "replace_file_content")
        multiple = [a for a, _ in edits if any(c["AllowMultiple"] for c in a["ReplacementChunks"])]
        assert len(multiple) == 1 and len(multiple[0]["ReplacementChunks"]) == 2
        for arguments, result in edits:
            assert result.startswith(
                f"The following changes were made by the replace_file_content tool to: "
                f"{arguments['TargetFile']}."
            )
            assert "\n[diff_block_start]\n" in result and result.endswith("\n[diff_block_end]")
        for arguments, result in _calls(session, "write_to_file"):
            assert arguments["EmptyFile"] is False
            assert arguments["CodeContent"].startswith("<?php\n")
            target = arguments["TargetFile"]
            assert result == f"Created file file://{target} with requested content."
        # grep_search answers in JSON, capped at 50 matches.
        for _, result in _calls(session, "grep_search"):
            found = [json.loads(line) for line in result.splitlines()]
            assert 0 < len(found) <= 50
            assert all(set(m) == {"Filename", "LineNumber", "LineContent"} for m in found)
        paths = [a["TargetFile"] for n in ("replace_file_content", "write_to_file")
                 for a, _ in _calls(session, n)]  # fmt: skip
        assert paths and all(p.startswith(f"{ROOT}/app/Services/") for p in paths)


def test_amp_style_speaks_amps_tool_results() -> None:
    from compaction.eval.families.amp import BUILD, ROOT

    for session in sessions("amp-style"):
        # Bash answers with its run result, {output, exitCode}, and takes the directory as cwd.
        runs = [(a, json.loads(r)) for a, r in _calls(session, "Bash")]
        for arguments, result in runs:
            assert set(result) == {"output", "exitCode"}
            assert arguments["cwd"] in (ROOT, BUILD) and not arguments["cmd"].startswith("cd ")
        builds = [r for a, r in runs if a["cmd"] == "cmake --build build"]
        assert [r["exitCode"] for r in builds] == [1, 0]
        # clang's `file:line:col: error:` form, at both calls the edit then fixes.
        errors = re.findall(r"^(/\S+\.cpp):(\d+):5: error: no matching function for call to "
                            r"'(\w+)'$", builds[0]["output"], re.M)  # fmt: skip
        assert [line for _, line, _ in errors] == ["88", "94"]
        assert (
            "2 errors generated.\nninja: build stopped: subcommand failed." in builds[0]["output"]
        )
        [(fix, _)] = [(a, r) for a, r in _calls(session, "edit_file") if a.get("replace_all")]
        assert fix["path"] == errors[0][0] and fix["old_str"] == f"{errors[0][2]}(batch);"
        # CTest, in the build tree, fails with 8; GoogleTest prints each failing test's verdict.
        tests = [(a, r) for a, r in runs if a["cmd"] == "ctest --output-on-failure"]
        assert len(tests) == 2 and all(a["cwd"] == BUILD and r["exitCode"] == 8 for a, r in tests)
        for _, result in tests:
            output = result["output"]
            [(percent, failed, total)] = re.findall(
                r"^(\d+)% tests passed, (\d+) tests failed out of (\d+)$", output, re.M
            )
            passed = re.findall(r"^ *\d+/\d+ Test +#\d+: (\S+) \.+   Passed ", output, re.M)
            red = re.findall(r"^ *\d+/\d+ Test +#\d+: (\S+) \.+\*\*\*Failed ", output, re.M)
            assert len(passed) + len(red) == int(total) and len(red) == int(failed)
            assert int(percent) == min(99, round(100 * len(passed) / int(total)))
            for test in red:
                assert (
                    f"[ RUN      ] {test}\n" in output and f"[  FAILED  ] {test} (0 ms)" in output
                )
            assert output.count("[  PASSED  ] 0 tests.") == len(red)
            listed = re.findall(r"^\t +\d+ - (\S+) \(Failed\)$", output, re.M)
            assert listed == red
        # The tests CTest knows keep their numbers from one run to the next.
        first, last = (re.findall(r"Test +#\d+: (\S+) ", r["output"]) for _, r in tests)
        assert last == first  # the two fixed tests pass now: the same tests, in one order
        # Read numbers its lines from the read_range it was given (or from 1).
        for arguments, result in _calls(session, "Read"):
            assert arguments["path"].startswith(f"{ROOT}/")
            start, end = arguments.get("read_range", [1, result.count("\n") + 1])
            numbers = [int(line.split(":", 1)[0]) for line in result.split("\n")]
            assert numbers == list(range(start, end + 1))
        # Edits answer with a fenced diff and the line range they touched.
        edits = _calls(session, "edit_file")
        for arguments, result in edits:
            answer = json.loads(result)
            assert set(answer) == {"diff", "lineRange"}
            assert answer["diff"].startswith(f"```diff\nIndex: {arguments['path']}\n")
            first_line, last_line = answer["lineRange"]
            assert f"@@ -{first_line}," in answer["diff"] and f"@@ -{last_line}," in answer["diff"]
        # One edit is undone and made again on the same text; one new file is formatted.
        [(undone, _)] = _calls(session, "undo_edit")
        again = [i for i, (a, _) in enumerate(edits) if a["path"] == undone["path"]]
        assert len(again) == 2 and edits[again[0]][0]["old_str"] == edits[again[1]][0]["old_str"]
        assert edits[again[0]][0]["new_str"] != edits[again[1]][0]["new_str"]
        created = [a["path"] for a, _ in _calls(session, "create_file")]
        [(formatted, _)] = _calls(session, "format_file")
        assert formatted["path"] == created[1]
        paths = [a["path"] for n in ("edit_file", "create_file", "undo_edit") for a, _ in
                 _calls(session, n)]  # fmt: skip
        assert paths and all(p.startswith(f"{ROOT}/src/") for p in paths)
        # Each todo_write replaces the list; todo_read reads back the one before.
        writes = _calls(session, "todo_write")
        for arguments, result in writes:
            assert json.loads(result) == arguments["todos"]
            for item in arguments["todos"]:
                assert item["status"] in {"todo", "in-progress", "completed"}
                assert item["priority"] in {"high", "medium", "low"}
        [(_, read_back)] = _calls(session, "todo_read")
        assert json.loads(read_back) == writes[1][0]["todos"]
        assert len(_calls(session, "Task")) == len(_calls(session, "mermaid")) == 1
        # The figure the user keeps is perf stat's task-clock.
        [measured] = [r for a, r in runs if a["cmd"].startswith("perf stat -r 10 ")]
        assert re.search(r"^ +\d+\.\d\d msec task-clock ", measured["output"], re.M)


def test_copilot_style_speaks_copilots_tool_results() -> None:
    from compaction.eval.families.copilot import EDITED, NO_OUTPUT, REMINDER, ROOT

    for session in sessions("copilot-style"):
        # Every user turn is rendered as Copilot's agent prompt renders it; the first
        # message after the system prompt is Copilot's own environment report.
        users = [m.text for m in session.conversation.messages if m.role == "user"]
        assert users[0].startswith("<environment_info>\n") and "<workspace_info>" in users[0]
        for text in users[1:]:
            assert text.startswith("<context>\nThe current date is ")
            assert f"<reminderInstructions>\n{REMINDER}\n</reminderInstructions>" in text
            assert text.endswith("\n</userRequest>") and "<editorContext>\n" in text
        # The to-do list each turn carries is the last one written before it.
        written = [m for m in session.conversation.messages
                   if any(c.name == "manage_todo_list" for c in m.tool_calls)]  # fmt: skip
        assert "<todoList>" not in users[1] and "<todoList>\n# Todo List\n\n- [" in users[-1]
        assert len(written) == 3
        runs = _calls(session, "run_in_terminal")
        for arguments, result in runs:
            assert arguments["explanation"].endswith(".")
            failed = re.search(r"\n\nCommand exited with code (\d+)$", result)
            if arguments["command"] in ("swift test",) or "error:" in result:
                assert failed, arguments["command"]
            assert result != "" and (result != NO_OUTPUT or arguments["command"].startswith(
                ("mkdir", "git mv")))  # fmt: skip
        builds = [r for a, r in runs if a["command"] == "swift build"]
        assert len(builds) == 2 and builds[1].endswith("Build complete! (6.84s)")
        assert builds[0].count(": error: missing argument for parameter 'tenantID' in call") == 2
        # XCTest's per-suite counts add up to the summary line it prints twice.
        tests = [r for a, r in runs if a["command"] == "swift test"]
        assert len(tests) == 2
        for result in tests:
            per_suite = re.findall(r"^\t Executed (\d+) tests?, with (\d+) failures? "
                                   r"\(0 unexpected\)", result, re.M)  # fmt: skip
            *suites, bundle, everything = per_suite
            assert bundle == everything
            assert sum(int(n) for n, _ in suites) == int(everything[0])
            assert sum(int(f) for _, f in suites) == int(everything[1])
            cases = re.findall(r"^Test Case '(\w+\.\w+)' (passed|failed) ", result, re.M)
            assert len(cases) == int(everything[0])
            assert sum(v == "failed" for _, v in cases) == int(everything[1])
            assert result.count(": error: ") == int(everything[1])
            assert result.endswith("Test run with 0 tests passed after 0.001 seconds.\n\n"
                                   "Command exited with code 1")  # fmt: skip
        # The benchmark runs in the background and is read back by its terminal id.
        [note] = [r for a, r in runs if a["isBackground"]]
        [(terminal, output)] = _calls(session, "get_terminal_output")
        assert note.startswith(f"Command is running in terminal with ID={terminal['id']}\n")
        assert output.startswith(f"Output of terminal {terminal['id']}:\nBuilding for production")
        # read_file answers a fenced block; a part of a file says which lines it holds.
        for arguments, result in _calls(session, "read_file"):
            assert arguments["filePath"].startswith(f"{ROOT}/")
            header = re.match(r"File: `(.+)`\. Lines (\d+) to (\d+) \((\d+) lines total\): \n",
                              result)  # fmt: skip
            body = result[header.end() :] if header else result
            assert body.startswith("```swift\n") and body.endswith("\n```")
            shown = body.count("\n") - 1
            assert shown == arguments["endLine"] - arguments["startLine"] + 1
            if header:
                assert header[1] == arguments["filePath"]
                assert (int(header[2]), int(header[3])) == (
                    arguments["startLine"], arguments["endLine"])  # fmt: skip
        # Edits: the one-line replacement matches twice and fails, the insert edit with
        # Copilot's markers takes over, and the file's errors are asked for.
        replaced = _calls(session, "replace_string_in_file")
        failures = [a for a, r in replaced if r.startswith("String replacement failed: ")]
        assert len(failures) == 1 and "\n" not in failures[0]["oldString"]
        for arguments, result in replaced:
            if arguments not in failures:
                assert arguments["oldString"].count("\n") >= 3
                assert result in (EDITED.format(path=arguments["filePath"]),) or (
                    result.startswith(f"The edit to {arguments['filePath']} was applied")
                )
        [(insert, done)] = _calls(session, "insert_edit_into_file")
        assert insert["filePath"] == failures[0]["filePath"]
        assert insert["code"].count("// ...existing code...") == 4
        assert done == EDITED.format(path=insert["filePath"])
        [(asked, clean)] = _calls(session, "get_errors")
        assert asked == {"filePaths": [insert["filePath"]]}
        assert clean == f'<errors path="{insert["filePath"]}">\nNo errors found\n</errors>\n'
        [(run, summary)] = _calls(session, "runTests")
        assert run["files"][0].startswith(f"{ROOT}/Tests/HarborTests/")
        assert summary.startswith("<summary passed=") and "failed=1 /><testFailure name=" in summary
        for arguments, result in _calls(session, "create_file"):
            assert result == EDITED.format(path=arguments["filePath"])
        # grep_search shows 20 matches at most, as <match> blocks.
        for _, result in _calls(session, "grep_search"):
            count = re.match(r"(\d+) match(es)?( \(more results are available\))?\n", result)
            assert count and int(count[1]) == result.count("<match path=") <= 20


def _shapes(family: str) -> dict[str, set[str]]:
    """Every tool a family's sessions call, with the argument names it was given."""
    found: dict[str, set[str]] = {}
    for session in sessions(family):
        for message in session.conversation.messages:
            for call in message.tool_calls:
                found.setdefault(call.name, set()).update(json.loads(call.arguments))
    return found


def test_homegrown_style_speaks_its_teams_own_tools() -> None:
    mine = _shapes("homegrown-style")
    assert set(mine) == {
        "shell_exec", "fs_read", "fs_write", "fs_patch", "fs_remove", "code_search", "fs_list",
        "plan_set", "notify_user",
    }  # fmt: skip
    assert mine["shell_exec"] == {"cmdline", "workdir", "timeout_s"}
    assert mine["fs_read"] == {"file", "from_line", "to_line"}
    assert mine["fs_write"] == {"file", "text"} and mine["fs_patch"] == {"file", "find", "replace"}
    assert mine["fs_remove"] == {"file"} and mine["code_search"] == {"needle", "under"}
    assert mine["fs_list"] == {"dir", "pattern"} and mine["plan_set"] == {"steps"}
    assert mine["notify_user"] == {"message"}
    # The point of the family: no other family calls a tool of that name — except Amazon Q's
    # real `fs_read` and `fs_write` (qstory-style), which share only the names, no argument.
    real = {"qstory-style": {"fs_read", "fs_write"}}
    for family in FAMILIES:
        if family != "homegrown-style":
            theirs = _shapes(family)
            assert set(mine) & set(theirs) <= real.get(family, set()), family
            assert all(not mine[name] & theirs[name] for name in set(mine) & set(theirs))


def test_homegrown_style_answers_in_its_json_envelope() -> None:
    from compaction.eval.families.homegrown import ROOT

    for session in sessions("homegrown-style"):
        runs = [(a, json.loads(r)) for a, r in _calls(session, "shell_exec")]
        for arguments, result in runs:
            assert set(result) == {"ok", "code", "stdout", "stderr", "took_ms"}
            assert result["ok"] is (result["code"] == 0) and arguments["workdir"] == ROOT
            long_run = arguments["cmdline"].startswith(("flutter test", "dart run benchmark/"))
            assert (arguments["timeout_s"] >= 600) is long_run, arguments
        # The analyzer flags the undefined name at both calls, then is clean.
        analyses = [r for a, r in runs if a["cmdline"] == "flutter analyze"]
        assert [r["code"] for r in analyses] == [1, 0]
        flagged = re.findall(
            r"^  error \u2022 Undefined name 'tenantId' \u2022 (lib/src/\w+\.dart):(\d+):(\d+) "
            r"\u2022 undefined_identifier$",
            analyses[0]["stdout"],
            re.M,
        )
        assert [line for _, line, _ in flagged] == ["88", "93"]
        assert analyses[0]["stdout"].rstrip().endswith("\n\n2 issues found. (ran in 3.4s)")
        assert analyses[1]["stdout"].rstrip().endswith("\nNo issues found! (ran in 2.9s)")
        # The raw envelope escapes the bullets, as json.dumps does.
        raw = [r for a, r in _calls(session, "shell_exec") if a["cmdline"] == "flutter analyze"]
        assert "\\u2022" in raw[0] and "\u2022" not in raw[0]
        # The fix: the one-line patch matches twice and is refused, each call is patched with
        # the line above it, and the flagged file's tenant tests pass.
        patches = [(a, json.loads(r)) for a, r in _calls(session, "fs_patch")]
        [refused] = [(a, r) for a, r in patches if not r["ok"]]
        assert refused[1]["matches"] == [88, 93] and refused[0]["file"] == flagged[0][0]
        after = patches[patches.index(refused) + 1 : patches.index(refused) + 3]
        for arguments, result in after:
            context, call = arguments["find"].split("\n")
            assert call.strip() == refused[0]["find"] and context.strip()
            assert result == {"ok": True, "replaced": 1}
        [targeted] = [r for a, r in runs if "--plain-name" in a["cmdline"]]
        assert targeted["code"] == 0
        assert re.search(r"\n00:0\d \+\d+: All tests passed!\n$", targeted["stdout"])
        # flutter test's compact reporter: the counts on the last line are the tests it ran.
        tests = [r for a, r in runs if a["cmdline"] == "flutter test"]
        assert len(tests) == 2 and all(r["code"] == 1 for r in tests)
        for result in tests:
            out = result["stdout"]
            [(passed, failed)] = re.findall(r"^\d\d:\d\d \+(\d+) -(\d+): Some tests failed\.$",
                                            out, re.M)  # fmt: skip
            ran = re.findall(r"^\d\d:\d\d \+\d+(?: -\d+)?: /\S+_test\.dart: (.+?)( \[E\])?$",
                             out, re.M)  # fmt: skip
            assert len(ran) == int(passed) + int(failed)
            rerun = out.count("To run this test again:")
            assert sum(bool(e) for _, e in ran) == int(failed) == rerun
        # fs_read answers the lines asked for; fs_write the bytes it wrote.
        for arguments, result in _calls(session, "fs_read"):
            answer = json.loads(result)
            first, last = arguments.get("from_line", 1), arguments.get("to_line", answer["to_line"])
            assert (answer["from_line"], answer["to_line"]) == (first, last)
            assert answer["text"].count("\n") + 1 == last - first + 1 <= answer["total_lines"]
        for arguments, result in _calls(session, "fs_write"):
            assert json.loads(result) == {"ok": True, "bytes": len(arguments["text"].encode())}
        for arguments, result in _calls(session, "fs_remove"):
            assert json.loads(result) == {"ok": True, "removed": arguments["file"]}
        for _, result in _calls(session, "code_search"):
            assert len(json.loads(result)["hits"]) <= 25
        for arguments, result in _calls(session, "plan_set"):
            states = [step["state"] for step in arguments["steps"]]
            assert set(states) <= {"todo", "doing", "done", "dropped"}
            assert json.loads(result) == {"ok": True, "steps": len(states), "doing": 1}
        # The final answer is the notify_user call, and the session ends on its result.
        [(told, delivered)] = _calls(session, "notify_user")
        assert json.loads(delivered) == {"ok": True, "delivered": True}
        assert session.conversation.messages[-1].role == "tool"
        [last] = [f for f in session.facts if f.category == "last_message"]
        assert told["message"].startswith(last.probe[0])
        [measured] = [r for a, r in runs if a["cmdline"].startswith("dart run benchmark/")]
        assert re.fullmatch(r"FlushBatch\(RunTime\): \d+\.\d\d us\.\n", measured["stdout"])


def test_kiro_style_speaks_kiros_tools() -> None:
    mine = _shapes("kiro-style")
    assert set(mine) == {
        "executeBash", "readFile", "readMultipleFiles", "fsWrite", "fsAppend", "strReplace",
        "deleteFile", "listDirectory", "grepSearch", "fileSearch", "getDiagnostics",
        "taskStatus",
    }  # fmt: skip
    assert mine["executeBash"] == {"command"}
    assert mine["readFile"] == {"path", "start_line", "end_line", "explanation"}
    assert mine["readMultipleFiles"] == {"paths", "explanation"}
    assert mine["fsWrite"] == mine["fsAppend"] == {"path", "text"}
    assert mine["strReplace"] == {"path", "oldStr", "newStr"}
    assert mine["deleteFile"] == {"targetFile", "explanation"}
    assert mine["listDirectory"] == {"path", "explanation"}
    assert mine["grepSearch"] == {"query", "includePattern", "explanation"}
    assert mine["fileSearch"] == {"query", "explanation"}
    assert mine["getDiagnostics"] == {"paths"}
    assert mine["taskStatus"] == {"taskFilePath", "task", "status"}
    # No other family calls a tool of these names.
    for family in FAMILIES:
        if family != "kiro-style":
            assert not set(mine) & set(_shapes(family)), family


def _julia_table(text: str) -> list[tuple[str, int, int, int]]:
    """The rows of the last `Test Summary:` table in `text`: (name, pass, fail, total), the
    column positions read off the header as Test.jl pads them."""
    lines = text.split("\n")
    start = max(i for i, line in enumerate(lines) if line.startswith("Test Summary:"))
    header = lines[start]
    bar = header.index(" | ")
    columns = [(m.group(), m.end()) for m in re.finditer(r"Pass|Fail|Total", header)]
    rows = []
    for line in lines[start + 1 :]:
        if len(line) <= bar or line[bar : bar + 3] != " | ":
            break
        counts = {}
        begin = bar + 3
        for name, end in columns:
            cell = line[begin:end].strip()
            counts[name] = int(cell) if cell else 0
            begin = end
        rows.append((line[:bar].rstrip(), counts["Pass"], counts.get("Fail", 0), counts["Total"]))
    return rows


def test_kiro_style_speaks_kiros_tool_results() -> None:
    from compaction.eval.families.kiro import OPEN_FILES, PRECOMPILE, TASKS

    for session in sessions("kiro-style"):
        # Every user turn carries the editor's open files, never a file a fact is about.
        users = [m.text for m in session.conversation.messages if m.role == "user"]
        paths = {f.probe[0] for f in session.facts if f.category.startswith("file_")}
        for text in users:
            assert text.endswith("</OPEN-EDITOR-FILES>\n</EnvironmentContext>")
            listed = text.split("<OPEN-EDITOR-FILES>\n", 1)[1].split("\n</OPEN-EDITOR-FILES>")[0]
            assert set(listed.split("\n")) <= set(OPEN_FILES)
            assert not any(p in listed for p in paths)
        # executeBash answers the output, then the exit code.
        runs = []
        for arguments, result in _calls(session, "executeBash"):
            found = re.search(r"\n\nExit Code: (\d+)$", result)
            assert found, result[-80:]
            runs.append((arguments["command"], result[: found.start()], int(found[1])))
        # Precompilation fails on the undefined name, then passes; in between, both calls are
        # replaced with the line above them as context and the file's diagnostics are clean.
        builds = [(out, code) for cmd, out, code in runs if cmd == PRECOMPILE]
        assert [code for _, code in builds] == [1, 0]
        assert (
            "\nERROR: LoadError: UndefVarError: `tenant_id` not defined\nStacktrace:\n"
            in (builds[0][0])
        )
        assert builds[0][0].splitlines()[-1].startswith("ERROR: Failed to precompile Ferry [")
        flagged = re.search(r"@ Ferry \S+/(src/\w+\.jl):88\n", builds[0][0])
        assert flagged
        fixes = [a for a, _ in _calls(session, "strReplace") if "tenant = " in a["oldStr"]]
        assert len(fixes) == 2 and {a["path"] for a in fixes} == {flagged[1]}
        for fix in fixes:
            context, call = fix["oldStr"].split("\n")
            assert context.strip() and call.strip().endswith("tenant = tenant_id)")
            assert fix["newStr"] == f"{context}\n{call.replace('= tenant_id', '= batch.tenant_id')}"
        [(asked, clean)] = _calls(session, "getDiagnostics")
        assert asked == {"paths": [flagged[1]]} and clean == f"{flagged[1]}: No diagnostics found"
        # Pkg.test: every failing @test is reported with its expression and what it evaluated
        # to; the summary table adds up and the closing error restates its counts.
        tests = [(out, code) for cmd, out, code in runs if cmd.endswith("Pkg.test()'")]
        assert len(tests) == 2 and all(code == 1 for _, code in tests)
        for output, _ in tests:
            assert output.startswith("     Testing Ferry\n")
            failures = re.findall(r"^(.+): Test Failed at (\S+\.jl):(\d+)\n  Expression: .+\n"
                                  r"   Evaluated: .+\n", output, re.M)  # fmt: skip
            rows = _julia_table(output)
            name, passed, failed, total = rows[0]
            assert name == "Ferry" and passed + failed == total and failed == len(failures)
            groups = [r for r in rows if r[0].startswith("  ") and not r[0].startswith("    ")]
            assert sum(r[3] for r in groups) == total and sum(r[2] for r in groups) == failed
            red = [r[0].strip() for r in rows if r[0].startswith("    ") and r[2]]
            assert red == [test for test, _, _ in failures]
            assert output.endswith(
                f"ERROR: LoadError: Some tests did not pass: {passed} passed, {failed} failed, "
                "0 errored, 0 broken.\nin expression starting at /home/dev/code/Ferry.jl/test/"
                "runtests.jl:4\nERROR: Package Ferry errored during testing"
            )
        # Aqua prints one summary table per check, each of them passing.
        [aqua] = [out for cmd, out, _ in runs if "Aqua.test_all" in cmd]
        assert aqua.count("Test Summary:") == 8 and "Fail" not in aqua
        # readFile answers the lines asked for; fsWrite and fsAppend say how many they wrote.
        for arguments, result in _calls(session, "readFile"):
            if "start_line" in arguments:
                assert result.count("\n") == arguments["end_line"] - arguments["start_line"]
        for name, verb in (("fsWrite", "Wrote"), ("fsAppend", "Appended")):
            for arguments, result in _calls(session, name):
                lines = arguments["text"].count("\n")
                assert result == f"{verb} {lines} lines to {arguments['path']}"
        for arguments, result in _calls(session, "deleteFile"):
            assert result == f"Deleted {arguments['targetFile']}"
        for _, result in _calls(session, "grepSearch"):
            count = re.match(r"Found (\d+) matches in (\d+) files:\n", result)
            assert count and int(count[1]) == len(re.findall(r"^  \d+: ", result, re.M))
        # The plan lives in the spec's tasks.md: written once, grown once, a task dropped by
        # cutting its lines out; every status change goes through taskStatus.
        [(plan, _)] = _calls(session, "fsWrite")[:1]
        assert plan["path"] == TASKS and plan["text"].startswith(
            "# Implementation Plan\n\n- [ ] 1. "
        )
        [(grown, _)] = _calls(session, "fsAppend")
        assert grown["path"] == TASKS and grown["text"].startswith("- [ ] 6. ")
        [(cut, _)] = [(a, r) for a, r in _calls(session, "strReplace") if a["path"] == TASKS]
        assert cut["newStr"] == "" and cut["oldStr"] in plan["text"]
        for arguments, result in _calls(session, "taskStatus"):
            assert arguments["taskFilePath"] == TASKS
            assert arguments["status"] in {"not_started", "in_progress", "completed"}
            assert result == f"Task status updated to {arguments['status']}"
        # The figure the user keeps is BenchmarkTools' median.
        [measured] = [out for cmd, out, _ in runs if cmd.startswith("julia --project=bench ")]
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        assert f" Time  (median):     {figure} \u03bcs " in measured
        assert session.conversation.messages[-1].role == "assistant"


#: Families that tell the story's second-thoughts variant.
VARIANT = (
    "gemini-style", "goose-style", "continue-style", "zed-style", "cursor-style", "crush-style",
    "windsurf-style", "amp-style", "copilot-style", "homegrown-style", "warp-style",
    "kiro-style", "plandex-style", "deepagents-style",
    "augment-style", "open-interpreter-style", "smolagents-style", "trae-style", "roo-style",
    "letta-style", "crewai-style", "autogen-style", "void-style", "refact-style",
    "swekit-style", "gptme-style", "moatless-style", "acr-style", "dc-style", "clinemcp-style",
)  # fmt: skip
_CHECKBOX = re.compile(r"^- \[( |x)\] (~~)?(.+?)(~~)?(?: \((in progress|cancelled)\))?$")
#: Continue's checklist lines, as its assistant writes them in its own messages.
_CHECKLIST_LINE = re.compile(r"^- (done|working on|still to do|dropped): (.+)$")
_CHECKLIST_STATUS = {
    "done": "completed",
    "working on": "in_progress",
    "still to do": "pending",
    "dropped": "cancelled",
}
#: Windsurf's plan rows, as its assistant tabulates them in its own messages.
_PLAN_ROW = re.compile(r"^\| \d+ \| (.+) \| (done|in progress|not started|cancelled) \|$")
_PLAN_ROW_STATUS = {
    "done": "completed",
    "in progress": "in_progress",
    "not started": "pending",
    "cancelled": "cancelled",
}
#: Amp's `todo_write` status words, in the story's.
_AMP_STATUS = {"todo": "pending", "in-progress": "in_progress"}
#: Copilot's `manage_todo_list` statuses, as the story names them.
_TODO_STATE = {"not-started": "pending", "in-progress": "in_progress", "completed": "completed"}
#: Kiro's `taskStatus` statuses, as the story names them.
_KIRO_STATUS = {"not_started": "pending", "in_progress": "in_progress", "completed": "completed"}
_KIRO_TASK = re.compile(r"^- \[ \] (\d+)\. (.+)$")
#: Plandex's `set_subtasks` statuses, as the story names them.
_SUBTASK_STATUS = {"queued": "pending", "working": "in_progress", "finished": "completed",
                   "removed": "cancelled"}  # fmt: skip
#: The homegrown agent's `plan_set` states, as the story names them.
_PLAN_SET_STATE = {"todo": "pending", "doing": "in_progress", "done": "completed",
                   "dropped": "cancelled"}  # fmt: skip
#: Augment's task states, as the story names them, and a task line of its tools' answers.
_AUGMENT_STATE = {"NOT_STARTED": "pending", "IN_PROGRESS": "in_progress", "COMPLETE": "completed",
                  "CANCELLED": "cancelled"}  # fmt: skip
_AUGMENT_TASK = re.compile(r"^-?\[[ /x-]\] UUID:(\S+) NAME:(.+) DESCRIPTION:", re.M)
#: A line of a Refact agent's checklist, as its assistant writes it in its own messages.
_REFACT_ITEM = re.compile(r"^(✅|🔄|⬜|🚫) (~~)?(.+?)(~~)?$")
#: An AutoCodeRover-style assistant's work items, numbered rows in its own text.
_ACR_ITEM = re.compile(r"^\d+\. \((done|now|next|dropped)\) (.+)$")
_ACR_MARK = {"done": "completed", "now": "in_progress", "next": "pending", "dropped": "cancelled"}
#: A row of the checklist a Desktop-Commander-driven assistant keeps in its own replies.
_DC_ITEM = re.compile(r"^- \[( |x)\] (~~)?(.+?)(~~)?( ← in progress| \(dropped\))?$")
_DC_MARK = {" ← in progress": "in_progress", " (dropped)": "cancelled"}
#: The focus chain's checklist a Cline tool use carries, and one of its lines.
_CLINE_PROGRESS = re.compile(r"\n<task_progress>\n(.*?)\n</task_progress>\n", re.DOTALL)
_CLINE_ITEM = re.compile(r"^- \[( |x)\] (.+)$")
_REFACT_MARK = {"✅": "completed", "🔄": "in_progress", "⬜": "pending", "🚫": "cancelled"}
#: Roo's `update_todo_list` checklist lines and their marks, as the story names them.
_ROO_ITEM = re.compile(r"^\[([ x-])\] (.+)$")
_ROO_MARK = {" ": "pending", "-": "in_progress", "x": "completed"}
#: The SWE-kit assistant's work-item lines and their status words, as the story names them.
_SWEKIT_ITEM = re.compile(r"^- (DONE|NOW|TODO|DROP) +(.+)$")
_SWEKIT_STATUS = {"DONE": "completed", "NOW": "in_progress", "TODO": "pending",
                  "DROP": "cancelled"}  # fmt: skip
#: Moatless's task states, as the story names them (`open` is pending or, for the open task
#: first in priority order, in progress).
_MOATLESS_STATE = {"open": "pending", "completed": "completed", "deleted": "cancelled"}
#: Warp's to-do tools, each changing the one list.
_WARP_TODO_TOOLS = ("create_todo_list", "mark_todos_completed", "update_pending_todos")
#: Open Interpreter's plan steps, as its assistant writes and recaps them in its prose.
_OI_STEP = re.compile(r"^\d+\. (.+?)(?: — (done|in progress|dropped))?$")
_OI_STATUS = {"done": "completed", "in progress": "in_progress", "dropped": "cancelled",
              None: "pending"}  # fmt: skip
#: Zed's plan steps, as its assistant numbers them in its own messages.
_PLAN_STEP = re.compile(r"^\d+\. (✓ )?(~~)?(.+?)(~~)?( ← now| \(no longer needed\))?$")


#: A step of a smolagents planning step's `## 2. Plan`, with the status written after it.
_SMOL_STEP = re.compile(r"^\d+\. (.+?)(?: \((done|in progress|dropped)\))?$")
_SMOL_STATUS = {None: "pending", "in progress": "in_progress", "done": "completed",
                "dropped": "cancelled"}  # fmt: skip
#: A step of the plan a Trae `sequentialthinking` thought holds, with its status.
_TRAE_STEP = re.compile(r"^Step (\d+) \[(not started|in progress|done|dropped)\]: (.+)$", re.M)
_TRAE_STATUS = {"not started": "pending", "in progress": "in_progress", "done": "completed",
                "dropped": "cancelled"}  # fmt: skip


def _smolagents_plan(text: str) -> list[dict[str, str]] | None:
    """The steps of a smolagents planning step's plan, if `text` is one."""
    if not text.startswith(("Here are the facts I know", "I still need to solve the task")):
        return None
    plan = text.split("\n## 2. Plan\n", 1)[1].split("\n```", 1)[0]
    steps = [_SMOL_STEP.match(line) for line in plan.splitlines()]
    assert all(steps), plan
    return [{"description": m[1], "status": _SMOL_STATUS[m[2]]} for m in steps if m]


#: A step of the plan an AutoGen assistant writes in its prose, with its mark.
_AUTOGEN_STEP = re.compile(r"^\d+\. \[(done|in progress|to do|dropped)\] (.+)$")
_AUTOGEN_STATUS = {"done": "completed", "in progress": "in_progress", "to do": "pending",
                   "dropped": "cancelled"}  # fmt: skip


def _autogen_plan(text: str) -> list[dict[str, str]] | None:
    """The steps of the plan an AutoGen assistant's message writes, if it writes one."""
    from compaction.eval.families.autogen import PLAN_OPENERS as AUTOGEN_OPENERS

    lines = text.splitlines()
    starts = [k for k, line in enumerate(lines) if line in AUTOGEN_OPENERS]
    if not starts:
        return None
    steps = []
    for line in lines[starts[0] + 1 :]:
        if not line:
            break
        match = _AUTOGEN_STEP.match(line)
        assert match, line
        steps.append({"description": match[2], "status": _AUTOGEN_STATUS[match[1]]})
    return steps


#: A to-do line of a letta-style agent's `plan` memory block, and its marks.
_LETTA_STEP = re.compile(r"^- \[([ >x-])\] (.+)$")
_LETTA_STATUS = {" ": "pending", ">": "in_progress", "x": "completed", "-": "cancelled"}


#: A CrewAI ReAct step in an assistant message: Thought, Action, Action Input, Observation.
_CREWAI_STEP = re.compile(
    r"\AThought: (.+?)\nAction: ([a-z_]+)\nAction Input: (\{.*?\})\nObservation: (.*)\Z", re.DOTALL
)
_CREWAI_STATUS = {"todo": "pending", "doing": "in_progress", "done": "completed",
                  "dropped": "cancelled"}  # fmt: skip


def _crewai_step(text: str) -> tuple[str, str, dict[str, Any], str] | None:
    """(thought, tool, arguments, observation) of a CrewAI ReAct step, if `text` is one."""
    step = _CREWAI_STEP.match(text)
    if step is None:
        return None
    return step[1], step[2], json.loads(step[3]), step[4]


def _crewai_checklist(text: str) -> list[dict[str, str]] | None:
    """The items of a CrewAI agent's `task_checklist` step, if `text` is one."""
    step = _crewai_step(text)
    if step is None or step[1] != "task_checklist":
        return None
    return [{"description": i["step"], "status": _CREWAI_STATUS[i["status"]]}
            for i in step[2]["items"]]  # fmt: skip


def _letta_block(block: str, call_name: str, arguments: dict[str, Any]) -> str:
    """A memory block after one of Letta's memory_insert / memory_replace calls, applied as
    its function set applies them."""
    if call_name == "memory_replace":
        assert block.count(arguments["old_str"]) == 1, arguments
        return block.replace(arguments["old_str"], arguments["new_str"])
    lines = block.split("\n")
    at = arguments.get("insert_line", -1)
    at = len(lines) if at == -1 else at
    return "\n".join(lines[:at] + arguments["new_str"].split("\n") + lines[at:])


def _plan_status(done: str | None, marker: str | None) -> str:
    if done:
        return "completed"
    return {" ← now": "in_progress", " (no longer needed)": "cancelled"}.get(
        marker or "", "pending"
    )


def _todo_lists(session: EvalSession) -> list[list[dict[str, str]]]:
    """Every to-do list the session wrote, as (description, status) items: Gemini's and
    deepagents' `write_todos` items, Goose's `todo__write` Markdown checklist, Continue's checklist
    message, Zed's numbered plan read back, Windsurf's plan table, Crush's `todos` and
    Copilot's `manage_todo_list` lists, the homegrown agent's `plan_set` plans, Kiro's
    tasks.md as its calls leave it, Plandex's `set_subtasks` lists, Warp's to-dos by id,
    Augment's tasks by the ids its `add_tasks` answers give them, Open Interpreter's plan
    recaps in its prose, Cursor's `todo_write` items merged by id, Amp's `todo_write`
    list, smolagents' planning steps, the plans Trae's `sequentialthinking` thoughts hold,
    Roo's `update_todo_list` checklists, a letta-style agent's plan memory block as its
    memory edits leave it, a CrewAI agent's `task_checklist` steps, the plans an AutoGen
    assistant writes in its prose, a Refact agent's checklist messages, the work items a
    SWE-kit assistant lists in its own messages, gptme's todo list as the operations of its
    `todo write` blocks leave it, a Moatless agent's tasks as its CreateTasks and
    UpdateTask calls leave them, the work items an AutoCodeRover-style assistant numbers
    in its own text, the checklist a Desktop-Commander-driven assistant writes in its
    replies, or the `<task_progress>` checklists a Cline-over-MCP assistant's XML tool uses
    carry (each change once: the same list is sent again after the focus chain's
    reminders)."""
    from compaction.eval.families.acr import WORK_HEADING as ACR_WORK
    from compaction.eval.families.dc import PLAN_HEADING as DC_PLAN
    from compaction.eval.families.gptme import todo_operations
    from compaction.eval.families.gptme import tool_blocks as gptme_blocks
    from compaction.eval.families.open_interpreter import PLAN_OPENERS as OI_OPENERS
    from compaction.eval.families.refact import PLAN_HEADING as REFACT_PLAN
    from compaction.eval.families.swekit import PLAN_HEADING as SWEKIT_PLAN
    from compaction.eval.families.void import PLAN_HEADING as VOID_PLAN
    from compaction.eval.families.windsurf import PLAN_HEADING
    from compaction.eval.families.zed import PLAN_OPENERS

    lists = []
    merged: dict[str, dict[str, str]] = {}
    warp: dict[str, dict[str, str]] = {}  # Warp's to-dos by id, in the order created
    spec: dict[str, str] = {}  # Kiro's tasks.md: task → status
    augment: dict[str, dict[str, str]] = {}  # Augment's tasks by id, in the order added
    moatless: dict[str, dict[str, Any]] = {}  # Moatless's tasks by id
    letta_plan = ""  # a letta-style agent's plan memory block
    gptme: dict[str, dict[str, str]] = {}  # gptme's todo list by id, as todo.py keeps it
    cline_last: list[dict[str, str]] = []  # the last task_progress list a Cline tool use sent
    answers = {r.tool_call_id: r.text for m in session.conversation.messages
               for r in m.tool_results}  # fmt: skip
    for message in session.conversation.messages:
        text = message.text if message.role == "assistant" else ""
        if (smol := _smolagents_plan(text)) is not None:
            lists.append(smol)
        if (crew := _crewai_checklist(text)) is not None:
            lists.append(crew)
        if (autogen := _autogen_plan(text)) is not None:
            lists.append(autogen)
        if text.startswith(PLAN_OPENERS):
            steps = [_PLAN_STEP.match(line) for line in text.splitlines()[1:] if line]
            assert all(steps), text
            lists.append(
                [
                    {"description": m.group(3), "status": _plan_status(m.group(1), m.group(5))}
                    for m in steps
                    if m
                ]
            )
        if text.startswith(SWEKIT_PLAN):  # SWE-kit: work items in the assistant's messages
            rows = [_SWEKIT_ITEM.match(line) for line in text.splitlines()[1:]]
            assert all(rows), text
            lists.append([{"description": m[2], "status": _SWEKIT_STATUS[m[1]]}
                          for m in rows if m])  # fmt: skip
        if text.startswith(VOID_PLAN):  # Void: a checklist in the assistant's own words
            items = []
            for line in text.splitlines()[1:]:
                match = _CHECKBOX.match(line)
                assert match, line
                done, _, item, _, state = match.groups()
                status = "completed" if done == "x" else state or "pending"
                items.append({"description": item, "status": status.replace(" ", "_")})
            lists.append(items)
        if text.startswith(ACR_WORK):  # AutoCodeRover-style: work items in its own text
            rows = [_ACR_ITEM.match(line) for line in text.splitlines()[1:]]
            assert all(rows), text
            lists.append([{"description": m[2], "status": _ACR_MARK[m[1]]} for m in rows if m])
        if text.startswith(DC_PLAN):  # Desktop Commander: a checklist in the assistant's text
            checks = [_DC_ITEM.match(line) for line in text.splitlines()[1:]]
            assert all(checks), text
            lists.append([{"description": m[3], "status": "completed" if m[1] == "x" else
                           _DC_MARK.get(m[5] or "", "pending")} for m in checks if m])  # fmt: skip
        progress = _CLINE_PROGRESS.search(text)
        if progress:  # Cline: "- [x]" done, "- [ ]" open, the first open one worked on
            rows = [_CLINE_ITEM.match(line) for line in progress[1].splitlines()]
            assert all(rows), progress[1]
            items = [{"description": m[2], "status": "completed" if m[1] == "x" else "pending"}
                     for m in rows if m]  # fmt: skip
            waiting = [item for item in items if item["status"] == "pending"]
            if waiting:
                waiting[0]["status"] = "in_progress"
            if items != cline_last:
                lists.append(items)
                cline_last = items
        if text.startswith(REFACT_PLAN):  # Refact: a checklist in the assistant's own words
            rows = [_REFACT_ITEM.match(line)
                    for line in text.split("\n\n", 1)[0].splitlines()[1:]]  # fmt: skip
            assert all(rows), text
            lists.append([{"description": m[3], "status": _REFACT_MARK[m[1]]} for m in rows if m])
        for info, content in gptme_blocks(text):  # gptme: `todo write` operations
            if info != "todo write":
                continue
            for operation, *arguments in todo_operations(content):
                if operation == "add":
                    todo_id = str(max((int(k) for k in gptme), default=0) + 1)
                    gptme[todo_id] = {"description": " ".join(arguments), "status": "pending"}
                elif operation == "update":
                    gptme[arguments[0]]["status"] = arguments[1]
                else:
                    assert operation == "remove", operation
                    del gptme[arguments[0]]
            lists.append([dict(item) for item in gptme.values()])
        if text.startswith(OI_OPENERS):
            steps = [_OI_STEP.match(line) for line in text.splitlines() if line[:1].isdigit()]
            assert all(steps), text
            lists.append([{"description": m[1], "status": _OI_STATUS[m[2]]} for m in steps if m])
        if text.startswith(PLAN_HEADING):
            rows = [_PLAN_ROW.match(line) for line in text.splitlines()[4:]]
            assert all(rows), text
            lists.append(
                [
                    {"description": m.group(1), "status": _PLAN_ROW_STATUS[m.group(2)]}
                    for m in rows
                    if m
                ]
            )
        if "Checklist for this fix:" in text:
            lines = [_CHECKLIST_LINE.match(line) for line in text.splitlines()]
            lists.append(
                [
                    {"description": m.group(2), "status": _CHECKLIST_STATUS[m.group(1)]}
                    for m in lines
                    if m
                ]
            )
        if any(c.name in ("CreateTasks", "UpdateTask") for c in message.tool_calls):
            # Moatless: one node's task calls, the list as they leave it, in priority order;
            # the open task first in that order is the one worked on.
            for call in message.tool_calls:
                arguments = json.loads(call.arguments)
                if call.name == "CreateTasks":
                    for task in arguments["tasks"]:
                        moatless[task["id"]] = {"description": task["content"], "state": "open",
                                                "priority": task["priority"]}  # fmt: skip
                elif call.name == "UpdateTask":
                    moatless[arguments["task_id"]]["state"] = arguments["state"]
            ordered = sorted(moatless.items(), key=lambda kv: (kv[1]["priority"], kv[0]))
            items = [{"description": t["description"], "status": _MOATLESS_STATE[t["state"]]}
                     for _, t in ordered]  # fmt: skip
            waiting = [item for item in items if item["status"] == "pending"]
            if waiting:
                waiting[0]["status"] = "in_progress"
            lists.append(items)
        for call in message.tool_calls:
            arguments = json.loads(call.arguments)
            if call.name in ("memory_insert", "memory_replace"):
                # Letta: the plan memory block as each edit leaves it.
                if arguments["label"] == "plan":
                    letta_plan = _letta_block(letta_plan, call.name, arguments)
                    steps = [_LETTA_STEP.match(line) for line in letta_plan.splitlines()]
                    lists.append([{"description": m[2], "status": _LETTA_STATUS[m[1]]}
                                  for m in steps if m])  # fmt: skip
            elif call.name == "write_todos":  # Gemini's items say `description`, deepagents'
                items = arguments["todos"]  # `content`; either writes the whole list
                lists.append(
                    [
                        {"description": i.get("description", i.get("content")),
                         "status": i["status"]}
                        for i in items
                    ]
                )  # fmt: skip
            elif call.name == "todos":  # Crush: the whole list, a dropped item left out
                items = arguments["todos"]
                lists.append([{"description": i["content"], "status": i["status"]} for i in items])
            elif call.name == "manage_todo_list":  # Copilot: likewise, in its own spelling
                items = arguments["todoList"]
                lists.append(
                    [{"description": i["title"], "status": _TODO_STATE[i["status"]]} for i in items]
                )
            elif call.name in ("fsWrite", "fsAppend", "strReplace", "taskStatus"):
                # Kiro: the spec's tasks.md as each call leaves it.
                if arguments.get("path", arguments.get("taskFilePath", "")).endswith("tasks.md"):
                    if call.name == "taskStatus":
                        spec[arguments["task"].split(". ", 1)[1]] = _KIRO_STATUS[
                            arguments["status"]
                        ]
                    elif call.name == "strReplace" and arguments["newStr"] == "":
                        for line in arguments["oldStr"].splitlines():
                            match = _KIRO_TASK.match(line)
                            if match:
                                del spec[match[2]]
                    else:
                        for line in arguments["text"].splitlines():
                            match = _KIRO_TASK.match(line)
                            if match:
                                spec[match[2]] = "pending"
                    lists.append([{"description": d, "status": st} for d, st in spec.items()])
            elif call.name in ("add_tasks", "update_tasks"):
                # Augment: added tasks get their ids in the answer; updates name ids only.
                if call.name == "add_tasks":
                    ids = dict(_AUGMENT_TASK.findall(answers[call.id]))
                    named = {name: task_id for task_id, name in ids.items()}
                    for item in arguments["tasks"]:
                        augment[named[item["name"]]] = {
                            "description": item["name"],
                            "status": _AUGMENT_STATE[item.get("state", "NOT_STARTED")],
                        }
                else:
                    for item in arguments["tasks"]:
                        augment[item["task_id"]]["status"] = _AUGMENT_STATE[item["state"]]
                lists.append([dict(item) for item in augment.values()])
            elif call.name == "sequentialthinking":  # Trae: a thought that holds the plan
                steps = _TRAE_STEP.findall(arguments["thought"])
                if steps:
                    lists.append([{"description": d, "status": _TRAE_STATUS[st]}
                                  for _, st, d in steps])  # fmt: skip
            elif call.name == "update_todo_list":  # Roo: one markdown checklist, `[-]` in
                # progress; a dropped item is left out of the next list
                rows = [_ROO_ITEM.match(line) for line in arguments["todos"].splitlines()]
                assert all(rows), arguments["todos"]
                lists.append([{"description": m[2], "status": _ROO_MARK[m[1]]} for m in rows if m])
            elif call.name == "set_subtasks":  # Plandex: the whole list each time
                lists.append(
                    [
                        {"description": i["title"], "status": _SUBTASK_STATUS[i["status"]]}
                        for i in arguments["subtasks"]
                    ]
                )
            elif call.name == "plan_set":  # the homegrown agent: the whole plan each time
                lists.append(
                    [
                        {"description": i["title"], "status": _PLAN_SET_STATE[i["state"]]}
                        for i in arguments["steps"]
                    ]
                )
            elif call.name in _WARP_TODO_TOOLS:
                # Warp: pending or completed, the first pending one being worked on; a to-do
                # left out of the pending list is dropped.
                if call.name == "create_todo_list":
                    items = arguments["initial_todos"]
                    warp = {i["id"]: {"description": i["title"], "status": "pending"}
                            for i in items}  # fmt: skip
                elif call.name == "mark_todos_completed":
                    for todo in arguments["todo_ids"]:
                        warp[todo]["status"] = "completed"
                else:
                    pending = {i["id"]: i["title"] for i in arguments["updated_pending_todos"]}
                    warp = {k: v for k, v in warp.items()
                            if v["status"] != "pending" or k in pending}  # fmt: skip
                    for todo, title in pending.items():
                        warp.setdefault(todo, {"description": title, "status": "pending"})
                listed = [dict(item) for item in warp.values()]
                waiting = [item for item in listed if item["status"] == "pending"]
                if waiting:
                    waiting[0]["status"] = "in_progress"
                lists.append(listed)
            elif call.name == "todo_write":
                # Cursor merges by id when asked; Amp (no `merge`) replaces the whole list,
                # in its own status words.
                if not arguments.get("merge", False):
                    merged = {}
                for item in arguments["todos"]:
                    merged.setdefault(item["id"], {}).update(item)
                lists.append(
                    [
                        {
                            "description": i["content"],
                            "status": _AMP_STATUS.get(i["status"], i["status"]),
                        }
                        for i in merged.values()
                    ]
                )
            elif call.name == "todo__write":
                items = []
                for line in arguments["content"].splitlines():
                    match = _CHECKBOX.match(line)
                    if match:
                        done, _, text, _, state = match.groups()
                        status = "completed" if done == "x" else state or "pending"
                        status = status.replace(" ", "_")
                        items.append({"description": text, "status": status})
                lists.append(items)
    return lists


@pytest.mark.parametrize("family", VARIANT)
def test_the_second_thoughts_variant_supersedes_twice(family: str) -> None:
    # The variant: the first value set is changed twice, the plan revised twice, a to-do
    # added and one cancelled, a figure the assistant's answer carries.
    for session in sessions(family):
        text = conversation_text(session.conversation).casefold()
        values = [f for f in session.facts if f.category == "changed_value"]
        twice = [f for f in values if len(f.stale) == 2]
        assert len(values) == 2 and len(twice) == 1
        [decision] = [f for f in session.facts if f.category == "decision"]
        assert len(decision.stale) == 2
        # Each superseded form was current once, and every later form follows it.
        for fact in (*twice, decision):
            order = [text.index(s.casefold()) for s in fact.stale]
            assert order == sorted(order), fact.id
            assert text.rindex(fact.probe[-1].casefold()) > max(order), fact.id
        lists = _todo_lists(session)
        ever = {item["description"] for items in lists for item in items}
        assert len(ever) == len(lists[0]) + 1
        statuses = [item["status"] for item in lists[-1]]
        assert statuses.count("in_progress") == 1
        # Cancelled: marked so, or (a tool without that state) left out of the last list.
        last = {item["description"] for item in lists[-1]}
        dropped = [i["description"] for i in lists[-2] if i["description"] not in last]
        marked = [i["description"] for i in lists[-1] if i["status"] == "cancelled"]
        [cancelled] = marked + dropped
        [cancelled_fact] = [f for f in session.facts if f.probe == (cancelled,)]
        assert not cancelled_fact.required
        identifiers = [f for f in session.facts if f.category == "identifier"]
        assert len(identifiers) == 2


def test_the_other_families_do_not_tell_the_variant() -> None:
    for family in FAMILIES:
        # codeact-style is not told by `story.tell`: its own story changes a value twice (and
        # codeact-terse-style tells the same story); so do ccstory-style's, cxstory-style's,
        # gcstory-style's, ohstory-style's, aiderstory-style's, ocstory-style's, gsstory-style's,
        # roostory-style's, qstory-style's, copilotstory-style's, cursorstory-style's,
        # qwenstory-style's, zedstory-style's, ampstory-style's, windsurfstory-style's,
        # crushstory-style's, kimistory-style's, forgestory-style's, vibestory-style's,
        # manusstory-style's, pistory-style's, codebuffstory-style's, octostory-style's and
        # nanostory-style's.
        own_story = ("codeact-style", "codeact-terse-style", "ccstory-style", "cxstory-style",
                     "gcstory-style", "ohstory-style", "aiderstory-style",
                     "ocstory-style", "gsstory-style", "roostory-style",
                     "qstory-style", "copilotstory-style", "cursorstory-style",
                     "qwenstory-style", "zedstory-style", "ampstory-style",
                     "windsurfstory-style", "crushstory-style", "kimistory-style",
                     "forgestory-style", "vibestory-style", "manusstory-style",
                     "pistory-style", "codebuffstory-style", "octostory-style",
                     "nanostory-style")  # fmt: skip
        if family in VARIANT or family in own_story:
            continue
        for session in sessions(family):
            assert all(len(f.stale) <= 1 for f in session.facts)
            assert "cancelled" not in conversation_text(session.conversation)


@pytest.mark.parametrize("family", VARIANT)
def test_a_new_familys_wording_is_its_own(family: str) -> None:
    # Families written after the digest was tuned share no phrasing with any other voice.
    from compaction.eval.families import _VOICES

    [own] = [voice for voice in _VOICES if voice.family == family]
    theirs = {
        template.casefold()
        for voice in _VOICES
        if voice is not own
        for options in voice.phrases.values()
        for template in options
    }
    mine = {t.casefold() for options in own.phrases.values() for t in options}
    assert mine and not mine & theirs


#: Families whose planted files the ruler's extraction does not yet read all of, and why.
_RULER_GAPS = {
    "acr-style": "the ruler reads no patch written in the assistant's text: AutoCodeRover's "
    "<file>/<original>/<patched> modifications (a new file's with an empty <original>) make "
    "no provider tool call, so no file they modify or create is extracted",
    "octostory-style": "the ruler reads no file the system prompt names: Octofriend's system "
    'prompt lists the working directory\'s entries ({"entry":"main.ts","isDirectory":false} …), '
    "so main.ts and deno.json, modified at the repository root with edit {filePath, search, "
    "replace}, are not extracted",
    "copilotstory-style": "the ruler reads no path nested in a list of edits: Copilot's "
    "multi_replace_string_in_file {explanation, replacements: [{filePath, oldString, "
    "newString}]} is the only edit of appsettings.json, so that modified file is not extracted",
}


@pytest.mark.parametrize(
    "family",
    [
        pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=_RULER_GAPS[f]))
        if f in _RULER_GAPS
        else f
        for f in FAMILIES
    ],
)
def test_the_rulers_own_extraction_finds_the_planted_files(family: str) -> None:
    # Two independent readings agree: the files the story planted are the ones the ruler's
    # extraction rules read off the raw session.
    session = sessions(family)[0]
    extracted = [f.probe[0] for f in extract_probes(session.conversation)]
    for fact in session.facts:
        if fact.category in ("file_modified", "file_created", "file_deleted"):
            assert any(p.endswith(fact.probe[0]) for p in extracted), fact.probe


def test_truncation_alone_loses_most_of_what_was_planted() -> None:
    from compaction import CompactionConfig, Compactor

    session = sessions("codex-style")[0]
    config = CompactionConfig.from_dict({"strategies": [{"kind": "truncate"}]})
    compactor = Compactor(config, counter=counter())
    target = int(counter().total(session.conversation) * 0.15)
    result = compactor.compact(session.conversation, max_tokens=target)
    marks = score(session.facts, conversation_text(result.conversation))
    assert marks.overall.value < 0.6


def test_warp_style_speaks_warps_agent_mode_tools() -> None:
    mine = _shapes("warp-style")
    assert set(mine) == {
        "run_command", "read_shell_command_output", "read_files", "edit_files", "create_file",
        "grep", "file_glob", "search_codebase", "create_todo_list", "mark_todos_completed",
        "update_pending_todos",
    }  # fmt: skip
    assert mine["run_command"] == {
        "command", "is_read_only", "uses_pager", "is_risky", "wait_until_complete",
    }  # fmt: skip
    assert mine["read_shell_command_output"] == {"command_id", "on_completion"}
    assert mine["read_files"] == {"files"} and mine["create_file"] == {"file_path", "content"}
    assert mine["edit_files"] == {"summary", "diffs", "deleted_files"}
    assert mine["grep"] == {"queries", "path"} and mine["file_glob"] == {"patterns", "path"}
    assert mine["search_codebase"] == {"query", "path_filters", "codebase_path"}
    assert mine["create_todo_list"] == {"initial_todos"}
    assert mine["mark_todos_completed"] == {"todo_ids"}
    assert mine["update_pending_todos"] == {"updated_pending_todos"}
    # Names other agents use too (`run_command`, `create_file`, `grep`) carry other arguments.
    for family in FAMILIES:
        if family != "warp-style":
            theirs = _shapes(family)
            for name in set(mine) & set(theirs):
                assert mine[name] != theirs[name], (family, name)
    for session in sessions("warp-style"):
        for arguments, _ in _calls(session, "read_files"):
            for item in arguments["files"]:
                assert set(item) <= {"name", "line_ranges"} and item["name"].startswith("/")
        for arguments, _ in _calls(session, "edit_files"):
            for diff in arguments.get("diffs", []):
                assert set(diff) == {"file_path", "search", "replace"}
            assert all(set(gone) == {"file_path"} for gone in arguments.get("deleted_files", []))
            assert ("diffs" in arguments) != ("deleted_files" in arguments)


def test_warp_style_answers_with_its_protocols_result_messages() -> None:
    from compaction.eval.families.warp import BENCH, ROOT

    for session in sessions("warp-style"):
        runs = [(a, json.loads(r)) for a, r in _calls(session, "run_command")]
        for arguments, answer in runs:
            command = arguments["command"]
            assert answer["command"] == command
            assert not command.startswith(("cd ", "cat ", "tail ", "head "))
            if command.startswith("git "):
                assert command.startswith(("git --no-pager", "git ls-files")), command
            left = arguments.get("wait_until_complete", True) is False
            assert set(answer) == {"command", "long_running_command_snapshot"
                                   if left else "command_finished"}  # fmt: skip
        # The benchmark is left running and read back by its block's id when it completes.
        [(started, snapshot)] = [(a, r) for a, r in runs if "long_running_command_snapshot" in r]
        [(read_back, done)] = _calls(session, "read_shell_command_output")
        assert started["command"] == BENCH and read_back["on_completion"] is True
        block = snapshot["long_running_command_snapshot"]["command_id"]
        assert read_back["command_id"] == block
        assert json.loads(done)["command_finished"]["command_id"] == block
        finished = {a["command"]: [] for a, _ in runs}
        for arguments, answer in runs:
            if "command_finished" in answer:
                finished[arguments["command"]].append(answer["command_finished"])
        # zig build: the undeclared name at both calls, then a silent pass.
        builds = finished["zig build"]
        assert [b["exit_code"] for b in builds] == [1, 0] and builds[1]["output"] == ""
        flagged = re.findall(r"^(src/\w+\.zig):(\d+):(\d+): error: use of undeclared identifier "
                             r"'tenant_id'$", builds[0]["output"], re.M)  # fmt: skip
        assert [line for _, line, _ in flagged] == ["88", "93"]
        assert "error: the following command failed with 2 compilation errors:" in builds[0][
            "output"]  # fmt: skip
        assert "\nBuild Summary: 0/3 steps succeeded; 1 failed\n" in builds[0]["output"]
        # The fix: one edit_files call, one two-line hunk per call, each search unique.
        [fix] = [a for a, _ in _calls(session, "edit_files") if len(a.get("diffs", [])) == 2]
        assert {d["file_path"] for d in fix["diffs"]} == {f"{ROOT}/{flagged[0][0]}"}
        searches = [d["search"] for d in fix["diffs"]]
        assert len(set(searches)) == 2 and all(s.count("\n") == 1 for s in searches)
        assert all(s.endswith("tenant_id);") and "batch.tenant_id" not in s for s in searches)
        [filtered] = finished["zig build test -Dtest-filter=tenant --summary all"]
        assert filtered["exit_code"] == 0
        assert re.match(r"Build Summary: 3/3 steps succeeded; (\d+)/\1 tests passed\n",
                        filtered["output"])  # fmt: skip
        # zig build test: each failed test reported with what expectEqual saw, counted in the
        # build summary.
        tests = finished["zig build test"]
        assert len(tests) == 2 and all(t["exit_code"] == 1 for t in tests)
        for run in tests:
            out = run["output"]
            [(passed, total, failed)] = re.findall(
                r"^Build Summary: 3/5 steps succeeded; 1 failed; (\d+)/(\d+) tests passed; "
                r"(\d+) failed$", out, re.M)  # fmt: skip
            assert int(passed) + int(failed) == int(total)
            reported = re.findall(r"^error: '(\w+\.test\.[a-z ]+)' failed: expected \d+, "
                                  r"found \d+$", out, re.M)  # fmt: skip
            assert len(reported) == int(failed)
            assert out.count(f"run test {passed}/{total} passed, {failed} failed") == 2
        # The first failure run alone in Warp's terminal: the test runner's tty line.
        first = re.search(r"^error: '(.+?)' failed: (.+)$", tests[0]["output"], re.M)
        assert first is not None
        [alone] = [r for c, rs in finished.items() if c.startswith("zig test ") for r in rs]
        assert alone["exit_code"] == 1
        tty_line = f"1/1 {first[1]}...FAIL (TestExpectedEqual)"
        assert alone["output"].startswith(f"{first[2]}\n{tty_line}\n")
        assert "\n0 passed; 0 skipped; 1 failed.\n" in alone["output"]
        # read_files answers the lines asked for, under the path asked for.
        for arguments, answer in _calls(session, "read_files"):
            [item] = arguments["files"]
            [file] = json.loads(answer)["text_files_success"]["files"]
            assert file["file_path"] == item["name"]
            if "line_ranges" in item:
                [span] = item["line_ranges"]
                assert file["line_range"] == span
                assert file["content"].count("\n") + 1 == span["end"] - span["start"] + 1
            else:
                assert "line_range" not in file
        # grep carries line numbers only, as Warp's protocol does.
        for arguments, answer in _calls(session, "grep"):
            for match in json.loads(answer)["success"]["matched_files"]:
                assert match["file_path"].startswith(f"{ROOT}/{arguments['path']}/")
                assert all(set(line) == {"line_number"} for line in match["matched_lines"])
        for arguments, answer in _calls(session, "create_file"):
            [written] = json.loads(answer)["success"]["updated_files_v2"]
            assert written["file"]["file_path"] == arguments["file_path"]
            assert written["file"]["line_range"]["end"] == arguments["content"].count("\n")
        # The to-do tools answer with the ids pending and completed, and know no others.
        known: set[str] = set()
        for message in session.conversation.messages:
            for call in message.tool_calls:
                arguments = json.loads(call.arguments)
                if call.name == "create_todo_list":
                    known |= {i["id"] for i in arguments["initial_todos"]}
                elif call.name == "update_pending_todos":
                    known |= {i["id"] for i in arguments["updated_pending_todos"]}
                elif call.name == "mark_todos_completed":
                    assert set(arguments["todo_ids"]) <= known
        for name in _WARP_TODO_TOOLS:
            for _, answer in _calls(session, name):
                state = json.loads(answer)
                assert set(state) == {"pending", "completed"}
                assert set(state["pending"]) | set(state["completed"]) <= known
        assert session.conversation.messages[-1].role == "assistant"


def test_plandex_style_speaks_its_own_tools() -> None:
    mine = _shapes("plandex-style")
    assert set(mine) == {
        "run_exec", "load_context", "write_pending_file", "replace_in_pending_file",
        "remove_pending_file", "context_grep", "project_map", "set_subtasks",
    }  # fmt: skip
    assert mine["run_exec"] == {"cmd", "cwd"}
    assert mine["load_context"] == {"paths", "kind"}
    assert mine["write_pending_file"] == {"file_path", "content"}
    assert mine["replace_in_pending_file"] == {"file_path", "original", "replacement"}
    assert mine["remove_pending_file"] == {"file_path"}
    assert mine["context_grep"] == {"pattern", "dir"} and mine["project_map"] == {"dir"}
    assert mine["set_subtasks"] == {"subtasks"}
    # No other family calls a tool of these names.
    for family in FAMILIES:
        if family != "plandex-style":
            assert not set(mine) & set(_shapes(family)), family


_HSPEC_COUNTS = re.compile(r"^(\d+) examples, (\d+) failures?$", re.M)


def test_plandex_style_speaks_cabal_and_hspec() -> None:
    from compaction.eval.families.plandex import BUILD, ROOT

    for session in sessions("plandex-style"):
        builds: list[str] = []
        runs = 0
        for call, result in _calls(session, "run_exec"):
            assert call["cwd"] == ROOT
            status = re.search(r"\[exit status (\d+)\]$", result)
            assert status, result[-80:]
            if call["cmd"] == BUILD:
                builds.append(result)
            if call["cmd"].startswith("cabal test"):
                runs += 1
                [(total, failed)] = _HSPEC_COUNTS.findall(result)
                marks = re.findall(r"^  .+ \[(✔|✘)\]$", result, re.M)
                assert len(marks) == int(total) and marks.count("✘") == int(failed)
                assert result.count("To rerun use: --match") == int(failed)
                assert re.search(r"^Finished in 0\.\d{4} seconds$", result, re.M)
                assert status[1] == ("1" if int(failed) else "0")
                assert f"Test suite quayside-test: {'FAIL' if int(failed) else 'PASS'}" in result
        assert runs == 2
        # The build fails on GHC's out-of-scope error, then passes.
        first, second = builds
        assert re.search(r"^src/\w+\.hs:88:\d+: error: \[GHC-88464\]$", first, re.M)
        assert "    Variable not in scope: tenantId" in first and first.endswith("[exit status 1]")
        assert "error" not in second and second.endswith("[exit status 0]")
        for call, result in _calls(session, "load_context"):
            assert result.startswith(f"Loaded {len(call['paths'])} file")
            assert all(f"📄 {path}\n```haskell\n" in result for path in call["paths"])
        for call, result in _calls(session, "replace_in_pending_file"):
            assert result == f"Pending change: {call['file_path']} (+1 -1)"
        for call, result in _calls(session, "write_pending_file"):
            lines = call["content"].count("\n")
            assert result == f"Pending change: new file {call['file_path']} (+{lines} lines)"
        assert session.conversation.messages[-1].role == "assistant"


def test_deepagents_style_speaks_deepagents_and_langchain_tools() -> None:
    from compaction.eval.families.deepagents import ROOT

    mine = _shapes("deepagents-style")
    assert set(mine) == {
        "terminal", "ls", "read_file", "write_file", "edit_file", "glob", "grep", "write_todos",
        "task", "file_delete", "move_file",
    }  # fmt: skip
    assert mine["terminal"] == {"commands"}
    assert {"file_path"} <= mine["read_file"] <= {"file_path", "offset", "limit"}
    assert mine["write_file"] == {"file_path", "content"}
    assert {"file_path", "old_string", "new_string"} <= mine["edit_file"]
    assert mine["edit_file"] <= {"file_path", "old_string", "new_string", "replace_all"}
    assert mine["ls"] == {"path"} and mine["glob"] == {"pattern", "path"}
    assert {"pattern", "path"} <= mine["grep"] <= {"pattern", "path", "glob", "output_mode"}
    assert mine["write_todos"] == {"todos"} and mine["task"] == {"description", "subagent_type"}
    assert mine["file_delete"] == {"file_path"}
    assert mine["move_file"] == {"source_path", "destination_path"}
    for session in sessions("deepagents-style"):
        for message in session.conversation.messages:
            for call in message.tool_calls:
                arguments = json.loads(call.arguments)
                # deepagents' filesystem tools take absolute paths, and so do the toolkit's here.
                for key in ("path", "file_path", "source_path", "destination_path"):
                    if key in arguments:
                        assert arguments[key].startswith(f"{ROOT}/"), (call.name, arguments)
                if call.name == "terminal":  # ShellTool: a list of command strings
                    assert arguments["commands"] and all(
                        isinstance(c, str) for c in arguments["commands"]
                    )
        # write_todos: the whole list each time, with no cancelled state, and its answer is
        # that list as Python prints it.
        for arguments, result in _calls(session, "write_todos"):
            for item in arguments["todos"]:
                assert set(item) == {"content", "status"}
                assert item["status"] in {"pending", "in_progress", "completed"}
            assert result == f"Updated todo list to {arguments['todos']}"
        for arguments, result in _calls(session, "task"):
            assert arguments["subagent_type"] == "general-purpose"
            assert not result.startswith(("Updated", "Successfully"))


def test_deepagents_style_answers_as_its_tools_do() -> None:
    for session in sessions("deepagents-style"):
        # read_file: `cat -n` lines, six-wide numbers and a tab, from offset + 1.
        for arguments, result in _calls(session, "read_file"):
            lines = result.split("\n")
            numbers = [int(line.split("\t", 1)[0]) for line in lines]
            first = arguments.get("offset", 0) + 1
            assert numbers == list(range(first, first + len(lines)))
            assert all(re.match(r"^[ \d]{6}\t", line) for line in lines)
            assert len(lines) <= arguments.get("limit", 500)
        for arguments, result in _calls(session, "edit_file"):
            assert result == (
                f"Successfully replaced 1 instance(s) of the string in '{arguments['file_path']}'"
            )
        for arguments, result in _calls(session, "write_file"):
            assert result == f"Updated file {arguments['file_path']}"
        for arguments, result in _calls(session, "file_delete"):
            assert result == f"File deleted successfully: {arguments['file_path']}."
        [(move, moved)] = _calls(session, "move_file")
        assert moved == (
            f"File moved successfully from {move['source_path']} to {move['destination_path']}."
        )
        for call_name in ("ls", "glob"):
            for _, result in _calls(session, call_name):
                assert result.startswith("['/") and result.endswith("']")
        # The ShellTool answers output only: no exit status, whatever the command did.
        for _, result in _calls(session, "terminal"):
            assert "exit code" not in result.casefold() and "exit status" not in result.casefold()
        assert session.conversation.messages[-1].role == "assistant"


_ALCOTEST_SUMMARY = re.compile(
    r"^(?:(\d+) failures?! |Test Successful )in 0\.\d{3}s\. (\d+) tests run\.$", re.M
)


def test_deepagents_style_speaks_dune_and_alcotest() -> None:
    from compaction.eval.families.deepagents import BENCH, BUILD, TEST

    for session in sessions("deepagents-style"):
        runs = [(a["commands"], r) for a, r in _calls(session, "terminal")]
        # dune build: the unbound name, located and underlined, then a silent build.
        builds = [r for c, r in runs if c == [BUILD]]
        assert len(builds) == 2 and builds[1] == ""
        located = re.match(r'^File "(lib/\w+\.ml)", line (\d+), characters (\d+)-(\d+):\n'
                           r"\2 \| (.+)\n( *)(\^+)\nError: Unbound value tenant_id$",
                           builds[0])  # fmt: skip
        assert located, builds[0]
        start, end = int(located[3]), int(located[4])
        assert located[5][start:end] == "tenant_id" and len(located[7]) == end - start
        assert len(located[6]) == len(f"{located[2]} | ") + start
        # The fix reads the lines the error points at, then edits that one line.
        [window] = [(a, r) for a, r in _calls(session, "read_file")
                    if a["file_path"].endswith(located[1]) and a.get("offset") == 80]  # fmt: skip
        assert f"\n    {located[2]}\t{located[5]}\n" in window[1]
        # dune test: alcotest's [OK]/[FAIL] lines add up to its summary; the first failure is
        # boxed, the rest only listed.
        tests = [r for c, r in runs if c == [TEST]]
        assert len(tests) == 2
        for result in tests:
            assert result.startswith('File "test/dune", line 2, characters 7-20:\n')
            [(failed, total)] = _ALCOTEST_SUMMARY.findall(result)
            marks = re.findall(r"^  \[(OK|FAIL)\] +\w+ +\d+   .+\.$", result, re.M)
            assert len(marks) == int(total) and marks.count("FAIL") == int(failed)
            assert result.count("│ [FAIL]") == 1 and "   Expected: " in result
            assert "\nFull test results in `~/src/tidemark/_build/" in result
        # dune build @fmt: ocamlformat's diff of a file the session wrote, promoted.
        [fmt] = [r for c, r in runs if c == ["dune build @fmt --auto-promote"]]
        written = [a["file_path"] for a, _ in _calls(session, "write_file")]
        promoted = re.search(r"^Promoting _build/default/\S+ to (\S+)\.$", fmt, re.M)
        assert promoted and any(p.endswith(promoted[1]) for p in written)
        assert "\n--- a/_build/default/" in fmt and "\n+++ b/_build/default/" in fmt
        # core_bench: the figure the user keeps is the Time/Run cell.
        [bench] = [r for c, r in runs if c == [BENCH]]
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        assert re.search(rf"^│ flush one batch │ +{re.escape(figure)}us │", bench, re.M)


def test_the_rulers_extraction_reads_a_list_of_command_lines() -> None:
    # LangChain's ShellTool takes `commands`, a list of command lines run one after another:
    # the ruler reads them as the commands the agent ran, each probe a string of the session.
    session = sessions("deepagents-style")[0]
    text = conversation_text(session.conversation).casefold()
    ran = {f.text: f for f in extract_probes(session.conversation) if f.category == "command"}
    # (`dune build` and `dune test` the system prompt names: no strategy drops those.)
    for command in ("dune build @fmt --auto-promote", "opam lint tidemark.opam"):
        fact = ran[f"The agent ran `{command}`."]
        assert all(piece.casefold() in text for piece in fact.probe)
    # Every line of the list runs: a file the second one removes is a file deleted.
    payload = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "Drop the old shim."},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function", "function": {
                    "name": "terminal",
                    "arguments": json.dumps({"commands": ["git status --short",
                                                         "git rm -q lib/old_shim.ml"]}),
                }}]},
            {"role": "tool", "tool_call_id": "c1", "content": " M lib/outbox.ml\n"},
            {"role": "assistant", "content": "Removed lib/old_shim.ml."},
        ],
    }  # fmt: skip
    facts = extract_probes(OPENAI.decode(payload))
    assert ("file_deleted", ("lib/old_shim.ml",)) in [(f.category, f.probe) for f in facts]
    assert "The agent ran `git status --short`." in [f.text for f in facts]


def test_the_ruler_reads_files_a_tool_names_in_a_list_of_paths() -> None:
    # Augment's `remove-files` names its files in a `file_paths` list, not one path argument.
    messages = [
        {"role": "user", "content": "drop the two legacy relays"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function", "function": {
                "name": "remove-files",
                "arguments": json.dumps({"file_paths": ["src/LegacyA.scala", "src/LegacyB.scala"]}),
            }}]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": "File(s) removed: src/LegacyA.scala, src/LegacyB.scala"},
        {"role": "assistant", "content": "Both legacy relays are gone."},
    ]  # fmt: skip
    conversation = OPENAI.decode({"model": "gpt-4o", "messages": messages})
    deleted = [f.probe[0] for f in extract_probes(conversation) if f.category == "file_deleted"]
    assert sorted(deleted) == ["src/LegacyA.scala", "src/LegacyB.scala"]


def test_the_ruler_reads_commands_run_through_launch_process() -> None:
    # Augment's agent runs its shell commands through `launch-process` {command, wait, …}.
    arguments = {"command": "git mv src/A.scala src/B.scala && sbt compile", "wait": True,
                 "max_wait_seconds": 600, "cwd": "/home/dev/src/relay"}  # fmt: skip
    messages = [
        {"role": "user", "content": "rename A to B"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "launch-process", "arguments": json.dumps(arguments)}}]},
        {"role": "tool", "tool_call_id": "call_1", "content":
         "Here are the results from executing the command.\n<return-code>\n0\n</return-code>\n"
         "<output>\n[success] Total time: 4 s\n</output>"},
        {"role": "assistant", "content": "Renamed."},
    ]  # fmt: skip
    facts = extract_probes(OPENAI.decode({"model": "gpt-4o", "messages": messages}))
    found = {(f.category, f.probe[0]) for f in facts}
    assert ("command", "git mv src/A.scala src/B.scala && sbt compile") in found
    assert {("file_deleted", "src/A.scala"), ("file_created", "src/B.scala")} <= found


def test_the_ruler_reads_files_roos_apply_diff_modifies() -> None:
    # Roo Code's `apply_diff` {path, diff} edits the file its `path` names; its name says
    # neither edit nor replace.
    diff = (
        "<<<<<<< SEARCH\n:start_line:12\n-------\nlimit() -> 4.\n=======\nlimit() -> 8.\n"
        ">>>>>>> REPLACE"
    )
    messages = [
        {"role": "user", "content": "<task>\nraise the limit\n</task>"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function", "function": {
                "name": "apply_diff",
                "arguments": json.dumps({"path": "src/relay.erl", "diff": diff}),
            }}]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(
            {"path": "src/relay.erl", "operation": "modified", "notice": "…"})},
        {"role": "assistant", "content": "Raised."},
    ]  # fmt: skip
    conversation = OPENAI.decode({"model": "gpt-4o", "messages": messages})
    found = {(f.category, f.probe[0]) for f in extract_probes(conversation)}
    assert ("file_modified", "src/relay.erl") in found


def test_augment_style_speaks_augments_tools() -> None:
    mine = _shapes("augment-style")
    assert set(mine) == {
        "launch-process", "read-process", "view", "str-replace-editor", "save-file",
        "remove-files", "codebase-retrieval", "add_tasks", "update_tasks", "view_tasklist",
    }  # fmt: skip
    assert mine["launch-process"] == {"command", "wait", "max_wait_seconds", "cwd"}
    assert mine["read-process"] == {"terminal_id", "wait", "max_wait_seconds"}
    assert mine["view"] == {"path", "type", "view_range", "search_query_regex"}
    entries = {
        f"{key}_{k}"
        for k in (1, 2)
        for key in ("old_str", "new_str", "old_str_start_line_number", "old_str_end_line_number")
    }
    assert mine["str-replace-editor"] == {"command", "path", "instruction_reminder", *entries}
    assert mine["save-file"] == {"instructions_reminder", "path", "file_content",
                                 "add_last_line_newline"}  # fmt: skip
    assert mine["remove-files"] == {"file_paths"}
    assert mine["codebase-retrieval"] == {"information_request"}
    assert mine["add_tasks"] == mine["update_tasks"] == {"tasks"}
    assert mine["view_tasklist"] == set()
    # A name another agent uses too (`view`) carries other arguments there.
    for family in FAMILIES:
        if family != "augment-style":
            theirs = _shapes(family)
            for name in set(mine) & set(theirs):
                assert mine[name] != theirs[name], (family, name)
    states = {"NOT_STARTED", "IN_PROGRESS", "COMPLETE", "CANCELLED"}
    for session in sessions("augment-style"):
        for arguments, _ in _calls(session, "add_tasks"):
            for item in arguments["tasks"]:
                assert set(item) == {"name", "description", "state"} and item["state"] in states
        for arguments, _ in _calls(session, "update_tasks"):
            for item in arguments["tasks"]:
                assert set(item) == {"task_id", "state"} and item["state"] in states
        for arguments, _ in _calls(session, "str-replace-editor"):
            assert arguments["command"] == "str_replace"
            assert all(not key.startswith("insert_line") for key in arguments)
        for arguments, _ in _calls(session, "view"):
            assert arguments["type"] in ("file", "directory")
            assert not arguments["path"].startswith("/")  # relative to the workspace root


_LAUNCHED = re.compile(r"\AHere are the results from executing the command\.\n<return-code>\n"
                       r"(\d+)\n</return-code>\n<output>\n(.*)\n</output>\Z", re.S)  # fmt: skip
_SBT_COUNTS = re.compile(r"^\[(?:error|info)\] (?:Failed|Passed): Total (\d+), Failed (\d+), "
                         r"Errors 0, Passed (\d+)$", re.M)  # fmt: skip


def test_augment_style_speaks_sbt_and_munit() -> None:
    from compaction.eval.families.augment import BENCH, BUILD, ROOT

    for session in sessions("augment-style"):
        runs: dict[str, list[tuple[int, str]]] = {}
        for arguments, result in _calls(session, "launch-process"):
            assert arguments["cwd"] == ROOT and arguments["wait"] is True
            if arguments["command"] == BENCH:
                continue
            launched = _LAUNCHED.match(result)
            assert launched, result[:120]
            runs.setdefault(arguments["command"], []).append((int(launched[1]), launched[2]))
        # sbt compile: Scala 3's Not Found error at both calls, then the build passes.
        (failed_code, failed), (ok_code, ok) = runs[BUILD]
        flagged = re.findall(
            r"^\[error\] -- \[E006\] Not Found Error: "
            rf"{ROOT}/(src/main/scala/\S+\.scala):(\d+):(\d+) $",
            failed,
            re.M,
        )
        assert [line for _, line, _ in flagged] == ["88", "93"] and failed_code == 1
        assert failed.count("[error]    |") == 2 * 4 and failed.count("Not found: tenantId") == 2
        assert "[error] two errors found\n[error] (Compile / compileIncremental)" in failed
        assert ok_code == 0 and "[error]" not in ok and "\n[success] Total time: " in ok
        # The fix: one str-replace-editor call with two entries, at the lines sbt named.
        [fix] = [a for a, _ in _calls(session, "str-replace-editor") if "old_str_2" in a]
        assert fix["path"] == flagged[0][0]
        assert [fix[f"old_str_start_line_number_{k}"] for k in (1, 2)] == [88, 93]
        assert all(fix[f"old_str_{k}"].endswith("(batch, tenantId)") for k in (1, 2))
        assert all(fix[f"new_str_{k}"].endswith("(batch, batch.tenantId)") for k in (1, 2))
        # sbt test: munit's suites, every test counted once in sbt's summary.
        tests = runs["sbt test"]
        assert len(tests) == 2
        for code, out in tests:
            [(total, failed_tests, passed)] = _SBT_COUNTS.findall(out)
            ran = re.findall(r"^\[info\]   \+ .+ \d\.\d{3}s$", out, re.M)
            broken = re.findall(
                r"^\[error\] ==> X (com\.acme\.relay\.\w+Suite)\..+  \d\.\d{3}s "
                r"munit\.ComparisonFailException: \S+:\d+$",
                out,
                re.M,
            )
            assert len(ran) == int(passed) and len(broken) == int(failed_tests)
            assert int(total) == int(passed) + int(failed_tests)
            assert out.count("[error] values are not the same") == len(broken)
            listed = re.findall(r"^\[error\] \t(\S+)$", out, re.M)
            assert listed == list(dict.fromkeys(broken)) and code == 1
        for command in ("sbt scalafmtCheckAll", "sbt mimaReportBinaryIssues"):
            [(code, out)] = runs[command]
            assert code == 0 and out.startswith("[info] welcome to sbt 1.10.2")
        # The benchmark outlasts its wait and is read back from its terminal.
        [(started, running)] = [(a, r) for a, r in _calls(session, "launch-process")
                                if a["command"] == BENCH]  # fmt: skip
        terminal = re.search(r"^Terminal ID (\d+)$", running, re.M)
        assert running.startswith("Command is still running after 120 seconds.") and terminal
        [(read, done)] = _calls(session, "read-process")
        assert read["terminal_id"] == int(terminal[1]) and started["max_wait_seconds"] == 120
        assert done.startswith(f"Here is the output from terminal {terminal[1]} (status: "
                               "completed):\n<output>\n")  # fmt: skip
        [figure] = [f.probe[0] for f in session.facts if f.text.startswith("The figure")]
        assert re.search(rf"^\[info\] FlushBench\.oneBatch +avgt +5 +{re.escape(figure)} \u00b1 ",
                         done, re.M)  # fmt: skip
        # view answers as `cat -n` does, the lines asked for, and the file's length.
        for arguments, result in _calls(session, "view"):
            if arguments["type"] == "directory":
                assert result.startswith(
                    f"Here's the files and directories up to 2 levels deep "
                    f"in {arguments['path']}, excluding hidden items:\n"
                )
                continue
            total_lines = re.search(r"\nTotal lines in file: (\d+)\n?\Z", result)
            assert total_lines, result[-80:]
            numbered = re.findall(r"^[> ]?\s*(\d+)\t", result, re.M)
            if "search_query_regex" in arguments:
                assert result.startswith("Regex search results for pattern: ")
                assert len(re.findall(r"^>", result, re.M)) == 2
                continue
            first, last = arguments.get("view_range", [1, int(total_lines[1])])
            assert [int(n) for n in numbered] == list(range(first, last + 1))
        for arguments, result in _calls(session, "save-file"):
            assert result == "File saved.  Saved file {" + arguments["path"] + "}"
        for arguments, result in _calls(session, "remove-files"):
            assert result == "File(s) removed: " + ", ".join(arguments["file_paths"])
        assert session.conversation.messages[-1].role == "assistant"


def test_the_ruler_reads_code_an_execute_tool_runs() -> None:
    # Open Interpreter's one function, `execute` {language, code}: shell code is a command
    # the agent ran, and Python code changes the files its open/pathlib/os/shutil calls name.
    def run(language: str, code: str, output: str = "") -> dict[str, Any]:
        return {"language": language, "code": code, "output": output}

    steps = [
        run("shell", "sed -i 's/x = 1/x = 2/' src/a.lua && rm src/legacy_a.lua"),
        run("python", "open('src/b.lua', 'w').write('return {}\\n')\nprint('written')",
            "written"),
        run("python", "from pathlib import Path\nPath('src/a.lua').write_text('return 1\\n')"),
        run("python", "import os, shutil\nos.remove('src/old.lua')\n"
            "shutil.move('spec/x.json', 'spec/fixtures/x.json')"),
        run("python", "print(open('src/c.lua').read())", "return 3"),
        # A path bound to a name first, as the agent's Python often does.
        run("python", "from pathlib import Path\np = Path('src/d.lua')\ntext = p.read_text()\n"
            "p.write_text(text.replace('x = 1', 'x = 2'))"),
        run("python", "path = 'src/e.lua'\nwith open(path) as f:\n    s = f.read()\n"
            "with open(path, 'w') as f:\n    f.write(s + 'return M\\n')"),
    ]  # fmt: skip
    messages: list[dict[str, Any]] = [{"role": "user", "content": "tidy the lua sources"}]
    for k, step in enumerate(steps):
        arguments = {"language": step["language"], "code": step["code"]}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"c{k}", "type": "function",
                "function": {"name": "execute", "arguments": json.dumps(arguments)}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": step["output"] or "No output"},
        ]  # fmt: skip
    messages.append({"role": "assistant", "content": "Done."})
    facts = extract_probes(OPENAI.decode({"model": "gpt-4o", "messages": messages}))
    found = {(f.category, f.probe[0]) for f in facts}
    assert {
        ("file_modified", "src/a.lua"),
        ("file_deleted", "src/legacy_a.lua"),
        ("file_created", "src/b.lua"),
        ("file_deleted", "src/old.lua"),
        ("file_deleted", "spec/x.json"),
        ("file_created", "spec/fixtures/x.json"),
        ("file_modified", "src/d.lua"),
        ("file_modified", "src/e.lua"),
    } <= found
    assert not any(path == "src/c.lua" for _, path in found)  # read, not changed
    commands = [f.probe[0] for f in facts if f.category == "command"]
    assert any(c.startswith("sed -i 's/x = 1/x = 2/' src/a.lua") for c in commands)
    assert not any("open(" in c for c in commands)  # Python code is no command line


def test_open_interpreter_style_speaks_its_one_function() -> None:
    import ast

    mine = _shapes("open-interpreter-style")
    assert mine == {"execute": {"language", "code"}}
    for family in FAMILIES:
        if family != "open-interpreter-style":
            assert "execute" not in _shapes(family), family
    for session in sessions("open-interpreter-style"):
        calls = _calls(session, "execute")
        languages = Counter(arguments["language"] for arguments, _ in calls)
        assert set(languages) == {"shell", "python"} and min(languages.values()) >= 5
        for arguments, output in calls:
            # The console output only: never an exit status, "No output" when silent.
            assert output.strip() and "exit code" not in output.lower()
            assert "<return-code>" not in output and "Exit code" not in output
            if arguments["language"] == "python":
                ast.parse(arguments["code"])  # the model's Python runs
        codes = [arguments["code"] for arguments, _ in calls]
        # Files change through code: Python's file calls, sed -i, heredocs.
        assert any('open(path, "w")' in c or ".write_text(" in c for c in codes)
        assert any(c.startswith("import os\nos.remove(") for c in codes)
        assert any("shutil.move(" in c for c in codes)
        assert any(c.startswith("cat > ") and "<<'EOF'" in c for c in codes) or any(
            c.startswith("from pathlib import Path\nPath(") for c in codes
        )
        silent = [out for arguments, out in calls if arguments["code"].startswith("sed -i ")]
        assert all(out == "No output" for out in silent)


def test_open_interpreter_style_keeps_its_plan_in_prose() -> None:
    from compaction.eval.families.open_interpreter import PLAN_OPENERS

    for session in sessions("open-interpreter-style"):
        plans = [m.text for m in session.conversation.messages
                 if m.role == "assistant" and m.text.startswith(PLAN_OPENERS)]  # fmt: skip
        assert len(plans) == 3 and plans[0].startswith("Here's the plan:")
        assert all(p.startswith("Recap of the plan:") for p in plans[1:])
        # Steps are numbered 1..N in each, the variant's added step last.
        for plan in plans:
            numbers = [int(line.split(".", 1)[0]) for line in plan.splitlines()
                       if line[:1].isdigit()]  # fmt: skip
            assert numbers == list(range(1, len(numbers) + 1))
        assert "— dropped" in plans[-1] and "— dropped" not in plans[1]
        # The assistant narrates what it runs.
        narrated = [m for m in session.conversation.messages if m.tool_calls and m.text]
        assert len(narrated) >= len(_calls(session, "execute")) // 2


_BUSTED_COUNTS = re.compile(
    r"^(\d+) successes / (\d+) failures? / 0 errors / 0 pending : \d+\.\d{6} seconds$", re.M
)


def test_open_interpreter_style_speaks_busted_luacheck_and_lua() -> None:
    from compaction.eval.families.open_interpreter import NIL_TENANT, TEST

    for session in sessions("open-interpreter-style"):
        runs = [(a["code"], out) for a, out in _calls(session, "execute") if a["code"] == TEST]
        assert len(runs) == 2
        counts = []
        for _, output in runs:
            dots, summary = output.split("\n")[:2]
            assert set(dots) <= {"●", "◼"}
            found = _BUSTED_COUNTS.match(summary)
            assert found, summary
            passed, failed = int(found[1]), int(found[2])
            assert dots.count("◼") == failed and dots.count("●") == passed
            blocks = re.findall(r"^Failure → (spec/(\w+)_spec\.lua) @ (\d+)\n(.+)\n"
                                r"\1:(\d+): Expected objects to be the same\.\nPassed in:\n",
                                output, re.M)  # fmt: skip
            assert len(blocks) == failed
            for _, module, line, name, at in blocks:
                assert name.startswith(f"{module} ") and int(at) == int(line) + 3
            counts.append((failed, passed))
        assert counts[0][0] == 3 and counts[1] == (1, counts[0][1] + 2)
        [status] = [f for f in session.facts if f.category == "test_status"]
        assert status.probe == (f"{counts[1][1]} successes / 1 failure / 0 errors / 0 pending",)
        lint = [out for a, out in _calls(session, "execute") if a["code"] == "luacheck src spec"]
        assert lint and re.search(r"^Total: 0 warnings / 0 errors in \d+ files$", lint[0], re.M)
        # The Lua runtime error, with its traceback, then the same run passing.
        flush = [(a["code"], out) for a, out in _calls(session, "execute")
                 if a["code"].startswith("lua bin/flush_once.lua")]  # fmt: skip
        assert len(flush) == 2 and flush[0][0] == flush[1][0]
        first, after = flush[0][1].split("\n"), flush[1][1]
        assert re.fullmatch(rf"lua: src/\w+\.lua:88: {re.escape(NIL_TENANT)}", first[0])
        assert first[1] == "stack traceback:" and first[-1] == "\t[C]: in ?"
        assert "lua:" not in after and "0 left parked" in after


def test_open_interpreter_style_is_measured_as_anthropic_messages_too() -> None:
    for _session, payload in _as_anthropic("open-interpreter-style"):
        blocks = [b for m in payload["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        uses = [b for b in blocks if b["type"] == "tool_use"]
        answered = [b for b in blocks if b["type"] == "tool_result"]
        assert uses and all(b["name"] == "execute" for b in uses)
        assert all(set(b["input"]) == {"language", "code"} for b in uses)
        assert {b["tool_use_id"] for b in answered} == {b["id"] for b in uses}
        # The narration rides in the same assistant turn as its call.
        assert any(b["type"] == "text" for b in blocks)
        assert ANTHROPIC.validate(ANTHROPIC.decode(payload)) == []


def test_the_ruler_reads_the_tool_calls_of_a_code_agents_code() -> None:
    # A smolagents CodeAgent acts in Python inside its own text (`<code>…</code>`, or
    # ```py … ``` closed by <end_code> in older releases): each call of a tool function in
    # the code is a call by that name with its keyword arguments, answered by the next
    # message's `Observation:`; code that raised (`Error:`) changed nothing.
    code = (
        'print(edit_file(path="R/outbox.R", old_text="x <- 1", new_text="x <- 2"))\n'
        'print(run_shell(command="git rm R/legacy_shim.R"))\n'
        "for p in ['R/a.R']:\n    print(read_file(path=p))"
    )
    failing = 'print(write_file(path="R/never.R", content="x"))\nundefined_name'
    messages = [
        {"role": "user", "content": "New task:\nfix the outbox"},
        {"role": "assistant", "content": f"Thought: edit and clean up.\n<code>\n{code}\n</code>"},
        {"role": "user", "content": "Observation:\nExecution logs:\nReplaced 1 occurrence\n"
                                    "exit status: 0\nLast output from code snippet:\nNone"},
        {"role": "assistant", "content": f"Thought: a new file.\n```py\n{failing}\n```<end_code>"},
        {"role": "user", "content": "Call id: call_3\nError:\nCode execution failed at line "
                                    "'undefined_name' due to: InterpreterError: The variable "
                                    "`undefined_name` is not defined."},
        {"role": "assistant", "content": "Thought: write it.\n```py\n"
                                         'write_file(path="R/store.R", content="y <- 1")\n'
                                         "```<end_code>"},
        {"role": "user", "content": "Observation:\nExecution logs:\n"
                                    "Last output from code snippet:\nWrote 6 bytes"},
        {"role": "assistant", "content": "Thought: not run.\n<code>\n"
                                         'write_file(path="R/unrun.R", content="z")\n</code>'},
        {"role": "user", "content": "New task:\nstop there"},
    ]  # fmt: skip
    facts = extract_probes(OPENAI.decode({"model": "gpt-4o", "messages": messages}))
    found = {(f.category, f.probe[0]) for f in facts}
    assert {("file_modified", "R/outbox.R"), ("file_deleted", "R/legacy_shim.R"),
            ("file_created", "R/store.R")} <= found  # fmt: skip
    assert ("command", "git rm R/legacy_shim.R") in found
    # The raising block and the block nobody ran changed no file.
    assert not {p for _, p in found} & {"R/never.R", "R/unrun.R"}


_SMOL_STEP_TEXT = re.compile(
    r"\AThought: (.+?)\n<code>\n(.*?)\n</code>\nCalling tools:\n(\[.*\])\Z", re.DOTALL
)
_SMOL_TOOLS = {"run_shell", "read_file", "write_file", "edit_file", "search_files", "list_files",
               "final_answer", "print", "open"}  # fmt: skip


def test_smolagents_style_acts_in_python_code_as_a_code_agent() -> None:
    import ast

    from compaction.eval.families.smolagents import PROCEED, RETRY

    for session in sessions("smolagents-style"):
        messages = session.conversation.messages
        assert all(not m.tool_calls and not m.tool_results for m in messages)
        steps = 0
        for k, message in enumerate(messages[1:], 1):
            text = message.text
            if message.role == "user":
                # Observations, errors, tasks and the answer to a plan, merged as smolagents
                # merges consecutive messages of one role.
                assert text.startswith(("Observation:\nExecution logs:\n", "Call id: call_",
                                        "New task:\n", PROCEED)), text[:80]  # fmt: skip
                continue
            if _smolagents_plan(text) is not None:
                continue
            step = _SMOL_STEP_TEXT.match(text)
            assert step, text[:200]
            [record] = ast.literal_eval(step[3])
            assert record["type"] == "function"
            assert record["function"] == {"name": "python_interpreter", "arguments": step[2]}
            number = int(record["id"].removeprefix("call_"))
            assert number > steps  # memory steps count up, tasks and plans included
            steps = number
            tree = ast.parse(step[2])
            called = {n.func.id for n in ast.walk(tree)
                      if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}  # fmt: skip
            assert called <= _SMOL_TOOLS, called
            answer = messages[k + 1].text
            if answer.startswith(f"Call id: {record['id']}\nError:\n"):
                assert "due to: InterpreterError: Forbidden function evaluation: 'open'" in answer
                assert answer.endswith(RETRY) and called == {"open", "print"}
                continue
            assert answer.startswith("Observation:\nExecution logs:\n")
            output = answer.split("Last output from code snippet:\n", 1)[1]
            if "final_answer" in called:
                [node] = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
                said = ast.literal_eval(node.args[0])
                assert output.split("\nNew task:\n")[0] == said
            else:
                assert output.split("\n")[0] == "None"  # the last line printed
        # The session ends on the final answer's observation.
        last = messages[-1]
        assert last.role == "user" and "Last output from code snippet:\n" in last.text


_TESTTHAT_COUNTS = re.compile(r"^\[ FAIL (\d+) \| WARN 0 \| SKIP 0 \| PASS (\d+) \]$", re.M)
_TESTTHAT_FAILURE = re.compile(r"^── Failure \((test-[a-z]+\.R):(\d+):3\): (.+) ─+$", re.M)


def test_smolagents_style_speaks_testthat_r_and_r_cmd_check() -> None:
    from compaction.eval.families.smolagents import BENCH, BUILD, TEST

    for session in sessions("smolagents-style"):
        text = conversation_text(session.conversation)
        runs = [m.text for m in session.conversation.messages
                if m.role == "user" and "ℹ Testing relaypost" in m.text]  # fmt: skip
        assert len(runs) == 2 and f'run_shell(command="{TEST}")' in text
        counts = []
        for run in runs:
            assert run.startswith("Observation:\nExecution logs:\nexit status: 1\n")
            assert "✔ | F W  S  OK | Context" in run and "══ Results ══" in run
            [(failed, passed)] = _TESTTHAT_COUNTS.findall(run)
            failures = _TESTTHAT_FAILURE.findall(run.split("══ Failed tests ═")[1])
            assert len(failures) == int(failed)
            for file, line, name in failures:
                # The test is in the file of its context, and listed above as it failed.
                assert f"Failure ({file}:{line}:3): {name}\n" in run.split("══ Results")[0]
            counts.append((int(failed), int(passed)))
        (f1, p1), (f2, p2) = counts
        assert (f1, f2) == (3, 1) and p2 == p1 + 2
        # The R error, then the same script running clean.
        broken = re.search(r"Error in ([a-z]+)_send\(batch, tenant = tenant_id\) : \n"
                           r"  object 'tenant_id' not found\nCalls: flush_parked -> \1_send\n"
                           r"Execution halted", text)  # fmt: skip
        # Run twice, each call in its code block and in the call record after it.
        assert broken and text.count(f'run_shell(command="{BUILD}")') == 4
        assert re.search(r"exit status: 0\nℹ Loading relaypost\nsmoke: flushed \d+ parked", text)
        assert "tenant = batch$tenant_id" in text
        assert "── R CMD check results ──" in text
        assert "0 errors ✔ | 0 warnings ✔ | 1 note ✖" in text
        assert re.search(r": style: \[line_length_linter\] Lines should not be more than 80", text)
        figure = next(f for f in session.facts if f.category == "identifier" and "." in f.probe[0])
        assert f'run_shell(command="{BENCH}")' in text
        assert "<bch:expr>" in text
        assert f"median per flush (microseconds): {figure.probe[0]}" in text


#: The tools a letta-style agent calls, and the arguments each takes besides Letta's own two.
_LETTA_TOOLS = {
    "send_message": {"message"},
    "memory_insert": {"label", "new_str", "insert_line"},
    "memory_replace": {"label", "old_str", "new_str"},
    "conversation_search": {"query", "page"},
    "archival_memory_insert": {"content"},
    "run_shell_command": {"command", "timeout"},
    "read_file": {"path"},
    "write_file": {"path", "content"},
    "replace_in_file": {"path", "old", "new"},
    "search_code": {"pattern", "path"},
    "list_directory": {"path"},
}
_LETTA_TIME = re.compile(r"^2026-11-2\d \d\d:\d\d:\d\d [AP]M UTC\+0000$")


def test_letta_style_speaks_only_through_tool_calls_with_inner_thoughts() -> None:
    from compaction.eval.families.letta import FAILED_HEARTBEAT, REQ_HEARTBEAT, TIMER

    for session in sessions("letta-style"):
        messages = session.conversation.messages
        seen: set[str] = set()
        kinds: Counter[str] = Counter()
        for k, message in enumerate(messages[1:], 1):
            if message.role == "user":
                packed = json.loads(message.text)
                kinds[packed["type"]] += 1
                assert _LETTA_TIME.match(packed["time"]), packed
                if packed["type"] == "heartbeat":
                    assert packed["reason"] in (REQ_HEARTBEAT, FAILED_HEARTBEAT, TIMER)
                continue
            if message.role == "tool":
                [result] = message.tool_results
                answer = json.loads(result.text)
                assert list(answer) == ["status", "message", "time"]
                assert answer["status"] in ("OK", "Failed") and _LETTA_TIME.match(answer["time"])
                continue
            # The assistant never writes text: its monologue is the call's first argument, what
            # the user reads is send_message's, and Letta's heartbeat flag comes last.
            assert message.role == "assistant" and not message.text
            [call] = message.tool_calls
            arguments = json.loads(call.arguments)
            keys = list(arguments)
            assert keys[0] == "inner_thoughts" and keys[-1] == "request_heartbeat"
            assert set(keys[1:-1]) == _LETTA_TOOLS[call.name], call.name
            seen.add(call.name)
            answer = json.loads(messages[k + 1].tool_results[0].text)
            following = json.loads(messages[k + 2].text) if k + 2 < len(messages) else None
            if arguments["request_heartbeat"]:
                # Control comes back to the agent at once, and it says whether the call failed.
                assert following is not None and following["type"] == "heartbeat"
                failed = answer["status"] == "Failed"
                assert following["reason"] in (
                    (FAILED_HEARTBEAT,) if failed else (REQ_HEARTBEAT, TIMER)
                )
                if failed:
                    assert answer["message"].startswith("Error executing function read_file: ")
            else:
                # The chain ends on a message to the user; the next event is the user's.
                assert call.name == "send_message" and answer["message"] == "None"
                assert following is None or following["type"] == "user_message"
        # Listings and searches are drawn among the filler; every other tool is called.
        assert set(_LETTA_TOOLS) - {"list_directory", "search_code"} <= seen <= set(_LETTA_TOOLS)
        assert kinds["login"] == 1 and kinds["system_alert"] == 1
        assert kinds["user_message"] >= 10 and kinds["heartbeat"] > kinds["user_message"]
        # The session ends on the status report's send_message and its answer.
        assert messages[-2].tool_calls[0].name == "send_message"


def _letta_blocks(session: EvalSession) -> dict[str, str]:
    blocks: dict[str, str] = {"human": "", "plan": ""}
    for message in session.conversation.messages:
        for call in message.tool_calls:
            if call.name in ("memory_insert", "memory_replace"):
                arguments = json.loads(call.arguments)
                label = arguments["label"]
                blocks[label] = _letta_block(blocks[label], call.name, arguments)
    return blocks


def test_letta_style_keeps_the_users_wishes_and_the_plan_in_core_memory() -> None:
    from compaction.eval.families.letta import MEMORY_WARNING

    for session in sessions("letta-style"):
        blocks = _letta_blocks(session)
        human, plan = blocks["human"], blocks["plan"]
        for fact in session.facts:
            if fact.category == "changed_value":
                key, value = fact.probe
                assert f"- {key}: {value}" in human.splitlines(), fact.id
                assert all(f"- {key}: {old}" not in human for old in fact.stale)
            elif fact.category == "constraint":
                assert fact.probe[0] in human, fact.id
            elif fact.category == "decision":
                [approach] = [line for line in plan.splitlines() if line.startswith("Approach: ")]
                assert approach == f"Approach: {fact.probe[0]}"
        # When Letta warns of the full context, the agent archives its progress.
        messages = session.conversation.messages
        [alert] = [k for k, m in enumerate(messages) if m.role == "user"
                   and json.loads(m.text)["type"] == "system_alert"]  # fmt: skip
        assert json.loads(messages[alert].text)["message"] == MEMORY_WARNING
        assert messages[alert + 1].tool_calls[0].name == "archival_memory_insert"


_PROVE_FAILED = re.compile(r"^t/flush\.t \.+ Dubious, test returned (\d) \(wstat (\d+), 0x(\w+)\)\n"
                           r"Failed (\d)/(\d+) subtests $", re.M)  # fmt: skip
_PROVE_DIAG = re.compile(r"^#   Failed test '(.+)'\n#   at t/flush\.t line (\d+)\.\n"
                         r"#          got: '(\w)'\n#     expected: '(\w)'$", re.M)  # fmt: skip


def test_letta_style_speaks_makemaker_prove_perlcritic_and_benchmark() -> None:
    from compaction.eval.families.letta import BENCH, BUILD, TEST

    for session in sessions("letta-style"):
        outputs = []
        for message in session.conversation.messages:
            for result in message.tool_results:
                outputs.append(json.loads(result.text)["message"])
        text = "\n".join(outputs)
        runs = [o for o in outputs if "Test Summary Report" in o]
        assert len(runs) == 2
        counts = []
        for run in runs:
            assert run.startswith("exit code 1\n") and run.endswith("\nResult: FAIL")
            [(returned, wstat, hexed, failed, total)] = _PROVE_FAILED.findall(run)
            assert returned == failed and int(wstat) == int(failed) * 256 == int(hexed, 16)
            diagnostics = _PROVE_DIAG.findall(run)
            assert len(diagnostics) == int(failed)
            assert f"# Looks like you failed {failed} test" in run
            assert f"t/flush.t (Wstat: {wstat} (exited {failed}) Tests: {total} Failed: " in run
            files, tests = re.findall(r"^Files=(\d+), Tests=(\d+),  \d wallclock secs", run,
                                      re.M)[0]  # fmt: skip
            assert files == "5"
            counts.append((int(failed), int(tests)))
        assert counts[0][0] == 3 and counts[1][0] == 1 and counts[0][1] == counts[1][1]
        text_all = conversation_text(session.conversation)
        assert f'"command": "{TEST}"' in text_all and f'"command": "{BUILD}"' in text_all
        # The signature error, then the same build running clean.
        assert re.search(
            r"Too few arguments for subroutine 'Relaypost::\w+::[a-z]+_send' "
            r"\(got 1; expected 2\) at lib/Relaypost/\w+\.pm line \d+\.",
            text,
        )
        assert "Writing Makefile for Relaypost" in text and "relaypost-smoke: flushed" in text
        assert "$batch, $batch->{tenant_id}" in text_all
        assert re.search(
            r"\.pm: .+ at line \d+, column \d+\.  See page \d+ of PBP\.  "
            r"\(Severity: [345]\)",
            text,
        )
        figure = next(f.probe[0] for f in session.facts
                      if f.category == "identifier" and "." in f.probe[0])  # fmt: skip
        assert f'"command": "{BENCH}"' in text_all
        assert re.search(rf"^flush_batch:  5 wallclock secs .+ @ {figure}/s \(n=\d+\)$", text,
                         re.M)  # fmt: skip
        assert re.search(r"^\s+Rate flush_single  flush_batch$", text, re.M)


def _voice(family: str) -> type[Voice]:
    from compaction.eval.families import _VOICES

    return next(v for v in _VOICES if v.family == family)


@pytest.mark.parametrize(
    "family",
    [
        "amp-style",
        "copilot-style",
        "homegrown-style",
        "kiro-style",
        "warp-style",
        "plandex-style",
        "deepagents-style",
        "augment-style",
        "open-interpreter-style",
        "smolagents-style",
        "trae-style",
        "roo-style",
        "letta-style",
        "crewai-style",
        "autogen-style",
        "refact-style",
        "swekit-style",
        "gptme-style",
        "moatless-style",
        "acr-style",
        "dc-style",
        "clinemcp-style",
    ],
)
def test_values_never_hide_inside_each_other(family: str) -> None:
    # Two settings are drawn per session: no value may stand inside another of any row (a
    # stale "6 daemons" inside the current "16 daemons" would read as current).
    values = [value for _, *row in _voice(family).settings for value in row]
    for value in values:
        assert [v for v in values if value in v] == [value], value


@pytest.mark.parametrize(
    "family",
    ["deepagents-style", "smolagents-style", "trae-style", "roo-style", "letta-style",
     "crewai-style", "autogen-style", "refact-style", "swekit-style", "gptme-style",
     "moatless-style", "acr-style", "dc-style", "clinemcp-style"],
)  # fmt: skip
def test_plans_never_hide_inside_each_other(family: str) -> None:
    plans = [plan for row in _voice(family).plans for plan in (row[0], row[1], row[3])]
    for plan in plans:
        assert [p for p in plans if plan in p] == [plan], plan


#: Trae's tools and the argument keys each may take (its tools' `get_parameters`).
_TRAE_TOOLS = {
    "bash": {"command", "restart"},
    "str_replace_based_edit_tool": {"command", "path", "file_text", "old_str", "new_str",
                                    "insert_line", "view_range"},
    "json_edit_tool": {"operation", "file_path", "json_path", "value", "pretty_print"},
    "sequentialthinking": {"thought", "thought_number", "total_thoughts", "next_thought_needed",
                           "is_revision", "revises_thought", "branch_from_thought", "branch_id",
                           "needs_more_thoughts"},
    "task_done": set(),
}  # fmt: skip
_TRAE_TASK = re.compile(
    r"\A\[Project root path\]:\n/home/dev/sendwell\n\n\[Problem statement\]: We're currently "
    r"solving the following issue within our repository\. Here's the issue text:\n.+\n\Z",
    re.DOTALL,
)
_CAT_N = re.compile(r"^ {0,5}\d+\t", re.M)


def test_trae_style_speaks_traes_tools() -> None:
    for session in sessions("trae-style"):
        messages = session.conversation.messages
        answers = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        used: set[str] = set()
        history = 0
        plan_at = 0
        open_run = False
        for message in messages[1:]:
            if message.role == "user":
                # Every user message is a new task of the interactive mode, after a run ended.
                assert _TRAE_TASK.match(message.text), message.text[:120]
                assert not open_run
                open_run = True
                continue
            for call in message.tool_calls:
                arguments = json.loads(call.arguments)
                used.add(call.name)
                assert set(arguments) <= _TRAE_TOOLS[call.name], call.name
                answer = answers[call.id]
                if call.name == "task_done":
                    assert arguments == {} and answer == "Task done." and message.text
                    open_run = False
                    continue
                assert open_run and not message.text
                if call.name == "str_replace_based_edit_tool":
                    path = arguments["path"]
                    assert path.startswith("/home/dev/sendwell/")
                    command = arguments["command"]
                    if command == "view" and path.endswith(".nim"):
                        head = f"Here's the result of running `cat -n` on {path}:\n"
                        assert answer.startswith(head)
                        lines = answer.removeprefix(head).split("\n")
                        first = arguments.get("view_range", [1])[0]
                        assert all(_CAT_N.match(line) for line in lines)
                        assert int(lines[0].split("\t")[0]) == first
                    elif command == "view":
                        assert answer.startswith("Here's the files and directories up to 2 "
                                                 f"levels deep in {path}, excluding hidden "
                                                 f"items:\n{path}\n")  # fmt: skip
                    elif command == "create":
                        assert answer == f"File created successfully at: {path}"
                    else:
                        assert command == "str_replace"
                        assert answer.startswith(
                            f"The file {path} has been edited. Here's the "
                            "result of running `cat -n` on a snippet of "
                        )
                        assert answer.endswith(
                            "Review the changes and make sure they are as "
                            "expected. Edit the file again if necessary."
                        )
                        assert arguments["new_str"] in answer
                        assert arguments["old_str"] not in answer.split(":\n", 1)[1]
                elif call.name == "sequentialthinking":
                    history += 1
                    status = json.loads(answer.split("\n\nStatus:\n", 1)[1])
                    assert answer.startswith("Sequential thinking step completed.")
                    assert status == {
                        "thought_number": arguments["thought_number"],
                        "total_thoughts": arguments["total_thoughts"],
                        "next_thought_needed": arguments["next_thought_needed"],
                        "branches": [],
                        "thought_history_length": history,
                    }
                    if _TRAE_STEP.search(arguments["thought"]):
                        # A plan after the first revises the thought that held the plan.
                        if plan_at:
                            assert arguments["is_revision"] is True
                            assert arguments["revises_thought"] == plan_at
                            assert f"the plan of thought {plan_at} " in arguments["thought"]
                        plan_at = arguments["thought_number"]
                elif call.name == "json_edit_tool":
                    assert arguments["file_path"].startswith("/home/dev/sendwell/")
                    assert answer.startswith(("Successfully updated 1 location(s) at JSONPath",
                                              "JSONPath '$.envelopes[0]' matches:\n"))  # fmt: skip
        assert used == set(_TRAE_TOOLS)
        # The session ends on the run's task_done, the model's words its content.
        assert not open_run and messages[-2].tool_calls[0].name == "task_done"
        [last] = [f for f in session.facts if f.category == "last_message"]
        assert messages[-2].text.startswith(last.probe[0])
        # A change of approach is a thought revising the one it overturns.
        thoughts = [json.loads(c.arguments) for m in messages for c in m.tool_calls
                    if c.name == "sequentialthinking"]  # fmt: skip
        [decision] = [f for f in session.facts if f.category == "decision"]
        [final] = [t for t in thoughts if decision.probe[0] in t["thought"]]
        [middle] = [t for t in thoughts if t["thought_number"] == final["revises_thought"]]
        [first] = [t for t in thoughts if t["thought_number"] == middle["revises_thought"]]
        assert decision.stale[1] in middle["thought"] and decision.stale[0] in first["thought"]
        assert "is_revision" not in first


_NIMBLE_ONLY = re.compile(r"^ {5}Error: Only (\d+)/(\d+) tests passed$", re.M)
_NIM_CHECK_FAILED = re.compile(
    r"^    (/home/dev/sendwell/tests/t([a-z_]+))\.nim\((\d+), 10\): Check failed: (.+)\n"
    r"    (\w+) was (.+)\n  \[FAILED\] (.+)$",
    re.M,
)


def test_trae_style_speaks_nimble_unittest_and_nim() -> None:
    from compaction.eval.families.trae import BENCH, BUILD, EXAMPLES, TEST

    for session in sessions("trae-style"):
        messages = session.conversation.messages
        answers = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        ran = [(json.loads(c.arguments)["command"], answers[c.id]) for m in messages
               for c in m.tool_calls if c.name == "bash"]  # fmt: skip
        counts = []
        for output in [o for c, o in ran if c.endswith(TEST)]:
            # stdout first; nimble's errors and the failed programs after the error banner.
            # The result is stripped, as Trae strips it: the first line loses its indent.
            stdout, stderr = output.split("\nTool call failed with error:\n")
            assert stdout.startswith("Compiling ")
            compiled = re.findall(r"^ *Compiling (\S+) \(from package sendwell\) using c "
                                  r"backend\n\n\[Suite\] ", stdout, re.M)  # fmt: skip
            failures = _NIM_CHECK_FAILED.findall(stdout)
            [(passed, total)] = _NIMBLE_ONLY.findall(stderr)
            assert len(compiled) == int(total)
            failed_programs = re.findall(r"^Error: execution of an external program failed: "
                                         r"'(\S+)'$", stderr, re.M)  # fmt: skip
            assert sorted(failed_programs) == sorted(f[0] for f in failures)
            assert int(total) - int(passed) == len(failures)
            for binary, module, line, check, subject, was, name in failures:
                assert binary in compiled and module in name
                [example] = [e for e in EXAMPLES.values() if e[0].format(m=module) == name]
                assert (check, subject, was, int(line)) == example[1:]
            assert stdout.count("  [OK] ") >= int(passed)
            counts.append((len(failures), int(passed)))
        (f1, p1), (f2, p2) = counts
        assert (f1, f2) == (3, 1) and p2 == p1 + 2
        # The build fails on the undeclared name where the view showed it, then builds.
        builds = [o for c, o in ran if c.endswith(BUILD)]
        assert len(builds) == 2
        broken = re.search(r"^ Nim Output /home/dev/sendwell/(src/sendwell/[a-z]+\.nim)"
                           r"\(88, (\d+)\) Error: undeclared identifier: 'tenantId'$",
                           builds[0], re.M)  # fmt: skip
        assert broken and "Build failed for the package: sendwell" in builds[0]
        assert builds[0].index("Tool call failed with error:\n") > broken.start()
        path, column = broken[1], int(broken[2])
        views = [(json.loads(c.arguments), answers[c.id]) for m in messages for c in m.tool_calls
                 if c.name == "str_replace_based_edit_tool"]  # fmt: skip
        shown = next(a for arguments, a in views if arguments["path"].endswith(path)
                     and arguments.get("view_range") == [81, 96])  # fmt: skip
        [line] = [x.split("\t", 1)[1] for x in shown.split("\n") if x.startswith("    88\t")]
        assert line[column - 1 :].startswith("tenantId)")
        assert builds[1].endswith("   Building sendwell/sendwell using c backend")
        assert "Tool call failed" not in builds[1]
        # nim check's warning is on stderr; nimpretty says nothing.
        checked = next(o for c, o in ran if c.endswith("nim check --hints:off src/sendwell.nim"))
        assert re.fullmatch(r"Tool call failed with error:\n/home/dev/sendwell/src/sendwell/"
                            r"\w+\.nim\(3, 8\) Warning: imported and not used: '\w+' "
                            r"\[UnusedImport\]", checked)  # fmt: skip
        assert [o for c, o in ran if "nimpretty --maxLineLen:100 src/sendwell/" in c] == [""]
        # benchy's table, its avg the figure the answer keeps.
        figure = next(f for f in session.facts if f.category == "identifier" and "." in f.probe[0])
        [table] = [o for c, o in ran if c.endswith(BENCH)]
        header, row = table.split("\n")
        assert header.index("avg time") < header.index("std dv") < header.index("runs")
        assert re.fullmatch(
            r"flush 10k parked envelopes \.+ [\d.]+ ms +"
            + re.escape(figure.probe[0])
            + r"0 ms +±[\d.]+ +x\d+",
            row,
        )
        assert len(row.split(" ms ")[0]) == 40 + 1 + 1  # the name and dots fill 40 columns
        said = [m.text for m in messages if figure.probe[0] in m.text and m.role == "assistant"]
        assert said and all(f"{figure.probe[0]}0 ms" in t for t in said)


_ROO_TOOLS = {
    "execute_command", "read_file", "apply_diff", "insert_content", "write_to_file",
    "update_todo_list", "ask_followup_question", "switch_mode", "attempt_completion",
}  # fmt: skip
#: Tools a Roo session calls when its draws ask for them (an edit, a search, a listing).
_ROO_SOMETIMES = {"search_and_replace", "search_files", "list_files"}
_ROO_BLOCK = re.compile(r"<<<<<<< SEARCH\n:start_line:(\d+)\n-------\n(.*?)\n=======\n(.*?)\n"
                        r">>>>>>> REPLACE", re.S)  # fmt: skip
_ROO_EXECUTED = re.compile(
    r"\ACommand executed in terminal  within working directory '([^']+)'\. (Command execution "
    r"was not successful, inspect the cause and adjust as needed\.\n)?Exit code: (\d+)\n"
    r"Output:\n(.*)\Z",
    re.S,
)


def _roo_runs(session: EvalSession) -> dict[str, list[tuple[int, str]]]:
    """(exit code, output) of every `execute_command` run, by command line."""
    from compaction.eval.families.roo import ROOT

    runs: dict[str, list[tuple[int, str]]] = {}
    for arguments, result in _calls(session, "execute_command"):
        executed = _ROO_EXECUTED.match(result)
        assert executed and executed[1] == ROOT, result[:160]
        code = int(executed[3])
        assert bool(executed[2]) == (code != 0)
        runs.setdefault(arguments["command"], []).append((code, executed[4]))
    return runs


def test_roo_style_speaks_roos_native_tools() -> None:
    mine = _shapes("roo-style")
    assert _ROO_TOOLS <= set(mine) <= _ROO_TOOLS | _ROO_SOMETIMES
    assert mine["execute_command"] == {"command", "cwd"}
    assert mine["read_file"] == {"files"}
    assert mine["apply_diff"] == {"path", "diff"}
    assert mine.get("search_and_replace", {"path", "operations"}) == {"path", "operations"}
    assert mine["insert_content"] == {"path", "line", "content"}
    assert mine["write_to_file"] == {"path", "content"}
    assert mine["update_todo_list"] == {"todos"}
    assert mine["ask_followup_question"] == {"question", "follow_up"}
    assert mine["switch_mode"] == {"mode_slug", "reason"}
    assert mine["attempt_completion"] == {"result"}
    assert mine.get("search_files", {"path", "regex", "file_pattern"}) == {
        "path", "regex", "file_pattern",
    }  # fmt: skip
    assert mine.get("list_files", {"path", "recursive"}) == {"path", "recursive"}
    # Names Cline (Roo's ancestor) and others use too carry other arguments there, but for
    # `attempt_completion` {result}, which Roo kept from Cline as it was. (roostory-style is
    # Roo Code too, in its own story.)
    for family in FAMILIES:
        if family not in ("roo-style", "roostory-style"):
            theirs = _shapes(family)
            for name in set(mine) & set(theirs) - {"attempt_completion"}:
                assert mine[name] != theirs[name], (family, name)
    for session in sessions("roo-style"):
        for arguments, _ in _calls(session, "read_file"):
            [entry] = arguments["files"]
            assert set(entry) == {"path", "line_ranges"} and not entry["path"].startswith("/")
        for arguments, _ in _calls(session, "apply_diff"):
            blocks = _ROO_BLOCK.findall(arguments["diff"])
            assert blocks and arguments["diff"].count("<<<<<<< SEARCH") == len(blocks)
        for arguments, _ in _calls(session, "search_and_replace"):
            assert all(set(op) == {"search", "replace"} for op in arguments["operations"])
        for arguments, _ in _calls(session, "ask_followup_question"):
            assert 2 <= len(arguments["follow_up"]) <= 4
            assert all(set(item) == {"text", "mode"} for item in arguments["follow_up"])
        for arguments, _ in _calls(session, "execute_command"):
            assert arguments["cwd"] is None
        # The task starts in Architect mode, which runs no command and edits no code: the
        # one switch to Code mode comes before the first of either.
        calls = [c.name for m in session.conversation.messages for c in m.tool_calls]
        [switch] = [k for k, name in enumerate(calls) if name == "switch_mode"]
        acting = {"execute_command", "apply_diff", "search_and_replace", "insert_content",
                  "write_to_file"}  # fmt: skip
        assert min(k for k, name in enumerate(calls) if name in acting) > switch
        assert calls[-1] == "attempt_completion"


def test_roo_style_sends_environment_details_after_every_tool_result() -> None:
    from compaction.eval.families.roo import MODES, REMINDER_STATUS, ROOT

    for session in sessions("roo-style"):
        messages = session.conversation.messages
        first = next(m for m in messages if m.role == "user")
        assert first.text.startswith("<task>\n") and "\n</task>" in first.text
        assert f"# Current Workspace Directory ({ROOT}) Files\n" in first.text
        mode, checklist = "architect", None
        for k, message in enumerate(messages):
            for call in message.tool_calls:
                if call.name == "switch_mode":
                    mode = json.loads(call.arguments)["mode_slug"]
                if call.name == "update_todo_list":
                    checklist = json.loads(call.arguments)["todos"]
            if not message.tool_results or k == len(messages) - 1:
                continue
            details = messages[k + 1]
            assert details.role == "user" and not details.tool_results
            assert details.text.startswith("<environment_details>\n")
            assert details.text.endswith("\n</environment_details>")
            assert f"<slug>{mode}</slug>\n<name>{MODES[mode]}</name>\n" in details.text
            assert "<tool_format>native</tool_format>" in details.text
            if checklist is None:
                assert "You have not created a todo list yet." in details.text
                continue
            # The REMINDERS table is the last checklist written, row by row.
            rows = re.findall(r"^\| (\d+) \| (.+) \| (Pending|In Progress|Completed) \|$",
                              details.text, re.M)  # fmt: skip
            items = [_ROO_ITEM.match(line) for line in checklist.splitlines()]
            expected = [(str(n), m[2], REMINDER_STATUS[_ROO_MARK[m[1]]])
                        for n, m in enumerate(items, start=1) if m]  # fmt: skip
            assert rows == expected
        # The session ends on attempt_completion, accepted: its result is empty.
        [(_, done)] = _calls(session, "attempt_completion")
        assert done == "" and messages[-1].role == "tool"


def test_roo_style_answers_as_roos_tools_do() -> None:
    from compaction.eval.families.roo import SINGLE_BLOCK_NOTICE, WRITE_NOTICE

    for session in sessions("roo-style"):
        _roo_runs(session)
        for arguments, result in _calls(session, "read_file"):
            [entry] = arguments["files"]
            header = re.match(rf"\AFile: {re.escape(entry['path'])}\nLines (\d+)-(\d+):\n", result)
            assert header, result[:80]
            first, last = int(header[1]), int(header[2])
            if entry["line_ranges"] is not None:
                assert entry["line_ranges"] == [[first, last]]
            body = result[header.end() :].split("\n")
            width = len(str(last))
            assert [line[: width + 3] for line in body] == [
                f"{str(n).rjust(width)} | " for n in range(first, last + 1)
            ]
        for name in ("write_to_file", "apply_diff", "search_and_replace", "insert_content"):
            for arguments, result in _calls(session, name):
                written, _, notice = result.partition("\n")
                answer = json.loads(written)
                operation = "created" if name == "write_to_file" else "modified"
                assert answer == {"path": arguments["path"], "operation": operation,
                                  "notice": WRITE_NOTICE}  # fmt: skip
                single = name == "apply_diff" and arguments["diff"].count("<<<<<<< SEARCH") == 1
                assert ("\n" + notice if notice else "") == (SINGLE_BLOCK_NOTICE if single else "")
        for _, result in _calls(session, "update_todo_list"):
            assert result == "Todo list updated successfully."
        for _, result in _calls(session, "ask_followup_question"):
            assert result.startswith("<answer>\n") and result.endswith("\n</answer>")
        [(_, switched)] = _calls(session, "switch_mode")
        assert switched.startswith(
            "Successfully switched from 🏗️ Architect mode to 💻 Code mode because: "
        )
        for _, result in _calls(session, "search_files"):
            [count] = re.findall(r"\AFound (\d+) results?\.\n\n", result)
            assert len(re.findall(r"^ *\d+ \| ", result, re.M)) == int(count)
            assert len(re.findall(r"^----$", result, re.M)) == int(count)


def test_roo_style_speaks_rebar3_eunit_ct_and_dialyzer() -> None:
    from compaction.eval.families.roo import BENCH, BUILD, TESTS_COMMAND

    for session in sessions("roo-style"):
        runs = _roo_runs(session)
        # rebar3 compile: the unbound variable at both calls, then the build passes.
        (failed_code, failed), (ok_code, ok) = runs[BUILD]
        [path] = re.findall(r"^===> Compiling (src/\w+\.erl) failed$", failed, re.M)
        lines = re.findall(r"^ *(\d+) │ .*TenantId", failed, re.M)
        assert lines == ["88", "93"] and failed_code == 1
        assert failed.count("╰── variable 'TenantId' is unbound") == 2
        assert failed.count(f"   ┌─ {path}:") == 2
        assert ok_code == 0 and ok.endswith("===> Compiling relay") and "failed" not in ok
        # The fix: one apply_diff with a block at each line the compiler named.
        [fix] = [a for a, _ in _calls(session, "apply_diff") if a["path"] == path
                 and "TenantId" in a["diff"]]  # fmt: skip
        blocks = _ROO_BLOCK.findall(fix["diff"])
        assert [start for start, _, _ in blocks] == ["88", "93"]
        assert all(before.endswith("(Batch, TenantId),") for _, before, _ in blocks)
        assert all(after.endswith("(Batch, Batch#batch.tenant_id),") for _, _, after in blocks)
        # rebar3 eunit: a dot or an F per test, a Failures block per F, the summary counts.
        tests = runs[TESTS_COMMAND]
        assert len(tests) == 2
        for code, out in tests:
            [(total, failures)] = re.findall(r"^(\d+) tests, (\d+) failures$", out, re.M)
            [progress] = re.findall(r"^[.F]+$", out, re.M)
            assert len(progress) == int(total) and progress.count("F") == int(failures)
            blocks = re.findall(r"^  (\d+)\) (\w+_tests):(\w+_test)/0\n     Failure/Error: "
                                r"\?assertEqual\(", out, re.M)  # fmt: skip
            assert [int(n) for n, _, _ in blocks] == list(range(1, int(failures) + 1))
            for _, module, function in blocks:
                assert f"/test/{module}.erl:" in out and f"`{module}:-{function}/0-fun-0-/0`" in out
            assert re.search(r"^Finished in \d\.\d{3} seconds$", out, re.M)
            assert code == 1 and out.endswith("===> Error running tests")
        # rebar3 ct: the suite the command names, every case OK.
        [(command, [(code, out)])] = [(c, r) for c, r in runs.items()
                                      if c.startswith("rebar3 ct --suite test/")]  # fmt: skip
        suite = command.rsplit("/", 1)[-1]
        cases = re.findall(rf"^%%% {suite} ==> (\w+): OK$", out, re.M)
        assert code == 0 and out.endswith(f"All {len(cases)} tests passed.") and cases
        # rebar3 dialyzer: warnings under their file, counted; the run fails on them.
        [(code, out)] = runs["rebar3 dialyzer"]
        warned = re.findall(r"^Line \d+ Column \d+: ", out, re.M)
        assert code == 1 and out.endswith(f"Warnings occurred running dialyzer: {len(warned)}")
        [(code, out)] = runs["rebar3 fmt --check"]
        assert code == 0 and out == ""
        # The figure the user keeps is the timer:tc median.
        [(code, measured)] = runs[BENCH]
        [figure] = [f.probe[0] for f in session.facts if f.text.startswith("The figure")]
        assert code == 0 and f"\n  median  {figure}\n" in measured


def test_roo_style_is_measured_as_anthropic_messages_too() -> None:
    for session, payload in _as_anthropic("roo-style"):
        calls = [c for m in session.conversation.messages for c in m.tool_calls]
        uses = [b for m in payload["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b["type"] == "tool_use"]  # fmt: skip
        assert [b["name"] for b in uses] == [c.name for c in calls]
        # As Roo sends them: each result and the environment details in one user message.
        answered = [m["content"] for m in payload["messages"] if m["role"] == "user"
                    and isinstance(m["content"], list)
                    and any(b["type"] == "tool_result" for b in m["content"])]  # fmt: skip
        assert len(answered) == len(calls)
        for blocks in answered[:-1]:
            assert [b["type"] for b in blocks] == ["tool_result", "text"]
            assert blocks[1]["text"].startswith("<environment_details>\n")
        assert ANTHROPIC.validate(ANTHROPIC.decode(payload)) == []


#: The tools a crewai-style agent names in its `Action:` lines, and the arguments each takes.
_CREWAI_TOOLS = {
    "read_a_files_content": {"file_path", "start_line", "line_count"},
    "file_writer_tool": {"filename", "content", "directory", "overwrite"},
    "list_files_in_directory": {"directory"},
    "run_shell_command": {"command"},
    "replace_text_in_file": {"file_path", "old_text", "new_text"},
    "search_code": {"pattern", "directory"},
    "task_checklist": {"items"},
}


def test_crewai_style_speaks_crewais_react_protocol() -> None:
    from compaction.eval.families.crewai import FEEDBACK, FINAL_THOUGHT, TOOL_NAMES

    assert set(TOOL_NAMES) == set(_CREWAI_TOOLS)
    feedback = re.compile(re.escape(FEEDBACK).replace(re.escape("{feedback}"), "(.+)") + r"\Z")
    for session in sessions("crewai-style"):
        messages = session.conversation.messages
        # Text ReAct, not provider tool calls; the tools are listed in the system prompt.
        assert all(not m.tool_calls and not m.tool_results for m in messages)
        system = messages[0].text
        assert system.startswith("You are Crystal Shard Maintainer. ")
        for name in _CREWAI_TOOLS:
            assert f"Tool Name: {name}\nTool Arguments: {{" in system
        assert messages[1].role == "user"
        assert messages[1].text.startswith("\nCurrent Task: ")
        assert messages[1].text.endswith("your job depends on it!\n\nThought:")
        used: set[str] = set()
        finals = 0
        running = True
        for message in messages[2:]:
            text = message.text
            if message.role == "user":
                # The human speaks only after a Final Answer, as CrewAI's feedback.
                assert not running and feedback.match(text), text[:120]
                running = True
                continue
            assert message.role == "assistant" and running
            if text.startswith(f"Thought: {FINAL_THOUGHT}\nFinal Answer: "):
                assert "\nAction:" not in text
                finals += 1
                running = False
                continue
            step = _crewai_step(text)
            assert step, text[:200]
            _, tool, arguments, observation = step
            used.add(tool)
            assert set(arguments) <= _CREWAI_TOOLS[tool], tool
            if tool == "run_shell_command":
                assert re.match(r"exit code: \d+(\n|\Z)", observation)
            elif tool == "file_writer_tool":
                path = f"{arguments['directory']}/{arguments['filename']}"
                assert observation == f"Content successfully written to {path}"
            elif tool == "replace_text_in_file":
                assert observation == f"Replaced 1 occurrence in {arguments['file_path']}"
            elif tool == "list_files_in_directory":
                assert observation.startswith("File paths: \n-/home/dev/relaycast/")
            elif tool == "task_checklist":
                assert observation.startswith("Checklist saved:\n")
        assert used == set(_CREWAI_TOOLS)
        # The session ends on the agent's last Final Answer.
        assert not running and finals >= 5


_CRYSTAL_COUNTS = re.compile(r"^(\d+) examples, (\d+) failures, 0 errors, 0 pending$", re.M)
_CRYSTAL_FAILED = re.compile(r"^crystal spec (spec/[a-z]+_spec\.cr):(\d+) # (.+)$", re.M)


def test_crewai_style_speaks_crystal_spec_shards_and_ameba() -> None:
    from compaction.eval.families.crewai import BENCH, BUILD, TEST

    for session in sessions("crewai-style"):
        text = conversation_text(session.conversation)
        runs = [m.text for m in session.conversation.messages
                if m.role == "assistant" and f'{{"command": "{TEST}"}}' in m.text]  # fmt: skip
        assert len(runs) == 2
        counts = []
        for run in runs:
            output = run.split("\nObservation: exit code: 1\n", 1)[1]
            assert re.match(r"[.F]+\n\nFailures:\n\n  1\) ", output)
            [(total, failed)] = _CRYSTAL_COUNTS.findall(output)
            assert re.search(r"^Finished in \d+\.\d\d milliseconds$", output, re.M)
            assert output.split("\n", 1)[0].count("F") == int(failed)
            failures = _CRYSTAL_FAILED.findall(output.split("\nFailed examples:\n", 1)[1])
            assert len(failures) == int(failed)
            for file, line, name in failures:
                # Each failed example has its block above, pointing into its spec file.
                block = re.split(r"\n\n(?=  \d+\) |Finished in )",
                                 output.split(f") {name}\n", 1)[1])[0]  # fmt: skip
                assert "     Failure/Error: " in block and "       Expected: " in block
                assert f"     # {file}:{int(line) + 1}" in block
            counts.append((int(total), int(failed)))
        (t1, f1), (t2, f2) = counts
        assert (f1, f2) == (3, 1) and t2 == t1
        # The compile error, then the same build clean.
        assert re.search(r"Error target relaycast failed to compile:\nShowing last frame\. "
                         r"Use --error-trace for full trace\.\n\nIn src/[a-z]+\.cr:\d+:\d+\n\n"
                         r" \d+ \|   [a-z]+_send\(batch, tenant_id\)\n +\^-+\n"
                         r"Error: undefined local variable or method 'tenant_id' for top-level",
                         text)  # fmt: skip
        assert text.count(f'{{"command": "{BUILD}"}}') == 2
        assert "exit code: 0\nDependencies are satisfied\nBuilding: relaycast" in text
        assert "batch.tenant_id" in text
        assert "Resolving dependencies\n" in text and "\nWriting shard.lock" in text
        assert re.search(r"\n\[C\] Layout/LineLength: Line too long\n", text)
        assert re.search(r"\n\d+ inspected, 1 failure", text)
        assert re.search(r"exit code: 1\nformatting 'src/[a-z_]+\.cr' produced changes", text)
        figure = next(f for f in session.facts if f.category == "identifier" and "." in f.probe[0])
        assert f'{{"command": "{BENCH}"}}' in text
        assert re.search(rf"redeliver_batch +\d+\.\d\d  \({re.escape(figure.probe[0])}µs\) "
                         r"\(± \d\.\d\d%\)", text)  # fmt: skip


def test_the_ruler_reads_the_code_blocks_an_autogen_executor_ran() -> None:
    # AutoGen's assistant writes code in markdown blocks; its user proxy runs them and answers
    # `exitcode: N (…)` / `Code output:`. Shell blocks are commands, Python blocks change the
    # files they write; a block in a language the executor does not know was not run, and
    # a block nobody answered is only a suggestion.
    patch = (
        "# filename: patch_outbox.py\nfrom pathlib import Path\n\n"
        'path = Path("src/Outbox.elm")\ntext = path.read_text()\n'
        'path.write_text(text.replace("a", "b"))'
    )
    messages = [
        {"role": "user", "content": "fix the outbox", "name": "user_proxy"},
        {"role": "assistant", "content": f"Patch it.\n\n```python\n{patch}\n```",
         "name": "assistant"},
        {"role": "user", "content": "exitcode: 0 (execution succeeded)\nCode output: done\n",
         "name": "user_proxy"},
        {"role": "assistant", "name": "assistant",
         "content": "Remove the shim.\n\n```sh\ngit rm src/LegacyShim.elm\n```"},
        {"role": "user", "content": "exitcode: 0 (execution succeeded)\nCode output: rm "
                                    "'src/LegacyShim.elm'\n", "name": "user_proxy"},
        {"role": "assistant", "content": "```elm\nmodule Never exposing (..)\n```\n\n"
                                         "```sh\ntouch src/Never.elm\n```", "name": "assistant"},
        {"role": "user", "content": "exitcode: 1 (execution failed)\nCode output: \n"
                                    "unknown language elm", "name": "user_proxy"},
        {"role": "assistant", "content": "```sh\ntouch src/Unrun.elm\n```\n\nTERMINATE",
         "name": "assistant"},
        {"role": "user", "content": "stop there", "name": "user_proxy"},
    ]  # fmt: skip
    facts = extract_probes(OPENAI.decode({"model": "gpt-4o", "messages": messages}))
    found = {(f.category, f.probe[0]) for f in facts}
    assert {("file_modified", "src/Outbox.elm"), ("file_deleted", "src/LegacyShim.elm"),
            ("command", "git rm src/LegacyShim.elm")} <= found  # fmt: skip
    assert "src/Unrun.elm" not in {p for _, p in found}


_EXECUTED = re.compile(r"\Aexitcode: (\d+) \(execution (succeeded|failed)\)\nCode output: ")
_MARKDOWN_BLOCK = re.compile(r"```(\w+)\n(.*?)\n```", re.DOTALL)


def test_autogen_style_talks_through_code_blocks_and_its_executors_answers() -> None:
    import ast

    from compaction.eval.families.autogen import DEFAULT_SYSTEM_MESSAGE, PROXY, TERMINATE

    for session in sessions("autogen-style"):
        messages = session.conversation.messages
        assert messages[0].role == "system"
        assert messages[0].text.startswith(DEFAULT_SYSTEM_MESSAGE)
        assert all(not m.tool_calls and not m.tool_results for m in messages)
        # Turns alternate, the assistant and the user proxy, each message named by its sender.
        roles = [m.role for m in messages[1:]]
        assert roles == ["user", "assistant"] * (len(roles) // 2)
        named = [m.provider_data.get("openai.name", m.name) for m in messages[1:]]
        assert set(named) == {"assistant", PROXY}
        handed_over = True  # the task opens the chat
        unknown = 0
        for k, message in enumerate(messages[1:], 1):
            text = message.text
            if message.role == "user":
                executed = _EXECUTED.match(text)
                # The human speaks only when the assistant handed over with TERMINATE.
                assert bool(executed) != handed_over, text[:80]
                continue
            blocks = _MARKDOWN_BLOCK.findall(text)
            handed_over = text.endswith(f"\n\n{TERMINATE}")
            if handed_over:
                assert not blocks and text.count(TERMINATE) == 1
                continue
            assert len(blocks) == 1, text[:200]  # "Don't include multiple code blocks"
            [(language, code)] = blocks
            assert language in ("sh", "python", "elm")
            answer = messages[k + 1].text
            status = _EXECUTED.match(answer)
            assert status and (status[1] == "0") == (status[2] == "succeeded")
            if language == "elm":
                # Not a language the local executor runs: it says so, and the next block
                # writes the file from a shell heredoc.
                unknown += 1
                assert answer == (
                    "exitcode: 1 (execution failed)\nCode output: \nunknown language elm"
                )
                assert "cat > src/" in messages[k + 2].text
            if language == "python":
                assert code.startswith("# filename: patch_")
                ast.parse(code)
        assert unknown == 1
        assert messages[-1].role == "assistant" and handed_over


_ELM_TEST_COUNTS = re.compile(r"^Passed:   (\d+)\nFailed:   (\d+)$", re.M)
_ELM_TEST_FAILURE = re.compile(
    r"^↓ (\w+)Test\n↓ \1\.flushParked\n✗ (.+)\n\n    (\S+)\n    ╷\n    │ Expect\.equal\n"
    r"    ╵\n    (\S+)\n",
    re.M,
)


def test_autogen_style_speaks_elm_make_elm_test_elm_review_and_elm_format() -> None:
    from compaction.eval.families.autogen import BENCH, BUILD, TEST

    for session in sessions("autogen-style"):
        text = conversation_text(session.conversation)
        runs = [m.text for m in session.conversation.messages
                if m.role == "user" and "elm-test 0.19.1-revision12" in m.text]  # fmt: skip
        assert len(runs) == 2 and f"```sh\n{TEST}\n```" in text
        counts = []
        for run in runs:
            assert run.startswith("exitcode: 1 (execution failed)\nCode output: elm-test ")
            [total] = re.findall(r"^Running (\d+) tests\. To reproduce these results, run: "
                                 r"elm-test --fuzz 100 --seed \d+$", run, re.M)  # fmt: skip
            [(passed, failed)] = _ELM_TEST_COUNTS.findall(run)
            assert int(total) == int(passed) + int(failed)
            failures = _ELM_TEST_FAILURE.findall(run)
            assert len(failures) == int(failed) and "\nTEST RUN FAILED\n" in run
            for module, name, actual, expected in failures:
                assert name.startswith(module.lower() + " ") and actual != expected
            counts.append((int(failed), int(passed)))
        (f1, p1), (f2, p2) = counts
        assert (f1, f2) == (3, 1) and p2 == p1 + 2
        # The type error of the send without its tenant, then the same build succeeding.
        broken = re.search(
            r"Detected problems in 1 module\.\n-- TYPE MISMATCH -+ src/(\w+)\.elm\n\n"
            r"Something is off with the body of the `flushParked` definition:\n\n"
            r"\d+\|    (\w+)Send batch\n +\^+\nThis `\2Send` call produces:", text)  # fmt: skip
        assert broken and broken[1].lower() == broken[2]
        assert "Hint: It looks like it takes too few arguments. I was expecting 1 more." in text
        assert text.count(f"```sh\n{BUILD}\n```") == 2
        assert re.search(r"Code output: Success! Compiled \d+ modules\.\n\n    Main ───> /dev/null",
                         text)  # fmt: skip
        assert f"{broken[2]}Send batch batch.tenantId" in text
        # elm-review's finding (exiting 1) and elm-format's clean validation.
        assert re.search(r"exitcode: 1 \(execution failed\)\nCode output: -- ELM-REVIEW ERROR -+ "
                         r"src/Outbox\.elm:\d+:1\n", text)  # fmt: skip
        assert "I found 1 error in 1 file." in text
        assert "```sh\nelm-format --validate src/ tests/\n```" in text
        figure = next(f for f in session.facts if f.category == "identifier" and "." in f.probe[0])
        assert f"```sh\n{BENCH}\n```" in text
        assert f"    mean per run (µs): {figure.probe[0]}" in text


def test_void_style_speaks_voids_builtin_tools() -> None:
    mine = _shapes("void-style")
    assert set(mine) == {
        "read_file", "ls_dir", "search_for_files", "search_in_file", "read_lint_errors",
        "create_file_or_folder", "rewrite_file", "edit_file", "delete_file_or_folder",
        "run_command", "open_persistent_terminal", "run_persistent_command",
        "kill_persistent_terminal",
    }  # fmt: skip
    assert mine["read_file"] == mine["ls_dir"] == mine["read_lint_errors"] == {"uri"}
    assert mine["create_file_or_folder"] == {"uri"}
    assert mine["search_for_files"] == {"query", "search_in_folder", "is_regex"}
    assert mine["search_in_file"] == {"uri", "query"}
    assert mine["edit_file"] == {"uri", "search_replace_blocks"}
    assert mine["rewrite_file"] == {"uri", "new_content"}
    assert mine["delete_file_or_folder"] == {"uri", "is_recursive"}
    assert mine["run_command"] == {"command", "cwd"}
    assert mine["run_persistent_command"] == {"command", "persistent_terminal_id"}
    assert mine["kill_persistent_terminal"] == {"persistent_terminal_id"}
    for session in sessions("void-style"):
        for name in ("read_file", "edit_file", "rewrite_file", "delete_file_or_folder"):
            for arguments, _ in _calls(session, name):
                assert arguments["uri"].startswith("/home/dev/src/ledgerd/")  # full paths
        for arguments, result in _calls(session, "read_file"):
            assert result.startswith(arguments["uri"] + "\n```\n") and result.endswith("```")
        for arguments, result in _calls(session, "edit_file"):
            blocks = arguments["search_replace_blocks"]
            assert blocks.startswith("<<<<<<< ORIGINAL\n") and blocks.endswith(">>>>>>> UPDATED")
            assert blocks.count("\n=======\n") == blocks.count("<<<<<<< ORIGINAL")
            assert (
                result == f"Change successfully made to {arguments['uri']}. No lint errors found."
            )
        for arguments, result in _calls(session, "delete_file_or_folder"):
            assert result == f"URI {arguments['uri']} successfully deleted."
        for arguments, result in _calls(session, "create_file_or_folder"):
            assert result == f"URI {arguments['uri']} successfully created."
        for _, result in _calls(session, "run_command"):
            assert re.search(r"\n\(exit code \d\)$", result), result[-80:]
        [(opened, answer)] = _calls(session, "open_persistent_terminal")
        terminal = re.fullmatch(
            r'Successfully created persistent terminal\. persistentTerminalId="(\d+)"', answer
        )
        assert terminal and opened == {"cwd": "/home/dev/src/ledgerd"}
        runs = _calls(session, "run_persistent_command")
        assert [a["persistent_terminal_id"] for a, _ in runs] == [terminal[1]] * 2
        assert runs[0][1].endswith(
            f"Terminal command is running in terminal {terminal[1]}. The given outputs are the "
            "results after 5 seconds."
        )
        [(_, closed)] = _calls(session, "kill_persistent_terminal")
        assert closed == f'Successfully closed terminal "{terminal[1]}".'


def test_void_style_speaks_dotnet_expecto_fantomas_and_benchmarkdotnet() -> None:
    from compaction.eval.families.void import BUILD, PROJECT, TESTS_RUN

    for session in sessions("void-style"):
        runs: dict[str, list[str]] = {}
        for arguments, result in _calls(session, "run_command"):
            runs.setdefault(arguments["command"], []).append(result)
        failed, ok = runs[BUILD]
        flagged = re.findall(
            r"^/home/dev/src/ledgerd/(src/Ledgerd/\w+\.fs)\((\d+),(\d+)\): error FS0039: The "
            rf"value or constructor 'tenantId' is not defined\. \[{re.escape(PROJECT)}\]$",
            failed,
            re.M,
        )
        assert [line for _, line, _ in flagged] == ["88", "93"] * 2
        assert "\nBuild FAILED.\n" in failed and "    2 Error(s)" in failed
        assert failed.endswith("(exit code 1)") and ok.endswith("(exit code 0)")
        assert "\nBuild succeeded.\n" in ok and "error" not in ok
        # The fix: one edit_file call, a search/replace block per line the compiler named.
        [fix] = [
            a for a, _ in _calls(session, "edit_file") if "tenantId" in a["search_replace_blocks"]
        ]
        assert fix["uri"].endswith(flagged[0][0])
        assert fix["search_replace_blocks"].count("batch.TenantId") == 2
        # Expecto: failures as ERR lines, then one EXPECTO! summary counting every test.
        first, last = runs[TESTS_RUN]
        for out, failures in ((first, 3), (last, 1)):
            summary = re.findall(
                r"^\[\d\d:\d\d:\d\d INF\] EXPECTO! (\d+) tests run in \S+ for miscellaneous "
                r"\u2013 (\d+) passed, 0 ignored, (\d+) failed, 0 errored\. Failure! <Expecto>$",
                out,
                re.M,
            )
            [(total, passed, failed_n)] = summary
            assert int(total) == int(passed) + int(failed_n) and int(failed_n) == failures
            assert (
                len(re.findall(r"^\[\d\d:\d\d:\d\d ERR\] \w+/.+ failed in ", out, re.M)) == failures
            )
        assert runs["dotnet fantomas --check src tests"] == ["\n(exit code 0)"]
        [lint] = runs["dotnet fsharplint lint Ledgerd.sln"]
        assert "========== Summary: 0 warnings ==========" in lint
        # BenchmarkDotNet's GitHub table, read back from its report, carries the figure.
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        [(_, table)] = [r for r in _calls(session, "run_persistent_command")
                        if r[0]["command"].startswith("cat ")]  # fmt: skip
        assert re.search(rf"^\| OneBatch \| +{re.escape(figure)} \u03bcs \|", table, re.M)


def test_refact_style_speaks_refacts_builtin_tools() -> None:
    from compaction.eval.families.refact import ROOT, TESTS_FILTER

    mine = _shapes("refact-style")
    assert set(mine) == {
        "cat", "tree", "search_pattern", "search_symbol_definition", "create_textdoc",
        "update_textdoc", "rm", "mv", "shell", "subagent",
    }  # fmt: skip
    assert mine["cat"] == {"paths"} and mine["tree"] == {"path"}
    assert mine["search_pattern"] == {"pattern", "scope"}
    assert mine["search_symbol_definition"] == {"symbols"}
    assert mine["create_textdoc"] == {"path", "content"}
    assert mine["update_textdoc"] == {"path", "old_str", "replacement", "multiple"}
    assert mine["rm"] == {"path", "recursive"} and mine["mv"] == {"source", "destination"}
    assert mine["shell"] == {"command", "workdir", "timeout", "output_filter", "output_limit"}
    assert mine["subagent"] == {"task", "expected_result", "tools", "max_steps"}
    for session in sessions("refact-style"):
        messages = session.conversation.messages
        # A cat'ed file comes back as a user message after the tool's "Paths found:".
        for k, message in enumerate(messages):
            for call in message.tool_calls:
                if call.name != "cat":
                    continue
                path, _, lines = json.loads(call.arguments)["paths"].partition(":")
                [answer] = messages[k + 1].tool_results
                assert answer.text == f"Paths found:\n{path}\n\n"
                shown = messages[k + 2]
                assert shown.role == "user" and shown.text.startswith(f"{path}:{lines or '1-'}")
                assert re.search(r"\n```\n {0,3}\d+ \| ", shown.text) and shown.text.endswith("```")
        for name in ("cat", "create_textdoc", "update_textdoc", "rm"):
            for arguments, _ in _calls(session, name):
                path = arguments.get("path", arguments.get("paths"))
                assert path.startswith(ROOT + "/")  # full paths
        for name in ("create_textdoc", "update_textdoc"):
            for _, result in _calls(session, name):
                assert result == "The operation has succeeded.\n"
        [(removed, gone)] = _calls(session, "rm")
        assert gone == f"The operation has succeeded.\nFile `{removed['path']}` removed"
        [(moved, answer)] = _calls(session, "mv")
        assert answer == (
            f"The operation has succeeded.\nFile moved from '{moved['source']}' to "
            f"'{moved['destination']}'"
        )
        for arguments, result in _calls(session, "shell"):
            assert arguments["workdir"] == ROOT
            # The output filter keeps the top lines: a long output loses its tail, this line too.
            assert re.search(
                r"\n(The command was running \d+\.\d{3}s, finished with exit code \d|"
                r"\.\.\.\d+ lines skipped\.\.\.)\n$",
                result,
            ), result[-120:]
            if arguments["command"] == "dart test":
                assert arguments["output_filter"] == TESTS_FILTER
        for _, result in _calls(session, "search_pattern"):
            assert result.startswith("Path matches (file/folder names):\n")
            assert "\nText matches inside files:\nRegex search results for pattern '" in result
            assert re.search(r"\nFound \d+ matches across \d+ files\n", result)
        for arguments, result in _calls(session, "search_symbol_definition"):
            assert result.startswith(f"Definitions for `{arguments['symbols']}`:\n")
        for arguments, result in _calls(session, "tree"):
            lines = result.splitlines()
            assert lines[0] == "/" and lines[1] == "  home/"
            assert lines[len(arguments["path"].split("/")) - 1].endswith("src/")
        [(delegated, report)] = _calls(session, "subagent")
        assert delegated["tools"] == "shell,cat"
        assert report.startswith(f"# Subagent Report\n\n**Task:** {delegated['task']}\n\n")
        assert f"**Expected Result:** {delegated['expected_result']}\n\n## Result\n" in report


def test_refact_style_speaks_dart_analyze_test_format_pub_and_benchmark_harness() -> None:
    from compaction.eval.families.refact import ANALYZE, BENCH, ROOT

    for session in sessions("refact-style"):
        runs: dict[str, list[str]] = {}
        for arguments, result in _calls(session, "shell"):
            runs.setdefault(arguments["command"], []).append(result)
        failed, ok = runs[ANALYZE]
        flagged = re.findall(
            r"^  error - (lib/src/\w+\.dart):(\d+):(\d+) - Undefined name 'tenantId'\. Try "
            r"correcting the name to one that is defined, or defining the name\. - "
            r"undefined_identifier$",
            failed,
            re.M,
        )
        assert [line for _, line, _ in flagged] == ["88", "93"]
        assert "\n2 issues found.\n" in failed and "exit code 3\n" in failed
        assert ok.startswith("Analyzing harbor_queue...\nNo issues found!\n")
        # The fix: one update_textdoc replacing both lines the analyzer named.
        [fix] = [a for a, _ in _calls(session, "update_textdoc") if "tenantId" in a["old_str"]]
        assert fix["path"] == f"{ROOT}/{flagged[0][0]}" and fix["multiple"] is True
        assert fix["replacement"].endswith("(batch, batch.tenantId);")
        # package:test: the first run through the subagent, the last one through shell.
        [(_, report)] = _calls(session, "subagent")
        [last] = runs["dart test"]
        [first_summary] = re.findall(r"^\d\d:\d\d (\+\d+ -3: Some tests failed\.)$", report, re.M)
        [last_summary] = re.findall(r"^\d\d:\d\d (\+\d+ -1: Some tests failed\.)$", last, re.M)
        status = [f for f in session.facts if f.category == "test_status"]
        assert [f.probe[0] for f in status] == [last_summary]
        assert status[0].stale == (first_summary,)
        [open_error] = [f.probe[0] for f in session.facts if f.category == "error_open"]
        assert re.search(rf": {re.escape(open_error)} \[E\]\n  Expected: ", last)
        assert "exit code 1\n" in last
        [fmt] = runs["dart format --output=none --set-exit-if-changed lib test"]
        assert re.match(r"Formatted \d+ files \(0 changed\) in \d\.\d\d seconds\.\n", fmt)
        [publish] = runs["dart pub publish --dry-run"]
        assert "\nPackage has 0 warnings.\n" in publish
        # benchmark_harness prints the score as a double; the assistant keeps its figure.
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        [bench] = runs[BENCH]
        assert re.match(rf"FlushOneBatch\(RunTime\): {re.escape(figure)}\d+ us\.\n", bench)


def test_swekit_style_speaks_composios_filetool_and_shelltool() -> None:
    from compaction.eval.families.swekit import OPENED, ROOT

    mine = _shapes("swekit-style")
    assert set(mine) == {
        "FILETOOL_OPEN_FILE", "FILETOOL_EDIT_FILE", "FILETOOL_CREATE_FILE", "FILETOOL_WRITE",
        "FILETOOL_SEARCH_WORD", "FILETOOL_FIND_FILE", "FILETOOL_LIST_FILES",
        "FILETOOL_CHANGE_WORKING_DIRECTORY", "FILETOOL_RENAME_FILE", "FILETOOL_GIT_PATCH",
        "SHELLTOOL_CREATE_SHELL", "SHELLTOOL_EXEC_COMMAND",
    }  # fmt: skip
    # SWE-kit adds a required `thought` to every FILETOOL and SHELLTOOL schema.
    assert all("thought" in names for names in mine.values())
    assert mine["FILETOOL_OPEN_FILE"] == {"file_path", "line_number", "thought"}
    assert mine["FILETOOL_EDIT_FILE"] == {"file_path", "text", "start_line", "end_line", "thought"}
    assert mine["FILETOOL_CREATE_FILE"] == {"path", "is_directory", "thought"}
    assert mine["FILETOOL_WRITE"] == {"file_path", "text", "thought"}
    assert mine["FILETOOL_SEARCH_WORD"] == {"word", "pattern", "thought"}
    assert mine["FILETOOL_FIND_FILE"] == {"pattern", "include", "thought"}
    assert mine["FILETOOL_LIST_FILES"] == {"thought"}
    assert mine["FILETOOL_CHANGE_WORKING_DIRECTORY"] == {"path", "thought"}
    assert mine["FILETOOL_RENAME_FILE"] == {"old_file_path", "new_file_path", "thought"}
    assert mine["FILETOOL_GIT_PATCH"] == {"new_file_paths", "thought"}
    assert mine["SHELLTOOL_CREATE_SHELL"] == {"thought"}
    assert mine["SHELLTOOL_EXEC_COMMAND"] == {"cmd", "shell_id", "thought"}
    for session in sessions("swekit-style"):
        answers: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        for name in mine:
            for arguments, result in _calls(session, name):
                wrapped = json.loads(result)
                # LocalToolMixin.execute's envelope, sent back as json.dumps of it.
                assert set(wrapped) == {"data", "error", "successful"}
                assert wrapped["error"] is None and wrapped["successful"] is True
                answers.setdefault(name, []).append((arguments, wrapped["data"]))
        [(_, created)] = answers["SHELLTOOL_CREATE_SHELL"]
        assert re.fullmatch(r"[A-Za-z0-9]{6}", created["shell_id"])
        for arguments, data in answers["SHELLTOOL_EXEC_COMMAND"]:
            assert arguments["shell_id"] == created["shell_id"]
            assert list(data) == ["stdout", "stderr", "exit_code", "current_shell_pwd"]
            assert data["current_shell_pwd"] == f"Currently in {ROOT}"
        for arguments, data in answers["FILETOOL_OPEN_FILE"]:
            assert list(data) == ["error", "current_working_directory", "message", "lines"]
            assert data["message"] == OPENED
            lines = data["lines"].split("\n")
            header = rf"\[File: {ROOT}/{arguments['file_path']}\] \((\d+) lines total\)\]"
            total = re.fullmatch(header, lines[0])
            assert total, lines[0]
            above = int(re.fullmatch(r"\((\d+) line above\)", lines[1])[1])
            assert above == arguments.get("line_number", 0)
            numbers = [int(line.split(":", 1)[0]) for line in lines[2:-2]]
            assert numbers == list(range(above + 1, int(total[1]) + 1))
            assert lines[-2] == "(0 line below)" and lines[-1] == ""
        for arguments, data in answers["FILETOOL_EDIT_FILE"]:
            assert list(data) == ["error", "current_working_directory", "old_text", "updated_text"]
            assert arguments["start_line"] == arguments["end_line"]
            row = f"\n{arguments['start_line']}:{arguments['text']}\n"
            assert row in data["updated_text"] and row not in data["old_text"]
        for arguments, data in answers["FILETOOL_CREATE_FILE"]:
            assert data["path"] == f"{ROOT}/{arguments['path']}"
        for _, data in answers["FILETOOL_WRITE"]:
            assert data == {"error": "", "current_working_directory": ROOT}
        [(moved, renamed)] = answers["FILETOOL_RENAME_FILE"]
        assert renamed["message"] == "File renamed successfully."
        for _, data in answers["FILETOOL_SEARCH_WORD"]:
            assert all(isinstance(n, int) for hits in data["results"].values() for n, _ in hits)
        for _, data in answers.get("FILETOOL_FIND_FILE", []):
            assert data["results"] == sorted(data["results"])
        for _, data in answers.get("FILETOOL_LIST_FILES", []):
            assert all(kind == "file" for _, kind in data["files"])
        # The session ends as SWE-kit's prompt asks: the patch, then PATCH COMPLETED.
        [(asked, patched)] = answers["FILETOOL_GIT_PATCH"]
        assert moved["new_file_path"] in asked["new_file_paths"]
        assert f"rename to {moved['new_file_path']}" in patched["patch"]
        for path in asked["new_file_paths"][:-1]:
            assert f"+++ b/{path}\n" in patched["patch"]
        last = session.conversation.messages[-1]
        assert last.role == "assistant" and last.text.endswith("\n\nPATCH COMPLETED")


def test_swekit_style_speaks_cabal_ghc_hspec_hlint_and_criterion() -> None:
    from compaction.eval.families.swekit import BENCH, BENCH_READ, BUILD, TESTS_RUN

    for session in sessions("swekit-style"):
        runs: dict[str, list[dict[str, Any]]] = {}
        for arguments, result in _calls(session, "SHELLTOOL_EXEC_COMMAND"):
            runs.setdefault(arguments["cmd"], []).append(json.loads(result)["data"])
        failed, ok = runs[BUILD]
        assert failed["exit_code"] == 1 and ok["exit_code"] == 0
        flagged = re.findall(r"^(src/Tollgate/\w+\.hs):(\d+):5: error: \[GHC-83865\]$",
                             failed["stderr"], re.M)  # fmt: skip
        assert [line for _, line in flagged] == ["88", "93"]
        assert "is applied to too few arguments" in failed["stderr"]
        assert failed["stderr"].endswith("Error: cabal: Failed to build tollgate-0.3.1.0.\n")
        assert "error" not in ok["stdout"] + ok["stderr"]
        # The fix: an edit per line the compiler named, each passing the batch's tenant.
        fixes = [a for a, _ in _calls(session, "FILETOOL_EDIT_FILE")
                 if a["text"].endswith(" (batchTenant batch)")]  # fmt: skip
        assert [(a["file_path"], str(a["start_line"])) for a in fixes] == flagged
        # hspec inside cabal test: a mark per example, the failures, the counts.
        first, last = runs[TESTS_RUN]
        for out, failures in ((first, 3), (last, 1)):
            [(total, failed_n)] = _HSPEC_COUNTS.findall(out["stdout"])
            marks = re.findall(r"^    .+ \[(✔|✘)\]$", out["stdout"], re.M)
            assert len(marks) == int(total) and marks.count("✘") == int(failed_n) == failures
            assert out["stdout"].count("To rerun use: --match") == failures
            assert "Test suite tollgate-spec: FAIL" in out["stdout"] and out["exit_code"] == 1
            assert out["stderr"].startswith("Error: cabal: Tests failed for test:tollgate-spec")
            modules = re.findall(r"^(Tollgate\.\w+)$", out["stdout"], re.M)
            assert modules == sorted(modules)  # hspec-discover's order
        [hlint] = runs["hlint src test"]
        assert hlint["stdout"].endswith("\n2 hints\n") and hlint["exit_code"] == 1
        assert runs["ormolu --mode check $(git ls-files '*.hs')"][0]["stdout"] == ""
        # criterion rounds to four figures; the CSV report, read with awk, has the figure.
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        [bench] = runs[BENCH]
        assert f"mean                 {float(figure):.1f} \u03bcs   (" in bench["stdout"]
        assert runs[BENCH_READ] == [
            dict(runs[BENCH_READ][0], stdout=f"drain/500 mean {figure} us\n")
        ]


def _gptme_steps(session: EvalSession) -> list[tuple[str, str, str]]:
    """(info string, block content, output) of every tool block a gptme-style session runs:
    the output is the next message, a `<system>` user message."""
    from compaction.eval.families.gptme import SYSTEM_CLOSE, SYSTEM_OPEN, tool_blocks

    messages = session.conversation.messages
    steps = []
    for k, message in enumerate(messages):
        if message.role != "assistant":
            continue
        blocks = tool_blocks(message.text)
        after = messages[k + 1] if k + 1 < len(messages) else None
        if not blocks:
            # An assistant message that runs nothing hands the turn to the user.
            assert after is None or not after.text.startswith(SYSTEM_OPEN), message.text
            continue
        # One block, at the end: the model stops there for its output.
        [(info, content)] = blocks
        assert message.text.endswith(f"```{info}\n{content}\n```"), message.text[-200:]
        assert after is not None and after.role == "user"
        assert after.text.startswith(SYSTEM_OPEN) and after.text.endswith(SYSTEM_CLOSE)
        steps.append((info, content, after.text[len(SYSTEM_OPEN) : -len(SYSTEM_CLOSE)]))
    outputs = [m for m in messages if m.role == "user" and m.text.startswith(SYSTEM_OPEN)]
    assert len(outputs) == len(steps)
    return steps


def test_gptme_style_acts_through_markdown_tool_blocks() -> None:
    from compaction.eval.families.gptme import ROOT, GptmeVoice, todo_operations

    states = {"pending", "in_progress", "completed", "paused"}
    used: set[str] = set()
    for session in sessions("gptme-style"):
        # The default markdown tool format: no provider tool calls at all.
        assert all(not m.tool_calls and not m.tool_results for m in session.conversation.messages)
        todos: dict[str, str] = {}
        for info, content, output in _gptme_steps(session):
            tool, _, argument = info.partition(" ")
            used.add(info if tool == "todo" else tool)
            if tool == "shell":
                header = "Ran allowlisted command" if GptmeVoice.allowlisted(content) else (
                    "Ran command")  # fmt: skip
                assert output.startswith(f"{header}: `{content}`\n\n"), output[:200]
                assert re.search(r"(\n\n|No output\n|\nReturn code: \d+\n)\Z", output)
                if content.startswith(("cat ", "grep ", "rg ", "ls ", "tail ", "head ")):
                    assert header == "Ran allowlisted command"
            elif tool == "save":
                assert argument.startswith(ROOT + "/") and output == f"Saved to {argument}"
            elif tool == "patch":
                assert argument.startswith(ROOT + "/")
                assert output == f"Patch successfully applied to `{argument}`"
                hunk = r"<<<<<<< ORIGINAL\n(.+?)\n=======\n(.+?)\n>>>>>>> UPDATED"
                assert re.fullmatch(rf"{hunk}(\n{hunk})*", content, re.S), content
            else:
                assert info == "todo write", info
                answers = output.split("\n")
                operations = todo_operations(content)
                assert len(answers) == len(operations)
                for (operation, *arguments), answer in zip(operations, answers, strict=True):
                    if operation == "add":
                        todo_id = str(max((int(k) for k in todos), default=0) + 1)
                        todos[todo_id] = arguments[0]
                        assert answer == f"Added todo {todo_id}: {arguments[0]}"
                    elif operation == "update":
                        assert arguments[1] in states
                        assert answer == f"Updated todo {arguments[0]} state to: {arguments[1]}"
                    else:
                        assert operation == "remove"
                        gone = todos.pop(arguments[0])
                        assert answer == f"Removed todo {arguments[0]}: {gone}"
    assert used == {"shell", "save", "patch", "todo write"}


def test_gptme_style_speaks_zig_build_test_fmt_and_bench() -> None:
    from compaction.eval.families.gptme import BENCH, BUILD, ROOT, TESTS_RUN

    for session in sessions("gptme-style"):
        runs: dict[str, list[str]] = {}
        patches: dict[str, list[str]] = {}
        for info, content, output in _gptme_steps(session):
            if info == "shell":
                runs.setdefault(content, []).append(output)
            elif info.startswith("patch "):
                patches.setdefault(info.removeprefix("patch "), []).append(content)
        # The build runner writes to stderr, without colour: "+- " branches, no source lines.
        failed, ok = runs[BUILD]
        assert failed.startswith(f"Ran command: `{BUILD}`\n\n```stderr\ninstall\n+- install ")
        flagged = re.findall(
            r"^(src/\w+\.zig):(\d+):\d+: error: use of undeclared identifier 'tenant_id'$",
            failed,
            re.M,
        )
        assert [line for _, line in flagged] == ["88", "93"]
        assert "\nerror: the following command failed with 2 compilation errors:\n" in failed
        assert "\nBuild Summary: 0/3 steps succeeded; 1 failed\n" in failed
        assert failed.endswith("```\n\nReturn code: 1\n")
        assert ok == f"Ran command: `{BUILD}`\n\nNo output\n"
        # The fix: one patch, a hunk per line the compiler named.
        [fix] = [p for p in patches[f"{ROOT}/{flagged[0][0]}"] if "tenant_id);" in p]
        assert fix.count("<<<<<<< ORIGINAL") == 2 and fix.count("batch, batch.tenant_id);") == 2
        # zig build test: the failures, the summary's counts, the tree of failed steps.
        first, last = runs[TESTS_RUN]
        summaries = []
        for output, failures in ((first, 3), (last, 1)):
            [(passed, total, failed_n)] = re.findall(
                r"^Build Summary: 1/3 steps succeeded; 1 failed; (\d+)/(\d+) tests passed; "
                r"(\d+) failed$",
                output,
                re.M,
            )
            assert int(failed_n) == failures == output.count("' failed: expected ")
            assert int(passed) + failures == int(total)
            assert output.count(f"\n+- run test {passed}/{total} passed, {failures} failed\n") == 2
            assert "the following test command failed:\n" in output
            summaries.append(f"{passed}/{total} tests passed; {failures} failed")
        [status] = [f for f in session.facts if f.category == "test_status"]
        assert status.probe == (summaries[1],) and status.stale == (summaries[0],)
        [open_error] = [f.probe[0] for f in session.facts if f.category == "error_open"]
        assert f"\nerror: '{open_error}' failed: expected " in last
        # zig fmt and a passing build print nothing; --summary all prints the tree.
        assert runs["zig fmt --check src build.zig"] == [
            "Ran command: `zig fmt --check src build.zig`\n\nNo output\n"
        ]
        [cross] = [o for c, o in runs.items() if "--summary all" in c]
        assert "\nBuild Summary: 3/3 steps succeeded\ninstall success\n" in cross[0]
        # The benchmark's mean is the figure the assistant keeps.
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        [bench] = runs[BENCH]
        assert re.search(rf"^flush one batch +\d+ runs  mean {re.escape(figure)} us ", bench, re.M)


def test_gptme_style_is_measured_as_anthropic_messages_too() -> None:
    from compaction.eval.families.gptme import SYSTEM_OPEN

    for session, payload in _as_anthropic("gptme-style"):
        # As gptme sends it to Claude: one system prompt, then user and assistant strictly
        # alternating, tool output in `<system>` user turns, no tool_use blocks.
        assert isinstance(payload["system"], str) and payload["system"].startswith(
            "You are gptme v"
        )
        roles = [m["role"] for m in payload["messages"]]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)
        blocks = [b for m in payload["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        assert all(b["type"] == "text" for b in blocks)
        outputs = [m for m in session.conversation.messages if m.text.startswith(SYSTEM_OPEN)]
        assert outputs and all(m.role == "user" for m in outputs)
        assert ANTHROPIC.validate(ANTHROPIC.decode(payload)) == []


def _as_anthropic(family: str) -> list[tuple[EvalSession, dict[str, Any]]]:
    """The family's sessions and their Anthropic Messages payloads; the bench measures the
    family in that dialect too (`bench_realdata.ANTHROPIC_FAMILIES`)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        import bench_realdata
    finally:
        sys.path.pop(0)
        sys.modules.pop("bench_realdata", None)
    assert family in bench_realdata.ANTHROPIC_FAMILIES
    return [(session, ANTHROPIC.encode(session.conversation)) for session in sessions(family)]


@pytest.mark.parametrize(
    "family",
    ["warp-style", "augment-style", "void-style", "refact-style", "dc-style", "clinemcp-style"],
)
def test_tool_calls_are_tool_use_blocks_in_anthropic_messages(family: str) -> None:
    for session, payload in _as_anthropic(family):
        blocks = [b for m in payload["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        uses = [b for b in blocks if b["type"] == "tool_use"]
        answered = [b for b in blocks if b["type"] == "tool_result"]
        calls = [c for m in session.conversation.messages for c in m.tool_calls]
        assert len(uses) == len(answered) == len(calls)
        assert [b["name"] for b in uses] == [c.name for c in calls]
        assert {b["tool_use_id"] for b in answered} == {b["id"] for b in uses}
        assert ANTHROPIC.validate(ANTHROPIC.decode(payload)) == []


#: Desktop Commander's tools (as Claude Code names them, after its prefix) and their arguments.
_DC_TOOLS = {
    "start_process": {"command", "timeout_ms"},
    "read_process_output": {"pid", "timeout_ms"},
    "interact_with_process": {"pid", "input"},
    "read_file": {"path", "offset", "length"},
    "read_multiple_files": {"paths"},
    "get_file_info": {"path"},
    "write_file": {"path", "content", "mode"},
    "edit_block": {"file_path", "old_string", "new_string", "expected_replacements"},
    "list_directory": {"path", "depth"},
    "create_directory": {"path"},
    "move_file": {"source", "destination"},
    "start_search": {"path", "pattern", "searchType", "filePattern", "contextLines"},
    "get_more_search_results": {"sessionId", "offset", "length"},
}
_DC_READ = re.compile(
    r"\[Reading (\d+ lines from (start|line \d+) \(total: \d+ lines, \d+ remaining\)|"
    r"last \d+ lines \(total: \d+ lines\))\]\n\n"
)


def _dc_blocks(session: EvalSession) -> dict[str, list[str]]:
    """The text blocks of every tool result, by call id: an MCP result's own blocks."""
    from compaction.messages import TextPart

    return {r.tool_call_id: [p.text for p in r.content if isinstance(p, TextPart)]
            for m in session.conversation.messages for r in m.tool_results}  # fmt: skip


def test_dc_style_speaks_desktop_commanders_tools() -> None:
    from compaction.eval.families.dc import BENCH, PREFIX, ROOT

    mine = _shapes("dc-style")
    assert mine == {PREFIX + tool: names for tool, names in _DC_TOOLS.items()}
    for session in sessions("dc-style"):
        calls = [c for m in session.conversation.messages for c in m.tool_calls]
        assert all(re.fullmatch(r"toolu_01[A-Za-z0-9]{22}", c.id) for c in calls)
        blocks = _dc_blocks(session)
        # start_process: its PID and shell, the output so far, a state line where it applies.
        started: dict[int, str] = {}
        for arguments, result in _calls(session, PREFIX + "start_process"):
            assert arguments["command"].startswith(f"cd {ROOT} && ")
            pid = re.match(r"Process started with PID (\d+) \(shell: /bin/bash\)\nInitial "
                           r"output:\n", result)  # fmt: skip
            assert pid, result[:100]
            started[int(pid[1])] = arguments["command"]
        [(read, output)] = _calls(session, PREFIX + "read_process_output")
        assert started[read["pid"]].endswith(BENCH)
        assert re.fullmatch(r"\[Reading (\d+) new lines \(total: \1 lines\)\]\n\n.+\n\n✅ Process "
                            r"completed with exit code 0 \(runtime: \d+\.\d\ds\)", output,
                            re.S)  # fmt: skip
        shells = [pid for pid, command in started.items() if command.endswith("&& gleam shell")]
        for arguments, result in _calls(session, PREFIX + "interact_with_process"):
            pid = arguments["pid"]
            assert [pid] == shells and arguments["input"].endswith(").")
            assert result.startswith(f"✅ Input executed in process {pid}:\n\n📤 Output:\n")
            assert result.endswith(f'\n\n\n🔄 Process {pid} is waiting for input (detected: ">")')
        # Absolute paths, and the tools' own answers.
        for name in ("read_file", "get_file_info", "write_file", "list_directory",
                     "create_directory"):  # fmt: skip
            for arguments, _ in _calls(session, PREFIX + name):
                assert arguments["path"].startswith(ROOT + "/")
        for arguments, result in _calls(session, PREFIX + "read_file"):
            assert _DC_READ.match(result), result[:100]
            if arguments.get("offset", 0) < 0:
                assert result.startswith(f"[Reading last {-arguments['offset']} lines ")
        for call in calls:
            if call.name == PREFIX + "read_multiple_files":
                paths = json.loads(call.arguments)["paths"]
                summary, *files = blocks[call.id]
                assert summary == "\n".join(f"{p}: text/plain (text)" for p in paths)
                assert [f.split("\n")[1] for f in files] == [
                    f"--- {p} contents: ---" for p in paths
                ]
            else:
                assert len(blocks[call.id]) == 1
        for _, result in _calls(session, PREFIX + "get_file_info"):
            rows = dict(line.split(": ", 1) for line in result.split("\n"))
            assert list(rows)[:3] == ["size", "created", "modified"]
            assert rows["isFile"] == "true" and rows["created"].startswith('"2026-')
            assert int(rows["appendPosition"]) == int(rows["lastLine"]) + 1
        written: dict[str, list[str]] = {}
        for arguments, result in _calls(session, PREFIX + "write_file"):
            lines = arguments["content"].count("\n") + 1
            verb = "wrote to" if arguments["mode"] == "rewrite" else "appended to"
            assert result == f"Successfully {verb} {arguments['path']} ({lines} lines) "
            assert lines <= 30  # the tool asks for chunks of 25-30 lines
            written.setdefault(arguments["path"], []).append(arguments["mode"])
        assert all(modes[0] == "rewrite" and set(modes[1:]) <= {"append"}
                   for modes in written.values())  # fmt: skip
        for arguments, result in _calls(session, PREFIX + "edit_block"):
            assert arguments["file_path"].startswith(ROOT + "/")
            assert _DC_READ.match(result) and arguments["new_string"] in result
            assert arguments["old_string"] not in result.split("\n\n", 1)[1]
        [(made, made_answer)] = _calls(session, PREFIX + "create_directory")
        assert made_answer == f"Successfully created directory {made['path']}"
        [(moved, moved_answer)] = _calls(session, PREFIX + "move_file")
        assert moved["destination"].startswith(made["path"] + "/")
        assert moved_answer == f"Successfully moved {moved['source']} to {moved['destination']}"
        for _, result in _calls(session, PREFIX + "list_directory"):
            assert all(re.fullmatch(r"\[(DIR|FILE)\] [\w/.]+", row) for row in result.split("\n"))
        searched = {}
        for arguments, result in _calls(session, PREFIX + "start_search"):
            assert arguments["searchType"] == "content" and arguments["filePattern"] == "*.gleam"
            head = re.match(rf'Started content search session: (search_\d+_\d{{13}})\nPattern: '
                            rf'"{arguments["pattern"]}"\nPath: {arguments["path"]}\nStatus: '
                            r"COMPLETED\nRuntime: \d+ms\nTotal results: (\d+)\n\n",
                            result)  # fmt: skip
            assert head and result.endswith("\n✅ Search completed.")
            searched[head[1]] = int(head[2])
        for arguments, result in _calls(session, PREFIX + "get_more_search_results"):
            total = re.search(r"\nTotal results found: (\d+) \((\d+) matches\)\n", result)
            assert total and int(total[2]) == searched[arguments["sessionId"]]
            shown = result.split("\nResults:\n", 1)[1].split("\n\n")[0].split("\n")
            left = int(total[1]) - arguments["offset"]
            assert len(shown) == min(left, arguments["length"])
            more = arguments["offset"] + len(shown)
            hint = f"\n📖 More results available. Use get_more_search_results with offset: {more}"
            assert (hint in result) == (left > arguments["length"])
            assert all(re.match(rf"📄 {ROOT}/\S+\.gleam:\d+ - ", row) for row in shown)


def test_dc_style_speaks_gleam_its_compiler_and_gleeunit() -> None:
    from compaction.eval.families.dc import BENCH, BUILD, PREFIX, ROOT, TESTS_COMMAND

    compiled = r"  Compiling kittiwake\n   Compiled in \d\.\d\ds\n"
    for session in sessions("dc-style"):
        runs: dict[str, list[str]] = {}
        for arguments, result in _calls(session, PREFIX + "start_process"):
            command = arguments["command"].removeprefix(f"cd {ROOT} && ")
            runs.setdefault(command, []).append(result.split("\nInitial output:\n", 1)[1])
        # The compiler's boxes: both uses of the unknown name, the carets under it.
        failed, ok = runs[BUILD]
        boxes = re.findall(
            r"^error: Unknown variable\n   ┌─ (/\S+\.gleam):(\d+):(\d+)\n   │\n(\d+) │ (.+)\n"
            r"   │ ( *)\^{9}\n\nThe name `tenant_id` is not in scope here\.\n",
            failed,
            re.M,
        )
        assert [(at, shown) for _, at, _, shown, _, _ in boxes] == [("88", "88"), ("95", "95")]
        for _, _, column, _, source, pad in boxes:
            assert source[int(column) - 1 :].startswith("tenant_id)")
            assert len(pad) == int(column) - 1
        assert failed.startswith("  Compiling kittiwake\nerror: Unknown variable\n")
        assert re.fullmatch(compiled, ok)
        # One edit_block fixes both, after reading around the lines the compiler named.
        [fix] = [a for a, _ in _calls(session, PREFIX + "edit_block")
                 if a["expected_replacements"] == 2]  # fmt: skip
        assert fix["file_path"] == boxes[0][0] and fix["new_string"].endswith("batch.tenant_id)")
        assert {"path": fix["file_path"], "offset": 80, "length": 20} in [
            a for a, _ in _calls(session, PREFIX + "read_file")
        ]
        # gleeunit: a green dot per pass, a block per failed assert, the counts in red.
        first, last = runs[TESTS_COMMAND]
        summaries = []
        for output, failures in ((first, 3), (last, 1)):
            assert re.match(compiled + r"    Running kittiwake_test\.main\n", output)
            [(passed, failed_n)] = re.findall(
                r"\x1b\[31m\n(\d+) passed, (\d+) failures\x1b\[39m\n\Z", output
            )
            assert int(failed_n) == failures
            assert output.count("\x1b[36m info\x1b[39m: Assertion failed.\n") == failures
            assert output.count("\x1b[1m\x1b[31massert\x1b[39m\x1b[22m \x1b[90mtest/") == failures
            assert output.count("\x1b[32m.\x1b[39m") == int(passed)
            summaries.append(f"{passed} passed, {failed_n} failures")
        [status] = [f for f in session.facts if f.category == "test_status"]
        assert status.probe == (summaries[1],) and status.stale == (summaries[0],)
        [still] = [f.probe[0] for f in session.facts if f.category == "error_open"]
        assert re.fullmatch(r"kittiwake@\w+_test\.\w+_test", still)
        assert f"\x1b[36m test\x1b[39m: {still}\n" in last
        # gleam format prints nothing when all is formatted; the shipment says where it is.
        assert runs["gleam format --check src test"] == [""]
        [shipment] = runs["gleam export erlang-shipment"]
        assert (f"   Exported kittiwake\n\nYour Erlang shipment has been generated to {ROOT}/build/"
                "erlang-shipment.\n") in shipment  # fmt: skip
        # The bench outlasts its timeout; its mean is read back once it has finished.
        [started] = runs[BENCH]
        assert started.endswith(
            "\n⏳ Process is running. Use read_process_output to get more output."
        )
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        [(_, bench)] = _calls(session, PREFIX + "read_process_output")
        assert re.search(rf"^  mean    {re.escape(figure)}\d\d µs$", bench, re.M)
        # gleam shell: erl's banner and prompt, which Desktop Commander reads as waiting.
        [shell] = runs["gleam shell"]
        assert re.search(r"\n    Running Erlang shell\nErlang/OTP \d+ .+\n\nEshell V[\d.]+ \(press "
                         r"Ctrl\+G to abort, type help\(\)\. for help\)\n1> \n🔄 Process \d+ is "
                         r'waiting for input \(detected: ">"\)\Z', shell)  # fmt: skip


def test_dc_style_keeps_its_plan_as_a_checklist_in_its_replies() -> None:
    from compaction.eval.families.dc import PLAN_HEADING

    for session in sessions("dc-style"):
        plans = [m for m in session.conversation.messages
                 if m.role == "assistant" and m.text.startswith(PLAN_HEADING)]  # fmt: skip
        # No to-do tool: the checklist is prose, posted whole at each change.
        assert len(plans) == 3 and all(not m.tool_calls for m in plans)
        lists = _todo_lists(session)
        assert [i["status"] for i in lists[0]] == ["in_progress"] + ["pending"] * 4
        assert [i["status"] for i in lists[-1]].count("completed") == 3
        for fact in session.facts:
            if fact.category == "todo":
                assert any(fact.probe[0] in m.text for m in plans)


def test_dc_style_is_measured_as_anthropic_messages_too() -> None:
    from compaction.eval.families.dc import PREFIX

    for _, payload in _as_anthropic("dc-style"):
        assert payload["system"].startswith("You are Claude Code, Anthropic's official CLI")
        blocks = [b for m in payload["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        uses = {b["id"]: b for b in blocks if b["type"] == "tool_use"}
        assert all(b["name"].startswith(PREFIX) for b in uses.values())
        # An MCP result is the server's content blocks: one text, or several for several files.
        for result in (b for b in blocks if b["type"] == "tool_result"):
            parts = result["content"]
            use = uses[result["tool_use_id"]]
            if use["name"] == PREFIX + "read_multiple_files":
                assert [p["type"] for p in parts] == ["text"] * (len(use["input"]["paths"]) + 1)
            else:
                assert isinstance(parts, str) or [p["type"] for p in parts] == ["text"]


def test_the_ruler_reads_the_files_dc_styles_edit_block_and_write_file_change() -> None:
    # edit_block {file_path} is an edit by its name's words, write_file {path} a write (a new
    # file where nothing named it before); both name absolute paths.
    for session in sessions("dc-style"):
        extracted = {(f.category, f.probe[0]) for f in extract_probes(session.conversation)}
        for fact in session.facts:
            if fact.category in ("file_modified", "file_created"):
                assert any(c == fact.category and p.endswith(fact.probe[0])
                           for c, p in extracted), fact.probe  # fmt: skip


def test_the_ruler_reads_the_commands_dc_style_runs_through_start_process() -> None:
    session = sessions("dc-style")[0]
    extracted = [f.probe for f in extract_probes(session.conversation) if f.category == "command"]
    for fact in session.facts:
        if fact.category == "command":
            # The ruler's probe is the whole line it ran, `cd <project> && ` included.
            assert any(fact.probe[0] in piece for probe in extracted for piece in probe)


#: The tools of the two MCP servers a Cline-over-MCP assistant uses, and their arguments.
_CLINEMCP_TOOLS = {
    "filesystem": {
        "read_text_file": {"path", "head", "tail"},
        "read_multiple_files": {"paths"},
        "write_file": {"path", "content"},
        "edit_file": {"path", "edits", "dryRun"},
        "create_directory": {"path"},
        "list_directory": {"path"},
        "move_file": {"source", "destination"},
        "search_files": {"path", "pattern"},
        "get_file_info": {"path"},
    },
    "mcp-server-commands": {"run_process": {"command_line", "cwd", "timeout_ms"}},
}
_CLINE_USE = re.compile(
    r"\A(?:(.+?)\n\n)?<(use_mcp_tool|ask_followup_question|attempt_completion)>\n(.*)\n</\2>\Z",
    re.DOTALL,
)
_CLINE_PARAM = re.compile(r"^<(\w+)>(?:\n(.*?)\n|(.*?))</\1>$", re.DOTALL | re.MULTILINE)


def _cline_uses(session: EvalSession) -> list[tuple[str, dict[str, str], str, list[str]]]:
    """(tool, its parameters, the words before it, the text blocks of the user message that
    answers it) of every tool use an assistant message writes in Cline's XML."""
    from compaction.messages import TextPart

    messages = session.conversation.messages
    uses = []
    for k, message in enumerate(messages):
        if message.role != "assistant":
            continue
        use = _CLINE_USE.match(message.text)
        assert use and not message.tool_calls, message.text[:200]
        params = {m[1]: m[2] if m[2] is not None else m[3]
                  for m in _CLINE_PARAM.finditer(use[3])}  # fmt: skip
        answer = messages[k + 1] if k + 1 < len(messages) else None
        blocks = [] if answer is None else [p.text for p in answer.parts
                                            if isinstance(p, TextPart)]  # fmt: skip
        uses.append((use[2], params, use[1] or "", blocks))
    return uses


def _mcp_runs(session: EvalSession) -> dict[str, list[str]]:
    """What every run_process answered, by command line, after Cline's result line."""
    runs: dict[str, list[str]] = {}
    for tool, params, _, blocks in _cline_uses(session):
        if tool == "use_mcp_tool" and params["tool_name"] == "run_process":
            [result] = [b for b in blocks if b.startswith("[use_mcp_tool for ")]
            command = json.loads(params["arguments"])["command_line"]
            runs.setdefault(command, []).append(result.split(" Result:\n", 1)[1])
    return runs


def test_clinemcp_style_writes_one_xml_tool_use_per_message() -> None:
    from compaction.eval.families.clinemcp import (
        COMPLETION_DONE,
        COMPLETION_FEEDBACK,
        FEEDBACK,
        ROOT,
    )

    for session in sessions("clinemcp-style"):
        messages = session.conversation.messages
        assert all(not m.tool_calls and not m.tool_results for m in messages)
        first = messages[1].text
        assert first.startswith("<task>\n") and "\n</task>" in first
        uses = _cline_uses(session)
        assert {tool for tool, *_ in uses} == {"use_mcp_tool", "ask_followup_question",
                                               "attempt_completion"}  # fmt: skip
        used: dict[str, set[str]] = {}
        for tool, params, _, blocks in uses[:-1]:
            # Every user message after the task ends with the environment details.
            assert blocks[-1].startswith("<environment_details>\n# Visual Studio Code Visible")
            assert blocks[-1].endswith("\n# Current Mode\nACT MODE\n</environment_details>")
            if tool == "use_mcp_tool":
                server, name = params["server_name"], params["tool_name"]
                arguments = json.loads(params["arguments"])
                assert set(arguments) <= _CLINEMCP_TOOLS[server][name], (server, name)
                used.setdefault(server, set()).add(name)
                for key in ("path", "source", "destination", "cwd"):
                    assert arguments.get(key, ROOT).startswith(ROOT)
                feedback = [b for b in blocks if b.startswith(FEEDBACK.split("\n")[0])]
                results = [b for b in blocks if b.startswith(f"[use_mcp_tool for '{server}'] ")]
                assert len(results) == 1 and len(feedback) <= 1
                assert blocks.index(results[0]) == len(feedback)
                assert results[0].startswith(f"[use_mcp_tool for '{server}'] Result:\n")
            elif tool == "ask_followup_question":
                question = params["question"]
                assert re.fullmatch(rf"\[ask_followup_question for '{re.escape(question)}'\] "
                                    r"Result:\n<answer>\n.+\n</answer>", blocks[0],
                                    re.S)  # fmt: skip
            else:
                assert blocks[:2] == [COMPLETION_DONE, COMPLETION_FEEDBACK]
                assert re.fullmatch(r"<feedback>\n.+\n</feedback>", blocks[2], re.S)
                assert "task_progress" in params
        assert set(used["filesystem"]) >= {"read_text_file", "read_multiple_files", "write_file",
                                           "edit_file", "create_directory", "move_file",
                                           "get_file_info"}  # fmt: skip
        assert used["mcp-server-commands"] == {"run_process"}
        # The task ends on attempt_completion, its result the last message.
        tool, params, _, blocks = uses[-1]
        assert tool == "attempt_completion" and not blocks and "task_progress" in params
        [last] = [f for f in session.facts if f.category == "last_message"]
        assert last.probe[0] in params["result"]


def test_clinemcp_style_answers_with_the_servers_result_texts() -> None:
    from compaction.eval.families.clinemcp import ROOT

    for session in sessions("clinemcp-style"):
        for tool, params, _, blocks in _cline_uses(session):
            if tool != "use_mcp_tool":
                continue
            name, arguments = params["tool_name"], json.loads(params["arguments"])
            [block] = [b for b in blocks if b.startswith("[use_mcp_tool for ")]
            result = block.split(" Result:\n", 1)[1]
            if name == "write_file":
                assert result == f"Successfully wrote to {arguments['path']}"
            elif name == "create_directory":
                assert result == f"Successfully created directory {arguments['path']}"
            elif name == "move_file":
                assert result == (f"Successfully moved {arguments['source']} to "
                                  f"{arguments['destination']}")  # fmt: skip
                assert arguments["destination"].startswith(f"{ROOT}/tests/fixtures/")
            elif name == "edit_file":
                # jsdiff's two-file patch of the one edit, fenced as a diff.
                [edit] = arguments["edits"]
                path = arguments["path"]
                assert arguments["dryRun"] is False
                assert result.startswith(f"```diff\nIndex: {path}\n{'=' * 67}\n--- {path}\t"
                                         f"original\n+++ {path}\tmodified\n@@ -")  # fmt: skip
                assert result.endswith("\n```\n\n")
                assert f"\n-{edit['oldText']}\n+{edit['newText']}\n" in result
                hunk = re.search(r"\n@@ -(\d+),(\d+) \+\1,(\d+) @@\n", result)
                assert hunk and hunk[2] == hunk[3]
                body = result[hunk.end() :].removesuffix("```\n\n").rstrip("\n").split("\n")
                assert len(body) == int(hunk[2]) + 1
            elif name == "read_multiple_files":
                parts = result.split("\n---\n")
                assert [p.split(":\n", 1)[0] for p in parts] == arguments["paths"]
            elif name == "get_file_info":
                rows = dict(line.split(": ", 1) for line in result.split("\n"))
                assert list(rows) == ["size", "created", "modified", "accessed", "isDirectory",
                                      "isFile", "permissions"]  # fmt: skip
                assert re.fullmatch(r"\w{3} Nov \d\d 2026 \d\d:\d\d:\d\d GMT\+0100 \(Central "
                                    r"European Standard Time\)", rows["created"])  # fmt: skip
            elif name == "list_directory":
                assert all(re.fullmatch(r"\[(DIR|FILE)\] [\w.-]+", row)
                           for row in result.split("\n"))  # fmt: skip
            elif name == "search_files":
                assert result == "No matches found" or all(
                    row.startswith(arguments["path"] + "/") for row in result.split("\n")
                )
            elif name == "read_text_file" and "head" in arguments:
                assert result.count("\n") == arguments["head"]
            elif name == "run_process":
                # EXIT_CODE, then STDOUT and STDERR when not empty; "Error:" on a failure.
                code = re.match(r"(Error:\n)?(\d+)(\n\n|\Z)", result)
                assert code and bool(code[1]) == (code[2] != "0"), result[:80]
                assert arguments["cwd"] == ROOT


def test_clinemcp_style_speaks_raco_rackunit_and_time() -> None:
    from compaction.eval.families.clinemcp import BENCH, BUILD, ROOT, TESTS_COMMAND

    rule = "-" * 20
    for session in sessions("clinemcp-style"):
        runs = _mcp_runs(session)
        failed, ok = runs[BUILD]
        assert re.fullmatch(rf"Error:\n1\n\n{ROOT}/private/\w+\.rkt:88:(\d+): tenant-id: unbound "
                            r"identifier\n  in: tenant-id\n  compilation context\.\.\.:\n"
                            rf"   {ROOT}/main\.rkt\n", failed)  # fmt: skip
        assert ok == "0"
        # raco test: file lines and the summary on stdout, rackunit's blocks on stderr.
        first, last = runs[TESTS_COMMAND]
        summaries = []
        for output, failures in ((first, 3), (last, 1)):
            code, stdout, stderr = output.split("\n\n", 2)
            assert code == "Error:\n1"
            lines = stdout.split("\n")
            assert all(re.fullmatch(r'raco test: "tests/[\w-]+-test\.rkt"', x) for x in lines[:-1])
            [(bad, _)] = re.findall(r"^(\d+)/(\d+) test failures$", lines[-1])
            assert int(bad) == failures
            summaries.append(lines[-1])
            blocks = re.findall(
                rf"^{rule}\n(\w+: [a-z ]+)\nFAILURE\nname:       check-equal\?\nlocation:   "
                rf"{ROOT}/tests/(\w+)-test\.rkt:\d+:4\nactual:     .+\nexpected:   .+\n{rule}$",
                stderr,
                re.M,
            )
            assert len(blocks) == failures
            assert all(test.startswith(module + ": ") for test, module in blocks)
        [status] = [f for f in session.facts if f.category == "test_status"]
        assert status.probe == (summaries[1],) and status.stale == (summaries[0],)
        [still] = [f.probe[0] for f in session.facts if f.category == "error_open"]
        assert f"{rule}\n{still}\nFAILURE\n" in last
        # The benchmark's mean, with `time`'s line.
        [bench] = runs[BENCH]
        [figure] = [f.probe[0] for f in session.facts if re.fullmatch(r"\d+\.\d\d", f.probe[0])]
        assert re.search(r"^cpu time: \d+ real time: \d+ gc time: \d+$", bench, re.M)
        assert re.search(rf"^mean: {re.escape(figure)}\d\d µs per batch$", bench, re.M)
        # Deletion through git rm, silent builds of the executable.
        [gone] = [f.probe[0] for f in session.facts if f.category == "file_deleted"]
        assert runs[f"git rm {gone}"] == [f"0\n\nrm '{gone}'\n"]
        assert runs["raco exe -o build/sandpiper main.rkt"] == ["0"]


def test_clinemcp_style_keeps_its_plan_in_task_progress() -> None:
    from compaction.eval.families.clinemcp import RECOMMENDED, UPDATE_REQUIRED

    for session in sessions("clinemcp-style"):
        uses = _cline_uses(session)
        # Until a list exists, each request recommends one.
        assert RECOMMENDED in session.conversation.messages[1].text
        carried = [k for k, (_, params, _, _) in enumerate(uses) if "task_progress" in params]
        assert uses[carried[0]][3] and RECOMMENDED not in "".join(uses[carried[0]][3])
        # A reminder restates the list; the next tool use sends it again.
        reminded = 0
        current = ""
        for k, (_, params, _, blocks) in enumerate(uses[:-1]):
            current = params.get("task_progress", current)
            focus = [b for b in blocks if UPDATE_REQUIRED in b]
            if focus:
                reminded += 1
                assert blocks.index(focus[0]) == len(blocks) - 2
                assert f"\t\t\t\t{current}\n" in focus[0]
                assert "task_progress" in uses[k + 1][1]
        assert reminded >= 3
        lists = _todo_lists(session)
        assert [i["status"] for i in lists[0]] == ["in_progress"] + ["pending"] * 4
        # No cancelled state: the dropped item is left out of the last list.
        assert len(lists[-2]) == 6 and len(lists[-1]) == 5
        for fact in session.facts:
            if fact.category == "todo":
                assert any(fact.probe[0] in p.get("task_progress", "") for _, p, _, _ in uses)


def test_clinemcp_style_is_measured_as_anthropic_messages_too() -> None:
    for _, payload in _as_anthropic("clinemcp-style"):
        assert payload["system"].startswith("You are Cline, a highly skilled software engineer")
        blocks = [b for m in payload["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        # XML in the text: no tool_use, no tool_result, only text blocks.
        assert {b["type"] for b in blocks} == {"text"}
        roles = [m["role"] for m in payload["messages"]]
        assert all(a != b for a, b in itertools.pairwise(roles))
        assert ANTHROPIC.validate(ANTHROPIC.decode(payload)) == []


def test_the_ruler_reads_the_commands_clinemcp_style_runs_through_run_process() -> None:
    session = sessions("clinemcp-style")[0]
    extracted = [f.probe for f in extract_probes(session.conversation) if f.category == "command"]
    for fact in session.facts:
        if fact.category == "command":
            assert any(fact.probe[0] in piece for probe in extracted for piece in probe)


_CODEACT_ACTION = re.compile(r"\A(.+?)\n<(execute_bash|execute_ipython)>\n(.+)\n</\2>\Z", re.DOTALL)


@pytest.mark.parametrize("family", ["codeact-style", "codeact-terse-style"])
def test_codeact_style_acts_in_its_text_and_observes_through_user_messages(family: str) -> None:
    for session in sessions(family):
        messages = session.conversation.messages
        assert all(not m.tool_calls and not m.tool_results for m in messages)
        roles = [m.role for m in messages]
        assert roles[0] == "system" and roles[1] == "user" and roles[-1] == "assistant"
        assert all(a != b for a, b in itertools.pairwise(roles[1:]))
        kinds: Counter[str] = Counter()
        for k, message in enumerate(messages[2:-1], start=2):
            if message.role != "assistant":
                continue
            action = _CODEACT_ACTION.match(message.text)
            answer = messages[k + 1].text
            if action is None:
                # A message to the user: the user answers in words, not an observation.
                assert "<execute_" not in message.text and not answer.startswith("OBSERVATION:")
                continue
            kinds[action[2]] += 1
            assert answer.startswith("OBSERVATION:\n")
            if action[2] == "execute_bash":
                assert re.search(r"\n\[Python Interpreter: \S+\]\nopenhands@[0-9a-f]{12}:"
                                 r"/workspace/\w+ \$ \n\[Command -1 finished with exit code "
                                 r"(0|1|101)\]\Z", answer), answer[-200:]  # fmt: skip
            else:
                assert re.search(r"\n\[Jupyter current working directory: /workspace/\w+\]\n"
                                 r"\[Jupyter Python interpreter: \S+\]\Z", answer)  # fmt: skip
        assert kinds["execute_bash"] >= 10 and kinds["execute_ipython"] >= 8
        assert messages[-1].text.endswith("\n<finish></finish>")
        [last] = [f for f in session.facts if f.category == "last_message"]
        assert last.probe[0] in messages[-1].text


@pytest.mark.parametrize("family", ["codeact-style", "codeact-terse-style"])
def test_codeact_style_prints_the_agent_skills_and_cargo_results(family: str) -> None:
    for session in sessions(family):
        messages = session.conversation.messages
        cells = [(m.text, messages[k + 1].text) for k, m in enumerate(messages[:-1])
                 if m.role == "assistant" and "<execute_ipython>" in m.text]  # fmt: skip
        called = {re.search(r"<execute_ipython>\n(\w+)\(", a)[1] for a, _ in cells}  # type: ignore[index]
        assert {"open_file", "scroll_down", "create_file", "append_file",
                "edit_file_by_replace", "search_dir"} <= called  # fmt: skip
        for action, observation in cells:
            body = observation.removeprefix("OBSERVATION:\n")
            if "open_file(" in action or "scroll_down()" in action or "create_file(" in action:
                assert re.match(r"\[File: /workspace/\S+ \(\d+ lines total\)\]\n"
                                r"(\(this is the beginning of the file\)|\(\d+ more lines "
                                r"above\))\n1?\d*\|", body), body[:200]  # fmt: skip
            if "edit_file_by_replace(" in action or "append_file(" in action:
                assert re.match(r"\[File: /workspace/\S+ \(\d+ lines total after edit\)\]\n",
                                body)  # fmt: skip
                assert re.search(r"\n\[File updated \(edited at line \d+\)\. Please review the "
                                 r"changes", body)  # fmt: skip
            # A window shows at most 101 numbered lines.
            assert len(re.findall(r"^\d+\|", body, re.M)) <= 101
        tests = [messages[k + 1].text for k, m in enumerate(messages[:-1])
                 if m.text.endswith("<execute_bash>\ncargo test\n</execute_bash>")]  # fmt: skip
        assert len(tests) == 2
        assert all("\ntest result: FAILED. " in t and "exit code 101]" in t for t in tests)
        [status] = [f for f in session.facts if f.category == "test_status"]
        assert status.probe[0] in tests[1] and status.stale[0] in tests[0]
        [still] = [f for f in session.facts if f.category == "error_open"]
        assert f"test scan::tests::{still.probe[0]} ... FAILED" in tests[1]
        text = conversation_text(session.conversation)
        assert "error[E0308]: mismatched types" in text and "git rm" not in text
        assert "rm src/pool.rs" in text


def test_codeact_terse_style_ends_without_restating_its_facts() -> None:
    # The same story as codeact-style, seed for seed; but its last message names no fact
    # (no value, no file, no count) but its own, and no final diff stat restates the files.
    for terse, full in zip(sessions("codeact-terse-style"), sessions("codeact-style"), strict=True):
        assert terse.conversation.messages[1].text == full.conversation.messages[1].text
        last = terse.conversation.messages[-1].text.casefold()
        for fact in terse.facts:
            if fact.category == "last_message":
                assert fact.planted_in == (len(terse.conversation.messages) - 1,)
                continue
            for form in (*fact.probe, *fact.stale):
                assert form.casefold() not in last, (fact.id, form)
        assert "git diff --stat" not in conversation_text(terse.conversation)


#: Claude Code's tools and the argument keys each may take.
_CC_TOOLS = {
    "Bash": {"command", "description", "timeout", "run_in_background"},
    "Read": {"file_path", "offset", "limit"},
    "Edit": {"file_path", "old_string", "new_string", "replace_all"},
    "MultiEdit": {"file_path", "edits"},
    "Write": {"file_path", "content"},
    "Grep": {"pattern", "path", "glob", "output_mode", "-n", "-i", "-A", "-B", "-C", "type"},
    "Glob": {"pattern", "path"},
    "TodoWrite": {"todos"},
    "Task": {"description", "prompt", "subagent_type"},
}


def test_ccstory_style_speaks_claude_codes_tools_and_flags_its_errors() -> None:
    for session in sessions("ccstory-style"):
        messages = session.conversation.messages
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        used: set[str] = set()
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                assert call.name in _CC_TOOLS and set(args) <= _CC_TOOLS[call.name], call.name
                used.add(call.name)
                if "file_path" in args:
                    assert args["file_path"].startswith("/home/dev/src/")
                result = results[call.id]
                text = "".join(p.text for p in result.content if hasattr(p, "text"))
                if call.name == "Read":
                    assert re.match(r" {0,5}\d+→", text) and "<system-reminder>" in text
                if call.name == "Edit" and not result.is_error:
                    assert text.startswith(f"The file {args['file_path']} has been updated. ")
                if call.name == "Write":
                    assert text == f"File created successfully at: {args['file_path']}"
                if call.name == "MultiEdit":
                    assert all(set(e) == {"old_string", "new_string"} for e in args["edits"])
                    assert text.startswith(f"Applied {len(args['edits'])} edits to ")
                if call.name == "Bash":
                    # A non-zero exit is an error result; nothing else is.
                    assert result.is_error == text.startswith("Exit code "), args["command"]
                if call.name == "Task":
                    assert args["subagent_type"] == "general-purpose" and len(text) > 400
        assert set(_CC_TOOLS) <= used
        # The Anthropic payload carries the flag Claude Code sets.
        payload = ANTHROPIC.encode(session.conversation)
        blocks = [b for m in payload["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        flagged = [b for b in blocks if b.get("type") == "tool_result" and b.get("is_error")]
        assert len(flagged) >= 4
        assert any("The user doesn't want to proceed" in json.dumps(b) for b in flagged)


def test_ccstory_style_todo_lists_move_items_along_and_drop_one() -> None:
    for session in sessions("ccstory-style"):
        lists = [
            json.loads(call.arguments)["todos"]
            for m in session.conversation.messages
            for call in m.tool_calls
            if call.name == "TodoWrite"
        ]
        assert len(lists) >= 5
        seen: dict[str, list[str]] = {}
        for todos in lists:
            assert all(set(t) == {"content", "status", "activeForm"} for t in todos)
            assert all(t["status"] in ("pending", "in_progress", "completed") for t in todos)
            assert sum(t["status"] == "in_progress" for t in todos) <= 1
            for t in todos:
                seen.setdefault(t["content"], []).append(t["status"])
        assert any(s[0] == "pending" and "in_progress" in s and s[-1] == "completed"
                   for s in seen.values())  # fmt: skip
        last = {t["content"] for t in lists[-1]}
        dropped = [c for c, s in seen.items() if c not in last]
        assert len(dropped) == 1 and seen[dropped[0]][-1] != "completed"
        added = [c for c in last if c not in {t["content"] for t in lists[0]}]
        assert len(added) == 1
        # The last message names no fact but its own.
        final = session.conversation.messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Codex CLI's tools and the argument keys each may take.
_CX_TOOLS = {
    "shell": {"command", "workdir", "timeout_ms"},
    "apply_patch": {"input"},
    "update_plan": {"explanation", "plan"},
}
_CX_RESULT = re.compile(r"\AExit code: (\d+)\nWall time: \d+\.\d seconds\nOutput:\n", re.S)


def test_cxstory_style_speaks_codex_clis_tools_and_results() -> None:
    for session in sessions("cxstory-style"):
        messages = session.conversation.messages
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        kinds: set[str] = set()
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                assert call.name in _CX_TOOLS and set(args) <= _CX_TOOLS[call.name], call.name
                text = "".join(p.text for p in results[call.id].content if hasattr(p, "text"))
                if call.name == "shell":
                    assert args["command"][:2] == ["bash", "-lc"] and len(args["command"]) == 3
                    assert args["workdir"].startswith("/home/dev/code/")
                    assert _CX_RESULT.match(text)
                if call.name == "apply_patch":
                    patch = args["input"]
                    assert patch.startswith("*** Begin Patch\n")
                    assert patch.endswith("\n*** End Patch")
                    kinds |= set(re.findall(r"^\*\*\* (Add|Update|Delete) File: ", patch, re.M))
                    assert "Success. Updated the following files:\n" in text
                if call.name == "update_plan":
                    assert text == "Plan updated"
        assert kinds == {"Add", "Update", "Delete"}
        text = conversation_text(session.conversation)
        assert re.search(r"^      Tests  1 failed \| \d+ passed \(\d+\)$", text, re.M)
        assert re.search(r"^ FAIL  src/\S+\.test\.ts > ", text, re.M)
        assert re.search(r"^src/\S+\.ts\(\d+,\d+\): error TS2345: ", text, re.M)
        assert re.search(r"^  \d+:\d+  error  .+  @typescript-eslint/no-unused-vars$", text, re.M)


def test_cxstory_style_plans_move_steps_along_drop_one_and_add_one() -> None:
    for session in sessions("cxstory-style"):
        plans = [
            json.loads(call.arguments)["plan"]
            for m in session.conversation.messages
            for call in m.tool_calls
            if call.name == "update_plan"
        ]
        assert len(plans) >= 4
        seen: dict[str, list[str]] = {}
        for plan in plans:
            assert all(set(p) == {"step", "status"} for p in plan)
            assert sum(p["status"] == "in_progress" for p in plan) <= 1
            for p in plan:
                seen.setdefault(p["step"], []).append(p["status"])
        assert any(s[0] == "pending" and "in_progress" in s and s[-1] == "completed"
                   for s in seen.values())  # fmt: skip
        last = {p["step"] for p in plans[-1]}
        dropped = [c for c, s in seen.items() if c not in last]
        assert len(dropped) == 1 and seen[dropped[0]][-1] != "completed"
        assert len([c for c in last if c not in {p["step"] for p in plans[0]}]) == 1
        # The page sizes never stand inside each other, and the last message names no fact.
        [page] = [f for f in session.facts if f.id == "changed_value-2"]
        values = [*page.probe, *page.stale]
        assert all([v for v in values if x in v] == [x] for x in values)
        final = session.conversation.messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Gemini CLI's tools and the argument keys each may take.
_GC_TOOLS = {
    "run_shell_command": {"command", "description", "directory"},
    "read_file": {"absolute_path", "offset", "limit"},
    "write_file": {"file_path", "content"},
    "replace": {"file_path", "old_string", "new_string", "expected_replacements"},
    "glob": {"pattern", "path", "case_sensitive", "respect_git_ignore"},
    "search_file_content": {"pattern", "path", "include"},
    "write_todos": {"todos"},
}
_GC_SHELL = re.compile(
    r"\ACommand: .+\nDirectory: .+\nStdout: .*\nStderr: .*\nError: .+\nExit Code: (\d+)\n"
    r"Signal: \(none\)\nBackground PIDs: \(none\)\nProcess Group PGID: \d+\Z",
    re.S,
)


def test_gcstory_style_speaks_gemini_clis_tools_go_and_its_todo_list() -> None:
    for session in sessions("gcstory-style"):
        messages = session.conversation.messages
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        todo_lists = []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                assert call.name in _GC_TOOLS and set(args) <= _GC_TOOLS[call.name], call.name
                text = "".join(p.text for p in results[call.id].content if hasattr(p, "text"))
                path = args.get("absolute_path") or args.get("file_path")
                if path is not None:
                    assert path.startswith("/home/dev/src/"), path
                if call.name == "run_shell_command":
                    assert args["description"] and _GC_SHELL.match(text), text[:200]
                if call.name == "write_todos":
                    assert text.startswith("Successfully updated the todo list. The current "
                                           "list is now:\n1. [")  # fmt: skip
                    todo_lists.append(args["todos"])
        text = conversation_text(session.conversation)
        assert re.search(r"^--- FAIL: Test\w+ \(\d\.\d\ds\)$", text, re.M)
        assert re.search(r"^FAIL\tgithub\.com/\S+/internal/ratelimit\t\d+\.\d{3}s$", text, re.M)
        assert re.search(r"^ok  \tgithub\.com/\S+\t\d+\.\d{3}s$", text, re.M)
        assert re.search(r"^DONE \d+ tests, 1 failure in \d+\.\d{3}s$", text, re.M)
        # The output's first line follows "Stdout: " on its line, as Gemini CLI joins them.
        assert re.search(r"^Stdout: internal/\S+\.go:\d+:\d+: .+ \(errcheck\)$", text, re.M)
        assert "git rm internal/" in text
        # To-dos move along; one is cancelled and one added, exactly one in progress at a time.
        first, last = todo_lists[0], todo_lists[-1]
        assert all(set(item) == {"description", "status"} for item in last)
        assert all(sum(i["status"] == "in_progress" for i in items) == 1 for items in todo_lists)
        assert [i["status"] for i in last].count("cancelled") == 1
        assert len(last) == len(first) + 1
        # The rates never stand inside each other, and the last message names no fact.
        [rate] = [f for f in session.facts if f.id == "changed_value-2"]
        values = [*rate.probe, *rate.stale]
        assert len(values) == 3 and all([v for v in values if x in v] == [x] for x in values)
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: OpenHands' CodeActAgent tools (native function calls) and the argument keys each may take.
_OH_TOOLS = {
    "execute_bash": {"command", "is_input", "timeout", "security_risk"},
    "str_replace_editor": {"command", "path", "file_text", "old_str", "new_str", "insert_line",
                           "view_range", "security_risk"},
    "task_tracker": {"command", "task_list"},
    "think": {"thought"},
    "finish": {"message"},
}  # fmt: skip
#: How OpenHands' runtime closes a finished command's output.
_OH_BASH = re.compile(
    r"\n\[The command completed with exit code (\d+)\.\]\n"
    r"\[Current working directory: /workspace/\S+\]\n"
    r"\[Python interpreter: /\S+\]\n\[Command finished with exit code \1\]\Z"
)
#: What OpenHands' editor answers to each command.
_OH_EDITOR = {
    "view": re.compile(
        r"\AHere's the (result of running `cat -n` on /workspace/\S+:\n {5}1\t|files and "
        r"directories up to 2 levels deep in /workspace/\S+, excluding hidden items:\n)"
    ),
    "create": re.compile(r"\AFile created successfully at: /workspace/\S+\Z"),
    "str_replace": re.compile(
        r"\A(The file (/workspace/\S+) has been edited\. Here's the result of running `cat -n` on "
        r"a snippet of \2:\n.*\nReview the changes and make sure they are as expected\. Edit the "
        r"file again if necessary\.|ERROR:\nNo replacement was performed, old_str `.*` did not "
        r"appear verbatim in /workspace/\S+\.)\Z",
        re.S,
    ),
    "insert": re.compile(
        r"\AThe file /workspace/\S+ has been edited\. Here's the result of running `cat -n` on a "
        r"snippet of the edited file:\n.*\nReview the changes and make sure they are as expected "
        r"\(correct indentation, no duplicate lines, etc\)\. Edit the file again if necessary\.\Z",
        re.S,
    ),
    "undo_edit": re.compile(
        r"\ALast edit to (/workspace/\S+) undone successfully\. Here's the result of running "
        r"`cat -n` on \1:\n"
    ),
}
_OH_PLAN = re.compile(
    r"\ATask list has been updated with (\d+) items\. Stored in session directory: "
    r"sessions/[0-9a-f]{32}/TASKS\.md\Z"
)


def test_ohstory_style_speaks_openhands_tools_and_moves_its_task_list_along() -> None:
    for session in sessions("ohstory-style"):
        messages = session.conversation.messages
        results = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        plans: list[list[dict[str, str]]] = []
        editor: set[str] = set()
        calls = [call for m in messages for call in m.tool_calls]
        for call in calls:
            args = json.loads(call.arguments)
            text = results[call.id]
            assert call.name in _OH_TOOLS and set(args) <= _OH_TOOLS[call.name], call.name
            if call.name == "execute_bash":
                assert args["security_risk"] in ("LOW", "MEDIUM", "HIGH")
                assert args.get("is_input", "false") in ("true", "false")
                if args.get("is_input") == "true":
                    assert args["command"] == ""
                    assert text.startswith("[Below is the output of the previous command.]\n")
                stalled = text.endswith("use the timeout parameter in execute_bash for future "
                                        "commands.]")  # fmt: skip
                assert stalled or _OH_BASH.search(text), text[-300:]
            elif call.name == "str_replace_editor":
                assert args["path"].startswith("/workspace/") and args["security_risk"] == "LOW"
                editor.add(args["command"])
                assert _OH_EDITOR[args["command"]].match(text), text[:300]
            elif call.name == "task_tracker" and args["command"] == "plan":
                match = _OH_PLAN.match(text)
                assert match and int(match[1]) == len(args["task_list"])
                plans.append(args["task_list"])
            elif call.name == "task_tracker":
                assert text.startswith("# Task List\n\n1. ")
            elif call.name == "think":
                assert text == "Your thought has been logged."
        assert editor == {"view", "create", "str_replace", "insert", "undo_edit"}
        # The last call is `finish`, answered with its message.
        assert calls[-1].name == "finish"
        final = json.loads(calls[-1].arguments)["message"]
        assert messages[-1].tool_results[0].text == final
        # Gradle and javac as they print: a compile error, a checkstyle finding, test runs.
        text = conversation_text(session.conversation)
        assert re.search(r"^/workspace/\S+\.java:\d+: error: cannot find symbol$", text, re.M)
        checkstyle = (r"^\[ant:checkstyle\] \[ERROR\] /workspace/\S+\.java:\d+:8: Unused import - "
                      r"java\.util\.Optional\. \[UnusedImports\]$")  # fmt: skip
        assert re.search(checkstyle, text, re.M)
        assert re.search(r"^IdempotencyFilterTest > \w+\(\) FAILED$", text, re.M)
        assert len(re.findall(r"^\d+ tests completed, [12] failed$", text, re.M)) == 2
        assert "BUILD FAILED in " in text and " && git rm " in text
        # The task list moves along: one task at a time in progress, a task goes todo →
        # in_progress → done, one leaves the list unfinished and one joins it.
        seen: dict[str, list[str]] = {}
        for plan in plans:
            assert all({"id", "title", "status"} <= set(t) <= {"id", "title", "status", "notes"}
                       for t in plan)  # fmt: skip
            assert all(t["status"] in ("todo", "in_progress", "done") for t in plan)
            assert sum(t["status"] == "in_progress" for t in plan) <= 1
            for t in plan:
                seen.setdefault(t["id"], []).append(t["status"])
        assert any(s[0] == "todo" and "in_progress" in s and s[-1] == "done" for s in seen.values())
        first, last = {t["id"] for t in plans[0]}, {t["id"] for t in plans[-1]}
        [removed] = first - last
        [added] = last - first
        assert seen[removed][-1] != "done" and seen[added][-1] == "todo"
        # The changed values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final.casefold() for f in (*fact.probe, *fact.stale))


#: aider's SEARCH/REPLACE block: the path alone on its line, a fence, SEARCH, divider, REPLACE.
_AIDER_BLOCK = re.compile(
    r"^(\S+)\n```python\n<<<<<<< SEARCH\n(.*?)^=======\n(.*?)^>>>>>>> REPLACE\n```$", re.M | re.S
)
_AIDER_RUN = re.compile(r"\AI ran this command:\n\n(.+?)\n\nAnd got this output:\n\n.*\n\Z", re.S)
_AIDER_TODO = re.compile(r"^Remaining:\n((?:\d+\. .+\n?)+)", re.M)


def test_aiderstory_style_speaks_aiders_text_protocol_and_its_todo_list() -> None:
    for session in sessions("aiderstory-style"):
        messages = session.conversation.messages
        texts = [m.text for m in messages]
        assert all(not m.tool_calls and not m.tool_results for m in messages)
        assert messages[0].role == "system" and "# *SEARCH/REPLACE block* Rules:" in texts[0]
        assert texts[1].startswith("Here are summaries of some files present in my git repository.")
        assert texts[2] == "Ok, I won't try and edit those files without asking first."
        blocks, runs, todo_lists = [], [], []
        for i, (message, text) in enumerate(zip(messages, texts, strict=True)):
            if message.role == "assistant":
                found = _AIDER_BLOCK.findall(text)
                assert len(found) == text.count("<<<<<<< SEARCH") == text.count(">>>>>>> REPLACE")
                blocks += found
                todo_lists += [
                    re.findall(r"^\d+\. (.+)$", m, re.M) for m in _AIDER_TODO.findall(text)
                ]
            elif text.startswith("I ran this command:"):
                [command] = _AIDER_RUN.findall(text)
                runs.append((command, text))
                # aider answers it "Ok."; a failing auto-test's report is sent again as the next
                # user message (the user letting aider fix it), which the model answers.
                if texts[i + 1] != "Ok.":
                    assert texts[i - 1] == "Ok." and texts[i - 2] == text
            elif text.startswith("I committed the changes with git hash "):
                assert re.match(r"I committed the changes with git hash [0-9a-f]{7} & commit msg: "
                                r"(feat|fix|chore|test): \S.*\Z", text)  # fmt: skip
                assert texts[i + 1] == "Ok."
            elif text.startswith("I added these files to the chat: "):
                assert text.endswith("\nLet me know if there are others we should add.")
        # Blocks name their files by path; new files have an empty SEARCH part.
        assert all(re.fullmatch(r"[\w/]+\.py", path) for path, _, _ in blocks)
        assert any(search == "" for _, search, _ in blocks)
        assert any(path.startswith("tests/") for path, _, _ in blocks)
        # The user's /run turns: a git log, a git rm, the auto-test's failures.
        commands = [command for command, _ in runs]
        assert any(c.startswith("git log --oneline -S ") for c in commands)
        assert any(c.startswith("git rm ") for c in commands)
        tests = [text for command, text in runs if command == "pytest -q"]
        assert any(re.search(r"^1 error in \d\.\d\ds$", t, re.M) for t in tests)
        assert re.search(r"^1 failed, \d+ passed in \d\.\d\ds$", tests[-1], re.M)
        # aider's lint report after an edit.
        [lint] = [t for t in texts if t.lstrip().startswith("# Fix any errors below, if possible.")]
        assert re.search(
            r"^## Running: \S+/python -m flake8 --select=\S+ --show-source ", lint, re.M
        )
        assert re.search(r"^\S+\.py:\d+:\d+: F821 undefined name '\w+'$", lint, re.M)
        assert re.search(r"^ +\d+█", lint, re.M)
        # The files in the chat, after the conversation, before the turns since the last edit.
        prefix = "I have *added these files to the chat* so you can go ahead and edit them."
        [shown] = [i for i, t in enumerate(texts) if t.startswith(prefix)]
        assert texts[shown + 1] == "Ok, any changes I propose will be to those files."
        assert texts[shown - 1] == "Ok." and texts[shown - 2].startswith("I committed the changes")
        # The prose to-do list moves along: items done, one dropped, one added.
        first, last = todo_lists[0], todo_lists[-1]
        assert len(todo_lists) >= 4 and len(first) == 4
        gone = [item for item in first if item not in last]
        assert len(gone) == 3 and len([item for item in last if item not in first]) == 1
        assert any("dropped the migration" in t for t in texts)
        # The values never stand inside each other, and the last message names no fact.
        for fact_id, count in (("changed_value-1", 2), ("changed_value-2", 3)):
            [value] = [f for f in session.facts if f.id == fact_id]
            values = [*value.probe, *value.stale]
            assert len(values) == count
            assert all([v for v in values if x in v] == [x] for x in values)
        final = texts[-1].casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: OpenCode's tools: the argument keys each must have, and those it may have.
_OPENCODE_ARGS = {
    "bash": ({"command", "description"}, {"timeout", "workdir"}),
    "read": ({"filePath"}, {"offset", "limit"}),
    "edit": ({"filePath", "oldString", "newString"}, {"replaceAll"}),
    "write": ({"filePath", "content"}, set()),
    "glob": ({"pattern"}, {"path"}),
    "grep": ({"pattern"}, {"path", "include"}),
    "list": (set(), {"path", "ignore"}),
    "todowrite": ({"todos"}, set()),
    "task": ({"description", "prompt", "subagent_type"}, {"task_id", "command"}),
}
_OPENCODE_READ = re.compile(
    r"\A<path>(/\S+)</path>\n<type>file</type>\n<content>\n1: .*\n\n"
    r"\((End of file - total \d+ lines|Showing lines \d+-\d+ of \d+\. Use offset=\d+ to "
    r"continue\.)\)\n</content>\Z",
    re.S,
)
_OPENCODE_TASK = re.compile(
    r"\Atask_id: ses_[0-9a-f]{12}[0-9A-Za-z]{14} \(for resuming to continue this task if "
    r"needed\)\n\n<task_result>\n.+\n</task_result>\Z",
    re.S,
)


def test_ocstory_style_speaks_opencodes_tools_and_moves_its_todo_list() -> None:
    for session in sessions("ocstory-style"):
        messages = session.conversation.messages
        system = messages[0].text
        assert messages[0].role == "system" and "\n<env>\n  Working directory: /" in system
        assert "\n</env>\n<files>" in system and "\nInstructions from: /" in system
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        used, todo_lists, commands = set(), [], []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                must, may = _OPENCODE_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                used.add(call.name)
                text = results[call.id].text
                for key in ("filePath", "path"):
                    assert key not in args or args[key].startswith("/")
                if call.name == "read":
                    match = _OPENCODE_READ.match(text)
                    assert match and match.group(1) == args["filePath"]
                elif call.name == "edit":
                    assert text == "Edit applied successfully."
                    assert args["oldString"] != args["newString"]
                elif call.name == "write":
                    assert text == "Wrote file successfully."
                elif call.name == "todowrite":
                    assert text == json.dumps(args["todos"], indent=2)
                    todo_lists.append(args["todos"])
                elif call.name == "task":
                    assert args["subagent_type"] == "explore" and _OPENCODE_TASK.match(text)
                elif call.name == "grep":
                    assert re.match(r"Found \d+ matches\n/\S+:\n  Line \d+: ", text)
                elif call.name == "glob":
                    assert all(line.startswith("/") for line in text.split("\n"))
                elif call.name == "list":
                    assert text.startswith(args["path"] + "/\n  ") and text.endswith("\n")
                elif call.name == "bash":
                    commands.append((args["command"], text))
                    # The output as it came: no exit code; a timeout is noted after it.
                    assert "exit code" not in text.casefold()
                    if "<bash_metadata>" in text:
                        assert re.search(r"\n\n<bash_metadata>\nbash tool terminated command "
                                         r"after exceeding timeout \d+ ms\n</bash_metadata>\Z",
                                         text)  # fmt: skip
        assert used == set(_OPENCODE_ARGS)
        # mix, ExUnit and Credo as they print: a compile error, a finding, test runs.
        outputs = "\n".join(text for _, text in commands)
        undefined = r"^error: undefined function to_timeout/1 \(expected \S+ to define"
        assert re.search(undefined, outputs, re.M)
        assert re.search(r"^\*\* \(CompileError\) lib/\S+\.ex: cannot compile module ", outputs,
                         re.M)  # fmt: skip
        assert "┃ [R] → Predicate function names should not start with 'is'" in outputs
        runs = [text for command, text in commands if command == "mix test"]
        assert len(runs) == 4
        assert all(re.search(r"^Randomized with seed \d+$", run, re.M) for run in runs)
        summaries = [re.findall(r"^\d+ tests, (\d+) failures?$", run, re.M) for run in runs]
        assert summaries == [["1"], ["0"], ["0"], ["1"]]
        assert re.search(r"^  1\) test .+ \(\S+Test\)$", runs[-1], re.M)
        assert any(c.startswith("git rm lib/") for c, _ in commands)
        assert any(c.startswith("git log --oneline -S ") for c, _ in commands)
        # The to-do list moves along: one item in progress at a time, items completed, one
        # cancelled, one added later and still pending.
        seen: dict[str, list[str]] = {}
        for todos in todo_lists:
            for todo in todos:
                assert set(todo) == {"content", "status", "priority"}
                assert todo["status"] in ("pending", "in_progress", "completed", "cancelled")
                assert todo["priority"] in ("high", "medium", "low")
                seen.setdefault(todo["content"], []).append(todo["status"])
            assert sum(t["status"] == "in_progress" for t in todos) <= 1
        first = {t["content"] for t in todo_lists[0]}
        last = {t["content"]: t["status"] for t in todo_lists[-1]}
        [added] = set(last) - first
        assert last[added] == "pending" and first <= set(last)
        assert list(last.values()).count("cancelled") == 1
        assert any(s[0] == "pending" and "in_progress" in s and s[-1] == "completed"
                   for s in seen.values())  # fmt: skip
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


_GOOSE_EDITOR_ARGS = {
    "view": ({"command", "path"}, {"view_range"}),
    "write": ({"command", "path", "file_text"}, set()),
    "str_replace": ({"command", "path", "old_str", "new_str"}, set()),
    "insert": ({"command", "path", "insert_line", "new_str"}, set()),
    "undo_edit": ({"command", "path"}, set()),
}


def test_gsstory_style_speaks_gooses_tools_and_moves_its_todo_list() -> None:
    for session in sessions("gsstory-style"):
        messages = session.conversation.messages
        assert messages[0].role == "system" and "called goose, created by Block" in messages[0].text
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        editor_commands, todo_lists, commands = set(), [], []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id].text
                if call.name == "developer__shell":
                    assert set(args) == {"command"}
                    commands.append((args["command"], text))
                elif call.name == "developer__text_editor":
                    must, may = _GOOSE_EDITOR_ARGS[args["command"]]
                    assert must <= set(args) <= must | may, sorted(args)
                    assert args["path"].startswith("/Users/")
                    editor_commands.add(args["command"])
                    path = args["path"]
                    if args["command"] == "write":
                        assert text == f"Successfully wrote to {path}"
                    elif args["command"] == "str_replace":
                        assert args["old_str"] != args["new_str"]
                        assert text.startswith(f"The file {path} has been edited, and the section "
                                               "now reads:\n```ruby\n")  # fmt: skip
                        assert text.endswith("Undo and edit the file again if necessary!\n")
                    elif args["command"] == "insert":
                        assert text.startswith(f"Text has been inserted at line "
                                               f"{args['insert_line'] + 1} in {path}.")  # fmt: skip
                    elif args["command"] == "undo_edit":
                        assert text == "Undid the last edit"
                else:
                    assert call.name == "todo__todo_write" and set(args) == {"content"}
                    assert text == f"Updated ({len(args['content'])} chars)"
                    todo_lists.append(re.findall(r"^- \[([ x])\] (.+)$", args["content"], re.M))
        assert editor_commands == set(_GOOSE_EDITOR_ARGS)
        # The wrong file is edited, then undone; rspec and RuboCop print as they do.
        outputs = "\n".join(text for _, text in commands)
        assert re.search(r"syntax error, unexpected `end', expecting end-of-input", outputs)
        assert "1 error occurred outside of examples" in outputs
        assert re.search(r"^\S+:\d+:\d+: C: \[Correctable\] Style/GuardClause: ", outputs, re.M)
        runs = [text for command, text in commands if command.startswith("bundle exec rspec")]
        summaries = [re.findall(r"^(\d+) examples, (\d+) failures?", r, re.M)[0][1] for r in runs]
        assert summaries == ["1", "0", "1"]
        assert re.search(r"^rspec \./spec/\S+_spec\.rb:\d+ # ", runs[-1], re.M)
        assert any(c.startswith("git rm app/") for c, _ in commands)
        assert any(c.startswith("git log --oneline -S ") for c, _ in commands)
        # The to-do list moves along: items get checked, one is dropped, one added later and
        # still open at the end.
        first = {item for _, item in todo_lists[0]}
        last = {item: box for box, item in todo_lists[-1]}
        assert all(box == " " for box, _ in todo_lists[0])
        assert [item for item in last if item.endswith("(dropped)")] == [
            f"~~{item}~~ (dropped)" for item in first if item.startswith("Backfill")
        ]
        added = [item for item in last if item not in first and "~~" not in item]
        assert len(added) == 2 and all(last[item] == " " for item in added)
        assert sum(box == "x" for box in last.values()) >= 4
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


_ROOSTORY_ARGS = {
    "read_file": {"files"},
    "write_to_file": {"path", "content", "line_count"},
    "apply_diff": {"path", "diff"},
    "execute_command": {"command", "cwd"},
    "search_files": {"path", "regex", "file_pattern"},
    "list_files": {"path", "recursive"},
    "update_todo_list": {"todos"},
    "ask_followup_question": {"question", "follow_up"},
    "attempt_completion": {"result"},
}
_ROOSTORY_DENIED = "The user denied this operation and provided the following feedback"
_ROOSTORY_RAN = re.compile(
    r"Command executed in terminal  within working directory '(/home/[^']+)'\. "
    r"(Command execution was not successful, inspect the cause and adjust as needed\.\n)?"
    r"Exit code: (\d+)\nOutput:\n"
)
_ROOSTORY_BLOCK = re.compile(
    r"<<<<<<< SEARCH\n:start_line:\d+\n-------\n(.*?)\n=======\n(.*?)\n>>>>>>> REPLACE", re.S
)


def test_roostory_style_speaks_roos_native_tools_and_moves_its_todo_list() -> None:
    for session in sessions("roostory-style"):
        messages = session.conversation.messages
        assert messages[0].role == "system" and messages[0].text.startswith("You are Roo, ")
        assert "Current Workspace Directory: /home/" in messages[0].text
        assert '"💻 Code" mode (code)' in messages[0].text
        # The user types once (the task); after that they speak through tool results only.
        users = [m for m in messages if m.role == "user"]
        assert len(users) == 1 and users[0].text.startswith("<task>\n")
        assert "<environment_details>" in users[0].text and "<slug>code</slug>" in users[0].text
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        used, todo_lists, commands, denied = set(), [], [], []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id].text
                assert set(args) == _ROOSTORY_ARGS[call.name], (call.name, sorted(args))
                used.add(call.name)
                if "path" in args:
                    assert not args["path"].startswith("/"), args["path"]
                if text.startswith("{") and '"status":"denied"' in text:
                    assert json.loads(text)["message"] == _ROOSTORY_DENIED
                    denied.append((call.name, args))
                    continue
                if call.name == "read_file":
                    assert all(set(f) == {"path"} for f in args["files"])
                    for part, f in zip(text.split("\n\n---\n\n"), args["files"], strict=True):
                        head, lines, body = part.split("\n", 2)
                        assert head == f"File: {f['path']}"
                        n = int(re.fullmatch(r"Lines 1-(\d+):", lines).group(1))
                        assert body.endswith("\n") and len(body.split("\n")) == n + 1
                        assert re.match(r" ?1 \| ", body)
                elif call.name == "write_to_file":
                    assert args["line_count"] == len(args["content"].split("\n"))
                    assert json.loads(text) == {"path": args["path"], "operation": "created",
                                                "notice": json.loads(text)["notice"]}  # fmt: skip
                elif call.name == "apply_diff":
                    blocks = _ROOSTORY_BLOCK.findall(args["diff"])
                    assert blocks and all(old != new for old, new in blocks)
                    result, _, notice = text.partition("\n<notice>")
                    assert json.loads(result)["operation"] == "modified"
                    assert bool(notice) == (len(blocks) == 1)
                elif call.name == "execute_command":
                    assert args["cwd"] is None
                    ran = _ROOSTORY_RAN.match(text)
                    assert ran, text[:200]
                    assert bool(ran.group(2)) == (ran.group(3) != "0")
                    commands.append((args["command"], text[ran.end() :], int(ran.group(3))))
                elif call.name == "search_files":
                    assert re.match(r"Found (1 result|\d+ results)\.\n\n# \S+\n", text)
                    assert all(re.fullmatch(r" *\d+ \| .*|----|# \S+|", line)
                               for line in text.split("\n")[1:])  # fmt: skip
                elif call.name == "list_files":
                    assert args["recursive"] is False
                elif call.name == "update_todo_list":
                    assert text == "Todo list updated successfully."
                    lines = args["todos"].split("\n")
                    assert all(re.fullmatch(r"\[[ x-]\] \S.*", line) for line in lines)
                    todo_lists.append([(line[1], line[4:]) for line in lines])
                elif call.name == "ask_followup_question":
                    assert 2 <= len(args["follow_up"]) <= 4
                    assert all(set(f) == {"text", "mode"} for f in args["follow_up"])
                    assert re.fullmatch(r"<answer>\n.+\n</answer>", text, re.S)
                else:
                    assert text.startswith("The user has provided feedback on the results. ")
                    assert re.search(r"\n<feedback>\n.+\n</feedback>\Z", text, re.S)
        assert used == set(_ROOSTORY_ARGS)
        # Two denials: the edit of the legacy notification, and a test run (the queue's delay).
        assert [name for name, _ in denied] == ["apply_diff", "execute_command"]
        assert "/Legacy/" in denied[0][1]["path"]
        # Laravel's runner, Larastan and git print as they do.
        outputs = "\n".join(out for _, out, _ in commands)
        assert re.search(r"^   ParseError $", outputs, re.M)
        assert "🪪  property.notFound" in outputs and " [OK] No errors" in outputs
        runs = [(out, code) for c, out, code in commands if c.startswith("php artisan test")]
        summaries = [re.findall(r"^  Tests:    (?:(\d+) failed, )?\d+ passed", out, re.M)
                     for out, _ in runs]  # fmt: skip
        assert summaries == [["1"], [], [""], ["1"]]
        assert [code for _, code in runs] == [1, 1, 0, 1]
        assert re.search(r"^   FAILED  Tests\\Feature\\Reminders\\\w+ > ", runs[-1][0], re.M)
        assert any(c.startswith("git rm app/") for c, _, _ in commands)
        assert any(c == "php artisan queue:failed" for c, _, _ in commands)
        # The to-do list moves along: one item in progress, items checked, one removed at the
        # user's word, one added later and still open; the last one in progress was pending.
        first = {item: box for box, item in todo_lists[0]}
        last = {item: box for box, item in todo_lists[-1]}
        assert list(first.values()).count("-") == 1 and list(last.values()).count("-") == 1
        [removed] = set(first) - set(last)
        [added] = set(last) - set(first)
        assert removed.startswith("Backfill") and last[added] == " "
        [doing] = [item for item, box in last.items() if box == "-"]
        assert first[doing] == " " and sum(box == "x" for box in last.values()) >= 4
        # The values never stand inside each other, and the last message (the user's
        # feedback) names no other fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "tool"
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


_Q_WRITE_ARGS = {
    "create": {"command", "path", "file_text", "summary"},
    "str_replace": {"command", "path", "old_str", "new_str", "summary"},
    "insert": {"command", "path", "insert_line", "new_str", "summary"},
    "append": {"command", "path", "new_str", "summary"},
}
_Q_READ_OPS = {
    "Line": ({"mode", "path"}, {"start_line", "end_line"}),
    "Directory": ({"mode", "path"}, {"depth"}),
    "Search": ({"mode", "path", "pattern"}, {"context_lines"}),
}
_Q_TODO_ARGS = {
    "create": {"command", "tasks", "todo_list_description"},
    "complete": {"command", "completed_indices", "context_update", "modified_files", "current_id"},
    "add": {"command", "new_tasks", "insert_indices", "current_id"},
    "remove": {"command", "remove_indices", "current_id"},
}


def test_qstory_style_speaks_amazon_qs_tools_and_moves_its_todo_list() -> None:
    for session in sessions("qstory-style"):
        messages = session.conversation.messages
        assert messages[0].role == "system" and "You are Amazon Q" in messages[0].text
        # Q sends the context files first, acknowledged; every prompt carries the time.
        assert messages[1].text.startswith("--- CONTEXT ENTRY BEGIN ---\n[/home/")
        assert messages[2].text.startswith("I will fully incorporate this information")
        for message in messages[3:]:
            if message.role == "user":
                assert re.match(r"--- CONTEXT ENTRY BEGIN ---\nCurrent time: \w+day, 2026-",
                                message.text)  # fmt: skip
                assert "--- CONTEXT ENTRY END ---\n\n--- USER MESSAGE BEGIN ---\n" in message.text
                assert message.text.endswith("--- USER MESSAGE END ---")
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        commands, write_commands, modes, states = [], set(), set(), []
        todo_commands, todo_id = [], None
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id].text
                if call.name in ("execute_bash", "use_aws"):
                    if call.name == "execute_bash":
                        assert set(args) == {"command", "summary"}
                        commands.append((args["command"], json.loads(text)))
                    else:
                        assert set(args) == {"service_name", "operation_name", "parameters",
                                             "region", "label"}  # fmt: skip
                    assert list(json.loads(text)) == ["exit_status", "stdout", "stderr"]
                    assert json.loads(text)["exit_status"].isdigit()
                elif call.name == "fs_read":
                    assert set(args) <= {"operations", "summary"} and args["operations"]
                    for op in args["operations"]:
                        must, may = _Q_READ_OPS[op["mode"]]
                        assert must <= set(op) <= must | may, sorted(op)
                        assert op["path"].startswith("/home/")
                        modes.add(op["mode"])
                    if len(args["operations"]) > 1:
                        assert text.startswith("=== Operation 1 Result (Text) ===\n")
                        assert "\n\n=== Operation 2 Result (Text) ===\n" in text
                    elif args["operations"][0]["mode"] == "Directory":
                        for line in text.splitlines():
                            assert re.match(r"^[-d][rwx-]{9} \d+ \d+ \d+ \d+ [A-Z][a-z]{2} "
                                            r"[ \d]\d \d\d:\d\d /home/", line), line  # fmt: skip
                    elif args["operations"][0]["mode"] == "Search":
                        found = json.loads(text)
                        assert found and all(set(f) == {"line_number", "context"} for f in found)
                        assert all(f"→ {f['line_number']}: " in f["context"] for f in found)
                elif call.name == "fs_write":
                    assert set(args) == _Q_WRITE_ARGS[args["command"]], sorted(args)
                    assert args["path"].startswith("/home/") and text == ""
                    write_commands.add(args["command"])
                    if args["command"] == "str_replace":
                        assert args["old_str"] != args["new_str"]
                else:
                    assert call.name == "todo_list"
                    assert set(args) == _Q_TODO_ARGS[args["command"]], sorted(args)
                    todo_commands.append(args["command"])
                    head, _, tail = text.partition("\n\n ID: ")
                    assert head.startswith("TODO LIST STATE: ")
                    state = json.loads(head.removeprefix("TODO LIST STATE: "))
                    assert list(state) == ["tasks", "description", "context", "modified_files",
                                           "id"] and state["id"] == tail  # fmt: skip
                    assert all(set(t) == {"task_description", "completed"} for t in state["tasks"])
                    todo_id = todo_id or tail
                    assert tail == todo_id and args.get("current_id", todo_id) == todo_id
                    states.append({t["task_description"]: t["completed"] for t in state["tasks"]})
        assert write_commands == set(_Q_WRITE_ARGS) and modes == set(_Q_READ_OPS)
        assert todo_commands[0] == "create" and {"complete", "add", "remove"} <= set(todo_commands)
        # tsc, jest and terraform print as they do; prod is reverted, the old helper removed.
        outputs = "\n".join(r["stdout"] + r["stderr"] for _, r in commands)
        assert re.search(r"^src/handler\.ts\(\d+,\d+\): error TS2345: ", outputs, re.M)
        assert "│ Error: Unsupported block type" in outputs
        assert "Success! The configuration is valid." in outputs
        runs = [r for c, r in commands if c.endswith("npx jest")]
        assert all(r["stdout"] == "" and r["stderr"].endswith("Ran all test suites.") for r in runs)
        summaries = [re.findall(r"^Tests: +(?:(\d+) failed, )?\d+ passed", r["stderr"], re.M)[0]
                     for r in runs]  # fmt: skip
        assert summaries == ["1", "", "1"]
        assert [r["exit_status"] for r in runs] == ["1", "0", "1"]
        assert re.search(r"^  ● handler › ", runs[-1]["stderr"], re.M)
        assert any(c.startswith("git checkout -- terraform/envs/prod/") for c, _ in commands)
        assert any(c.startswith("git rm lambdas/") for c, _ in commands)
        assert not any("terraform apply" in c for c, _ in commands)
        # The to-do list moves along: items completed, one removed, two added and still open.
        first, last = states[0], states[-1]
        assert not any(first.values())
        [removed] = set(first) - set(last)
        assert removed.startswith("Replay ")
        added = [task for task in last if task not in first]
        assert len(added) == 2 and not any(last[task] for task in added)
        assert sum(last.values()) >= 5
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


_COPILOTSTORY_ARGS = {
    "run_in_terminal": {"command", "explanation", "isBackground"},
    "get_terminal_output": {"id"},
    "read_file": {"filePath", "startLine", "endLine"},
    "create_file": {"filePath", "content"},
    "replace_string_in_file": {"filePath", "oldString", "newString"},
    "multi_replace_string_in_file": {"explanation", "replacements"},
    "get_errors": {"filePaths"},
    "grep_search": {"query", "isRegexp", "includePattern"},
    "file_search": {"query"},
    "list_dir": {"path"},
    "manage_todo_list": {"todoList"},
}


def test_copilotstory_style_speaks_copilots_tools_and_moves_its_todo_list() -> None:
    from compaction.eval.families.copilotstory import EDITED

    for session in sessions("copilotstory-style"):
        messages = session.conversation.messages
        assert messages[0].role == "system" and 'respond with "GitHub Copilot"' in messages[0].text
        users = [m.text for m in messages if m.role == "user"]
        assert users[0].startswith("<environment_info>\n") and "<workspace_info>" in users[0]
        for text in users[1:]:
            assert text.startswith("<context>\nThe current date is ")
            assert "<reminderInstructions>\n" in text and text.endswith("\n</userRequest>")
        results = {r.tool_call_id: r for m in messages for r in m.tool_results}
        runs, todo_lists, names = [], [], set()
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id].text
                names.add(call.name)
                assert set(args) <= _COPILOTSTORY_ARGS[call.name], (call.name, sorted(args))
                for key in ("filePath", "path"):
                    if key in args:
                        assert args[key].startswith("/Users/")
                if call.name == "run_in_terminal":
                    assert set(args) == _COPILOTSTORY_ARGS[call.name]
                    assert args["explanation"].endswith(".")
                    runs.append((args, text))
                elif call.name in ("create_file", "replace_string_in_file"):
                    assert text == EDITED.format(paths=args["filePath"]) or text.startswith(
                        f"The edit to {args['filePath']} was applied successfully.\n"
                        "The edit resulted in the following lint errors:\n<errors path="
                    )
                elif call.name == "multi_replace_string_in_file":
                    edits = args["replacements"]
                    assert all(set(e) == {"filePath", "oldString", "newString"} for e in edits)
                    paths = list(dict.fromkeys(e["filePath"] for e in edits))
                    assert text == EDITED.format(paths="\n".join(paths))
                elif call.name == "grep_search":
                    count = re.match(r"(\d+) match(es)?\n", text)
                    assert count and int(count[1]) == text.count("<match path=")
                elif call.name == "file_search":
                    assert re.match(r"\d+ total results?\n/Users/", text)
                elif call.name == "manage_todo_list":
                    assert set(args) == {"todoList"}
                    for k, item in enumerate(args["todoList"], 1):
                        assert set(item) == {"id", "title", "status"} and item["id"] == k
                        assert item["status"] in {"not-started", "in-progress", "completed"}
                    assert text.startswith("Successfully wrote todo list")
                    todo_lists.append({i["title"]: i["status"] for i in args["todoList"]})
        assert names == set(_COPILOTSTORY_ARGS)
        # dotnet build and dotnet test print through the terminal logger; a failure ends
        # with the exit code, a background run answers with its terminal id.
        outputs = "\n".join(text for _, text in runs)
        assert re.search(r"\): error CS7036: There is no argument given", outputs)
        tests = [t for a, t in runs if a["command"].startswith("dotnet test ")]
        summaries = [re.findall(r"^Test summary: total: (\d+), failed: (\d+), succeeded: (\d+)",
                                t, re.M)[0] for t in tests]  # fmt: skip
        assert [f for _, f, _ in summaries] == ["1", "0", "1"]
        assert all(int(t) == int(f) + int(ok) for t, f, ok in summaries)
        for _, text in runs:
            failed = " failed: 1," in text or "error CS" in text
            assert text.endswith("\n\nCommand exited with code 1") == failed
        [note] = [t for a, t in runs if a["isBackground"]]
        [(terminal, output)] = _calls(session, "get_terminal_output")
        assert note == f"Command is running in terminal with ID={terminal['id']}"
        assert output.startswith(f"Output of terminal {terminal['id']}:\n")
        assert any(a["command"].startswith("git rm src/") for a, _ in runs)
        [(asked, clean)] = _calls(session, "get_errors")
        assert clean == f'<errors path="{asked["filePaths"][0]}">\nNo errors found\n</errors>\n'
        # The wrong file is edited and put back: the second edit undoes the first.
        replaced = _calls(session, "replace_string_in_file")
        first, second = replaced[0][0], replaced[1][0]
        assert first["filePath"] == second["filePath"]
        assert (first["oldString"], first["newString"]) == (second["newString"],
                                                            second["oldString"])  # fmt: skip
        # The to-do list moves along: items completed, one dropped (it leaves the list), one
        # added mid-session and still open, one more added at the end.
        start, end = todo_lists[0], todo_lists[-1]
        assert list(start.values()).count("in-progress") == 1
        dropped = [t for t in start if t not in end]
        assert len(dropped) == 1 and dropped[0].startswith("Backfill")
        added = [t for t in end if t not in start]
        assert len(added) == 2 and all(end[t] == "not-started" for t in added)
        assert sum(v == "completed" for v in end.values()) >= 4
        assert "<todoList>" not in users[1] and "<todoList>\n# Todo List\n\n- [" in users[-1]
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Cursor's agent tools: (arguments every call gives, arguments a call may add).
_CURSORSTORY_ARGS = {
    "run_terminal_cmd": ({"command", "is_background", "explanation"}, set()),
    "read_file": ({"target_file"}, {"offset", "limit"}),
    "edit_file": ({"target_file", "instructions", "code_edit"}, set()),
    "search_replace": ({"file_path", "old_string", "new_string"}, set()),
    "delete_file": ({"target_file", "explanation"}, set()),
    "grep": ({"pattern", "path", "output_mode"}, set()),
    "codebase_search": ({"query", "target_directories", "explanation"}, set()),
    "glob_file_search": ({"glob_pattern", "target_directory"}, set()),
    "list_dir": ({"target_directory"}, set()),
    "read_lints": ({"paths"}, set()),
    "todo_write": ({"merge", "todos"}, set()),
}
_CURSORSTORY_RAN = re.compile(
    r"\AExit code: (\d+)\n\nCommand output:\n\n```\n(.*)\n```\n\nCommand completed\.\n\n"
    r"The previous shell command ended, so on the next invocation of this tool, you will be "
    r"reusing the shell\.\n\nOn the next terminal tool call, the directory of the shell will "
    r"already be /Users/\w+/src/\w+\.(\n\n<system_reminder>\n.+\n</system_reminder>)?\Z",
    re.S,
)


def test_cursorstory_style_speaks_cursors_tools_and_merges_its_todo_list() -> None:
    from compaction.eval.families.cursorstory import MARKER, TODO_ANSWER

    for session in sessions("cursorstory-style"):
        messages = session.conversation.messages
        users = [m.text for m in messages if m.role == "user"]
        assert all(u.startswith("<user_query>\n") and u.endswith("\n</user_query>") for u in users)
        results = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        names, runs, writes, edits, replaced = set(), [], [], [], []
        for message in messages:
            for call in message.tool_calls:
                args, text = json.loads(call.arguments), results[call.id]
                must, may = _CURSORSTORY_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                names.add(call.name)
                if call.name == "run_terminal_cmd":
                    ran = _CURSORSTORY_RAN.match(text)
                    assert ran and args["is_background"] is False, text[-300:]
                    assert "\n" not in args["command"] and args["explanation"].endswith(".")
                    runs.append((args["command"], int(ran[1]), ran[2]))
                elif call.name == "read_file":
                    # LINE_NUMBER|LINE_CONTENT, from the offset asked for.
                    lines = text.split("\n")
                    start = args.get("offset", 1)
                    assert all(re.match(rf" *{start + k}\|", x) for k, x in enumerate(lines))
                    assert args.get("limit", len(lines)) == len(lines)
                elif call.name == "edit_file":
                    head = "The apply model made the following changes to the file:\n\n```\n"
                    assert text.startswith(head) and text.endswith("\n```\n")
                    diff = text[len(head) : -len("\n```\n")].split("\n")
                    assert all(x[:2] in ("  ", "- ", "+ ") for x in diff), diff
                    edits.append((args, diff))
                elif call.name == "search_replace":
                    assert args["old_string"] != args["new_string"]
                    updated = f"The file {args['file_path']} has been updated. Here's a "
                    assert text.startswith(updated + "relevant snippet of the edited file:\n")
                    replaced.append(args)
                elif call.name == "delete_file":
                    assert text == "File deleted successfully."
                elif call.name == "grep":
                    assert args["output_mode"] == "content"
                    for block in text.split("\n\n"):
                        path, *hits = block.split("\n")
                        assert "/" in path or path.endswith(".txt")
                        assert hits and all(re.match(r"\d+:", h) for h in hits)
                elif call.name == "todo_write":
                    assert text.startswith(TODO_ANSWER)
                    writes.append((args, json.loads(text[len(TODO_ANSWER) :])))
        assert names == set(_CURSORSTORY_ARGS)
        # Sketches stand for unchanged code with Cursor's marker; a new file is its whole text.
        sketches = [a for a, _ in edits if a["code_edit"].startswith(MARKER)]
        assert len(sketches) == 3 and all(a["code_edit"].endswith(MARKER) for a in sketches)
        assert sum(diff[0] == "- " for _, diff in edits) == 4
        # The wrong file is edited, then put back: the replacement undoes the sketch.
        (wrong, wrong_diff), revert = edits[0], replaced[0]
        assert revert["file_path"] == wrong["target_file"]
        put_in = [x[2:] for x in wrong_diff if x.startswith("+ ")]
        taken_out = [x[2:] for x in wrong_diff if x.startswith("- ")]
        assert revert["old_string"].split("\n")[1:-1] == put_in
        assert revert["new_string"].split("\n")[1:-1] == taken_out
        # The build fails on C++14 headers, then links; ctest fails, passes, fails.
        builds = [(code, out) for cmd, code, out in runs if cmd == "cmake --build build"]
        assert [code for code, _ in builds] == [1, 0]
        assert "error: no template named 'optional' in namespace 'std'" in builds[0][1]
        assert builds[0][1].endswith("ninja: build stopped: subcommand failed.")
        tests = [(code, out) for cmd, code, out in runs if cmd.startswith("ctest ")]
        summaries = [re.findall(r"^(\d+)% tests passed, (\d+) tests failed out of (\d+)$", out,
                                re.M)[0] for _, out in tests]  # fmt: skip
        assert [f for _, f, _ in summaries] == ["1", "0", "1"]
        assert [code for code, _ in tests] == [8, 0, 8]
        assert all(int(p) == 100 * (int(n) - int(f)) // int(n) for p, f, n in summaries)
        for _, out in (tests[0], tests[2]):
            assert "The following tests FAILED:" in out and "[  FAILED  ] BatcherTest." in out
        deleted = [a["target_file"] for a, _ in _calls(session, "delete_file")]
        assert deleted == ["src/export/flush_thread.cpp", "src/export/flush_thread.h"]
        lints = [r for _, r in _calls(session, "read_lints")]
        assert "[cppcoreguidelines-special-member-functions]" in lints[0]
        assert lints[1] == "No linter errors found."
        # The to-do list: written whole once, then only what changed, merged by id.
        assert [a["merge"] for a, _ in writes] == [False, True, True, True]
        merged: dict[str, dict[str, str]] = {}
        for arguments, listed in writes:
            if arguments["merge"]:
                assert 0 < len(arguments["todos"]) < len(merged)
            for item in arguments["todos"]:
                assert item["status"] in {"pending", "in_progress", "completed", "cancelled"}
                assert ("content" in item) == (item["id"] not in merged)
                merged.setdefault(item["id"], {"id": item["id"]}).update(item)
            assert [(i["id"], i["content"], i["status"]) for i in listed] == [
                (i["id"], i["content"], i["status"]) for i in merged.values()
            ]
        first, last = writes[0][1], writes[-1][1]
        assert [i["status"] for i in first].count("in_progress") == 1
        [cancelled] = [i["content"] for i in last if i["status"] == "cancelled"]
        assert "Prometheus" in cancelled
        added = [i for i in last if i["id"] not in {j["id"] for j in first}]
        assert len(added) == 2 and all(i["status"] == "pending" for i in added)
        assert sum(i["status"] == "completed" for i in last) >= 4
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Qwen Code's core tools and the argument keys each may take.
_QWEN_TOOLS = {
    "run_shell_command": {"command", "is_background", "description", "directory"},
    "read_file": {"absolute_path", "offset", "limit"},
    "write_file": {"file_path", "content"},
    "edit": {"file_path", "old_string", "new_string", "replace_all"},
    "grep_search": {"pattern", "path", "glob"},
    "glob": {"pattern", "path"},
    "list_directory": {"path"},
    "save_memory": {"fact", "scope"},
    "todo_write": {"todos"},
}
#: How Qwen Code reports a finished foreground command.
_QWEN_SHELL = re.compile(
    r"\ACommand: (.+)\nDirectory: \(root\)\nOutput: .*\nError: \(none\)\nExit Code: (\d+)\n"
    r"Signal: \(none\)\nBackground PIDs: \(none\)\nProcess Group PGID: \d+\Z",
    re.S,
)


def test_qwenstory_style_speaks_qwen_codes_tools_and_moves_its_todo_list() -> None:
    for session in sessions("qwenstory-style"):
        messages = session.conversation.messages
        assert messages[0].role == "system"
        assert messages[0].text.startswith("You are Qwen Code, an interactive CLI agent")
        results = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        commands, todo_lists, edits, used = [], [], [], set()
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id]
                assert call.name in _QWEN_TOOLS and set(args) <= _QWEN_TOOLS[call.name], call.name
                used.add(call.name)
                path = args.get("absolute_path") or args.get("file_path") or args.get("path")
                if path is not None:
                    assert path.startswith("/home/"), path
                if call.name == "run_shell_command":
                    assert args["is_background"] is False and args["description"]
                    match = _QWEN_SHELL.match(text)
                    assert match and match[1] == args["command"], text[:200]
                    commands.append((args["command"], int(match[2]), text))
                elif call.name == "read_file" and "offset" in args:
                    start = args["offset"] + 1
                    assert text.startswith(f"Showing lines {start}-{start + args['limit'] - 1} of ")
                elif call.name == "write_file":
                    assert text in (f"Successfully created and wrote to new file: {path}.",
                                    f"Successfully overwrote file: {path}.")  # fmt: skip
                elif call.name == "edit":
                    assert args["old_string"] != args["new_string"]
                    assert text.startswith(f"The file: {path} has been updated. Showing lines ")
                    assert text.endswith(f"from the edited file:\n\n---\n\n{args['new_string']}")
                    edits.append(args)
                elif call.name == "grep_search":
                    assert re.match(r'\AFound \d+ match(es)? for pattern "', text)
                    assert "\n---\nFile: lib/" in text
                elif call.name == "save_memory":
                    assert args["scope"] == "project"
                    fact = args["fact"]
                    assert text == f'Okay, I\'ve remembered that in project memory: "{fact}"'
                elif call.name == "todo_write":
                    todos = args["todos"]
                    assert all(set(item) == {"id", "content", "status"} for item in todos)
                    assert text.startswith("Todos have been modified successfully. ")
                    assert json.dumps(todos, separators=(",", ":")) in text
                    assert text.endswith("</system-reminder>")
                    todo_lists.append(todos)
        assert used == set(_QWEN_TOOLS)
        # The wrong file is edited, then put back by the reverse edit.
        first, undo = edits[0], edits[1]
        assert undo["file_path"] == first["file_path"] and "/legacy/" in first["file_path"]
        assert (undo["old_string"], undo["new_string"]) == (first["new_string"],
                                                            first["old_string"])  # fmt: skip
        # flutter test and dart analyze print as they do; their exit codes say so.
        runs = [(code, text) for command, code, text in commands if command.startswith("flutter")]
        summaries = [re.findall(r"^\d\d:\d\d \+\d+(?: -(\d+))?: (Some tests failed\.|All tests "
                                r"passed!)$", text, re.M) for _, text in runs]  # fmt: skip
        failed, passed = ("1", "Some tests failed."), ("", "All tests passed!")
        assert [s[-1] for s in summaries] == [failed, passed, failed]
        assert [code for code, _ in runs] == [1, 0, 1]
        assert all("[E]\n  Expected: " in text for code, text in runs if code)
        analyzed = [(code, text) for command, code, text in commands if "dart analyze" in command]
        assert [code for code, _ in analyzed] == [3, 0]
        assert " - undefined_named_parameter\n" in analyzed[0][1]
        assert "2 issues found." in analyzed[0][1]
        assert "No issues found!" in analyzed[1][1]
        assert any(c.startswith("git rm lib/") for c, _, _ in commands)
        assert any(c.startswith("git log --oneline -S ") for c, _, _ in commands)
        # The to-do list moves along: one item in progress at a time, items completed, one
        # dropped (left out of the list), one added mid-session that stays open.
        assert all(sum(i["status"] == "in_progress" for i in items) <= 1 for items in todo_lists)
        assert all(i["status"] in {"pending", "in_progress", "completed"}
                   for items in todo_lists for i in items)  # fmt: skip
        start, end = todo_lists[0], {i["id"]: i for i in todo_lists[-1]}
        [dropped] = [i for i in start if i["id"] not in end]
        assert dropped["content"].startswith("Draft migration")
        added = [i for i in end.values() if i["id"] not in {j["id"] for j in start}]
        assert len(added) == 2 and all(i["status"] != "completed" for i in added)
        assert any(i["content"].startswith("Pending-count badge") and i["status"] == "pending"
                   for i in added)  # fmt: skip
        assert sum(i["status"] == "completed" for i in end.values()) >= 4
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


_ZEDSTORY_ARGS = {
    "terminal": ({"command", "cd"}, set()),
    "read_file": ({"path"}, {"start_line", "end_line"}),
    "edit_file": ({"display_description", "path", "mode"}, set()),
    "delete_path": ({"path"}, set()),
    "create_directory": ({"path"}, set()),
    "grep": ({"regex", "include_pattern"}, set()),
    "list_directory": ({"path"}, set()),
    "diagnostics": ({"path"}, set()),
    "thinking": ({"content"}, set()),
    "fetch": ({"url"}, set()),
}


def test_zedstory_style_speaks_zeds_tools_and_moves_its_plan() -> None:
    from compaction.eval.families.zedstory import FAMILY

    for session in sessions(FAMILY):
        messages = session.conversation.messages
        assert messages[0].role == "system" and "root directories" in messages[0].text
        root = re.search(r"^- `([a-z]+-api)`$", messages[0].text, re.M).group(1)
        results = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        used, modes, commands = set(), Counter(), []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id]
                must, may = _ZEDSTORY_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                used.add(call.name)
                for key in ("path", "cd"):
                    if key in args:
                        assert args[key] == root or args[key].startswith(f"{root}/"), args
                if call.name == "terminal":
                    commands.append((args["command"], text))
                    code = re.match(r'Command "(.*)" failed with exit code (\d+)\.', text)
                    assert (
                        (code and code[1] == args["command"])
                        or text.startswith("```")
                        or (text == "Command executed successfully.")
                    )
                elif call.name == "edit_file":
                    modes[args["mode"]] += 1
                    assert text.startswith(f"Edited {args['path']}:\n\n```diff\n@@ ")
                elif call.name == "delete_path":
                    assert text == f"Deleted {args['path']}"
                elif call.name == "create_directory":
                    assert text == f"Created directory {args['path']}"
                elif call.name == "grep":
                    assert re.match(r"Found \d+ matches:\n\n## Matches in ", text)
                elif call.name == "list_directory":
                    assert text.startswith(("# Folders:\n", "\n# Files:\n"))
                elif call.name == "diagnostics":
                    assert text == "File doesn't have errors or warnings!" or re.match(
                        r"(error|warning) at line \d+: ", text
                    )
                elif call.name == "thinking":
                    assert text == "Finished thinking."
        assert used == set(_ZEDSTORY_ARGS)
        assert set(modes) == {"edit", "create", "overwrite"}
        # Jest fails, passes, fails again with more tests; the v1 route is put back with git.
        runs = [text for command, text in commands if command.startswith("npm test")]
        assert [r.startswith('Command "npm test') for r in runs] == [True, False, True]
        totals = [re.search(r"^Tests: +(?:(\d+) failed, )?(\d+) passed, (\d+) total$", r, re.M)
                  for r in runs]  # fmt: skip
        assert [t[1] for t in totals] == ["1", None, "1"] and int(totals[2][3]) > int(totals[0][3])
        assert "TypeError: Cannot read properties of undefined (reading 'rows')" in runs[0]
        assert any(c.startswith("git checkout -- src/routes/bookings.v1.js") for c, _ in commands)
        # No to-do tool: the plan is a checkbox list in the replies, and it moves.
        replies = [m.text for m in messages if m.role == "assistant" and "\n- [" in (m.text or "")]
        plans = [re.findall(r"^- (\[[ x]\]|~~)(.+?)(?:~~ \(dropped\))?$", r, re.M) for r in replies]
        assert len(plans) == 3 and all(box == "[ ]" for box, _ in plans[0])
        first = {item.strip() for _, item in plans[0]}
        last = {item.strip(): box for box, item in plans[-1]}
        assert [i for i, box in last.items() if box == "~~"] == ["Prometheus counter for replays"]
        added = [i for i in last if i not in first]
        assert len(added) == 2 and all(last[i] == "[ ]" for i in added)
        assert sum(box == "[x]" for box in last.values()) == 5
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Amp's tools as its tool schemas name them (late 2025): required and optional arguments.
_AMPSTORY_ARGS = {
    "Bash": ({"cmd", "cwd"}, set()),
    "Read": ({"path"}, {"read_range"}),
    "edit_file": ({"path", "old_str", "new_str"}, {"replace_all"}),
    "create_file": ({"path", "content"}, set()),
    "undo_edit": ({"path"}, set()),
    "Grep": ({"pattern", "path"}, set()),
    "glob": ({"filePattern"}, set()),
    "todo_write": ({"todos"}, set()),
    "todo_read": (set(), set()),
    "finder": ({"query"}, set()),
    "oracle": ({"task", "context", "files"}, set()),
    "Task": ({"description", "prompt"}, set()),
    "read_web_page": ({"url", "objective"}, set()),
}


def test_ampstory_style_speaks_amps_tools_and_moves_its_todo_list() -> None:
    from compaction.eval.families.ampstory import FAMILY

    for session in sessions(FAMILY):
        messages = session.conversation.messages
        assert messages[0].role == "system" and messages[0].text.startswith("You are Amp,")
        assert "Amp Thread URL: https://ampcode.com/threads/T-" in messages[0].text
        root = re.search(r"^Workspace root folder: (/\S+)$", messages[0].text, re.M).group(1)
        assert messages[1].text.startswith("<attached_files>\n```file://" + root + "/deps.edn\n")
        results = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        used, runs, edits, todo_lists, undone = set(), [], [], [], []
        for message in messages:
            for call in message.tool_calls:
                assert call.id.startswith("toolu_vrtx_01")
                args, text = json.loads(call.arguments), results[call.id]
                must, may = _AMPSTORY_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                used.add(call.name)
                for key in ("path", "cwd"):
                    if key in args:  # file tools take absolute paths in the workspace
                        assert args[key].startswith(root), args
                if call.name == "Bash":
                    result = json.loads(text)
                    assert set(result) == {"output", "exitCode"} and args["cwd"] == root
                    assert not args["cmd"].startswith("cd ")
                    runs.append((args["cmd"], result["exitCode"], result["output"]))
                elif call.name == "Read":
                    result = json.loads(text)
                    assert result["absolutePath"] == args["path"]
                    if result.get("isDirectory"):
                        assert result["content"] == "\n".join(result["directoryEntries"])
                        continue
                    lines = result["content"].split("\n")
                    first, last = args.get("read_range", [1, len(lines)])
                    if first > 1:
                        assert lines.pop(0) == f"[... omitted lines 1 to {first - 1} ...]"
                    if lines[-1].startswith("[... omitted lines "):
                        assert lines.pop().startswith(f"[... omitted lines {last + 1} to ")
                    numbers = [int(line.split(": ", 1)[0]) for line in lines]
                    assert numbers == list(range(first, last + 1))
                elif call.name == "edit_file":
                    result = json.loads(text)
                    assert (
                        set(result) == {"diff", "lineRange"} and args["old_str"] != args["new_str"]
                    )
                    head = (
                        f"```diff\nIndex: {args['path']}\n{'=' * 67}\n--- {args['path']}\toriginal"
                    )
                    assert result["diff"].startswith(head) and result["diff"].endswith("\n```")
                    edits.append(args)
                elif call.name == "undo_edit":
                    assert text.startswith(f"```diff\nIndex: {args['path']}\n")
                    undone.append((len(edits), args["path"]))
                elif call.name == "create_file":
                    assert text == f"Successfully created file {args['path']}"
                elif call.name in ("Grep", "glob"):
                    found = json.loads(text)
                    assert found and all(f.startswith(root + "/") for f in found)
                    if call.name == "Grep":
                        assert all(re.match(r"/\S+:\d+:", line) for line in found)
                elif call.name == "todo_write":
                    todos = args["todos"]
                    assert all(set(item) == {"id", "content", "status"} for item in todos)
                    assert {item["status"] for item in todos} <= {
                        "todo",
                        "in-progress",
                        "completed",
                    }
                    assert sum(item["status"] == "in-progress" for item in todos) <= 1
                    assert text == json.dumps(todos, separators=(",", ":"))
                    todo_lists.append(todos)
                elif call.name == "todo_read":
                    assert json.loads(text) == todo_lists[-1]
                else:  # finder, oracle, Task, read_web_page answer in prose
                    assert text.strip() and not text.startswith(("{", "["))
        assert used == set(_AMPSTORY_ARGS)
        # The one undone edit is made again on the same text, differently.
        [(at, path)] = undone
        before, again = edits[at - 1], edits[at]
        assert before["path"] == again["path"] == path and before["old_str"] == again["old_str"]
        assert before["new_str"] != again["new_str"]
        # The code does not compile, then does; the tests error, pass, then fail on the cap.
        compiles = [code for cmd, code, _ in runs if cmd.startswith("clojure -M -e ")]
        assert compiles == [1, 0]
        assert any("Unable to resolve symbol: " in out for cmd, _, out in runs if "-M -e" in cmd)
        tests = [(code, out) for cmd, code, out in runs if cmd == "clojure -X:test"]
        assert [code for code, _ in tests] == [1, 0, 1, 1]
        summary = re.compile(r"^Ran (\d+) tests containing (\d+) assertions\.\n(\d+) failures, "
                             r"(\d+) errors\.$", re.M)  # fmt: skip
        summaries = [summary.search(out) for _, out in tests]
        assert [(s[3], s[4]) for s in summaries] == [("0", "6"), ("0", "0"), ("1", "0"), ("1", "0")]
        assert int(summaries[2][1]) == int(summaries[1][1]) + 1
        assert (
            tests[0][1].count("\nERROR in (") == 6
            and "FAIL in (backoff-never-exceeds-cap)" in (tests[3][1])
        )
        assert any(cmd.startswith("git rm src/") for cmd, _, _ in runs)
        # The to-do list moves along: Amp's list replaces the last one, so the dropped item is
        # left out; the one added late is still to do, and the cap item is reopened.
        first, last = todo_lists[0], {item["content"]: item["status"] for item in todo_lists[-1]}
        assert [item["status"] for item in first] == ["in-progress"] + ["todo"] * (len(first) - 1)
        [dropped] = [item["content"] for item in first if item["content"] not in last]
        assert dropped.startswith("Prometheus counter")
        [added] = [c for c in last if c not in {item["content"] for item in first}]
        assert added.startswith("Admin endpoint to replay") and last[added] == "todo"
        assert list(last.values()).count("in-progress") == 1


#: Cascade's tools (its published schemas) and the arguments each call must and may carry.
_WINDSURFSTORY_ARGS = {
    "run_command": ({"toolSummary", "CommandLine", "Cwd", "Blocking", "SafeToAutoRun"},
                    {"WaitMsBeforeAsync"}),
    "command_status": ({"toolSummary", "CommandId", "OutputCharacterCount",
                        "WaitDurationSeconds"}, set()),
    "view_file": ({"toolSummary", "AbsolutePath", "StartLine", "EndLine",
                   "IncludeSummaryOfOtherLines"}, set()),
    "write_to_file": ({"toolSummary", "TargetFile", "CodeContent", "EmptyFile"}, set()),
    "replace_file_content": ({"toolSummary", "TargetFile", "CodeMarkdownLanguage", "Instruction",
                              "ReplacementChunks"}, set()),
    "grep_search": ({"toolSummary", "SearchPath", "Query", "MatchPerLine", "Includes", "IsRegex",
                     "CaseInsensitive"}, set()),
    "find_by_name": ({"toolSummary", "SearchDirectory", "Pattern", "Type"}, set()),
    "list_dir": ({"toolSummary", "DirectoryPath"}, set()),
    "create_memory": ({"toolSummary", "Id", "Title", "Content", "CorpusNames", "Tags", "Action",
                       "UserTriggered"}, set()),
    "todo_list": ({"toolSummary", "todos"}, set()),
}  # fmt: skip
_CASCADE_RAN = re.compile(r"\AThe command (completed successfully\.\n(Output:\n|No output\Z)|"
                          r"failed with exit code: (\d+)\nOutput:\n)")  # fmt: skip


def test_windsurfstory_style_speaks_cascades_tools_and_moves_its_todo_list() -> None:
    from compaction.eval.families.windsurfstory import DST_TEST, FAMILY

    for session in sessions(FAMILY):
        messages = session.conversation.messages
        assert messages[0].role == "system" and messages[0].text.startswith("You are Cascade")
        root = re.search(r"^(/Users/\w+/code/[a-z]+-api) -> ", messages[0].text, re.M).group(1)
        # Every user turn is Cascade's envelope: the request, then the editor's state.
        users = [m.text for m in messages if m.role == "user"]
        assert all(u.startswith("<USER_REQUEST>\n") and u.endswith("</ADDITIONAL_METADATA>")
                   for u in users)  # fmt: skip
        results = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        used, runs, lists, edits = set(), [], [], []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id]
                must, may = _WINDSURFSTORY_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                assert next(iter(args)) == "toolSummary"  # given first, as Cascade must
                used.add(call.name)
                for key in ("AbsolutePath", "TargetFile", "SearchPath", "SearchDirectory",
                            "DirectoryPath", "Cwd"):  # fmt: skip
                    if key in args:
                        assert args[key] == root or args[key].startswith(f"{root}/"), args
                if call.name == "run_command":
                    command = args["CommandLine"]
                    assert args["Cwd"] == root and not command.startswith("cd ")
                    # Deleting, committing, pushing and reaching out are never auto-run.
                    risky = command.startswith(("rm ", "git ", "curl ", "gh "))
                    assert args["SafeToAutoRun"] is not risky, command
                    if args["Blocking"]:
                        match = _CASCADE_RAN.match(text)
                        assert match, text[:120]
                        runs.append((command, int(match[3] or 0), text))
                    else:
                        assert "WaitMsBeforeAsync" in args
                        assert text.startswith("Background command ID: ")
                elif call.name == "command_status":
                    code = int(re.match(r"Status: DONE\nExit code: (\d+)\nOutput:\n", text)[1])
                    runs.append(("(background) ./gradlew test", code, text))
                elif call.name == "view_file":
                    first, last = args["StartLine"], args["EndLine"]
                    assert text.startswith(f"File Path: `file://{args['AbsolutePath']}`\n")
                    assert f"\nShowing lines {first} to {last}\n" in text
                    numbers = re.findall(r"^(\d+): ", text, re.M)
                    assert [int(n) for n in numbers] == list(range(first, last + 1))
                    total = int(re.search(r"^Total Lines: (\d+)$", text, re.M)[1])
                    whole = "shows the entire, complete file contents" in text
                    assert whole == (first == 1 and last == total)
                elif call.name == "write_to_file":
                    assert args["EmptyFile"] is False and args["CodeContent"]
                    assert (
                        text == f"Created file file://{args['TargetFile']} with requested content."
                    )
                elif call.name == "replace_file_content":
                    assert text.startswith(
                        "The following changes were made by the "
                        f"replace_file_content tool to: {args['TargetFile']}."
                    )
                    assert "\n[diff_block_start]\n@@ -" in text
                    assert text.endswith("\n[diff_block_end]")
                    for chunk in args["ReplacementChunks"]:
                        assert set(chunk) == {
                            "AllowMultiple",
                            "TargetContent",
                            "ReplacementContent",
                        }
                        assert chunk["TargetContent"] != chunk["ReplacementContent"]
                    edits.append(args["TargetFile"])
                elif call.name == "grep_search":
                    for line in text.splitlines():
                        if line != "No results found":
                            assert set(json.loads(line)) == {
                                "Filename",
                                "LineNumber",
                                "LineContent",
                            }
                elif call.name == "list_dir":
                    assert re.search(r"\n\nSummary: This directory contains \d+ subdirectories "
                                     r"and \d+ files\.\Z", text)  # fmt: skip
                elif call.name == "find_by_name":
                    assert re.match(r"Found (\d+) results", text)
                elif call.name == "create_memory":
                    assert args["Action"] == "create" and args["UserTriggered"] is True
                    assert args["CorpusNames"] == [root] and args["Id"] == ""
                elif call.name == "todo_list":
                    for item in args["todos"]:
                        assert set(item) == {"id", "content", "status", "priority"}
                        assert item["status"] in {"pending", "in_progress", "completed"}
                        assert item["priority"] in {"high", "medium", "low"}
                    lists.append(args["todos"])
        assert used == set(_WINDSURFSTORY_ARGS)
        # The build fails to compile, then compiles; the tests go red, green, red (in the
        # background, read back through command_status); detekt fails once, then passes.
        codes = {prefix: [code for command, code, _ in runs if command.startswith(prefix)]
                 for prefix in ("./gradlew compileKotlin", "./gradlew test", "(background)",
                                "./gradlew detekt")}  # fmt: skip
        assert codes == {"./gradlew compileKotlin": [1, 0], "./gradlew test": [1, 0],
                         "(background)": [1], "./gradlew detekt": [1, 0]}  # fmt: skip
        tests = [text for command, _, text in runs if "gradlew test" in command]
        counts = [re.findall(r"^(\d+) tests completed, (\d+) failed$", t, re.M) for t in tests]
        assert [c[0][1] if c else None for c in counts] == ["2", None, "1"]
        assert int(counts[2][0][0]) > int(counts[0][0][0])
        assert f"QuietHoursTest > {DST_TEST}() FAILED" in tests[2]
        assert "BUILD SUCCESSFUL" in tests[1]
        # No delete tool: the misnamed migration and the nightly job go through the shell.
        removed = [c for c, _, _ in runs if c.startswith(("rm ", "git rm "))]
        assert len(removed) == 2 and "_" in removed[0].split("/")[-1]
        # The to-do list moves: items completed, one dropped (left out), two added late.
        first, last = {i["id"]: i for i in lists[0]}, {i["id"]: i for i in lists[-1]}
        [dropped] = [i for i in first.values() if i["id"] not in last]
        assert dropped["content"].startswith("Micrometer counter")
        added = [i for i in last.values() if i["id"] not in first]
        assert len(added) == 3 and sum(i["status"] == "pending" for i in added) == 2
        assert sum(i["status"] == "completed" for i in last.values()) == 7
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Crush's tools as its source declares them (internal/agent/tools): required and optional keys.
_CRUSHSTORY_ARGS = {
    "bash": ({"description", "command"}, {"run_in_background"}),
    "job_output": ({"shell_id", "wait"}, set()),
    "view": ({"file_path"}, {"offset", "limit"}),
    "edit": ({"file_path", "old_string", "new_string"}, set()),
    "multiedit": ({"file_path", "edits"}, set()),
    "write": ({"file_path", "content"}, set()),
    "grep": ({"pattern", "path", "include"}, set()),
    "glob": ({"pattern", "path"}, set()),
    "ls": ({"path"}, set()),
    "lsp_diagnostics": ({"file_path"}, set()),
    "fetch": ({"url", "format"}, set()),
    "todos": ({"todos"}, set()),
}


def test_crushstory_style_speaks_crushs_tools_and_moves_its_todo_list() -> None:
    from compaction.eval.families.crushstory import FAMILY

    for session in sessions(FAMILY):
        messages = session.conversation.messages
        assert messages[0].text.startswith("You are Crush, a powerful AI Assistant")
        root = re.search(r"^Working directory: (/home/\w+/code/\w+)$", messages[0].text, re.M)[1]
        results = {r.tool_call_id: r.text for m in messages for r in m.tool_results}
        used, viewed, runs, lists = set(), set(), [], []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = results[call.id]
                must, may = _CRUSHSTORY_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                used.add(call.name)
                if "file_path" in args:
                    assert args["file_path"].startswith(f"{root}/")
                if call.name == "bash":
                    assert 0 < len(args["description"]) <= 30
                    background = text.startswith("Background shell started with ID: ")
                    assert background == bool(args.get("run_in_background"))
                    assert (
                        background or text == "no output" or text.endswith(f"\n\n<cwd>{root}</cwd>")
                    )
                    runs.append((args["command"], text))
                elif call.name == "view":
                    viewed.add(args["file_path"])
                    assert text.startswith("<file>\n") and text.endswith("\n</file>\n")
                    first = int(text.split("\n", 2)[1].split("|", 1)[0])
                    assert first == args.get("offset", 0) + 1
                elif call.name in ("edit", "multiedit"):
                    assert args["file_path"] in viewed  # Crush refuses an edit before a view
                    assert text.startswith("<result>\n")
                elif call.name == "write":
                    assert (
                        text
                        == f"<result>\nFile successfully written: {args['file_path']}\n</result>"
                    )
                elif call.name == "grep":
                    assert re.match(r"Found \d+ matches\n/", text)
                elif call.name == "todos":
                    statuses = [item["status"] for item in args["todos"]]
                    assert set(statuses) <= {"pending", "in_progress", "completed"}
                    assert all(set(item) == {"content", "status", "active_form"}
                               for item in args["todos"])  # fmt: skip
                    lists.append(args["todos"])
        assert used == set(_CRUSHSTORY_ARGS)
        # rspec fails (the constant), passes, fails again with more examples; no delete tool.
        specs = [text for command, text in runs if command == "bundle exec rspec"]
        counts = [re.search(r"^(\d+) examples, (\d+) failures?$", t, re.M) for t in specs]
        assert [c[2] for c in counts] == ["2", "0", "1"] and int(counts[2][1]) > int(counts[0][1])
        assert "\nexit status 1\nExit code 1\n\n<cwd>" in specs[0]
        assert any(command.startswith("rm lib/") for command, _ in runs)
        # The list moves: the Grafana item is left out (no cancelled state), a purge added.
        first = {i["content"] for i in lists[0]}
        last = {i["content"]: i["status"] for i in lists[-1]}
        [dropped] = first - set(last)
        assert dropped.startswith("Add a Grafana panel")
        [added] = set(last) - first
        assert added.startswith("Nightly rake task") and last[added] == "pending"
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Kimi CLI's built-in tools and the argument keys each takes (src/kimi_cli/tools `Params`):
#: (keys the story always passes, keys it may pass).
_KIMISTORY_ARGS = {
    "Shell": ({"command"}, {"timeout", "run_in_background", "description"}),
    "ReadFile": ({"path"}, {"line_offset", "n_lines"}),
    "WriteFile": ({"path", "content"}, {"mode"}),
    "StrReplaceFile": ({"path", "edit"}, set()),
    "Glob": ({"pattern"}, {"directory", "include_dirs"}),
    "Grep": ({"pattern"}, {"path", "glob", "output_mode", "-n", "-i", "-A", "-B", "-C", "type",
                           "head_limit", "offset", "multiline", "include_ignored"}),
    "SetTodoList": ({"todos"}, set()),
    "Agent": ({"description", "prompt"}, {"subagent_type", "model", "resume",
                                          "run_in_background", "timeout"}),
    "SearchWeb": ({"query"}, {"limit", "include_content"}),
    "FetchURL": ({"url"}, set()),
    "TaskOutput": ({"task_id"}, {"block", "timeout"}),
    "TaskStop": ({"task_id"}, {"reason"}),
}  # fmt: skip
_KIMI_SYSTEM = re.compile(r"\A<system>[^<]+</system>\Z")


def test_kimistory_style_speaks_kimis_tools_and_moves_its_todo_list() -> None:
    from compaction.eval.families.kimistory import FAMILY
    from compaction.messages import TextPart

    for session in sessions(FAMILY):
        messages = session.conversation.messages
        assert messages[0].text.startswith("You are Kimi Code CLI, an interactive general AI agent")
        root = re.search(r"current working directory is `(/home/\w+/src/\w+)`", messages[0].text)[1]
        parts = {r.tool_call_id: [p.text for p in r.content if isinstance(p, TextPart)]
                 for m in messages for r in m.tool_results}  # fmt: skip
        used, runs, lists, ids = set(), [], [], []
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                # Kimi K2's own call ids, numbered through the session.
                assert call.id == f"functions.{call.name}:{len(ids)}"
                ids.append(call.id)
                must, may = _KIMISTORY_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                used.add(call.name)
                result = parts[call.id]
                # The tool's message in <system> tags first, then its output, if any.
                assert 1 <= len(result) <= 2
                head, output = (result[0], result[1] if len(result) == 2 else "")
                bare = call.name in ("Grep", "Agent", "SearchWeb")  # no message: output only
                if not bare or head.startswith("<system>"):
                    assert _KIMI_SYSTEM.match(head), (call.name, head)
                for key in ("path", "directory"):
                    if key in args:
                        assert args[key].startswith(root)
                if call.name == "Shell":
                    if args.get("run_in_background"):
                        assert head == "<system>Background task started.</system>"
                        assert args["description"]
                        assert re.match(r"task_id: bash-[0-9a-z]{8}\nkind: bash\n", output)
                    else:
                        assert head in (
                            "<system>Command executed successfully.</system>",
                            "<system>ERROR: Command failed with exit code: 1.</system>",
                        )
                        runs.append((args["command"], head, output))
                elif call.name == "ReadFile":
                    assert re.fullmatch(
                        r"<system>\d+ lines read from file starting from line \d+\. Total lines in "
                        r"file: \d+\.( End of file reached\.)?</system>", head)  # fmt: skip
                    first = int(output.split("\t", 1)[0])
                    assert first == args.get("line_offset", 1)
                    assert all(re.match(r"^ *\d+\t", line) for line in output.splitlines())
                elif call.name == "WriteFile":
                    size = len(args["content"].encode())
                    assert result == [f"<system>File successfully overwritten. Current size: "
                                      f"{size} bytes.</system>"]  # fmt: skip
                elif call.name == "StrReplaceFile":
                    edits = args["edit"] if isinstance(args["edit"], list) else [args["edit"]]
                    assert all(set(e) == {"old", "new"} for e in edits)
                    n = len(edits)
                    assert result == [f"<system>File successfully edited. Applied {n} edit(s) "
                                      f"with {n} total replacement(s).</system>"]  # fmt: skip
                elif call.name == "Glob":
                    assert not args["pattern"].startswith("**")  # Kimi refuses those
                    assert (
                        head == f"<system>Found {len(output.splitlines())} matches for "
                        f"pattern `{args['pattern']}`.</system>"
                    )
                elif call.name == "Grep":
                    assert len(result) == 1 and not result[0].startswith("/")
                elif call.name == "SetTodoList":
                    assert result == ["<system>Todo list updated</system>", "Todo list updated"]
                    assert all(set(i) == {"title", "status"} for i in args["todos"])
                    statuses = {i["status"] for i in args["todos"]}
                    assert statuses <= {"pending", "in_progress", "done"}
                    lists.append(args["todos"])
                elif call.name == "Agent":
                    assert re.match(r"agent_id: a[0-9a-f]{8}\nresumed: false\n"
                                    r"actual_subagent_type: explore\nstatus: completed\n\n"
                                    r"\[summary\]\n", head)  # fmt: skip
                elif call.name == "SearchWeb":
                    assert head.startswith("Title: ") and "\nURL: https://" in head
                elif call.name == "TaskOutput":
                    assert output.startswith(f"retrieval_status: not_ready\ntask_id: "
                                             f"{args['task_id']}\n")  # fmt: skip
        assert used == set(_KIMISTORY_ARGS)
        # pytest fails (no migration), passes, fails again (the portrait photo); a file goes
        # with rm (Kimi has no delete tool).
        tests = [(head, out) for command, head, out in runs
                 if command == "python -m pytest -q listings"]  # fmt: skip
        summaries = [out.rstrip("\n").rsplit("\n", 1)[-1] for _, out in tests]
        outcome = [re.match(r"(?:(\d+) failed, )?(\d+) passed in [\d.]+s$", s) for s in summaries]
        assert [bool(m[1]) for m in outcome] == [True, False, True]
        assert [h.startswith("<system>ERROR") for h, _ in tests] == [True, False, True]
        assert outcome[2][1] == "1" and "does not exist" in tests[0][1]
        assert any(command.startswith("rm listings/utils/") for command, _, _ in runs)
        # The list moves: the dashboard badge is left out (no cancelled state), one is added.
        first = {i["title"] for i in lists[0]}
        last = {i["title"]: i["status"] for i in lists[-1]}
        [dropped] = first - set(last)
        assert dropped.startswith("Processing badge")
        [added] = set(last) - first
        assert added.startswith("Reprocess photos") and last[added] == "pending"


#: Forge's tools as the `forge` agent is given them (antinomyhq/forge, crates/forge_domain/src/
#: tools/catalog.rs): required and optional argument keys this family uses.
_FORGESTORY_ARGS = {
    "read": ({"file_path"}, {"start_line", "end_line"}),
    "write": ({"file_path", "content"}, {"overwrite"}),
    "patch": ({"file_path", "old_string", "new_string"}, set()),
    "multi_patch": ({"file_path", "edits"}, set()),
    "undo": ({"path"}, set()),
    "remove": ({"path"}, set()),
    "shell": ({"command", "cwd"}, {"description"}),
    "fs_search": ({"pattern", "path"}, {"glob", "output_mode", "-n"}),
    "sem_search": ({"queries"}, set()),
    "fetch": ({"url"}, set()),
    "todo_write": ({"todos"}, set()),
}
_FORGE_ATTRS = re.compile(r'\A<(\w+)((?:\n  [\w-]+="[^\n]*")*)\n>', re.S)
_FORGE_FEEDBACK = re.compile(r"<feedback>.+</feedback>\n<system_date>2026-11-\d\d</system_date>",
                             re.S)  # fmt: skip
_FORGE_REMINDER = ("<system_reminder>You have pending todo items that must be completed before "
                   "finishing the task:\n\n- [")  # fmt: skip


def _forge_attrs(text: str) -> tuple[str, dict[str, str]]:
    """The root element's name and attributes, as forge_template's Element renders them."""
    match = _FORGE_ATTRS.match(text)
    assert match, text[:200]
    return match[1], dict(re.findall(r'\n  ([\w-]+)="([^\n]*)"', match[2]))


def test_forgestory_style_speaks_forges_tools_and_moves_its_todo_list() -> None:
    from compaction.eval.families.forgestory import FAMILY

    for session, payload in _as_anthropic(FAMILY):
        messages = session.conversation.messages
        assert messages[0].role == messages[1].role == "system"
        assert messages[0].text.startswith("You are Forge, an expert software engineering")
        assert messages[1].text.startswith("<system_information>\n<operating_system>")
        root = re.search(r"<current_working_directory>(.+)</current_working_directory>",
                         messages[1].text)[1]  # fmt: skip
        shell = re.search(r"<default_shell>(.+)</default_shell>", messages[1].text)[1]
        # The first message is the task, the others feedback or the pending-todos reminder.
        users = [m.text for m in messages if m.role == "user"]
        assert re.fullmatch(r"<task>.+</task>\n<system_date>2026-11-\d\d</system_date>",
                            users[0], re.S)  # fmt: skip
        for text in users[1:]:
            assert _FORGE_FEEDBACK.fullmatch(text) or text.startswith(_FORGE_REMINDER), text[:80]
        parts = {r.tool_call_id: r for m in messages for r in m.tool_results}
        used, read, runs, flagged = set(), set(), [], []
        todos: dict[str, str] = {}
        for message in messages:
            for call in message.tool_calls:
                args = json.loads(call.arguments)
                text = parts[call.id].text
                must, may = _FORGESTORY_ARGS[call.name]
                assert must <= set(args) <= must | may, (call.name, sorted(args))
                used.add(call.name)
                for key in ("file_path", "path", "cwd"):
                    if key in args:
                        assert args[key].startswith(root), (call.name, args)
                if parts[call.id].is_error:
                    flagged.append(call.name)
                    assert text.startswith("<tool_call_error>\n<cause><![CDATA[")
                    assert "<reflection>You must now deeply reflect" in text
                    continue
                name, attrs = _forge_attrs(text) if "\n  " in text.split(">", 1)[0] else ("", {})
                if call.name == "read":
                    first = args.get("start_line", 1)
                    assert name == "file" and attrs["path"] == args["file_path"]
                    assert attrs["display_lines"].startswith(f"{first}-")
                    body = text.split("<![CDATA[", 1)[1]
                    assert re.match(rf" *{first}:", body) and text.endswith("]]>\n</file>")
                    read.add(args["file_path"])
                elif call.name == "write":
                    lines = len(args["content"].splitlines())
                    if args.get("overwrite"):
                        assert args["file_path"] in read  # Forge: read before overwrite
                        assert name == "file_overwritten" and "\n<file_diff><![CDATA[" in text
                    else:
                        assert text == (f'<file_created\n  path="{args["file_path"]}"\n  '
                                        f'total_lines="{lines}"\n>\n</file_created>')  # fmt: skip
                elif call.name in ("patch", "multi_patch"):
                    assert args["file_path"] in read  # Forge: read before edit
                    assert name == "file_diff" and attrs["path"] == args["file_path"]
                    # forge_display's diff: `old new |±line` rows, `...` between hunks.
                    rows = text.split("<![CDATA[", 1)[1].split("]]>", 1)[0].splitlines()
                    assert all(r == "..." or re.match(r"[\d ]+ [\d ]+ \|[-+ ]", r) for r in rows)
                    assert any(re.match(r"[\d ]+ [\d ]+ \|[-+]", r) for r in rows)
                elif call.name == "undo":
                    assert name == "file_undo" and attrs["status"] == "restored"
                elif call.name == "remove":
                    rel = args["path"].removeprefix(f"{root}/")
                    removed = f'<file_removed\n  path="{rel}"\n  status="completed"\n>'
                    assert text == removed + "\n</file_removed>"
                elif call.name == "shell":
                    assert name == "shell_output" and attrs["command"] == args["command"]
                    assert attrs["shell"] == shell and args["cwd"] == root
                    assert attrs.get("description") == args.get("description")
                    assert re.search(r'\n<(stdout|stderr)\n  total_lines="\d+"\n><!\[CDATA\[', text)
                    runs.append((args["command"], attrs["exit_code"], text))
                elif call.name == "fs_search":
                    assert name == "search_results" and attrs["pattern"] == args["pattern"]
                    assert attrs["max_bytes_allowed"] == "10240"
                    assert attrs.get("glob") == args.get("glob")
                    rows = text.split("<![CDATA[", 1)[1].split("]]>", 1)[0].split("\n")
                    assert int(attrs["total_lines"]) == len(rows)
                    assert all(not r.startswith("/") for r in rows)  # relative to the path
                    if args.get("output_mode") == "content":
                        assert all(re.match(r"[\w/.]+\.rs:\d+:", r) for r in rows)
                elif call.name == "sem_search":
                    assert text.startswith("<sem_search_results>\n<query_result\n")
                    assert text.count("<query_result\n") == len(args["queries"])
                    assert all(set(q) == {"query", "use_case"} for q in args["queries"])
                elif call.name == "fetch":
                    # A JSON body is labelled text/markdown, as Forge's fetch labels it.
                    assert name == "http_response" and attrs["url"] == args["url"]
                    assert attrs["content_type"] == "text/markdown"
                    body = text.split("<body><![CDATA[", 1)[1].split("]]></body>", 1)[0]
                    assert int(attrs["total_chars"]) == len(body)
                    json.loads(body)
                elif call.name == "todo_write":
                    # Only the changed items, keyed by content; `cancelled` removes one.
                    assert name == "todos_updated" and int(attrs["changes"]) == len(args["todos"])
                    assert all(set(item) == {"content", "status"} for item in args["todos"])
                    for item in args["todos"]:
                        change = "removed" if item["status"] == "cancelled" else (
                            "updated" if item["content"] in todos else "added")  # fmt: skip
                        assert f'  change="{change}"' in text
                        assert f">{item['content']}\n</todo>" in text
                        if change == "removed":
                            del todos[item["content"]]
                        else:
                            todos[item["content"]] = item["status"]
        assert used == set(_FORGESTORY_ARGS)
        # The refused write (no overwrite flag) is an error result, flagged in Anthropic too.
        assert flagged == ["write"]
        results = [b for m in payload["messages"] if isinstance(m["content"], list)
                   for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
        assert sum(bool(b.get("is_error")) for b in results) == 1
        # cargo test: two failures, green, one failure with one test more; the build fails first.
        tests = [(code, text) for command, code, text in runs if command == "cargo test"]
        summary = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed;", re.M)
        # unit tests, tests/health.rs, tests/magic_link.rs (then doc-tests, when it passes)
        counts = [[int(n) for n in summary.findall(text)[2][1:]] for _, text in tests]
        assert [failed for _, failed in counts] == [2, 0, 1]
        assert [code for code, _ in tests] == ["101", "0", "101"]
        assert sum(counts[0]) == sum(counts[1]) == sum(counts[2]) - 1
        assert "error: test failed, to rerun pass `--test magic_link`" in tests[2][1]
        builds = [(code, text) for command, code, text in runs if command == "cargo build"]
        assert builds[0][0] == "101" and "error[E0599]" in builds[0][1]
        # The SMS module goes through `remove`; production.toml's edit is undone.
        [removed] = [json.loads(c.arguments)["path"] for m in messages for c in m.tool_calls
                     if c.name == "remove"]  # fmt: skip
        assert removed == f"{root}/src/auth/sms_code.rs"
        [undone] = [json.loads(c.arguments)["path"] for m in messages for c in m.tool_calls
                    if c.name == "undo"]  # fmt: skip
        assert undone == f"{root}/config/production.toml"
        # The list moves: the Prometheus item is cancelled (removed), a revocation item added
        # and left pending, the mail item left in progress.
        assert "Export a Prometheus counter of issued links" not in todos
        assert todos["Revoke open links when a member changes their email"] == "pending"
        assert todos["Email the link through the existing mailer"] == "in_progress"
        assert list(todos.values()).count("completed") == 4
        # The reminder lists exactly the open items, once per change of that set.
        reminders = [t for t in users if t.startswith("<system_reminder>")]
        sets = [frozenset(re.findall(r"^- \[[A-Z_]+\] (.+)$", t, re.M)) for t in reminders]
        assert len(reminders) >= 3 and all(a != b for a, b in itertools.pairwise(sets))
        assert sets[-1] == {c for c, status in todos.items() if status != "completed"}
        # The values never stand inside each other, and the last message names no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        assert messages[-1].role == "assistant" and not messages[-1].tool_calls
        final = messages[-1].text.casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Mistral Vibe's built-in tools (mistralai/mistral-vibe vibe/core/tools/builtins, read at
#: ac8f1a0): required and optional argument keys, as their Args models name them.
_VIBESTORY_ARGS = {
    "bash": ({"command"}, {"timeout"}),
    "read": ({"file_path"}, {"offset", "limit"}),
    "edit": ({"file_path", "old_string", "new_string"}, {"replace_all"}),
    "write_file": ({"path", "content"}, set()),
    "grep": ({"pattern"}, {"path", "max_matches", "use_default_ignore"}),
    "todo": ({"action"}, {"todos"}),
    "task": ({"task"}, {"agent"}),
    "web_fetch": ({"url"}, {"timeout"}),
    "ask_user_question": ({"questions"}, {"footer_note"}),
}  # fmt: skip
_VIBE_READ_TAIL = re.compile(
    r"\nnum_lines: (\d+)\nstart_line: (\d+)\nrequested_offset: (None|\d+)\nrequested_limit: "
    r"\d+\ntotal_lines: \d+\nwas_truncated: False(\n\n<vibe_warning>\n.+\n</vibe_warning>)?\Z",
    re.S,
)


def _vibe_todos(items: list[dict[str, str]]) -> str:
    """The todo tool's result as `_invoke_tool` renders a TodoResult's model_dump()."""
    shown = ", ".join(
        f"{{'id': {i['id']!r}, 'content': {i['content']!r}, 'status': <TodoStatus."
        f"{i['status'].upper()}: {i['status']!r}>, 'priority': <TodoPriority."
        f"{i['priority'].upper()}: {i['priority']!r}>}}"
        for i in items
    )
    return f"message: Updated {len(items)} todos\ntodos: [{shown}]\ntotal_count: {len(items)}"


def test_vibestory_style_speaks_vibes_tools_and_moves_its_todo_list() -> None:
    from compaction.eval.families.vibestory import FAMILY

    for session in sessions(FAMILY):
        messages = OPENAI.encode(session.conversation)["messages"]
        system = messages[0]["content"]
        assert system.startswith("You are Mistral Vibe, a CLI coding agent built by Mistral AI.")
        root = re.search(r"^Absolute path: (/home/\w+/src/[\w-]+)$", system, re.M)[1]
        results = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
        used, runs, lists, written, ids = set(), [], [], set(), set()
        for message in messages:
            for call in message.get("tool_calls") or []:
                name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
                # Mistral's API gives nine-character alphanumeric call ids.
                assert re.fullmatch(r"[A-Za-z0-9]{9}", call["id"]) and call["id"] not in ids
                ids.add(call["id"])
                must, may = _VIBESTORY_ARGS[name]
                assert must <= set(args) <= must | may, (name, sorted(args))
                used.add(name)
                reply = results[call["id"]]
                assert reply["name"] == name  # Vibe's tool messages carry the tool's name
                result = reply["content"]
                if result.startswith("<tool_error>"):
                    # Only a command that exits non-zero fails here, as ToolError words it.
                    assert name == "bash"
                    assert re.fullmatch(
                        r"<tool_error>bash failed: Command failed: (.+)\nReturn code: 1\n"
                        r"(?:Stderr: .*\n)?Stdout: (.+)</tool_error>", result, re.S)  # fmt: skip
                    assert result.startswith(f"<tool_error>bash failed: Command failed: "
                                             f"{args['command']!r}\n")  # fmt: skip
                    runs.append((args["command"], False, result))
                elif name == "bash":
                    match = re.fullmatch(r"command: (.*)\nstdout: (.*)\nstderr: (.*)\n"
                                         r"returncode: 0", result, re.S)  # fmt: skip
                    assert match and match[1] == args["command"]
                    assert len(match[2]) <= 16_000
                    runs.append((args["command"], True, result))
                elif name == "read":
                    assert args["file_path"].startswith(root + "/")
                    assert result.startswith(f"file_path: {args['file_path']}\ncontent: ")
                    tail = _VIBE_READ_TAIL.search(result)
                    assert tail and int(tail[2]) == args.get("offset", 1)
                    body = result[len(f"file_path: {args['file_path']}\ncontent: ") : tail.start()]
                    lines = body.split("\n")
                    assert len(lines) == int(tail[1])
                    numbers = [int(line[:9]) for line in lines]
                    assert all(re.match(r"[ \d]{9}\u2192", line) for line in lines)
                    assert numbers == list(range(int(tail[2]), int(tail[2]) + len(lines)))
                elif name == "edit":
                    assert result == (
                        f"file: {args['file_path']}\nmessage: The file has been updated "
                        f"successfully.\nold_string: {args['old_string']}\nnew_string: "
                        f"{args['new_string']}"
                    )
                elif name == "write_file":
                    # write_file refuses an existing file: each path is written once.
                    assert args["path"].startswith(root + "/") and args["path"] not in written
                    written.add(args["path"])
                    size = len(args["content"].encode())
                    assert result == (f"path: {args['path']}\nbytes_written: {size}\n"
                                      f"content: {args['content']}")  # fmt: skip
                elif name == "grep":
                    match = re.fullmatch(r"matches: (.*)\nmatch_count: (\d+)\nwas_truncated: "
                                         r"False", result, re.S)  # fmt: skip
                    assert match
                    hits = match[1].split("\n")
                    assert len(hits) == int(match[2])
                    # rg's path:line:text, the paths under the (relative) path searched.
                    assert all(re.match(r"[\w./-]+:\d+:", hit) for hit in hits)
                    assert all(hit.startswith(args["path"]) for hit in hits)
                elif name == "todo":
                    assert args["action"] == "write"
                    assert all(set(i) == {"id", "content", "status", "priority"}
                               for i in args["todos"])  # fmt: skip
                    statuses = [i["status"] for i in args["todos"]]
                    assert set(statuses) <= {"pending", "in_progress", "completed"}
                    assert statuses.count("in_progress") <= 1
                    assert result == _vibe_todos(args["todos"])
                    lists.append(args["todos"])
                elif name == "task":
                    assert args["agent"] == "explore"
                    assert re.fullmatch(r"response: .+\nturns_used: \d+\ncompleted: True",
                                        result, re.S)  # fmt: skip
                elif name == "web_fetch":
                    assert result.startswith(f"url: {args['url']}\ncontent: # ")
                    assert result.endswith("\ncontent_type: text/html; charset=utf-8\n"
                                           "was_truncated: False")  # fmt: skip
                else:
                    [question] = args["questions"]
                    assert {"question", "options"} <= set(question)
                    assert result.startswith(f"cancelled: False\nanswers: [{{'question': "
                                             f"{question['question']!r}, 'answer': ")  # fmt: skip
        assert used == set(_VIBESTORY_ARGS)
        # swift test fails (the sweep reads the wall clock), passes, fails again (paused
        # members); the delayed job's file goes with rm (Vibe has no delete tool).
        tests = [(ok, out) for command, ok, out in runs
                 if command == f"swift test --package-path {root}"]  # fmt: skip
        summary = re.compile(r"Test Suite 'All tests' (passed|failed) at .+\n\t Executed (\d+) "
                             r"tests, with (\d+) failures?")  # fmt: skip
        summaries = [summary.findall(out) for _, out in tests]
        assert [s[0][0] for s in summaries] == ["failed", "passed", "failed"]
        assert [ok for ok, _ in tests] == [False, True, False]
        assert int(summaries[0][0][2]) > 1 and summaries[2][0][2] == "1"
        assert int(summaries[2][0][1]) == int(summaries[1][0][1]) + 2
        assert any(command == f"rm {root}/Sources/App/Jobs/ReservationExpiryJob.swift"
                   for command, ok, _ in runs if ok)  # fmt: skip
        builds = [ok for command, ok, _ in runs if command.startswith("swift build")]
        assert builds == [False, True]
        # The list moves: the depot dashboard is left out (Vibe's prompt says to remove an
        # irrelevant task, not cancel it), the backfill is added.
        first = {i["content"] for i in lists[0]}
        last = {i["content"]: i["status"] for i in lists[-1]}
        [dropped] = first - set(last)
        assert dropped.startswith("Depot dashboard")
        [added] = set(last) - first
        assert added.startswith("Backfill") and last[added] == "pending"
        # The values the user sets never stand inside one another.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5
        for value in values:
            assert [v for v in values if value.casefold() in v.casefold()] == [value], value
        # The last message names no other fact.
        assert messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls")
        final = messages[-1]["content"].casefold()
        for fact in session.facts:
            if fact.category == "last_message":
                assert all(p.casefold() in final for p in fact.probe)
            else:
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: OpenManus's built-in tools and the argument keys each takes (app/tool `parameters`): (keys
#: the story always passes, keys it may pass).
_MANUSSTORY_ARGS = {
    "bash": ({"command"}, set()),
    "str_replace_editor": ({"command", "path"}, {"file_text", "old_str", "new_str",
                                                 "insert_line", "view_range"}),
    "python_execute": ({"code"}, set()),
    "planning": ({"command", "plan_id"}, {"title", "steps", "step_index", "step_status",
                                          "step_notes"}),
    "web_search": ({"query"}, {"num_results", "lang", "country", "fetch_content"}),
    "ask_human": ({"inquire"}, set()),
    "terminate": ({"status"}, set()),
}  # fmt: skip
_MANUS_PLAN_STEP = re.compile(r"^(\d+)\. \[([ ✓→!])\] (.+)$", re.M)


def test_manusstory_style_speaks_openmanus_tools_and_moves_its_plan() -> None:
    import ast

    from compaction.eval.families.manusstory import FAMILY, MAX_OBSERVE, NEXT_STEP_PROMPT

    for session in sessions(FAMILY):
        messages = OPENAI.encode(session.conversation)["messages"]
        system = messages[0]["content"]
        assert system.startswith("You are OpenManus, an all-capable AI assistant")
        # The two literals of Manus's prompt meet without a space.
        assert "you can handle it all.The initial directory is: /home/" in system
        root = re.search(r"working dir for this: (\S+) |repo is (\S+) ", messages[1]["content"])
        root = next(g for g in root.groups() if g)
        requests = []
        results = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
        used: dict[str, set[str]] = {}
        runs, plans, edits, removed, failed = [], [], set(), [], []
        for i, message in enumerate(messages[1:], 1):
            if message["role"] == "user" and message["content"] != NEXT_STEP_PROMPT:
                # A prompt typed at `input()`: one line, the first or after a terminate.
                assert "\n" not in message["content"]
                before = messages[i - 1]
                assert i == 1 or (before["role"] == "tool" and before["name"] == "terminate")
                requests.append(message["content"])
            if message["role"] != "assistant":
                continue
            # Every step: the next-step prompt, then the model's words and its calls.
            assert messages[i - 1] == {"role": "user", "content": NEXT_STEP_PROMPT}
            assert message["content"].strip() and message["tool_calls"]
            for call in message["tool_calls"]:
                assert re.fullmatch(r"call_[A-Za-z0-9]{24}", call["id"])
                name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
                must, may = _MANUSSTORY_ARGS[name]
                assert must <= set(args) <= must | may, (name, sorted(args))
                used.setdefault(name, set()).add(args.get("command", ""))
                tool = results[call["id"]]
                assert tool["name"] == name and len(tool["content"]) <= MAX_OBSERVE
                head = f"Observed output of cmd `{name}` executed:\n"
                if tool["content"] == f"Cmd `{name}` completed with no output":
                    assert name == "bash"
                    continue
                assert tool["content"].startswith(head), tool["content"][:80]
                out = tool["content"].removeprefix(head)
                path = args.get("path", "")
                if name == "str_replace_editor":
                    assert path.startswith(root)
                    command = args["command"]
                    if command == "view" and out.startswith("Here's the files"):
                        listing = f"Here's the files and directories up to 2 levels deep in {path}"
                        assert out.startswith(listing + ", excluding hidden items:\n")
                    elif command == "view":
                        first = args.get("view_range", [1])[0]
                        assert out.startswith(f"Here's the result of running `cat -n` on {path}:\n")
                        rows = out.split(":\n", 1)[1].rstrip("\n").split("\n")
                        assert rows[0].startswith(f"{first:6}\t")
                        assert all(re.match(r"^ *\d+\t", r) for r in rows)
                    elif command == "create":
                        assert out == f"File created successfully at: {path}"
                    elif command in ("str_replace", "insert"):
                        if out.startswith("Error: "):
                            assert out.startswith("Error: No replacement was performed, old_str `")
                            failed.append(name)
                            continue
                        assert out.startswith(f"The file {path} has been edited. Here's the result "
                                              "of running `cat -n` on a snippet of ")  # fmt: skip
                        assert out.endswith("Edit the file again if necessary.")
                        edits.add(path)
                    else:
                        assert command == "undo_edit"
                        assert out.startswith(f"Last edit to {path} undone successfully. ")
                elif name == "python_execute":
                    # The dict PythonExecute returns, as str() prints it.
                    result = ast.literal_eval(out)
                    assert set(result) == {"observation", "success"}
                    if not result["success"]:
                        failed.append(name)
                    if "os.remove(" in args["code"]:
                        removed.append(re.search(r"path = '([^']+)'", args["code"])[1])
                elif name == "bash":
                    runs.append((args["command"], out))
                elif name == "planning":
                    assert args["plan_id"] == "seat_holds"
                    heads = {"create": "Plan created successfully with ID: seat_holds\n\n",
                             "update": "Plan updated successfully: seat_holds\n\n",
                             "mark_step": f"Step {args.get('step_index')} updated in plan "
                                          "'seat_holds'.\n\n", "get": ""}  # fmt: skip
                    assert out.startswith(heads[args["command"]] + "Plan: ")
                    assert "\nProgress: " in out and "\nStatus: " in out
                    plans.append((args, _MANUS_PLAN_STEP.findall(out)))
                elif name == "web_search":
                    assert out.startswith(f"Search results for '{args['query']}':\n\n1. ")
                    assert out.endswith("\nMetadata:\n- Total results: 5\n- Language: en\n"
                                        "- Country: us")  # fmt: skip
                elif name == "ask_human":
                    assert "\n" not in out
                else:
                    assert args == {"status": "success"}
                    assert out == "The interaction has been completed with status: success"
        assert set(used) == set(_MANUSSTORY_ARGS)
        # One old_str that did not match; one Python run from the wrong directory.
        assert sorted(failed) == ["python_execute", "str_replace_editor"]
        assert used["str_replace_editor"] == {
            "view",
            "create",
            "str_replace",
            "insert",
            "undo_edit",
        }
        assert {"create", "mark_step", "update", "get"} <= used["planning"]
        # Four prompts, each run ended by terminate; the session ends on the last one's result.
        assert len(requests) == 4
        assert messages[-1]["role"] == "tool" and messages[-1]["name"] == "terminate"
        # phpunit errors (no migration), passes, fails again; stderr alone comes back as Error.
        tests = [out for command, out in runs if command == "vendor/bin/phpunit"]
        ends = [re.search(r"(ERRORS!|FAILURES!|OK) ?\n?\(?Tests: (\d+)|OK \((\d+) tests", t)
                for t in tests]  # fmt: skip
        assert [e[1] or "OK" for e in ends] == ["ERRORS!", "OK", "FAILURES!"]
        counts = [int(e[2] or e[3]) for e in ends]
        assert counts[0] == counts[1] > counts[2]  # the cron's tests went, one was added
        assert 'relation "seat_hold" does not exist' in tests[0]
        assert tests[2].endswith(", Failures: 1.")
        assert any(out.startswith("Error: Switched to a new branch") for _, out in runs)
        # One file goes with Python's os.remove, one with git rm.
        assert removed == [f"{root}/src/Service/SeatLocker.php"]
        assert any(c.startswith("git rm -q src/Command/ReleaseStaleCartsCommand.php")
                   for c, _ in runs)  # fmt: skip
        assert f"{root}/config/services.yaml" in edits
        # The plan moves: the back-office step is left out (no cancelled state), one added and
        # left not started, four completed.
        first = [step for _, _, step in plans[0][1]]
        last = {step: mark for _, mark, step in plans[-1][1]}
        [dropped] = set(first) - set(last)
        assert dropped == "List active holds in the back office"
        [added] = set(last) - set(first)
        assert added == "Release holds when a sailing is cancelled" and last[added] == " "
        assert list(last.values()).count("✓") == 4
        # The values never stand inside each other, and the last words name no fact.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        final = messages[-2]
        assert final["role"] == "assistant"
        assert [c["function"]["name"] for c in final["tool_calls"]] == ["terminate"]
        for fact in session.facts:
            if fact.category != "last_message":
                words = final["content"].casefold()
                assert not any(f.casefold() in words for f in (*fact.probe, *fact.stale))


#: pi's built-in coding tools (badlogic/pi-mono packages/coding-agent/src/core/tools, read at
#: 83378aa): required and optional argument keys.
_PISTORY_ARGS = {
    "read": ({"path"}, {"offset", "limit"}),
    "bash": ({"command"}, {"timeout"}),
    "edit": ({"path", "oldText", "newText"}, set()),
    "write": ({"path", "content"}, set()),
}
_PI_EDIT_MISS = (
    "Could not find the exact text in {}. The old text must match exactly including all "
    "whitespace and newlines."
)


def test_pistory_style_speaks_pis_tools_and_keeps_its_todos_in_prose() -> None:
    from compaction.eval.families.pistory import FAMILY

    for session in sessions(FAMILY):
        payload = OPENAI.encode(session.conversation)
        wire = payload["messages"]
        system = wire[0]["content"]
        assert system.startswith(
            "You are an expert coding assistant operating inside pi, a coding agent harness."
        )
        assert (
            "Available tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, "
            "grep, find, etc.)\n- edit: Make surgical edits to files (find exact text and "
            "replace)\n- write: Create or overwrite files\n\n"
        ) in system
        assert "- Use bash for file operations like ls, rg, find\n" in system
        root = re.search(r"\nCurrent working directory: (/home/\w+/code/\w+)\Z", system)[1]
        assert f"# Project Context\n\nProject-specific instructions and guidelines:\n\n" \
               f"## {root}/AGENTS.md\n\n" in system  # fmt: skip
        # A user turn goes out as a list of one text part; the assistant's text as a string,
        # absent (null) on a turn that only calls tools.
        for message in wire[1:]:
            if message["role"] == "user":
                assert [p["type"] for p in message["content"]] == ["text"]
            elif message["role"] == "assistant":
                assert message["content"] is None or isinstance(message["content"], str)
                assert message["content"] or message.get("tool_calls")
        results = {m["tool_call_id"]: m["content"] for m in wire if m["role"] == "tool"}
        assert all(isinstance(r, str) and r for r in results.values())
        used, ids, runs, deleted, notices = set(), [], [], [], 0
        for message in wire:
            for call in message.get("tool_calls") or []:
                name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
                # Claude's call ids, as pi hands them back.
                assert re.fullmatch(r"toolu_01[0-9A-Za-z]{22}", call["id"])
                ids.append(call["id"])
                must, may = _PISTORY_ARGS[name]
                assert must <= set(args) <= must | may, (name, sorted(args))
                used.add(name)
                result = results[call["id"]]
                if "path" in args:
                    assert not args["path"].startswith("/")  # relative to the cwd
                if name == "edit":
                    assert result in (f"Successfully replaced text in {args['path']}.",
                                      _PI_EDIT_MISS.format(args["path"]))  # fmt: skip
                elif name == "write":
                    assert result == (
                        f"Successfully wrote {len(args['content'])} bytes to {args['path']}"
                    )
                elif name == "read":
                    # The text as it is: no line numbers, a notice when a limit stops short.
                    assert not re.match(r"^ *\d+[\t|→]", result)
                    more = re.search(r"\n\n\[(\d+) more lines in file\. Use offset=(\d+) "
                                     r"to continue\.\]\Z", result)  # fmt: skip
                    if more:
                        assert int(more[2]) == args["offset"] + args["limit"]
                        notices += 1
                elif name == "bash":
                    code = re.search(r"\n\nCommand exited with code (\d+)\Z", result)
                    runs.append((args["command"], result, code and int(code[1])))
                    if re.match(r"(git )?rm ", args["command"]):
                        deleted.append(args["command"])
        assert used == set(_PISTORY_ARGS)
        assert len(ids) == len(set(ids)) and notices
        assert any(r == _PI_EDIT_MISS.format("src/lib/server/loans.ts") for r in results.values())
        assert any(out == "(no output)" for _, out, _ in runs)
        # pnpm test fails (the pool has no new tables), passes, fails again (the timezone).
        tests = [(out, code) for command, out, code in runs if command == "pnpm test"]
        summaries = [re.search(r"\n      Tests  (?:(\d+) failed \| )?(\d+) passed \((\d+)\)\n",
                               out) for out, _ in tests]  # fmt: skip
        assert [bool(s[1]) for s in summaries] == [True, False, True]
        assert [code for _, code in tests] == [1, None, 1]
        assert "no such table: waitlist_entries" in tests[0][0] and summaries[2][1] == "1"
        # Files go with rm and git rm: pi has no delete tool.
        assert any(c.startswith("rm src/lib/server/hold-queue.ts") for c in deleted)
        assert any("src/routes/api/cron/overdue/+server.ts" in c for c in deleted)
        # A line the user ran with `!` reaches the model as a user turn.
        users = [m["content"][0]["text"] for m in wire if m["role"] == "user"]
        assert any(u.startswith("Ran `git status --short`\n```\n") and u.endswith("\n```")
                   for u in users)  # fmt: skip
        # No to-do tool: the list lives in what is said. Twilio is asked for, then dropped by
        # the user; /admin/holds is added late; docs/ops.md is asked for and still open.
        text = [
            m["content"] if m["role"] != "user" else m["content"][0]["text"]
            for m in wire[1:]
            if m["role"] in ("user", "assistant") and m["content"]
        ]
        said = [t for t in text if t]
        firsts = {k: next(i for i, t in enumerate(said) if k in t)
                  for k in ("Twilio", "/admin/holds", "docs/ops.md")}  # fmt: skip
        assert firsts["docs/ops.md"] == firsts["Twilio"] == 0
        assert firsts["/admin/holds"] > len(said) * 3 // 4
        todos = {f.probe[0]: f.required for f in session.facts if f.category == "todo"}
        assert todos["Twilio"] is False and todos["/admin/holds"] and todos["docs/ops.md"]
        # The hold changes twice, the reminder once; the values never stand inside each other.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        # The last words name no other fact.
        final = wire[-1]
        assert final["role"] == "assistant" and not final.get("tool_calls")
        for fact in session.facts:
            if fact.category != "last_message":
                words = final["content"].casefold()
                assert not any(f.casefold() in words for f in (*fact.probe, *fact.stale))
    # Measured as Anthropic Messages too: every call a tool_use block, pi's own names.
    for session, anthropic in _as_anthropic(FAMILY):
        blocks = [b for m in anthropic["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        uses = [b for b in blocks if b["type"] == "tool_use"]
        assert {b["name"] for b in uses} == set(_PISTORY_ARGS)
        assert len(uses) == sum(len(m.tool_calls) for m in session.conversation.messages)
        assert ANTHROPIC.validate(ANTHROPIC.decode(anthropic)) == []


#: Codebuff's tools as its base agent calls them (CodebuffAI/codebuff at da0d571,
#: common/src/tools/params/tool): required and optional parameters this family uses.
_CODEBUFFSTORY_ARGS = {
    "read_files": ({"paths"}, set()),
    "write_file": ({"path", "instructions", "content"}, set()),
    "str_replace": ({"path", "replacements"}, set()),
    "run_terminal_command": ({"command"}, {"process_type", "cwd", "timeout_seconds"}),
    "code_search": ({"pattern"}, {"flags", "cwd"}),
    "spawn_agents": ({"agents"}, set()),
    "think_deeply": ({"thought"}, set()),
    "add_subgoal": ({"id", "objective", "status"}, {"plan", "log"}),
    "update_subgoal": ({"id"}, {"status", "plan", "log"}),
    "end_turn": (set(), set()),
}
#: The tools whose call ends the agent step (`endsAgentStep`), and those answering nothing.
_CODEBUFF_ENDS = {"read_files", "run_terminal_command", "code_search", "spawn_agents", "end_turn"}
_CODEBUFF_SILENT = {"think_deeply", "end_turn"}
_CODEBUFF_CALL = re.compile(r"<codebuff_tool_call>\n(.*?)\n</codebuff_tool_call>", re.S)
_CODEBUFF_RESULT = re.compile(r"\A<tool_result>\n(.*)\n</tool_result>\Z", re.S)


def test_codebuffstory_style_speaks_codebuffs_tool_protocol_and_moves_its_subgoals() -> None:
    from compaction.eval.families.codebuffstory import FAMILY, FILE_UPDATES

    for session in sessions(FAMILY):
        payload = OPENAI.encode(session.conversation)
        messages = payload["messages"]
        system = messages[0]["content"]
        assert system.startswith("# Persona: Buffy\n\n**Your core identity is Buffy.**")
        root = re.search(r"Project root: (/home/\w+/code/[\w-]+)", system)[1]
        # No provider tool calls: the calls are text in the reply, the results user messages.
        assert all("tool_calls" not in m and m["role"] != "tool" for m in messages)
        roles = [m["role"] for m in messages[1:]]
        assert roles == ["user", "assistant"] * (len(roles) // 2)
        used, subgoals, tests, commands, first_read = set(), {}, [], [], True
        for k in range(1, len(messages), 2):
            reply = messages[k + 1]["content"]
            assert isinstance(reply, str)
            blocks = _CODEBUFF_CALL.findall(reply)
            calls = [json.loads(b) for b in blocks]
            # JSON.stringify(…, null, 2): the name first, the end-of-step flag last.
            assert all(b == json.dumps(c, indent=2, ensure_ascii=False)
                       for b, c in zip(blocks, calls, strict=True))  # fmt: skip
            assert calls and all(next(iter(c)) == "cb_tool_name" for c in calls)
            names = [c["cb_tool_name"] for c in calls]
            # Only the last call may end the step, and every step ends with one.
            assert names[-1] in _CODEBUFF_ENDS and not set(names[:-1]) & _CODEBUFF_ENDS
            for call in calls:
                name = call.pop("cb_tool_name")
                assert call.pop("cb_easp", False) is (name in _CODEBUFF_ENDS)
                must, may = _CODEBUFFSTORY_ARGS[name]
                assert must <= set(call) <= must | may, (name, sorted(call))
                used.add(name)
            # The user's words, or the results of the step before, in call order.
            if k + 2 >= len(messages):
                assert names == ["end_turn"]
                continue
            content = messages[k + 2]["content"]
            parts = [content] if isinstance(content, str) else [p["text"] for p in content]
            if parts[0].startswith("<user_message>"):
                assert names[-1] == "end_turn" and len(parts) == 1
                assert parts[0].endswith("</user_message>")
                continue
            results = [json.loads(_CODEBUFF_RESULT.match(p)[1]) for p in parts]
            answered = [c for c, n in zip(calls, names, strict=True) if n not in _CODEBUFF_SILENT]
            expected = [n for n in names if n not in _CODEBUFF_SILENT]
            edited = [c["path"] for c, n in zip(calls, names, strict=True)
                      if n in ("str_replace", "write_file")]  # fmt: skip
            if edited:
                expected.append("file_updates")
            assert [r["toolName"] for r in results] == expected
            for r in results:
                assert list(r) == ["toolName", "toolCallId", "output"]
                assert re.fullmatch(r"[\w-]{11}", r["toolCallId"])
            for call, name, result in zip(answered, expected, results, strict=False):
                out = result["output"]
                if name == "read_files":
                    paths = [f["path"] for f in out]
                    assert paths == (["knowledge.md"] if first_read else []) + call["paths"]
                    assert all(set(f) == {"path", "content", "referencedBy"} for f in out)
                    first_read = False
                elif name in ("str_replace", "write_file"):
                    assert list(out) == ["file", "message", "unifiedDiff"]
                    assert out["file"] == call["path"]
                    if out["message"] == "Created new file":
                        assert name == "write_file" and out["unifiedDiff"] == call["content"]
                    else:
                        assert out["message"] == "Updated file"
                        assert out["unifiedDiff"].startswith("@@ -")
                    if name == "str_replace":
                        assert all(set(r) == {"old", "new"} for r in call["replacements"])
                elif name == "run_terminal_command":
                    assert list(out) == ["command", "startingCwd", "stdout", "exitCode"]
                    assert out["command"] == call["command"] and out["startingCwd"] == root
                    commands.append(call["command"])
                    if call["command"] == "pnpm test":
                        tests.append((out["exitCode"], out["stdout"]))
                elif name == "code_search":
                    assert out["message"] == "Code search completed"
                    assert set(out) == {"stdout", "exitCode", "message"}
                elif name == "add_subgoal":
                    assert out == {"message": "Successfully added subgoal"}
                    subgoals[call["id"]] = [call["status"]]
                elif name == "update_subgoal":
                    assert out == {"message": "Successfully updated subgoal."}
                    if "status" in call:
                        subgoals[call["id"]].append(call["status"])
                elif name == "spawn_agents":
                    assert len(out) == len(call["agents"])
                    for agent, report in zip(call["agents"], out, strict=True):
                        assert set(agent) <= {"agent_type", "prompt", "params"}
                        assert report["agentType"] == agent["agent_type"]
                        assert set(report) == {"agentName", "agentType", "value"}
                        assert report["value"]["type"] == "lastMessage"
            if edited:
                updates = results[-1]["output"]
                assert updates["message"] == FILE_UPDATES
                assert [f["path"] for f in updates["files"]] == list(dict.fromkeys(edited))
        assert used == set(_CODEBUFFSTORY_ARGS)
        # Subgoals: three done, the dashboard one aborted, one in progress, one added last and
        # not started.
        statuses = {"NOT_STARTED", "IN_PROGRESS", "COMPLETE", "ABORTED"}
        assert {s for history in subgoals.values() for s in history} <= statuses
        assert {i: h[-1] for i, h in subgoals.items()} == {
            "1": "COMPLETE", "2": "COMPLETE", "3": "COMPLETE", "4": "ABORTED",
            "5": "IN_PROGRESS", "6": "NOT_STARTED",
        }  # fmt: skip
        assert list(subgoals)[-1] == "6"
        # pnpm test: two failures, green, then one failure (the quiet-hours spec).
        summary = [re.search(r"      Tests  (?:(\d+) failed \| )?(\d+) passed", out)
                   for _, out in tests]  # fmt: skip
        assert [m[1] for m in summary] == ["2", None, "1"]
        assert [code for code, _ in tests] == [1, 0, 1]
        assert int(summary[2][2]) == int(summary[1][2]) + 1
        # Codebuff has no delete tool: the legacy helper goes with rm.
        assert "rm src/lib/waitlist-legacy.ts" in commands
        # The last words name no fact but the pull request.
        final = messages[-1]["content"].casefold()
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))


#: Octofriend's tools as source/tools/tool-defs declares them (synthetic-lab/octofriend at
#: 3b17199): required and optional arguments of the ones this family calls.
_OCTOSTORY_ARGS = {
    "read": ({"filePath"}, set()),
    "partial-read": ({"filePath", "offset", "limit"}, set()),
    "list": (set(), {"dirPath"}),
    "shell": ({"timeout", "cmd"}, set()),
    "edit": ({"filePath", "search", "replace"}, set()),
    "create": ({"filePath", "content"}, set()),
    "rewrite": ({"filePath", "text"}, set()),
    "glob": (set(), {"path", "includeName", "excludeName", "includePath", "excludePath",
                     "caseInsensitive", "maxDepth", "maxResults"}),
    "grep": ({"pattern"}, {"path", "caseInsensitive", "context", "maxResults", "timeout"}),
    "fetch": ({"url"}, {"includeMarkup"}),
    "mcp": ({"server", "tool"}, {"arguments"}),
}  # fmt: skip
_OCTO_SKIPPED = (
    "<tool-runtime-error>Tool was skipped and didn't run. The reason for skipping the tool "
    "was:\nTool call rejected by user.</tool-runtime-error>"
)
_OCTO_FAILED = re.compile(
    r"\AError: <tool-runtime-error>Command exited with code: (\d+)\noutput: (.*)"
    r"</tool-runtime-error>\Z",
    re.S,
)
_OCTO_MISS = re.compile(
    r"\AError from tool call validation: <tool-runtime-error>Could not find search string in "
    r"file (\S+): .*\nThis is likely an error in your formatting\. The search string must "
    r"EXACTLY match, including\nwhitespace and punctuation\.</tool-runtime-error>\Z",
    re.S,
)
_DENO_SUMMARY = re.compile(r"^(ok|FAILED) \| (\d+) passed \| (\d+) failed \(\d+ms\)$", re.M)


def test_octostory_style_speaks_octofriends_tools_and_keeps_its_plan_in_prose() -> None:
    from compaction.eval.families.octostory import FAMILY

    for session in sessions(FAMILY):
        wire = OPENAI.encode(session.conversation)["messages"]
        system = wire[0]["content"]
        assert system.startswith("You are a coding assistant called Octo. The user's name is ")
        cwd = re.search(r"\nYour current working directory is: (/home/\w+/code/[\w-]+)\n", system)
        root = cwd[1]
        # The cwd's entries, one JSON object a line, as the list tool gives them.
        listing = system.split("\nIt contains:\n", 1)[1].split("\nIf you want to list", 1)[0]
        entries = [json.loads(line) for line in listing.split("\n")]
        assert all(set(e) == {"entry", "isDirectory"} for e in entries)
        assert f'<instruction path="{root}/OCTO.md">' in system
        assert "Server: github\n- create_pull_request: " in system
        # The standard compiler: user turns and tool results are lists of text parts; the
        # assistant says what it is about to do before every call.
        for message in wire[1:]:
            if message["role"] in ("user", "tool"):
                assert [p["type"] for p in message["content"]] == ["text"]
            else:
                assert isinstance(message["content"], str) and message["content"].strip()
        results = {m["tool_call_id"]: m["content"][0]["text"] for m in wire if m["role"] == "tool"}
        calls = [(call, json.loads(call["function"]["arguments"]), i)
                 for i, m in enumerate(wire) for call in m.get("tool_calls") or []]  # fmt: skip
        assert len({c["id"] for c, _, _ in calls}) == len(calls)
        assert max(len(m.get("tool_calls") or []) for m in wire) == 2  # parallel reads
        read_paths = [args["filePath"] for c, args, _ in calls if c["function"]["name"] == "read"]
        used, tests, skipped, misses, seen = set(), [], [], [], 0
        for n, (call, args, i) in enumerate(calls):
            name = call["function"]["name"]
            assert re.fullmatch(r"call_[0-9A-Za-z]{24}", call["id"])
            must, may = _OCTOSTORY_ARGS[name]
            assert must <= set(args) <= must | may, (name, sorted(args))
            used.add(name)
            result = results[call["id"]]
            if result == _OCTO_SKIPPED:
                skipped.append((name, args, i))
                continue
            if name in ("edit", "create", "rewrite"):
                miss = _OCTO_MISS.match(result)
                if miss:
                    assert miss[1] == args["filePath"] and name == "edit"
                    misses.append(args["filePath"])
                else:
                    assert result == f"{args['filePath']} was updated successfully."
            elif name == "read":
                later = args["filePath"] in [a["filePath"] for c, a, _ in calls[n + 1:]
                                             if c["function"]["name"] == "read"]  # fmt: skip
                if later:
                    assert result == "File was successfully read."
                    seen += 1
                else:
                    lines = result.split("\n")
                    assert [ln.split(": ", 1)[0] for ln in lines] == [
                        str(k) for k in range(1, len(lines) + 1)
                    ]
            elif name == "partial-read":
                head, *lines = result.split("\n")
                end = args["offset"] + len(lines) - 1
                assert re.fullmatch(rf"Showing lines {args['offset']}-{end} of \d+ from "
                                    rf"{re.escape(args['filePath'])}", head)  # fmt: skip
                assert len(lines) <= args["limit"]
                assert all(ln.startswith(f"{args['offset'] + k}: ") for k, ln in enumerate(lines))
            elif name == "list":
                for line in result.split("\n"):
                    assert set(json.loads(line)) == {"entry", "isDirectory"}
            elif name == "grep":
                for line in filter(None, result.split("\n")):
                    assert re.match(r"[^:\s]+:\d+:", line)
                    assert line.startswith(args.get("path", root))
            elif name == "glob":
                found = result.split("\n")
                assert not any(p.startswith(("/", args.get("path", "/"))) for p in found)
            elif name == "mcp":
                assert all(isinstance(v, str) for v in args["arguments"].values())
                assert json.loads(result)["draft"] is True
            elif name == "shell":
                assert isinstance(args["timeout"], int)
                failed = _OCTO_FAILED.match(result)
                if args["cmd"] == "deno task test":
                    tests.append((failed and int(failed[1]), result))
        assert used == set(_OCTOSTORY_ARGS)
        assert seen >= 2 and len(set(read_paths)) < len(read_paths)
        # The edit that missed its search string was retried after a fresh read.
        assert misses == ["lib/slots.ts"]
        # The user rejected the reminder in the UI, then said so.
        [(name, args, i)] = skipped
        assert name == "create" and args["filePath"] == "lib/reminders.ts"
        assert wire[i + 2]["role"] == "user" and "reminder" in wire[i + 2]["content"][0]["text"]
        # Flagged as Octofriend's Anthropic compiler flags them: failed, refused, skipped.
        flagged = {r.tool_call_id for m in session.conversation.messages
                   for r in m.tool_results if r.is_error}  # fmt: skip
        assert flagged == {k for k, r in results.items()
                           if r.startswith(("Error", "<tool-runtime-error>"))}  # fmt: skip
        # deno task test: a permission error, two failures, green twice, the DST test red.
        assert tests[0][0] == 1 and 'NotCapable: Requires env access to "SHOP_TZ"' in tests[0][1]
        summaries = [_DENO_SUMMARY.findall(out) for _, out in tests[1:]]
        assert [s[0][0] for s in summaries] == ["FAILED", "ok", "ok", "FAILED"]
        assert [s[0][2] for s in summaries] == ["2", "0", "0", "1"]
        assert [code for code, _ in tests[1:]] == [1, None, None, 1]
        [status] = [f for f in session.facts if f.category == "test_status"]
        verdict, passed, failed = summaries[-1][0]
        assert status.probe == (f"{verdict} | {passed} passed | {failed} failed",)
        assert len(status.stale) == 3
        # No delete tool: the old cap goes with rm.
        assert any(args.get("cmd") == "rm lib/legacy_capacity.ts" for _, args, _ in calls)
        # No to-do tool: the plan is said; the reminder is dropped, the pickup sheet added late.
        said = [m["content"] if m["role"] == "assistant" else m["content"][0]["text"]
                for m in wire[1:] if m["role"] in ("user", "assistant")]  # fmt: skip
        plan = next(k for k, t in enumerate(said) if "backfill" in t.casefold())
        assert "reminder" in said[plan] and "slot picker" in said[plan].casefold()
        assert next(k for k, t in enumerate(said) if "pickup sheet" in t) > len(said) * 3 // 4
        todos = {f.probe[0]: f.required for f in session.facts if f.category == "todo"}
        assert todos == {"slot picker": False, "reminder": False, "backfill": True,
                         "pickup sheet": True}  # fmt: skip
        # The slot length changes twice, the cap once; no value stands inside another.
        values = [v for f in session.facts if f.category == "changed_value"
                  for v in (*f.probe, *f.stale)]  # fmt: skip
        assert len(values) == 5 and all([v for v in values if x in v] == [x] for x in values)
        # The plan reversed: the counter, then the versionstamp check.
        [reversed_] = [f for f in session.facts if f.category == "decision" and f.stale]
        text = conversation_text(session.conversation).casefold()
        assert text.index(reversed_.stale[0].casefold()) < text.rindex("versionstamp")
        # The last words name no other fact.
        final = wire[-1]
        assert final["role"] == "assistant" and not final.get("tool_calls")
        for fact in session.facts:
            if fact.category != "last_message":
                words = final["content"].casefold()
                assert not any(f.casefold() in words for f in (*fact.probe, *fact.stale))
    # Octofriend speaks Anthropic Messages natively too: every call a tool_use block.
    for session, anthropic in _as_anthropic(FAMILY):
        blocks = [b for m in anthropic["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]  # fmt: skip
        uses = [b for b in blocks if b["type"] == "tool_use"]
        assert {b["name"] for b in uses} == set(_OCTOSTORY_ARGS)
        assert len(uses) == sum(len(m.tool_calls) for m in session.conversation.messages)
        errors = [b for b in blocks if b["type"] == "tool_result" and b.get("is_error")]
        assert errors and ANTHROPIC.validate(ANTHROPIC.decode(anthropic)) == []


#: Nanocoder's built-in tools (Nano-Collective/nanocoder source/tools/, read at 0649028):
#: required and optional argument keys of each tool this family calls.
_NANOSTORY_ARGS = {
    "read_file": ({"path"}, {"start_line", "end_line", "metadata_only"}),
    "write_file": ({"path", "content"}, set()),
    "string_replace": ({"path", "old_str", "new_str"}, set()),
    "execute_bash": ({"command"}, set()),
    "file_op": ({"operation", "path"}, {"destination"}),
    "search_file_contents": ({"query"}, {"maxResults", "caseSensitive", "include", "path",
                                         "wholeWord", "contextLines"}),
    "list_directory": (set(), {"path", "recursive", "maxDepth", "tree", "showHiddenFiles",
                               "showSizes"}),
    "write_tasks": ({"tasks"}, set()),
    "agent": ({"subagent_type", "description"}, {"prompt", "context"}),
    "fetch_url": ({"url"}, set()),
    "ask_user": ({"question", "options"}, {"allowFreeform", "questionType"}),
    "git_status": (set(), set()),
    "git_log": (set(), {"count", "file", "author", "since", "grep", "branch"}),
}  # fmt: skip
_NANO_REPLACED = re.compile(
    r"Successfully replaced content at (line \d+|lines \d+-\d+) \(now (line \d+|lines \d+-\d+)\)"
    r"\.\n\nUpdated file context \(lines (\d+)-(\d+) of (\d+)\):\n"
)
_NANO_TASKS = re.compile(r"Task list \((\d+) pending, (\d+) in progress, (\d+) completed\):\n")


def test_nanostory_style_speaks_nanocoders_tools_and_moves_its_task_list() -> None:
    from compaction.eval.families.nanostory import FAMILY

    for session in sessions(FAMILY):
        payload = OPENAI.encode(session.conversation)
        messages = payload["messages"]
        assert messages[0]["content"].startswith(
            "You are Nanocoder, a terminal-based AI coding agent."
        )
        assert "\n\nAdditional Context...\n\n" in messages[0]["content"]
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
        used, tests, lists, cancelled = set(), [], [], []
        for i, message in enumerate(messages):
            calls = message.get("tool_calls") or []
            if calls:
                # A turn that only calls tools carries no text (null, not an empty string).
                assert message["content"] is None or message["content"].strip()
            for call in calls:
                name, raw = call["function"]["name"], call["function"]["arguments"]
                # Ollama's call ids; the AI SDK's compact JSON arguments.
                assert re.fullmatch(r"call_[a-z0-9]{8}", call["id"])
                args = json.loads(raw)
                assert raw == json.dumps(args, ensure_ascii=False, separators=(",", ":"))
                must, may = _NANOSTORY_ARGS[name]
                assert must <= set(args) <= must | may, (name, sorted(args))
                used.add(name)
                result = results[call["id"]]
                assert len(result) <= 20_000
                if result == "Tool execution was cancelled by the user.":
                    cancelled.append((name, messages[i + len(calls) + 1]["role"]))
                    continue
                if name == "read_file" and args.get("metadata_only"):
                    assert result.startswith(f'File Information for "{args["path"]}"\n{"=" * 50}')
                    assert result.endswith("\n\n[Use read_file to view file contents]\n")
                elif name == "read_file":
                    # Content only, no line numbers.
                    assert not re.match(r" *\d+[:\t]", result)
                elif name == "write_file":
                    content = args["content"]
                    assert result == (
                        f"File written successfully ({len(content.split(chr(10)))} lines, "
                        f"{len(content)} characters, ~{-(-len(content) // 4)} tokens)."
                    )
                elif name == "string_replace":
                    if result.startswith("⚒ Validation failed: "):
                        refusal = f'You must read "{args["path"]}" before editing it.'
                        assert result.startswith(f"⚒ Validation failed: {refusal}")
                        continue
                    match = _NANO_REPLACED.match(result)
                    assert match, result[:200]
                    numbered = re.findall(r"^ *(\d+): ", result, re.M)
                    assert numbered == [str(n) for n in range(int(match[3]), int(match[4]) + 1)]
                elif name == "execute_bash":
                    assert re.match(r"EXIT_CODE: \d+\n", result) and len(result) <= 2_000
                    if "\nSTDERR:\n" in result:
                        assert result.index("\nSTDERR:\n") < result.index("\nSTDOUT:\n")
                    if args["command"] == "deno task test":
                        tests.append(result)
                elif name == "file_op":
                    done = {"delete": "File deleted", "mkdir": "Directory created"}
                    assert result == f"{done[args['operation']]}: {args['path']}"
                elif name == "search_file_contents":
                    assert re.match(r"Found \d+ match(es)?:\n\n", result)
                    if args.get("contextLines"):
                        assert re.search(r"^[\w/.]+:\d+-\n\d+: ", result, re.M)
                    else:
                        assert all(re.match(r"[\w/.]+:\d+:", line)
                                   for line in result.split("\n\n", 1)[1].splitlines())  # fmt: skip
                elif name == "list_directory":
                    assert result.startswith(f'Directory contents for "{args["path"]}":\n\n')
                    assert result.endswith("\n\n[Recursive: showing entries up to depth 3]")
                elif name == "write_tasks":
                    match = _NANO_TASKS.match(result)
                    assert match
                    assert all(set(t) == {"title", "status"} for t in args["tasks"])
                    icons = {"pending": "○", "in_progress": "◐", "completed": "✓"}
                    assert result.splitlines()[1:] == [
                        f"  {icons[t['status']]} {t['title']}" for t in args["tasks"]
                    ]
                    lists.append({t["title"]: t["status"] for t in args["tasks"]})
                elif name == "agent":
                    assert args["subagent_type"] == "explore"
                elif name == "ask_user":
                    assert result in args["options"]
                elif name == "git_status":
                    assert result.startswith("Branch: ")
                elif name == "git_log":
                    assert re.match(r"Showing \d+ commit\(s\) on [\w/-]+:\n\n[0-9a-f]{7} ", result)
                    assert re.search(r"\n  Author: .+ <.+@.+>", result)
        assert used == set(_NANOSTORY_ARGS)
        # The user declined a command against the staging KV and said why, in their own turn.
        assert cancelled == [("execute_bash", "user")]
        # A command the user ran with `!` came back as their own message.
        head = "Bash command output:\n```\n$ git diff --stat\n"
        bang = [m["content"] for m in messages
                if m["role"] == "user" and m["content"].startswith(head)]  # fmt: skip
        assert len(bang) == 1 and bang[0].endswith("\n```")
        # deno test: two failures, green three times, then one failure (the maintenance test).
        summary = [re.search(r"\n(ok|FAILED) \| (\d+) passed \| (\d+) failed \(\d+ms\)\n", r)
                   for r in tests]  # fmt: skip
        assert [(m[1], m[3]) for m in summary] == [
            ("FAILED", "2"), ("ok", "0"), ("ok", "0"), ("ok", "0"), ("FAILED", "1")
        ]  # fmt: skip
        assert [r.startswith("EXIT_CODE: 1\n") for r in tests] == [True, False, False, False, True]
        assert int(summary[-1][2]) == int(summary[-2][2])
        # The task list: one all-pending list first, the driver ping dropped (left out: Nanocoder
        # has no cancelled state), two tasks added late, at most one in progress.
        assert set(lists[0].values()) == {"pending"}
        assert all(list(t.values()).count("in_progress") <= 1 for t in lists)
        dropped = set(lists[0]) - set(lists[-1])
        assert len(dropped) == 1 and "dispatch webhook" in dropped.pop()
        added = [t for t in lists[-1] if t not in lists[0]]
        assert [lists[-1][t] for t in added] == ["in_progress", "pending"]
        # The last words name no fact.
        final = messages[-1]["content"].casefold()
        assert messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls")
        for fact in session.facts:
            if fact.category != "last_message":
                assert not any(f.casefold() in final for f in (*fact.probe, *fact.stale))
