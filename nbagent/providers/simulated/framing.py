"""From a :class:`Reply` to the wire: the assistant message with its usage, and its SSE frames.

``build_message`` applies what the API applies to generated content (thinking when asked, and
unasked with its text omitted on models that think by default; stop sequences, ``max_tokens`` and
the context window) and counts output tokens with tiktoken.
``stream_frames`` turns the message into the event sequence of Anthropic's streaming
documentation, so that the SDK's accumulator rebuilds exactly the non-streamed message.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, Union

from nbagent.engine.api_facts.models import get_model
from nbagent.engine.api_facts.tokens import count_text_tokens, encoding
from nbagent.engine.contracts.messages import block_text

from ...engine.api_facts.caching import CacheUsage
from ...engine.api_facts.context_edit_types import AppliedEdit
from ...engine.contracts.json_types import JSONObject
from .script import RawBlock, Reply, TextBlock, ThinkingBlock
from .validation import RequestBody

if TYPE_CHECKING:  # typing.Required is 3.11+
    from typing_extensions import Required, TypedDict
else:
    from typing import TypedDict

DEFAULT_THINKING = "(simulated model) No real reasoning happens here; the reply follows fixed rules or a script."
PING_EVERY = 20  # content deltas between keep-alive pings
_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")

Block = dict[str, object]  # a content block as JSON (as the responder gave it, for a RawBlock)


class SimUsage(TypedDict, total=False):
    """A reply's ``usage``, as the API reports it."""

    input_tokens: Required[int]
    cache_creation_input_tokens: Required[int]
    cache_read_input_tokens: Required[int]
    cache_creation: Required[dict[str, int]]
    output_tokens: Required[int]
    service_tier: Required[str]
    server_tool_use: dict[str, int]
    iterations: list[JSONObject]
    """A server compaction's iteration, then the message's (see ``context_edits.add_to_message``)."""


class SimContextManagement(TypedDict):
    """A reply's ``context_management``: the edits the server applied."""

    applied_edits: list[AppliedEdit]


class SimMessage(TypedDict, total=False):
    """The assistant message the simulated API answers (and streams, :func:`stream_frames`)."""

    id: Required[str]
    type: Required[str]
    role: Required[str]
    model: Required[str]
    content: Required[list[Block]]
    stop_reason: Required[str]
    stop_sequence: Required[Union[str, None]]
    usage: Required[SimUsage]
    stop_details: dict[str, object]
    context_management: SimContextManagement


@dataclass(frozen=True)
class Frame:
    """One server-sent event. ``tokens`` is the output it carries (for pacing); ``json_fragment``
    marks a non-empty piece of a tool call's input."""

    event: str
    data: Mapping[str, object] = field(default_factory=dict)
    tokens: int = 0
    json_fragment: bool = False

    def encode(self) -> bytes:
        """The frame on the wire: ``event: NAME\\ndata: JSON\\n\\n``."""
        return f"event: {self.event}\ndata: {json.dumps(self.data, ensure_ascii=False)}\n\n".encode()


def _tokens(block: Block) -> int:
    return count_text_tokens(block_text(block))


def _signature(thinking: str) -> str:
    # Deterministic and opaque, like the API's: a digest of the thinking text.
    return base64.b64encode(hashlib.blake2b(thinking.encode(), digest_size=48).digest()).decode()


def _fit(content: list[Block], limit: int) -> tuple[list[Block], bool]:
    """Cut the content at ``limit`` output tokens; a tool call that does not fit is left out."""
    out: list[Block] = []
    used = 0
    for block in content:
        n = _tokens(block)
        if used + n <= limit:
            out.append(block)
            used += n
            continue
        room, key = limit - used, block["type"]  # the text of a text/thinking block is under its type
        if key in ("text", "thinking") and room > 0:
            text = str(block[key])
            out.append({**block, key: encoding().decode(encoding().encode(text, disallowed_special=())[:room])})
        return out, True
    return out, False


def _stop_at_sequence(content: list[Block], stops: Sequence[str]) -> tuple[list[Block], str | None]:
    """Cut the text at the earliest stop sequence; later blocks are not generated."""
    for k, block in enumerate(content):
        if block["type"] != "text":
            continue
        text = str(block["text"])
        hits = [(text.find(s), s) for s in stops if s and s in text]
        if hits:
            at, seq = min(hits)
            return [*content[:k], {**block, "text": text[:at]}], seq
    return content, None


def thinking_mode(body: RequestBody, thinks_by_default: bool = True) -> tuple[bool, bool]:
    """``(thinks, shows its thinking)``: a budget or adaptive request thinks; adaptive-only models
    (5.x) think unasked, with the thinking text omitted unless ``display`` asks for it."""
    thinking = body.get("thinking")
    kind: str | None
    match thinking:
        case {"type": str(kind)}:
            pass
        case _:
            kind = None
    info = get_model(body["model"])
    default_on = thinks_by_default and info is not None and info.capabilities.thinks_by_default
    if kind == "enabled" or (kind == "adaptive" and not default_on):
        return True, True
    if kind == "disabled" or not default_on:
        return False, False
    return True, thinking.get("display") == "summarized" if isinstance(thinking, Mapping) else False


def build_message(body: RequestBody, reply: Reply, input_tokens: int, cache: CacheUsage, window: int,
                  message_id: str, tool_id: Callable[[], str], thinks_by_default: bool = True) -> SimMessage:
    """The complete assistant message for ``reply``, with stop reason and usage as the API reports."""
    thinking_on, display = thinking_mode(body, thinks_by_default)
    content: list[Block] = []
    for b in reply.content:
        if isinstance(b, ThinkingBlock):
            if thinking_on:  # when asked to, or unasked on a model that thinks by default
                content.append({"type": "thinking", "thinking": b.thinking, "signature": b.signature or _signature(b.thinking)})
        elif isinstance(b, TextBlock):
            content.append({"type": "text", "text": b.text})
        elif isinstance(b, RawBlock):
            content.append(dict(b.data))
        else:
            content.append({"type": "tool_use", "id": b.id or tool_id(), "name": b.name, "input": dict(b.input)})
    if thinking_on and not any(c["type"] == "thinking" for c in content):
        content.insert(0, {"type": "thinking", "thinking": DEFAULT_THINKING, "signature": _signature(DEFAULT_THINKING)})
    if not display:  # display omitted: the thinking text is not returned, its signature is
        content = [{**c, "thinking": ""} if c["type"] == "thinking" else c for c in content]
    stop_reason = reply.stop_reason or ("tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn")
    stops = body.get("stop_sequences")
    content, stop_sequence = _stop_at_sequence(content, [str(s) for s in stops] if isinstance(stops, list) else [])
    if stop_sequence is not None:
        stop_reason = "stop_sequence"
    max_tokens = body["max_tokens"]
    limit = min(max_tokens, max(window - input_tokens, 1))
    content, cut = _fit(content, limit)
    if cut:
        stop_reason, stop_sequence = ("max_tokens" if limit == max_tokens else "model_context_window_exceeded"), None
    usage: SimUsage = {
        "input_tokens": max(input_tokens - cache.read - cache.write, 0),
        "cache_creation_input_tokens": cache.write,
        "cache_read_input_tokens": cache.read,
        "cache_creation": {"ephemeral_5m_input_tokens": cache.write_5m, "ephemeral_1h_input_tokens": cache.write_1h},
        # The API never reports zero output, even for an empty reply.
        "output_tokens": max(1, sum(_tokens(c) for c in content)),
        "service_tier": "standard",
    }
    searches = sum(1 for c in content if c["type"] == "server_tool_use" and c.get("name") == "web_search")
    if searches:
        usage["server_tool_use"] = {"web_search_requests": searches, "web_fetch_requests": 0}
    message: SimMessage = {"id": message_id, "type": "message", "role": "assistant", "model": body["model"],
               "content": content, "stop_reason": stop_reason, "stop_sequence": stop_sequence, "usage": usage}
    if reply.stop_details is not None:
        message["stop_details"] = dict(reply.stop_details)
    return message


def _text_pieces(text: str, per_piece: int = 3) -> list[tuple[str, int]]:
    """``text`` in pieces of about ``per_piece`` tokens, each with its token count.

    Cut at token boundaries (by character offset, so a character split across tokens stays whole),
    the pieces join back exactly and their counts add up to the text's count: paced streaming then
    takes exactly ``output_tokens / tokens_per_second``.
    """
    tokens = encoding().encode(text, disallowed_special=())
    _, offsets = encoding().decode_with_offsets(tokens)
    pieces: list[tuple[str, int]] = []
    start_char = start_token = 0
    for t in [*range(per_piece, len(tokens), per_piece), len(tokens)]:
        end_char = offsets[t] if t < len(tokens) else len(text)
        if end_char > start_char:
            pieces.append((text[start_char:end_char], t - start_token))
            start_char, start_token = end_char, t
    if pieces and start_token < len(tokens):
        pieces[-1] = (pieces[-1][0], pieces[-1][1] + len(tokens) - start_token)
    return pieces


def _json_pieces(value: object) -> list[str]:
    text = json.dumps(value, ensure_ascii=False)
    size = max(1, -(-len(text) // max(3, -(-len(text) // 12))))  # several fragments of ≤ 12 chars
    return [text[i:i + size] for i in range(0, len(text), size)]


def stream_frames(message: SimMessage) -> list[Frame]:
    """The SSE event sequence that streams ``message``, as in the API's streaming documentation."""
    usage = message["usage"]
    start = {**{k: v for k, v in message.items() if k not in ("stop_details", "context_management")},
             "content": [], "stop_reason": None,
             "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
    frames = [Frame("message_start", {"type": "message_start", "message": start}), Frame("ping", {"type": "ping"})]
    deltas = 0
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        pieces: list[tuple[str, str, object, int]]
        if kind == "text":
            opening: Block = {"type": "text", "text": ""}
            pieces = [("text_delta", "text", p, n) for p, n in _text_pieces(str(block["text"]))]
            citations = block.get("citations")
            pieces += [("citations_delta", "citation", c, 0) for c in (citations if isinstance(citations, list) else ())]
        elif kind == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            pieces = [("thinking_delta", "thinking", p, n) for p, n in _text_pieces(str(block["thinking"]))]
            pieces.append(("signature_delta", "signature", block["signature"], 0))
        elif kind == "compaction":  # its summary arrives in one compaction_delta
            opening = {k: v for k, v in block.items() if k not in ("content", "encrypted_content")}
            pieces = [("compaction_delta", "content", block["content"], 0)]
        elif "input" not in block:  # results and unknown types arrive whole at block start
            opening, pieces = dict(block), []
        else:
            opening = {**block, "input": {}}
            # The API opens a tool's input with an empty fragment, then sends the JSON in pieces.
            pieces = [("input_json_delta", "partial_json", p, count_text_tokens(p))
                      for p in ["", *_json_pieces(block["input"])]]
        frames.append(Frame("content_block_start", {"type": "content_block_start", "index": index,
                                                    "content_block": opening}))
        for dtype, key, piece, tokens in pieces:
            delta = {"type": "content_block_delta", "index": index, "delta": {"type": dtype, key: piece}}
            frames.append(Frame("content_block_delta", delta, tokens, dtype == "input_json_delta" and bool(piece)))
            deltas += 1
            if deltas % PING_EVERY == 0:
                frames.append(Frame("ping", {"type": "ping"}))
        frames.append(Frame("content_block_stop", {"type": "content_block_stop", "index": index}))
    frames.append(Frame("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"],
                  **({"stop_details": message["stop_details"]} if "stop_details" in message else {})},
        # cumulative, as the API sends them
        "usage": {k: v for k, v in usage.items() if k in (*_USAGE_KEYS, "server_tool_use", "iterations")},
        **({"context_management": message["context_management"]} if "context_management" in message else {}),
    }))
    frames.append(Frame("message_stop", {"type": "message_stop"}))
    return frames
