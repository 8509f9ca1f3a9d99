"""The typed events the engine yields: frozen, kind-tagged dataclasses and one ``Event`` union.

Every front-end (widgets, plain text, the persisted event log, a test) consumes these; nothing
else crosses from the engine to the user. ``event_to_dict`` / ``events_from_json`` round-trip them
through JSON for ``ui_messages.json``: the dataclasses are the schema (see :mod:`.saved`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Mapping, Sequence, Union, get_args

import pydantic

from .records import ContextAction as ContextAction  # re-exported: events carry these records
from .records import RequestRecord as RequestRecord
from .records import Totals as Totals
from .saved import Number, saved_record, validate_saved

DoneReason = Literal["end_turn", "max_requests", "max_budget", "aborted", "error", "refusal"]


@saved_record
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of assistant text as it streams."""

    kind: Literal["text_delta"] = field(default="text_delta", kw_only=True)
    text: str = ""
    index: int = 0


@saved_record
@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A fragment of extended thinking."""

    kind: Literal["thinking_delta"] = field(default="thinking_delta", kw_only=True)
    text: str = ""
    index: int = 0


@saved_record
@dataclass(frozen=True, slots=True)
class ToolUseDelta:
    """A fragment of a tool call's JSON input as it streams (``partial_json`` is not valid alone)."""

    kind: Literal["tool_use_delta"] = field(default="tool_use_delta", kw_only=True)
    tool_use_id: str = ""
    name: str = ""
    partial_json: str = ""
    index: int = 0


STREAM_DELTAS = (TextDelta, ThinkingDelta, ToolUseDelta)
"""The events of a reply as it streams: shown, not kept in the event log."""


@saved_record
@dataclass(frozen=True, slots=True)
class ToolUse:
    """A complete tool call from the model, about to be validated, permitted and run."""

    kind: Literal["tool_use"] = field(default="tool_use", kw_only=True)
    tool_use_id: str = ""
    name: str = ""
    input: object = None


@saved_record
@dataclass(frozen=True, slots=True)
class CallPreview:
    """What a tool call will change, shown where the user decides (a tool's optional ``preview``).

    ``before`` is the text as it is and ``after`` as the call leaves it: both given and different,
    a diff; equal, the text the call acts on (the source a run executes); ``before`` None, text the
    call adds; ``after`` None, text it removes. ``summary`` says what and where in one line.
    ``refusal``: the call would be refused once allowed (the tool read what it acts on): the user
    is not asked for nothing, and the model is told why at once.
    """

    summary: str = ""
    before: str | None = None
    after: str | None = None
    language: str = "python"
    refusal: str | None = None


@saved_record
@dataclass(frozen=True, slots=True)
class PermissionAsked:
    """The permission gate is asking the user about a tool call; ``preview`` (when the tool gives
    one) shows what the call changes, read when the question is asked."""

    kind: Literal["permission_asked"] = field(default="permission_asked", kw_only=True)
    tool_use_id: str = ""
    name: str = ""
    input: object = None
    preview: CallPreview | None = None


@saved_record
@dataclass(frozen=True, slots=True)
class PermissionDenied:
    """A tool call was denied (by the user or a rule); the model gets an error result."""

    kind: Literal["permission_denied"] = field(default="permission_denied", kw_only=True)
    tool_use_id: str = ""
    name: str = ""
    input: object = None
    reason: str = ""


@saved_record
@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result sent back to the model for one tool call (``display`` is the untruncated text)."""

    kind: Literal["tool_result"] = field(default="tool_result", kw_only=True)
    tool_use_id: str = ""
    name: str = ""
    content: str = ""
    is_error: bool = False
    duration_s: Number = 0.0
    display: str | None = None


@saved_record
@dataclass(frozen=True, slots=True)
class ApiRequestStarted:
    """An API request is about to be sent (``attempt`` is 0 for the first try)."""

    kind: Literal["api_request_started"] = field(default="api_request_started", kw_only=True)
    turn: int = 0
    request: int = 0
    model: str = ""
    attempt: int = 0
    estimated_input_tokens: int = 0
    messages_sent: int = 0


@saved_record
@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """An automatic retry will happen after ``delay_s`` seconds (the wait can be cut short)."""

    kind: Literal["retry_scheduled"] = field(default="retry_scheduled", kw_only=True)
    attempt: int = 1
    max_attempts: int = 3
    delay_s: Number = 0.0
    error_kind: str = ""
    message: str = ""
    status: int | None = None
    request_id: str | None = None


@saved_record
@dataclass(frozen=True, slots=True)
class RateLimitWait:
    """The request waits ``delay_s`` seconds for the shared rate limit: not a failure.

    ``reason`` is ``"paced"`` (the headers said little remains, so it waits before sending) or
    ``"retry_after"`` (the server answered 429 and said how long to wait; such waits do not count
    against the automatic retry limit). ``dimension`` names the bucket (``requests``, ``input-tokens``,
    ``output-tokens``; ``first answer``: another kernel asks first); ``remaining``/``limit``: its last headers."""

    kind: Literal["rate_limit_wait"] = field(default="rate_limit_wait", kw_only=True)
    delay_s: Number = 0.0
    reason: Literal["paced", "retry_after"] = "paced"
    dimension: str = ""
    remaining: int | None = None
    limit: int | None = None
    waited_s: Number = 0.0
    """What this request already waited for the rate limit before this wait."""
    request_id: str | None = None

    @property
    def headline(self) -> str:
        """``waiting for the shared rate limit (12 s)`` and why, in one line."""
        why = "the server asked to wait (429)" if self.reason == "retry_after" else "another kernel on this " \
            "machine asks first" if self.dimension == "first answer" else "paced before sending"
        left = f"; {self.remaining} of {self.limit} {self.dimension} left" if self.limit and self.dimension else ""
        return f"waiting for the shared rate limit ({self.delay_s:.0f} s): {why}{left}"


@saved_record
@dataclass(frozen=True, slots=True)
class StreamInterrupted:
    """A stream broke after output began; the partial output never enters history."""

    kind: Literal["stream_interrupted"] = field(default="stream_interrupted", kw_only=True)
    error_kind: str = ""
    message: str = ""
    partial_text: str = ""


@saved_record
@dataclass(frozen=True, slots=True)
class ApiRequestFailed:
    """Retries are exhausted or the error is not retryable; the session is asked what to do."""

    kind: Literal["api_request_failed"] = field(default="api_request_failed", kw_only=True)
    error_kind: str = ""
    message: str = ""
    status: int | None = None
    request_id: str | None = None
    attempts: int = 0
    can_shorten: bool = True


@saved_record
@dataclass(frozen=True, slots=True)
class ContextTruncated:
    """The context manager hid a range of history (or replaced duplicate file reads)."""

    kind: Literal["context_truncated"] = field(default="context_truncated", kw_only=True)
    deleted_range: tuple[int, int] | None = None
    keep: str | None = None
    previous_tokens: int = 0
    max_allowed: Number = 0.0
    file_read_saving: Number | None = None
    reason: Literal["threshold", "overflow"] = "threshold"


@saved_record
@dataclass(frozen=True, slots=True)
class ServerToolResult:
    """A tool the API ran itself (web search, web fetch, code execution) and what it returned:
    ``sources`` as "title — url" lines; ``error`` the API's error code when it failed."""

    kind: Literal["server_tool_result"] = field(default="server_tool_result", kw_only=True)
    tool_use_id: str = ""
    name: str = ""
    input: object = None
    sources: tuple[str, ...] = ()
    error: str | None = None


@saved_record
@dataclass(frozen=True, slots=True)
class ModelFallback:
    """The primary model failed after retries; the rest of the turn uses ``to_model``."""

    kind: Literal["model_fallback"] = field(default="model_fallback", kw_only=True)
    from_model: str = ""
    to_model: str = ""
    reason: str = ""


@saved_record
@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should know that is not an error (e.g. a tool server skipped)."""

    kind: Literal["notice"] = field(default="notice", kw_only=True)
    level: Literal["info", "warning"] = "info"
    message: str = ""


@saved_record
@dataclass(frozen=True, slots=True)
class RequestCompleted:
    """An API request completed and its assistant message entered history."""

    kind: Literal["request_completed"] = field(default="request_completed", kw_only=True)
    record: RequestRecord | None = None


@saved_record
@dataclass(frozen=True, slots=True)
class Done:
    """The loop ended; ``reason`` says why, ``totals`` are the session's totals so far; ``output``
    is the validated final answer of a run with ``output=Schema`` (None otherwise)."""

    kind: Literal["done"] = field(default="done", kw_only=True)
    reason: DoneReason = "end_turn"
    totals: Totals = field(default_factory=Totals)
    error: str | None = None
    output: object = None
    """A structured run's validated final answer, JSON-ready (``OutputSpec.parse`` rebuilds the object)."""
    stopped: str | None = None
    """For a run a limit ended: which limit and what was spent against it (``stopped: …``)."""


Event = Union[
    TextDelta, ThinkingDelta, ToolUseDelta, ToolUse, PermissionAsked, PermissionDenied, ToolResult,
    ApiRequestStarted, RetryScheduled, RateLimitWait, StreamInterrupted, ApiRequestFailed, ContextTruncated,
    ModelFallback, Notice, RequestCompleted, ServerToolResult, Done,
]

EVENT_TYPES: dict[str, type] = {cls.__dataclass_fields__["kind"].default: cls for cls in get_args(Event)}


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with the ``kind`` tag (nested records become dicts)."""
    return dataclasses.asdict(event)


# Task folders written before the request/turn naming was made consistent still load.
_RENAMED_KINDS = {"turn_completed": "request_completed"}

SavedEvent = Annotated[Event, pydantic.Field(discriminator="kind")]
"""The ``Event`` union as pydantic validates it: the ``kind`` tag picks the class."""


def _renamed(data: object) -> object:
    """An event dict of an earlier version in today's names (other data is left to validation)."""
    if not isinstance(data, dict):
        return data
    kind = data.get("kind")
    if kind in _RENAMED_KINDS:
        data = {**data, "kind": _RENAMED_KINDS[kind]}
    if kind == "done" and data.get("reason") == "max_turns":
        data = {**data, "reason": "max_requests"}
    return data


def events_from_json(data: Sequence[object]) -> list[Event]:
    """Inverse of :func:`event_to_dict` for a whole event log, through the one ``TypeAdapter`` of
    :data:`SavedEvent`; raises ``pydantic.ValidationError`` (a ``ValueError``) naming the event and
    field of the first problem, an unknown ``kind`` included."""
    events: list[Event] = validate_saved(list[SavedEvent], [_renamed(d) for d in data])
    return events


def event_from_dict(data: Mapping[str, object]) -> Event:
    """Inverse of :func:`event_to_dict` for one event (see :func:`events_from_json`)."""
    return events_from_json([data])[0]
