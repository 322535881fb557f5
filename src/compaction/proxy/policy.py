"""How hard to compact after the upstream refused a request as too long for its window.

This module must never do I/O: it turns numbers into a target.
"""

from __future__ import annotations

from typing import Final

from compaction.proxy.errors import StatedWindow

# A compaction forced by an upstream context-length error aims at this share of the tokens
# that did not fit, or lower: at the window the error states, less the reply's tokens and
# this share of the rest, for tokenizers that count more than ours.
OVERFLOW_TARGET: Final = 0.5
OVERFLOW_MARGIN: Final = 0.1


def overflow_target(sent: int, stated: StatedWindow | None, max_output: int) -> int | None:
    """The tokens (our count) to compact to after the upstream refused `sent` tokens as too
    long: half of them, or fewer when the error states a window, which must hold the prompt
    and the reply's `max_output` tokens with a margin. When the error also states the
    prompt's size and it is more than `sent`, the upstream's tokenizer counts more than ours,
    and the window is scaled down to our count. None when the reply alone fills the window:
    no compaction can make that request fit."""
    target = int(sent * OVERFLOW_TARGET)
    if stated is not None:
        room = stated.window - max_output
        if room <= 0:
            return None
        if stated.prompt_tokens is not None and stated.prompt_tokens > sent:
            room = room * sent // stated.prompt_tokens
        target = min(target, int(room * (1 - OVERFLOW_MARGIN)))
    return max(1, target)
