"""Counters, a histogram and a gauge in the Prometheus text format (version 0.0.4).

    compaction_proxy_requests_total{endpoint,status}       requests answered
    compaction_proxy_in_flight                             requests not finished yet
    compaction_proxy_compactions_total{endpoint}           compactions that changed a request
    compaction_proxy_tokens_before_total / _after_total    tokens in and out of compactions
    compaction_proxy_overflow_retries_total{endpoint}      context-length errors retried
    compaction_proxy_upstream_errors_total{kind}           unreachable / timeout / broken stream
    compaction_proxy_upstream_seconds{endpoint}            time to the upstream's response head
    compaction_proxy_replica_info{replica}                 1, naming this process

Every figure is this process's own. Replicas sharing one store each expose theirs: a
scraper labels each target (Prometheus' `instance`), and `sum without (instance)` adds
them up; `compaction_proxy_replica_info` names the replica behind a target as status does.

Everything runs on the event loop (compactions report after their worker thread returns),
so plain integers suffice. Labels are bounded: endpoints are the three APIs and "other".
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Final

LATENCY_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Histogram:
    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value

    @property
    def count(self) -> int:
        return sum(self.counts)


class Metrics:
    def __init__(self, replica: str = "") -> None:
        self.replica = replica
        self.requests: Counter[tuple[str, int]] = Counter()
        self.in_flight = 0
        self.compactions: Counter[str] = Counter()
        self.tokens_before = 0
        self.tokens_after = 0
        self.overflow_retries: Counter[str] = Counter()
        self.invalid_history: Counter[str] = Counter()
        self.upstream_errors: Counter[str] = Counter()
        self.upstream_latency: dict[str, Histogram] = {}

    def observe_upstream(self, endpoint: str, seconds: float) -> None:
        histogram = self.upstream_latency.get(endpoint)
        if histogram is None:
            histogram = self.upstream_latency[endpoint] = Histogram()
        histogram.observe(seconds)

    def compacted(self, endpoint: str, before: int, after: int) -> None:
        self.compactions[endpoint] += 1
        self.tokens_before += before
        self.tokens_after += after

    def render(self) -> str:
        out: list[str] = []

        def family(name: str, kind: str, text: str) -> None:
            out.append(f"# HELP {name} {text}")
            out.append(f"# TYPE {name} {kind}")

        family("compaction_proxy_replica_info", "gauge", "The replica these figures are of.")
        out.append(f'compaction_proxy_replica_info{{replica="{_label(self.replica)}"}} 1')
        family("compaction_proxy_requests_total", "counter", "Requests answered.")
        for (endpoint, status), n in sorted(self.requests.items()):
            out.append(
                f'compaction_proxy_requests_total{{endpoint="{endpoint}",status="{status}"}} {n}'
            )
        family("compaction_proxy_in_flight", "gauge", "Requests in progress.")
        out.append(f"compaction_proxy_in_flight {self.in_flight}")
        family(
            "compaction_proxy_compactions_total", "counter", "Compactions that changed a request."
        )
        for endpoint, n in sorted(self.compactions.items()):
            out.append(f'compaction_proxy_compactions_total{{endpoint="{endpoint}"}} {n}')
        family("compaction_proxy_tokens_before_total", "counter", "Tokens before compactions.")
        out.append(f"compaction_proxy_tokens_before_total {self.tokens_before}")
        family("compaction_proxy_tokens_after_total", "counter", "Tokens after compactions.")
        out.append(f"compaction_proxy_tokens_after_total {self.tokens_after}")
        family(
            "compaction_proxy_overflow_retries_total",
            "counter",
            "Context-length errors answered by compacting harder and retrying.",
        )
        for endpoint, n in sorted(self.overflow_retries.items()):
            out.append(f'compaction_proxy_overflow_retries_total{{endpoint="{endpoint}"}} {n}')
        family(
            "compaction_proxy_invalid_history_total",
            "counter",
            "Over-budget requests forwarded as they came: the client's history broke a rule.",
        )
        for endpoint, n in sorted(self.invalid_history.items()):
            out.append(f'compaction_proxy_invalid_history_total{{endpoint="{endpoint}"}} {n}')
        family("compaction_proxy_upstream_errors_total", "counter", "Upstream failures by kind.")
        for kind, n in sorted(self.upstream_errors.items()):
            out.append(f'compaction_proxy_upstream_errors_total{{kind="{kind}"}} {n}')
        family(
            "compaction_proxy_upstream_seconds",
            "histogram",
            "Time from sending a request upstream to its response head.",
        )
        for endpoint, histogram in sorted(self.upstream_latency.items()):
            running = 0
            for bound, n in zip(histogram.buckets, histogram.counts, strict=False):
                running += n
                out.append(
                    f'compaction_proxy_upstream_seconds_bucket{{endpoint="{endpoint}",'
                    f'le="{bound:g}"}} {running}'
                )
            out.append(
                f'compaction_proxy_upstream_seconds_bucket{{endpoint="{endpoint}",le="+Inf"}} '
                f"{histogram.count}"
            )
            out.append(
                f'compaction_proxy_upstream_seconds_sum{{endpoint="{endpoint}"}} '
                f"{histogram.total:.6f}"
            )
            out.append(
                f'compaction_proxy_upstream_seconds_count{{endpoint="{endpoint}"}} '
                f"{histogram.count}"
            )
        return "\n".join(out) + "\n"


def _label(value: str) -> str:
    """`value` as a label value of the text format (backslash, quote and newline escaped)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
