"""The one place where ``anthropic`` SDK and ``httpx2`` transport errors become the engine's ``ApiError``.

:func:`to_api_error` follows the table in the api-request spec and reads the SDK's exception class,
the HTTP status, the body's ``error.type`` and the message together, never one alone. It also
carries what the engine shows and waits for: the status, the request id, a one-line message and
the server's ``retry-after-ms`` / ``retry-after`` wait.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import re
from email.utils import parsedate_to_datetime
from typing import AsyncIterator, Protocol

import anthropic
import httpx2

from ..engine.contracts.errors import (
    ApiError,
    ContextOverflowError,
    ErrorKind,
    MissingApiKeyError,
    is_client_side,
)

MAX_ERROR_BODY_BYTES = 64 * 1024
"""The most of an error response's body that is read. Real API errors are a few hundred bytes;
a hostile or broken server's 100 MB body was read whole (1.4 GB peak) before being cut to one line."""

_OVERFLOW = re.compile(r"prompt is too long|tokens? > \d+ maximum|context (length|window)", re.IGNORECASE)
_SPEND = re.compile(r"spend(ing)?[ _]limit", re.IGNORECASE)
_CREDITS = re.compile(r"credit balance|insufficient (credit|fund)", re.IGNORECASE)
# A gateway's per-key budget (the LiteLLM proxy: 400/422 "Budget has been exceeded! Current cost: …").
_BUDGET = re.compile(r"budget has been exceeded|exceeded (its |the |your )?budget|max[_ ]budget", re.IGNORECASE)
# What a clear 4xx names when an endpoint refuses one request feature, in the order checked.
_REFUSED_FEATURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Before cache_control: an endpoint that refuses only the one-hour TTL keeps caching.
    ("cache_ttl", re.compile(r"\bttl\b", re.IGNORECASE)),
    ("cache_control", re.compile(r"cache_control", re.IGNORECASE)),
    ("thinking", re.compile(r"\bthinking\b", re.IGNORECASE)),
    ("effort", re.compile(r"output_config|\beffort\b", re.IGNORECASE)),
    ("tool_choice", re.compile(r"tool_choice", re.IGNORECASE)),
    ("server_tools", re.compile(r"web_search|web_fetch|server[ _]tool", re.IGNORECASE)),
    ("context_management", re.compile(r"context_management|context-management", re.IGNORECASE)),
)


def refused_feature(error: ApiError, sent: frozenset[str]) -> str | None:
    """The request feature a clear 4xx refused, among those the request carried (``sent``), or None.

    Only an invalid-request error names one: a feature mentioned in a rate limit or an overflow
    is not the cause."""
    if error.kind is not ErrorKind.INVALID_REQUEST or error.status not in (400, 422):
        return None
    for feature, pattern in _REFUSED_FEATURES:
        if feature in sent and pattern.search(error.message):
            return feature
    return None


def to_api_error(exc: BaseException) -> ApiError:
    """``exc`` (an SDK exception, a raw ``httpx2`` transport error, or anything) as an :class:`ApiError`.

    An ``ApiError`` is returned as it is. The caller chains it: ``raise to_api_error(e) from e``.
    """
    if isinstance(exc, ApiError):
        return exc
    return ApiError(classify(exc), one_line_message(exc), status=status_of(exc),
                    retry_after_s=retry_after_of(exc), request_id=request_id_of(exc))


def classify(exc: BaseException) -> ErrorKind:
    """The :class:`ErrorKind` of an SDK exception, a raw ``httpx2`` transport error, or our own."""
    if isinstance(exc, ApiError):
        return exc.kind
    if isinstance(exc, MissingApiKeyError):
        return ErrorKind.AUTH
    if isinstance(exc, ContextOverflowError):
        return ErrorKind.CONTEXT_WINDOW_EXCEEDED
    if isinstance(exc, (anthropic.APITimeoutError, httpx2.TimeoutException, TimeoutError)):
        return ErrorKind.TIMEOUT
    if isinstance(exc, (anthropic.APIConnectionError, httpx2.TransportError)):
        return ErrorKind.CONNECTION
    if isinstance(exc, anthropic.CredentialsError):
        return ErrorKind.AUTH
    if not isinstance(exc, anthropic.APIStatusError):
        return ErrorKind.INVALID_REQUEST if is_client_side(exc) else ErrorKind.UNKNOWN
    return _classify_status(exc)


def _classify_status(exc: anthropic.APIStatusError) -> ErrorKind:
    status = exc.status_code
    etype = _error_type(exc) or ""
    msg = _raw_message(exc)
    is_spend_class = type(exc).__name__.endswith("SpendLimitReachedError")

    if status == 413 or etype == "request_too_large" or (status == 400 and _OVERFLOW.search(msg)):
        return ErrorKind.CONTEXT_WINDOW_EXCEEDED
    if is_spend_class or (status in (400, 429) and _SPEND.search(msg)):
        return ErrorKind.SPEND_LIMIT
    if status in (400, 402, 422, 429) and _BUDGET.search(msg):
        return ErrorKind.BUDGET_EXCEEDED
    if status in (401, 403) or etype in ("authentication_error", "permission_error"):
        return ErrorKind.AUTH
    if status == 402 or etype == "billing_error" or _CREDITS.search(msg):
        return ErrorKind.BILLING
    if status == 404 or etype == "not_found_error":
        return ErrorKind.NOT_FOUND
    if status in (400, 422):
        return ErrorKind.INVALID_REQUEST
    if status == 429 or etype == "rate_limit_error":
        return ErrorKind.RATE_LIMIT
    # An SSE `error` frame arrives with the stream's 200 status: the body's type decides.
    if status == 529 or etype == "overloaded_error":
        return ErrorKind.OVERLOADED
    if status >= 500 or etype == "api_error":
        return ErrorKind.SERVER
    return ErrorKind.UNKNOWN


def _raw_message(exc: BaseException) -> str:
    msg = getattr(exc, "api_message", None)
    if not msg and isinstance(exc, anthropic.APIStatusError):
        return _status_text(exc)
    return str(msg or getattr(exc, "message", None) or str(exc))


def _status_text(exc: anthropic.APIStatusError) -> str:
    """What an HTTP error without the API's ``error.message`` says, read from its body.

    Not the SDK's message: its form changes between releases ("Error code: 403 - {...}" until 2.16,
    "403 {...} (request_id: …, path: …)" from 2.17), and what a user reads should not."""
    body, status = exc.body, exc.status_code
    if isinstance(body, str) and body.strip():
        return body  # a page or plain text, not JSON: shown as it is (an HTML page by its title)
    if isinstance(body, dict):
        match body:  # the clouds' gateways answer {"message": ...} (Bedrock) or {"Message": ...}
            case {"message": str(text)} | {"Message": str(text)} if text.strip():
                return f"HTTP {status}: {text}"
        return f"HTTP {status}: {json.dumps(body, separators=(',', ':'), ensure_ascii=False, default=str)}"
    return f"HTTP {status} with no body" if body == "" else f"HTTP {status}"


def _error_type(exc: BaseException) -> str | None:
    t = getattr(exc, "type", None)
    if isinstance(t, str):
        return t
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        match body.get("error"):
            case {"type": str(kind)}:
                return kind
    return None


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_TAG = re.compile(r"<[^>]+>")
_MAX_MESSAGE = 300


def one_line_message(exc: BaseException) -> str:
    """A one-line message a user can read: the API's own message when there is one; for an HTML
    page (a proxy's or load balancer's error page) its title, never the markup."""
    raw = _raw_message(exc).strip()
    if raw[:200].lstrip().lower().startswith(("<!doctype html", "<html", "<head", "<body")):
        found = _TITLE.search(raw)
        text = " ".join(html.unescape(found.group(1) if found else _TAG.sub(" ", raw)).split())
        status = status_of(exc)
        where = f"HTTP {status}" if status else "the server"
        return f"{where} answered with an HTML page, not an API error: {text[:120] or 'no title'}{_not_found_hint(exc)}"
    lines = raw.splitlines()
    line = lines[0] if lines else type(exc).__name__
    line = line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 1] + "…"
    return line + _not_found_hint(exc)  # after the server's own words, and not cut with them


_CLOUD_HOSTS = (".amazonaws.com", ".googleapis.com")
"""Bedrock's and Vertex's hosts: their 404 (a model not enabled, a wrong model id) is theirs to word,
and the user set no base_url there."""


def _not_found_hint(exc: BaseException) -> str:
    """For a 404 that is not the API's own error (``model: x``), the URL it answered and the likely
    cause, after what the server said: a server that is not a Messages API (an OpenAI-compatible
    one) or a ``base_url`` with an extra ``/v1`` answers ``{"detail":"Not Found"}``, which named
    neither. The URL without its query, and its path only up to a part that could be a key."""
    request = getattr(getattr(exc, "response", None), "request", None)
    if status_of(exc) != 404 or _error_type(exc) is not None or request is None:
        return ""
    url = request.url
    if str(url.host).endswith(_CLOUD_HOSTS):
        return ""
    path = "/".join(part if not _KEY_LIKE.fullmatch(part) else "…" for part in str(url.path).split("/"))
    return (f" ({request.method} {url.scheme}://{url.netloc.decode('ascii', 'replace').rsplit('@', 1)[-1]}{path}: "
            "is base_url the server's root, serving the Anthropic Messages API? An OpenAI-compatible server is not.)")


_KEY_LIKE = re.compile(r"(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-]{20,}")
"""A path part some gateways take a key in: long, letters and digits mixed."""


def status_of(exc: BaseException) -> int | None:
    """HTTP status of an SDK error, if it has one."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def request_id_of(exc: BaseException) -> str | None:
    """The API's request id of an SDK error, if it has one."""
    rid = getattr(exc, "request_id", None)
    if isinstance(rid, str) and rid:
        return rid
    body = getattr(exc, "body", None)
    rid = body.get("request_id") if isinstance(body, dict) else None
    return rid if isinstance(rid, str) and rid else None


class _Headers(Protocol):
    """What is read of a response's headers (``httpx2.Headers``, or any mapping of strings)."""

    def get(self, key: str, /) -> str | None: ...


def _number(text: str | None) -> float | None:
    """A finite, non-negative number of a header value, or None."""
    if text is None:
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):  # a header value of another type (a test double) is no number either
        return None
    return max(value, 0.0) if math.isfinite(value) else None


def retry_after_of(exc: BaseException) -> float | None:
    """The server's requested wait in seconds (``retry-after-ms`` wins over ``retry-after``), or None."""
    response = getattr(exc, "response", None)
    headers: _Headers | None = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = _number(headers.get("retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    ra = headers.get("retry-after")
    if ra is None:
        return None
    seconds = _number(ra)
    if seconds is not None:
        return seconds
    try:  # the HTTP-date form
        when = parsedate_to_datetime(ra)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return max((when - _dt.datetime.now(_dt.timezone.utc)).total_seconds(), 0.0)


class _Prefix(httpx2.AsyncByteStream):
    """The first ``limit`` bytes of a response body; the rest is never read (the connection is closed)."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner, self._limit = inner, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        left = self._limit
        async for chunk in self._inner:
            yield chunk[:left]
            left -= len(chunk)
            if left <= 0:
                return

    async def aclose(self) -> None:
        await self._inner.aclose()


async def bound_error_body(response: httpx2.Response) -> None:
    """An ``httpx2`` response hook: the SDK reads an error response's whole body into memory before
    raising, so an error body is cut to :data:`MAX_ERROR_BODY_BYTES` before it reads it."""
    if response.status_code >= 400 and isinstance(response.stream, httpx2.AsyncByteStream):
        response.stream = _Prefix(response.stream, MAX_ERROR_BODY_BYTES)
