"""Benchmarks for the session store (issue 11, item 16): the cost of one compaction does not
grow with everything the store ever archived.

For each backend (SQLite; PostgreSQL on a `pgserver` of this run, when the `dev` extra
installed it), two stores: one holding SMALL sessions, one holding LARGE, each session with
ARCHIVED archived originals. One compaction of a fresh session (`SessionLog.compact`, a
mask compactor that archives ten tool results) is timed REPEAT times in each, alternating
between the two so that the load of a shared machine falls on both alike. The row is the
median in the large store against the median in the small one. Budget: ≤ BUDGET_RATIO.

Filling writes the rows straight through the store (append, then a compaction record),
which is what every earlier compaction left behind. Never reaches the network (PostgreSQL
listens on a unix socket). Run standalone: `python bench/bench_store.py`.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.log import SessionLog
from compaction.messages import Message, TextPart, ToolCallPart, ToolResultPart
from compaction.store import SessionStore, open_store
from compaction.strategies import MaskStrategy
from rows import row

logger = logging.getLogger("bench.store")
os.environ.setdefault("COMPACTION_OFFLINE", "1")  # no tokenizer download

SMALL = 20
LARGE = 2_000
ARCHIVED = 10  # tool results archived by each session's compaction
REPEAT = 25
BUDGET_RATIO = 1.5
TARGET = 600  # tokens after: the tool results masked
FIELDS = {"model": "gpt-4o", "dialect": "openai"}


def session_messages(label: str) -> list[Message]:
    """A task, ARCHIVED tool calls with 40-line results, and a closing question."""
    messages = [
        Message.text_message("system", "You are a build agent.", pinned=True),
        Message.text_message("user", f"[{label}] Find why the nightly build is slow."),
    ]
    for i in range(ARCHIVED):
        command = json.dumps({"command": f"grep -n step{i} build.log"})
        output = "\n".join(f"{label} step{i} line {n}: took {n * 7 % 311} ms" for n in range(40))
        messages += [
            Message("assistant", (ToolCallPart(f"c{i}", "bash", command),)),
            Message("tool", (ToolResultPart(f"c{i}", (TextPart(output),)),)),
        ]
    messages.append(Message.text_message("user", "Which step is the slowest?"))
    return messages


def compactor() -> Compactor:
    return Compactor(CompactionConfig(keep_recent_n=2, strategies=(MaskStrategy(),)))


def fill(store: SessionStore, start: int, stop: int) -> None:
    """Sessions `start`..`stop` as earlier compactions leave them: their messages, and a
    compaction record that archived their tool results."""
    template = SessionLog.open(store, f"template-{start}", **FIELDS)
    template.append(*session_messages("template"))
    receipt = template.compact(compactor(), target_tokens=TARGET, force=True).receipt
    (record,) = store.compactions(template.session_id)
    view, replaced = list(record.view), list(record.replaced)
    for n in range(start, stop):
        sid = f"filler-{n}"
        store.ensure_session(sid, **FIELDS)
        store.append(sid, session_messages(sid))
        store.record_compaction(sid, view=view, replaced=replaced, receipt=receipt)


def compaction_ms(store: SessionStore, label: str, worker: Compactor) -> float:
    """The time of one compaction of a fresh session."""
    log = SessionLog.open(store, f"measured-{label}", **FIELDS)
    log.append(*session_messages(f"m-{label}"))
    gc.disable()
    try:
        start = time.perf_counter()
        log.compact(worker, target_tokens=TARGET, force=True)
        return (time.perf_counter() - start) * 1000
    finally:
        gc.enable()


def in_schema(url: str, schema: str) -> str:
    """A store URL on `url`'s server whose tables go to a new schema `schema`."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}"


@contextmanager
def postgres(workdir: Path) -> Iterator[str | None]:
    """A PostgreSQL URL on a pgserver of this run, or None when it is not installed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver  # type: ignore[import-not-found,unused-ignore]

            server = pgserver.get_server(workdir / "pg", cleanup_mode="delete")
    except ImportError:
        logger.warning("pgserver is not installed (the dev extra): no PostgreSQL rows")
        yield None
        return
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def measure(open_new: Callable[[str], SessionStore], backend: str) -> dict[str, Any]:
    """`open_new(name)` opens a new, empty store of the backend."""
    with open_new("small") as small_store, open_new("large") as large_store:
        fill(small_store, 0, SMALL)
        started = time.perf_counter()
        fill(large_store, 0, LARGE)
        filled_s = time.perf_counter() - started
        worker = compactor()
        compaction_ms(small_store, "warm", worker)
        times: dict[str, list[float]] = {"small": [], "large": []}
        for i in range(REPEAT):
            times["small"].append(compaction_ms(small_store, f"small-{i}", worker))
            times["large"].append(compaction_ms(large_store, f"large-{i}", worker))
    small, large = (statistics.median(times[k]) for k in ("small", "large"))
    ratio = large / small
    return row(
        f"store: one compaction with {LARGE:,} archived sessions in the store: {backend}",
        value=large,
        unit="ms",
        baseline_name=f"the same with {SMALL} sessions",
        baseline_value=small,
        budget=f"≤{BUDGET_RATIO:g}×",
        ok=ratio <= BUDGET_RATIO,
        archived_rows=LARGE * ARCHIVED,
        fill_seconds=round(filled_s, 1),
    )


def run() -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        workdir = Path(tmp)
        rows.append(measure(lambda name: open_store(workdir / f"{name}.db"), "SQLite"))
        with postgres(workdir) as url:
            if url is not None:
                rows.append(measure(lambda name: open_store(in_schema(url, name)), "PostgreSQL"))
    return rows


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="note: %(message)s")
    for result in run():
        print(
            f"{result['name']}: {result['value']:.2f} ms vs {result['baseline_value']:.2f} ms "
            f"({result['ratio']:.2f}×, budget {result['budget']}) "
            f"{'ok' if result['ok'] else 'MISS'}; filled in {result['fill_seconds']} s"
        )
