"""The simulated Messages API itself: routing, validation, usage, faults and SSE framing.

:class:`SimulatedAPI` answers raw HTTP requests (method, path, headers, body bytes) with an
:class:`AppResponse` whose body is an async byte iterator. It knows nothing about sockets or
httpx2: ``server.py`` serves it in-process to the SDK and on loopback, and turns the three
transport-level fault signals (:class:`ConnectionRefusedSignal`, :class:`ReadTimeoutSignal`,
:class:`ConnectionDroppedSignal`) into what a real network would do.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence

from nbagent.engine.models import context_window_for, get_model
from nbagent.engine.tokens import TokenCounter, block_text, count_text_tokens, encoding

from .brain import DemoBrain
from .caching import MAX_BREAKPOINTS, CacheUsage, PromptCache, count_breakpoints
from .faults import Fault, FaultKind, FaultLike, FaultSchedule
from .script import Reply, Responder, ResponderFn, ScriptedResponder, TextBlock, ThinkingBlock, respond

if TYPE_CHECKING:
    import anthropic
    import httpx2

BASE_URL = "http://simulated.nbagent.invalid"
_SECRET_HEADERS = {"x-api-key", "authorization"}
# The HTTP status the API uses for an error type, for errors that cannot travel in a stream.
_STATUS_FOR_TYPE = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                    "rate_limit_error": 429, "api_error": 500, "overloaded_error": 529}


class ConnectionRefusedSignal(Exception):
    """The connection must fail before any request is exchanged."""


class ReadTimeoutSignal(Exception):
    """The client's read timeout ran out while the server stalled."""


class ConnectionDroppedSignal(Exception):
    """Raised from a response body: the connection dies here."""


# -- validation -----------------------------------------------------------------------------------


class ApiError(Exception):
    """An error the API answers as a JSON error body with this status."""

    def __init__(self, status: int, type: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.type, self.message, self.retry_after = status, type, message, retry_after


def _bad(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


def validate(body: Mapping[str, Any], count_only: bool = False) -> None:
    """Reject what the API rejects on the basics, with messages shaped like its own."""
    if not body.get("model"):
        raise _bad("model: Field required")
    max_tokens = body.get("max_tokens")
    if not count_only:
        if max_tokens is None:
            raise _bad("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise _bad("max_tokens: Input should be an integer greater than or equal to 1")
        info = get_model(str(body["model"]))
        if info is not None and max_tokens > info.max_output:
            raise _bad(f"max_tokens: {max_tokens} > {info.max_output}, which is the maximum allowed "
                       f"number of output tokens for {info.id}")
    thinking = body.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise _bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if not count_only and budget >= max_tokens:
            raise _bad("`max_tokens` must be greater than `thinking.budget_tokens`")
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        raise _bad("system: Input should be a valid string or a list of text blocks")
    tools = body.get("tools")
    if tools is not None and (not isinstance(tools, list)
                              or not all(isinstance(t, Mapping) and t.get("name") for t in tools)):
        raise _bad("tools: each tool must be an object with a `name`")
    _validate_messages(body.get("messages"))
    found = count_breakpoints(body)
    if found > MAX_BREAKPOINTS:
        raise _bad(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}.")


_Located = list[tuple[int, int, Mapping[str, Any]]]  # (message index, block index, block)


def _message_blocks(i: int, message: Any, last: bool) -> tuple[str, _Located]:
    if not isinstance(message, Mapping):
        raise _bad(f"messages.{i}: Input should be an object")
    role = message.get("role")
    if role == "system":
        raise _bad('messages: Unexpected role "system". The Messages API accepts a top-level `system` '
                   'parameter, not "system" as an input message role.')
    if role not in ("user", "assistant"):
        raise _bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    content = message.get("content")
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}] if content else []
    elif isinstance(content, list):
        blocks = content
    else:
        raise _bad(f"messages.{i}.content: Input should be a valid string or list of content blocks")
    if not blocks and not (last and role == "assistant"):
        raise _bad(f"messages.{i}: all messages must have non-empty content except for the optional "
                   "final assistant message")
    for j, b in enumerate(blocks):
        if not isinstance(b, Mapping) or not isinstance(b.get("type"), str):
            raise _bad(f"messages.{i}.content.{j}: Input should be a content block object with a `type`")
        if b["type"] == "text":
            text = b.get("text")
            if not isinstance(text, str) or not text:
                raise _bad(f"messages.{i}.content.{j}.text: text content blocks must be non-empty")
            if not text.strip():
                raise _bad(f"messages.{i}.content.{j}.text: text content blocks must contain non-whitespace text")
    return str(role), [(i, j, b) for j, b in enumerate(blocks)]


def _validate_messages(messages: Any) -> None:
    if messages is None:
        raise _bad("messages: Field required")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages: at least one message is required")
    # Consecutive messages of one role are merged, as the API does, before pairing tool calls.
    merged: list[tuple[str, _Located]] = []
    for i, message in enumerate(messages):
        role, blocks = _message_blocks(i, message, i == len(messages) - 1)
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(blocks)
        else:
            merged.append((role, blocks))
    if merged[0][0] != "user":
        raise _bad('messages: first message must use the "user" role')
    for k, (role, blocks) in enumerate(merged):
        if role == "assistant":
            uses = [str(b.get("id")) for _, _, b in blocks if b["type"] == "tool_use"]
            after = merged[k + 1][1] if k + 1 < len(merged) else []
            answered = {str(b.get("tool_use_id")) for _, _, b in after if b["type"] == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                raise _bad(f"messages.{blocks[-1][0]}: `tool_use` ids were found without `tool_result` blocks "
                           f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                           "corresponding `tool_result` block in the next message.")
            continue
        before = merged[k - 1][1] if k else []
        offered = {str(b.get("id")) for _, _, b in before if b["type"] == "tool_use"}
        for i, j, b in blocks:
            if b["type"] == "tool_result" and str(b.get("tool_use_id")) not in offered:
                raise _bad(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                           f"{b.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                           "`tool_use` block in the previous message.")


# -- the message and its stream ----------------------------------------------------------------------

DEFAULT_THINKING = "(simulated model) No real reasoning happens here; the reply follows fixed rules or a script."
PING_EVERY = 20  # content deltas between keep-alive pings
_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


@dataclass(frozen=True)
class Frame:
    """One server-sent event. ``tokens`` is the output it carries (for pacing); ``json_fragment``
    marks a non-empty piece of a tool call's input."""

    event: str
    data: Mapping[str, Any] = field(default_factory=dict)
    tokens: int = 0
    json_fragment: bool = False

    def encode(self) -> bytes:
        """The frame on the wire: ``event: NAME\\ndata: JSON\\n\\n``."""
        return f"event: {self.event}\ndata: {json.dumps(self.data, ensure_ascii=False)}\n\n".encode()


def _tokens(block: Mapping[str, Any]) -> int:
    return count_text_tokens(block_text(block))


def _signature(thinking: str) -> str:
    # Deterministic and opaque, like the API's: a digest of the thinking text.
    return base64.b64encode(hashlib.blake2b(thinking.encode(), digest_size=48).digest()).decode()


def _fit(content: list[dict], limit: int) -> tuple[list[dict], bool]:
    """Cut the content at ``limit`` output tokens; a tool call that does not fit is left out."""
    out: list[dict] = []
    used = 0
    for block in content:
        n = _tokens(block)
        if used + n <= limit:
            out.append(block)
            used += n
            continue
        room, key = limit - used, block["type"]  # the text of a text/thinking block is under its type
        if key in ("text", "thinking") and room > 0:
            out.append({**block, key: encoding().decode(encoding().encode(block[key], disallowed_special=())[:room])})
        return out, True
    return out, False


def _stop_at_sequence(content: list[dict], stops: Sequence[str]) -> tuple[list[dict], str | None]:
    for k, block in enumerate(content):
        if block["type"] != "text":
            continue
        hits = [(block["text"].find(s), s) for s in stops if s and s in block["text"]]
        if hits:
            at, seq = min(hits)
            return [*content[:k], {**block, "text": block["text"][:at]}], seq
    return content, None


def build_message(body: Mapping[str, Any], reply: Reply, input_tokens: int, cache: CacheUsage, window: int,
                  message_id: str, tool_id: Callable[[], str]) -> dict:
    """The complete assistant message for ``reply``, with stop reason and usage as the API reports."""
    thinking = body.get("thinking")
    thinking_on = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
    content: list[dict] = []
    for b in reply.content:
        if isinstance(b, ThinkingBlock):
            if thinking_on:  # the API only thinks when asked to
                content.append({"type": "thinking", "thinking": b.thinking, "signature": b.signature or _signature(b.thinking)})
        elif isinstance(b, TextBlock):
            content.append({"type": "text", "text": b.text})
        else:
            content.append({"type": "tool_use", "id": b.id or tool_id(), "name": b.name, "input": dict(b.input)})
    if thinking_on and not any(c["type"] == "thinking" for c in content):
        content.insert(0, {"type": "thinking", "thinking": DEFAULT_THINKING, "signature": _signature(DEFAULT_THINKING)})
    stop_reason = reply.stop_reason or ("tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn")
    content, stop_sequence = _stop_at_sequence(content, list(body.get("stop_sequences") or ()))
    if stop_sequence is not None:
        stop_reason = "stop_sequence"
    max_tokens = int(body["max_tokens"])
    limit = min(max_tokens, max(window - input_tokens, 1))
    content, cut = _fit(content, limit)
    if cut:
        stop_reason, stop_sequence = ("max_tokens" if limit == max_tokens else "model_context_window_exceeded"), None
    usage = {
        "input_tokens": max(input_tokens - cache.read - cache.write, 0),
        "cache_creation_input_tokens": cache.write,
        "cache_read_input_tokens": cache.read,
        "cache_creation": {"ephemeral_5m_input_tokens": cache.write_5m, "ephemeral_1h_input_tokens": cache.write_1h},
        # The API never reports zero output, even for an empty reply.
        "output_tokens": max(1, sum(_tokens(c) for c in content)),
        "service_tier": "standard",
    }
    return {"id": message_id, "type": "message", "role": "assistant", "model": str(body["model"]),
            "content": content, "stop_reason": stop_reason, "stop_sequence": stop_sequence, "usage": usage}


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


def _json_pieces(value: Mapping[str, Any]) -> list[str]:
    text = json.dumps(value, ensure_ascii=False)
    size = max(1, -(-len(text) // max(3, -(-len(text) // 12))))  # several fragments of ≤ 12 chars
    return [text[i:i + size] for i in range(0, len(text), size)]


def stream_frames(message: Mapping[str, Any]) -> list[Frame]:
    """The SSE event sequence that streams ``message``, as in the API's streaming documentation."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**usage, "output_tokens": 1}}
    frames = [Frame("message_start", {"type": "message_start", "message": start}), Frame("ping", {"type": "ping"})]
    deltas = 0
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            opening: dict = {"type": "text", "text": ""}
            pieces = [("text_delta", "text", p, n) for p, n in _text_pieces(block["text"])]
        elif kind == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            pieces = [("thinking_delta", "thinking", p, n) for p, n in _text_pieces(block["thinking"])]
            pieces.append(("signature_delta", "signature", block["signature"], 0))
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
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
        "usage": {k: usage[k] for k in _USAGE_KEYS},  # cumulative, as the API sends them
    }))
    frames.append(Frame("message_stop", {"type": "message_stop"}))
    return frames


# -- the API ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the API received it. ``headers`` are lower-cased and exclude the API key;
    ``body`` is the parsed JSON (``{}`` when it was not a JSON object). ``fault`` is the injected
    fault, ``reply`` what the responder answered (None when it was not asked)."""

    number: int
    path: str
    body: dict
    headers: Mapping[str, str]
    fault: Fault | None = None
    reply: Reply | None = None


@dataclass(frozen=True)
class AppResponse:
    """Status, headers and a body that may raise :class:`ConnectionDroppedSignal` mid-way."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: AsyncIterator[bytes]


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _cut(data: bytes) -> AsyncIterator[bytes]:
    yield data[: len(data) // 2]
    raise ConnectionDroppedSignal()


def _as_responder(responder: Responder) -> ResponderFn:
    if responder is None:
        return DemoBrain()
    if callable(responder):
        return responder
    return ScriptedResponder(responder)


class SimulatedAPI:
    """An offline, honest Messages API (see the simulated-provider spec).

    ``responder``: None for the :class:`DemoBrain`, a list of :class:`Reply` consumed in order, or
    a function ``(request_body) -> Reply`` (sync or async). ``context_window`` overrides the
    model's window. ``faults``: a :class:`FaultSchedule` or ``{request_number: Fault}``.
    ``clock`` drives cache TTLs; ``sleep`` performs pacing and stalls, so tests can inject both.
    """

    def __init__(
        self,
        responder: Responder = None,
        context_window: int | None = None,
        faults: FaultSchedule | Mapping[int, FaultLike] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        tokens_per_second: float | None = None,
        first_token_latency: float = 0.0,
    ) -> None:
        self.responder: ResponderFn = _as_responder(responder)
        self.context_window = context_window
        self.faults = FaultSchedule.coerce(faults)
        self.clock = clock
        self.sleep = sleep
        self.tokens_per_second = tokens_per_second
        self.first_token_latency = first_token_latency
        self.requests: list[RecordedRequest] = []
        self._counter = TokenCounter()
        self.cache = PromptCache(clock, self._counter)
        self._messages = 0
        self._tools = 0

    # -- clients ---------------------------------------------------------------------------------

    def transport(self) -> httpx2.AsyncBaseTransport:
        """An ``httpx2`` transport that serves this API in-process."""
        from .server import SimulatedTransport

        return SimulatedTransport(self)

    def async_client(self, api_key: str = "sk-simulated", **kwargs: Any) -> anthropic.AsyncAnthropic:
        """The real ``AsyncAnthropic`` wired to this API (SDK retries off: nbagent owns retry)."""
        import anthropic
        import httpx2

        http_client = httpx2.AsyncClient(transport=self.transport(), timeout=kwargs.pop("timeout", None)
                                         or httpx2.Timeout(600.0, connect=5.0))
        kwargs.setdefault("max_retries", 0)
        return anthropic.AsyncAnthropic(api_key=api_key, base_url=BASE_URL, http_client=http_client, **kwargs)

    def window_for(self, model: str) -> int:
        """The context window enforced for ``model``."""
        return context_window_for(model, self.context_window)

    # -- requests --------------------------------------------------------------------------------

    async def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes,
                     read_timeout: float | None = None) -> AppResponse:
        """Answer one HTTP request. May raise :class:`ConnectionRefusedSignal` or
        :class:`ReadTimeoutSignal` (after sleeping ``read_timeout``) for transport faults."""
        number = len(self.requests) + 1
        headers = {k.lower(): v for k, v in headers.items()}
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        fault = self.faults.fault_for(number)
        self.requests.append(RecordedRequest(
            number, path, parsed if isinstance(parsed, dict) else {},
            {k: v for k, v in headers.items() if k not in _SECRET_HEADERS}, fault))
        request_id = f"req_sim_{number:06d}"
        if fault is not None and fault.kind is FaultKind.REFUSED:
            raise ConnectionRefusedSignal()
        if fault is not None and fault.kind is FaultKind.STALL:
            if read_timeout is not None and read_timeout < fault.seconds:
                await self.sleep(read_timeout)
                raise ReadTimeoutSignal()
            await self.sleep(fault.seconds)
        try:
            return await self._respond(method, path, headers, parsed, fault, number, request_id)
        except ApiError as err:
            return self._error_response(err, request_id)

    async def _respond(self, method: str, path: str, headers: Mapping[str, str], body: Any,
                       fault: Fault | None, number: int, request_id: str) -> AppResponse:
        route = path.rstrip("/")
        count_only = route.endswith("/v1/messages/count_tokens")
        if method.upper() != "POST" or not (count_only or route.endswith("/v1/messages")):
            raise ApiError(404, "not_found_error", f"Not found: {method} {path}")
        if not (headers.get("x-api-key") or headers.get("authorization")):
            raise ApiError(401, "authentication_error", "x-api-key header is required")
        if not isinstance(body, dict):
            raise ApiError(400, "invalid_request_error",
                           "There was an error parsing the body of your request: it must be a JSON object.")
        if fault is not None and fault.kind is FaultKind.HTTP:
            raise self._fault_error(fault, body)

        validate(body, count_only)
        model = str(body["model"])
        if get_model(model) is None and not model.startswith("claude-"):
            raise ApiError(404, "not_found_error", f"model: {model}")
        input_tokens = self._counter.count_request(body["messages"], body.get("system") or None,
                                                   body.get("tools") or None)
        if count_only:
            return self._finish(fault, _json_headers(request_id), json.dumps({"input_tokens": input_tokens}))
        window = self.window_for(model)
        if input_tokens > window:
            raise ApiError(400, "invalid_request_error", f"prompt is too long: {input_tokens} tokens > {window} maximum")

        cache = self.cache.account(body, input_tokens)
        reply = await respond(self.responder, body)
        self.requests[number - 1] = replace(self.requests[number - 1], reply=reply)
        if reply.error is not None:
            e = reply.error
            raise ApiError(e.status, e.type, e.message, e.retry_after)
        message = build_message(
            body, reply, input_tokens, cache, window,
            message_id=self._next_id("msg"), tool_id=lambda: self._next_id("toolu"))
        if body.get("stream") is not True:
            return self._finish(fault, _json_headers(request_id), json.dumps(message))
        frames = stream_frames(message)
        headers_out = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"),
                       ("request-id", request_id))
        return AppResponse(200, headers_out, self._stream(frames, fault, request_id))

    def _next_id(self, prefix: str) -> str:
        # Counters, not randomness: two runs of the same conversation produce the same ids.
        if prefix == "msg":
            self._messages += 1
            return f"msg_sim_{self._messages:06d}"
        self._tools += 1
        return f"toolu_sim_{self._tools:06d}"

    def _fault_error(self, fault: Fault, body: Mapping[str, Any]) -> ApiError:
        model = str(body.get("model", ""))
        if fault.name == "not_found":
            return ApiError(fault.status, fault.error_type, f"model: {model}")
        if fault.name == "prompt_too_long":
            window = self.window_for(model)
            try:
                tokens = self._counter.count_request(body.get("messages") or [], body.get("system") or None,
                                                     body.get("tools") or None)
            except (AttributeError, TypeError):
                tokens = 0
            return ApiError(400, "invalid_request_error",
                            f"prompt is too long: {max(tokens, window + 1)} tokens > {window} maximum")
        return ApiError(fault.status, fault.error_type, fault.message, fault.retry_after)

    def _finish(self, fault: Fault | None, headers: tuple[tuple[str, str], ...], text: str) -> AppResponse:
        """A complete JSON response, or what a stream-only fault does to one."""
        if fault is not None and fault.kind is FaultKind.SSE_ERROR:
            # A non-streamed answer cannot carry an error event: the API answers the error status.
            raise ApiError(_STATUS_FOR_TYPE.get(fault.error_type, 500), fault.error_type, fault.message)
        data = text.encode()
        if fault is not None and fault.kind in (FaultKind.DROP, FaultKind.CUT_TOOL_JSON):
            return AppResponse(200, headers, _cut(data))
        return AppResponse(200, headers, _once(data))

    def _error_response(self, err: ApiError, request_id: str) -> AppResponse:
        payload = {"type": "error", "error": {"type": err.type, "message": err.message}, "request_id": request_id}
        headers = list(_json_headers(request_id))
        if err.retry_after is not None:
            headers.append(("retry-after", f"{err.retry_after:g}"))
        if err.status == 529 or err.status >= 500:
            headers.append(("x-should-retry", "true"))
        return AppResponse(err.status, tuple(headers), _once(json.dumps(payload).encode()))

    async def _stream(self, frames: Sequence[Frame], fault: Fault | None, request_id: str) -> AsyncIterator[bytes]:
        """Send the frames with pacing; apply a mid-stream fault where it strikes."""
        stop_at = _fault_position(frames, fault)
        waited_first = False
        for i, frame in enumerate(frames):
            if i == stop_at and fault is not None:
                if fault.kind is FaultKind.SSE_ERROR:
                    error = {"type": "error", "error": {"type": fault.error_type, "message": fault.message},
                             "request_id": request_id}
                    yield Frame("error", error).encode()
                    return  # the API ends the stream after an error event
                raise ConnectionDroppedSignal()
            if frame.tokens:
                if not waited_first and self.first_token_latency > 0:
                    await self.sleep(self.first_token_latency)
                waited_first = True
                if self.tokens_per_second:
                    await self.sleep(frame.tokens / self.tokens_per_second)
            yield frame.encode()


def _fault_position(frames: Sequence[Frame], fault: Fault | None) -> int | None:
    """Index of the frame a mid-stream fault replaces (it and all later frames are not sent)."""
    if fault is None or fault.kind not in (FaultKind.SSE_ERROR, FaultKind.DROP, FaultKind.CUT_TOOL_JSON):
        return None
    last = len(frames) - 1  # never let the stream finish normally: message_stop is not sent
    if fault.kind is not FaultKind.CUT_TOOL_JSON:
        return min(max(fault.after_events, 0), last)
    fragments = [i for i, f in enumerate(frames) if f.json_fragment]
    if len(fragments) >= 2:
        return fragments[len(fragments) // 2]  # some of the tool's JSON arrived, not all of it
    deltas = [i for i, f in enumerate(frames) if f.event == "content_block_delta"]
    return deltas[1] if len(deltas) >= 2 else min(2, last)  # no tool call: cut the text instead


def _json_headers(request_id: str) -> tuple[tuple[str, str], ...]:
    return (("content-type", "application/json"), ("request-id", request_id))
