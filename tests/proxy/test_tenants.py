"""Tenants: a session belongs to the key that opened it (a hash of the client's key, or of
`--upstream-key`), and what a session says is shown only to that key or an admin token;
status and metrics give counts and token figures only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction.config import CompactionConfig
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import FunctionProvider

from .conftest import running
from .test_compaction import POLICY, chat, chat_history

pytestmark = pytest.mark.anyio

WORDS = "the-users-own-words-7Q"
SUMMARIZING = CompactionConfig(
    token_threshold=3000,
    max_tokens=2000,
    keep_recent_n=3,
    strategies=[{"kind": "summarize"}, {"kind": "truncate"}],
)


def quoting_summarizer() -> FunctionProvider:
    """A summarizer whose summaries quote the user's words, as real ones do."""

    def summarize(request: CompletionRequest) -> dict[str, Any]:
        return {"summary": f"The user said {WORDS}.", "kept_facts": [WORDS], "next_steps": []}

    return FunctionProvider(summarize, name="quoting")


def history_with_words(turns: int) -> list[dict[str, Any]]:
    history = chat_history(turns)
    history[1] = {"role": "user", "content": f"{history[1]['content']} Remember {WORDS}."}
    return history


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}", "x-compaction-session": "work"}


async def compact_once(h: Any, key: str) -> None:
    history = history_with_words(12)
    for extra in range(2):
        history = [*history, *chat_history(1, start=12 + extra)]
        response = await h.client.post(
            "/v1/chat/completions", json=chat(history), headers=bearer(key)
        )
        assert response.status_code == 200


async def test_status_and_metrics_show_figures_never_content() -> None:
    async with running(compaction=SUMMARIZING, summarizer=quoting_summarizer()) as h:
        await compact_once(h, "sk-tenant-A")
        assert WORDS in h.upstream.last.body.decode()  # the summary went upstream …
        status = await h.client.get("/compaction/status")
        metrics = await h.client.get("/metrics")
        assert status.status_code == metrics.status_code == 200
        assert WORDS not in status.text and WORDS not in metrics.text  # … not to the status
        (session,) = status.json()["sessions"]
        assert session["id"] == "work"
        assert session["compactions"] >= 1 and session["tokens_before"] > session["tokens_after"]
        receipt = session["last_receipt"]
        assert receipt["status"] == "compacted" and receipt["tokens_after"] > 0
        assert "summaries" not in receipt and "notes" not in receipt


async def test_a_sessions_content_is_shown_to_its_own_key_or_the_admin_token() -> None:
    async with running(
        compaction=SUMMARIZING, summarizer=quoting_summarizer(), admin_token="admin-T0KEN"
    ) as h:
        await compact_once(h, "sk-tenant-A")
        own = await h.client.get("/compaction/sessions/work", headers=bearer("sk-tenant-A"))
        assert own.status_code == 200
        assert WORDS in " ".join(own.json()["last_receipt"]["summaries"])
        for headers in (bearer("sk-tenant-B"), {}, bearer("admin-T0KEN-wrong")):
            other = await h.client.get("/compaction/sessions/work", headers=headers)
            assert other.status_code == 404
            assert WORDS not in other.text
        log = (await h.client.get("/compaction/status")).json()["sessions"][0]["log"]
        admin = await h.client.get(f"/compaction/sessions/{log}", headers=bearer("admin-T0KEN"))
        assert admin.status_code == 200
        assert WORDS in json.dumps(admin.json())


async def test_two_keys_under_one_session_id_never_share_history() -> None:
    async with running(compaction=POLICY) as h:
        await compact_once(h, "sk-tenant-A")
        theirs = chat(chat_history(2))
        response = await h.client.post(
            "/v1/chat/completions", json=theirs, headers=bearer("sk-tenant-B")
        )
        assert response.status_code == 200
        assert json.loads(h.upstream.last.body) == theirs  # B's own request, not A's view
        sessions = (await h.client.get("/compaction/status")).json()["sessions"]
        assert sorted(s["id"] for s in sessions) == ["work", "work"]
        assert all(s["branches"] == 1 for s in sessions)
        logs = {s["log"] for s in sessions}
        assert len(logs) == 2
        for log in logs:
            assert "branch_of" not in h.store.session(log).meta
        # A again: its own session, extended, not a branch.
        history = [*history_with_words(12), *chat_history(3, start=12)]
        await h.client.post(
            "/v1/chat/completions", json=chat(history), headers=bearer("sk-tenant-A")
        )
        sessions = (await h.client.get("/compaction/status")).json()["sessions"]
        assert all(s["branches"] == 1 for s in sessions)


async def test_without_a_client_key_the_upstream_key_names_the_tenant() -> None:
    async with running(compaction=POLICY, upstream_key="sk-upstream-1") as h:
        body = chat(chat_history(1))
        headers = {"x-compaction-session": "work"}
        await h.client.post("/v1/chat/completions", json=body, headers=headers)
        first = (await h.client.get("/compaction/status")).json()["sessions"][0]["log"]
    async with running(compaction=POLICY, upstream_key="sk-upstream-2", store=h.store) as h2:
        await h2.client.post("/v1/chat/completions", json=body, headers=headers)
        second = (await h2.client.get("/compaction/status")).json()["sessions"][0]["log"]
    assert first != second
    assert "sk-upstream" not in first + second
