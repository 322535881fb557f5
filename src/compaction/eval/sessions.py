"""What an evaluation runs on: a session (a transcript) and the facts expected to survive.

Generated sessions carry planted facts; user sessions carry facts from a probes file or
extracted from the session itself (`compaction.eval.datasets`). Every metric and report
reads `EvalSession`; nothing here knows where a session came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compaction.eval.probes import Fact
from compaction.messages import Conversation


@dataclass(frozen=True)
class EvalSession:
    """One transcript to compact and the facts to check afterwards.

    `name` identifies the session in reports (a seed, a file name, a line number);
    `source` says where it came from (`generated`, or a path).
    """

    name: str
    conversation: Conversation
    facts: tuple[Fact, ...] = ()
    source: str = "generated"
    tags: dict[str, str] = field(default_factory=dict)
