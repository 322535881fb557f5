"""Retention on sessions nobody here wrote: 23 real agents' sessions (both dialects where
recorded), 22 SWE-agent trajectories and the generated families, at 30%, 15% and 10%.

Probes are extracted from each raw session by the ruler's own rules
(`compaction.eval.datasets.extract_probes`: files, commands, user constraints, last errors,
open to-dos, final test status, the last message); the generated families plant theirs. Every
run is measured by `compaction.eval.benchmark`: validity in the session's dialect, target met
where the protected content fits, last message verbatim, empty summaries, stale values stated
as current, budget used, per category kept/total — for the default pipeline and
`mask+truncate`, `digest+truncate`, `truncate`; then the same after about five successive
compactions of the growing session. Every category where the default keeps fewer than
`mask+truncate` or `truncate` is flagged.

Data is read from `../shared/data/` beside the repository (or `$COMPACTION_SHARED_DATA`) and
never copied; without it the real-data part is skipped with a message. Run standalone:
`python bench/bench_realdata.py [--json OUT] [--only realdata|swe-agent|families]
[--family NAME …] [--ratio 0.15 …] [--no-growing]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from compaction.dialects import ANTHROPIC
from compaction.eval.benchmark import (
    BASELINES,
    DEFAULT_PIPELINE,
    PIPELINES,
    RATIOS,
    Pooled,
    RunMeasure,
    compare,
    measure,
    measure_growing,
    protected_tokens,
    ratio_label,
    shared_data_dir,
    shortfalls,
)
from compaction.eval.datasets import load_dataset
from compaction.eval.families import FAMILIES, family_sessions
from compaction.eval.sessions import EvalSession

REPO = Path(__file__).resolve().parent.parent
#: Seeds of the generated families: never read while building the compaction.
FAMILY_SEEDS = (1000, 1001, 1002, 1003)
FAMILY_TOKENS = 32_000
#: Room beyond the protected content (system prompt, first user message, live user turn, last
#: message) for the tight SWE-agent runs: where a digest of ~100 tokens can still name files
#: and commands.
TIGHT_ROOM = 100

_SHORT = {
    "constraint": "con",
    "file_modified": "fmod",
    "file_created": "fnew",
    "file_deleted": "fdel",
    "file_read": "fread",
    "command": "cmd",
    "error_open": "err",
    "error_resolved": "fixed",
    "decision": "dec",
    "todo": "todo",
    "changed_value": "val",
    "identifier": "id",
    "test_status": "test",
    "last_message": "last",
}


def realdata_sessions() -> tuple[list[EvalSession], str | None]:
    """Every real session in both dialects, or a reason why there are none."""
    shared = shared_data_dir(REPO)
    if shared is None or not (shared / "realdata").is_dir():
        return [], "no ../shared/data/realdata (set COMPACTION_SHARED_DATA): real data skipped"
    sessions = []
    for dialect in ("openai", "anthropic"):
        folder = shared / "realdata" / dialect
        if folder.is_dir():
            sessions.extend(load_dataset(folder))
    return sessions, None


def swe_sessions() -> tuple[list[EvalSession], str | None]:
    shared = shared_data_dir(REPO)
    folder = None if shared is None else shared / "swe-agent-trajectories"
    if folder is None or not folder.is_dir():
        return [], "no ../shared/data/swe-agent-trajectories: SWE-agent skipped"
    return load_dataset(folder), None


#: Families also measured in the Anthropic Messages dialect (their agent speaks it).
ANTHROPIC_FAMILIES = (
    "cc-style",
    "warp-style",
    "augment-style",
    "open-interpreter-style",
    "roo-style",
    "void-style",
    "refact-style",
    "gptme-style",
    "dc-style",
    "clinemcp-style",
    "ccstory-style",
    "forgestory-style",
    "pistory-style",
    "octostory-style",
)


def generated_family_sessions(families: Sequence[str] | None = None) -> list[EvalSession]:
    """Every family's sessions (or those of `families`) in OpenAI chat, and those of
    `ANTHROPIC_FAMILIES` again as Anthropic Messages."""
    sessions = []
    for family in families or FAMILIES:
        for session in family_sessions(family, FAMILY_SEEDS, FAMILY_TOKENS):
            sessions.append(session)
            if family in ANTHROPIC_FAMILIES:
                payload = ANTHROPIC.encode(session.conversation)
                sessions.append(replace(session, conversation=ANTHROPIC.decode(payload)))
    return sessions


def run_all(
    sessions: Sequence[EvalSession],
    *,
    growing: bool = True,
    pipelines: Iterable[str] = PIPELINES,
    ratios: Iterable[float] = RATIOS,
) -> tuple[list[RunMeasure], list[RunMeasure]]:
    """(one-shot runs, growing-session runs) of every pipeline × ratio × session."""
    once: list[RunMeasure] = []
    grown: list[RunMeasure] = []
    for pipeline in pipelines:
        for ratio in ratios:
            for session in sessions:
                once.append(measure(session, pipeline, ratio))
                if growing:
                    grown.append(measure_growing(session, pipeline, ratio))
    return once, grown


def _categories(result: Pooled) -> str:
    return " ".join(f"{_SHORT.get(c, c)} {k}/{t}" for c, (k, t) in result.kept.items())


def table(title: str, pooled: dict[tuple[str, str, str, float], Pooled]) -> str:
    lines = [
        title,
        f"{'source/dialect':<18} {'pipeline':<16} {'ratio':>5} {'kept':>15} {'critical':>9} "
        f"{'budget':>6} "
        f"{'last':>7} {'empty':>5} {'stale':>5} {'valid':>7} {'target':>7}  per category",
    ]
    for (source, dialect, pipeline, ratio), r in sorted(
        pooled.items(),
        key=lambda kv: (kv[0][0], kv[0][1], -kv[0][3], list(PIPELINES).index(kv[0][2])),
    ):
        overall = r.overall
        pct = f"{100 * overall.value:.1f}% {overall.kept}/{overall.total}"
        critical = f"{r.critical.kept}/{r.critical.total}"
        budget = "-" if r.budget_mean is None else f"{r.budget_mean:.2f}"
        lines.append(
            f"{source + '/' + dialect:<18} {pipeline:<16} {ratio_label(ratio):>5} {pct:>15} "
            f"{critical:>9} {budget:>6} "
            f"{r.last_verbatim:>3}/{r.runs:<3} {r.empty_summaries:>5} {r.stale:>5} "
            f"{r.valid:>3}/{r.runs:<3} {r.target_met_due:>3}/{r.target_due:<3}  {_categories(r)}"
        )
    return "\n".join(lines)


def _rows(
    label: str, pooled: dict[tuple[str, str, str, float], Pooled], flags: Sequence[str]
) -> list[dict[str, Any]]:
    rows = []
    for (source, dialect, pipeline, ratio), r in pooled.items():
        if pipeline != DEFAULT_PIPELINE:
            continue
        overall = r.overall
        base = pooled.get((source, dialect, "mask+truncate", ratio))
        base_rate = 100 * base.overall.value if base is not None else 0.0
        at = f"at {ratio_label(ratio)}"
        mine = [f for f in flags if f.startswith(f"{source}/{dialect} {at}:")]
        budget = r.budget_mean
        ok = (
            r.valid == r.runs
            and r.last_verbatim == r.runs
            and r.empty_summaries == 0
            and r.stale == 0
            and r.target_met_due == r.target_due
            and not mine
            and (budget is None or budget >= 0.9)
        )
        rows.append(
            {
                "name": f"{label} {source}/{dialect} {at}: default, required kept",
                "value": round(100 * overall.value, 1),
                "unit": "%",
                "baseline_name": "mask+truncate, same runs",
                "baseline_value": round(base_rate, 1),
                "ratio": round(overall.value * 100 / base_rate, 3) if base_rate else None,
                "budget": "≥ m+t, all ok",
                "ok": ok,
                "pipelines": {
                    p: pooled[(source, dialect, p, ratio)].to_dict()
                    for p in PIPELINES
                    if (source, dialect, p, ratio) in pooled
                },
                "shortfalls": mine,
            }
        )
    return rows


#: The first measurement of main's default (4301761), before the issue-10 work: every row of
#: this benchmark then, kept to compare each run with.
FIRST_MEASUREMENT = REPO / "docs" / "eval" / "first-measurement.json"


def first_measurement() -> dict[str, dict[str, Any]]:
    """Rows of the first measurement by name (empty when the file is absent)."""
    if not FIRST_MEASUREMENT.is_file():
        return {}
    rows = json.loads(FIRST_MEASUREMENT.read_text(encoding="utf-8"))["rows"]
    return {row["name"]: row for row in rows}


def _with_first(rows: list[dict[str, Any]], out: Callable[[str], None]) -> None:
    first = first_measurement()
    shown = 0
    for row in rows:
        then = first.get(row["name"])
        if then is None:
            continue
        default = then["pipelines"].get(DEFAULT_PIPELINE, {})
        row["first_measurement"] = {
            "value": then["value"],
            "mask+truncate": then["baseline_value"],
            "default": default,
        }
        if not shown:
            out("-- first measurement (main 4301761) → now, default, required kept:")
        shown += 1
        out(f"   {row['name']}: {then['value']}% → {row['value']}%")


def report(
    label: str, once: list[RunMeasure], grown: list[RunMeasure], out: Callable[[str], None]
) -> list[dict[str, Any]]:
    pooled = compare(once)
    flags = shortfalls(pooled, BASELINES)
    out(table(f"\n== {label}: one compaction", pooled))
    out(f"-- shortfalls of the default against {', '.join(BASELINES)}: {len(flags)}")
    for flag in flags:
        out(f"   {flag}")
    rows = _rows(label, pooled, flags)
    if grown:
        grown_pooled = compare(grown)
        grown_flags = shortfalls(grown_pooled, BASELINES)
        counts = sorted({r.compactions for r in grown})
        out(table(f"\n== {label}: growing session, compactions per run {counts}", grown_pooled))
        out(f"-- shortfalls (growing): {len(grown_flags)}")
        for flag in grown_flags:
            out(f"   {flag}")
        rows += _rows(f"{label} (growing)", grown_pooled, grown_flags)
    _with_first(rows, out)
    return rows


def run(
    out: Callable[[str], None] = print,
    only: str | None = None,
    *,
    growing: bool = True,
    ratios: Sequence[float] = RATIOS,
    families: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Every part of the benchmark (or `only` one; of the families, all or `families`),
    printed through `out`; the rows."""
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()

    def part(label: str, sessions: Sequence[EvalSession]) -> None:
        nonlocal rows
        once, grown = run_all(sessions, growing=growing, ratios=ratios)
        rows += report(label, once, grown, out)

    if only in (None, "families"):
        part("families", generated_family_sessions(families))
    if only in (None, "realdata"):
        sessions, why = realdata_sessions()
        if why:
            out(f"skipped: {why}")
        else:
            part("realdata", sessions)
    if only in (None, "swe-agent"):
        sessions, why = swe_sessions()
        if why:
            out(f"skipped: {why}")
        else:
            part("swe-agent", sessions)
            tight = [
                measure(s, pipeline, 0.0, target=protected_tokens(s.conversation) + TIGHT_ROOM)
                for pipeline in PIPELINES
                for s in sessions
            ]
            out(f"\n(tight: each target is the protected content + {TIGHT_ROOM} tokens)")
            rows += report("swe-agent", tight, [], out)
    out(f"\nbench_realdata: {time.perf_counter() - started:.1f} s")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--only", choices=("realdata", "swe-agent", "families"))
    parser.add_argument(
        "--ratio", type=float, action="append", help="a target ratio (repeatable; default all)"
    )
    parser.add_argument(
        "--no-growing", action="store_true", help="skip the growing-session replays (faster)"
    )
    parser.add_argument(
        "--family",
        action="append",
        choices=sorted(FAMILIES),
        metavar="NAME",
        help="measure only this generated family (repeatable; default all)",
    )
    args = parser.parse_args(argv)
    rows = run(
        only=args.only,
        growing=not args.no_growing,
        ratios=args.ratio or RATIOS,
        families=args.family,
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        print(f"written: {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
