"""The framework examples under examples/ run, and their glue stays within five lines."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GLUE = re.compile(r"^\s*# -- the glue.*?$(.*?)^\s*# -- end of the glue", re.M | re.S)


def run(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def glue_lines(name: str) -> list[str]:
    match = GLUE.search((EXAMPLES / name).read_text())
    assert match is not None, f"{name} marks no glue"
    return [line for line in match.group(1).splitlines() if line.strip()]


def test_pydantic_ai_example() -> None:
    pytest.importorskip("pydantic_ai")
    out = run("pydantic_ai_agent.py")
    assert "Done: every module read." in out
    assert "history kept by pydantic-ai: 28 messages" in out
    compactions = int(re.search(r"compactions logged: (\d+)", out).group(1))  # type: ignore[union-attr]
    assert compactions >= 1
    assert "recall returned the original line: mod0_line_42 = 294" in out
    assert 1 <= len(glue_lines("pydantic_ai_agent.py")) <= 5


def test_openai_agents_example() -> None:
    pytest.importorskip("agents")
    out = run("openai_agents_agent.py")
    assert "Done: every module read." in out
    assert "items kept by the session: 28" in out
    compactions = int(re.search(r"compactions logged: (\d+)", out).group(1))  # type: ignore[union-attr]
    assert compactions >= 1
    assert "recall returned the original line: mod0_line_42 = 294" in out
    assert 1 <= len(glue_lines("openai_agents_agent.py")) <= 5


def test_langchain_example() -> None:
    pytest.importorskip("langchain")
    out = run("langchain_agent.py")
    assert "Done: every module read." in out
    assert "messages kept in the checkpointed state: 28" in out
    compactions = int(re.search(r"compactions logged: (\d+)", out).group(1))  # type: ignore[union-attr]
    assert compactions >= 1
    assert "recall returned the original line: mod0_line_42 = 294" in out
    assert 1 <= len(glue_lines("langchain_agent.py")) <= 5
