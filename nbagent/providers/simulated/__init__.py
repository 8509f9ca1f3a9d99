"""An offline, honest implementation of the Anthropic Messages API for the real SDK.

No test, demo or CI run may reach the network, and a new user has no API key: this package serves
the Messages API (``POST /v1/messages``, streamed and not, and ``/v1/messages/count_tokens``)
in-process to ``anthropic.AsyncAnthropic`` or on loopback. It is not a language model; its demo
brain says so in every reply. See ``shared/spec/simulated-provider.md``.

>>> api = SimulatedAPI([text_reply("hello")])
>>> client = api.async_client()  # the real AsyncAnthropic, talking to ``api``
"""

from __future__ import annotations

from ...engine.api_facts.caching import CacheUsage, PromptCache
from .app import AppResponse, RecordedRequest, SimulatedAPI
from .brain import DemoBrain
from .faults import ALL_FAULTS, Fault, FaultKind, FaultSchedule
from .rate_limits import RateLimitSettings, SharedRateLimits
from .script import (
    RawBlock,
    Reply,
    ReplyError,
    ScriptedResponder,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    error_reply,
    text_reply,
    tool_reply,
)
from .server import LoopbackServer, SimulatedTransport, start_server
from .validation import RequestBody

__all__ = [
    "ALL_FAULTS",
    "AppResponse",
    "CacheUsage",
    "DemoBrain",
    "Fault",
    "FaultKind",
    "FaultSchedule",
    "LoopbackServer",
    "PromptCache",
    "RateLimitSettings",
    "RawBlock",
    "RecordedRequest",
    "Reply",
    "RequestBody",
    "ReplyError",
    "ScriptedResponder",
    "SimulatedAPI",
    "SharedRateLimits",
    "SimulatedTransport",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "error_reply",
    "start_server",
    "text_reply",
    "tool_reply",
]
