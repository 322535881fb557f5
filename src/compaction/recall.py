"""Recall: the one shape in which every surface gives back what a compaction replaced.

A compaction keeps each original it replaces under an archive handle, `m-` and 12 hex
digits (`compaction.messages.handle_for`), and shows that handle where the original
was: a masked output's placeholder ("original kept as m-…"), a truncation marker's range,
a shortened output's marker. A recall query is either such a handle (any text naming one or
more: each is looked up exactly) or words (full-text search over everything compacted
away). Either way the answer is a list of `compaction.store.RecallHit`: session, seq (None
for a message a compaction made, such as an earlier placeholder), role, handle, and the
original verbatim (`text`, and the whole `message`).

The store's `recall` answers a query (`SessionLog.recall` in one session); `compaction
recall` prints the hits; the agent's tool (`compaction.tools.recall_tool`) and the proxy's
(`compaction.proxy.recall`) declare `SPEC` and answer the model with `answer`.

This module must never touch a store itself: it reads hits a store returned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from compaction.providers.base import ToolSpec

if TYPE_CHECKING:
    from compaction.store.base import RecallHit

__all__ = [
    "DESCRIPTION",
    "HANDLE",
    "MAX_CHARS",
    "NAME",
    "PARAMETERS",
    "SPEC",
    "WORD_CHARS",
    "answer",
    "answer_call",
    "handles_in",
    "matching_lines",
]

#: What `handle_for` writes: `m-` and the first 12 hex digits of a SHA-256.
HANDLE: Final = re.compile(r"\bm-[0-9a-f]{12}\b")

#: The most characters one tool answer gives the model, shared among its hits: originals
#: asked for by handle are given whole up to this; word hits, which the model did not pick,
#: only their matching lines within `WORD_CHARS`, so a search never floods the context.
MAX_CHARS: Final = 40_000
WORD_CHARS: Final = 4_000

NAME: Final = "recall"
DESCRIPTION: Final = (
    "Get back the exact original of something compacted away earlier in this conversation. "
    "Pass a handle that a placeholder or summary shows (m- and 12 hex digits, as in "
    "'original kept as m-0123456789ab') to get that original whole, or words (an identifier, "
    "a file name, an error) to search everything compacted away for the matching lines, "
    "each with its handle."
)
PARAMETERS: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "An archive handle such as m-0123456789ab, or words to look for.",
        }
    },
    "required": ["query"],
    "additionalProperties": False,
}
SPEC: Final = ToolSpec(NAME, DESCRIPTION, PARAMETERS)


def handles_in(query: str) -> list[str]:
    """The archive handles `query` names, in order, each once."""
    return list(dict.fromkeys(HANDLE.findall(query)))


def answer_call(
    recall: Callable[[str], Sequence[RecallHit]],
    arguments: Mapping[str, Any],
    *,
    max_chars: int = MAX_CHARS,
) -> str:
    """The tool's answer to a call with `arguments` (`{"query": …}`), `recall` being the
    session's recall (`SessionLog.recall`); a call without a query gets a line saying so."""
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return "recall needs a `query`: an archive handle (m-…) or words to look for."
    return answer(recall(query), query, max_chars=max_chars)


def answer(hits: Sequence[RecallHit], query: str, *, max_chars: int = MAX_CHARS) -> str:
    """What the model reads for `hits` of `query`: each hit under a heading naming its handle
    and message, then its original verbatim. An original the query names by handle is given
    whole within an equal share of `max_chars` (past it, its beginning and a note); a word
    hit whole when short, else the lines that match, within a share of `WORD_CHARS`."""
    if not hits:
        named = handles_in(query)
        if named:
            return f"no original is kept as {', '.join(named)} in this session."
        return f"nothing compacted away matches {query!r}."
    exact = set(handles_in(query))
    by_handle = max(max_chars // len(hits), 400)
    by_words = max(min(max_chars, WORD_CHARS) // len(hits), 400)
    return "\n\n".join(
        _block(hit, query, by_handle, whole=True)
        if hit.handle in exact
        else _block(hit, query, by_words, whole=False)
        for hit in hits
    )


def _block(hit: RecallHit, query: str, share: int, *, whole: bool) -> str:
    """One hit: its heading, then its text — cut at `share` when `whole` (asked for by
    handle), else reduced to the lines matching `query`."""
    where = (
        "written by an earlier compaction" if hit.seq is None else f"message {hit.seq}"
    ) + f", {hit.role}, {len(hit.text)} chars"
    heading = f"[{hit.handle}: {where}]" if hit.handle else f"[{where}]"
    text = hit.text
    if len(text) <= share:
        return f"{heading}\n{text}"
    if whole:
        rest = len(text) - share
        return (
            f"{heading}\n{text[:share]}\n[… {rest} more characters not shown: recall words "
            "from them to get the lines that match]"
        )
    more = f"recall {hit.handle} for all of it" if hit.handle else "the original is longer"
    return f"{heading}\n{matching_lines(text, query, max_chars=share)}\n[{more}]"


def matching_lines(text: str, query: str, *, context: int = 2, max_chars: int = 4000) -> str:
    """The lines of `text` that contain a word of `query` (case-insensitive), with `context`
    lines around each, verbatim; gaps are marked `…`. The whole text when it is short."""
    if len(text) <= max_chars:
        return text
    words = [w.lower() for w in re.findall(r"\w+", query)]
    lines = text.splitlines()
    keep: set[int] = set()
    for i, line in enumerate(lines):
        lowered = line.lower()
        if any(w in lowered for w in words):
            keep.update(range(max(0, i - context), min(len(lines), i + context + 1)))
    out: list[str] = []
    size = 0
    previous = -1
    for i in sorted(keep):
        if i != previous + 1:
            out.append("…")
        if size + len(lines[i]) > max_chars:
            out.append("[… more matches not shown]")
            break
        out.append(lines[i])
        size += len(lines[i]) + 1
        previous = i
    if not out:
        return text[:max_chars] + "\n[…]"
    return "\n".join(out)
