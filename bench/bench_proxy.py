"""Benchmarks for the proxy (issue 5): what `compaction serve` costs a request that needs no
compaction, against calling the upstream directly, and the same for ctxkeeper.

Real processes on loopback: the scripted upstream (`compaction.proxy.scripted_upstream`, a
deterministic OpenAI/Anthropic-compatible server), `compaction serve` in front of it and, when
the `ctxkeeper` package is installed (`pip install 'llm-compaction[bench]'`), ctxkeeper in front
of the same upstream with its default settings. ctxkeeper speaks only Chat Completions, so the
comparison is on /v1/chat/completions; our proxy's Responses and Anthropic paths get latency
rows of their own.

1. Added latency, p50 and p99, of a small non-streamed request sent one at a time over a
   keep-alive connection, each proxy interleaved with direct calls (direct, proxy, direct, …)
   so background load hits both alike. Target: ≤ 2 ms added at p50.
2. Time to first streamed byte and to the first text delta, with the upstream waiting
   DELAY_MS before each text chunk: a proxy that passes events on as they arrive adds well
   under one chunk's delay; one that buffers adds the whole reply. Target: under one chunk's
   delay added to the first text delta. Each stream starts after the servers sat idle
   through the previous ones, and a process woken from idle answers slower than a busy one:
   the added latency of a non-streamed request sent after IDLE_S of quiet is the yardstick
   for the first byte (the back-to-back figures of 1. are not).
3. Sustained requests per second with CLIENTS concurrent clients (httpx.AsyncClient, one
   conversation each) for SECONDS seconds. Target: more than ctxkeeper.
4. CPU per request that needs no compaction (issue 11, item 14): the CPU time (user +
   system, from /proc) each server process spent over CPU_ROUNDS requests sent one at a
   time, per request; the proxies against the upstream's own and ours against ctxkeeper's.
   Target: ≤ CPU_BUDGET_MS, and throughput with CLIENTS clients ≥ 1.5× ctxkeeper's.
5. A large request does not hold up the others (issue 11, item 12): a small session sends
   requests one after another, first alone, then while other sessions each send one
   HEAVY_BYTES message (decoded, counted, logged and compacted by the proxy). Added latency
   of the small session's requests during the heavy ones (p50 and worst) against its own
   p50 alone, through `compaction serve`. Target: worst < HEAVY_DELAY_BUDGET_MS.
6. Load (issue 11, "must show"): LOAD_SESSIONS concurrent sessions, each sending LOAD_TURNS
   turns in sequence, its history growing by a user turn (and, in every LOAD_HEAVY_EVERY-th
   session, a tool result of LOAD_TOOL_LINES log lines every other turn) and the reply each
   time. The heavy sessions cross LOAD_THRESHOLD tokens and compact. The same load goes to
   the upstream directly, to `compaction serve` on a SQLite store and to one on a PostgreSQL
   store (a pgserver of this run; skipped without the dev extra), LOAD_ROUNDS times in turn
   (fresh sessions each time) so background load hits all alike. Rows: per store, p50 and
   p99 per request against direct's, the requests, the compactions (from /metrics) and the
   errors. Target: 0 errors and at least one compaction; the latency figures are reported.

The load generator shares the machine with the servers, so throughput figures are those of
the whole loopback system. The upstream and `compaction serve` run on uvloop and httptools
when the server extra installed them (uvicorn falls back to asyncio and h11 without).
Nothing here is a test: a miss is reported, not raised. This module must never reach beyond
loopback.

Run standalone: `python bench/bench_proxy.py` prints a table (`… heavy`, `… cpu`, `… load`:
one measurement alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench_store import postgres
from rows import row

logger = logging.getLogger("bench.proxy")

MODEL = "gpt-4o-mini"
ADDED_P50_BUDGET_MS = 2.0
LATENCY_ROUNDS = 400
OTHER_API_ROUNDS = 200
WARMUP_ROUNDS = 40
DELAY_MS = 20.0  # the upstream's wait before each text chunk, for the streaming measurement
REPLY_WORDS = 12  # padding words: the streamed reply has 20 text chunks, about 400 ms
STREAM_ROUNDS = 15
IDLE_S = 0.2  # the quiet before each request of the "after idle" latency row
IDLE_ROUNDS = 15
CLIENTS = 16
CPU_ROUNDS = 1500
CPU_BUDGET_MS = 1.5
THROUGHPUT_VS_PEER = 1.5
HEAVY_BYTES = 5 * 1024 * 1024
HEAVY_REQUESTS = 3
HEAVY_DELAY_BUDGET_MS = 50.0
SECONDS = 4.0
LOAD_SESSIONS = 50
LOAD_TURNS = 20
LOAD_ROUNDS = 5
LOAD_HEAVY_EVERY = 5  # every 5th session carries tool output and crosses the budget
LOAD_TOOL_LINES = 24  # about 500 tokens per tool result
LOAD_THRESHOLD = 4000
LOAD_MAX_TOKENS = 3000
STARTUP_TIMEOUT_S = 30.0
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

SYSTEM = "You are a careful coding agent. Answer briefly."
TURNS = [
    ("user", "The test suite fails on test_rounding with 344 != 345; what is going on?"),
    ("assistant", "The serializer truncates milliseconds instead of rounding half up."),
    ("user", "Fix it in fields.py and keep the public API unchanged."),
    ("assistant", "Done: _serialize now uses round-half-up; the test passes."),
    ("user", "Now run the whole suite and summarise any remaining failures."),
]


def chat_body(conversation: str, *, stream: bool = False) -> dict[str, Any]:
    messages = [{"role": "system", "content": SYSTEM}]
    messages += [{"role": r, "content": f"[{conversation}] {t}"} for r, t in TURNS]
    body: dict[str, Any] = {"model": MODEL, "messages": messages, "max_tokens": 64}
    if stream:
        body["stream"] = True
    return body


def anthropic_body(conversation: str) -> dict[str, Any]:
    messages = [{"role": r, "content": f"[{conversation}] {t}"} for r, t in TURNS]
    return {"model": "claude-scripted", "system": SYSTEM, "messages": messages, "max_tokens": 64}


def responses_body(conversation: str) -> dict[str, Any]:
    items = [{"role": r, "content": f"[{conversation}] {t}"} for r, t in TURNS]
    return {"model": MODEL, "instructions": SYSTEM, "input": items, "max_output_tokens": 64}


# -- processes ----------------------------------------------------------------------------------


@dataclass
class Server:
    name: str
    url: str  # origin, "http://127.0.0.1:PORT"
    session_header: str | None  # the header that names a conversation, if the server has one
    proc: subprocess.Popen[bytes]
    log: Path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _start(cmd: list[str], ready_path: str, port: int, log: Path, name: str) -> Server:
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}; log {log}:\n{_tail(log)}")
        try:
            with _OPENER.open(url + ready_path, timeout=2.0) as resp:
                if resp.status == 200:
                    return Server(name, url, None, proc, log)
        except OSError:
            time.sleep(0.1)
    _stop(proc)
    raise RuntimeError(
        f"{name} not ready after {STARTUP_TIMEOUT_S:.0f} s; log {log}:\n{_tail(log)}"
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def _compaction_command() -> list[str]:
    script = Path(sys.executable).with_name("compaction")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from compaction.cli import main; main()"]


def _ctxkeeper_command() -> list[str] | None:
    script = Path(sys.executable).with_name("ctxkeeper")
    if script.exists():
        return [str(script)]
    found = shutil.which("ctxkeeper")
    return [found] if found else None


def serve(upstream: Server, store: str, log: Path, *options: str) -> Server:
    """`compaction serve` in front of `upstream` on a free loopback port, with `store`."""
    port = _free_port()
    ours = _start(
        [
            *_compaction_command(), "serve",
            "--upstream", upstream.url,
            "--anthropic-upstream", upstream.url,
            "--host", "127.0.0.1", "--port", str(port),
            "--store", store,
            *options,
        ],
        "/compaction/status", port, log, "compaction serve",
    )  # fmt: skip
    ours.session_header = "X-Compaction-Session"
    return ours


@contextlib.contextmanager
def servers(workdir: Path) -> Iterator[dict[str, Server]]:
    """The scripted upstream, `compaction serve` and (if installed) ctxkeeper, all on loopback."""
    started: list[Server] = []
    # The servers inherit it: nothing here may download a tokenizer.
    os.environ.setdefault("COMPACTION_OFFLINE", "1")
    try:
        port = _free_port()
        upstream = _start(
            [sys.executable, "-m", "compaction.proxy.scripted_upstream", "--port", str(port)],
            "/_config", port, workdir / "upstream.log", "scripted upstream",
        )  # fmt: skip
        started.append(upstream)
        found = {"direct": upstream}

        ours = serve(upstream, str(workdir / "compaction.db"), workdir / "compaction-serve.log")
        started.append(ours)
        found["compaction serve"] = ours

        command = _ctxkeeper_command()
        if command is None:
            logger.warning("ctxkeeper is not installed (pip install ctxkeeper): no comparison")
        else:
            port = _free_port()
            # ctxkeeper answers GET /ctxkeeper/status itself; its default settings otherwise.
            theirs = _start(
                [
                    *command,
                    "--upstream", upstream.url,
                    "--host", "127.0.0.1", "--port", str(port),
                    "--state-dir", str(workdir / "ctxkeeper"),
                ],
                "/ctxkeeper/status", port, workdir / "ctxkeeper.log", "ctxkeeper",
            )  # fmt: skip
            theirs.session_header = "X-Ctx-Session"
            started.append(theirs)
            found["ctxkeeper"] = theirs
        yield found
    finally:
        for server in reversed(started):
            _stop(server.proc)


def _configure(upstream: Server, **settings: Any) -> None:
    req = urllib.request.Request(
        upstream.url + "/_config",
        data=json.dumps(settings).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    with _OPENER.open(req, timeout=10.0):
        pass


# -- measurements -------------------------------------------------------------------------------


def _headers(
    server: Server, conversation: str, extra: dict[str, str] | None = None
) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}
    if server.session_header:
        headers[server.session_header] = conversation
    return {**headers, **(extra or {})}


def _percentile(values: list[float], pct: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]


def latencies_ms(
    targets: dict[str, Server],
    path: str,
    body: Callable[[str], dict[str, Any]],
    rounds: int,
    extra_headers: dict[str, str] | None = None,
) -> dict[str, list[float]]:
    """One request at a time per target, interleaved round by round; milliseconds each."""
    clients = {name: httpx.Client(trust_env=False, timeout=30.0) for name in targets}
    times: dict[str, list[float]] = {name: [] for name in targets}
    payloads = {
        name: (json.dumps(body("latency")).encode(), _headers(s, "latency", extra_headers))
        for name, s in targets.items()
    }
    try:
        for i in range(WARMUP_ROUNDS + rounds):
            for name, server in targets.items():
                content, headers = payloads[name]
                start = time.perf_counter()
                resp = clients[name].post(server.url + path, content=content, headers=headers)
                elapsed = (time.perf_counter() - start) * 1000
                if resp.status_code != 200:
                    raise RuntimeError(f"{name}: {resp.status_code} {resp.text[:300]}")
                if i >= WARMUP_ROUNDS:
                    times[name].append(elapsed)
    finally:
        for client in clients.values():
            client.close()
    return times


@dataclass
class StreamTiming:
    first_byte_ms: float
    first_text_ms: float
    total_ms: float


def _stream_once(client: httpx.Client, server: Server, content: bytes) -> StreamTiming:
    headers = _headers(server, "stream")
    start = time.perf_counter()
    first_byte = first_text = None
    buffer = b""
    with client.stream(
        "POST", server.url + "/v1/chat/completions", content=content, headers=headers
    ) as resp:
        if resp.status_code != 200:
            resp.read()
            raise RuntimeError(f"{server.name}: {resp.status_code} {resp.text[:300]}")
        for chunk in resp.iter_raw():
            now = (time.perf_counter() - start) * 1000
            if first_byte is None:
                first_byte = now
            if first_text is None:
                buffer += chunk
                # The first text chunk is "scripted " (the fingerprint is "scripted", no space).
                if b'"scripted ' in buffer:
                    first_text = now
    total = (time.perf_counter() - start) * 1000
    if first_byte is None or first_text is None:
        raise RuntimeError(f"{server.name}: the stream carried no text")
    return StreamTiming(first_byte, first_text, total)


def idle_latencies_ms(targets: dict[str, Server], rounds: int) -> dict[str, list[float]]:
    """Non-streamed requests, each after IDLE_S with no traffic; milliseconds each."""
    clients = {name: httpx.Client(trust_env=False, timeout=30.0) for name in targets}
    content = json.dumps(chat_body("idle")).encode()
    times: dict[str, list[float]] = {name: [] for name in targets}
    try:
        for i in range(rounds + 1):
            for name, server in targets.items():
                time.sleep(IDLE_S)
                start = time.perf_counter()
                resp = clients[name].post(
                    server.url + "/v1/chat/completions",
                    content=content,
                    headers=_headers(server, "idle"),
                )
                elapsed = (time.perf_counter() - start) * 1000
                if resp.status_code != 200:
                    raise RuntimeError(f"{name}: {resp.status_code} {resp.text[:300]}")
                if i:  # the first round warms connections up
                    times[name].append(elapsed)
    finally:
        for client in clients.values():
            client.close()
    return times


def _idle_rows(times: dict[str, list[float]], proxies: list[str]) -> list[dict[str, Any]]:
    base = statistics.median(times["direct"])
    rows = []
    for proxy in proxies:
        value = statistics.median(times[proxy])
        rows.append(
            row(
                f"proxy chat latency after {IDLE_S * 1000:g} ms idle, no compaction: {proxy} "
                f"({value - base:+.2f} ms)",
                value=value,
                unit="ms",
                baseline_name="direct to the upstream, after the same idle time",
                baseline_value=base,
                budget="info",
                ok=True,
                added_ms=round(value - base, 3),
            )
        )
    return rows


def stream_timings(targets: dict[str, Server], rounds: int) -> dict[str, list[StreamTiming]]:
    content = json.dumps(chat_body("stream", stream=True)).encode()
    clients = {name: httpx.Client(trust_env=False, timeout=60.0) for name in targets}
    timings: dict[str, list[StreamTiming]] = {name: [] for name in targets}
    try:
        for i in range(rounds + 1):
            for name, server in targets.items():
                timing = _stream_once(clients[name], server, content)
                if i:  # the first round warms connections up
                    timings[name].append(timing)
    finally:
        for client in clients.values():
            client.close()
    return timings


@dataclass
class Throughput:
    per_second: float  # requests answered 200 per second
    failed: int  # requests that got another status or no answer (connection reset, …)


async def _throughput(server: Server, clients: int, seconds: float) -> Throughput:
    """Requests per second over `seconds`, `clients` conversations sending back to back."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(trust_env=False, timeout=60.0, limits=limits) as client:
        url = server.url + "/v1/chat/completions"
        payloads = [
            (json.dumps(chat_body(f"client-{i}")).encode(), _headers(server, f"client-{i}"))
            for i in range(clients)
        ]

        async def worker(index: int, until: float, done: list[int], failed: list[int]) -> None:
            content, headers = payloads[index]
            while time.perf_counter() < until:
                try:
                    resp = await client.post(url, content=content, headers=headers)
                except httpx.TransportError as e:
                    logger.debug("%s: %r", server.name, e)
                    failed[index] += 1
                    continue
                if resp.status_code == 200:
                    done[index] += 1
                else:
                    failed[index] += 1

        warm = time.perf_counter() + 0.5
        await asyncio.gather(
            *(worker(i, warm, [0] * clients, [0] * clients) for i in range(clients))
        )
        done, failed = [0] * clients, [0] * clients
        start = time.perf_counter()
        until = start + seconds
        await asyncio.gather(*(worker(i, until, done, failed) for i in range(clients)))
        return Throughput(sum(done) / (time.perf_counter() - start), sum(failed))


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def agent_body(conversation: str) -> dict[str, Any]:
    """A request shaped like a coding agent's (about 40 KB): a long system prompt, 20 tool
    schemas and 60 earlier messages."""
    body = chat_body(conversation)
    body["messages"][0]["content"] = "You are a coding agent; follow the repository rules. " * 250
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
    }
    body["tools"] = [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": "Does one thing. " * 20,
                "parameters": schema,
            },
        }
        for i in range(20)
    ]
    for i in range(30):
        body["messages"].append({"role": "assistant", "content": f"Step {i} done. " * 30})
        body["messages"].append({"role": "user", "content": f"Good, continue with {i + 1}. " * 20})
    return body


def cpu_per_request_ms(
    server: Server,
    upstream: Server,
    rounds: int = CPU_ROUNDS,
    body: Callable[[str], dict[str, Any]] = chat_body,
    session_header: bool = True,
) -> float:
    """CPU milliseconds the process of `server` spends per chat request of `body`'s shape
    (without a session header when `session_header` is False, as most agents send them)."""
    content = json.dumps(body("cpu")).encode()
    headers = _headers(server, "cpu")
    if not session_header and server.session_header:
        headers.pop(server.session_header)
    url = server.url + "/v1/chat/completions"
    with httpx.Client(trust_env=False, timeout=30.0) as client:
        for _ in range(WARMUP_ROUNDS):
            client.post(url, content=content, headers=headers)
        before = _cpu_seconds(server.proc.pid)
        for _ in range(rounds):
            resp = client.post(url, content=content, headers=headers)
            if resp.status_code != 200:
                raise RuntimeError(f"{server.name}: {resp.status_code} {resp.text[:300]}")
        return (_cpu_seconds(server.proc.pid) - before) * 1000 / rounds


def _cpu_rows(
    cpu: dict[str, float], proxies: list[str], shape: str = "small"
) -> list[dict[str, Any]]:
    rows = []
    for proxy in proxies:
        targeted = proxy == "compaction serve"
        rows.append(
            row(
                f"proxy CPU per {shape} chat request, no compaction: {proxy}",
                value=cpu[proxy],
                unit="ms",
                baseline_name="the upstream's own CPU per request",
                baseline_value=cpu["direct"],
                budget=f"≤{CPU_BUDGET_MS:g} ms" if targeted else "info",
                ok=cpu[proxy] <= CPU_BUDGET_MS if targeted else True,
                rounds=CPU_ROUNDS,
            )
        )
    if "ctxkeeper" in cpu:
        rows.append(
            row(
                f"proxy CPU per {shape} chat request, no compaction: compaction serve vs ctxkeeper",
                value=cpu["compaction serve"],
                unit="ms",
                baseline_name="ctxkeeper in front of the same upstream",
                baseline_value=cpu["ctxkeeper"],
                budget="≤1×",
                ok=cpu["compaction serve"] <= cpu["ctxkeeper"],
            )
        )
    return rows


def heavy_body(conversation: str, size: int = HEAVY_BYTES) -> dict[str, Any]:
    """A chat request whose one tool result is `size` bytes of log-like lines."""
    lines, total, n = [], 0, 0
    while total < size:
        item = n * 7919 % 100003
        line = f"{n:07d} worker-{n % 97} handled /api/v{n % 5}/items/{item} in {n % 887} ms"
        lines.append(line)
        total += len(line) + 1
        n += 1
    call = {
        "id": "call_big",
        "type": "function",
        "function": {"name": "read_log", "arguments": "{}"},
    }
    messages = [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"[{conversation}] Read the service log and find the slow calls.",
        },
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_big", "content": "\n".join(lines)},
        {"role": "user", "content": "Which calls took longest?"},
    ]
    return {"model": MODEL, "messages": messages, "max_tokens": 64}


@dataclass
class HeavyDelay:
    alone_ms: list[float]  # the small session's requests with nothing else going on
    during_ms: list[float]  # the same while the heavy requests were being handled
    heavy_ms: list[float]  # each heavy request, sent to answered


def heavy_delay(server: Server, rounds: int = 60, small_to: Server | None = None) -> HeavyDelay:
    """The small session's latencies alone, then during HEAVY_REQUESTS heavy requests (one
    at a time, each a new session) sent from another thread. `small_to`: where the small
    session goes (default: `server` too)."""
    import threading

    small = json.dumps(chat_body("small")).encode()
    heavy = [
        json.dumps(heavy_body(f"heavy-{i}-{time.time_ns()}")).encode()
        for i in range(HEAVY_REQUESTS)
    ]
    url = server.url + "/v1/chat/completions"
    done = threading.Event()
    heavy_ms: list[float] = []

    def send_heavy() -> None:
        with httpx.Client(trust_env=False, timeout=300.0) as client:
            for i, content in enumerate(heavy):
                start = time.perf_counter()
                resp = client.post(url, content=content, headers=_headers(server, f"heavy-{i}"))
                heavy_ms.append((time.perf_counter() - start) * 1000)
                if resp.status_code != 200:
                    logger.warning("heavy request: %s %s", resp.status_code, resp.text[:200])
        done.set()

    small_server = small_to or server
    small_url = small_server.url + "/v1/chat/completions"
    with httpx.Client(trust_env=False, timeout=300.0) as client:
        headers = _headers(small_server, "small")

        def one() -> float:
            start = time.perf_counter()
            resp = client.post(small_url, content=small, headers=headers)
            if resp.status_code != 200:
                raise RuntimeError(f"{server.name}: {resp.status_code} {resp.text[:300]}")
            return (time.perf_counter() - start) * 1000

        for _ in range(WARMUP_ROUNDS):
            one()
        alone = [one() for _ in range(rounds)]
        thread = threading.Thread(target=send_heavy)
        thread.start()
        during = []
        while not done.is_set():
            during.append(one())
        thread.join()
    return HeavyDelay(alone, during, heavy_ms)


def _heavy_rows(measured: HeavyDelay, proxy: str) -> list[dict[str, Any]]:
    base = statistics.median(measured.alone_ms)
    rows = []
    for label, value in (
        ("p50", statistics.median(measured.during_ms)),
        ("worst", max(measured.during_ms)),
    ):
        added = value - base
        targeted = label == "worst"
        rows.append(
            row(
                f"proxy: a small session during {HEAVY_BYTES // 2**20} MB requests, "
                f"{label}: {proxy} ({added:+.1f} ms)",
                value=value,
                unit="ms",
                baseline_name="the same small session alone, p50",
                baseline_value=base,
                budget=f"<+{HEAVY_DELAY_BUDGET_MS:g} ms" if targeted else "info",
                ok=added < HEAVY_DELAY_BUDGET_MS if targeted else True,
                added_ms=round(added, 3),
                samples=len(measured.during_ms),
                heavy_requests_ms=[round(t) for t in measured.heavy_ms],
            )
        )
    return rows


# -- load: many sessions, many turns ------------------------------------------------------------

LOAD_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_log",
            "description": "Read the next batch of the service log.",
            "parameters": {"type": "object", "properties": {"batch": {"type": "integer"}}},
        },
    }
]


def load_tool_output(session: int, turn: int) -> str:
    """LOAD_TOOL_LINES log-like lines, different for every session and turn."""
    first = (session * LOAD_TURNS + turn) * LOAD_TOOL_LINES
    return "\n".join(
        f"{n:06d} worker-{n % 7} GET /api/v{n % 3}/items/{n * 7919 % 10007} 200 in {n % 97} ms"
        for n in range(first, first + LOAD_TOOL_LINES)
    )


def load_turn(conversation: str, session: int, turn: int) -> list[dict[str, Any]]:
    """What the client adds to a session's history before its request `turn`: a user turn
    and, in a heavy session every other turn, a tool call and its result."""
    added: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": f"[{conversation}] Step {turn}: check the next batch of the log and "
            "tell me which endpoints are slow and why.",
        }
    ]
    if session % LOAD_HEAVY_EVERY == 0 and turn % 2 == 1:
        call_id = f"call_{session}_{turn}"
        arguments = json.dumps({"batch": turn})
        function = {"name": "read_log", "arguments": arguments}
        call = {"id": call_id, "type": "function", "function": function}
        added += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": load_tool_output(session, turn)},
        ]
    return added


@dataclass
class Load:
    latencies_ms: list[float]  # every request answered 200, sent to answered
    errors: int  # requests that got another status or no answer (the session stops there)


async def _load(
    client: httpx.AsyncClient, server: Server, label: str, turns: int = LOAD_TURNS
) -> Load:
    """LOAD_SESSIONS sessions at once, each sending `turns` requests one after another."""
    url = server.url + "/v1/chat/completions"
    measured = Load([], 0)

    async def session(index: int) -> None:
        conversation = f"{label}-{index}"
        headers = _headers(server, conversation)
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        for turn in range(turns):
            messages += load_turn(conversation, index, turn)
            body = {"model": MODEL, "messages": messages, "tools": LOAD_TOOLS, "max_tokens": 64}
            content = json.dumps(body).encode()
            start = time.perf_counter()
            try:
                resp = await client.post(url, content=content, headers=headers)
            except httpx.TransportError as e:
                logger.warning("%s, %s turn %d: %r", server.name, conversation, turn, e)
                measured.errors += 1
                return
            elapsed = (time.perf_counter() - start) * 1000
            if resp.status_code != 200:
                logger.warning(
                    "%s, %s turn %d: %s %s",
                    server.name, conversation, turn, resp.status_code, resp.text[:300],
                )  # fmt: skip
                measured.errors += 1
                return
            measured.latencies_ms.append(elapsed)
            reply = resp.json()["choices"][0]["message"]
            messages.append({"role": "assistant", "content": reply["content"]})

    await asyncio.gather(*(session(i) for i in range(LOAD_SESSIONS)))
    return measured


def _compactions(server: Server) -> int:
    """The compactions `server` made so far, summed over endpoints (from /metrics)."""
    with _OPENER.open(server.url + "/metrics", timeout=10.0) as resp:
        text = resp.read().decode()
    return sum(
        int(float(line.rpartition(" ")[2]))
        for line in text.splitlines()
        if line.startswith("compaction_proxy_compactions_total{")
    )


async def load_runs(targets: dict[str, Server]) -> dict[str, Load]:
    """The same load sent to every target, LOAD_ROUNDS times in turn with fresh sessions,
    after a short warm-up that also opens every connection (a client per target, kept):
    the latencies and errors of all rounds together."""
    limits = httpx.Limits(max_connections=LOAD_SESSIONS, max_keepalive_connections=LOAD_SESSIONS)
    found = {name: Load([], 0) for name in targets}
    async with contextlib.AsyncExitStack() as stack:
        clients = {
            name: await stack.enter_async_context(
                httpx.AsyncClient(trust_env=False, timeout=120.0, limits=limits)
            )
            for name in targets
        }
        for name, server in targets.items():
            await _load(clients[name], server, f"warm-{name}", turns=2)
        for r in range(LOAD_ROUNDS):
            for name, server in targets.items():
                measured = await _load(clients[name], server, f"load-{r}-{name}")
                found[name].latencies_ms += measured.latencies_ms
                found[name].errors += measured.errors
    return found


def load(upstream: Server, workdir: Path) -> list[dict[str, Any]]:
    """Item 6: the rows of the load on each store (see the module docstring)."""
    budget = ["--token-threshold", str(LOAD_THRESHOLD), "--max-tokens", str(LOAD_MAX_TOKENS)]
    # The upstream keeps every request it gets: at LOAD_ROUNDS × 3,000 bodies it need not.
    _configure(upstream, max_records=100)
    with postgres(workdir) as pg_url:
        stores = {"SQLite": str(workdir / "load.db")}
        if pg_url is not None:
            stores["PostgreSQL"] = pg_url
        proxies: dict[str, Server] = {}
        try:  # the proxies stop before their PostgreSQL does
            for store, location in stores.items():
                log = workdir / f"load-serve-{store}.log"
                proxies[store] = serve(upstream, location, log, *budget)
            measured = asyncio.run(load_runs({"direct": upstream, **proxies}))
            compactions = {store: _compactions(server) for store, server in proxies.items()}
            for store, server in proxies.items():
                if measured[store].errors:  # the log goes with the temporary directory
                    logger.warning(
                        "%s store, log but INFO lines:\n%s", store, _not_info(server.log)
                    )
        finally:
            for server in proxies.values():
                _stop(server.proc)
            _configure(upstream, max_records=10_000)
    return _load_rows(measured, compactions)


def _not_info(path: Path, lines: int = 60) -> str:
    """The last `lines` lines of a log but its INFO ones (a compaction each, under load)."""
    kept = [line for line in _tail(path, 100_000).splitlines() if not line.startswith("INFO ")]
    return "\n".join(kept[-lines:])


def _load_rows(measured: dict[str, Load], compactions: dict[str, int]) -> list[dict[str, Any]]:
    direct = measured["direct"]
    rows = []
    for store, count in compactions.items():
        ours = measured[store]
        for pct in (50, 99):
            value = _percentile(ours.latencies_ms, pct)
            base = _percentile(direct.latencies_ms, pct)
            added = value - base
            rows.append(
                row(
                    f"proxy load {LOAD_SESSIONS}×{LOAD_TURNS}, {store} store, p{pct}: "
                    f"compaction serve ({added:+.1f} ms)",
                    value=value,
                    unit="ms",
                    baseline_name=f"the same load direct to the upstream, p{pct}",
                    baseline_value=base,
                    budget="0 errors",
                    ok=ours.errors == 0 and direct.errors == 0 and count > 0,
                    added_ms=round(added, 3),
                    requests=len(ours.latencies_ms) + ours.errors,
                    compactions=count,
                    errors=ours.errors,
                    direct_errors=direct.errors,
                    rounds=LOAD_ROUNDS,
                )
            )
    return rows


# -- rows ---------------------------------------------------------------------------------------


def _latency_rows(
    times: dict[str, list[float]], api: str, proxies: list[str]
) -> list[dict[str, Any]]:
    direct = times["direct"]
    rows = []
    for proxy in proxies:
        for pct in (50, 99):
            value = _percentile(times[proxy], pct)
            base = _percentile(direct, pct)
            added = value - base
            targeted = proxy == "compaction serve" and pct == 50
            rows.append(
                row(
                    f"proxy {api} latency p{pct}, no compaction: {proxy} ({added:+.2f} ms)",
                    value=value,
                    unit="ms",
                    baseline_name=f"direct to the upstream, p{pct}",
                    baseline_value=base,
                    budget=f"≤+{ADDED_P50_BUDGET_MS:g} ms" if targeted else "info",
                    ok=added <= ADDED_P50_BUDGET_MS if targeted else True,
                    added_ms=round(added, 3),
                    samples=len(times[proxy]),
                )
            )
    return rows


def _stream_rows(
    timings: dict[str, list[StreamTiming]], proxies: list[str]
) -> list[dict[str, Any]]:
    rows = []
    direct = timings["direct"]
    for proxy in proxies:
        for label, pick in (
            ("first byte", lambda t: t.first_byte_ms),
            ("first text delta", lambda t: t.first_text_ms),
        ):
            value = statistics.median(pick(t) for t in timings[proxy])
            base = statistics.median(pick(t) for t in direct)
            added = value - base
            targeted = proxy == "compaction serve" and label == "first text delta"
            rows.append(
                row(
                    f"proxy streamed chat, time to {label}: {proxy} ({added:+.1f} ms)",
                    value=value,
                    unit="ms",
                    baseline_name=f"direct to the upstream, time to {label}",
                    baseline_value=base,
                    budget=f"<+{DELAY_MS:g} ms" if targeted else "info",
                    ok=added < DELAY_MS if targeted else True,
                    added_ms=round(added, 3),
                    whole_stream_ms=round(statistics.median(t.total_ms for t in timings[proxy]), 1),
                    chunk_delay_ms=DELAY_MS,
                )
            )
    return rows


def run() -> list[dict[str, Any]]:
    """Every measurement as rows (see the module docstring); ratios are against the upstream
    called directly in the same run, and ours against ctxkeeper for throughput."""
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp, servers(Path(tmp)) as found:
        upstream = found["direct"]
        proxies = [name for name in found if name != "direct"]
        # Each proxy interleaved with its own direct baseline: ctxkeeper's ~45 ms requests
        # would otherwise slow the direct calls measured between them.
        rows = []
        for proxy in proxies:
            pair = {"direct": upstream, proxy: found[proxy]}
            rows += _latency_rows(
                latencies_ms(pair, "/v1/chat/completions", chat_body, LATENCY_ROUNDS),
                "chat",
                [proxy],
            )
        ours = {"direct": upstream, "compaction serve": found["compaction serve"]}
        rows += _latency_rows(
            latencies_ms(ours, "/v1/responses", responses_body, OTHER_API_ROUNDS),
            "responses",
            ["compaction serve"],
        )
        rows += _latency_rows(
            latencies_ms(
                ours,
                "/v1/messages",
                anthropic_body,
                OTHER_API_ROUNDS,
                {"anthropic-version": "2023-06-01", "x-api-key": "sk-bench"},
            ),
            "messages",
            ["compaction serve"],
        )

        _configure(upstream, delay_ms=DELAY_MS, reply_words=REPLY_WORDS)
        try:
            rows += _stream_rows(stream_timings(found, STREAM_ROUNDS), proxies)
        finally:
            _configure(upstream, delay_ms=0, reply_words=0)
        rows += _idle_rows(idle_latencies_ms(found, IDLE_ROUNDS), proxies)

        cpu = {name: cpu_per_request_ms(s, upstream) for name, s in found.items()}
        rows += _cpu_rows(cpu, proxies)
        cpu = {
            name: cpu_per_request_ms(s, upstream, 500, agent_body, session_header=False)
            for name, s in found.items()
        }
        rows += _cpu_rows(cpu, proxies, "40 KB agent-shaped (no session header)")
        rows += _heavy_rows(heavy_delay(found["compaction serve"]), "compaction serve")
        rows += load(upstream, Path(tmp))

        measured = {
            name: asyncio.run(_throughput(s, CLIENTS, SECONDS)) for name, s in found.items()
        }
        rps = {name: t.per_second for name, t in measured.items()}
        for proxy in proxies:
            rows.append(
                row(
                    f"proxy chat throughput, {CLIENTS} clients: {proxy}",
                    value=rps[proxy],
                    unit="req/s",
                    baseline_name="direct to the upstream",
                    baseline_value=rps["direct"],
                    budget="info",
                    ok=True,
                    failed=measured[proxy].failed,
                    direct_failed=measured["direct"].failed,
                )
            )
        if "ctxkeeper" in rps:
            rows.append(
                row(
                    f"proxy chat throughput, {CLIENTS} clients: compaction serve vs ctxkeeper",
                    value=rps["compaction serve"],
                    unit="req/s",
                    baseline_name="ctxkeeper in front of the same upstream",
                    baseline_value=rps["ctxkeeper"],
                    budget=f"≥{THROUGHPUT_VS_PEER:g}×",
                    ok=rps["compaction serve"] >= THROUGHPUT_VS_PEER * rps["ctxkeeper"]
                    and measured["compaction serve"].failed == 0,
                    failed=measured["compaction serve"].failed,
                    baseline_failed=measured["ctxkeeper"].failed,
                )
            )
    return rows


def _print_table(rows: list[dict[str, Any]]) -> None:
    headers = ("name", "value", "baseline", "ratio", "budget", "ok")
    lines = [
        (
            row["name"],
            f"{row['value']:.2f} {row['unit']}",
            f"{row['baseline_value']:.2f} {row['unit']}",
            f"{row['ratio']:.3f}×",
            row["budget"],
            "ok" if row["ok"] else "MISS",
        )
        for row in rows
    ]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)))


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="note: %(message)s")
    logger.setLevel(logging.INFO)
    if sys.argv[1:] == ["heavy"]:  # item 5 alone
        with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp, servers(Path(tmp)) as found:
            _print_table(_heavy_rows(heavy_delay(found["compaction serve"]), "compaction serve"))
    elif sys.argv[1:] == ["load"]:  # item 6 alone
        with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp, servers(Path(tmp)) as found:
            rows = load(found["direct"], Path(tmp))
            _print_table(rows)
            for each in rows[::2]:
                print(
                    f"{each['name'].partition(', p50')[0]}: {each['requests']} requests, "
                    f"{each['compactions']} compactions, {each['errors']} errors "
                    f"(direct: {each['direct_errors']} errors)"
                )
    elif sys.argv[1:] == ["cpu"]:  # item 4's CPU rows alone
        with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp, servers(Path(tmp)) as found:
            proxies = [name for name in found if name != "direct"]
            cpu = {name: cpu_per_request_ms(s, found["direct"]) for name, s in found.items()}
            rows = _cpu_rows(cpu, proxies)
            cpu = {
                name: cpu_per_request_ms(s, found["direct"], 500, agent_body, session_header=False)
                for name, s in found.items()
            }
            _print_table(rows + _cpu_rows(cpu, proxies, "40 KB agent-shaped (no session header)"))
    else:
        _print_table(run())
