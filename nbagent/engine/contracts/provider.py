"""What a provider hands the engine: stream chunks and the provider protocol.

Deltas are the engine's own events (``TextDelta``, ``ThinkingDelta``, ``ToolUseDelta``); a stream
ends with one :class:`MessageComplete` holding the assembled assistant message and the API's usage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Callable, Mapping, Protocol, Sequence, Union

from ..api_facts.context_edit_types import ContextManagementParam
from ..api_facts.cost import Usage
from ..api_facts.rate_limits import RateLimitSnapshot
from ..api_facts.request_params import ThinkingParam
from .events import TextDelta, ThinkingDelta, ToolUseDelta
from .json_types import JSONObject
from .messages import Message, TextBlockParam


@dataclass(frozen=True)
class MessageComplete:
    """The assembled assistant message of one request, with the API's truth about it."""

    message: Message
    usage: Usage
    stop_reason: str | None
    model: str
    request_id: str | None = None
    stop_details: Mapping[str, object] | None = None
    """The API's ``stop_details`` (a refusal's ``category`` and ``explanation``), as received."""
    applied_edits: tuple[Mapping[str, object], ...] = ()
    """What server-side context editing cleared (``context_management.applied_edits`` of the final
    ``message_delta``), as received."""
    compaction_usage: Usage | None = None
    """The tokens of server compaction iterations (``usage.iterations`` of type ``compaction``):
    billed, but not part of the top-level ``usage`` (so not part of the context's size)."""
    rate_limits: RateLimitSnapshot | None = None
    """The response's ``anthropic-ratelimit-*`` headers (None when it had none)."""


@dataclass(frozen=True)
class StreamStarted:
    """The answer began (``message_start``): its input usage as the API reported it then. What a
    request interrupted after this point was billed for at least (the loop keeps it as spent)."""

    usage: Usage


Chunk = Union[TextDelta, ThinkingDelta, ToolUseDelta, StreamStarted, MessageComplete]


@dataclass(frozen=True)
class ModelRequest:
    """Everything one Messages API call needs, provider-neutral."""

    model: str
    messages: Sequence[Message]
    system: str | list[TextBlockParam] | None
    tools: Sequence[JSONObject]
    max_tokens: int
    thinking: ThinkingParam | None = None
    """The API's ``thinking`` parameter, built from the model table (None: not sent)."""
    effort: str | None = None
    """``output_config.effort`` (None: not sent)."""
    server_tools: Sequence[JSONObject] = ()
    """Server tool definitions (web search, web fetch), sent after the client tools."""
    timeout_s: float | None = None
    context_management: ContextManagementParam | None = None
    """The API's ``context_management`` parameter (server-side edits and compaction; None: not sent).
    The provider adds the beta headers it and the messages need
    (:func:`~nbagent.engine.api_facts.context_edits.required_betas`)."""
    cache_anchors: tuple[int, ...] = ()
    """Messages whose prefix is worth caching for an hour: before where the mask layer's next
    change will start, and after a masking before where it started
    (:func:`~nbagent.engine.loop.request_context.mask_anchors`). The provider puts one-hour
    breakpoints on the newest two older than the last three messages
    (:func:`~nbagent.engine.api_facts.caching.anchorable`)."""
    without: frozenset[str] = frozenset()
    """Features the endpoint refused (see ``engine.loop.degrade``): the provider leaves them out
    (``cache_control``: no cache breakpoints)."""
    on_rate_limits: Callable[[RateLimitSnapshot], None] | None = field(default=None, compare=False, repr=False)
    """Called with the response's rate limit headers as soon as its head arrives (before the stream):
    the pacer shares them with the machine's other kernels (``engine.loop.shared_budget``)."""


class Provider(Protocol):
    """A source of streamed model replies (the Anthropic SDK, against the real or simulated API)."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Open a stream; raises the SDK's errors before or during iteration."""
        ...
