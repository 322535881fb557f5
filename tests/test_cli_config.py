from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from compaction.cli import cli

FIXTURES = Path(__file__).parent / "fixtures" / "workflows"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agents.yaml"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["config", "show", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def value_line(out: str, key: str, value: str, source: str) -> bool:
    pattern = rf"^\s*(- )?{re.escape(key)}: {re.escape(value)}\s+# {re.escape(source)}$"
    return re.search(pattern, out, re.MULTILINE) is not None


def test_show_prints_every_value_with_its_source() -> None:
    code, out, err = run(str(EXAMPLE))
    assert code == 0, err
    assert err == ""
    assert out.startswith(f"# effective configuration of {EXAMPLE}\n")
    assert value_line(out, "store", ".compaction/sessions.db", "defaults")
    assert value_line(out, "id", "coder", "agent")
    assert value_line(out, "id", "summarizer", "agent")
    assert value_line(out, "model", "gpt-4o", "agent")
    assert value_line(out, "model", "gpt-4o-mini", "defaults")  # the summarizer agent's
    assert value_line(out, "model", "gpt-4o-mini", "summarizer")  # the coder's compact.model
    assert value_line(out, "max_turns", "20", "defaults")
    assert value_line(out, "tools", "[read_file, list_directory, recall]", "agent")
    assert value_line(out, "token_threshold", "60000", "agent")
    assert value_line(out, "window_fraction", "0.8", "defaults")
    assert value_line(out, "first_user_message", "true", "defaults")
    assert value_line(out, "patterns", '["^IMPORTANT:"]', "agent")
    assert value_line(
        out, "strategies", "[{kind: mask}, {kind: summarize}, {kind: truncate}]", "agent"
    )
    assert value_line(
        out, "strategies", "[{kind: mask}, {kind: digest}, {kind: truncate}]", "built-in"
    )
    assert value_line(out, "summary_max_tokens", "2048", "built-in")
    # A long system prompt is clipped in text form, with its length.
    assert re.search(
        r'^    system_prompt: "You are a careful.*…" \(\d+ chars\)\s+# agent$', out, re.MULTILINE
    )


def test_show_one_agent() -> None:
    code, out, _ = run(str(EXAMPLE), "--agent", "summarizer")
    assert code == 0
    assert value_line(out, "id", "summarizer", "agent")
    assert "coder" not in out.replace("coder's", "")


def test_show_json_gives_settings_and_sources() -> None:
    code, out, _ = run(str(EXAMPLE), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["file"] == str(EXAMPLE)
    assert data["store"] == {"value": ".compaction/sessions.db", "source": "defaults"}
    assert [a["id"] for a in data["agents"]] == ["coder", "summarizer"]
    coder = data["agents"][0]
    assert coder["config"]["compact"]["token_threshold"] == 60000
    assert coder["config"]["compact"]["strategies"][1]["kind"] == "summarize"
    assert coder["config"]["system_prompt"].endswith("only mentions.\n"), "not clipped"
    assert coder["sources"]["compact.token_threshold"] == "agent"
    assert coder["sources"]["compact.keep_recent_n"] == "defaults"
    assert coder["sources"]["compact.model"] == "summarizer"
    assert coder["sources"]["base_url"] == "built-in"
    assert set(coder["sources"]) == set(_leaf_paths(coder["config"]))


def _leaf_paths(data: dict[str, object], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            paths.extend(_leaf_paths(value, f"{prefix}{key}."))
        else:
            paths.append(f"{prefix}{key}")
    return paths


def test_show_json_one_agent() -> None:
    code, out, _ = run(str(EXAMPLE), "--json", "--agent", "coder")
    assert code == 0
    assert [a["id"] for a in json.loads(out)["agents"]] == ["coder"]


def test_unknown_agent_exits_2_with_one_line() -> None:
    code, out, err = run(str(EXAMPLE), "--agent", "tester")
    assert code == 2
    assert out == ""
    assert err == f"error: {EXAMPLE}: unknown agent 'tester' (known: coder, summarizer)\n"


def test_bad_file_exits_2_with_one_line() -> None:
    path = FIXTURES / "unknown_compact_key.yaml"
    code, out, err = run(str(path))
    assert code == 2
    assert out == ""
    assert err == (
        f"error: {path}:7: agents[1].compact.keep_recent: unknown key "
        "(did you mean `keep_recent_n`?)\n"
    )


def test_missing_file_exits_2() -> None:
    code, _, err = run("no/such/agents.yaml")
    assert code == 2
    assert err == "error: no/such/agents.yaml: cannot read: No such file or directory\n"


def test_legacy_transforms_warn_on_stderr_and_show_their_source() -> None:
    path = FIXTURES / "legacy_transforms.yaml"
    code, out, err = run(str(path), "--agent", "coder")
    assert code == 0
    assert err.startswith(f"warning: {path}: agents[0] (coder): `transforms` is deprecated")
    assert err.count("\n") == 1
    assert value_line(out, "token_threshold", "80000", "transforms")
    assert value_line(out, "strategies", "[{kind: sequence}]", "transforms")
    assert value_line(out, "summarizer", "context_summarizer", "transforms")
