"""The drop-in proxy: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages,
compacted on their way to the upstream, streamed back as they arrive.

    app = create_app(ProxySettings(upstream="https://api.openai.com"))   # an ASGI app
    # or: compaction serve --upstream https://api.openai.com

Needs the `server` extra (starlette, uvicorn, httpx).
"""

from compaction.proxy.app import create_app
from compaction.proxy.settings import DEFAULT_MAX_BODY_BYTES, ProxySettings, default_policy

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ProxySettings", "create_app", "default_policy"]
