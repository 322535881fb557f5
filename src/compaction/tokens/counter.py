"""What a token counter is, and the character-based estimate used when no tokenizer loads.

A `TokenCounter` counts the tokens of one string. Everything above it (message overheads,
images, tool schemas, caching) lives in `compaction.tokens.accounting` and works with any
counter, including the ones users write.

This module must never import tiktoken or touch the network: it is the last resort that
always works.
"""

from __future__ import annotations

import math
import re
from typing import Protocol, runtime_checkable


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a string.

    `name` identifies the tokenizer (an encoding name such as `o200k_base`, or `heuristic`).
    `exact` is False only when the count is a character-based estimate; a real tokenizer that
    merely stands in for the model's own (cl100k_base for Claude) is still `exact` and says
    so through an `approximate` attribute and a `note` (see `counter_note`).
    """

    @property
    def name(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    def count_text(self, text: str) -> int: ...


def counter_note(counter: TokenCounter) -> str | None:
    """The counter's explanation of a fallback or approximation, if it carries one.

    `note` is optional on user-written counters, so it is read defensively here rather than
    being part of the protocol.
    """
    note = getattr(counter, "note", None)
    return note if isinstance(note, str) and note else None


def counter_is_approximate(counter: TokenCounter) -> bool:
    """True when the counter is not the model's own tokenizer, or is an estimate."""
    return not counter.exact or bool(getattr(counter, "approximate", False))


_DIGITS_RE = re.compile(r"[0-9]")
_SYMBOLS_RE = re.compile(r"[!-/:-@\[-^`{-~]")
_WHITESPACE_RE = re.compile(r"[ \t\n\r\x0b\x0c]")
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


class HeuristicCounter:
    """Estimates tokens from characters; `exact` is False so every count it feeds is estimated.

    Plain chars/4 runs about 17% low on tool output, because JSON, code and logs split into
    many short tokens. This estimate weighs each character by its class, in tokens per
    character: ASCII letters and `_` 0.25 (BPE merges words, ~4 letters a token), digits 0.6
    (split into runs of 1–3), other ASCII punctuation 0.85 (rarely merged), whitespace 0
    (absorbed by the next word), anything else 1 (CJK and other scripts rarely merge). The
    effective ratio is thus about 4 characters per token for English prose, about 3.2 for
    code and logs, and lower for numeric JSON.

    The weights come from a least-squares fit to cl100k_base over the SWE-agent trajectories
    in `/work/shared/data`, generated JSON and the design document's prose, rounded up: in
    total the estimate lands ~4% above the tokenizer (~6% on the trajectories alone), and for
    80% of texts within −10% to +18%. Erring high keeps compaction from triggering too late.
    """

    name = "heuristic"
    exact = False
    approximate = True

    def __init__(
        self,
        *,
        letter_weight: float = 0.25,
        digit_weight: float = 0.6,
        symbol_weight: float = 0.85,
        other_weight: float = 1.0,
        note: str | None = None,
    ) -> None:
        weights = (letter_weight, digit_weight, symbol_weight, other_weight)
        if any(weight < 0 for weight in weights) or not any(weights):
            raise ValueError("weights must be non-negative and not all zero")
        self.letter_weight = letter_weight
        self.digit_weight = digit_weight
        self.symbol_weight = symbol_weight
        self.other_weight = other_weight
        self.note = note

    def estimate(self, text: str) -> float:
        """The unrounded estimate for `text`."""
        non_ascii = 0 if text.isascii() else len(_NON_ASCII_RE.findall(text))
        digits = len(_DIGITS_RE.findall(text))
        symbols = len(_SYMBOLS_RE.findall(text))
        letters = len(text) - non_ascii - digits - symbols - len(_WHITESPACE_RE.findall(text))
        return (
            letters * self.letter_weight
            + digits * self.digit_weight
            + symbols * self.symbol_weight
            + non_ascii * self.other_weight
        )

    def chars_per_token(self, text: str) -> float:
        """The effective characters-per-token ratio this counter applies to `text`."""
        estimate = self.estimate(text)
        return len(text) / estimate if estimate else float("inf")

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        return max(1, math.ceil(self.estimate(text)))

    def __repr__(self) -> str:
        return (
            f"HeuristicCounter(letter_weight={self.letter_weight}, "
            f"digit_weight={self.digit_weight}, symbol_weight={self.symbol_weight}, "
            f"other_weight={self.other_weight})"
        )
