"""Which session a request belongs to: the `X-Compaction-Session` header when the client
sends one, else a hash of what identifies a conversation (`Api.session_seed`: the API, the
model, the system prompt and the first user message, without the fields clients move).

This module must never read a header other than the session header, nor keep state.
"""

from __future__ import annotations

import re
from typing import Any, Final

from compaction.proxy.apis import Api
from compaction.proxy.errors import ProxyError

SESSION_HEADER: Final = "x-compaction-session"
_HEADER_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")


def session_key(api: Api, payload: dict[str, Any], header: str | None) -> str:
    """The session's key: the header's value (checked), or the conversation's hash."""
    if header is None:
        return api.session_seed(payload)
    header = header.strip()
    if not _HEADER_ID.match(header):
        raise ProxyError(
            400,
            f"invalid {SESSION_HEADER} header: use 1 to 100 letters, digits, '.', '_', "
            "':' or '-', starting with a letter or digit",
        )
    return header
