"""The body of one ``messages.create`` call, built from the engine's provider-neutral request.

What goes on the wire besides the request's own fields: the prompt-caching breakpoints (the system
prompt, where the previous request ended, the last message, and the mask layer's one-hour anchors,
within the API's four), the beta flags the body needs, and which optional features it carries (what
an endpoint's refusal may name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Union

from ..engine.api_facts.caching import MAX_ANCHORS, anchorable
from ..engine.api_facts.context_edit_types import ContextManagementParam
from ..engine.api_facts.context_edits import required_betas
from ..engine.api_facts.request_params import ThinkingParam
from ..engine.contracts.json_types import JSONObject
from ..engine.contracts.messages import CacheControlEphemeralParam, CompactionScan
from ..engine.contracts.provider import ModelRequest

if TYPE_CHECKING:  # typing.Required is 3.11+
    from typing_extensions import Required, TypedDict
else:
    from typing import TypedDict

__all__ = ["MessageJSON", "RequestKwargs", "features_sent", "request_kwargs", "with_cache_breakpoints"]

MessageJSON = Mapping[str, object]
"""A message as sent: the engine's :class:`~nbagent.engine.contracts.messages.MessageParam`, or
a copy of one with cache breakpoints set."""


class RequestKwargs(TypedDict, total=False):
    """The keyword arguments of one ``messages.create`` call (the request body, ``betas`` and ``timeout``)."""

    model: Required[str]
    messages: Required[Sequence[MessageJSON]]
    max_tokens: Required[int]
    stream: Required[bool]
    system: Union[str, Sequence[Mapping[str, object]]]
    tools: list[JSONObject]
    thinking: ThinkingParam
    output_config: JSONObject
    timeout: float
    context_management: ContextManagementParam
    betas: list[str]


def request_kwargs(request: ModelRequest, compaction: CompactionScan | None = None) -> RequestKwargs:
    """The keyword arguments of ``messages.create`` for ``request``: its fields, the cache
    breakpoints (unless the endpoint refused them) and the betas its body needs."""
    kwargs: RequestKwargs = {
        "model": request.model,
        "messages": request.messages,  # copied where the breakpoints are set
        "max_tokens": request.max_tokens,
        "stream": True,
    }
    caching = "cache_control" not in request.without  # an endpoint that refused it gets none
    anchors = _anchors(request) if caching else ()
    if request.system:
        kwargs["system"] = _with_cache_breakpoint_system(request.system, bool(anchors)) \
            if caching else request.system
    # Prompt caching as Claude Code does it: the system prompt and the conversation so far are
    # cacheable prefixes, so each request reads what the previous one wrote.
    if caching:
        kwargs["messages"] = with_cache_breakpoints(kwargs["messages"], anchors)
    if request.tools or request.server_tools:
        kwargs["tools"] = [*request.tools, *request.server_tools]
    if request.thinking is not None:
        kwargs["thinking"] = request.thinking.copy()
    if request.effort is not None:
        kwargs["output_config"] = {"effort": request.effort}
    if request.timeout_s is not None:
        kwargs["timeout"] = request.timeout_s
    if request.context_management:
        kwargs["context_management"] = request.context_management.copy()
    betas = required_betas(request.messages, request.context_management, compaction)
    if betas:
        kwargs["betas"] = betas
    return kwargs


_EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}
_EPHEMERAL_1H: CacheControlEphemeralParam = {"type": "ephemeral", "ttl": "1h"}


def _anchors(request: ModelRequest) -> tuple[int, ...]:
    """The request's cache anchors that are older than the breakpoints on the last messages and
    can carry one (the others are covered by those breakpoints), the newest
    :data:`MAX_ANCHORS` of them (so a request keeps to the API's four breakpoints)."""
    n = len(request.messages)
    usable = sorted(a for a in set(request.cache_anchors)
                    if anchorable(a, n) and _marked(request.messages[a]) is not None)
    return tuple(usable[-MAX_ANCHORS:])


def _with_cache_breakpoint_system(system: str | Sequence[Mapping[str, object]],
                                  one_hour: bool = False) -> list[dict[str, object]]:
    # With a one-hour anchor after it, the system prompt's breakpoint is one-hour too: the API
    # takes longer TTLs only before shorter ones.
    mark = _EPHEMERAL_1H if one_hour else _EPHEMERAL
    if isinstance(system, str):
        return [{"type": "text", "text": system, "cache_control": mark}]
    blocks = [dict(b) for b in system]
    if blocks:
        blocks[-1]["cache_control"] = mark
    return blocks


def with_cache_breakpoints(messages: Sequence[MessageJSON], anchors: tuple[int, ...] = ()) -> list[MessageJSON]:
    """A copy with cache breakpoints on the last message and on the message before the last
    assistant reply, and one-hour ones on ``anchors`` (inputs untouched).

    The second one is where the previous request ended, hence where it wrote the cache: the API
    looks for a cached prefix only 20 blocks back from a breakpoint, and a reply with ten or more
    parallel tool calls plus their results is more than that. Re-marking a cached prefix costs
    nothing (it is read, not written again). The anchors (the mask layer's, see
    :attr:`ModelRequest.cache_anchors`) must outlive the requests until the next masking, which
    can be more than five minutes away, hence one hour. Two anchors come only with a masking,
    which changed the prompt before the previous request's end: that breakpoint then goes, so
    the request keeps to the API's four.
    """
    out = list(messages)
    marks = [(a, _EPHEMERAL_1H) for a in anchors]
    if len(anchors) < 2:
        marks.append((len(out) - 3, _EPHEMERAL))
    marks.append((len(out) - 1, _EPHEMERAL))
    for index, mark in marks:
        if index >= 0:
            marked = _marked(out[index], mark)
            if marked is not None:
                out[index] = marked
    return out


def _marked(message: MessageJSON, mark: CacheControlEphemeralParam = _EPHEMERAL) -> MessageJSON | None:
    """``message`` with a breakpoint on its last block, or None when it cannot carry one."""
    raw = message.get("content")
    if isinstance(raw, str):
        if not raw:
            return None
        content: list[dict[str, object]] = [{"type": "text", "text": raw}]
    else:
        content = [dict(b) for b in raw or () if isinstance(b, Mapping)] if isinstance(raw, (list, tuple)) else []
    if not content:
        return None
    match content[-1]:
        case {"type": "thinking" | "redacted_thinking"}:  # the API refuses a breakpoint on thinking
            return None
    content[-1]["cache_control"] = mark.copy()
    return {"role": message["role"], "content": content}


def features_sent(kwargs: RequestKwargs, request: ModelRequest) -> frozenset[str]:
    """The optional request features ``kwargs`` carry (what a refusal may name)."""
    sent = {"thinking"} if "thinking" in kwargs else set()
    if "output_config" in kwargs:
        sent.add("effort")
    if "tool_choice" in kwargs:
        sent.add("tool_choice")
    if request.server_tools:
        sent.add("server_tools")
    if "context_management" in kwargs:
        sent.add("context_management")
    if "cache_control" not in request.without:
        sent.add("cache_control")
        if _anchors(request):
            sent.add("cache_ttl")
    return frozenset(sent)
