"""Run one real agent (Claude Code, Codex CLI or opencode) once, directly against the scripted
upstream or through `compaction serve`, and write down what happened.

    python tests/e2e/real_clients.py SPEC.json RESULT.json

Everything runs in this process's network namespace: the scripted upstream and the proxy as
subprocesses on 127.0.0.1, a timing relay in a thread (the client talks to it; it measures,
per request, the time from the request's last byte to the response's first byte), and the
client itself with a HOME, config and working directory of its own. The test starts this
script inside a private network namespace (`unshare -rn`) where it can, so nothing the
clients try beyond loopback (telemetry, update checks, model lists) can reach anything; their
documented switches turn those off as well.

The result: the client's exit code, output and version, every request the client sent and
every request the upstream received, the proxy's /compaction/status, and the time to first
byte of each request.

This script must never reach beyond loopback and never leave a process running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zlib
from pathlib import Path
from typing import Any

CLIENT_TIMEOUT_S = 180.0
READY_TIMEOUT_S = 30.0
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# Switches the clients document for telemetry, update checks and other traffic beyond the
# model's endpoint; in a private network namespace they would fail fast anyway.
QUIET_ENV = {
    "claude": {
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_FEEDBACK_SURVEY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    },
    "codex": {"CODEX_DISABLE_TELEMETRY": "1"},
    "opencode": {
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        # The proxy compacts; the client's own compaction and pruning would rewrite the
        # history between requests and make the two runs differ.
        "OPENCODE_DISABLE_AUTOCOMPACT": "1",
        "OPENCODE_DISABLE_PRUNE": "1",
    },
}
API_KEY = "sk-e2e-client-key"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def get_json(url: str) -> Any:
    with _OPENER.open(url, timeout=10.0) as response:
        return json.load(response)


def wait_ready(proc: subprocess.Popen[bytes], url: str, what: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), _OPENER.open(url, timeout=2.0) as response:
            if response.status == 200:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what} not ready at {url}: {log.read_text()[-2000:]}")


def start(cmd: list[str], ready: str, what: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_ready(proc, ready, what, log)
    except BaseException:
        stop(proc)
        raise
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


class RequestReader:
    """HTTP/1.1 requests read back from the bytes a client sent on one connection (bodies
    with a content-length or chunked; gzip and deflate undone), as (path, body) pairs."""

    def __init__(self, out: list[dict[str, Any]]) -> None:
        self.buffer = b""
        self.out = out

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while (request := self._one()) is not None:
            self.out.append(request)

    def _one(self) -> dict[str, Any] | None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = self.buffer[:end].decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])}
        rest = self.buffer[end + 4 :]
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body, used = b"", 0
            while True:
                line_end = rest.find(b"\r\n", used)
                if line_end < 0:
                    return None
                size = int(rest[used:line_end].split(b";")[0], 16)
                if len(rest) < line_end + 2 + size + 2:
                    return None
                body += rest[line_end + 2 : line_end + 2 + size]
                used = line_end + 2 + size + 2
                if size == 0:
                    break
        else:
            used = int(headers.get("content-length", "0"))
            if len(rest) < used:
                return None
            body = rest[:used]
        self.buffer = rest[used:]
        encoding = headers.get("content-encoding", "").lower()
        if encoding in ("gzip", "deflate"):
            body = zlib.decompress(body, 47)
        elif encoding:
            return {"path": head[0].split(" ")[1], "body": None}
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        return {"path": head[0].split(" ")[1].split("?")[0], "body": parsed}


class TimingRelay:
    """A TCP relay on loopback that notes, for each request on each connection, the seconds
    from the last byte the client sent to the first byte the server answered, and reads back
    the requests the client sent (`sent`)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.ttfb: list[float] = []
        self.sent: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TimingRelay:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", self.port)
        )
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        state = {"sent": 0.0, "waiting": False}
        requests = RequestReader(self.sent)

        async def upward() -> None:
            while data := await reader.read(65536):
                state["sent"], state["waiting"] = time.perf_counter(), True
                requests.feed(data)
                up_writer.write(data)
                await up_writer.drain()
            up_writer.close()

        async def downward() -> None:
            while data := await up_reader.read(65536):
                if state["waiting"]:
                    self.ttfb.append(time.perf_counter() - state["sent"])
                    state["waiting"] = False
                writer.write(data)
                await writer.drain()
            writer.close()

        with contextlib.suppress(OSError, asyncio.CancelledError):
            await asyncio.gather(upward(), downward())


def client_command(spec: dict[str, Any], base: str, home: Path) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that point the client at `base`."""
    client, bin_dir, prompt = spec["client"], Path(spec["bin_dir"]), spec["prompt"]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "NO_COLOR": "1",
        **QUIET_ENV[client],
    }
    if client == "claude":
        env |= {"ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": API_KEY}
        cmd = [str(bin_dir / "claude"), "-p", prompt, "--output-format", "json"]
        return [*cmd, "--model", spec["model"]], env
    if client == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            f'model = "{spec["model"]}"\n'
            'model_provider = "scripted"\n'
            "check_for_update_on_startup = false\n"
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{base}/v1"\n'
            'env_key = "SCRIPTED_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        env |= {"CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": API_KEY}
        flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        return [str(bin_dir / "codex"), "exec", *flags, prompt], env
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": f"{base}/v1", "apiKey": API_KEY},
                "models": {spec["model"]: {"name": "Scripted", "tool_call": True}},
            }
        },
        "model": f"scripted/{spec['model']}",
        "autoupdate": False,
        "share": "disabled",
    }
    path = home / "opencode.json"
    path.write_text(json.dumps(config))
    env["OPENCODE_CONFIG"] = str(path)
    return [str(bin_dir / "opencode"), "run", "--model", f"scripted/{spec['model']}", prompt], env


def client_version(spec: dict[str, Any], env: dict[str, str]) -> str:
    binary = str(Path(spec["bin_dir"]) / spec["client"])
    done = subprocess.run(
        [binary, "--version"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    return (done.stdout.strip().splitlines() or ["?"])[-1]


def run(spec: dict[str, Any]) -> dict[str, Any]:
    work = Path(spec["work"])
    arm = "proxy" if spec.get("proxy_args") is not None else "direct"
    home = work / f"home-{spec['client']}-{arm}"
    home.mkdir(parents=True, exist_ok=True)
    upstream_port = free_port()
    upstream_url = f"http://127.0.0.1:{upstream_port}"
    python = spec["python"]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        processes.append(
            start(
                [python, "-m", "compaction.proxy.scripted_upstream", "--port", str(upstream_port)],
                f"{upstream_url}/_config",
                "scripted upstream",
                work / f"upstream-{spec['client']}-{arm}.log",
            )
        )
        target, proxy_url = upstream_port, None
        if arm == "proxy":
            proxy_port = free_port()
            proxy_url = f"http://127.0.0.1:{proxy_port}"
            cmd = [
                *spec["compaction"], "serve",
                "--upstream", upstream_url,
                "--host", "127.0.0.1",
                "--port", str(proxy_port),
                "--store", str(work / f"proxy-{spec['client']}.db"),
                *spec["proxy_args"],
            ]  # fmt: skip
            log = work / f"proxy-{spec['client']}.log"
            processes.append(start(cmd, f"{proxy_url}/compaction/status", "compaction serve", log))
            target = proxy_port
        with TimingRelay(target) as relay:
            cmd, env = client_command(spec, f"http://127.0.0.1:{relay.port}", home)
            version = client_version(spec, env)
            began = time.monotonic()
            try:
                done = subprocess.run(
                    cmd,
                    env=env,
                    cwd=spec["cwd"],
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=CLIENT_TIMEOUT_S,
                    check=False,
                )
                code, out, err = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired as e:
                code, out, err = None, str(e.stdout or ""), f"timed out: {e}"
            seconds = time.monotonic() - began
            ttfb, client_requests = list(relay.ttfb), list(relay.sent)
        return {
            "client": spec["client"],
            "arm": arm,
            "version": version,
            "exit": code,
            "stdout": out,
            "stderr": err[-4000:],
            "seconds": seconds,
            "ttfb": ttfb,
            "requests": get_json(f"{upstream_url}/_requests")["requests"],
            "client_requests": client_requests,
            "status": get_json(f"{proxy_url}/compaction/status") if proxy_url else None,
        }
    finally:
        for proc in reversed(processes):
            stop(proc)


def main(argv: list[str]) -> None:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    if "--netns" in argv[2:]:
        # inside `unshare -rn`: a namespace's loopback starts down
        ip = shutil.which("ip") or "/usr/sbin/ip"
        subprocess.run([ip, "link", "set", "lo", "up"], check=True)
    result = run(json.loads(spec_path.read_text()))
    result_path.write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
