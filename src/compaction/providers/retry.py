"""The one place model calls are retried: exponential backoff with jitter, Retry-After honoured.

The SDK adapters build their clients with `max_retries=0` and wrap each call in
`call_with_retries`, so a call is tried at most `attempts` times in total and every wait is
visible to (and injectable by) the caller.

Only errors that say `retryable=True` are retried (rate limits, timeouts, server errors and
failed connections). This module must never retry anything else — a context overflow or a
bad key fails the same way every time — and never sleep longer than the provider asked.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from compaction.exceptions import ProviderError

__all__ = ["backoff_delay", "call_with_retries"]

T = TypeVar("T")

logger = logging.getLogger("compaction.providers")


def backoff_delay(
    attempt: int, *, base_delay: float, max_delay: float, rng: random.Random
) -> float:
    """The wait after failed attempt number `attempt` (1-based): `base_delay · 2^(attempt-1)`
    capped at `max_delay`, of which a random half is jitter so that clients that failed
    together do not retry together."""
    ceiling = min(max_delay, base_delay * 2.0 ** (attempt - 1))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def call_with_retries(
    fn: Callable[[], T],
    *,
    attempts: int = 3,
    base_delay: float = 0.5,
    max_delay: float = 8.0,
    max_retry_after: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """Call `fn` until it returns, trying at most `attempts` times in total.

    A `ProviderError` with `retryable=True` is retried after `retry_after` seconds when the
    error carries one, else after `backoff_delay`. A Retry-After longer than
    `max_retry_after` is not waited for: the error is raised at once. Any other exception,
    and the last attempt's error, propagate unchanged.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, not {attempts}")
    chance = rng if rng is not None else random.Random()
    attempt = 1
    while True:
        try:
            return fn()
        except ProviderError as error:
            if not error.retryable or attempt >= attempts:
                raise
            if error.retry_after is not None:
                if error.retry_after > max_retry_after:
                    raise
                delay = error.retry_after
            else:
                delay = backoff_delay(
                    attempt, base_delay=base_delay, max_delay=max_delay, rng=chance
                )
            logger.info(
                "attempt %d of %d failed (%s); retrying in %.2fs", attempt, attempts, error, delay
            )
            sleep(delay)
            attempt += 1
