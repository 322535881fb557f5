"""`compaction serve`: the drop-in proxy (`compaction.proxy`) under uvicorn.

    compaction serve --upstream https://api.openai.com [--anthropic-upstream URL]
                     [--host 127.0.0.1] [--port 8787] [--config FILE] [--store PATH-or-URL]
                     [--token-threshold N] [--max-tokens N] …

`--config` takes the agent workflow YAML (or a plain compaction config): its top-level
`compact` section is the policy and its `store` the default store; flags override both.
Without any trigger configured, the proxy compacts at 80% of the model's context window.
Keys are best given through the environment (`COMPACTION_UPSTREAM_KEY`,
`COMPACTION_REQUIRE_KEY`, `COMPACTION_ADMIN_TOKEN`, `COMPACTION_SUMMARIZER_KEY`), where
`ps` cannot show them.

SIGINT / SIGTERM stop accepting connections and let in-flight requests (streams included)
finish, for up to `--graceful-timeout` seconds, before the upstream client and the store
are closed. At `--log-level debug` uvicorn's access log is on, with the values of query
parameters that name a secret (`key`, `api_key`, `access_token`, …) written as `***`.
"""

from __future__ import annotations

import logging
import re
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

import click

from compaction.cli.policy import CONFIG_HELP, load_policy, summarizer_call_options
from compaction.cli.transcripts import user_errors
from compaction.config import CompactionConfig
from compaction.providers.base import Provider
from compaction.proxy.settings import DEFAULT_MAX_BODY_BYTES
from compaction.store import store_location

if TYPE_CHECKING:
    import uvicorn

TRIGGERS = ("token_threshold", "window_fraction", "turn_threshold", "message_threshold")


def summarizer_for(
    policy: CompactionConfig, provider: str, base_url: str | None, key: str | None
) -> Provider | None:
    """The summarizer the policy's LLM strategies need (None when they need none)."""
    if not policy.summarizer_strategies:
        return None
    if not policy.model:
        raise click.UsageError(
            "the policy uses an LLM strategy: give --summarizer-model (or `compact.model`)"
        )
    try:
        timeout, retries = policy.summarizer_timeout, policy.summarizer_retries
        if provider == "anthropic":
            from compaction.providers.anthropic import AnthropicProvider

            return AnthropicProvider(
                policy.model, base_url=base_url, api_key=key, timeout=timeout, max_retries=retries
            )
        from compaction.providers.openai import OpenAIProvider

        return OpenAIProvider(
            policy.model, base_url=base_url, api_key=key, timeout=timeout, max_retries=retries
        )
    except ImportError as e:
        raise click.UsageError(str(e)) from None


@click.command("serve")
@click.option("--upstream", required=True, help="OpenAI-compatible base URL (…/v1 or not).")
@click.option(
    "--anthropic-upstream", help="Anthropic base URL for /v1/messages (default: --upstream)."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8787, show_default=True, type=int, help="Port to listen on.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help=CONFIG_HELP,
)
@click.option(
    "--store",
    help="Session store: a path, sqlite:///path, postgresql://… or :memory: (default: per-user).",
)
@click.option(
    "--token-threshold", type=int, help="Compact when a request reaches this many tokens."
)
@click.option("--max-tokens", type=int, help="The most tokens a compacted request may have.")
@click.option(
    "--upstream-key",
    envvar="COMPACTION_UPSTREAM_KEY",
    help="Key sent upstream instead of the client's.",
)
@click.option(
    "--require-key", envvar="COMPACTION_REQUIRE_KEY", help="Key clients must present to the proxy."
)
@click.option(
    "--admin-token",
    envvar="COMPACTION_ADMIN_TOKEN",
    help="Token that shows any session's content (GET /compaction/sessions/LOG-ID).",
)
@click.option(
    "--summarizer-model", help="Compaction model for summarize/sequence (`compact.model`)."
)
@click.option(
    "--summarizer-provider",
    type=click.Choice(["openai", "anthropic"]),
    default="openai",
    show_default=True,
    help="API the summarizer speaks.",
)
@click.option("--summarizer-base-url", help="Summarizer server (default: the upstream).")
@click.option(
    "--summarizer-key",
    envvar="COMPACTION_SUMMARIZER_KEY",
    help="Summarizer key (default: --upstream-key, then the SDK's env).",
)
@summarizer_call_options
@click.option(
    "--compaction-deadline",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds a request's compaction may take, summarizer calls included (at most "
    "--upstream-timeout); past it the digest stands in for the summary.",
)
@click.option(
    "--max-body-bytes",
    type=int,
    default=DEFAULT_MAX_BODY_BYTES,
    show_default=True,
    help="Largest request body accepted (bigger ones get 413).",
)
@click.option(
    "--upstream-timeout",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds to wait for upstream bytes.",
)
@click.option(
    "--connect-timeout",
    type=float,
    default=10.0,
    show_default=True,
    help="Seconds to wait for a connection to the upstream.",
)
@click.option(
    "--recall-tool/--no-recall-tool",
    default=False,
    help="Offer a `recall` tool once a session has compacted.",
)
@click.option(
    "--graceful-timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds in-flight requests get at shutdown.",
)
@click.option(
    "--replica",
    help="This replica's name in status and metrics (default: HOST:PORT, the machine's name "
    "for a wildcard host).",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
    help="Log verbosity (debug also logs each request).",
)
@user_errors
def serve_command(
    upstream: str,
    anthropic_upstream: str | None,
    host: str,
    port: int,
    config_path: str | None,
    store: str | None,
    token_threshold: int | None,
    max_tokens: int | None,
    upstream_key: str | None,
    require_key: str | None,
    admin_token: str | None,
    summarizer_model: str | None,
    summarizer_provider: str,
    summarizer_base_url: str | None,
    summarizer_key: str | None,
    summarizer_timeout: float | None,
    summarizer_retries: int | None,
    compaction_deadline: float,
    max_body_bytes: int,
    upstream_timeout: float,
    connect_timeout: float,
    recall_tool: bool,
    graceful_timeout: float,
    replica: str | None,
    log_level: str,
) -> None:
    """Run the compaction proxy in front of an OpenAI- and/or Anthropic-compatible upstream.

    Point clients at http://HOST:PORT/v1 (OpenAI SDKs) or http://HOST:PORT (Anthropic SDK)."""
    try:
        import uvicorn

        from compaction.proxy import ProxySettings, create_app
        from compaction.proxy.settings import default_policy
    except ImportError as e:
        raise click.UsageError(
            f"the proxy needs the server extra: pip install 'llm-compaction[server]' ({e})"
        ) from None
    policy, config_store = load_policy(config_path) if config_path else (default_policy(), None)
    overrides: dict[str, Any] = {
        "token_threshold": token_threshold,
        "max_tokens": max_tokens,
        "model": summarizer_model,
        "summarizer_timeout": summarizer_timeout,
        "summarizer_retries": summarizer_retries,
    }
    policy = policy.with_overrides(**overrides)
    if all(getattr(policy, t) is None for t in TRIGGERS) and policy.threshold_chars is None:
        policy = policy.with_overrides(window_fraction=0.8)
    summarizer = summarizer_for(
        policy,
        summarizer_provider,
        summarizer_base_url or _v1(upstream),
        summarizer_key or upstream_key,
    )
    settings = ProxySettings(
        upstream=upstream,
        anthropic_upstream=anthropic_upstream,
        compaction=policy,
        store=store_location(store, config_store),
        upstream_key=upstream_key,
        require_key=require_key,
        admin_token=admin_token,
        max_body_bytes=max_body_bytes,
        connect_timeout=connect_timeout,
        read_timeout=upstream_timeout,
        compaction_deadline=compaction_deadline,
        recall_tool=recall_tool,
        replica=replica or replica_name(host, port),
    )
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request is too much
    app = create_app(settings, summarizer=summarizer)
    config = access_logged_config(
        app, host=host, port=port, log_level=log_level, graceful_timeout=graceful_timeout
    )
    uvicorn.Server(config).run()


def replica_name(host: str, port: int) -> str:
    """The replica's default name: where it listens, with the machine's name in place of a
    wildcard address (which every machine shares)."""
    if host in ("", "0.0.0.0", "::"):
        host = socket.gethostname()
    return f"{host}:{port}"


# Seconds an idle client connection stays open.
KEEP_ALIVE_S = 75


def access_logged_config(
    app: Any, *, host: str, port: int, log_level: str, graceful_timeout: float = 30.0
) -> uvicorn.Config:
    """uvicorn's configuration for the proxy: an access log at `debug` only, with the values
    of query parameters that name a secret redacted (`redact_query`)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=int(graceful_timeout) if graceful_timeout > 0 else None,
        access_log=log_level == "debug",
        lifespan="on",
        # The upstream's `server` header is relayed; uvicorn's own would make it appear twice.
        server_header=False,
        # Longer than the pools of the clients in front (httpx and the SDKs keep idle
        # connections 5 s, as long as uvicorn's default): a client must never send on a
        # connection the proxy is closing just then.
        timeout_keep_alive=KEEP_ALIVE_S,
    )
    # After the Config: building it configures uvicorn's loggers.
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactedQueries) for f in access.filters):
        access.addFilter(RedactedQueries())
    return config


# Query parameters whose name says they carry a secret: `key`, `api_key`, `access_token`, …
_SECRET_NAME = re.compile(r"key|token|secret|passw|auth|sig|credential", re.IGNORECASE)


def redact_query(query: str) -> str:
    """`query` with the value of every parameter whose name names a secret replaced by
    `***` (some clients and gateways send keys as `?key=` or `?api_key=`)."""
    pairs = []
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        secret = equals and value and _SECRET_NAME.search(unquote_plus(name))
        pairs.append(f"{name}=***" if secret else pair)
    return "&".join(pairs)


class RedactedQueries(logging.Filter):
    """Redacts the query string of uvicorn's access-log records, whose arguments are
    (client, method, path with query, HTTP version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path, mark, query = args[2].partition("?")
            if mark:
                record.args = (*args[:2], f"{path}?{redact_query(query)}", *args[3:])
        return True


def _v1(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"
