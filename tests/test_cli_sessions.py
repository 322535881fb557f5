"""`compaction sessions list|show` and `compaction recall` on a store written by `SessionLog`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction.cli import cli
from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.log import SessionLog
from compaction.serialize import message_to_dict
from compaction.store import open_store
from compaction.tokens import ConversationCounter

from .helpers import calls, results, say
from .test_store import FIELDS, padding, tool_session


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two sessions: `deploy` (16 messages, one compaction with a digest summary and masked
    outputs) and `chat` (no compaction), `chat` updated last."""
    path = tmp_path / "sessions.db"
    with open_store(path) as store:
        log = SessionLog.open(store, "deploy", agent="builder", **FIELDS)
        log.append(*tool_session())
        result = log.compact(Compactor(CompactionConfig(keep_recent_n=2)), target_tokens=300)
        assert result.receipt.status == "compacted"
        chat = SessionLog.open(store, "chat", model="claude-sonnet-4-5", dialect="anthropic")
        chat.append(say("user", "hello"), say("assistant", "hi there"))
    return path


def test_the_commands_are_registered() -> None:
    code, out, _ = run("--help")
    assert code == 0
    assert "sessions" in out and "recall" in out
    code, out, _ = run("sessions", "--help")
    assert "list" in out and "show" in out


# -- sessions list ----------------------------------------------------------------------------


def test_list_shows_each_session_newest_first(db: Path) -> None:
    code, out, err = run("sessions", "list", "--store", str(db))
    assert code == 0, err
    header, first, second = out.splitlines()
    assert header.split() == ["ID", "AGENT", "MODEL", "MESSAGES", "COMPACTIONS", "UPDATED"]
    assert first.split()[:5] == ["chat", "-", "claude-sonnet-4-5", "2", "0"]
    assert second.split()[:5] == ["deploy", "builder", "gpt-4o", "16", "1"]

    code, out, _ = run("sessions", "list", "--store", str(db), "--limit", "1")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["chat"]


def test_list_json(db: Path) -> None:
    code, out, _ = run("sessions", "list", "--store", str(db), "--json")
    assert code == 0
    data = json.loads(out)
    assert [(s["id"], s["messages"], s["compactions"]) for s in data] == [
        ("chat", 2, 0),
        ("deploy", 16, 1),
    ]
    assert data[1]["agent"] == "builder" and data[1]["updated_at"].endswith("+00:00")


def test_the_store_comes_from_the_environment(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_STORE", str(db))
    code, out, _ = run("sessions", "list", "--json")
    assert code == 0
    assert {s["id"] for s in json.loads(out)} == {"chat", "deploy"}


def test_the_store_comes_from_a_workflow_file(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMPACTION_STORE", raising=False)
    workflow = tmp_path / "agents.yaml"
    workflow.write_text(f"model: m\nstore: {db}\nagents:\n  - id: a\n")
    code, out, _ = run("sessions", "list", "--config", str(workflow), "--json")
    assert code == 0
    assert {s["id"] for s in json.loads(out)} == {"chat", "deploy"}
    code, out, _ = run("recall", "deploy", "7f3a9c21", "--config", str(workflow))
    assert code == 0 and "[7f3a9c21]" in out
    other = tmp_path / "other.db"
    code, out, err = run("sessions", "list", "--config", str(workflow), "--store", str(other))
    assert "no sessions in" in err  # --store wins over the workflow's store


def test_the_default_store_is_the_per_user_path(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMPACTION_STORE", raising=False)
    monkeypatch.setenv("COMPACTION_HOME", str(tmp_path))
    assert db == tmp_path / "sessions.db"
    code, out, _ = run("sessions", "list", "--json")
    assert code == 0
    assert len(json.loads(out)) == 2


def test_reading_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "sessions.db"
    code, out, err = run("sessions", "list", "--store", str(missing))
    assert (code, out) == (0, "")
    assert f"no sessions in {missing}" in err
    code, _, err = run("sessions", "show", "x", "--store", str(missing))
    assert code == 2
    assert err == f"error: no session 'x': there is no store at {missing}\n"
    code, _, _ = run("recall", "x", "query", "--store", str(missing))
    assert code == 2
    assert not missing.parent.exists()


# -- sessions show ----------------------------------------------------------------------------


def test_show_prints_the_view_with_tokens_and_the_history(db: Path) -> None:
    with open_store(db) as store:
        view, seqs = store.view("deploy")
        (record,) = store.compactions("deploy")
    counted = ConversationCounter.for_model("gpt-4o").count(view)
    code, out, err = run("sessions", "show", "deploy", "--store", str(db))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "session deploy (agent builder, model gpt-4o)"
    heading = f"view ({len(view)} messages, {counted.total:,} tokens):"
    start = lines.index(heading) + 1
    rows = lines[start : start + len(view)]
    assert lines[start + len(view)] == ""
    for i, (row, seq, tokens) in enumerate(zip(rows, seqs, counted.per_message, strict=True)):
        where = ["new"] if seq is None else ["seq", str(seq)]
        assert row.split()[: 1 + len(where)] == [f"#{i}", *where]
        assert f" {tokens:,} tokens" in row
    summary_rows = [r for r in rows if " summary " in r]
    assert len(summary_rows) == 1 and "[compacted:" in summary_rows[0]
    assert any("[tool output masked:" in r for r in rows)
    assert rows[0].split()[:4] == ["#0", "seq", "1", "system"]
    assert rows[-1].endswith("Is it up yet?")

    history = out.split("compactions (1):\n")[1]
    assert (
        f"#1 {record.to_dict()['created_at']}  {record.tokens_before:,} → "
        f"{record.tokens_after:,} tokens, {len(record.replaced)} messages replaced "
        "(after message 16)"
    ) in history
    assert "summary: [compacted:" in history
    assert "totals: 16 messages logged" in out
    assert f"the view has {len(view)} ({counted.total:,} tokens) after 1 compaction" in out


def test_show_json(db: Path) -> None:
    with open_store(db) as store:
        view, seqs = store.view("deploy")
        (record,) = store.compactions("deploy")
        logged = [m for _, m in store.messages("deploy")]
    counter = ConversationCounter.for_model("gpt-4o")
    code, out, _ = run("sessions", "show", "deploy", "--store", str(db), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["session"]["id"] == "deploy"
    assert [v["seq"] for v in data["view"]] == list(seqs)
    assert [v["role"] for v in data["view"]] == [m.role for m in view]
    assert [v["summary"] for v in data["view"]] == [m.is_summary for m in view]
    assert [v["tokens"] for v in data["view"]] == list(counter.count(view).per_message)
    assert data["totals"] == {
        "view_messages": len(view),
        "view_tokens": counter.count(view).total,
        "logged_messages": 16,
        "logged_tokens": counter.count(logged).total,
        "compactions": 1,
        "estimated": False,
        "tokenizer": counter.count(view).counter,
    }
    (compaction,) = data["compactions"]
    assert compaction["replaced"] == list(record.replaced)
    assert compaction["tokens_before"] == record.tokens_before
    assert "view" not in compaction


def test_show_full_prints_whole_messages(db: Path) -> None:
    with open_store(db) as store:
        view, _ = store.view("deploy")
        (record,) = store.compactions("deploy")
    code, out, _ = run("sessions", "show", "deploy", "--store", str(db), "--full")
    assert code == 0
    summary = next(m for m in view if m.is_summary)
    for line in summary.text.splitlines():
        assert line in out
    assert "→ tail_log(" in out and "← result of l3:" in out
    code, out, _ = run("sessions", "show", "deploy", "--store", str(db), "--json", "--full")
    data = json.loads(out)
    assert [v["message"] for v in data["view"]] == [message_to_dict(m) for m in view]
    assert data["compactions"][0]["summary"] == record.summary


def test_show_a_session_without_compactions(db: Path) -> None:
    code, out, _ = run("sessions", "show", "chat", "--store", str(db))
    assert code == 0
    assert "compactions: none" in out
    assert "after 0 compactions" in out
    assert out.count(" seq ") == 2


def test_show_unknown_session_is_one_line_exit_2(db: Path) -> None:
    code, out, err = run("sessions", "show", "nope", "--store", str(db))
    assert (code, out) == (2, "")
    assert err == f"error: no session 'nope' in {db}\n"


def test_a_corrupt_store_is_one_line_without_traceback(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not sqlite at all " * 200)
    for args in (("sessions", "list"), ("sessions", "show", "x"), ("recall", "x", "q")):
        code, out, err = run(*args, "--store", str(garbage))
        assert code == 1
        assert out == ""
        assert err.startswith(f"error: cannot open the session store {garbage}")
        assert err.count("\n") == 1 and "Traceback" not in err


# -- recall -----------------------------------------------------------------------------------


def test_recall_finds_a_value_from_a_compacted_tool_output(db: Path) -> None:
    code, out, err = run("recall", "deploy", "build-id 7f3a9c21", "--store", str(db))
    assert code == 0, err
    (line,) = out.splitlines()
    handle, *where = line.split()[:4]
    assert re.fullmatch(r"m-[0-9a-f]{12}", handle) and where == ["seq", "4", "tool"]
    assert "[7f3a9c21]" in line


def test_recall_full_prints_the_exact_original(db: Path) -> None:
    original = tool_session()[5]
    code, out, _ = run("recall", "deploy", "54817", "--store", str(db), "--full")
    assert code == 0
    assert re.match(r"--- m-[0-9a-f]{12} seq 6 \(tool\) ---\n← result of c2:\n", out)
    assert original.tool_results[0].text in out
    code, out, _ = run("recall", "deploy", "54817", "--store", str(db), "--full", "--json")
    (hit,) = json.loads(out)
    assert hit["seq"] == 6 and hit["message"] == message_to_dict(original)


def test_recall_json_and_limit(db: Path) -> None:
    code, out, _ = run("recall", "deploy", "line", "--store", str(db), "--json", "--limit", "2")
    assert code == 0
    hits = json.loads(out)
    assert len(hits) == 2
    assert all(h["session_id"] == "deploy" and h["role"] == "tool" for h in hits)
    assert all("[line]" in h["snippet"] for h in hits)


def test_recall_is_scoped_to_the_session(db: Path) -> None:
    with open_store(db) as store:
        other = SessionLog.open(store, "other", **FIELDS)
        other.append(say("system", "s"), say("user", "task"))
        other.append(calls(("o1", "bash", {"command": "env"})))
        other.append(*results(("o1", padding("env") + "\nSECRET_TOKEN=zq-991")))
        other.append(say("assistant", "done"), say("user", "next"))
        other.compact(Compactor(CompactionConfig(keep_recent_n=2)), force=True)
    code, out, _ = run("recall", "other", "zq-991", "--store", str(db))
    assert code == 0 and "seq 4" in out
    code, out, err = run("recall", "deploy", "zq-991", "--store", str(db))
    assert (code, out) == (0, "")
    assert "nothing compacted away in deploy matches 'zq-991'" in err


def test_recall_unknown_session_is_exit_2(db: Path) -> None:
    code, out, err = run("recall", "nope", "7f3a9c21", "--store", str(db))
    assert (code, out) == (2, "")
    assert err == f"error: no session 'nope' in {db}\n"
