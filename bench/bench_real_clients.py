"""Real agents through the proxy: time to first byte, direct against the scripted upstream and
through `compaction serve`, for Claude Code, Codex CLI and opencode (`make install-e2e`).

    .venv/bin/python bench/bench_real_clients.py [--repeats N] [--clients claude,codex,opencode]

Each repeat runs every client once directly and once through the proxy, alternating, on the
12-file trail of tests/e2e/test_real_clients.py with the same budget (crossed three times),
each run in a private network namespace where `unshare -rn` works. TTFB is what the client
sees: a relay in front of the client's endpoint notes, per request, the time from the
request's last byte to the response's first. Prints one row per client: version, exit codes,
sessions and compactions per proxied run, TTFB p50 direct and through the proxy, the added
p50 against the budget (+20 ms Claude Code, +10 ms the others), and the share of each
upstream request that repeats the previous one's prefix (and the same share of the client's
own requests, its baseline). Not part of `make bench` (it needs
the npm clients); nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from compaction.proxy.scripted_upstream import measure_request

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.e2e import test_real_clients as e2e  # noqa: E402

BUDGET_MS = {"claude": 20.0, "codex": 10.0, "opencode": 10.0}


def bench_client(name: str, repeats: int) -> dict[str, Any]:
    client = e2e.CLIENTS[name]
    direct_ttfb: list[float] = []
    proxy_ttfb: list[float] = []
    shares: list[float] = []
    own: list[float] = []
    exits: set[tuple[Any, Any]] = set()
    sessions: list[int] = []
    compactions: list[int] = []
    version = "?"
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
        work = Path(tmp)
        (work / "project").mkdir()
        start = e2e.write_trail(work / "project" / "trail")
        prompt = f"Follow the trail of files to its end and tell me the code. TRAIL START: {start}"
        args: list[str] | None = None
        for _ in range(repeats):
            direct = e2e.run_client(client, work, prompt, None)
            plain = e2e.main_requests(direct, client)
            if args is None:
                base = measure_request(client.api, plain[0], validate=False).tokens
                last = measure_request(client.api, plain[-1], validate=False).tokens
                step = (last - base) // e2e.STEPS
                args = ["--token-threshold", str(base + 4 * step)]
                args += ["--max-tokens", str(base + 2 * step)]
            for db in work.glob("proxy-*.db*"):
                db.unlink()
            proxied = e2e.run_client(client, work, prompt, args)
            version = proxied["version"]
            exits.add((direct["exit"], proxied["exit"]))
            direct_ttfb += direct["ttfb"]
            proxy_ttfb += proxied["ttfb"]
            runs = [s for s in proxied["status"]["sessions"] if s["requests"] > 1]
            sessions.append(len(runs))
            compactions += [s["compactions"] for s in runs]
            shares += e2e.identical_prefix_share(client.api, e2e.main_requests(proxied, client))
            own += e2e.identical_prefix_share(
                client.api, e2e.main_requests(proxied, client, "client_requests")
            )
    direct_p50, proxy_p50 = e2e.p50_ms(direct_ttfb), e2e.p50_ms(proxy_ttfb)
    return {
        "client": name,
        "model": client.model,
        "version": version,
        "exits (direct, proxy)": sorted(exits),
        "sessions per run": sorted(set(sessions)),
        "compactions per run": sorted(set(compactions)),
        "ttfb_p50_ms_direct": round(direct_p50, 1),
        "ttfb_p50_ms_proxy": round(proxy_p50, 1),
        "added_p50_ms": round(proxy_p50 - direct_p50, 1),
        "budget_ms": BUDGET_MS[client.name],
        "ok": proxy_p50 - direct_p50 <= BUDGET_MS[client.name],
        "requests_timed": [len(direct_ttfb), len(proxy_ttfb)],
        "prefix_kept_p50": round(statistics.median(shares), 3) if shares else None,
        "prefix_kept_p50_client": round(statistics.median(own), 3) if own else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clients", default=",".join(e2e.CLIENTS))
    options = parser.parse_args()
    bin_dir = e2e.NODE_DIR / "node_modules/.bin"
    missing = sorted({c.name for c in e2e.CLIENTS.values() if not (bin_dir / c.name).exists()})
    if missing:
        sys.exit(f"{', '.join(missing)} not installed: run `make install-e2e`")
    for name in options.clients.split(","):
        print(json.dumps(bench_client(name, options.repeats)), flush=True)


if __name__ == "__main__":
    main()
