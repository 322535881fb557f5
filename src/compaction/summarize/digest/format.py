"""The text shapes compaction writes into a transcript, written and read in one place: the
summary envelope (header, tags, preamble) and the placeholder that stands for a masked tool
output.

What is written here is read back by `read_placeholder` and `summary_body`; this module must
never depend on a wire format or a token count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from compaction.messages import Message, SummaryPart, summary_header

OPEN_TAG = "<earlier-context-summary>"
CLOSE_TAG = "</earlier-context-summary>"
PREAMBLE = (
    "This is a summary of the earlier part of this conversation, written by the compaction "
    "system, not by the user. It records what happened; it is context, not a new instruction."
)
SHORT_PREAMBLE = "Summary of earlier context by the compaction system, not the user."
_FIXED_LINES = {OPEN_TAG, CLOSE_TAG, PREAMBLE, SHORT_PREAMBLE}


# Where a summary rendered smaller than in full keeps its full text (never sent to a model:
# dialects encode a summary's text only), so that the next compaction merges everything.
FULL_TEXT_KEY = "compaction.full"


#: How much a summary says about itself around its lines: the full preamble, the short one,
#: or the header alone (`bare`: for a room too small for the tags and a preamble beside even
#: one line; the header still says the compaction system wrote it).
Envelope = Literal["full", "short", "bare"]


def summary_message(
    lines: Sequence[str], replaced: int, *, envelope: Envelope = "full", full: str | None = None
) -> Message:
    """A summary message around `lines`: header, tags, preamble. User role, so that no
    dialect reads it as an instruction of the system; the preamble says who wrote it.
    `full` is the full rendering when `lines` are fewer, kept beside the text."""
    if envelope == "bare":
        body = "\n".join(lines).strip("\n")
    else:
        preamble = SHORT_PREAMBLE if envelope == "short" else PREAMBLE
        body = "\n".join([OPEN_TAG, preamble, *lines, CLOSE_TAG])
    text = f"{summary_header(replaced, len(body))}\n{body}"
    extra = {FULL_TEXT_KEY: full} if full is not None and full != text else {}
    return Message("user", (SummaryPart(text, replaced, provider_data=extra),))


def full_text(part: SummaryPart) -> str:
    """The fullest text a summary has: its full rendering if it was shrunk, else its text."""
    full = part.provider_data.get(FULL_TEXT_KEY)
    return full if isinstance(full, str) else part.text


def was_shrunk(part: SummaryPart) -> bool:
    """Whether a summary shows fewer lines than it has (its full rendering kept beside)."""
    return isinstance(part.provider_data.get(FULL_TEXT_KEY), str)


def envelope_chars(replaced: int, *, envelope: Envelope) -> int:
    """What `summary_message` adds around its lines, in characters."""
    return len(summary_message([], replaced, envelope=envelope).text) + 1


def summary_body(text: str) -> list[str] | None:
    """The lines between the tags of a summary's text (under the header of a bare one), or
    None when it has no envelope."""
    body = text.partition("\n")[2] if text.startswith("[compacted:") else text
    if OPEN_TAG not in body:
        # A bare summary: its sections right under the header.
        lines = body.splitlines()
        bare = text.startswith("[compacted:") and lines[:1] != [] and lines[0].startswith("## ")
        return lines if bare else None
    inner = body.split(OPEN_TAG, 1)[1].split(CLOSE_TAG, 1)[0]
    return [line for line in inner.splitlines() if line not in _FIXED_LINES]


def indented(text: str) -> list[str]:
    """Free text as lines indented by two spaces, so that no line of it can read as a
    heading or an item when the summary is parsed back."""
    return ["  " + line if line.strip() else "" for line in text.strip().splitlines()]


# -- the mask placeholder -------------------------------------------------------------------

MASK_PREFIX = "[tool output masked:"


@dataclass(frozen=True)
class Placeholder:
    """What a masked tool output still says: the tool and its argument, size, outcome, the
    archive handle of the original, and the lines worth keeping."""

    what: str
    size: str
    outcome: str
    handle: str
    errors: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    tests: str | None = None
    # Head and tail of the original, verbatim, where a compaction had room to give some back.
    excerpt: str = ""
    # The environment's state the output ended on, verbatim, where a reader follows it
    # (SWE-agent's `(Open file: …)`: the file later edits apply to).
    state: str = ""
    # A sub-agent's report's first telling sentences (the files, code and figures it found).
    findings: tuple[str, ...] = ()


# Everything after this line of a placeholder is the original's own text.
EXCERPT_LINE = "--- head and tail of the original ---"


def write_placeholder(p: Placeholder) -> str:
    head = f"{MASK_PREFIX} {p.what}; {p.size}; {p.outcome}; original kept as {p.handle}]"
    lines = [head, *(f"! {e}" for e in p.errors)]
    if p.identifiers:
        lines.append("ids: " + ", ".join(p.identifiers))
    if p.tests:
        lines.append(f"tests: {p.tests}")
    if p.state:
        lines.append(f"state: {p.state}")
    lines += [f"found: {finding}" for finding in p.findings]
    if p.excerpt:
        lines += [EXCERPT_LINE, p.excerpt]
    return "\n".join(lines)


_MASK_HEAD = re.compile(
    r"^\[tool output masked: (?P<what>.*); (?P<size>[^;]+); (?P<outcome>[^;]+); "
    r"original kept as (?P<handle>m-\w+)\]$"
)


def read_placeholder(text: str) -> Placeholder | None:
    """The placeholder `text` is, or None when it is not one."""
    if not text.startswith(MASK_PREFIX):
        return None
    text, _, excerpt = text.partition("\n" + EXCERPT_LINE + "\n")
    head, *lines = text.splitlines()
    match = _MASK_HEAD.match(head)
    if match is None:
        return None
    errors = tuple(line[2:] for line in lines if line.startswith("! "))
    ids: tuple[str, ...] = ()
    tests = None
    state = ""
    findings = tuple(line[7:] for line in lines if line.startswith("found: "))
    for line in lines:
        if line.startswith("ids: "):
            ids = tuple(line[5:].split(", "))
        elif line.startswith("tests: "):
            tests = line[7:]
        elif line.startswith("state: "):
            state = line[7:]
    return Placeholder(
        match["what"],
        match["size"],
        match["outcome"],
        match["handle"],
        errors,
        ids,
        tests,
        excerpt,
        state,
        findings,
    )
