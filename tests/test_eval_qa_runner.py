"""`compaction eval` with a provider: probes asked as questions, the judge, and the report."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compaction.cli import cli
from compaction.eval import runner
from compaction.eval.qa import JUDGE_DIMENSIONS, confidence_interval, question_for
from compaction.eval.report import ci_pct, write_report
from compaction.eval.runner import EvalResult, Progress, generated_sessions, run_eval
from compaction.eval.sessions import EvalSession
from compaction.exceptions import ConfigError
from compaction.providers import CompletionRequest, FunctionProvider
from compaction.providers.testing import Reply

GOOD, BAD = "digest", "truncate"
QUESTION = re.compile(r"\nQuestion: (.*?)\n\n", re.DOTALL)


class Oracle:
    """Answers questions from the ground truth for the `GOOD` pipeline in the first two of
    every three rounds ("unknown" in the third), and nonsense for every other pipeline; the
    judge gives the `GOOD` pipeline 3, 4, 5 in its three rounds and every other pipeline 1.
    The runner's progress callback tells it which pipeline is running."""

    def __init__(self, sessions: list[EvalSession]) -> None:
        self.truth: dict[str, set[str]] = {}
        for session in sessions:
            for fact in session.facts:
                self.truth.setdefault(question_for(fact), set()).update(fact.probe)
        self.pipeline = ""
        self.seen: Counter[tuple[str, str]] = Counter()
        self.provider = FunctionProvider(self.answer, name="oracle")

    def progress(self, event: Progress) -> None:
        self.pipeline = event.strategy

    def answer(self, request: CompletionRequest) -> Reply:
        prompt = request.messages[-1].text
        key = (self.pipeline, prompt)
        round_ = self.seen[key]  # the same prompt comes once per round
        self.seen[key] += 1
        if request.output_schema is not None:  # the judge
            score = 3 + round_ if self.pipeline == GOOD else 1
            return {**dict.fromkeys(JUDGE_DIMENSIONS, score), "rationale": "test"}
        match = QUESTION.search(prompt)
        assert match is not None
        if self.pipeline != GOOD:
            return "It was about bananas."
        if round_ == 2:
            return "unknown"
        return "; ".join(sorted(self.truth[match.group(1)]))


@pytest.fixture(scope="module")
def asked() -> tuple[EvalResult, Oracle]:
    sessions = generated_sessions(2, tokens=4000)
    oracle = Oracle(sessions)
    result = run_eval(
        sessions,
        [BAD, GOOD],
        target_ratio=0.3,
        provider=oracle.provider,
        model="m1",
        judge=True,
        judge_model="judge-1",
        progress=oracle.progress,
    )
    return result, oracle


def test_each_compaction_is_asked_its_probes_three_times(
    asked: tuple[EvalResult, Oracle],
) -> None:
    result, _ = asked
    data = result.to_dict()
    assert data["config"]["replicates"] == 3  # the default with a provider
    assert data["config"]["qa"]["judge_model"] == "judge-1"
    for run in data["runs"]:
        session = next(s for s in generated_sessions(2, tokens=4000) if s.name == run["session"])
        questions = {question_for(f) for f in session.facts}
        qa = run["qa"]
        assert qa["calls"] == 3 * len(questions)
        assert qa["model"] == "m1" and qa["errors"] == []
        expected = [1.0, 1.0, 0.0] if run["strategy"] == GOOD else [0.0, 0.0, 0.0]
        assert qa["per_replicate"] == expected
        assert qa["accuracy"]["mean"] == pytest.approx(sum(expected) / 3)
        assert qa["by_category"]  # per-category intervals are there


def test_pipelines_pool_every_sessions_replicates(asked: tuple[EvalResult, Oracle]) -> None:
    result, _ = asked
    strategies = {s["strategy"]: s for s in result.to_dict()["strategies"]}
    good, bad = strategies[GOOD]["qa"], strategies[BAD]["qa"]
    reference = confidence_interval([1.0, 1.0, 0.0] * 2, lower=0.0, upper=1.0)
    assert good["accuracy"]["n"] == 6 and good["sessions"] == 2
    assert good["accuracy"]["mean"] == pytest.approx(2 / 3)
    assert good["accuracy"]["low"] == pytest.approx(reference.low)
    assert good["accuracy"]["high"] == pytest.approx(reference.high)
    assert 0 < good["accuracy"]["low"] < 2 / 3 < good["accuracy"]["high"] == 1.0  # clipped
    assert bad["accuracy"] == {"mean": 0.0, "low": 0.0, "high": 0.0, "half_width": 0.0, "n": 6}
    assert good["calls"] == sum(r.qa.calls for r in result.summary(GOOD).runs if r.qa)


def test_the_judge_scores_six_dimensions_with_intervals(
    asked: tuple[EvalResult, Oracle],
) -> None:
    result, oracle = asked
    strategies = {s["strategy"]: s for s in result.to_dict()["strategies"]}
    good, bad = strategies[GOOD]["judge"], strategies[BAD]["judge"]
    assert set(good["dimensions"]) == set(JUDGE_DIMENSIONS)
    reference = confidence_interval([3.0, 4.0, 5.0] * 2, lower=0.0, upper=5.0)
    for dimension in JUDGE_DIMENSIONS:
        assert good["dimensions"][dimension]["mean"] == pytest.approx(4.0)
        assert good["dimensions"][dimension]["low"] == pytest.approx(reference.low)
        assert good["dimensions"][dimension]["n"] == 6
        assert bad["dimensions"][dimension]["mean"] == pytest.approx(1.0)
    assert good["overall"]["mean"] == pytest.approx(4.0)
    assert good["calls"] == 6  # 3 per session
    judged = [r for r in oracle.provider.requests if r.output_schema is not None]
    assert len(judged) == 12 and {r.model for r in judged} == {"judge-1"}
    run = next(r for r in result.to_dict()["runs"] if r["strategy"] == GOOD)
    assert run["judge"]["judgements"] == 3 and run["judge"]["model"] == "judge-1"


def test_the_report_shows_questions_answered_and_the_judge(
    asked: tuple[EvalResult, Oracle], tmp_path: Path
) -> None:
    result, _ = asked
    write_report(result, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    good = next(s for s in data["strategies"] if s["strategy"] == GOOD)
    assert good["qa"]["accuracy"]["mean"] == pytest.approx(2 / 3)
    page = (tmp_path / "report.html").read_text()
    assert "Questions answered (95% CI)" in page
    cell = ci_pct(result.summary(GOOD).qa_accuracy)
    assert cell.startswith("66.7% (") and f"<td>{cell}</td>" in page
    assert "<td>0% (0%–0%)</td>" in page  # the nonsense answers
    assert "<h2>Judge: Factory's six dimensions</h2>" in page
    assert "<td>artifact trail</td>" in page and "<td><b>4.0 (" in page
    finding = page.split("<section class='finding'>")[1].split("</section>")[0]
    assert f"answered {cell} of them correctly" in finding and f"from {GOOD}" in finding
    markdown = (tmp_path / "report.md").read_text()
    assert "| questions answered (95% CI) |" in markdown and cell in markdown


def test_without_a_provider_nothing_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_ins: list[FunctionProvider] = []
    original = runner.stand_in_provider

    def recording() -> FunctionProvider:
        stand_ins.append(original())
        return stand_ins[-1]

    monkeypatch.setattr(runner, "stand_in_provider", recording)
    result = run_eval(generated_sessions(1, tokens=4000), ["summarize"], target_ratio=0.3)
    requests = [r for p in stand_ins for r in p.requests]
    assert requests  # the stand-in summarized…
    assert not any("Question:" in (r.messages[-1].text or "") for r in requests)  # …only
    data = result.to_dict()
    assert "qa" not in data["runs"][0] and "qa" not in data["strategies"][0]
    assert "qa" not in data["config"] and data["config"]["replicates"] == 1
    write_report(result, tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "Questions answered" not in page and "Judge:" not in page


def test_a_provider_needs_three_replicates_and_the_judge_a_provider() -> None:
    sessions = generated_sessions(1, tokens=3000)
    provider = FunctionProvider(lambda request: "unknown")
    with pytest.raises(ConfigError, match="at least 3 with a provider"):
        run_eval(sessions, ["truncate"], provider=provider, replicates=2)
    with pytest.raises(ConfigError, match="the judge needs a provider"):
        run_eval(sessions, ["truncate"], judge=True)
    assert provider.requests == []


def cli_run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_cli_rejects_the_judge_without_a_provider(tmp_path: Path) -> None:
    code, _, stderr = cli_run("eval", "--judge", "--out", str(tmp_path))
    assert code == 2 and stderr.strip().count("\n") == 0
    assert stderr.startswith("error: --judge: needs --provider")
    assert not (tmp_path / "results.json").exists()


def test_the_cli_rejects_fewer_than_three_replicates_with_a_provider(tmp_path: Path) -> None:
    code, _, stderr = cli_run(
        "eval", "--provider", "openai", "--model", "m", "--replicates", "2", "--out", str(tmp_path)
    )
    assert code == 2 and stderr.strip().count("\n") == 0
    assert stderr.startswith("error: --replicates: must be at least 3 with --provider")


def test_the_cli_asks_questions_three_times_and_judges_with_the_same_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = FunctionProvider(
        lambda r: (
            dict.fromkeys(JUDGE_DIMENSIONS, 2) | {"rationale": "ok"}
            if r.output_schema is not None
            else "unknown"
        )
    )
    made: list[tuple[Any, ...]] = []

    def make_provider(*args: Any) -> FunctionProvider:
        made.append(args)
        return provider

    monkeypatch.setattr("compaction.cli.eval.make_provider", make_provider)
    out = tmp_path / "r"
    code, _, stderr = cli_run(
        "eval", "--sessions", "1", "--session-tokens", "3000", "--strategies", "truncate",
        "--provider", "openai", "--model", "m", "--judge", "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    assert made == [("openai", "m", None)]
    data = json.loads((out / "results.json").read_text())
    assert data["config"]["replicates"] == 3
    assert data["config"]["qa"]["judge_model"] == "m"
    assert "--replicates 3" in data["command"] and "--judge --judge-model m" in data["command"]
    assert data["strategies"][0]["qa"]["accuracy"]["mean"] == 0.0  # "unknown" is never right
    assert data["strategies"][0]["judge"]["overall"]["mean"] == pytest.approx(2.0)
    judged = [r for r in provider.requests if r.output_schema is not None]
    assert len(judged) == 3 and {r.model for r in judged} == {"m"}
