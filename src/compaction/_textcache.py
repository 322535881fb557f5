"""A cache for pure functions of text, bounded by the bytes it holds, not only by entries.

The readers compaction runs over tool outputs and prose are pure and are called again on
the same texts (the digest tries several spans; an agent compacts again a few turns later),
so they are cached. Their keys are whole tool outputs: a cache bounded only by its number of
entries could keep gigabytes of a long-running proxy's outputs alive. `text_cache` drops
the oldest entries once the texts it holds pass `max_chars` characters (oldest stored, not
least recently used: a hit only reads, and a compaction makes some ten thousand of them).

Thread-safe (the proxy compacts in worker threads). This module must never know what the
functions it caches compute.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")

# The default bound, in characters of cached text, per cached function.
DEFAULT_MAX_CHARS = 32 * 1024 * 1024
_CACHES: list[Callable[[], None]] = []
_MISSING = object()


def text_cache(
    max_chars: int = DEFAULT_MAX_CHARS, max_entries: int = 8192
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a pure function whose arguments are hashable (texts first of all)."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        entries: dict[Any, object] = {}  # in the order stored: the oldest goes first
        sizes: dict[Any, int] = {}
        held = [0]
        lock = threading.Lock()

        def store(key: Any, value: object, size: int) -> None:
            if size > max_chars:
                return
            with lock:
                if key not in entries:
                    entries[key] = value
                    sizes[key] = size
                    held[0] += size
                while held[0] > max_chars or len(entries) > max_entries:
                    old = next(iter(entries))
                    del entries[old]
                    held[0] -= sizes.pop(old)

        if _takes_one_argument(function):
            # Most readers take one text: it is its own key (a string keeps its hash), and
            # a hit is one dict read (atomic in CPython: no lock).
            @functools.wraps(function)
            def cached_one(argument: Any) -> Any:
                hit = entries.get(argument, _MISSING)
                if hit is not _MISSING:
                    return hit
                value = function(argument)  # type: ignore[call-arg]
                store(argument, value, 64 + (len(argument) if type(argument) is str else 0))
                return value

            cached = cast(Callable[P, R], cached_one)
        else:

            @functools.wraps(function)
            def cached(*args: P.args, **kwargs: P.kwargs) -> R:
                key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
                hit = entries.get(key, _MISSING)
                if hit is not _MISSING:
                    return cast(R, hit)
                value = function(*args, **kwargs)
                store(key, value, 64 + sum(len(a) for a in args if type(a) is str))
                return value

        def clear() -> None:
            with lock:
                entries.clear()
                sizes.clear()
                held[0] = 0

        def held_chars() -> int:
            return held[0]

        cached.cache_clear = clear  # type: ignore[attr-defined]
        cached.held_chars = held_chars  # type: ignore[attr-defined]
        _CACHES.append(clear)
        return cached

    return decorate


def _takes_one_argument(function: Callable[..., object]) -> bool:
    """Whether `function` takes exactly one argument, by position."""
    parameters = list(inspect.signature(function).parameters.values())
    return len(parameters) == 1 and parameters[0].kind in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def clear_all() -> None:
    """Empty every text cache (benchmarks measure a process's first compaction this way)."""
    for clear in _CACHES:
        clear()
