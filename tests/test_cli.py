from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compaction.cli import cli
from compaction.dialects import OPENAI, get_dialect

from .helpers import coding_session

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swe-agent-trajectories"


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(OPENAI.encode(coding_session(30))))
    return path


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_compact_writes_the_same_dialect_within_target(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    receipt = tmp_path / "receipt.json"
    code, _, err = run(
        "compact",
        str(session_file),
        "--max-tokens",
        "3000",
        "-o",
        str(out),
        "--receipt",
        str(receipt),
    )
    assert code == 0, err
    assert err.startswith("compacted: ")
    payload = json.loads(out.read_text())
    conversation = OPENAI.decode(payload)
    assert OPENAI.validate(conversation) == []
    data = json.loads(receipt.read_text())
    assert data["status"] == "compacted"
    assert data["tokens_after"] <= 3000
    assert data["archive"], "the receipt carries every replaced original"
    assert {r["handle"] for r in data["removed"]} <= set(data["archive"])


def test_compact_reads_stdin_and_writes_stdout(session_file: Path) -> None:
    code, out, err = run("compact", "-", "--target-ratio", "0.3", input=session_file.read_text())
    assert code == 0, err
    assert OPENAI.validate(OPENAI.decode(json.loads(out))) == []


def test_anthropic_in_anthropic_out(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    anthropic = get_dialect("anthropic")
    path.write_text(json.dumps(anthropic.encode(coding_session(20, dialect="anthropic"))))
    code, out, err = run("compact", str(path), "--target-ratio", "0.25")
    assert code == 0, err
    payload = json.loads(out)
    assert "system" in payload and all(m["role"] != "system" for m in payload["messages"])
    assert anthropic.validate(anthropic.decode(payload)) == []


def test_dry_run_lists_changes_and_writes_nothing(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "never.json"
    code, stdout, err = run(
        "compact", str(session_file), "--max-tokens", "3000", "--dry-run", "-o", str(out)
    )
    assert code == 0
    assert stdout == ""
    assert not out.exists()
    assert "would change:" in err
    assert "tokens" in err.split("would change:")[1]
    assert "#2 " in err or "#3 " in err
    changes = err.split("would change:")[1]
    assert "masked" in changes and "digested" in changes


def test_unreachable_target_exits_1_with_reason(session_file: Path) -> None:
    code, _, err = run("compact", str(session_file), "--max-tokens", "5")
    assert code == 1
    assert "cannot be met" in err


def test_strategy_option(session_file: Path) -> None:
    code, _, err = run(
        "compact", str(session_file), "--target-ratio", "0.5", "--strategy", "truncate"
    )
    assert code == 0, err
    assert "truncate" in err and "mask" not in err
    code, _, err = run("compact", str(session_file), "--strategy", "shrink")
    assert code == 2
    assert "unknown strategy 'shrink'" in err


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("{not json", "line 1 col 2"),
        ('{"messages": [{"role": "robot", "content": "x"}]}', "message"),
        (
            '[{"role": "user", "content": "x"},'
            ' {"role": "tool", "tool_call_id": "c9", "content": "y"}]',
            "message 1",
        ),
        (
            '[{"role": "user", "content": "x"}, {"role": "assistant", "content": null,'
            ' "tool_calls": [{"id": "c1", "type": "function",'
            ' "function": {"name": "f", "arguments": "{oops"}}]},'
            ' {"role": "tool", "tool_call_id": "c1", "content": "y"}]',
            "message 1",
        ),
        ('[{"role": "user"}]', "message"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, payload: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(payload)
    code, out, err = run("compact", str(path), "--max-tokens", "100")
    assert code == 2
    assert out == ""
    assert err.startswith("error: ")
    assert expected in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    code, _, err = run("compact", str(tmp_path / "nope.json"))
    assert code == 2
    assert "No such file" in err


def test_count_per_role_and_total(session_file: Path) -> None:
    code, out, _ = run("count", str(session_file), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["overhead"] > 0
    assert data["total"] == sum(data["by_role"].values()) + data["tools"] + data["overhead"]
    assert set(data["by_role"]) == {"system", "user", "assistant", "tool"}
    code, out, _ = run("count", str(session_file))
    assert "total" in out and "tokenizer:" in out


def test_count_marks_estimates(tmp_path: Path) -> None:
    path = tmp_path / "img.json"
    path.write_text(
        json.dumps(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {
                            "type": "image_url",
                            "image_url": {"url": "https://example.invalid/cat.png"},
                        },
                    ],
                }
            ]
        )
    )
    code, out, _ = run("count", str(path))
    assert code == 0
    assert "~" in out


def test_validate_reports_every_violation_with_index(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(
        json.dumps(
            [
                {"role": "user", "content": "x"},
                {"role": "tool", "tool_call_id": "ghost", "content": "y"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "nope"},
                        }
                    ],
                },
            ]
        )
    )
    code, out, err = run("validate", str(path))
    assert code == 1
    lines = out.strip().splitlines()
    assert any(line.startswith("message 1:") for line in lines)
    assert sum(line.startswith("message 2:") for line in lines) == 2
    assert "3 violations" in err


def test_validate_against_the_other_dialect(tmp_path: Path) -> None:
    path = tmp_path / "assistant-first.json"
    path.write_text(
        json.dumps([{"role": "assistant", "content": "hi"}, {"role": "user", "content": "b"}])
    )
    code, _, _ = run("validate", str(path))
    assert code == 0
    code, out, _ = run("validate", str(path), "--dialect", "anthropic")
    assert code == 1
    assert out.startswith("message 0:")


MIN_CHECKED = {"0.5": 30, "0.3": 15}
_BANNER = re.compile(r"\[File: ([^\]\n]+?) \(\d+ lines total\)\]")
_OPEN = re.compile(r"\(Open file: ([^)\n]+)\)")


def edited_files(history: list[dict[str, Any]]) -> set[str]:
    """Files a SWE-agent run created or edited, read from the raw trajectory: `create X`, and
    `edit`/`insert` (which act on the open file, named by the editor's banner or status line)."""
    files: set[str] = set()
    open_file = None
    pending: str | None = None
    for message in history:
        if message["role"] == "assistant":
            names = [c["function"]["name"] for c in message.get("tool_calls") or []]
            action = (message.get("action") or "").strip()
            verb = names[0] if names else (action.split() or [""])[0]
            pending = verb if verb in ("edit", "insert") else None
            if verb == "create":
                if names:
                    args = json.loads(message["tool_calls"][0]["function"]["arguments"])
                    files.add(args["filename"])
                else:
                    files.add(action.split()[1])
            continue
        text = (
            message["content"]
            if isinstance(message["content"], str)
            else json.dumps(message["content"])
        )
        if pending is not None:
            banner = _BANNER.search(text)
            target = banner.group(1) if banner else open_file
            if target:
                files.add(target)
            pending = None
        opened = _OPEN.findall(text)
        if opened and opened[-1] != "n/a":
            open_file = opened[-1]
    return files


@pytest.mark.skipif(not DATA.is_dir(), reason="shared trajectory data not present")
@pytest.mark.parametrize("ratio", sorted(MIN_CHECKED))
def test_every_real_trajectory_compacts_to_valid_openai_naming_edited_files(
    tmp_path: Path, ratio: str
) -> None:
    checked = 0
    for path in sorted(DATA.glob("*.traj")):
        out = tmp_path / f"{path.stem}.json"
        receipt_path = tmp_path / f"{path.stem}.receipt.json"
        code, _, err = run(
            "compact",
            str(path),
            "--target-ratio",
            ratio,
            "-o",
            str(out),
            "--receipt",
            str(receipt_path),
        )
        assert code in (0, 1), (path.name, err)
        text = out.read_text()
        conversation = OPENAI.decode(json.loads(text))
        assert OPENAI.validate(conversation) == [], path.name
        receipt = json.loads(receipt_path.read_text())
        if receipt["target_tokens"] - receipt["protected_tokens"] < 300:
            # The system prompt and the task fill the target: no room to name anything.
            continue
        for name in edited_files(json.loads(path.read_text())["history"]):
            assert name in text, f"{path.name}: edited file {name} lost at ratio {ratio}"
            checked += 1
    assert checked >= MIN_CHECKED[ratio]


def test_llm_strategy_needs_a_provider(session_file: Path) -> None:
    code, _, err = run("compact", str(session_file), "--strategy", "summarize")
    assert code == 2
    assert "needs a summarizer: give --provider" in err


def test_provider_without_a_key_is_a_usage_error(
    session_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, _, err = run(
        "compact",
        str(session_file),
        "--strategy",
        "summarize",
        "--provider",
        "openai",
        "--model",
        "gpt-4o-mini",
    )
    assert code == 2
    assert "OPENAI_API_KEY" in err
    code, _, err = run(
        "compact", str(session_file), "--strategy", "sequence", "--provider", "openai"
    )
    assert code == 2
    assert "needs --model" in err
