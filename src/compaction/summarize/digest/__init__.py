"""The deterministic digest: events read off messages, one section per fact category, a
ledger that renders into any room by priority and parses back. See `ledger.py`."""

from compaction.summarize.digest.format import (
    CLOSE_TAG,
    MASK_PREFIX,
    OPEN_TAG,
    PREAMBLE,
    SHORT_PREAMBLE,
    Envelope,
    Placeholder,
    envelope_chars,
    indented,
    read_placeholder,
    summary_body,
    summary_message,
    was_shrunk,
    write_placeholder,
)
from compaction.summarize.digest.ledger import (
    Ledger,
    LedgerBuilder,
    extract_ledger,
    parse_ledger,
    render,
)
from compaction.summarize.digest.sections import Item, Section, bounded_user_text, default_sections

__all__ = [
    "CLOSE_TAG",
    "MASK_PREFIX",
    "OPEN_TAG",
    "PREAMBLE",
    "SHORT_PREAMBLE",
    "Envelope",
    "Item",
    "Ledger",
    "LedgerBuilder",
    "Placeholder",
    "Section",
    "bounded_user_text",
    "default_sections",
    "envelope_chars",
    "extract_ledger",
    "indented",
    "parse_ledger",
    "read_placeholder",
    "render",
    "summary_body",
    "summary_message",
    "was_shrunk",
    "write_placeholder",
]
