"""SDK stream events -> engine chunks, and the assistant message assembled faithfully.

The one place where the raw Messages API stream becomes engine chunks. Every content block is
kept as the API sent it, so that it can be passed back unchanged in later requests: text with its
``citations`` (from ``citations_delta``), thinking with its signature, redacted thinking, tool and
server tool calls with their streamed input, server tool results, server ``compaction`` blocks
(``content`` and ``encrypted_content`` from ``compaction_delta``: the server refuses the block
back without them), and block types this code has never heard of. ``context_management`` of the
final ``message_delta`` (what server-side edits cleared) and the ``compaction`` iterations of
``usage.iterations`` (billed outside the top-level usage) are kept beside the message.
Hand-written rather than the SDK's ``accumulate_event`` because that one parses a
tool call's JSON in partial mode, so input cut at ``max_tokens`` would look like a complete, shorter
call (nbagent keeps it under ``_unparsed_input`` instead), and it re-parses the whole input on every
fragment (quadratic in the input's length).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Union

from ..engine.api_facts.cost import Usage
from ..engine.contracts.errors import ApiError, ErrorKind
from ..engine.contracts.events import TextDelta, ThinkingDelta, ToolUseDelta
from ..engine.contracts.json_types import JSONObject, JSONValue
from ..engine.contracts.messages import is_content_block
from ..engine.contracts.provider import Chunk, MessageComplete, StreamStarted
from ..engine.contracts.waits import within
from ..engine.disk.json_depth import loads_within

if TYPE_CHECKING:
    from anthropic.types import RawContentBlockDelta, RawMessageDeltaEvent, RawMessageStreamEvent
    from anthropic.types.beta import BetaRawContentBlockDelta, BetaRawMessageDeltaEvent, BetaRawMessageStreamEvent
    from pydantic import BaseModel

    StreamEvent = Union[RawMessageStreamEvent, BetaRawMessageStreamEvent]
    """A raw stream event, of the plain or the beta resource (told apart by ``type``)."""
    BlockDelta = Union[RawContentBlockDelta, BetaRawContentBlockDelta]

_EMPTY_FIELDS = {"text": ("text",), "thinking": ("thinking", "signature")}
"""Blocks that open empty and fill with deltas: the fields they must carry even when empty."""

MAX_CHARS_PER_TOKEN = 32
"""A generous bound on the characters one output token can stream. A token averages about four
characters of text; even the longest (runs of spaces, long identifiers) stay far below 32. A reply
streaming more than ``max_tokens`` times this is not one the model wrote within ``max_tokens``: a
broken or hostile stream, ended there so that it cannot fill memory (an endless stream grew to
755 MB in 22 s)."""
REPLY_SLACK_CHARS = 4096
"""Added to the bound so that a tiny ``max_tokens`` still leaves room for signatures and citations."""


def reply_char_limit(max_tokens: int) -> int:
    """The most characters (text, thinking, tool input, signatures, citations) a reply may stream."""
    return max(max_tokens, 0) * MAX_CHARS_PER_TOKEN + REPLY_SLACK_CHARS


def parse_tool_input(text: str) -> JSONValue:
    """A tool call's JSON input. Output cut at ``max_tokens`` can leave it unfinished: keep the
    raw text under ``_unparsed_input`` (an object, as the API requires in later requests; the
    tool's schema rejects the key, so the model is told) instead of failing the request. So is an
    input nested deeper than the parser follows (the model is untrusted: a prompt injection can
    make it write ``[[[…``, and the RecursionError ended the turn)."""
    if not text.strip():
        return {}
    try:
        parsed: JSONValue = loads_within(text)
        return parsed
    except ValueError:  # unfinished, or ``[[[…`` nested past the bound
        return {"_unparsed_input": text}


_PLAIN = frozenset({str, int, float, bool})


def _dump(obj: BaseModel | Mapping[str, JSONValue]) -> JSONObject:
    """An SDK model (unknown types keep their extra fields) or a plain dict, as JSON data."""
    if isinstance(obj, Mapping):
        return {k: v for k, v in obj.items() if v is not None}
    flat = _flat(obj)
    return flat if flat is not None else obj.model_dump(exclude_none=True, mode="json")


def _flat(obj: object) -> JSONObject | None:
    """What ``model_dump(exclude_none=True, mode="json")`` gives for a model whose fields are
    scalars, empty containers or such models (most stream events), without its per-call cost;
    None for anything else."""
    fields = getattr(obj, "__dict__", None)
    if fields is None or getattr(obj, "__pydantic_extra__", None):
        return None
    out: JSONObject = {}
    for key, value in fields.items():
        kind = type(value)
        if value is None:
            continue
        if kind in _PLAIN:
            out[key] = value
        elif kind is dict or kind is list:
            if value:
                return None
            out[key] = kind()
        else:
            nested = _flat(value) if hasattr(value, "__pydantic_fields__") else None
            if nested is None:
                return None
            out[key] = nested
    return out


class StreamAssembler:
    """Feeds on raw stream events; yields the deltas to show and builds the final message."""

    def __init__(self, requested_model: str, max_tokens: int | None = None) -> None:
        # Characters the reply may still stream (see MAX_CHARS_PER_TOKEN); None: no bound.
        self.room = reply_char_limit(max_tokens) if max_tokens is not None else None
        self.max_tokens = max_tokens
        self.blocks: dict[int, JSONObject] = {}
        # index -> (id, name, input fragments) of each block whose input streams (tool calls)
        self.tool_inputs: dict[int, tuple[str, str, list[str]]] = {}
        # Streamed text and thinking by block, joined when the block stops: appending to the
        # block's string would copy it on every delta (quadratic in a long answer).
        self.texts: dict[int, list[str]] = {}
        self.thoughts: dict[int, list[str]] = {}
        self.usage: JSONObject = {}
        self.model = requested_model
        self.message_id: str | None = None
        self.stop_reason: str | None = None
        self.stop_details: JSONObject | None = None
        self.applied_edits: tuple[JSONObject, ...] = ()
        self.stopped = False

    def feed(self, event: StreamEvent) -> Chunk | None:
        """The chunk one raw event produces, if any (``ping`` and unknown events produce none)."""
        if event.type == "content_block_delta":  # nearly every event: its two usual kinds handled inline
            i, d = event.index, event.delta
            if d.type == "text_delta":
                parts = self.texts.get(i)
                text = d.text
                room = self.room
                if room is not None:  # inline: this runs for nearly every event of a long reply
                    room = self.room = room - len(text)
                    if room < 0:
                        self._spend(0)
                (parts if parts is not None else _parts(self.texts, self._block(i), i, "text")).append(text)
                return TextDelta(text, i)
            if d.type == "input_json_delta":
                call = self.tool_inputs.get(i)
                if call is None:
                    self._block(i)  # a block never started is named as such
                    raise ApiError(ErrorKind.CONNECTION, f"the stream sent tool input for block {i}, which takes none")
                if self.room is not None:
                    self._spend(len(d.partial_json))
                call[2].append(d.partial_json)
                return ToolUseDelta(call[0], call[1], d.partial_json, i)
            return self._delta(i, d)
        if event.type == "content_block_start":
            self._block_start(event.index, _dump(event.content_block))
        elif event.type == "content_block_stop":
            self._block_stop(event.index)
        elif event.type == "message_start":
            m = event.message
            self.message_id, self.model = m.id, m.model or self.model
            if m.usage is None:  # a server of the API's shape that counts nothing: say so, not AttributeError
                raise ApiError(ErrorKind.INVALID_REQUEST, "the endpoint's stream reports no token usage (message_start "
                               "without usage): nbagent needs it to measure the context against the window")
            self.usage = _dump(m.usage)
            return StreamStarted(Usage.from_api(self.usage))
        elif event.type == "message_delta":
            self._message_delta(event)
        elif event.type == "message_stop":
            self.stopped = True
        return None  # every event but a delta only builds the message

    def complete(self) -> MessageComplete:
        """The assembled message; a stream cut before ``message_stop`` is a connection error."""
        if not self.stopped or self.tool_inputs:
            # The SDK accepts a stream that a proxy closed cleanly part-way: without message_stop the
            # message is partial and must be retried as a mid-stream failure, never enter history.
            raise ApiError(ErrorKind.CONNECTION, "the stream ended before message_stop")
        for index in [*self.texts, *self.thoughts]:  # blocks a proxy never closed
            self._join(index)
        return MessageComplete(
            message={"role": "assistant", "content": [b for _, b in sorted(self.blocks.items()) if is_content_block(b)]},
            usage=Usage.from_api(self.usage), stop_reason=self.stop_reason, model=self.model,
            request_id=self.message_id, stop_details=self.stop_details, applied_edits=self.applied_edits,
            compaction_usage=compaction_usage(self.usage.get("iterations")))

    # ----- events -----------------------------------------------------------------------------
    def _block_start(self, index: int, block: JSONObject) -> None:
        if index in self.blocks:  # started again without a stop (a proxy?): the new block replaces it whole
            self.texts.pop(index, None)
            self.thoughts.pop(index, None)
            self.tool_inputs.pop(index, None)
        kind = _kind_of(block)
        for key in _EMPTY_FIELDS.get(kind, ()):
            block.setdefault(key, "")
        if kind == "text":
            self.texts[index] = [str(block["text"])]
        elif kind == "thinking":
            self.thoughts[index] = [str(block["thinking"])]
        if "input" in block:  # tool_use, server_tool_use, mcp_tool_use...: input may stream
            self.tool_inputs[index] = (str(block.get("id", "")), str(block.get("name", "")), [])
        block.pop("caller", None)  # response-only metadata: not part of the block passed back
        self.blocks[index] = block

    def _delta(self, i: int, d: BlockDelta) -> Chunk | None:
        """The rarer deltas (text and tool input are handled in :meth:`feed`)."""
        block = self._block(i)
        if d.type == "thinking_delta":
            self._spend(len(d.thinking))
            _parts(self.thoughts, block, i, "thinking").append(d.thinking)
            return ThinkingDelta(text=d.thinking, index=i)
        if d.type == "signature_delta":
            self._spend(len(d.signature))
            block["signature"] = str(block.get("signature", "")) + d.signature
        elif d.type == "citations_delta":
            citation = _dump(d.citation)
            self._spend(len(json.dumps(citation)))
            citations = block.setdefault("citations", [])
            if not isinstance(citations, list):  # a proxy's block with other citations: the stream is broken
                raise ApiError(ErrorKind.CONNECTION, f"the stream sent a citation for block {i}, whose citations "
                               "are not a list")
            citations.append(citation)
        elif d.type == "compaction_delta":
            self._compaction_delta(i, block, _dump(d))
        return None

    def _compaction_delta(self, i: int, block: JSONObject, delta: JSONObject) -> None:
        """A compaction's summary arrives whole in one delta (pieces are joined all the same); it
        must go back verbatim, so it is never cut or changed."""
        if _kind_of(block) != "compaction":
            raise ApiError(ErrorKind.CONNECTION, f"the stream sent a compaction delta for block {i}, "
                           f"a {_kind_of(block)} block")
        for key in ("content", "encrypted_content"):
            piece = delta.get(key)
            if isinstance(piece, str):
                self._spend(len(piece))
                block[key] = str(block.get(key) or "") + piece

    def _spend(self, chars: int) -> None:
        """Count streamed characters; past the reply's bound the stream is broken (and retried)."""
        if self.room is None:
            return
        self.room -= chars
        if self.room < 0:
            limit = reply_char_limit(self.max_tokens or 0)
            raise ApiError(ErrorKind.CONNECTION, f"the reply streamed more than {limit:,} characters, more than "
                           f"max_tokens={self.max_tokens:,} allows: the stream is broken and was stopped")

    def _block(self, index: int) -> JSONObject:
        block = self.blocks.get(index)
        if block is None:  # a broken stream (a proxy?): retried like one cut short
            raise ApiError(ErrorKind.CONNECTION, f"the stream sent a delta for block {index}, which it never started")
        return block

    def _join(self, index: int) -> None:
        parts = self.texts.pop(index, None)
        if parts is not None:
            self.blocks[index]["text"] = "".join(parts)
        parts = self.thoughts.pop(index, None) if self.thoughts else None
        if parts is not None:
            self.blocks[index]["thinking"] = "".join(parts)

    def _block_stop(self, index: int) -> None:
        if index not in self.blocks:  # a broken stream (a proxy?): retried like one cut short
            raise ApiError(ErrorKind.CONNECTION, f"the stream stopped block {index}, which it never started")
        self._join(index)
        call = self.tool_inputs.pop(index, None)
        if call is not None:
            text = "".join(call[2])
            if text.strip():  # input that arrived whole in content_block_start (some proxies) stays
                self.blocks[index]["input"] = parse_tool_input(text)

    def _message_delta(self, ev: RawMessageDeltaEvent | BetaRawMessageDeltaEvent) -> None:
        self.stop_reason = ev.delta.stop_reason or self.stop_reason
        details = getattr(ev.delta, "stop_details", None)
        if details is not None:
            self.stop_details = _dump(details)
        if ev.usage is not None:
            self.usage.update(_dump(ev.usage))  # cumulative figures: the latest wins
        managed = _dump(_field(ev, "context_management") or {})
        edits = managed.get("applied_edits")
        if isinstance(edits, list):
            self.applied_edits = tuple(e for e in edits if isinstance(e, dict))


def _field(model: BaseModel, name: str) -> BaseModel | Mapping[str, JSONValue] | None:
    """A model's field or extra field ``name`` (None without one). Not ``getattr(model, name, None)``:
    on a pydantic model a missing name raises and catches two exceptions first (~3 µs a request)."""
    extra = model.__pydantic_extra__
    value: BaseModel | Mapping[str, JSONValue] | None = model.__dict__.get(name, extra.get(name) if extra else None)
    return value


def _kind_of(block: Mapping[str, object]) -> str:
    """A block's (or usage entry's) ``type``; "typeless" without one."""
    match block:
        case {"type": str(kind)}:
            return kind
    return "typeless"


def compaction_usage(iterations: JSONValue | None) -> Usage | None:
    """The summed usage of the ``compaction`` entries of ``usage.iterations`` (None: there are none)."""
    listed = iterations if isinstance(iterations, list) else []
    entries = [e for e in listed if isinstance(e, dict) and _kind_of(e) == "compaction"]
    if not entries:
        return None
    total = Usage()
    for entry in entries:
        total = total + Usage.from_api(entry)
    return total


def _parts(streamed: dict[int, list[str]], block: JSONObject, index: int, field: str) -> list[str]:
    """The parts of ``block[field]`` streamed so far, started again from the joined text for a delta
    after the block's stop. A block without that field (a text delta for a thinking block) would be
    invalid to send back: the stream is broken."""
    parts = streamed.get(index)
    if parts is None:
        if field not in block:
            raise ApiError(ErrorKind.CONNECTION,
                           f"the stream sent {field} for a {_kind_of(block)} block (block {index})")
        parts = streamed[index] = [str(block[field])]
    return parts


AFTER_STOP_S = 0.5
"""How long the end of a stream may follow its ``message_stop`` (see :func:`read_to_end`)."""


async def read_to_end(events: AsyncIterator[object]) -> None:
    """Read once more after ``message_stop``: normally the stream ends there, and the SDK's generators
    finish as written. Left unfinished, each costs the event loop a thread-safe wake-up (a write to
    its socket) and a task to close it, on every request. The read is bounded: a server
    that keeps the connection open waits ``AFTER_STOP_S`` at most, one that sends more after the
    message gets one event read (then the response is closed), and nothing after the message (an
    error event too) is of consequence."""
    with contextlib.suppress(Exception):  # StopAsyncIteration (the stream's end) and the timeout included
        await within(anext(events), AFTER_STOP_S)
