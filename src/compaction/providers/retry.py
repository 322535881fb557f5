"""The one place model calls are retried: exponential backoff with jitter, Retry-After honoured.

The SDK adapters build their clients with `max_retries=0` and wrap each call in
`call_with_retries`, so a call is tried at most `attempts` times in total and every wait is
visible to (and injectable by) the caller.

Only errors that say `retryable=True` are retried (rate limits, timeouts, server errors and
failed connections). This module must never retry anything else — a context overflow or a
bad key fails the same way every time — and never sleep longer than the provider asked.

A deadline (`provider_deadline`) bounds every call made inside it, in this thread and the
worker threads it starts: each try waits at most what is left, no retry starts whose wait
would pass it, and a call after it fails at once (`ProviderTimeoutError`, not retryable).
The proxy sets one per request, so a stalled summarizer costs a compaction at most that
long before the digest fallback applies.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TypeVar

from compaction.exceptions import BadResponseError, ProviderError, ProviderTimeoutError
from compaction.providers.base import Completion, CompletionRequest
from compaction.providers.errors import error_from_transport

__all__ = ["RetryingAdapter", "backoff_delay", "call_with_retries", "provider_deadline"]

T = TypeVar("T")

# The `time.monotonic()` by which model calls must be done (None: no deadline).
_DEADLINE: ContextVar[float | None] = ContextVar("compaction_provider_deadline", default=None)


@contextmanager
def provider_deadline(seconds: float | None) -> Iterator[None]:
    """Model calls made inside the block must end within `seconds` from now (None: no
    deadline of its own). A deadline already in force and earlier stays in force."""
    if seconds is None:
        yield
        return
    mine = time.monotonic() + max(0.0, seconds)
    outer = _DEADLINE.get()
    token = _DEADLINE.set(mine if outer is None else min(outer, mine))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


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
    deadline: float | None = None,
) -> T:
    """Call `fn` until it returns, trying at most `attempts` times in total.

    A `ProviderError` with `retryable=True` is retried after `retry_after` seconds when the
    error carries one, else after `backoff_delay`. A Retry-After longer than
    `max_retry_after` is not waited for: the error is raised at once, as it is when the wait
    would end past `deadline` (a `time.monotonic()` value). Any other exception, and the
    last attempt's error, propagate unchanged.
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
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise
            logger.info(
                "attempt %d of %d failed (%s); retrying in %.2fs", attempt, attempts, error, delay
            )
            sleep(delay)
            attempt += 1


class RetryingAdapter:
    """What the SDK adapters share: `complete` is `_complete_once` inside the retry loop,
    timed; SDK and transport errors are translated at one boundary (`_translated`).

    Subclasses set `timeout`, `max_retries`, `_sleep` and `_rng` through `_init_retries` and
    implement `_complete_once`, which sends one try with the timeout it is given (None: the
    client's own, `timeout`).
    """

    #: Seconds one try may take.
    timeout: float
    #: Tries after the first, for errors a retry may fix.
    max_retries: int
    _sleep: Callable[[float], None]
    _rng: random.Random

    def _init_retries(
        self,
        max_retries: int,
        sleep: Callable[[float], None],
        rng: random.Random | None,
        timeout: float,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be at least 0, not {max_retries}")
        if timeout <= 0:
            raise ValueError(f"timeout must be more than 0 seconds, not {timeout}")
        self.timeout = timeout
        self.max_retries = max_retries
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()

    def complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        deadline = _DEADLINE.get()
        completion = call_with_retries(
            lambda: self._complete_once(request, self._try_timeout(deadline)),
            attempts=self.max_retries + 1,
            sleep=self._sleep,
            rng=self._rng,
            deadline=deadline,
        )
        return replace(completion, elapsed_ms=(time.perf_counter() - started) * 1000)

    def _try_timeout(self, deadline: float | None) -> float | None:
        """The timeout of the next try: what the deadline leaves, at most `timeout`."""
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            error = ProviderTimeoutError(
                "the deadline of this compaction passed before the call", provider=self.name
            )
            error.retryable = False
            raise error
        return min(self.timeout, left)

    @property
    def name(self) -> str:
        raise NotImplementedError

    def _complete_once(self, request: CompletionRequest, timeout: float | None) -> Completion:
        raise NotImplementedError

    @staticmethod
    def _translated(
        call: Callable[[], Completion],
        *,
        provider: str,
        sdk_error: type[Exception],
        translate: Callable[[Exception], ProviderError],
    ) -> Completion:
        """`call()`, with the SDK's errors and raw transport errors (which some SDK stream
        readers let through) turned into `ProviderError`s. An answer whose bytes are not
        UTF-8, or not JSON where JSON belongs, is a `BadResponseError`: the SDKs let those
        decoding errors through as they are."""
        try:
            return call()
        except ProviderError:
            raise
        except sdk_error as e:
            raise translate(e) from e
        except (UnicodeError, json.JSONDecodeError) as e:
            raise BadResponseError(
                f"the answer could not be decoded ({type(e).__name__}: {_short(e)})",
                provider=provider,
            ) from e
        except Exception as e:
            translated = error_from_transport(provider, e)
            if translated is None:
                raise
            raise translated from e


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= 120 else text[:119] + "…"
