"""The integrations' public surface: each module's `__all__` is real, and the package itself
imports no framework."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

MODULES = {
    "compaction.integrations.pydantic_ai": "pydantic_ai",
    "compaction.integrations.openai_agents": "agents",
    "compaction.integrations.langchain": "langchain",
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_exported_name_exists(name: str) -> None:
    pytest.importorskip(MODULES[name])
    module = importlib.import_module(name)
    assert module.__all__ == sorted(module.__all__)
    assert all(hasattr(module, n) for n in module.__all__)


def test_the_package_imports_no_framework() -> None:
    code = (
        "import sys, compaction.integrations, compaction.integrations._core\n"
        f"print(sorted(m for m in {sorted(MODULES.values())!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
