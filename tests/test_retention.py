"""Retention on generated sessions with planted facts (the quality floor, not the benchmark:
`make bench` measures more seeds and reports per category)."""

from __future__ import annotations

import pytest

from compaction import CompactionConfig, Compactor
from compaction.dialects import OPENAI
from compaction.eval import REQUIRED_CATEGORIES, generate_session, score, text_of_payload


@pytest.mark.parametrize(("seed", "cued"), [(200, 0.0), (201, 0.5), (202, 0.0)])
def test_default_pipeline_keeps_required_facts_at_15_percent(seed: int, cued: float) -> None:
    session = generate_session(seed, target_tokens=22_000, cued_fraction=cued)
    conversation = OPENAI.decode(session.payload)
    compactor = Compactor(CompactionConfig(tokenizer_model="gpt-4o"))
    tokens = compactor.count(conversation)
    assert tokens >= 18_000
    result = compactor.compact(conversation, max_tokens=int(tokens * 0.15))
    assert result.receipt.status == "compacted"
    assert result.receipt.tokens_after <= int(tokens * 0.15)
    marks = score(session.facts, text_of_payload(OPENAI.encode(result.conversation)))
    lost_required = [f.text for f in marks.lost if f.category in REQUIRED_CATEGORIES]
    assert lost_required == []
    assert marks.overall.value >= 0.9, [f.text for f in marks.lost]
    assert marks.stale_as_current == []


def test_truncation_alone_loses_what_the_digest_keeps() -> None:
    # The ruler can tell strategies apart: dropping history loses most planted facts.
    session = generate_session(203, target_tokens=22_000)
    conversation = OPENAI.decode(session.payload)
    config = CompactionConfig.from_dict(
        {"tokenizer_model": "gpt-4o", "strategies": [{"kind": "truncate"}]}
    )
    compactor = Compactor(config)
    tokens = compactor.count(conversation)
    result = compactor.compact(conversation, max_tokens=int(tokens * 0.15))
    marks = score(session.facts, text_of_payload(OPENAI.encode(result.conversation)))
    assert marks.overall.value < 0.5
