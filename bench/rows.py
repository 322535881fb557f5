"""The one shape every benchmark module's results take (bench/run.py prints and saves them)."""

from __future__ import annotations

from typing import Any


def row(
    name: str,
    *,
    value: float,
    unit: str,
    baseline_name: str,
    baseline_value: float,
    budget: str | float,
    ok: bool,
    digits: int = 3,
    **extra: Any,
) -> dict[str, Any]:
    """One result: a value, the baseline measured in the same run, their ratio, the budget
    and whether it was met; `extra` keys ride along (per-category detail, …)."""
    return {
        "name": name,
        "value": round(value, digits),
        "unit": unit,
        "baseline_name": baseline_name,
        "baseline_value": round(baseline_value, digits),
        "ratio": round(value / baseline_value, digits) if baseline_value else float("inf"),
        "budget": budget,
        "ok": ok,
        **extra,
    }
