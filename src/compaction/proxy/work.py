"""Where the CPU-heavy steps of a request run: inline for ordinary requests, in a bounded
pool of worker threads for large ones.

Parsing, decoding, counting, logging and re-encoding a request cost time in proportion to
its size: for a request of a few kilobytes, well under a millisecond, less than a hop to a
thread and back, so they run on the event loop. A request of `threshold` bytes or more
(a pasted file, a long log in a tool result) would hold the loop, and every other session
with it, for as long as they take; its steps go to at most `workers` threads at a time,
and the loop serves the other sessions meanwhile (tokenizing releases the interpreter's
lock; parsing and logging give it up at every switch interval).

This module must never decide what a step does, only where it runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread

__all__ = ["DEFAULT_THRESHOLD", "DEFAULT_WORKERS", "Offload"]

T = TypeVar("T")

DEFAULT_THRESHOLD: Final = 256 * 1024
DEFAULT_WORKERS: Final = 4


class Offload:
    """Runs a request's steps inline or in the worker pool, by the request's size."""

    def __init__(self, *, workers: int = DEFAULT_WORKERS, threshold: int = DEFAULT_THRESHOLD):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        self.threshold = threshold
        self._limiter: anyio.CapacityLimiter | None = None

    def large(self, size: int) -> bool:
        """Whether a request of `size` bytes has its steps run in the pool."""
        return size >= self.threshold

    async def run(self, large: bool, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)`: in a worker thread when `large`, else here and now."""
        if not large:
            return fn(*args)
        if self._limiter is None:  # made on the event loop that uses it
            self._limiter = anyio.CapacityLimiter(self.workers)
        return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=self._limiter)
