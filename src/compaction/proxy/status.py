"""What `GET /compaction/status` shows: every session's figures as the store has them, so
that every replica on one database (`--store postgresql://…`) answers the same.

Each request a session served is counted in the store (`SessionStore.record_request`, with
the request's token figures), by whichever replica served it; compactions and their token
sums are the store's records. A session's entry sums its logs (the session's own and its
branches, `meta.branch_of`); `log`, the `last_` figures and `last_receipt` are those of the
log its latest request went to (the receipt of that log's latest compaction; while it has
none, the last one this replica ran, which changed nothing and so is not stored). Sessions
this process holds but the store does not (none was logged yet), and every session while
the store fails, come from memory (`Sessions.status`). One session's entry
(`GET /compaction/sessions/…`, `shared_session`) is built the same way, its whole receipt
included.

`shared_status` returns receipts whole: `tenants.public_status` keeps their figures only,
for status; this module must never decide who may see what.
"""

from __future__ import annotations

import logging
from typing import Any

from compaction.exceptions import StoreError
from compaction.proxy.sessions import Prepared, Sessions
from compaction.store import SessionStore
from compaction.store.base import SessionInfo

__all__ = ["counted_log", "shared_session", "shared_status"]

logger = logging.getLogger("compaction.proxy")


def counted_log(prepared: Prepared) -> str | None:
    """The log a prepared request was logged in (None: none, e.g. a history the proxy
    could not decode on a session's first request)."""
    if prepared.branch is not None:
        return prepared.branch.log.session_id
    session = prepared.session
    if session is not None and session.branches:
        return session.branches[0].log.session_id
    return None


def shared_status(store: SessionStore, local: dict[str, Any], *, limit: int) -> dict[str, Any]:
    """The status of the (at most `limit`) most recent proxy logs in `store`, grouped by
    session, with `last_receipt` from `local` (`Sessions.status()`); `local` alone when the
    store cannot be read."""
    try:
        logs = [info for info in store.sessions(limit) if info.agent == "proxy"]
    except StoreError as e:
        logger.error("session store failed, status shows this replica's sessions only: %s", e)
        return local
    groups: dict[str, list[SessionInfo]] = {}
    for info in logs:  # most recently updated first
        groups.setdefault(_session_key(info), []).append(info)
    mine = {s["id"]: s for s in local["sessions"]}
    try:
        receipts = store.latest_receipts(limit)
    except StoreError as e:
        logger.error("session store failed, status shows this replica's sessions only: %s", e)
        return local
    sessions = [_entry(key, infos, receipts, mine.get(key)) for key, infos in groups.items()]
    sessions += [s for key, s in mine.items() if key not in groups]
    return {"sessions": sessions, "count": len(sessions)}


def shared_session(
    store: SessionStore, sessions: Sessions, keys: list[str], *, limit: int
) -> dict[str, Any] | None:
    """The entry of the first of `keys` (session keys) the store or this replica knows,
    among the `limit` most recent proxy logs; None when neither knows any."""
    try:
        logs = [info for info in store.sessions(limit) if info.agent == "proxy"]
        receipts = store.latest_receipts(limit)
        for key in keys:
            held = sessions.get(key)
            local = None if held is None else held.to_dict()
            infos = [info for info in logs if _session_key(info) == key]
            if infos:
                return _entry(key, infos, receipts, local)
            if local is not None:
                return local
    except StoreError as e:
        logger.error("session store failed, showing this replica's session only: %s", e)
        held = next((h for h in map(sessions.get, keys) if h is not None), None)
        return None if held is None else held.to_dict()
    return None


def _session_key(info: SessionInfo) -> str:
    """The session a log belongs to: its own, or the one it is a branch of."""
    return str(info.meta.get("branch_of") or info.id)


def _entry(
    key: str,
    infos: list[SessionInfo],
    receipts: dict[str, dict[str, Any]],
    local: dict[str, Any] | None,
) -> dict[str, Any]:
    latest = infos[0]
    receipt = receipts.get(latest.id)
    if receipt is None and local is not None:
        receipt = local["last_receipt"]
    return {
        "id": key,
        "api": latest.meta.get("proxy", latest.dialect),
        "model": latest.model,
        "branches": len(infos),
        "log": latest.id,
        "requests": sum(i.requests for i in infos),
        "compactions": sum(i.compactions for i in infos),
        "tokens_before": sum(i.tokens_before for i in infos),
        "tokens_after": sum(i.tokens_after for i in infos),
        "last_tokens_before": latest.last_tokens_before,
        "last_tokens_after": latest.last_tokens_after,
        "last_receipt": receipt,
    }
