"""Compaction strategies. Each strategy *is* its validated config (a `kind` tag, bounds,
`extra="forbid"`) with one method, `apply(workspace) -> StepReport`. See README.md here.
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

from pydantic import Field

from compaction.strategies.base import Removal, Slot, StepReport, Workspace
from compaction.strategies.digest import DigestStrategy
from compaction.strategies.mask import MaskStrategy
from compaction.strategies.pipeline import CompactionStrategy, run_pipeline
from compaction.strategies.summarize import SequenceStrategy, SummarizeStrategy
from compaction.strategies.truncate import TruncateStrategy

Strategy: TypeAlias = Annotated[
    MaskStrategy | DigestStrategy | SummarizeStrategy | SequenceStrategy | TruncateStrategy,
    Field(discriminator="kind"),
]

__all__ = [
    "CompactionStrategy",
    "DigestStrategy",
    "MaskStrategy",
    "Removal",
    "SequenceStrategy",
    "Slot",
    "StepReport",
    "Strategy",
    "SummarizeStrategy",
    "TruncateStrategy",
    "Workspace",
    "run_pipeline",
]
