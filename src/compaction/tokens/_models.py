"""Model-name normalization shared by encoding choice and the context-window table.

Model names arrive decorated by routers and clouds ("openrouter/anthropic/claude-3.5-sonnet",
"us.anthropic.claude-3-5-sonnet-20241022-v2:0", "ft:gpt-4o-mini:org::id"); lookups by prefix
need the bare name. This module must stay free of tables and I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Bedrock-style ids: an optional region ("us.", "eu.", "apac.") then the vendor and a dot.
_VENDOR_DOT_RE = re.compile(
    r"^(?:[a-z]{2,4}\.)?(?:anthropic|meta|amazon|mistral|cohere|ai21|openai|deepseek|qwen)\."
)


def model_names(model: str) -> tuple[str, str]:
    """`(full, bare)`: the lower-cased name as given, and without router or cloud prefixes."""
    full = model.strip().lower()
    bare = full.rsplit("/", 1)[-1]
    bare = bare.removeprefix("ft:")
    bare = _VENDOR_DOT_RE.sub("", bare)
    return full, bare


def longest_prefix(names: tuple[str, str], prefixes: Iterable[str]) -> str | None:
    """The longest of `prefixes` that starts either name, or None."""
    best: str | None = None
    for prefix in prefixes:
        if (names[0].startswith(prefix) or names[1].startswith(prefix)) and (
            best is None or len(prefix) > len(best)
        ):
            best = prefix
    return best
