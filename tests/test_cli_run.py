"""`compaction run` through click's runner, the model being the scripted provider (the real
provider factory is swapped for one that hands out a script)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction import agent as agent_module
from compaction.cli import cli
from compaction.log import SessionLog
from compaction.providers.base import Provider
from compaction.providers.testing import ScriptedProvider, Step, ToolCalls
from compaction.store import open_store
from compaction.workflow import AgentConfig

WORKFLOW = """
model: test-model
compact:
  token_threshold: 3000
  max_tokens: 1500
  keep_recent_n: 2
agents:
  - id: coder
    system_prompt: You read files.
    tools: [read_file, recall]
  - id: other
"""


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(WORKFLOW)
    big = tmp_path / "big.log"
    big.write_text(
        "\n".join(f"line {i}: status ok" for i in range(1500)) + "\nrelease tag v9.4.2\n"
    )
    return path


def script(monkeypatch: pytest.MonkeyPatch, steps: list[Step]) -> ScriptedProvider:
    provider = ScriptedProvider(steps)
    models: list[str | None] = []

    def build(agent: AgentConfig, *, model: str | None = None) -> Provider:
        models.append(model or agent.model)
        return provider

    monkeypatch.setattr(agent_module, "build_provider", build)
    return provider


def test_run_streams_the_answer_and_reports_progress(
    workflow: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.log"
    provider = script(
        monkeypatch,
        [
            Step(ToolCalls(("read_file", {"path": str(big)}), text="Reading.")),
            Step("The release tag is v9.4.2."),
        ],
    )
    store = tmp_path / "s.db"
    result = CliRunner().invoke(
        cli,
        ["run", "--config", str(workflow), "--agent", "coder", "--store", str(store), "Tag?"],
    )
    assert result.exit_code == 0, result.output
    assert "The release tag is v9.4.2." in result.stdout
    err = result.stderr
    assert "→ model call 1: 2 messages" in err
    assert "tool read_file" in err and "→ ok" in err
    assert "⇣ compacted (trigger):" in err  # the file crossed the threshold before call 2
    assert "done: answered, 2 model calls, 1 tool call, 1 compaction" in err
    provider.assert_consumed()
    session = SessionLog.open(open_store(store), create=False, session_id=err.split()[1])
    assert [m.role for m in session.messages][-1] == "assistant"
    assert session.recall("v9.4.2")


def test_run_resumes_a_session(
    workflow: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.db"
    script(monkeypatch, [Step("First answer.")])
    first = CliRunner().invoke(
        cli, ["run", "--config", str(workflow), "--agent", "coder", "--store", str(store),
              "--json", "One"],
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["answer"] == "First answer."
    provider = script(monkeypatch, [Step("Second answer.")])
    second = CliRunner().invoke(
        cli, ["run", "--config", str(workflow), "--agent", "coder", "--store", str(store),
              "--session", summary["session"], "-q", "Two"],
    )  # fmt: skip
    assert second.exit_code == 0, second.output
    assert second.stdout.strip() == "Second answer."
    sent = provider.requests[0].messages
    assert [m.text for m in sent] == ["You read files.", "One", "First answer.", "Two"]


def test_run_turn_limit_exits_1(
    workflow: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(monkeypatch, [Step(ToolCalls(("read_file", {"path": "nope"})))] * 2)
    result = CliRunner().invoke(
        cli, ["run", "--config", str(workflow), "--agent", "coder", "--store",
              str(tmp_path / "s.db"), "--max-turns", "2", "Loop"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "turn limit (2 model calls)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "ghost"], "unknown agent 'ghost' (known: coder, other)"),
        ([], "--agent is required"),
        (["--agent", "coder", "--session", "no-such-session"], "no session 'no-such-session'"),
    ],
)
def test_run_user_errors_are_one_line(
    workflow: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    result = CliRunner().invoke(
        cli, ["run", "--config", str(workflow), "--store", str(tmp_path / "s.db"), *args, "Hi"]
    )
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_missing_key_variable_is_named(workflow: Path, tmp_path: Path) -> None:
    workflow.write_text(
        WORKFLOW.replace("model: test-model", "model: m\napi_key_env: NO_SUCH_KEY_VAR")
    )
    result = CliRunner().invoke(
        cli, ["run", "--config", str(workflow), "--agent", "coder", "--store",
              str(tmp_path / "s.db"), "Hi"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "NO_SUCH_KEY_VAR is not set" in result.stderr
