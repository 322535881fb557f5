"""Tenants: whose a session is, and who may see what of it.

A session belongs to the key its requests carry: the client's own key (`x-api-key` or
`Authorization: Bearer`, never the proxy's `require_key`), else the proxy's
`--upstream-key`, else no key at all. The key is never kept: a short hash of it (`tenant`)
is joined to the session's name to make the session's key in memory and its log id in the
store (`scoped`), so two tenants naming the same session (or sending the same first
messages) have two sessions and never share history.

Status and metrics are for operators: counts and token figures (`public_status`), never a
summary, a note or an error text, which quote the users' words. A session's own content is
shown only to a request carrying its key, or the admin token set at start.

This module must never keep, log or return a key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Final

__all__ = [
    "NO_KEY",
    "client_key",
    "name_of",
    "presented_keys",
    "public_status",
    "receipt_figures",
    "scoped",
    "tenant",
]

# The tenant of requests that carry no key (and a proxy without `--upstream-key`).
NO_KEY: Final = "nokey"
_RECEIPT_FIGURES: Final = (
    "status",
    "trigger",
    "target_tokens",
    "target_met",
    "tokens_before",
    "tokens_after",
    "messages_before",
    "messages_after",
    "protected_tokens",
    "estimated",
    "elapsed_ms",
)
_STEP_FIGURES: Final = ("strategy", "tokens_before", "tokens_after", "messages_affected")
_SUMMARIZER_FIGURES: Final = ("calls", "input_tokens", "output_tokens", "ms")


def presented_keys(headers: Iterable[tuple[str, str]]) -> list[str]:
    """Every key the request carries: `x-api-key` values and `Authorization: Bearer`
    tokens, in header order."""
    keys = []
    for name, value in headers:
        if name == "x-api-key":
            keys.append(value)
        elif name == "authorization" and value[:7].lower() == "bearer ":
            keys.append(value[7:].strip())
    return [k for k in keys if k]


def client_key(headers: Iterable[tuple[str, str]], require_key: str | None) -> str | None:
    """The key the client sends for the upstream: the first it presents that is not the
    proxy's own `require_key`."""
    return next((k for k in presented_keys(headers) if k != require_key), None)


def tenant(
    headers: Iterable[tuple[str, str]], *, upstream_key: str | None, require_key: str | None
) -> str:
    """The tenant of a request: a hash of its client key, else of the upstream key
    (`NO_KEY` without either). 60 bits: two keys share a tenant by chance about once in
    10^18 pairs."""
    key = client_key(headers, require_key) or upstream_key
    if key is None:
        return NO_KEY
    digest = hashlib.sha256(b"compaction tenant\0" + key.encode("utf-8", "surrogateescape"))
    return "k" + digest.hexdigest()[:15]


def scoped(name: str, tenant: str) -> str:
    """The session key of session `name` of `tenant` (a tenant has no `.`, so the name is
    everything before the last one)."""
    return f"{name}.{tenant}"


def name_of(key: str) -> str:
    """The session name a `scoped` key was made from."""
    return key.rpartition(".")[0] or key


def receipt_figures(receipt: dict[str, Any] | None) -> dict[str, Any] | None:
    """A receipt's counts and token figures, without its summaries, notes, reasons or
    errors."""
    if receipt is None:
        return None
    figures: dict[str, Any] = {k: receipt[k] for k in _RECEIPT_FIGURES if k in receipt}
    figures["steps"] = [
        {k: step[k] for k in _STEP_FIGURES if k in step} for step in receipt.get("steps", ())
    ]
    summarizer = receipt.get("summarizer") or {}
    counts = {k: summarizer[k] for k in _SUMMARIZER_FIGURES if k in summarizer}
    figures["summarizer"] = {**counts, "errors": len(summarizer.get("errors", ()))}
    figures["removed"] = len(receipt.get("removed", ()))
    return figures


def public_status(status: dict[str, Any]) -> dict[str, Any]:
    """`Sessions.status()` as anyone allowed to see status may: each session by its name,
    its log id, and figures only."""
    sessions = [
        {**s, "id": name_of(s["id"]), "last_receipt": receipt_figures(s.get("last_receipt"))}
        for s in status["sessions"]
    ]
    return {**status, "sessions": sessions}
