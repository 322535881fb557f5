"""`compaction run` end to end: an agent with a small tool against llama.cpp's server on
loopback, through a compaction, then resumed.

llama-cpp-python offers tools only with a function-calling chat format, and that format
cannot stream an automatic tool choice, so this server runs `chatml-function-calling` and
the workflow says `stream: false`. The model is a 270M base model: the test checks the
protocol (tool call, compaction, log, recall, resume), never what the model says.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import pytest

from compaction import OPENAI
from compaction.compactor import new_violations
from compaction.log import SessionLog
from compaction.messages import Conversation
from compaction.store import open_store

from .conftest import LlamaServer, running_llama_server

pytestmark = pytest.mark.e2e

TOOL_MODULE = '''
def station_log(station: str) -> str:
    """Read the maintenance log of a weather station.

    Args:
        station: the station's name.
    """
    lines = [f"{station} day {d:03d}: sensors nominal, battery {80 + d % 17}%" for d in range(60)]
    lines.insert(37, "day 037: anemometer replaced, serial AX-5521")
    return "\\n".join(lines)
'''


@pytest.fixture(scope="module")
def tools_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with running_llama_server(tmp_path_factory, chat_format="chatml-function-calling") as server:
        yield server


def compaction_run(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(workdir),
        "LLAMA_KEY": "sk-local",
        "COMPACTION_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "compaction", "run", "--config", "agents.yaml",
         "--store", "sessions.db", *args],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_run_with_a_tool_through_a_compaction_then_resume(
    tools_server: LlamaServer, tmp_path: Path
) -> None:
    (tmp_path / "station.py").write_text(TOOL_MODULE)
    (tmp_path / "agents.yaml").write_text(
        dedent(f"""\
        model: {tools_server.model}
        base_url: {tools_server.base_url}
        api_key_env: LLAMA_KEY
        max_output_tokens: 48
        temperature: 0
        stream: false
        compact:
          token_threshold: 900
          max_tokens: 600
          keep_recent_n: 2
        agents:
          - id: weather
            system_prompt: You are a maintenance assistant. Call station_log to read a log.
            tools: [station:station_log, recall]
        """)
    )
    first = compaction_run(tmp_path, "--agent", "weather", "--max-turns", "3",
                           "Read the log of station Oslo.")  # fmt: skip
    assert first.returncode in (0, 1), first.stderr  # 1: the turn limit, not a failure
    assert "Traceback" not in first.stderr
    assert "tool station_log(" in first.stderr, first.stderr
    assert "⇣ compacted (trigger):" in first.stderr, first.stderr
    session_id = first.stderr.split()[1]

    store = open_store(tmp_path / "sessions.db")
    log = SessionLog.open(store, session_id, create=False)
    assert store.compactions(session_id)
    view = Conversation(log.messages, model=tools_server.model)
    originals = store.messages(session_id)
    # Compaction adds no violation: what the tiny model itself wrote (a call whose arguments
    # are not JSON) is logged as it came, and is no compaction's doing.
    logged = Conversation(tuple(m for _, m in originals), model=tools_server.model)
    assert new_violations(logged, OPENAI.decode(OPENAI.encode(view))) == []
    assert len(originals) >= 4  # system, task, the tool call, its result: nothing deleted
    # The tool's output was compacted away, yet its one interesting line is recallable.
    hits = log.recall("AX-5521")
    assert hits and "serial AX-5521" in log.original(hits[0].seq).tool_results[0].text
    before = log.messages
    store.close()

    second = compaction_run(tmp_path, "--agent", "weather", "--session", session_id,
                            "--max-turns", "1", "Thanks. Which station was it?")  # fmt: skip
    assert second.returncode in (0, 1), second.stderr
    resumed = SessionLog.open(open_store(tmp_path / "sessions.db"), session_id, create=False)
    after = resumed.messages
    # Resumed from exactly the view the model last saw (or a compaction of it).
    assert after[: len(before)] == before or resumed.store.compactions(session_id)[-1:]
    assert after[-1].role in ("assistant", "tool")
    assert any(m.text == "Thanks. Which station was it?" for m in after)
