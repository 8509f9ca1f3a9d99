"""Error kinds, the engine's ``ApiError``, retry timing, and nbagent's errors.

Providers translate their SDK's exceptions into :class:`ApiError` at the boundary (for Anthropic:
``nbagent.providers.anthropic_errors.to_api_error``, after the table in the api-request spec); the
engine reads only ``ApiError`` and :func:`as_api_error`, and imports no SDK.
"""

from __future__ import annotations

import os
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only stored here: the kernel's start imports this module, not the header parser
    from ..api_facts.rate_limits import RateLimitSnapshot


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
    BUDGET_EXCEEDED = "budget_exceeded"
    """A gateway (e.g. the LiteLLM proxy) refused the request because its budget for this key is
    spent: the run stops as a budget stop, it is neither retried nor asked about."""


_AUTO_RETRYABLE = {
    ErrorKind.RATE_LIMIT, ErrorKind.OVERLOADED, ErrorKind.SERVER,
    ErrorKind.CONNECTION, ErrorKind.TIMEOUT, ErrorKind.UNKNOWN,
}

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
    none); ``status`` and ``request_id`` are shown to the user when known. ``rejected`` names a
    request feature the endpoint refused in a clear 4xx (``cache_control``, ``thinking``,
    ``effort``, ``tool_choice``, ``server_tools``): the engine switches it off and retries once.
    """

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None,
                 retry_after_s: float | None = None, request_id: str | None = None,
                 rejected: str | None = None, rate_limits: RateLimitSnapshot | None = None) -> None:
        self.kind = kind
        self.rejected = rejected
        self.status = status
        self.message = message
        self.retry_after_s = retry_after_s
        self.request_id = request_id
        self.rate_limits = rate_limits
        """The response's ``anthropic-ratelimit-*`` headers, when it had any (a 429 has)."""
        super().__init__(message)


# Raised on this side before anything reaches the server (encoding a request, a bug in building it):
# the same request would fail the same way, so retrying only wastes the user's time.
_CLIENT_SIDE = (UnicodeError, TypeError, AttributeError, KeyError, IndexError, RecursionError)


def is_client_side(exc: BaseException) -> bool:
    """Whether ``exc`` is an error of this process (never worth retrying), not of the API or network."""
    return isinstance(exc, _CLIENT_SIDE)


def as_api_error(exc: BaseException) -> ApiError:
    """``exc`` as an :class:`ApiError`: itself; a client-side error as ``invalid_request`` (not
    retried); anything else as ``unknown``, carrying its one-line message."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, ContextOverflowError):
        return ApiError(ErrorKind.CONTEXT_WINDOW_EXCEEDED, str(exc))
    lines = str(exc).strip().splitlines()
    message = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    if is_client_side(exc):
        return ApiError(ErrorKind.INVALID_REQUEST, f"client-side error, not retried: {message}")
    return ApiError(ErrorKind.UNKNOWN, message)


class ContextOverflowError(NbAgentError):
    """A stream ended with ``stop_reason == "model_context_window_exceeded"``."""


class CorruptFileError(NbAgentError):
    """A persisted file could not be read; it is left untouched on disk."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} is corrupt and was left untouched ({reason}). Move it aside or restore it to continue.")


class OverfullFileError(CorruptFileError):
    """A persisted file holding more JSON arrays and objects than nbagent parses from one, refused
    before it is parsed (a received ``[],`` bomb): never read in parts as a crash's torn log is."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(path, reason)
        # Not "corrupt": nbagent's own session can grow this large (tool inputs of arrays), and then
        # moving the file aside or restoring it is not what the user needs to hear.
        self.args = (f"{path} was not read and is left untouched ({reason}). A file you received: move it "
                     "aside. A session of yours this large: continue in a new one (%agent reset).",)


def is_auto_retryable(kind: ErrorKind) -> bool:
    """Whether nbagent retries this kind by itself (the rest go to the user)."""
    return kind in _AUTO_RETRYABLE


class TaskFolderError(NbAgentError, OSError):
    """A task folder cannot be used as it is (unwritable, replaced, closed, holding a file that is
    not a regular one); the message names the path and what to do. An ``OSError`` too, so a write
    that meets it is reported like a full disk: the conversation stays in memory."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        self.path = path
        super().__init__(message)
