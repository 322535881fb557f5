"""GET /compaction/status (per session) and GET /metrics (Prometheus text)."""

from __future__ import annotations

import re

import pytest

from .conftest import chat_body, running
from .test_compaction import POLICY, chat, chat_history

pytestmark = pytest.mark.anyio


async def test_status_reports_each_session() -> None:
    async with running(compaction=POLICY) as h:
        await h.client.post(
            "/v1/chat/completions",
            json=chat(chat_history(1)),
            headers={"x-compaction-session": "small"},
        )
        history = chat_history(12)
        for extra in range(2):
            history = [*history, *chat_history(1, start=12 + extra)]
            await h.client.post(
                "/v1/chat/completions", json=chat(history), headers={"x-compaction-session": "big"}
            )
        status = await h.status()
        assert status["count"] == 2
        by_id = {s["id"]: s for s in status["sessions"]}
        small, big = by_id["small"], by_id["big"]
        assert (small["requests"], small["compactions"], small["last_receipt"]) == (1, 0, None)
        assert small["last_tokens_after"] == small["last_tokens_before"] > 0
        assert big["requests"] == 2
        assert big["compactions"] >= 1
        assert big["tokens_before"] > big["tokens_after"] > 0
        assert big["last_tokens_after"] == big["last_tokens_before"] < 3000  # view + new turn
        receipt = big["last_receipt"]
        assert receipt["status"] == "compacted"
        assert {"tokens_before", "tokens_after", "steps", "trigger"} <= set(receipt)
        assert "archive" not in receipt
        assert big["api"] == "openai" and big["model"] == "gpt-4o"


async def test_metrics_in_prometheus_text_format() -> None:
    async with running(compaction=POLICY) as h:
        await h.client.post("/v1/chat/completions", json=chat(chat_history(12)))
        await h.client.post("/v1/chat/completions", json=chat_body(1, stream=True))
        await h.client.post("/v1/chat/completions", content=b"{")
        await h.client.get("/v1/models")
        response = await h.client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = response.text
        assert 'compaction_proxy_requests_total{endpoint="openai",status="200"} 2' in text
        assert 'compaction_proxy_requests_total{endpoint="openai",status="400"} 1' in text
        assert 'compaction_proxy_requests_total{endpoint="other",status="200"} 1' in text
        assert "compaction_proxy_in_flight 1" in text  # this very request
        assert 'compaction_proxy_compactions_total{endpoint="openai"} 1' in text
        before = int(re.search(r"compaction_proxy_tokens_before_total (\d+)", text).group(1))  # type: ignore[union-attr]
        after = int(re.search(r"compaction_proxy_tokens_after_total (\d+)", text).group(1))  # type: ignore[union-attr]
        assert before > after > 0
        assert 'compaction_proxy_upstream_seconds_bucket{endpoint="openai",le="+Inf"} 2' in text
        assert 'compaction_proxy_upstream_seconds_count{endpoint="other"} 1' in text
        for line in text.splitlines():
            assert line.startswith("#") or re.match(r"^[a-z_]+(\{[^}]*\})? [0-9.e+-]+$", line), line


async def test_replicas_on_one_store_report_the_same_status(store_location: str) -> None:
    """Two proxies, each with its own store object on one database, sessions alternating
    between them: either one's status has every session with every request, compaction and
    token figure, its last receipt included; each names itself in status and metrics."""
    from compaction.store import open_store

    with open_store(store_location) as store_a, open_store(store_location) as store_b:
        async with (
            running(compaction=POLICY, store=store_a, replica="a") as a,
            running(compaction=POLICY, store=store_b, replica="b") as b,
        ):
            for name, first in (("one", a), ("two", b)):
                history = chat_history(12)
                for turn in range(3):
                    history = [*history, *chat_history(1, start=12 + turn)]
                    replica = first if turn % 2 == 0 else (b if first is a else a)
                    response = await replica.client.post(
                        "/v1/chat/completions",
                        json=chat(history),
                        headers={"x-compaction-session": name},
                    )
                    assert response.status_code == 200
            status_a, status_b = await a.status(), await b.status()
            metrics_a = (await a.client.get("/metrics")).text
            own = [(await r.client.get("/compaction/sessions/one")).json() for r in (a, b)]
    assert (status_a.pop("replica"), status_b.pop("replica")) == ("a", "b")
    assert status_a == status_b
    by_id = {s["id"]: s for s in status_a["sessions"]}
    assert set(by_id) == {"one", "two"} and status_a["count"] == 2
    for session in by_id.values():
        assert (session["requests"], session["branches"]) == (3, 1)
        assert session["compactions"] >= 1
        assert session["tokens_before"] > session["tokens_after"] > 0
        assert session["last_receipt"]["status"] == "compacted"
    assert 'compaction_proxy_replica_info{replica="a"} 1' in metrics_a
    assert own[0] == own[1], "the session's own view, from either replica"
    assert own[0]["requests"] == 3 and own[0]["last_receipt"]["summaries"]


def test_a_replica_name_is_escaped_in_metrics() -> None:
    from compaction.proxy.metrics import Metrics

    text = Metrics(replica='host "x"\\1\n').render()
    assert 'compaction_proxy_replica_info{replica="host \\"x\\"\\\\1\\n"} 1' in text
