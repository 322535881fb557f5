"""Claude Code, Codex CLI and opencode, the real programs from npm (`make install-e2e` puts
them in .e2e-node/), through `compaction serve` in front of the scripted upstream.

Each client follows a trail of 12 files (`compaction.proxy.scripted_trail`): the scripted
model calls the client's own read tool on each in turn, then answers with the code written in
the last one. The client runs twice, directly against the scripted upstream and through the
proxy, with a budget set from the direct run's own first request so that the session crosses
it at least three times. Both runs happen inside a private network namespace where
`unshare -rn` works (see real_clients.py), with the clients' telemetry and update checks off.

Asserted for each client: exit 0 and the same final answer both ways; every upstream request
valid by an independent check (written here, not the library's validators); compaction
happened at least three times; the latest tool result and the user's first message verbatim
in every upstream request; one session, one branch, for the run. Measured and printed: time
to first byte p50 both ways, and the share of each upstream request that repeats the previous
one's prefix (what keeps a provider's prompt cache hitting).
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compaction.proxy.scripted_trail import ANSWER_PREFIX
from compaction.proxy.scripted_upstream import Api, measure_request
from compaction.tokens import counter_for_model

from .conftest import _unavailable, compaction_command

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("real_clients.py")
NODE_DIR = Path(os.environ.get("COMPACTION_E2E_NODE_DIR", REPO / ".e2e-node"))
STEPS = 12
LINES = 60
CODE = "the code is 7741"
ANSWER = ANSWER_PREFIX + CODE
RUN_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Client:
    name: str  # the binary in node_modules/.bin
    api: Api  # the scripted upstream's name for its API
    path: str  # the endpoint it calls
    model: str


CLIENTS = {
    # claude-sonnet-5: a model Claude Code sends mid-conversation system turns to; with
    # claude-sonnet-4-5 its reminders are text blocks of the user's turns instead
    "claude": Client("claude", "messages", "/v1/messages", "claude-sonnet-5"),
    "claude-sonnet-4-5": Client("claude", "messages", "/v1/messages", "claude-sonnet-4-5"),
    "codex": Client("codex", "responses", "/v1/responses", "scripted-model"),
    "opencode": Client("opencode", "chat", "/v1/chat/completions", "scripted-model"),
}


@functools.cache
def netns() -> bool:
    """Whether this user can make a private network namespace with loopback up."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or "/usr/sbin/ip"
    if unshare is None or not Path(ip).exists():
        return False
    done = subprocess.run(
        [unshare, "-rn", ip, "link", "set", "lo", "up"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return done.returncode == 0


def write_trail(directory: Path) -> Path:
    """STEPS files, each naming the next; the last holds the code."""
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(1, STEPS + 1):
        lines = [
            f"step {i} line {k}: value_{i}_{k} = {i * k}  # build log output" for k in range(LINES)
        ]
        last = f"NEXT: {directory}/step{i + 1:02d}.txt" if i < STEPS else f"TRAIL END: {CODE}"
        (directory / f"step{i:02d}.txt").write_text("\n".join([*lines, last]) + "\n")
    return directory / "step01.txt"


def run_client(
    client: Client, work: Path, prompt: str, proxy_args: list[str] | None
) -> dict[str, Any]:
    arm = "direct" if proxy_args is None else "proxy"
    spec = {
        "client": client.name,
        "bin_dir": str(NODE_DIR / "node_modules" / ".bin"),
        "model": client.model,
        "prompt": prompt,
        "work": str(work),
        "cwd": str(work / "project"),
        "python": sys.executable,
        "compaction": compaction_command(),
        "proxy_args": proxy_args,
    }
    spec_path, result_path = work / f"{client.name}-{arm}.json", work / f"{client.name}-{arm}.out"
    spec_path.write_text(json.dumps(spec))
    cmd = [sys.executable, str(RUNNER), str(spec_path), str(result_path)]
    if netns():
        cmd = ["unshare", "-rn", *cmd, "--netns"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    assert done.returncode == 0, f"the {arm} run of {client.name} broke: {done.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(result_path.read_text())
    return result


def main_requests(
    result: dict[str, Any], client: Client, key: str = "requests"
) -> list[dict[str, Any]]:
    """The bodies of the agent's own model requests (tools declared), oldest first, as the
    upstream received them (or, with key="client_requests", as the client sent them); side
    requests (title generation, quota checks) left out."""
    return [
        r["body"]
        for r in result[key]
        if r["path"] == client.path and isinstance(r["body"], dict) and r["body"].get("tools")
    ]


# -- what a request contains, read independently of the library's dialects --------------------


def history(api: str, body: dict[str, Any]) -> list[Any]:
    items = body["input" if api == "responses" else "messages"]
    assert isinstance(items, list)
    return items


def first_user(api: str, body: dict[str, Any], *, typed: bool = False) -> Any:
    """The first user item (with `typed`, the first the user typed: the one holding the
    prompt, after any context the client adds), without the item id Codex gives it anew in
    every run."""
    for item in history(api, body):
        if item.get("role") == "user" and (not typed or "TRAIL START" in json.dumps(item)):
            return {k: v for k, v in item.items() if k != "id"}
    return None


def latest_tool_result(api: str, body: dict[str, Any]) -> Any:
    """The content of the newest tool result, None when the request has none."""
    found = None
    for item in history(api, body):
        if api == "chat" and item.get("role") == "tool":
            found = item["content"]
        elif api == "responses" and item.get("type") == "function_call_output":
            found = item["output"]
        elif api == "messages" and isinstance(item.get("content"), list):
            for block in item["content"]:
                if block.get("type") == "tool_result":
                    found = block["content"]
    return found


def violations(api: str, body: dict[str, Any]) -> list[str]:
    """Breaks of the rules each API states for tool calls and turns."""
    items, found = history(api, body), []
    if api == "responses":
        calls: set[str] = set()
        for n, item in enumerate(items):
            if item.get("type") == "function_call":
                calls.add(item["call_id"])
            elif item.get("type") == "function_call_output":
                if item["call_id"] not in calls:
                    found.append(f"input[{n}]: output for unknown call {item['call_id']}")
                calls.discard(item["call_id"])
        return found + [f"call {c} has no output" for c in calls]
    if api == "chat":
        open_calls: set[str] = set()
        for n, item in enumerate(items):
            role = item.get("role")
            if role == "tool":
                if item.get("tool_call_id") not in open_calls:
                    found.append(f"messages[{n}]: tool result answers no open call")
                open_calls.discard(item.get("tool_call_id"))
                continue
            if open_calls:
                found.append(f"messages[{n}]: calls {sorted(open_calls)} left unanswered")
                open_calls = set()
            if role == "assistant":
                open_calls = {c["id"] for c in item.get("tool_calls") or []}
            if role not in ("system", "user", "assistant"):
                found.append(f"messages[{n}]: unknown role {role!r}")
        return found + ([f"calls {sorted(open_calls)} unanswered at the end"] if open_calls else [])
    turns = [i for i in items if i.get("role") != "system"]
    if not turns or turns[0].get("role") != "user":
        found.append("the first turn is not the user's")
    marks = json.dumps([body.get("system"), body.get("tools"), items]).count('"cache_control"')
    if marks > 4:
        found.append(f"{marks} cache_control breakpoints; the API takes at most 4")
    for n, item in enumerate(items):
        content = item.get("content")
        if not content:
            found.append(f"messages[{n}]: empty content")
        uses = [
            b["id"] for b in content if isinstance(content, list) and b.get("type") == "tool_use"
        ]
        if not uses:
            continue
        after = items[n + 1] if n + 1 < len(items) else {}
        answered = {
            b.get("tool_use_id")
            for b in after.get("content") or []
            if isinstance(b, dict) and b.get("type") == "tool_result"
        }
        if after.get("role") != "user" or set(uses) - answered:
            found.append(f"messages[{n}]: tool_use not answered in the next message")
    return found


def identical_prefix_share(api: str, bodies: list[dict[str, Any]]) -> list[float]:
    """For each request after the first: the tokens of its history that repeat the previous
    request's from the start, over the previous request's history tokens."""
    counter = counter_for_model("gpt-4o", offline=True)

    def tokens(item: Any) -> int:
        return counter.count_text(json.dumps(item, sort_keys=True))

    shares = []
    for before, after in itertools.pairwise(bodies):
        old, new = history(api, before), history(api, after)
        same = 0
        for a, b in zip(old, new, strict=False):
            if a != b:
                break
            same += tokens(a)
        shares.append(same / max(1, sum(tokens(i) for i in old)))
    return shares


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000 if samples else float("nan")


@pytest.fixture(scope="module")
def installed() -> Path:
    bin_dir = NODE_DIR / "node_modules" / ".bin"
    missing = [c.name for c in CLIENTS.values() if not (bin_dir / c.name).exists()]
    if missing:
        _unavailable(
            f"e2e: {', '.join(missing)} not installed in {bin_dir}; run `make install-e2e` "
            "(npm installs @anthropic-ai/claude-code, @openai/codex and opencode-ai there)"
        )
    return bin_dir


@pytest.mark.parametrize("name", list(CLIENTS))
def test_real_client_through_the_proxy(
    name: str, installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = CLIENTS[name]
    (tmp_path / "project").mkdir()
    start = write_trail(tmp_path / "project" / "trail")
    prompt = f"Follow the trail of files to its end and tell me the code. TRAIL START: {start}"

    direct = run_client(client, tmp_path, prompt, None)
    assert direct["exit"] == 0, direct["stderr"]
    assert ANSWER in direct["stdout"]
    plain = main_requests(direct, client)
    assert len(plain) == STEPS + 1
    # The budget, from what this client version sends: its first request is the floor,
    # each step adds one file's worth; compact at four steps above the floor, down to two.
    base = measure_request(client.api, plain[0], validate=False).tokens
    last = measure_request(client.api, plain[-1], validate=False).tokens
    step = (last - base) // STEPS
    threshold, target = base + 4 * step, base + 2 * step
    args = ["--token-threshold", str(threshold), "--max-tokens", str(target)]

    proxied = run_client(client, tmp_path, prompt, args)
    assert proxied["exit"] == 0, proxied["stderr"]
    assert ANSWER in proxied["stdout"]
    sent = main_requests(proxied, client)
    asked = main_requests(proxied, client, "client_requests")
    assert len(sent) == len(asked) == len(plain)
    for n, (body, original) in enumerate(zip(sent, asked, strict=True)):
        assert violations(client.api, body) == [], f"request {n}"
        assert first_user(client.api, body) == first_user(client.api, original), f"request {n}"
        typed = first_user(client.api, body, typed=True)
        assert typed is not None and typed == first_user(client.api, original, typed=True)
        assert latest_tool_result(client.api, body) == latest_tool_result(client.api, original)
        if n:
            assert latest_tool_result(client.api, body) is not None
    sessions = [s for s in proxied["status"]["sessions"] if s["requests"] > 1]
    assert len(sessions) == 1, sessions
    session = sessions[0]
    assert session["branches"] == 1
    assert session["requests"] == len(sent)
    assert session["compactions"] >= 3
    assert any(len(json.dumps(b)) < len(json.dumps(o)) for b, o in zip(sent, asked, strict=True))

    shares = identical_prefix_share(client.api, sent)
    own = identical_prefix_share(client.api, asked)
    row = {
        "client": name,
        "model": client.model,
        "version": proxied["version"],
        "direct_exit": direct["exit"],
        "proxy_exit": proxied["exit"],
        "sessions": len(sessions),
        "branches": session["branches"],
        "compactions": session["compactions"],
        "ttfb_p50_ms_direct": round(p50_ms(direct["ttfb"]), 1),
        "ttfb_p50_ms_proxy": round(p50_ms(proxied["ttfb"]), 1),
        "prefix_kept_p50": round(statistics.median(shares), 3),
        "prefix_kept_min": round(min(shares), 3),
        "prefix_kept_p50_client": round(statistics.median(own), 3),
        "netns": netns(),
    }
    report = os.environ.get("COMPACTION_E2E_REPORT")
    if report:
        with Path(report).open("a") as out:
            out.write(json.dumps(row) + "\n")
    with capsys.disabled():
        print(f"\nreal client: {json.dumps(row)}")
