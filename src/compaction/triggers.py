"""`should_compact`: does this conversation need compacting now, and why.

Any one trigger suffices: tokens over `token_threshold`, tokens over a fraction of the
model's window, user turns, messages, characters. The decision names every trigger that
fired and the token target a compaction should reach. Pure: the caller supplies the counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from compaction.config import CompactionConfig
from compaction.messages import Conversation


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether to compact, which triggers fired (`reasons`), and the size to aim for."""

    compact: bool
    reasons: tuple[str, ...]
    tokens: int
    target: int | None

    def __bool__(self) -> bool:
        return self.compact


def token_limit(config: CompactionConfig, window: int | None) -> int | None:
    """The lowest token count at which a token trigger fires, if any is configured."""
    limits = []
    if config.token_threshold is not None:
        limits.append(config.token_threshold)
    if config.window_fraction is not None and window is not None:
        limits.append(int(window * config.window_fraction))
    return min(limits) if limits else None


def target_tokens(config: CompactionConfig, window: int | None) -> int | None:
    """What a compaction aims at: `max_tokens`, else a fraction of the token trigger."""
    if config.max_tokens is not None:
        return config.max_tokens
    limit = token_limit(config, window)
    return int(limit * config.target_fraction) if limit is not None else None


def should_compact(
    conversation: Conversation,
    config: CompactionConfig,
    *,
    tokens: int,
    window: int | None = None,
) -> Decision:
    reasons: list[str] = []
    if config.token_threshold is not None and tokens >= config.token_threshold:
        reasons.append(f"tokens {tokens} ≥ token_threshold {config.token_threshold}")
    if config.window_fraction is not None and window is not None:
        limit = int(window * config.window_fraction)
        if tokens >= limit:
            reasons.append(
                f"tokens {tokens} ≥ {config.window_fraction:g} of the {window}-token window"
            )
    if config.turn_threshold is not None:
        turns = conversation.user_turns
        if turns >= config.turn_threshold:
            reasons.append(f"user turns {turns} ≥ turn_threshold {config.turn_threshold}")
    if config.message_threshold is not None:
        count = len(conversation)
        if count >= config.message_threshold:
            reasons.append(f"messages {count} ≥ message_threshold {config.message_threshold}")
    if config.threshold_chars is not None:
        chars = conversation.char_count()
        if chars >= config.threshold_chars:
            reasons.append(f"characters {chars} ≥ threshold_chars {config.threshold_chars}")
    return Decision(bool(reasons), tuple(reasons), tokens, target_tokens(config, window))
