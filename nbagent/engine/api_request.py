"""One API request with visible retries: prepare, probe the first chunk, pass the rest through.

Follows Cline's ``attemptApiRequest`` (prepare → probe → retry) and Claude Code's retry rules; see
the api-request spec. It is an async generator of engine events that ends with one
:class:`RequestOutcome` (consumed by the loop, not shown to users).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Literal, Union

from .abort import AbortGuard, Aborted
from .context import ContextManager, ContextResult, RequestUsage, get_context_window_info, get_next_truncation_range
from .errors import (
    ContextOverflowError, ErrorKind, MAX_AUTO_RETRIES, NbAgentError, as_api_error, is_auto_retryable, retry_delay,
)
from .events import (
    ApiRequestFailed, ApiRequestStarted, ContextTruncated, Event, ModelFallback, Notice, RetryScheduled,
    StreamInterrupted, TextDelta, ThinkingDelta, ToolUseDelta,
)
from .stream import MessageComplete, ModelRequest, Provider
from .tokens import TokenCounter

FailureChoice = Literal["retry", "cancel"]
OnApiFailure = Callable[[ApiRequestFailed], Awaitable[FailureChoice]]
Sleep = Callable[[float], Awaitable[Any]]


class RequestCancelled(NbAgentError):
    """The request failed and the user (or the headless default) chose not to retry."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        self.kind = kind
        super().__init__(f"{kind.value}: {message}")


async def cancel_on_failure(event: ApiRequestFailed) -> FailureChoice:
    """The headless default for ``on_api_failure``: give up."""
    return "cancel"


@dataclass
class RequestState:
    """The session state a request reads and updates (owned by the QueryEngine)."""

    history: list[dict[str, Any]]
    deleted_range: tuple[int, int] | None = None
    previous_usage: RequestUsage | None = None
    last_ts: int = 0

    def next_ts(self) -> int:
        """Strictly increasing millisecond timestamps, so rollback by timestamp is unambiguous."""
        self.last_ts = max(int(time.time() * 1000), self.last_ts + 1)
        return self.last_ts


@dataclass(frozen=True)
class RequestOutcome:
    """The completed request: the assistant message and what the turn table needs."""

    complete: MessageComplete
    context: ContextResult
    retries: int
    duration_s: float
    ts: int
    estimated_input_tokens: int
    model: str
    sent_messages: list[dict[str, Any]] = field(repr=False, default_factory=list)
    system: str = field(repr=False, default="")
    tools: list[dict[str, Any]] = field(repr=False, default_factory=list)


@dataclass
class RequestSettings:
    """Fixed inputs of the request layer for one session."""

    provider: Provider
    context_manager: ContextManager
    model: str
    context_window: int
    max_tokens: int = 8192
    fallback_model: str | None = None
    thinking_budget: int | None = None
    max_retry_delay: float = 60.0
    on_api_failure: OnApiFailure = cancel_on_failure
    sleep: Sleep = asyncio.sleep
    retry_now: asyncio.Event = field(default_factory=asyncio.Event)
    on_context_changed: Callable[[], None] | None = None  # persist range + context_history.json
    wait_for_tools: Callable[[], Awaitable[list[str]]] | None = None  # bounded MCP wait → warnings
    timeout_s: float | None = None
    tool_wait_s: float = 10.0  # longest wait for tool servers before a request


async def attempt_api_request(
    settings: RequestSettings,
    state: RequestState,
    *,
    system: str = "",
    tools: list[dict[str, Any]] | None = None,
    prepare: Callable[[], tuple[str, list[dict[str, Any]]]] | None = None,
    turn: int,
    request_no: int,
    guard: AbortGuard,
    counter: TokenCounter,
) -> AsyncIterator[Union[Event, RequestOutcome]]:
    """Run one API request to completion, yielding events and finally a :class:`RequestOutcome`.

    ``prepare`` (when given) builds the system prompt and tool definitions *after* the wait for
    tool servers (spec steps 1-2), so tools that connect during the wait are offered at once.
    Raises :class:`RequestCancelled` when the user gives up, and ``Aborted`` on abort.
    """
    if settings.wait_for_tools is not None:
        for warning in await _wait_for_tools(settings, guard):
            yield Notice(level="warning", message=warning)
    if prepare is not None:
        system, tools = prepare()
    tools = list(tools or ())

    model = settings.model
    retries = 0  # automatic retries in the current failure streak
    total_retries = 0
    overflow_recovered = False
    started = time.perf_counter()
    # The previous request's size decides truncation once per request: a retry must not truncate
    # again on the same (stale) figures.
    previous = state.previous_usage

    while True:
        guard.check()
        ts = state.next_ts()
        # Updates the context manager makes now are recorded at this request's timestamp, so a
        # rollback to the end of an earlier turn (whose mark is older) undoes them.
        ctx = settings.context_manager.get_new_context_messages_and_metadata(
            state.history, state.deleted_range, dataclasses.replace(previous, ts=ts) if previous else None,
            context_window=settings.context_window,
        )
        previous = None
        if ctx.updated_deleted_range or ctx.file_read_saving is not None:
            changed_range = ctx.deleted_range != state.deleted_range
            state.deleted_range = ctx.deleted_range
            if settings.on_context_changed:
                settings.on_context_changed()
            prev = state.previous_usage.total if state.previous_usage else 0
            if changed_range or ctx.file_read_saving is not None:
                yield ContextTruncated(
                    deleted_range=ctx.deleted_range, keep=ctx.keep, previous_tokens=prev,
                    max_allowed=get_context_window_info(settings.context_window).max_allowed_size,
                    file_read_saving=ctx.file_read_saving, reason="threshold",
                )
        messages = ctx.truncated_messages
        estimate = counter.count_request(messages, system, tools)
        yield ApiRequestStarted(
            turn=turn, request=request_no, model=model, attempt=total_retries,
            estimated_input_tokens=estimate, messages_sent=len(messages),
        )
        request = ModelRequest(
            model=model, messages=messages, system=system, tools=tools, max_tokens=settings.max_tokens,
            thinking_budget=settings.thinking_budget, timeout_s=settings.timeout_s,
        )
        partial: list[str] = []
        got_first = False
        error: BaseException | None = None
        complete: MessageComplete | None = None
        stream = settings.provider.stream(request)
        try:
            # First-chunk probe: a failure here is "before the stream"; nothing was shown yet.
            with guard.armed():
                first = await stream.__anext__()
            got_first = True
            chunk: Any = first
            while True:
                if isinstance(chunk, MessageComplete):
                    complete = chunk
                else:
                    if isinstance(chunk, TextDelta):
                        partial.append(chunk.text)
                    yield chunk
                    guard.check()
                with guard.armed():
                    try:
                        chunk = await stream.__anext__()
                    except StopAsyncIteration:
                        break
            if complete is None:
                raise NbAgentError("the stream ended without a complete message")
        except (asyncio.CancelledError, GeneratorExit, Aborted):
            raise
        except Exception as exc:  # SDK and transport errors: classified below
            # A failure after the complete message arrived (e.g. while closing) loses nothing.
            error = exc if complete is None else None
        finally:
            await _aclose(stream)
        if complete is not None and complete.stop_reason == "model_context_window_exceeded":
            error, complete = ContextOverflowError("the model's context window was exceeded"), None

        if error is None and complete is not None:
            yield RequestOutcome(
                complete=complete, context=ctx, retries=total_retries, duration_s=time.perf_counter() - started,
                ts=ts, estimated_input_tokens=estimate, model=model, sent_messages=messages,
                system=system, tools=tools,
            )
            return

        assert error is not None
        failure = as_api_error(error)
        kind, message = failure.kind, failure.message
        if got_first:
            # Mid-stream: nothing ran yet (tools run only after a complete message), so the partial
            # output is shown as interrupted and dropped; the retry shares this failure's counter.
            yield StreamInterrupted(error_kind=kind.value, message=message, partial_text="".join(partial))

        if kind is ErrorKind.CONTEXT_WINDOW_EXCEEDED:
            new_range = get_next_truncation_range(state.history, state.deleted_range, "quarter")
            hidden_end = state.deleted_range[1] if state.deleted_range else 1
            # Shortening must hide more than now; otherwise the retry would fail the same way.
            can_shorten = len(messages) > 3 and new_range[1] > hidden_end
            if not overflow_recovered and can_shorten:
                overflow_recovered = True
                settings.context_manager.apply_standard_truncation_notice(ts, state.history)
                state.deleted_range = new_range
                if settings.on_context_changed:
                    settings.on_context_changed()
                yield ContextTruncated(
                    deleted_range=new_range, keep="quarter",
                    previous_tokens=state.previous_usage.total if state.previous_usage else 0,
                    max_allowed=get_context_window_info(settings.context_window).max_allowed_size,
                    reason="overflow",
                )
                continue
            failed = ApiRequestFailed(
                error_kind=kind.value, message=message if can_shorten else
                f"{message} — the conversation cannot be shortened further",
                status=failure.status, request_id=failure.request_id,
                attempts=total_retries + 1, can_shorten=False,
            )
            yield failed
            if await _ask(settings, failed, guard) == "retry":
                retries = 0
                overflow_recovered = False
                continue
            raise RequestCancelled(kind, message)

        server_wait = failure.retry_after_s
        too_long = server_wait is not None and server_wait > settings.max_retry_delay
        if is_auto_retryable(kind) and retries < MAX_AUTO_RETRIES and not too_long:
            retries += 1
            total_retries += 1
            delay = retry_delay(retries, server_wait, settings.max_retry_delay)
            yield RetryScheduled(
                attempt=retries, max_attempts=MAX_AUTO_RETRIES, delay_s=delay, error_kind=kind.value,
                message=message, status=failure.status, request_id=failure.request_id,
            )
            await _wait_retry(settings, delay, guard)
            continue

        fallback = settings.fallback_model
        if fallback and model != fallback and kind in (ErrorKind.OVERLOADED, ErrorKind.NOT_FOUND):
            yield ModelFallback(from_model=model, to_model=fallback, reason=kind.value)
            model = fallback
            retries = 0
            continue

        if too_long:
            message = f"{message} (the server asked to wait {server_wait:.0f} s, more than {settings.max_retry_delay:.0f} s)"
        failed = ApiRequestFailed(
            error_kind=kind.value, message=message, status=failure.status,
            request_id=failure.request_id, attempts=total_retries + 1, can_shorten=True,
        )
        yield failed
        if await _ask(settings, failed, guard) == "retry":
            retries = 0
            continue
        raise RequestCancelled(kind, message)


async def _wait_for_tools(settings: RequestSettings, guard: AbortGuard) -> list[str]:
    """Wait (bounded) for tool servers; a timeout or failure is a warning, never a failed request."""
    assert settings.wait_for_tools is not None
    limit = settings.tool_wait_s
    try:
        with guard.armed():
            warnings = await asyncio.wait_for(settings.wait_for_tools(), timeout=limit)
    except asyncio.TimeoutError:
        return [f"Tool servers were still connecting after {limit:g} s; continuing without their tools."]
    except Aborted:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken tool server must not fail the request
        return [f"Waiting for tool servers failed ({type(exc).__name__}: {exc}); continuing without them."]
    return [str(w) for w in warnings or ()]


async def _ask(settings: RequestSettings, event: ApiRequestFailed, guard: AbortGuard) -> FailureChoice:
    with guard.armed():
        choice = await settings.on_api_failure(event)
    return "retry" if choice == "retry" else "cancel"


async def _wait_retry(settings: RequestSettings, delay: float, guard: AbortGuard) -> None:
    """Sleep ``delay`` seconds, cut short by *Retry now*; abortable."""
    settings.retry_now.clear()
    with guard.armed():
        sleeper = asyncio.ensure_future(settings.sleep(delay))
        skipper = asyncio.ensure_future(settings.retry_now.wait())
        try:
            await asyncio.wait({sleeper, skipper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            skipper.cancel()
    settings.retry_now.clear()


async def _aclose(stream: Any) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:
            pass
