"""The typed events the engine yields: frozen, kind-tagged dataclasses and one ``Event`` union.

Every front-end (widgets, plain text, the persisted event log, a test) consumes these; nothing
else crosses from the engine to the user. ``event_to_dict`` / ``event_from_dict`` round-trip them
through JSON for ``ui_messages.json``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from ..api_facts.cost import Usage

DoneReason = Literal["end_turn", "max_requests", "max_budget", "aborted", "error", "refusal"]


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One API request's accounting: a row of the per-turn table.

    ``turn`` counts user prompts (1-based), ``request`` counts API requests in the session.
    ``context_tokens`` is the prompt size the API reported; ``cost_usd`` is None for unknown prices.
    """

    turn: int
    request: int
    model: str
    usage: Usage
    cost_usd: float | None
    context_tokens: int
    max_allowed: float
    context_window: int
    deleted_range: tuple[int, int] | None
    keep: str | None
    file_read_saving: float | None
    retries: int
    stop_reason: str | None
    duration_s: float
    ts: int
    estimated_input_tokens: int = 0
    trigger_tokens: int | None = None
    """When the context manager changed what this request sent: the previous request's tokens
    that made it act (the figure its notice shows)."""


@dataclass(frozen=True, slots=True)
class Totals:
    """Session totals of the requests in the current history (``requests``, ``usage``,
    ``cost_usd``: the sum of per-request costs, None parts count as 0), and ``spent_usd`` /
    ``spent_requests``: every request billed in this session, rolled-back ones included (a
    rollback never lowers them; budgets count them)."""

    requests: int = 0
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    retries: int = 0
    truncations: int = 0
    unpriced_requests: int = 0
    spent_usd: float = 0.0
    spent_requests: int = 0


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of assistant text as it streams."""

    kind: Literal["text_delta"] = field(default="text_delta", init=False)
    text: str = ""
    index: int = 0


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A fragment of extended thinking."""

    kind: Literal["thinking_delta"] = field(default="thinking_delta", init=False)
    text: str = ""
    index: int = 0


@dataclass(frozen=True, slots=True)
class ToolUseDelta:
    """A fragment of a tool call's JSON input as it streams (``partial_json`` is not valid alone)."""

    kind: Literal["tool_use_delta"] = field(default="tool_use_delta", init=False)
    tool_use_id: str = ""
    name: str = ""
    partial_json: str = ""
    index: int = 0


STREAM_DELTAS = (TextDelta, ThinkingDelta, ToolUseDelta)
"""The events of a reply as it streams: shown, not kept in the event log."""


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A complete tool call from the model, about to be validated, permitted and run."""

    kind: Literal["tool_use"] = field(default="tool_use", init=False)
    tool_use_id: str = ""
    name: str = ""
    input: Any = None


@dataclass(frozen=True, slots=True)
class PermissionAsked:
    """The permission gate is asking the user about a tool call."""

    kind: Literal["permission_asked"] = field(default="permission_asked", init=False)
    tool_use_id: str = ""
    name: str = ""
    input: Any = None


@dataclass(frozen=True, slots=True)
class PermissionDenied:
    """A tool call was denied (by the user or a rule); the model gets an error result."""

    kind: Literal["permission_denied"] = field(default="permission_denied", init=False)
    tool_use_id: str = ""
    name: str = ""
    input: Any = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result sent back to the model for one tool call (``display`` is the untruncated text)."""

    kind: Literal["tool_result"] = field(default="tool_result", init=False)
    tool_use_id: str = ""
    name: str = ""
    content: str = ""
    is_error: bool = False
    duration_s: float = 0.0
    display: str | None = None


@dataclass(frozen=True, slots=True)
class ApiRequestStarted:
    """An API request is about to be sent (``attempt`` is 0 for the first try)."""

    kind: Literal["api_request_started"] = field(default="api_request_started", init=False)
    turn: int = 0
    request: int = 0
    model: str = ""
    attempt: int = 0
    estimated_input_tokens: int = 0
    messages_sent: int = 0


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """An automatic retry will happen after ``delay_s`` seconds (the wait can be cut short)."""

    kind: Literal["retry_scheduled"] = field(default="retry_scheduled", init=False)
    attempt: int = 1
    max_attempts: int = 3
    delay_s: float = 0.0
    error_kind: str = ""
    message: str = ""
    status: int | None = None
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class StreamInterrupted:
    """A stream broke after output began; the partial output never enters history."""

    kind: Literal["stream_interrupted"] = field(default="stream_interrupted", init=False)
    error_kind: str = ""
    message: str = ""
    partial_text: str = ""


@dataclass(frozen=True, slots=True)
class ApiRequestFailed:
    """Retries are exhausted or the error is not retryable; the session is asked what to do."""

    kind: Literal["api_request_failed"] = field(default="api_request_failed", init=False)
    error_kind: str = ""
    message: str = ""
    status: int | None = None
    request_id: str | None = None
    attempts: int = 0
    can_shorten: bool = True


@dataclass(frozen=True, slots=True)
class ContextTruncated:
    """The context manager hid a range of history (or replaced duplicate file reads)."""

    kind: Literal["context_truncated"] = field(default="context_truncated", init=False)
    deleted_range: tuple[int, int] | None = None
    keep: str | None = None
    previous_tokens: int = 0
    max_allowed: float = 0.0
    file_read_saving: float | None = None
    reason: Literal["threshold", "overflow"] = "threshold"


@dataclass(frozen=True, slots=True)
class ServerToolResult:
    """A tool the API ran itself (web search, web fetch, code execution) and what it returned:
    ``sources`` as "title — url" lines; ``error`` the API's error code when it failed."""

    kind: Literal["server_tool_result"] = field(default="server_tool_result", init=False)
    tool_use_id: str = ""
    name: str = ""
    input: Any = None
    sources: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ModelFallback:
    """The primary model failed after retries; the rest of the turn uses ``to_model``."""

    kind: Literal["model_fallback"] = field(default="model_fallback", init=False)
    from_model: str = ""
    to_model: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should know that is not an error (e.g. a tool server skipped)."""

    kind: Literal["notice"] = field(default="notice", init=False)
    level: Literal["info", "warning"] = "info"
    message: str = ""


@dataclass(frozen=True, slots=True)
class RequestCompleted:
    """An API request completed and its assistant message entered history."""

    kind: Literal["request_completed"] = field(default="request_completed", init=False)
    record: RequestRecord | None = None


@dataclass(frozen=True, slots=True)
class Done:
    """The loop ended; ``reason`` says why, ``totals`` are the session's totals so far; ``output``
    is the validated final answer of a run with ``output=Schema`` (None otherwise)."""

    kind: Literal["done"] = field(default="done", init=False)
    reason: DoneReason = "end_turn"
    totals: Totals = field(default_factory=Totals)
    error: str | None = None
    output: Any = None
    """A structured run's validated final answer, JSON-ready (``OutputSpec.parse`` rebuilds the object)."""
    stopped: str | None = None
    """For a run a limit ended: which limit and what was spent against it (``stopped: …``)."""


Event = Union[
    TextDelta, ThinkingDelta, ToolUseDelta, ToolUse, PermissionAsked, PermissionDenied, ToolResult,
    ApiRequestStarted, RetryScheduled, StreamInterrupted, ApiRequestFailed, ContextTruncated,
    ModelFallback, Notice, RequestCompleted, ServerToolResult, Done,
]

EVENT_TYPES: dict[str, type] = {
    cls.__dataclass_fields__["kind"].default: cls  # type: ignore[attr-defined]
    for cls in Event.__args__  # type: ignore[attr-defined]
}


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with the ``kind`` tag (nested records become dicts)."""
    return dataclasses.asdict(event)


def _usage(d: Any) -> Usage:
    return d if isinstance(d, Usage) else Usage(**d)


def _range(r: Any) -> tuple[int, int] | None:
    return None if r is None else (int(r[0]), int(r[1]))


# Task folders written before the request/turn naming was made consistent still load.
_RENAMED_KINDS = {"turn_completed": "request_completed"}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of :func:`event_to_dict`; raises ``ValueError`` for an unknown kind."""
    data = dict(data)
    kind = _RENAMED_KINDS.get(data.get("kind"), data.get("kind"))  # type: ignore[arg-type]
    data.pop("kind", None)
    if kind == "done" and data.get("reason") == "max_turns":
        data["reason"] = "max_requests"
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}")
    if cls is RequestCompleted and data.get("record") is not None:
        rec = dict(data["record"])
        rec["usage"] = _usage(rec["usage"])
        rec["deleted_range"] = _range(rec.get("deleted_range"))
        data["record"] = RequestRecord(**rec)
    if cls is Done and isinstance(data.get("totals"), dict):
        tot = dict(data["totals"])
        tot["usage"] = _usage(tot.get("usage", {}))
        data["totals"] = Totals(**tot)
    if cls is ContextTruncated:
        data["deleted_range"] = _range(data.get("deleted_range"))
    if cls is ServerToolResult:
        data["sources"] = tuple(str(s) for s in data.get("sources") or ())
    return cls(**data)
