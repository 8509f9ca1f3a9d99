"""What the simulated API answers: replies, scripted lists of them, and the function hook.

A *responder* turns one request (the JSON body as a dict) into a :class:`Reply`. The app owns the
wire format, token usage, ids and faults; a responder only decides the content, like
pydantic-ai's ``FunctionModel``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterable, Mapping, Sequence, Union

from .validation import RequestBody


@dataclass(frozen=True)
class TextBlock:
    """A ``text`` content block."""

    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    """A ``tool_use`` content block; ``id`` None means the app assigns ``toolu_sim_…``."""

    name: str
    input: Mapping[str, object]
    id: str | None = None


@dataclass(frozen=True)
class ThinkingBlock:
    """A ``thinking`` block; only sent when the request enabled thinking. ``signature`` None means
    the app derives one from the text."""

    thinking: str
    signature: str | None = None


@dataclass(frozen=True)
class RawBlock:
    """Any content block as the API sends it, streamed faithfully: ``server_tool_use`` (input in
    fragments), a text block with ``citations`` (each as a ``citations_delta``), a
    ``web_search_tool_result``, or a type nbagent does not know (sent whole at block start)."""

    data: Mapping[str, object]


Block = Union[TextBlock, ToolUseBlock, ThinkingBlock, RawBlock]


@dataclass(frozen=True)
class ReplyError:
    """An API error answered instead of a message."""

    status: int
    type: str
    message: str
    retry_after: float | None = None


@dataclass(frozen=True)
class Reply:
    """One response of the simulated model: content blocks and a stop reason, or an error.

    ``stop_reason`` None means the natural one: ``tool_use`` when a tool is called, else
    ``end_turn`` (the app may still cut at ``max_tokens`` or a stop sequence).
    """

    content: tuple[Block, ...] = ()
    stop_reason: str | None = None
    error: ReplyError | None = None
    stop_details: Mapping[str, object] | None = None
    """Sent with the stop reason in ``message_delta`` (a refusal's category and explanation)."""

    @property
    def is_error(self) -> bool:
        """Whether this reply is an API error rather than a message."""
        return self.error is not None


def text_reply(text: str, *, thinking: str | None = None, stop_reason: str | None = None) -> Reply:
    """A reply with one text block (and an optional thinking block before it)."""
    blocks: list[Block] = [ThinkingBlock(thinking)] if thinking else []
    blocks.append(TextBlock(text))
    return Reply(tuple(blocks), stop_reason)


ToolCall = tuple[str, Mapping[str, object]]


def tool_reply(
    name: str | Sequence[ToolCall],
    input: Mapping[str, object] | None = None,
    text: str | None = None,
    id: str | None = None,
) -> Reply:
    """A reply that calls tools: ``tool_reply("python", {"code": "1+1"})``, or several at once
    with a list of ``(name, input)`` pairs: ``tool_reply([("a", {}), ("b", {"x": 1})])``.

    ``text`` comes first as a text block, as models usually say what they are about to do;
    ``id`` fixes the id of the first call (the app numbers the others).
    """
    if isinstance(name, str):
        calls: list[ToolCall] = [(name, dict(input or {}))]
    else:
        if input is not None:
            raise TypeError("pass either name and input, or a list of (name, input) pairs")
        calls = [(n, dict(i)) for n, i in name]
    if not calls:
        raise ValueError("tool_reply needs at least one tool call")
    blocks: list[Block] = [TextBlock(text)] if text else []
    blocks.extend(ToolUseBlock(n, i, id if k == 0 else None) for k, (n, i) in enumerate(calls))
    return Reply(tuple(blocks))


def error_reply(status: int, type: str, message: str, retry_after: float | None = None) -> Reply:
    """A reply that is an API error, e.g. ``error_reply(529, "overloaded_error", "Overloaded")``."""
    return Reply(error=ReplyError(status, type, message, retry_after))


SCRIPT_EXHAUSTED = "[simulated] script exhausted: no scripted reply is left for this request."

ResponderFn = Callable[..., Union[Reply, Awaitable[Reply]]]
"""Called with one argument, the request as validated (a :class:`~.validation.RequestBody`, a plain
dict at run time). Spelled ``...`` so that responders written against ``dict[str, Any]`` (as the
tests and benchmarks are) still fit: a ``Callable[[RequestBody], ...]`` would refuse them."""
Responder = Union[ResponderFn, Sequence[Reply], None]


class ScriptedResponder:
    """Answers with a list of replies, consumed in order.

    When the list runs out it answers :data:`SCRIPT_EXHAUSTED` as plain text rather than failing,
    so that a test sees a readable message in the transcript; ``exhausted`` counts those answers.
    """

    def __init__(self, replies: Iterable[Reply]) -> None:
        self._replies = list(replies)
        for r in self._replies:
            if not isinstance(r, Reply):
                raise TypeError(f"scripted replies must be Reply objects, got {type(r).__name__}")
        self.exhausted = 0

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self._replies)

    def __call__(self, request: RequestBody) -> Reply:
        if self._replies:
            return self._replies.pop(0)
        self.exhausted += 1
        return text_reply(SCRIPT_EXHAUSTED)


async def respond(responder: ResponderFn, request: RequestBody) -> Reply:
    """Call a responder, sync or async, and check that it answered a :class:`Reply`."""
    reply = responder(request)
    if inspect.isawaitable(reply):
        reply = await reply
    if not isinstance(reply, Reply):
        raise TypeError(f"a responder must return a Reply, got {type(reply).__name__}")
    return reply
