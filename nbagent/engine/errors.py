"""Error kinds, classification of SDK and transport exceptions, retry timing, and nbagent's errors.

``classify_error`` follows the table in the api-request spec and reads the SDK's exception class,
the HTTP status, the body's ``error.type`` and the message together, never one alone.
"""

from __future__ import annotations

import re
from email.utils import parsedate_to_datetime
from enum import Enum
from typing import Any

import anthropic
import httpx2


class ErrorKind(str, Enum):
    """What went wrong with an API request, as far as retrying and the user are concerned."""

    CONTEXT_WINDOW_EXCEEDED = "context_window_exceeded"
    AUTH = "auth"
    BILLING = "billing"
    SPEND_LIMIT = "spend_limit"
    NOT_FOUND = "not_found"
    INVALID_REQUEST = "invalid_request"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER = "server"
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"


_AUTO_RETRYABLE = {
    ErrorKind.RATE_LIMIT, ErrorKind.OVERLOADED, ErrorKind.SERVER,
    ErrorKind.CONNECTION, ErrorKind.TIMEOUT, ErrorKind.UNKNOWN,
}

_OVERFLOW = re.compile(r"prompt is too long|tokens? > \d+ maximum|context (length|window)", re.I)
_SPEND = re.compile(r"spend(ing)?[ _]limit", re.I)
_CREDITS = re.compile(r"credit balance|insufficient (credit|fund)", re.I)

MAX_AUTO_RETRIES = 3
DEFAULT_MAX_RETRY_DELAY = 60.0


class NbAgentError(Exception):
    """Base of every error nbagent raises on purpose."""


class MissingApiKeyError(NbAgentError):
    """``--anthropic`` was asked for but no key is configured."""

    def __init__(self) -> None:
        super().__init__(
            "No Anthropic API key is configured. Set ANTHROPIC_API_KEY in the environment "
            "(or api_key= in the config), or use the offline simulated provider (--simulated)."
        )


class ApiError(NbAgentError):
    """A failed API request as the engine sees it; providers raise it, mapping their SDK's errors.

    ``kind`` decides retrying; ``retry_after_s`` is the server's requested wait (None if it sent
    none); ``status`` and ``request_id`` are shown to the user when known.
    """

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None,
                 retry_after_s: float | None = None, request_id: str | None = None) -> None:
        self.kind = kind
        self.status = status
        self.message = message
        self.retry_after_s = retry_after_s
        self.request_id = request_id
        super().__init__(message)


def as_api_error(exc: BaseException) -> ApiError:
    """``exc`` as an :class:`ApiError`: itself, or an ``unknown`` one carrying its one-line message."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, ContextOverflowError):
        return ApiError(ErrorKind.CONTEXT_WINDOW_EXCEEDED, str(exc))
    lines = str(exc).strip().splitlines()
    return ApiError(ErrorKind.UNKNOWN, f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__)


class ContextOverflowError(NbAgentError):
    """A stream ended with ``stop_reason == "model_context_window_exceeded"``."""


class CorruptFileError(NbAgentError):
    """A persisted file could not be read; it is left untouched on disk."""

    def __init__(self, path: Any, reason: str) -> None:
        self.path = path
        super().__init__(f"{path} is corrupt and was left untouched ({reason}). Move it aside or restore it to continue.")


def _message(exc: BaseException) -> str:
    msg = getattr(exc, "api_message", None) or getattr(exc, "message", None) or str(exc)
    return str(msg)


def _error_type(exc: BaseException) -> str | None:
    t = getattr(exc, "type", None)
    if isinstance(t, str):
        return t
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("type"), str):
            return err["type"]
    return None


def classify_error(exc: BaseException) -> ErrorKind:
    """The :class:`ErrorKind` of an SDK exception, a raw ``httpx2`` transport error, or our own."""
    if isinstance(exc, MissingApiKeyError):
        return ErrorKind.AUTH
    if isinstance(exc, ContextOverflowError):
        return ErrorKind.CONTEXT_WINDOW_EXCEEDED
    if isinstance(exc, anthropic.APITimeoutError) or isinstance(exc, (httpx2.TimeoutException, TimeoutError)):
        return ErrorKind.TIMEOUT
    if isinstance(exc, anthropic.APIConnectionError) or isinstance(exc, httpx2.TransportError):
        return ErrorKind.CONNECTION
    if isinstance(exc, anthropic.CredentialsError):
        return ErrorKind.AUTH
    if not isinstance(exc, anthropic.APIStatusError):
        return ErrorKind.UNKNOWN

    status = exc.status_code
    etype = _error_type(exc) or ""
    msg = _message(exc)
    is_spend_class = type(exc).__name__.endswith("SpendLimitReachedError")

    if status == 413 or etype == "request_too_large" or (status == 400 and _OVERFLOW.search(msg)):
        return ErrorKind.CONTEXT_WINDOW_EXCEEDED
    if is_spend_class or (status in (400, 429) and _SPEND.search(msg)):
        return ErrorKind.SPEND_LIMIT
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


def is_auto_retryable(kind: ErrorKind) -> bool:
    """Whether nbagent retries this kind by itself (the rest go to the user)."""
    return kind in _AUTO_RETRYABLE


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's requested wait (``retry-after-ms`` wins over ``retry-after``), or None."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        return max(float(ra), 0.0)
    except ValueError:
        try:
            import datetime as _dt
            when = parsedate_to_datetime(ra)
            return max((when - _dt.datetime.now(when.tzinfo)).total_seconds(), 0.0)
        except (TypeError, ValueError):
            return None


def retry_delay(attempt: int, retry_after: float | None = None, max_delay: float = DEFAULT_MAX_RETRY_DELAY) -> float:
    """Seconds to wait before automatic retry ``attempt`` (1-based): 2, 4, 8, … ;
    with a server ``retry_after``, ``max(backoff, retry_after)``; capped at ``max_delay``."""
    backoff = 2.0 * 2 ** (max(attempt, 1) - 1)
    delay = backoff if retry_after is None else max(backoff, retry_after)
    return min(delay, max_delay)


def error_status(exc: BaseException) -> int | None:
    """HTTP status of an SDK error, if it has one."""
    return getattr(exc, "status_code", None)


def error_request_id(exc: BaseException) -> str | None:
    """The API's request id of an SDK error, if it has one."""
    rid = getattr(exc, "request_id", None)
    if rid:
        return rid
    body = getattr(exc, "body", None)
    return body.get("request_id") if isinstance(body, dict) else None


def error_message(exc: BaseException) -> str:
    """A one-line message a user can read (the API's own message when there is one)."""
    msg = _message(exc).strip().splitlines()
    return msg[0] if msg else type(exc).__name__
