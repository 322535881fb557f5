"""A process killed in the middle of a compaction leaves its session log consistent and
resumable. Each test runs the work in a child process and kills it with SIGKILL: no `finally`,
no atexit, no chance to clean up; only SQLite's transactions stand between us and a torn log.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.dialects import OPENAI
from compaction.log import SessionLog
from compaction.messages import Conversation, Message
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import FunctionProvider
from compaction.store import SessionStore, open_store
from compaction.strategies import (
    DigestStrategy,
    MaskStrategy,
    SummarizeStrategy,
    TruncateStrategy,
)

from .helpers import calls, coding_session, results, say

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL"),
]

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = "The agent read modules 0-3 and fixed the login test's KeyError."

CHILD = """
import sys, time
from pathlib import Path

root, db, marker, mode, run = sys.argv[1:6]
sys.path.insert(0, root)

from compaction.log import SessionLog
from compaction.providers.testing import FunctionProvider
from compaction.store import open_store
from tests.helpers import coding_session
from tests.test_crash import exchange, loop_compactor, summarizing_compactor

store = open_store(db)
if mode == "summarize":
    log = SessionLog.open(store, "crash", model="gpt-4o", dialect="openai")
    log.append(*coding_session(8).messages)

    def stall(request):
        Path(marker).write_text("summarizing")
        time.sleep(60)
        return "never returned"

    log.compact(summarizing_compactor(FunctionProvider(stall, supports_structured=False)),
                force=True)
    sys.exit("the compaction finished before the process was killed")
else:
    log = SessionLog.open(store, "loop", model="gpt-4o", dialect="openai")
    if not log.messages:
        log.append(*exchange("start"))
    compactor = loop_compactor()
    i = 0
    while True:
        i += 1
        log.append(*exchange(f"{run}-{i}"))
        log.compact(compactor)
        if i == 1:
            Path(marker).write_text("running")
"""


def exchange(tag: str) -> list[Message]:
    """One step of an agent, logged in one append: a tool call, its (large) output, a remark
    and the user's next turn. The very first one opens with a system prompt and the task."""
    if tag == "start":
        return [say("system", "You are a build agent."), say("user", "Keep the build green.")]
    output = "\n".join(f"[{tag}] step {n}: compiled module_{n}.o in 0.{n}s" for n in range(30))
    return [
        calls((f"c-{tag}", "bash", {"command": f"make part-{tag}"}), text=f"Building {tag}."),
        *results((f"c-{tag}", output + f"\nbuild-id {tag} ok")),
        say("assistant", f"Part {tag} built."),
        say("user", f"Next after {tag}."),
    ]


def loop_compactor() -> Compactor:
    """Deterministic strategies and a low threshold, so the loop compacts every few steps."""
    return Compactor(
        CompactionConfig(
            token_threshold=1200,
            keep_recent_n=2,
            strategies=(MaskStrategy(), DigestStrategy(), TruncateStrategy()),
        )
    )


def summarizing_compactor(provider: FunctionProvider) -> Compactor:
    config = CompactionConfig(keep_recent_n=4, strategies=(SummarizeStrategy(),), model="gpt-4o")
    return Compactor(config, summarizer=provider)


def start_child(
    tmp_path: Path, db: Path, marker: Path, mode: str, run: int
) -> subprocess.Popen[bytes]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    marker.unlink(missing_ok=True)
    env = {**os.environ, "COMPACTION_OFFLINE": "1"}
    with (tmp_path / f"child-{run}.err").open("wb") as err:
        return subprocess.Popen(
            [sys.executable, str(script), str(ROOT), str(db), str(marker), mode, str(run)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


def wait_for(marker: Path, child: subprocess.Popen[bytes], tmp_path: Path, run: int) -> None:
    deadline = time.monotonic() + 30
    while not marker.exists():
        if child.poll() is not None:
            err = (tmp_path / f"child-{run}.err").read_text()
            pytest.fail(f"the child exited ({child.returncode}) before the marker:\n{err}")
        if time.monotonic() > deadline:
            child.kill()
            child.wait()
            pytest.fail("the child never reached the marker")
        time.sleep(0.01)


def kill(child: subprocess.Popen[bytes]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=10) == -signal.SIGKILL


def integrity(db: Path) -> str:
    connection = sqlite3.connect(db)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


def archived_seqs(db: Path, session_id: str) -> list[int]:
    connection = sqlite3.connect(db)
    try:
        rows = connection.execute(
            "SELECT seq FROM archive WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    finally:
        connection.close()
    return [int(seq) for (seq,) in rows]


def assert_consistent(store: SessionStore, db: Path, session_id: str) -> None:
    assert integrity(db) == "ok"
    assert store.integrity() == []
    logged = [seq for seq, _ in store.messages(session_id)]
    assert logged == list(range(1, len(logged) + 1)), "seqs are contiguous from 1"
    replaced: set[int] = set()
    for number, record in enumerate(store.compactions(session_id), start=1):
        assert record.number == number
        assert 1 <= record.after_seq <= len(logged)
        refs = [v for v in record.view if isinstance(v, int)]
        assert all(1 <= s <= record.after_seq for s in (*refs, *record.replaced)), record.number
        assert not set(refs) & set(record.replaced)
        replaced |= set(record.replaced)
    # The archive was written in the same transaction as the records that name its entries.
    assert archived_seqs(db, session_id) == sorted(replaced)
    view, seqs = store.view(session_id)
    assert len(view) == len(seqs)
    assert OPENAI.validate(Conversation(view, model="gpt-4o", dialect="openai")) == []


def test_killed_while_summarizing_leaves_the_log_as_before(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    marker = tmp_path / "summarizing"
    child = start_child(tmp_path, db, marker, "summarize", 0)
    wait_for(marker, child, tmp_path, 0)
    kill(child)

    before = coding_session(8).messages
    with open_store(db) as store:
        assert_consistent(store, db, "crash")
        assert store.compactions("crash") == []
        assert store.view("crash")[0] == before, "the view is the one before the compaction"
        assert store.recall("KeyError", session_id="crash") == [], "nothing was archived"

        log = SessionLog.open(store, "crash", create=False)
        assert log.messages == before

        def answer(request: CompletionRequest) -> str:
            return SUMMARY

        result = log.compact(
            summarizing_compactor(FunctionProvider(answer, supports_structured=False)),
            force=True,
        )
        assert result.receipt.status == "compacted"
        (record,) = store.compactions("crash")
        assert SUMMARY in record.summary
        assert any(m.is_summary and SUMMARY in m.text for m in store.view("crash")[0])
        assert store.recall("KeyError", session_id="crash"), "the originals are recallable"
        assert_consistent(store, db, "crash")
    with open_store(db) as store:
        assert SessionLog.open(store, "crash", create=False).messages == log.messages


def test_killed_at_random_moments_of_an_append_compact_loop(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    marker = tmp_path / "running"
    rng = random.Random(4_2_2024)
    compactor = loop_compactor()
    runs = 5
    compactions_seen = 0
    for run in range(1, runs + 1):
        child = start_child(tmp_path, db, marker, "loop", run)
        wait_for(marker, child, tmp_path, run)
        time.sleep(rng.uniform(0.0, 0.3))
        kill(child)

        with open_store(db) as store:
            assert_consistent(store, db, "loop")
            records_before = len(store.compactions("loop"))
            compactions_seen = max(compactions_seen, records_before)

            # A fresh process resumes where the dead one stopped, then appends and compacts.
            log = SessionLog.open(store, "loop", create=False)
            assert log.messages == store.view("loop")[0]
            last = store.session("loop").messages
            assert log.append(*exchange(f"test-{run}")) == list(range(last + 1, last + 5))
            result = log.compact(compactor, force=True)
            assert result.receipt.status == "compacted", result.receipt.reason
            assert len(store.compactions("loop")) == records_before + 1
            assert_consistent(store, db, "loop")
            best = log.recall(f"build-id test-{run}")[0]
            (output,) = store.message("loop", best.seq).tool_results
            assert output.text.endswith(f"build-id test-{run} ok")
        with open_store(db) as store:
            assert SessionLog.open(store, "loop", create=False).messages == log.messages

    assert compactions_seen > runs, "the children compacted too, not only the test"
