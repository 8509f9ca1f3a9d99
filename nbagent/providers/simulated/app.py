"""The simulated Messages API itself: routing, recording, faults, usage and the response stream.

:class:`SimulatedAPI` answers raw HTTP requests (method, path, headers, body bytes) with an
:class:`AppResponse` whose body is an async byte iterator. It knows nothing about sockets or
httpx2: ``server.py`` serves it in-process to the SDK and on loopback, and turns the three
transport-level fault signals (:class:`ConnectionRefusedSignal`, :class:`ReadTimeoutSignal`,
:class:`ConnectionDroppedSignal`) into what a real network would do. Validation lives in
``validation.py``, the message and its SSE frames in ``framing.py``, the responses (and what a fault
does to one) and the fault signals in ``responses.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence, cast

from nbagent.engine.api_facts.models import context_window_for, get_model
from nbagent.engine.api_facts.tokens import TokenCounter

from ...engine.api_facts.caching import PromptCache
from ...engine.api_facts.request_size import MAX_REQUEST_BYTES
from ...engine.contracts.json_types import JSONObject, JSONValue
from ...engine.contracts.message_types import MessageParam
from . import context_edits
from .brain import DemoBrain
from .endpoint import check_rejectable, model_info, refuse_features
from .faults import Fault, FaultKind, FaultLike, FaultSchedule
from .framing import Frame, SimMessage, build_message, stream_frames
from .rate_limits import RateLimitSettings, SharedRateLimits
from .responses import (
    AppResponse,
    ConnectionDroppedSignal,
    ConnectionRefusedSignal,
    ReadTimeoutSignal,
    error_response,
    fault_position,
    finish,
    json_headers,
)
from .script import Reply, Responder, ResponderFn, ScriptedResponder, respond
from .validation import ApiError, RequestBody, validate

if TYPE_CHECKING:
    import anthropic
    import httpx2

_log = logging.getLogger(__name__)

BASE_URL = "http://simulated.nbagent.invalid"
_SECRET_HEADERS = {"x-api-key", "authorization"}
REQUEST_LOG_SIZE = 200
"""Requests kept in :attr:`SimulatedAPI.requests` by default (pass ``request_log=None`` for all)."""


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the API received it. ``headers`` are lower-cased and exclude the API key;
    ``body`` is the parsed JSON (``{}`` when it was not a JSON object). ``fault`` is the injected
    fault, ``reply`` what the responder answered (None when it was not asked)."""

    number: int
    path: str
    body: JSONObject
    headers: Mapping[str, str]
    fault: Fault | None = None
    reply: Reply | None = None


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
    ``thinks_by_default``: adaptive-only (5.x) models think unasked, as the real API does: each
    reply opens with a ``thinking`` block whose text is omitted (empty) and whose ``signature`` is
    set, unless the request asks for ``display: "summarized"``. False turns that off (a reply then
    has thinking only when the request enables it), for tests about other parts of the wire format.
    A thinking block this API issued must come back with its signature and its thinking unchanged.
    ``request_log`` bounds :attr:`requests` (the newest requests; None keeps all);
    :attr:`request_count` counts every request. ``rate_limits`` turns on the shared rate limit
    mode (:class:`~.rate_limits.RateLimitSettings`: per-minute buckets, 429 with ``retry-after``,
    ``anthropic-ratelimit-*`` headers on every response).
    """

    def __init__(
        self,
        responder: Responder = None,
        context_window: int | None = None,
        faults: FaultSchedule | Mapping[int, FaultLike] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        tokens_per_second: float | None = None,
        first_token_latency: float = 0.0,
        thinks_by_default: bool = True,
        request_log: int | None = REQUEST_LOG_SIZE,
        rejects: Sequence[str] = (),
        models: Mapping[str, int] | None = None,
        rate_limits: RateLimitSettings | None = None,
    ) -> None:
        self.rejects = check_rejectable(tuple(rejects))
        """Request features this endpoint refuses with a 400 (see ``endpoint.py``)."""
        self.models = dict(models or {})
        """Models beyond Claude's table this endpoint serves, with their windows."""
        self.responder: ResponderFn = _as_responder(responder)
        self.context_window = context_window
        self.faults = faults  # coerced by the property setter
        self.clock = clock
        self.sleep = sleep
        self.tokens_per_second = tokens_per_second
        self.first_token_latency = first_token_latency
        self.thinks_by_default = thinks_by_default
        # The newest ``request_log`` requests (None: all). Each holds its whole parsed body, so an
        # unbounded log of a long session grows quadratically (hundreds of MiB after 600 requests).
        self.requests: deque[RecordedRequest] = deque(maxlen=request_log)
        self.request_count = 0  # every request ever received, also those dropped from the log
        self._counter = TokenCounter()
        # Through self.clock, so that a clock swapped in later also drives the cache.
        self.cache = PromptCache(lambda: self.clock(), self._counter)
        self._messages = 0
        self._tools = 0
        self._signed: dict[str, set[str]] = {}  # signature -> the thinking text(s) it was issued with
        # The shared rate limit mode: the organisation's per-minute buckets (None: unlimited).
        self.rate_limits = SharedRateLimits(rate_limits, clock=lambda: self.clock()) if rate_limits else None

    def reset(self, responder: Responder = None) -> None:
        """Start over as a new API on the same address: ``responder`` answers from now on, and the
        prompt cache, the request log and the issued thinking signatures are forgotten (a server
        that outlives one test, e.g. behind a gateway process, serves the next one afresh)."""
        self.responder = _as_responder(responder)
        self.cache = PromptCache(lambda: self.clock(), self._counter)
        self.requests.clear()
        self._signed.clear()

    @property
    def faults(self) -> FaultSchedule:
        """The fault schedule. Assignable at any time, also as ``{request_number: fault}``."""
        return self._faults

    @faults.setter
    def faults(self, faults: FaultSchedule | Mapping[int, FaultLike] | None) -> None:
        self._faults = FaultSchedule.coerce(faults)

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
        return context_window_for(model, self.context_window, known=self.models)

    # -- requests --------------------------------------------------------------------------------

    def _record_reply(self, number: int, reply: Reply) -> None:
        """Note the reply on request ``number``'s log entry, if the log still holds it."""
        index = len(self.requests) - 1 - (self.request_count - number)
        if index >= 0 and self.requests[index].number == number:
            self.requests[index] = replace(self.requests[index], reply=reply)

    async def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes,
                     read_timeout: float | None = None) -> AppResponse:
        """Answer one HTTP request. May raise :class:`ConnectionRefusedSignal` or
        :class:`ReadTimeoutSignal` (after sleeping ``read_timeout``) for transport faults."""
        self.request_count += 1
        number = self.request_count
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
            if len(body) > MAX_REQUEST_BYTES:  # as the API (the loopback server refuses it before reading it)
                raise ApiError(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.")
            return await self._respond(method, path, headers, parsed, fault, number, request_id)
        except ApiError as err:
            return error_response(err, request_id, self._json_headers(request_id))

    def _admit(self, method: str, path: str, headers: Mapping[str, str], body: JSONValue,
               fault: Fault | None) -> bool:
        """The checks before a Messages request is read (route, key, body, an HTTP fault); returns
        whether it only counts tokens."""
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
        return count_only

    async def _respond(self, method: str, path: str, headers: Mapping[str, str], body: JSONValue,
                       fault: Fault | None, number: int, request_id: str) -> AppResponse:
        route = path.rstrip("/")
        if method.upper() == "GET" and "/v1/models/" in route:
            model = route.rsplit("/v1/models/", 1)[1]
            info = model_info(model, self.models, self.window_for(model))
            return finish(None, json_headers(request_id), json.dumps(info))
        count_only = self._admit(method, path, headers, body, fault)
        assert isinstance(body, dict)  # _admit refused any other body
        request, managed, input_tokens = self._as_seen(headers, body, count_only)
        if count_only:
            return finish(fault, self._json_headers(request_id), json.dumps({"input_tokens": input_tokens}))
        window = self.window_for(request["model"])
        if input_tokens > window:
            raise ApiError(400, "invalid_request_error", f"prompt is too long: {input_tokens} tokens > {window} maximum")
        if self.rate_limits is not None:  # cache reads do not count towards the input token limit
            self.rate_limits.admit(input_tokens - self.cache.peek_read(request, input_tokens))
        message = await self._answer(request, managed, input_tokens, window, number)
        if request.get("stream") is not True:
            return finish(fault, self._json_headers(request_id), json.dumps(message))
        frames = stream_frames(message)
        headers_out = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"),
                       ("request-id", request_id), *self._limit_headers())
        return AppResponse(200, headers_out, self._stream(frames, fault, request_id))

    def _as_seen(self, headers: Mapping[str, str], body: JSONObject,
                 count_only: bool) -> tuple[RequestBody, context_edits.Managed, int]:
        """The validated request as the model sees it after the server's context edits, and its size."""
        checked = validate(body, count_only, self._signed)
        refuse_features(checked, self.rejects)
        model = checked["model"]
        if get_model(model) is None and not model.startswith("claude-") and model not in self.models:
            raise ApiError(404, "not_found_error", f"model: {model}")
        context_edits.check(checked, headers)
        managed = context_edits.apply(checked, lambda ms: self._counter.count_request(
            ms, checked.get("system") or None, checked.get("tools") or None))
        # What the model sees after the server's edits: the validated messages, some blocks
        # cleared or dropped (server_context.apply types them as plain dicts).
        request: RequestBody = {**checked, "messages": cast("list[MessageParam]", managed.messages)}
        input_tokens = self._counter.count_request(request["messages"], request.get("system") or None,
                                                   request.get("tools") or None)
        return request, managed, input_tokens

    async def _answer(self, request: RequestBody, managed: context_edits.Managed, input_tokens: int,
                      window: int, number: int) -> SimMessage:
        """The responder's reply as the Messages API's message, billed to the cache and the rate limits."""
        try:
            reply = await respond(self.responder, request)
        except Exception as exc:
            # A bug in a test's responder should read as one, not as a network error of the SDK.
            _log.exception("the simulated API's responder raised")
            raise ApiError(500, "api_error", f"[simulated] the responder raised {type(exc).__name__}: {exc}") from exc
        self._record_reply(number, reply)
        if reply.error is not None:
            e = reply.error
            raise ApiError(e.status, e.type, e.message, e.retry_after)
        cache = self.cache.account(request, input_tokens)  # only an answered request reads or writes
        self._tools = max(self._tools, _highest_tool_number(request))
        message = build_message(
            request, reply, input_tokens, cache, window,
            message_id=self._next_id("msg"), tool_id=lambda: self._next_id("toolu"),
            thinks_by_default=self.thinks_by_default)
        context_edits.add_to_message(message, managed)
        for block in message["content"]:
            match block:
                case {"type": "thinking", "signature": str(signature), "thinking": str(thinking)}:
                    self._signed.setdefault(signature, set()).add(thinking)
        if self.rate_limits is not None:
            self.rate_limits.charge_output(int(message["usage"]["output_tokens"]))
        return message

    def continues(self, messages: Sequence[Any]) -> None:
        """An Agent goes on with a saved conversation through this API (resumed, forked, or a
        replay's session going live): its tool ids go on above the whole history's. A request
        shows only what truncation left, so after ``keep quarter`` hid messages 2-7 the next id
        repeated a hidden one (notebook 03's edited overflow cell: "tool_use id … was already
        used", and the tool did not run); the real API never repeats an id."""
        self._tools = max(self._tools, _highest_tool_number(cast(RequestBody, {"messages": list(messages)})))

    def _next_id(self, prefix: str) -> str:
        # Counters, not randomness: two runs of the same conversation produce the same ids.
        if prefix == "msg":
            self._messages += 1
            return f"msg_sim_{self._messages:06d}"
        self._tools += 1
        return f"toolu_sim_{self._tools:06d}"

    def _fault_error(self, fault: Fault, body: Mapping[str, Any]) -> ApiError:  # not validated yet
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

    def _limit_headers(self) -> list[tuple[str, str]]:
        return self.rate_limits.headers() if self.rate_limits is not None else []

    def _json_headers(self, request_id: str) -> tuple[tuple[str, str], ...]:
        return (*json_headers(request_id), *self._limit_headers())

    async def _stream(self, frames: Sequence[Frame], fault: Fault | None, request_id: str) -> AsyncIterator[bytes]:
        """Send the frames with pacing; apply a mid-stream fault where it strikes."""
        stop_at = fault_position(frames, fault)
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


_SIM_TOOL_ID = re.compile(r"^toolu_sim_(\d+)$")


def _highest_tool_number(body: RequestBody) -> int:
    """The highest ``toolu_sim_N`` already in the conversation.

    Ids stay deterministic (counters) yet unique within a conversation even when a new API object
    continues it (a resumed session): the real API never repeats a tool_use id.
    """
    best = 0
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            match block:
                case {"type": "tool_use", "id": str(tool_id)} if (m := _SIM_TOOL_ID.match(tool_id)):
                    best = max(best, int(m.group(1)))
    return best


__all__ = [  # the responses and signals from responses.py included: importable from here as before
    "BASE_URL", "REQUEST_LOG_SIZE", "AppResponse", "ConnectionDroppedSignal", "ConnectionRefusedSignal",
    "ReadTimeoutSignal", "RecordedRequest", "SimulatedAPI",
]
