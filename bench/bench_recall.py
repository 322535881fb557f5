"""Benchmarks for recall by archive handle (the `handles` rows each compaction writes), as
ratios against baselines measured in the same run:

1. Logging a compaction of a ~150k-token session (to 15%) into a SQLite store that already
   holds `OTHER_SESSIONS` such sessions. Baseline: the same into an empty store. The handle
   rows are matched among the messages this compaction saw, so the ratio stays about 1
   whatever the store holds. Budget: ≤ 1.5×.
2. The same compaction logged with its handle rows. Baseline: the same with none (its
   receipt's archive emptied), which is what logging cost before handles were kept.
3. Recalling one original by its handle in the full store. Baseline: in the empty store.
   Budget: ≤ 1.5×.

Timings are medians of repeated runs with the garbage collector paused. Never reaches the
network. Run standalone: `python bench/bench_recall.py`.
"""

from __future__ import annotations

import dataclasses
import gc
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from compaction import CompactionConfig, Compactor
from compaction.compactor import CompactionResult
from compaction.dialects import OPENAI
from compaction.eval.generate import generate_session
from compaction.log import SessionLog
from compaction.messages import Conversation
from compaction.store import SessionStore, open_store
from rows import row

TARGET_TOKENS = 150_000
OTHER_SESSIONS = 20
INDEPENDENT_BUDGET = 1.5


def _fill(store: SessionStore, conversation: Conversation, sessions: int) -> None:
    for i in range(sessions):
        SessionLog.open(store, f"other-{i}", model="gpt-4o").append(*conversation.messages)


def _record_ms(
    variants: dict[str, tuple[SessionStore, CompactionResult]],
    conversation: Conversation,
    repeat: int,
) -> dict[str, tuple[float, str]]:
    """Per variant (a store and a compaction `result` to log there), the median time to log
    `result` for a fresh session holding `conversation` (only the logging is timed), and the
    last such session's id. The variants take turns, so a busy machine slows all alike."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    last: dict[str, str] = {}
    for _ in range(repeat):
        for name, (store, result) in variants.items():
            log = SessionLog.open(store, model="gpt-4o")
            log.append(*conversation.messages)
            before = log.conversation()  # the log's own message objects, which `result` holds
            gc.disable()
            try:
                start = time.perf_counter()
                log.record(before, result)
                samples[name].append((time.perf_counter() - start) * 1000)
            finally:
                gc.enable()
            last[name] = log.session_id
    return {name: (statistics.median(samples[name]), last[name]) for name in variants}


def _recall_ms(store: SessionStore, handle: str, session_id: str, repeat: int = 21) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        (_hit,) = store.recall(handle, session_id=session_id)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def run(repeat: int = 9) -> list[dict[str, Any]]:
    # The session bench_compaction compacts.
    conversation = OPENAI.decode(
        generate_session(7, target_tokens=int(TARGET_TOKENS * 1.2)).payload
    )
    compactor = Compactor(CompactionConfig(token_threshold=10**7, tokenizer_model="gpt-4o"))
    tokens = compactor.count(conversation)
    result = compactor.compact(conversation, target_tokens=int(tokens * 0.15))
    bare = CompactionResult(result.conversation, dataclasses.replace(result.receipt, archive={}))
    handle = next(iter(result.receipt.archive))
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_store(Path(tmp) / "empty.db") as empty,
        open_store(Path(tmp) / "full.db") as full,
    ):
        _fill(full, conversation, OTHER_SESSIONS)
        timed = _record_ms(
            {"empty": (empty, result), "full": (full, result), "bare": (full, bare)},
            conversation,
            repeat,
        )
        (empty_ms, in_empty), (full_ms, in_full), (bare_ms, _) = timed.values()
        recall_empty = _recall_ms(empty, handle, in_empty)
        recall_full = _recall_ms(full, handle, in_full)
        sessions = len(full.sessions(limit=1000))
    size = f"{tokens:,} tokens, {len(result.receipt.archive)} handles"
    return [
        row(
            f"log a compaction ({size}) into a store of {sessions} sessions",
            value=full_ms,
            unit="ms",
            baseline_name="the same into a store of one",
            baseline_value=empty_ms,
            budget=f"≤ {INDEPENDENT_BUDGET}×",
            ok=full_ms <= INDEPENDENT_BUDGET * empty_ms,
        ),
        row(
            f"log a compaction ({size}) with its handle rows",
            value=full_ms,
            unit="ms",
            baseline_name="the same without handle rows",
            baseline_value=bare_ms,
            budget="reported",
            ok=True,
        ),
        row(
            f"recall by handle in a store of {sessions} sessions",
            value=recall_full,
            unit="ms",
            baseline_name="the same in a store of a few",
            baseline_value=recall_empty,
            budget=f"≤ {INDEPENDENT_BUDGET}×",
            ok=recall_full <= INDEPENDENT_BUDGET * recall_empty,
        ),
    ]


if __name__ == "__main__":
    for result_row in run():
        print(result_row)
