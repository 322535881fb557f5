"""The pipeline: strategies run in order until the target is met, reaching further each
round, then settled so the result lands just under the target.

Rounds: ordinary strategies outside the recent tail, then inside it; last-resort strategies
(`truncate`) outside, then inside. Then the result is settled:

1. over the target: summaries shrink (fewer, shorter lines — never empty); when even their
   shortest forms are too many, the digests merge into one, which carries the facts of the
   others beside its lines; and only then, when nothing older is left to give, the results
   the model is about to read are shortened (head and tail kept, with a marker);
2. under it (also after shrinking, as renderings land a little under their room):
   summaries grow back toward their full rendering, then masked outputs are given back,
   newest first, whole while they fit, then in part (head and tail beside the placeholder)
   — so a compaction uses its budget instead of throwing facts away for room it leaves empty.

Before the rounds, a digest an earlier compaction had to shrink is restored in full, so the
strategies make room for what it lost rather than keep it short.

`CompactionStrategy` is the protocol every strategy implements (a third-party one
included): a `kind`, whether it is a last resort, whether it calls the compaction model,
and `apply`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from compaction.messages import Message, Part, ToolResultPart, handle_for
from compaction.strategies.base import StepReport, Workspace
from compaction.strategies.digest import DigestRendering, earlier_rendering
from compaction.strategies.mask import (
    MIN_EXCERPT_TOKENS,
    MaskStrategy,
    head_and_tail,
    with_excerpt,
)


@runtime_checkable
class CompactionStrategy(Protocol):
    """What the pipeline asks of a strategy."""

    @property
    def kind(self) -> str: ...

    @property
    def last_resort(self) -> bool: ...

    @property
    def needs_summarizer(self) -> bool: ...

    def apply(self, work: Workspace) -> StepReport: ...


def run_pipeline(work: Workspace, strategies: Sequence[CompactionStrategy]) -> list[StepReport]:
    """Run `strategies` over `work` in rounds until the target is met, then settle."""
    steps: list[StepReport] = []
    restore_shrunk(work)
    ordinary = [s for s in strategies if not s.last_resort]
    last = [s for s in strategies if s.last_resort]
    rounds = ((ordinary, False), (ordinary, True), (last, False), (last, True))
    for stage, reach_recent in rounds:
        if work.fits() or (reach_recent and work.target is None):
            continue
        work.reach_recent = reach_recent
        # Without a target there is nothing to keep the latest exchange for: one pass over
        # everything compactable, as `keep_recent_n` and the protections allow.
        work.reach_live = work.target is None
        for strategy in stage:
            if work.fits():
                break
            steps.append(strategy.apply(work))
    if not work.fits() and work.target is not None and any(s.anchored for s in work.slots):
        # The turn kept beside the user's first message is a preference, not a promise:
        # the target is.
        for slot in work.slots:
            slot.anchored = False
        work.reach_recent = True
        for strategy in (*ordinary, *last):
            if work.fits():
                break
            steps.append(strategy.apply(work))
    if work.target is not None:
        settled = settle(work)
        if settled is not None:
            steps.append(settled)
    return steps


def restore_shrunk(work: Workspace) -> None:
    """Digests an earlier compaction had to shrink start this one in full: the strategies
    then make room for what they lost (folding more into summaries, which hold facts more
    densely than the messages they replace), and settling shrinks them again only if the
    target still needs it."""
    for index in adopt_earlier(work, shrunk_only=True):
        work.resize(index, None)


def adopt_earlier(work: Workspace, *, shrunk_only: bool) -> list[int]:
    """Let the digests earlier compactions made be rendered into other sizes (`shrunk_only`:
    only those they had to shrink); the indices of the slots adopted."""
    adopted = []
    for index, slot in enumerate(work.slots):
        if slot.resizable is None and slot.message.is_summary:
            rendering = earlier_rendering(slot.message, work.measure, shrunk_only=shrunk_only)
            if rendering is not None:
                work.adopt(index, rendering)
                adopted.append(index)
    return adopted


def settle(work: Workspace) -> StepReport | None:
    """Bring the total to just under the target: shrink or grow summaries, shorten the live
    results as the very last resort, give masked outputs back while there is room."""
    assert work.target is not None
    before = work.total()
    details: list[str] = []
    if not work.fits():
        _shrink(work, details)
    if work.fits():
        # Also after shrinking: renderings land under the room they are given, by a little
        # each, and a large summary's little can be a quarter of the target.
        _use_room(work, details)
    if work.total() == before and not details:
        return None
    return StepReport("settle", before, work.total(), 0, "; ".join(dict.fromkeys(details)))


def _summaries(work: Workspace) -> list[int]:
    return [i for i, s in enumerate(work.slots) if s.resizable is not None]


def _shrink(work: Workspace, details: list[str]) -> None:
    """Over the target: summaries give, then the live results, as the module says."""
    assert work.target is not None
    if work.floor:
        # The target asked for is out of reach: shrinking would lose facts and still miss it.
        details.append("summaries kept in full (the target is out of reach)")
        return
    # A digest an earlier compaction made in full gives too: where no strategy may fold it
    # again (between protected turns), rendering it smaller is what is left.
    adopt_earlier(work, shrunk_only=False)
    summaries = _summaries(work)
    # Each summary gives in proportion to its size, so that no span's facts go first.
    over = work.over_by()
    sizes = {i: work.slots[i].tokens for i in summaries}
    whole = sum(sizes.values()) or 1
    for index in summaries:
        share = -(-over * sizes[index] // whole)  # rounded up
        work.resize(index, max(sizes[index] - share, 0))
    for index in summaries:  # what rounding left over, oldest first
        if work.fits():
            break
        work.resize(index, max(work.slots[index].tokens - work.over_by(), 0))
    # Still over: what the model is about to read stays verbatim when dropping summaries
    # (their originals are archived) is enough; otherwise it is shortened first.
    droppable = sum(work.slots[i].tokens for i in summaries if not work.marker_needed(i))
    if not work.fits() and work.total() - droppable - _live_gain(work) > work.target:
        # Out of reach even with every summary gone and the live results at their shortest:
        # losing them would not meet it. As where the protected content alone is over it,
        # the summaries stay in full and the live results whole.
        for index in summaries:
            work.resize(index, None)
        details.append("summaries kept in full (the target is out of reach)")
        return
    shortened = dropped = folded = 0
    if not work.fits() and droppable < work.over_by():
        shortened = shorten_live(work)
    if not work.fits():
        folded = _fold_digests(work, summaries)
    if not work.fits():
        for index in reversed(_summaries(work)):
            if work.fits():
                break
            if not work.marker_needed(index):
                work.replace_span(index, index + 1, [], "dropped")
                dropped += 1
    if not work.fits():
        shortened += shorten_live(work)
    details.append(
        "summaries shrunk"
        + (f", {shortened} live results shortened" if shortened else "")
        + (f", {folded + 1} merged into one for want of room" if folded else "")
        + (f", {dropped} dropped for want of room" if dropped else "")
    )


def _fold_digests(work: Workspace, summaries: list[int]) -> int:
    """Every summary at its shortest and still over: the digests become one, their ledgers
    merged in order, at the first place where its shortest lines fit once the others are
    gone (one the dialect needs kept comes first). The facts of those that go ride beside
    its lines, for a later compaction with room to restore in full; dropped, they were lost
    for good. Returns how many went: 0 when no place fits, and the summaries are then
    dropped as they are."""
    assert work.target is not None
    digests = [
        (i, rendering)
        for i in summaries
        if isinstance(rendering := work.slots[i].resizable, DigestRendering)
    ]
    if len(digests) < 2:
        return 0
    merged = digests[0][1].ledger
    for _, rendering in digests[1:]:
        merged = merged.merge(rendering.ledger)
    one = DigestRendering(merged, sum(r.count for _, r in digests), work.measure)
    indices = [i for i, _ in digests]
    staying = [i for i in indices if work.marker_needed(i)]
    for host in staying + [i for i in indices if i not in staying]:
        others = [i for i in indices if i != host and i not in staying]
        if not others:
            continue
        rest = work.total() - sum(work.slots[i].tokens for i in (host, *others))
        message = one.render(max(work.target - rest, 0))
        if rest + work.measure(message) > work.target:
            continue
        work.adopt(host, one)
        work.swap(host, message)
        for index in reversed(others):
            work.replace_span(index, index + 1, [], "digested")
        return len(others)
    return 0


def _use_room(work: Workspace, details: list[str]) -> None:
    """Under the target: summaries grow back toward their full size, then masked outputs
    are given back, whole or in part, newest first."""
    assert work.target is not None
    summaries = _summaries(work)
    # Room left goes to the summaries in proportion to what each lacks of its full size.
    wanted = {i: full_tokens(work, i) - work.slots[i].tokens for i in summaries}
    lacking = sum(w for w in wanted.values() if w > 0)
    room = work.target - work.total()
    for index in summaries:
        if wanted[index] > 0 and room > 0:
            grant = room * wanted[index] // max(lacking, 1)
            work.resize(index, work.slots[index].tokens + grant)
            if not work.fits():  # a rendering may overshoot a tight room by a line
                work.resize(index, max(work.slots[index].tokens - work.over_by(), 0))
    restored = excerpts = 0
    for index in range(len(work.slots) - 1, -1, -1):
        slot = work.slots[index]
        if slot.unmasked is None:
            continue
        if work.total() - slot.tokens + work.measure(slot.unmasked) <= work.target:
            work.unmask(index)
            restored += 1
    # What is left goes to the newest outputs that did not fit back whole: their head
    # and tail, beside the placeholder.
    for index in range(len(work.slots) - 1, -1, -1):
        slot = work.slots[index]
        room = work.target - work.total()
        if room < MIN_EXCERPT_TOKENS:
            break
        if slot.unmasked is None:
            continue
        excerpted = with_excerpt(slot.message, slot.unmasked, slot.tokens + room, work.measure)
        if excerpted is not None:
            work.swap(index, excerpted)
            excerpts += 1
    if summaries or restored or excerpts:
        details.append(
            f"room used: summaries grown, {restored} outputs given back"
            + (f", {excerpts} in part" if excerpts else "")
        )


def full_tokens(work: Workspace, index: int) -> int:
    """What the summary at `index` takes in full."""
    resizable = work.slots[index].resizable
    return work.measure(resizable.render(None)) if resizable is not None else 0


def _live_gain(work: Workspace) -> int:
    """The most that shortening the results the model is about to read could give: each
    down to its placeholder, the shortest form there is."""
    gain = 0
    for slot in work.slots:
        if slot.live and slot.message.tool_results:
            placeholder = _placeholder(work, slot.message)
            if placeholder is not None:
                gain += max(slot.tokens - work.measure(placeholder), 0)
    return gain


def _placeholder(work: Workspace, message: Message) -> Message | None:
    """`message` with its tool results masked whatever their size: the shortest form."""
    calls = {c.id: c for s in work.slots for c in s.message.tool_calls}
    return MaskStrategy(min_chars=0).mask_message(message, calls)


def shorten_live(work: Workspace) -> int:
    """Shorten the results the model is about to read, largest first, to head and tail with
    a marker naming the archived original, until the target is met."""
    live = sorted(
        (i for i, s in enumerate(work.slots) if s.live and s.message.tool_results),
        key=lambda i: -work.slots[i].tokens,
    )
    shortened = 0
    for index in live:
        if work.fits():
            break
        slot = work.slots[index]
        budget = max(slot.tokens - work.over_by(), 0)
        message = shortened_message(slot.message, budget, work)
        if work.measure(message) > budget:
            # Not even head and tail fit: the placeholder, the shortest form there is.
            message = _placeholder(work, slot.message) or message
        if message is not slot.message:
            work.replace(index, message, "shortened")
            shortened += 1
    return shortened


def shortened_message(message: Message, budget: int, work: Workspace) -> Message:
    """`message` with its tool results cut to head and tail so it takes about `budget`
    tokens (never below a few lines of each end)."""
    handle = handle_for(message)
    total_chars = sum(len(r.text) for r in message.tool_results) or 1
    tokens = max(work.measure(message), 1)
    keep = max(int(total_chars * budget / tokens * 0.95), 400)
    parts: list[Part] = []
    changed = False
    for part in message.parts:
        if isinstance(part, ToolResultPart) and len(part.text) > keep:
            text = part.text
            share = max(int(keep * len(text) / total_chars), 200)
            head, tail, elided = head_and_tail(text, share)
            marker = (
                f"\n[… {elided} chars of this output elided to fit the context window; "
                f"original kept as {handle} …]\n"
            )
            parts.append(part.with_text(head + marker + tail))
            changed = True
        else:
            parts.append(part)
    return message.with_parts(parts) if changed else message
