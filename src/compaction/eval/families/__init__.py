"""Generated session families with tool vocabularies and phrasings of their own.

Each family writes long coding-agent sessions in one agent's shape (its tool names, argument
names, result formats and the way its user and assistant talk) and plants facts in them in
the `compaction.eval.probes.Fact` format, with stale forms for what the session later
supersedes. They are written apart from the compaction strategies and from
`compaction.eval.generate`, and must never import either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Final

from compaction.eval.families import (
    aiderstory,
    ampstory,
    ccstory,
    codeact,
    codebuffstory,
    copilotstory,
    crushstory,
    cursorstory,
    cxstory,
    forgestory,
    gcstory,
    gsstory,
    kimistory,
    manusstory,
    nanostory,
    ocstory,
    octostory,
    ohstory,
    pistory,
    qstory,
    qwenstory,
    roostory,
    vibestory,
    windsurfstory,
    zedstory,
)
from compaction.eval.families._base import ProbeLeakError, Voice
from compaction.eval.families.acr import AcrVoice
from compaction.eval.families.amp import AmpVoice
from compaction.eval.families.augment import AugmentVoice
from compaction.eval.families.autogen import AutoGenVoice
from compaction.eval.families.claude_code import ClaudeCodeVoice
from compaction.eval.families.cline import ClineVoice
from compaction.eval.families.clinemcp import ClineMcpVoice
from compaction.eval.families.codex import CodexVoice
from compaction.eval.families.continue_dev import ContinueVoice
from compaction.eval.families.copilot import CopilotVoice
from compaction.eval.families.crewai import CrewAIVoice
from compaction.eval.families.crush import CrushVoice
from compaction.eval.families.cursor import CursorVoice
from compaction.eval.families.dc import DesktopCommanderVoice
from compaction.eval.families.deepagents import DeepAgentsVoice
from compaction.eval.families.gemini import GeminiVoice
from compaction.eval.families.goose import GooseVoice
from compaction.eval.families.gptme import GptmeVoice
from compaction.eval.families.homegrown import HomegrownVoice
from compaction.eval.families.kiro import KiroVoice
from compaction.eval.families.letta import LettaVoice
from compaction.eval.families.moatless import MoatlessVoice
from compaction.eval.families.open_interpreter import OpenInterpreterVoice
from compaction.eval.families.openhands import OpenHandsVoice
from compaction.eval.families.plandex import PlandexVoice
from compaction.eval.families.refact import RefactVoice
from compaction.eval.families.roo import RooVoice
from compaction.eval.families.smolagents import SmolagentsVoice
from compaction.eval.families.story import tell
from compaction.eval.families.swekit import SweKitVoice
from compaction.eval.families.trae import TraeVoice
from compaction.eval.families.void import VoidVoice
from compaction.eval.families.warp import WarpVoice
from compaction.eval.families.windsurf import WindsurfVoice
from compaction.eval.families.zed import ZedVoice
from compaction.eval.sessions import EvalSession

__all__ = ["FAMILIES", "ProbeLeakError", "family_sessions"]

_VOICES: tuple[type[Voice], ...] = (
    ClaudeCodeVoice,
    CodexVoice,
    ClineVoice,
    OpenHandsVoice,
    GeminiVoice,
    GooseVoice,
    ContinueVoice,
    ZedVoice,
    CursorVoice,
    CrushVoice,
    WindsurfVoice,
    AmpVoice,
    CopilotVoice,
    HomegrownVoice,
    WarpVoice,
    KiroVoice,
    PlandexVoice,
    DeepAgentsVoice,
    AugmentVoice,
    OpenInterpreterVoice,
    SmolagentsVoice,
    TraeVoice,
    RooVoice,
    LettaVoice,
    CrewAIVoice,
    AutoGenVoice,
    VoidVoice,
    RefactVoice,
    SweKitVoice,
    GptmeVoice,
    MoatlessVoice,
    AcrVoice,
    DesktopCommanderVoice,
    ClineMcpVoice,
)
#: Family name → session writer (seed, target tokens) → EvalSession.
FAMILIES: Final[dict[str, Callable[[int, int], EvalSession]]] = {
    voice.family: partial(tell, voice) for voice in _VOICES
}
# Written with a story of its own, not `tell`: CodeAct's text protocol on a Rust CLI.
FAMILIES[codeact.FAMILY] = codeact.write
# The same story, ending without restating its facts (nothing late keeps them for free).
FAMILIES[codeact.FAMILY_TERSE] = codeact.write_terse
# Written with a story of its own, not `tell`: Claude Code's native tools on a Python service.
FAMILIES[ccstory.FAMILY] = ccstory.write
# Written with a story of its own, not `tell`: Codex CLI's native tools on a TypeScript monorepo.
FAMILIES[cxstory.FAMILY] = cxstory.write
# Written with a story of its own, not `tell`: Gemini CLI's native tools on a Go service.
FAMILIES[gcstory.FAMILY] = gcstory.write
# Written with a story of its own, not `tell`: OpenHands' native tools on a Java/Gradle service.
FAMILIES[ohstory.FAMILY] = ohstory.write
# Written with a story of its own, not `tell`: aider's SEARCH/REPLACE chat on a FastAPI service.
FAMILIES[aiderstory.FAMILY] = aiderstory.write
# Written with a story of its own, not `tell`: OpenCode's native tools on a Phoenix service.
FAMILIES[ocstory.FAMILY] = ocstory.write
# Written with a story of its own, not `tell`: goose's developer tools on a Rails service.
FAMILIES[gsstory.FAMILY] = gsstory.write
# Written with a story of its own, not `tell`: Roo Code's native tools on a Laravel app.
FAMILIES[roostory.FAMILY] = roostory.write
# Written with a story of its own, not `tell`: Amazon Q CLI's tools on Terraform + a TS Lambda.
FAMILIES[qstory.FAMILY] = qstory.write
# Written with a story of its own, not `tell`: Copilot agent mode's tools on an ASP.NET Core API.
FAMILIES[copilotstory.FAMILY] = copilotstory.write
# Written with a story of its own, not `tell`: Cursor agent's native tools on a C++/CMake library.
FAMILIES[cursorstory.FAMILY] = cursorstory.write
# Written with a story of its own, not `tell`: Qwen Code's native tools on a Flutter app.
FAMILIES[qwenstory.FAMILY] = qwenstory.write
# Written with a story of its own, not `tell`: Zed's agent tools on an Express (plain JS) API.
FAMILIES[zedstory.FAMILY] = zedstory.write
# Written with a story of its own, not `tell`: Amp's own tools on a Clojure webhook service.
FAMILIES[ampstory.FAMILY] = ampstory.write
# Written with a story of its own, not `tell`: Windsurf Cascade's tools on a Kotlin/Ktor API.
FAMILIES[windsurfstory.FAMILY] = windsurfstory.write
# Written with a story of its own, not `tell`: Crush's own tools on a Hanami (Ruby) API.
FAMILIES[crushstory.FAMILY] = crushstory.write
# Written with a story of its own, not `tell`: Kimi CLI's own tools on a Django + Celery site.
FAMILIES[kimistory.FAMILY] = kimistory.write
# Written with a story of its own, not `tell`: Forge's own tools on a Rust axum service.
FAMILIES[forgestory.FAMILY] = forgestory.write
# Written with a story of its own, not `tell`: Mistral Vibe's own tools on a Swift/Vapor service.
FAMILIES[vibestory.FAMILY] = vibestory.write
# Written with a story of its own, not `tell`: OpenManus's tools on a Symfony (PHP) backend.
FAMILIES[manusstory.FAMILY] = manusstory.write
# Written with a story of its own, not `tell`: pi's own tools on a SvelteKit app on Workers.
FAMILIES[pistory.FAMILY] = pistory.write
# Written with a story of its own, not `tell`: Codebuff's text tool protocol on a Next.js + Prisma
# app.
FAMILIES[codebuffstory.FAMILY] = codebuffstory.write
# Written with a story of its own, not `tell`: Octofriend's own tools on a Deno + Fresh site.
FAMILIES[octostory.FAMILY] = octostory.write
# Written with a story of its own, not `tell`: Nanocoder's native tools on a Deno 2 + Hono service.
FAMILIES[nanostory.FAMILY] = nanostory.write


def family_sessions(name: str, seeds: Sequence[int], tokens: int) -> list[EvalSession]:
    """Sessions of family `name`, one per seed, each about `tokens` tokens."""
    writer = FAMILIES[name]
    return [writer(seed, tokens) for seed in seeds]
