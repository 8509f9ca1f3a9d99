"""The simulated API's HTTP responses, and what a fault does to one (moved out of ``app.py``).

:class:`AppResponse` is a status, headers and an async byte body; a JSON answer or an error is
built here as the API sends it. The three transport-level fault signals are raised by the app
(:class:`ConnectionRefusedSignal`, :class:`ReadTimeoutSignal`) or from a body
(:class:`ConnectionDroppedSignal`), and ``server.py`` turns them into what a real network would
do. A fault that strikes a response cuts its body, answers a stream-only error with its status,
or picks the frame where a stream breaks (:func:`fault_position`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import AsyncIterator, Mapping, Protocol, Sequence

from .faults import Fault, FaultKind
from .framing import Frame
from .validation import ApiError

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


@dataclass(frozen=True)
class AppResponse:
    """Status, headers and a body that may raise :class:`ConnectionDroppedSignal` mid-way."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: AsyncIterator[bytes]


class RequestHandler(Protocol):
    """What ``server.py`` serves (the :class:`~.app.SimulatedAPI`): named here, so the transports
    need not import the app that makes them."""

    async def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes,
                     read_timeout: float | None = None) -> AppResponse: ...


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _cut(data: bytes) -> AsyncIterator[bytes]:
    yield data[: len(data) // 2]
    raise ConnectionDroppedSignal()


def json_headers(request_id: str) -> tuple[tuple[str, str], ...]:
    """The headers of a JSON answer (without the rate-limit headers)."""
    return (("content-type", "application/json"), ("request-id", request_id))


def finish(fault: Fault | None, headers: tuple[tuple[str, str], ...], text: str) -> AppResponse:
    """A complete JSON response, or what a stream-only fault does to one."""
    if fault is not None and fault.kind is FaultKind.SSE_ERROR:
        # A non-streamed answer cannot carry an error event: the API answers the error status.
        raise ApiError(_STATUS_FOR_TYPE.get(fault.error_type, 500), fault.error_type, fault.message)
    data = text.encode()
    if fault is not None and fault.kind in (FaultKind.DROP, FaultKind.CUT_TOOL_JSON):
        return AppResponse(200, headers, _cut(data))
    return AppResponse(200, headers, _once(data))


def error_response(err: ApiError, request_id: str, headers: tuple[tuple[str, str], ...]) -> AppResponse:
    """The API's error answer for ``err`` (``headers``: the JSON headers it goes with)."""
    payload = {"type": "error", "error": {"type": err.type, "message": err.message}, "request_id": request_id}
    out = list(headers)
    if err.retry_after is not None:
        out.append(("retry-after", f"{err.retry_after:g}"))
    if err.status >= 500:
        out.append(("x-should-retry", "true"))
    return AppResponse(err.status, tuple(out), _once(json.dumps(payload).encode()))


def fault_position(frames: Sequence[Frame], fault: Fault | None) -> int | None:
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
