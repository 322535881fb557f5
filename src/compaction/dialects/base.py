"""What every dialect provides: decode, encode, validate, and the violation record.

A dialect turns one wire format into a `Conversation` and back, losslessly, and checks a
conversation against that provider's rules. Dialects never see strategies or token counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from compaction.messages import Conversation


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken provider rule. `index` is the message index in the wire `messages` list
    (None for request-level problems); `rule` is a stable short code for programs."""

    index: int | None
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"message {self.index}" if self.index is not None else "request"
        return f"{where}: {self.message}"


class Dialect(Protocol):
    """One provider wire format."""

    name: str

    def decode(self, payload: Any) -> Conversation:
        """Wire payload → Conversation. Raises `DecodeError` naming the message index and field."""
        ...

    def encode(self, conversation: Conversation) -> Any:
        """Conversation → wire payload (JSON-ready). Decode then encode returns the input."""
        ...

    def validate(self, conversation: Conversation) -> list[Violation]:
        """Every rule the conversation breaks for this provider, in message order."""
        ...
