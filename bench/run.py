"""`make bench`: every benchmark, each against a baseline measured in the same run.

Prints one table and writes bench/results/latest.json. Speed figures are ratios against
their baseline as well as absolute values; nothing here is a test, and a miss is reported,
not raised. Runs offline (COMPACTION_OFFLINE=1 unless set otherwise).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("COMPACTION_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_compaction  # noqa: E402
import bench_hooks  # noqa: E402
import bench_proxy  # noqa: E402
import bench_realdata  # noqa: E402
import bench_recall  # noqa: E402
import bench_retention  # noqa: E402
import bench_store  # noqa: E402
import bench_tokens  # noqa: E402


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'benchmark':<74} {'value':>12} {'baseline':>12} {'ratio':>8}  {'budget':<12} ok",
        "-" * 126,
    ]
    for row in rows:
        value = f"{row['value']:g} {row['unit']}"
        base = row.get("baseline_value")
        base_text = "" if base is None else f"{base:g}"
        ratio = row.get("ratio")
        ratio_text = "" if ratio is None else f"{ratio:g}"
        ok = "yes" if row.get("ok") else "NO"
        lines.append(
            f"{row['name'][:74]:<74} {value:>12} {base_text:>12} {ratio_text:>8}  "
            f"{row.get('budget', ''):<12} {ok}"
        )
    return "\n".join(lines)


def main() -> int:
    started = time.time()
    rows: list[dict[str, Any]] = []
    suites = (bench_tokens, bench_compaction, bench_hooks, bench_recall, bench_retention)
    for module in (*suites, bench_realdata, bench_store, bench_proxy):
        name = module.__name__
        print(f"running {name} …", file=sys.stderr, flush=True)
        for row in module.run():
            row["suite"] = name
            rows.append(row)
    print(_table(rows))
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    report = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "seconds": round(time.time() - started, 1),
        "rows": rows,
    }
    (out / "latest.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwritten: {out / 'latest.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
