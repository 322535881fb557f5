"""`SessionLog`: resume gives exactly the view the model last saw; sync; compaction records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.dialects import get_dialect
from compaction.exceptions import HistoryDivergedError, LogConflictError, SessionNotFoundError
from compaction.log import SessionLog, fingerprint
from compaction.messages import Message, TextPart
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import FunctionProvider
from compaction.serialize import message_to_dict
from compaction.store import SessionStore, open_store
from compaction.strategies import MaskStrategy, SummarizeStrategy, TruncateStrategy

from .helpers import calls, coding_session, results, say
from .test_store import FIELDS, padding, tool_session


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
def store(path: Path) -> Iterator[SessionStore]:
    with open_store(path) as opened:
        yield opened


def dicts(messages: tuple[Message, ...]) -> list[dict[str, object]]:
    return [message_to_dict(m) for m in messages]


def resumed(path: Path, session_id: str) -> SessionLog:
    """The session as a new process would see it: a new store on the same file."""
    return SessionLog.open(open_store(path), session_id, create=False)


def assert_same_view(log: SessionLog, path: Path) -> SessionLog:
    again = resumed(path, log.session_id)
    assert len(again.messages) == len(log.messages)
    for i, (a, b) in enumerate(zip(again.messages, log.messages, strict=True)):
        assert message_to_dict(a) == message_to_dict(b), f"view message {i} differs"
    assert again.seqs == log.seqs
    again.store.close()
    return again


def summarizer() -> FunctionProvider:
    def answer(request: CompletionRequest) -> str:
        return "The agent built the service and read its deploy config."

    return FunctionProvider(answer, supports_structured=False)


# -- open and resume --------------------------------------------------------------------------


def test_open_creates_or_resumes(store: SessionStore) -> None:
    fresh = SessionLog.open(store, agent="coder", model="gpt-4o", dialect="openai")
    info = fresh.info()
    assert (info.agent, info.model, info.dialect, info.messages) == ("coder", "gpt-4o", "openai", 0)
    fresh.append(say("user", "hi"))
    assert SessionLog.open(store, fresh.session_id).messages == (say("user", "hi"),)
    named = SessionLog.open(store, "named-1")
    assert named.session_id == "named-1" and named.messages == ()
    with pytest.raises(SessionNotFoundError, match="missing"):
        SessionLog.open(store, "missing", create=False)
    assert [s.id for s in store.sessions()].count("missing") == 0


def test_resume_without_compaction(store: SessionStore, path: Path) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    again = assert_same_view(log, path)
    assert list(again.messages) == tool_session()


def test_resume_after_masking_gives_the_view_the_model_last_saw(
    store: SessionStore, path: Path
) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    compactor = Compactor(CompactionConfig(keep_recent_n=2, strategies=(MaskStrategy(),)))
    assert log.compact(compactor, force=True, fields=FIELDS).receipt.status == "compacted"
    assert any("[tool output masked:" in p.text for m in log.messages for p in m.tool_results)
    assert_same_view(log, path)
    log.append(say("assistant", "It is up."), say("user", "Good."))
    assert_same_view(log, path)


def test_resume_after_a_summary_and_truncation(store: SessionStore, path: Path) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*coding_session(12).messages)
    config = CompactionConfig(
        keep_recent_n=4, strategies=(SummarizeStrategy(), TruncateStrategy()), model="gpt-4o"
    )
    result = log.compact(
        Compactor(config, summarizer=summarizer()), target_tokens=1500, fields=FIELDS
    )
    assert result.receipt.status == "compacted"
    assert any(m.is_summary for m in log.messages)
    again = assert_same_view(log, path)
    assert [m.is_summary for m in again.messages] == [m.is_summary for m in log.messages]


def test_resume_after_a_compaction_that_replaced_the_newest_messages(
    store: SessionStore, path: Path
) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(say("system", "You deploy."), say("user", "Deploy it."))
    for i in range(3):
        log.append(calls((f"c{i}", "bash", {"command": "make"}), text=f"Step {i}."))
        log.append(*results((f"c{i}", padding(f"step{i}"))))
    newest = log.messages[-1]
    compactor = Compactor(CompactionConfig(keep_recent_n=0, strategies=(MaskStrategy(),)))
    assert log.compact(compactor, force=True, fields=FIELDS).receipt.status == "compacted"
    assert log.seqs[-1] is None, "the newest message was replaced by a placeholder"
    assert log.messages[-1] != newest
    again = assert_same_view(log, path)
    assert newest not in again.messages, "a replaced newest message must not come back"
    (record,) = store.compactions("s")
    assert record.after_seq == 8
    assert 8 in record.replaced


def test_a_resumed_log_appends_and_compacts_again(store: SessionStore, path: Path) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    compactor = Compactor(CompactionConfig(keep_recent_n=0, strategies=(MaskStrategy(),)))
    log.compact(compactor, force=True, fields=FIELDS)

    with open_store(path) as other:
        again = SessionLog.open(other, "s", create=False)
        assert again.append(say("assistant", "Up."), say("user", "Now the docs.")) == [17, 18]
        again.append(calls(("d1", "read", {"path": "README"})))
        again.append(*results(("d1", padding("readme"))))
        result = again.compact(compactor, force=True, fields=FIELDS)
        assert result.receipt.status == "compacted"
        records = other.compactions("s")
        assert [(r.number, r.after_seq) for r in records] == [(1, 16), (2, 20)]
        assert 20 in records[1].replaced
        assert_same_view(again, path)


def test_a_compaction_that_changes_nothing_records_nothing(store: SessionStore) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(say("user", "short"), say("assistant", "tiny"))
    result = log.compact(Compactor(CompactionConfig(token_threshold=10_000)), fields=FIELDS)
    assert result.receipt.status == "noop"
    assert store.compactions("s") == []
    assert log.seqs == (1, 2)


def test_compact_uses_the_sessions_model_and_dialect(store: SessionStore) -> None:
    # `log.compact(compactor)` with no fields must keep an Anthropic session valid for
    # Anthropic (no two user messages in a row) and count with the session's model.
    log = SessionLog.open(store, "a", model="claude-sonnet-4-5", dialect="anthropic")
    log.append(*coding_session(12, dialect="anthropic").messages)
    result = log.compact(Compactor(CompactionConfig(keep_recent_n=4)), target_tokens=1500)
    assert result.receipt.status == "compacted"
    assert (result.conversation.model, result.conversation.dialect) == (
        "claude-sonnet-4-5",
        "anthropic",
    )
    assert get_dialect("anthropic").validate(log.conversation()) == []
    assert log.conversation(model="other").model == "other", "given fields win"


def test_record_needs_this_logs_current_view(store: SessionStore) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    stale = log.conversation(**FIELDS)
    compactor = Compactor(CompactionConfig(keep_recent_n=0, strategies=(MaskStrategy(),)))
    result = compactor.compact(stale, force=True)
    log.append(say("assistant", "meanwhile"))
    with pytest.raises(ValueError, match="current view"):
        log.record(stale, result)
    assert store.compactions("s") == []


def test_recall_and_original_through_the_log(store: SessionStore) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    log.compact(
        Compactor(CompactionConfig(keep_recent_n=2, strategies=(MaskStrategy(),))),
        force=True,
        fields=FIELDS,
    )
    other = SessionLog.open(store, "other")
    other.append(say("user", "unrelated"))
    (hit,) = log.recall("7f3a9c21")
    assert log.original(hit.seq) == tool_session()[hit.seq - 1]
    assert other.recall("7f3a9c21") == []


# -- sync (the proxy's path) ------------------------------------------------------------------


def test_sync_appends_only_what_is_new(store: SessionStore) -> None:
    history = tool_session()
    log = SessionLog.open(store, "s")
    assert log.sync(history[:5]) == 5
    assert log.sync(history[:5]) == 0
    assert log.sync(history) == len(history) - 5
    assert [m for _, m in store.messages("s")] == history
    assert store.digests("s") == [fingerprint(m) for m in history]


def test_sync_after_a_compaction_compares_with_the_full_history(store: SessionStore) -> None:
    history = tool_session()
    log = SessionLog.open(store, "s", **FIELDS)
    log.sync(history)
    compactor = Compactor(CompactionConfig(keep_recent_n=2, strategies=(MaskStrategy(),)))
    log.compact(compactor, force=True, fields=FIELDS)
    # The client still sends its full, uncompacted history plus the new message.
    assert log.sync([*history, say("assistant", "Up.")]) == 1
    assert log.messages[-1] == say("assistant", "Up.")
    fresh = SessionLog.open(store, "s")
    assert fresh.sync([*history, say("assistant", "Up."), say("user", "ok")], verify=True) == 1


@pytest.mark.parametrize(
    ("edit", "index"),
    [
        (lambda h: h[:3], 3),  # rewound: fewer messages than logged
        (lambda h: [say("system", "Another prompt."), *h[1:], say("assistant", "new")], 0),
        (lambda h: [*h[:-1], say("user", "Is it down?"), say("assistant", "new")], 15),
    ],
    ids=["rewound", "first-edited", "last-edited"],
)
def test_sync_refuses_a_diverged_history_and_writes_nothing(
    store: SessionStore, edit: object, index: int
) -> None:
    history = tool_session()
    log = SessionLog.open(store, "s")
    log.sync(history)
    changed = edit(history)  # type: ignore[operator]
    before = store.digests("s")
    with pytest.raises(HistoryDivergedError) as caught:
        log.sync(changed)
    assert caught.value.index == index
    assert f"{index}" in str(caught.value)
    assert store.digests("s") == before
    assert len(log.messages) == len(history)


def test_verify_catches_an_edit_in_the_middle(store: SessionStore) -> None:
    history = tool_session()
    log = SessionLog.open(store, "s")
    log.sync(history)
    edited = list(history)
    edited[6] = calls(("l0", "tail_log", {"n": 5}), text="Checking logs, pass 0.")
    with pytest.raises(HistoryDivergedError, match="message 6 differs") as caught:
        log.sync([*edited, say("assistant", "x")], verify=True)
    assert caught.value.index == 6
    assert store.session("s").messages == len(history)
    # Without verify only the ends are compared: cheap, and the edit goes unnoticed.
    assert log.sync([*edited, say("assistant", "x")]) == 1


def test_sync_notices_provider_data_changes(store: SessionStore) -> None:
    # Message equality ignores provider data; the fingerprint does not.
    signed = Message("assistant", (TextPart("ok"),), provider_data={"signature": "abc"})
    log = SessionLog.open(store, "s")
    log.sync([say("user", "hi"), signed])
    resigned = Message("assistant", (TextPart("ok"),), provider_data={"signature": "xyz"})
    assert resigned == signed
    with pytest.raises(HistoryDivergedError):
        log.sync([say("user", "hi"), resigned, say("user", "more")])


def test_a_stale_log_cannot_append_twice_what_another_writer_logged(
    store: SessionStore, path: Path
) -> None:
    first = SessionLog.open(store, "s", **FIELDS)
    first.append(say("user", "one"))
    with open_store(path) as other_store:
        second = SessionLog.open(other_store, "s", create=False)
        second.append(say("assistant", "two"))
    with pytest.raises(LogConflictError, match="ends at message 2, not 1") as caught:
        first.append(say("assistant", "two"))
    assert (caught.value.expected, caught.value.found) == (1, 2)
    assert [m.text for _, m in store.messages("s")] == ["one", "two"]  # nothing written
    again = SessionLog.open(store, "s", create=False)
    assert again.append(say("user", "three")) == [3]
