"""The command line starts without importing what the command does not use (issue 12, item 5).

Each check runs in a fresh interpreter, since this test process has imported everything.
The speed itself is measured by bench/bench_tokens.py, not asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import compaction
from compaction.dialects import OPENAI

from .helpers import coding_session

HEAVY = ("compaction.agent", "compaction.providers", "compaction.proxy", "compaction.eval")


def _modules_after(code: str) -> set[str]:
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith(HEAVY))


def test_importing_the_cli_imports_no_command() -> None:
    modules = _modules_after("import compaction.cli")
    assert _heavy(modules) == []
    assert "compaction.compactor" not in modules
    assert "pydantic" not in modules


def test_version_imports_nothing_of_the_library() -> None:
    code = (
        "from compaction.cli import cli\ntry:\n    cli(['--version'])\nexcept SystemExit:\n    pass"
    )
    modules = _modules_after(code)
    assert _heavy(modules) == []
    assert "compaction.config" not in modules


def test_count_imports_only_what_counting_needs(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(OPENAI.encode(coding_session(5))))
    code = (
        "from compaction.cli import cli\n"
        f"try:\n    cli(['count', {str(path)!r}])\nexcept SystemExit as e:\n"
        "    assert not e.code, e.code"
    )
    modules = _modules_after(code)
    assert _heavy(modules) == []
    assert "compaction.compactor" not in modules
    assert "compaction.strategies" not in modules
    # Nor what only other commands use: validation, YAML, path objects, URL parsing.
    assert {"pydantic", "yaml", "pathlib", "urllib.parse"} & modules == set()


def test_the_package_exports_lazily_what_it_lists() -> None:
    modules = _modules_after("import compaction")
    assert _heavy(modules) == []
    loaded = _modules_after("import compaction\ncompaction.Orchestrator")
    assert "compaction.agent" in loaded


def test_the_command_answers_version_without_click() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compaction", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"compaction, version {compaction.__version__}\n"
    modules = _modules_after(
        "import sys\nsys.argv = ['compaction', '--version']\n"
        "from compaction.cli import main\nmain()"
    )
    assert "click" not in modules
    assert "typing" not in modules
