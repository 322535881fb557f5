"""Two `compaction serve` replicas on one PostgreSQL store, no load balancer: one client
sends the requests of several sessions to each replica in turn, several at a time, in front
of the scripted upstream. Whichever replica a caller asks, `/compaction/status` gives the
same figures for every session, and the replicas' `/metrics` add up to what was sent.

Both proxies and the scripted upstream are real processes on loopback (conftest.py); the
store is a schema on the test run's pgserver (skipped without the `postgres` extra).
"""

from __future__ import annotations

import json
import re
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from .conftest import RunningProxy, ScriptedServer

pytestmark = pytest.mark.e2e

SESSIONS = 6
TURNS = 8
CONCURRENCY = 6
BUDGET_ARGS = ("--token-threshold", "1200", "--max-tokens", "800")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _turn_text(session: int, turn: int) -> str:
    return f"Session {session}, turn {turn}: read src/s{session}_{turn}.py. " + " ".join(
        f"w{session}-{turn}-{k}" for k in range(60)
    )


def _post(proxy: RunningProxy, session: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{proxy.openai_base_url}/chat/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": "Bearer sk-replicas",
            "X-Compaction-Session": session,
        },
    )
    with _OPENER.open(request, timeout=60.0) as response:
        assert response.status == 200
        answer: dict[str, Any] = json.load(response)
        return answer


def _run_session(n: int, replicas: list[RunningProxy]) -> int:
    """One agent session of `TURNS` requests, turn t sent to replica (n + t) % 2."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for turn in range(TURNS):
        history.append({"role": "user", "content": _turn_text(n, turn)})
        replica = replicas[(n + turn) % len(replicas)]
        answer = _post(replica, f"replicated-{n}", {"model": "gpt-4o", "messages": history})
        history.append({"role": "assistant", "content": answer["choices"][0]["message"]["content"]})
    return TURNS


def _api_requests(metrics: str) -> int:
    """Requests the three APIs answered, by a replica's /metrics."""
    total = 0
    for line in metrics.splitlines():
        match = re.match(r'compaction_proxy_requests_total\{endpoint="(\w+)",.*\} (\d+)$', line)
        if match and match.group(1) != "other":
            total += int(match.group(2))
    return total


def _metric(metrics: str, name: str) -> int:
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in metrics.splitlines()
        if line.startswith((name + " ", name + "{"))
    )


def _shared_figures(status: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {
        s["id"]: (
            s["log"],
            s["branches"],
            s["requests"],
            s["compactions"],
            s["tokens_before"],
            s["tokens_after"],
            s["last_tokens_before"],
            s["last_tokens_after"],
            json.dumps(s["last_receipt"], sort_keys=True),
        )
        for s in status["sessions"]
    }


def test_two_replicas_on_one_store_report_the_same_status_and_metrics_add_up(
    scripted: ScriptedServer, start_proxy: Any, postgres_location: str
) -> None:
    replicas = [
        start_proxy(scripted.url, "--store", postgres_location, *BUDGET_ARGS) for _ in range(2)
    ]
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        sent = sum(pool.map(lambda n: _run_session(n, replicas), range(SESSIONS)))
    assert sent == SESSIONS * TURNS
    assert len(scripted.requests("/v1/chat/completions")) == sent

    statuses = [replica.status() for replica in replicas]
    first, second = (_shared_figures(s) for s in statuses)
    assert first == second, "both replicas answer the same for every session"
    assert set(first) == {f"replicated-{n}" for n in range(SESSIONS)}
    for figures in first.values():
        _log, branches, requests, compactions, before, after, _, _, receipt = figures
        assert (branches, requests) == (1, TURNS), "one branch; every request counted once"
        assert compactions >= 1 and before > after > 0
        assert json.loads(receipt)["status"] == "compacted"
    assert all(s["count"] == SESSIONS for s in statuses)
    assert {s["replica"] for s in statuses} == {r.url.removeprefix("http://") for r in replicas}

    metrics = [replica.metrics() for replica in replicas]
    assert sum(_api_requests(m) for m in metrics) == sent, "per-replica metrics add up"
    assert all(_api_requests(m) > 0 for m in metrics), "both replicas served requests"
    compactions = sum(_metric(m, "compaction_proxy_compactions_total") for m in metrics)
    assert compactions == sum(f[3] for f in first.values()), "metrics and status agree"
    for replica, text in zip(replicas, metrics, strict=True):
        name = replica.url.removeprefix("http://")
        assert f'compaction_proxy_replica_info{{replica="{name}"}} 1' in text
