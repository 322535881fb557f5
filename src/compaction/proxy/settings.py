"""`ProxySettings`: where the upstreams are, the compaction policy, limits and keys.

Keys are kept out of `repr` so that a settings object logged by mistake shows no secret.
This module must never read the environment or files: the command line does that.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from compaction.config import CompactionConfig
from compaction.proxy.work import DEFAULT_THRESHOLD, DEFAULT_WORKERS

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024


def default_policy() -> CompactionConfig:
    """Compact at 80% of the model's context window (for models the registry knows)."""
    return CompactionConfig(window_fraction=0.8)


@dataclass(frozen=True)
class ProxySettings:
    """Everything `create_app` needs besides the store, the transport and the summarizer.

    `upstream` is the OpenAI-compatible base URL (with or without a trailing `/v1`);
    `anthropic_upstream`, when set, receives `/v1/messages` and every request carrying an
    `anthropic-version` header. `upstream_key`, when set, replaces the client's key toward
    the upstream; `require_key`, when set, is the key clients must present to the proxy;
    `admin_token`, when set, shows any session's content (`GET /compaction/sessions/…`) and
    opens status and metrics. `replica` names this process in status and metrics (default:
    the host name and process id), so that replicas sharing one store tell themselves apart.
    """

    upstream: str
    anthropic_upstream: str | None = None
    compaction: CompactionConfig = field(default_factory=default_policy)
    store: str | None = None
    upstream_key: str | None = field(default=None, repr=False)
    require_key: str | None = field(default=None, repr=False)
    admin_token: str | None = field(default=None, repr=False)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    connect_timeout: float = 10.0
    read_timeout: float = 600.0
    # Seconds the compaction of one request may take, summarizer calls included; never more
    # than `read_timeout` (`deadline`).
    compaction_deadline: float = 120.0
    max_connections: int = 512
    max_keepalive_connections: int = 128
    recall_tool: bool = False
    retry_on_overflow: bool = True
    max_sessions: int = 2048
    # Requests of `offload_bytes` or more have their CPU-heavy steps run in a pool of
    # `workers` threads (`compaction.proxy.work`).
    workers: int = DEFAULT_WORKERS
    offload_bytes: int = DEFAULT_THRESHOLD
    replica: str | None = None

    @property
    def replica_name(self) -> str:
        return self.replica or f"{socket.gethostname()}:{os.getpid()}"

    @property
    def deadline(self) -> float:
        """The seconds a request's compaction may take: `compaction_deadline`, bounded by
        the proxy's own request timeout."""
        return min(self.compaction_deadline, self.read_timeout)
