"""Evaluation: generated sessions with planted facts, and the ruler that scores retention.

`generate_session` writes long, realistic coding-agent transcripts with known facts in them;
`score` says which of those facts survive in a compacted transcript. Both are independent of
the compaction strategies they measure and must stay so.
"""

from __future__ import annotations

from compaction.eval.generate import (
    CHARS_PER_TOKEN,
    GeneratedSession,
    ProbeLeakError,
    generate_session,
)
from compaction.eval.probes import (
    CATEGORIES,
    CUE_WORDS,
    DEPTHS,
    REQUIRED_CATEGORIES,
    Depth,
    Fact,
    FactCategory,
    FactResult,
    Rate,
    Score,
    score,
    text_of_message,
    text_of_payload,
)

__all__ = [
    "CATEGORIES",
    "CHARS_PER_TOKEN",
    "CUE_WORDS",
    "DEPTHS",
    "REQUIRED_CATEGORIES",
    "Depth",
    "Fact",
    "FactCategory",
    "FactResult",
    "GeneratedSession",
    "ProbeLeakError",
    "Rate",
    "Score",
    "generate_session",
    "score",
    "text_of_message",
    "text_of_payload",
]
