"""Tests run offline: no tokenizer download, no socket except loopback (pytest-socket)."""

from __future__ import annotations

import os

os.environ["COMPACTION_OFFLINE"] = "1"
