"""`compaction eval`: the table, the report files, the reproduce command, the errors."""

from __future__ import annotations

import json
import shlex
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compaction.cli import cli
from compaction.eval.report import write_report
from compaction.eval.runner import generated_sessions, run_eval

SMALL = [
    "--sessions",
    "2",
    "--session-tokens",
    "4000",
    "--strategies",
    "truncate,default,summarize",
    "--target-ratio",
    "0.3",
]
PNG = b"\x89PNG\r\n\x1a\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def numbers(value: Any) -> Any:
    """Everything but timings, which vary from run to run."""
    if isinstance(value, dict):
        return {k: numbers(v) for k, v in value.items() if not k.endswith("_ms")}
    if isinstance(value, list):
        return [numbers(v) for v in value]
    return value


def bar_labels(stderr: str) -> list[str]:
    names = {"truncate", "mask", "digest", "default", "summarize"}
    return [line.strip() for line in stderr.splitlines() if line.strip() in names]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    out = tmp_path_factory.mktemp("eval") / "report"
    code, stdout, stderr = run("eval", *SMALL, "--out", str(out))
    assert code == 0, stderr
    return out, stdout, stderr


def test_eval_prints_a_row_per_pipeline(report: tuple[Path, str, str]) -> None:
    out, stdout, stderr = report
    lines = stdout.splitlines()
    assert lines[0].split()[:3] == ["pipeline", "kept", "critical"]
    assert [line.split()[0] for line in lines[1:4]] == ["truncate", "default", "summarize"]
    assert f"report: {out / 'report.html'}" in stdout
    assert "stand-in" in stderr
    assert bar_labels(stderr) == []  # a short run needs no progress bars


def test_eval_writes_every_number(report: tuple[Path, str, str]) -> None:
    out, _, _ = report
    data = json.loads((out / "results.json").read_text())
    assert [s["strategy"] for s in data["strategies"]] == ["truncate", "default", "summarize"]
    assert len(data["runs"]) == 6
    assert [s["name"] for s in data["sessions"]] == ["seed 100", "seed 101"]
    default = data["strategies"][1]
    assert default["kinds"] == ["mask", "digest", "truncate"]
    assert default["survival"]["total"] == sum(
        r["survival"]["overall"]["total"] for r in data["runs"] if r["strategy"] == "default"
    )
    run0 = data["runs"][0]
    for key in ("survival", "validity", "replay", "successive", "summarizer", "deterministic"):
        assert key in run0
    assert len(run0["replay"]["input_tokens"]) == run0["replay"]["calls"]
    assert data["config"]["summarizer"]["kind"] == "stand-in"
    assert data["config"]["target_ratio"] == 0.3


def test_eval_draws_the_charts_and_the_page_embeds_them(report: tuple[Path, str, str]) -> None:
    out, _, _ = report
    page = (out / "report.html").read_text()
    for name in ("survival_by_category.png", "replay_tokens.png", "survival_vs_compression.png"):
        assert (out / name).read_bytes()[:8] == PNG
        assert f"src='{name}'" in page
    assert "http://" not in page and "https://" not in page  # renders offline
    assert "What was lost" in page and "By category" in page
    assert "stand-in summarizer" in page
    markdown = (out / "report.md").read_text()
    assert "![Facts kept by category](survival_by_category.png)" in markdown


def test_the_reproduce_command_reruns_to_the_same_numbers(report: tuple[Path, str, str]) -> None:
    out, _, _ = report
    command = (out / "REPRODUCE.txt").read_text().strip()
    page = (out / "report.html").read_text()
    assert command.replace("'", "&#x27;") in page
    args = shlex.split(command)
    assert args[:2] == ["compaction", "eval"]
    first = json.loads((out / "results.json").read_text())
    code, _, stderr = run(*args[1:])
    assert code == 0, stderr
    again = json.loads((out / "results.json").read_text())
    assert numbers(again) == numbers(first)
    assert again["command"] == command


def test_a_long_run_shows_progress_bars(tmp_path: Path) -> None:
    code, stdout, stderr = run(
        "eval",
        "--sessions",
        "4",
        "--session-tokens",
        "3000",
        "--strategies",
        "truncate,mask,digest",
        "--target-ratio",
        "0.4",
        "--successive",
        "2",
        "--out",
        str(tmp_path),
    )
    assert code == 0, stderr
    # Not a terminal: click prints each bar's label once, on stderr.
    assert bar_labels(stderr) == ["truncate", "mask", "digest"]
    assert len(stdout.splitlines()) == 5


def test_an_unknown_strategy_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, _, stderr = run("eval", "--strategies", "mask,shrink", "--out", str(tmp_path))
    assert code == 2
    assert stderr.strip().count("\n") == 0
    assert "unknown strategy 'shrink'" in stderr
    assert not (tmp_path / "results.json").exists()


def test_user_datasets_come_from_the_datasets_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []

    def load_dataset(spec: str) -> list[Any]:
        seen.append(spec)
        return generated_sessions(2, seed=7, tokens=3000)

    fake = types.ModuleType("compaction.eval.datasets")
    fake.load_dataset = load_dataset  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "compaction.eval.datasets", fake)
    out = tmp_path / "r"
    code, _, stderr = run(
        "eval", "--dataset", "my/sessions", "--sessions", "1", "--strategies", "digest",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    assert seen == ["my/sessions"]
    data = json.loads((out / "results.json").read_text())
    assert [s["name"] for s in data["sessions"]] == ["seed 7"]
    assert "--dataset my/sessions --sessions 1 --strategies digest" in data["command"]


def test_a_missing_datasets_module_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "compaction.eval.datasets", None)
    code, _, stderr = run("eval", "--dataset", "sessions.jsonl", "--out", str(tmp_path))
    assert code == 2
    assert stderr.startswith("error: sessions.jsonl: this installation reads only")


def test_without_matplotlib_the_report_says_so_and_has_no_charts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = run_eval(generated_sessions(1, tokens=3000), ["truncate"], target_ratio=0.3)
    written = write_report(result, tmp_path)
    assert not list(tmp_path.glob("*.png"))
    assert any("matplotlib is not installed" in n for n in written.notes)
    page = (tmp_path / "report.html").read_text()
    assert "<img" not in page and "llm-compaction[eval]" in page
    assert (tmp_path / "results.json").exists()
