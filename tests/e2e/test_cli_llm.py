"""`compaction compact` with the LLM strategies against a real OpenAI-compatible server.

The model (Gemma 3 270M) is tiny: these tests check the protocol and the bookkeeping — a
summary comes back through the real SDK, the output is valid, the receipt counts the calls
— never the summary's quality.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction.cli import cli
from compaction.dialects import ANTHROPIC, OPENAI

from ..helpers import coding_session
from .conftest import LlamaServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def small_window_config(tmp_path: Path, llama_server: LlamaServer) -> Path:
    # The server's window is small; tell the summarizer, and keep its answers short.
    path = tmp_path / "compact.yaml"
    path.write_text(
        f"summary_window: {llama_server.n_ctx}\nsummary_max_tokens: 96\nkeep_recent_n: 4\n"
    )
    return path


def compact(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["compact", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("strategy", ["summarize", "sequence"])
def test_llm_strategy_through_the_cli(
    tmp_path: Path, llama_server: LlamaServer, small_window_config: Path, strategy: str
) -> None:
    session = tmp_path / "session.json"
    session.write_text(json.dumps(OPENAI.encode(coding_session(4, output_lines=20))))
    out, receipt_path = tmp_path / "out.json", tmp_path / "receipt.json"
    code, _, err = compact(
        str(session),
        "--strategy",
        strategy,
        "--provider",
        "openai",
        "--model",
        llama_server.model,
        "--base-url",
        llama_server.base_url,
        "--config",
        str(small_window_config),
        "-o",
        str(out),
        "--receipt",
        str(receipt_path),
        "--instructions",
        "Mention the file names.",
    )
    assert code == 0, err
    conversation = OPENAI.decode(json.loads(out.read_text()))
    assert OPENAI.validate(conversation) == []
    summaries = [m.text for m in conversation if m.is_summary]
    assert len(summaries) == 1
    assert "## Summary" in summaries[0]
    receipt = json.loads(receipt_path.read_text())
    summarizer = receipt["summarizer"]
    # llama-cpp-python refuses json_schema: one refused structured call, then free text.
    assert summarizer["calls"] >= 1
    assert summarizer["output_tokens"] >= 0
    assert any("fell back to free text" in e for e in summarizer["errors"])
    assert "summarizer:" in err
    assert any(r["action"] == "summarized" for r in receipt["removed"])


def test_anthropic_transcript_summarized_by_an_openai_compatible_server(
    tmp_path: Path, llama_server: LlamaServer, small_window_config: Path
) -> None:
    session = tmp_path / "anthropic.json"
    session.write_text(json.dumps(ANTHROPIC.encode(coding_session(4, dialect="anthropic"))))
    out = tmp_path / "out.json"
    code, _, err = compact(
        str(session),
        "--strategy",
        "mask,summarize,truncate",
        "--target-ratio",
        "0.5",
        "--provider",
        "openai",
        "--model",
        llama_server.model,
        "--base-url",
        llama_server.base_url,
        "--config",
        str(small_window_config),
        "-o",
        str(out),
    )
    assert code == 0, err
    payload = json.loads(out.read_text())
    assert "system" in payload
    assert ANTHROPIC.validate(ANTHROPIC.decode(payload)) == []
