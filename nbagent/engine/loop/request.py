"""One API request with visible retries, in four named steps (the api-request spec).

1. :func:`~.request_context.fit_context` — the context manager decides what the model sees (truncating if the
   previous request came close to the window);
2. :func:`stream_with_probe` — open the stream; a failure before the first chunk is "before the
   stream", after it "mid-stream" (the partial output is shown as interrupted and dropped);
3. :func:`~.request_context.recover_overflow` — a context-window error hides more, once per request, through the
   context manager's own :meth:`~nbagent.engine.context.ContextManager.truncate_for_overflow`;
4. :func:`decide_after_failure` — wait out a 429's ``retry-after`` (:func:`wait_out_rate_limit`,
   not counted as a retry), retry automatically (jittered backoff), fall back to another model, or
   ask the user.

Before each attempt :func:`pace_before_sending` waits when the API's rate limit headers say the
shared budget is nearly used up (see :mod:`.pacing`).

:func:`attempt_api_request` runs them: an async generator of engine events that ends with one
:class:`RequestOutcome` (consumed by the loop, not shown to users).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import AsyncGenerator, AsyncIterator, Callable, Mapping, Union

from ..api_facts.cost import Usage
from ..api_facts.tokens import count_text_tokens
from ..context import ContextResult
from ..contracts.abort import Aborted
from ..contracts.errors import MAX_AUTO_RETRIES, ApiError, ErrorKind, NbAgentError, as_api_error, is_auto_retryable
from ..contracts.events import (
    ApiRequestFailed,
    ApiRequestStarted,
    ContextAction,
    ContextTruncated,
    DoneReason,
    Event,
    ModelFallback,
    Notice,
    RetryScheduled,
    StreamInterrupted,
    TextDelta,
    ThinkingDelta,
    ToolUseDelta,
)
from ..contracts.json_types import JSONObject
from ..contracts.messages import Message
from ..contracts.provider import Chunk, MessageComplete, ModelRequest, StreamStarted
from ..contracts.tool_api import StaticTools, ToolLike
from ..contracts.waits import within
from ..state.totals import Spent
from .degrade import is_budget_stop, switch_off
from .rate_wait import (
    jittered_retry_delay,
    observe_rate_limits,
    pace_before_sending,
    rate_limit_wait_applies,
    wait_or_skip,
    wait_out_rate_limit,
)
from .request_context import (
    fit_attempt,
    left_out_tokens,
    mask_anchors,
    model_request,
    recover_overflow,
    truncate_action,
    unsupported_notices,
)
from .request_run import RequestRun, StreamEnd, _Attempts
from .sanitize import Sanitizer
from .stream_redact import Delta, redacted_error, redacted_stream

TOOL_WAIT_MARGIN_S = 2.0
"""The engine's safety net behind a tool source's own bounded wait (which names the late server)."""


class RequestCancelled(NbAgentError):
    """The request failed and the user (or the headless default) chose not to retry."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(f"{kind.value}: {message}")


class BudgetReached(NbAgentError):
    """A request that broke off mid-answer was billed, and that used up the prompt's budget: it
    is not sent again (the turn stops as at a request's end, with the budget's line)."""

    def __init__(self, reason: DoneReason, line: str) -> None:
        self.reason, self.line = reason, line
        super().__init__(line)


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
    sent_messages: list[Message] = field(repr=False, default_factory=list)
    system: str = field(repr=False, default="")
    tools: list[JSONObject] = field(repr=False, default_factory=list)
    truncation: ContextTruncated | None = None
    """What the context manager changed for this request (the record shows the same figures)."""
    offered: Mapping[str, ToolLike] = field(repr=False, default_factory=dict)
    """The tools this request offered: what the reply's tool calls may run."""
    actions: tuple[ContextAction, ...] = ()
    """What the client-side context layers did to this request (server layers are read from the reply)."""
    rate_limit_wait_s: float = 0.0
    """Seconds spent waiting for the shared rate limit before this request was answered."""
    unanswered: Usage | None = None
    """What this request's attempts cut off mid-answer were billed for (the record's ``unanswered_usage``)."""


@dataclass(frozen=True)
class Prepared:
    """What ``prepare`` builds for a request after the wait for tool sources: the system prompt,
    the tool definitions, and the tools they offer (what the reply's calls may run)."""

    system: str
    tools: list[JSONObject]
    offered: Mapping[str, ToolLike] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    """Shown before the request: e.g. an ``allow`` entry that names none of the tools."""


async def attempt_api_request(
    run: RequestRun, *, model: str, prepare: Callable[[], Prepared],
    turn: int, request_no: int, sanitizer: Sanitizer | None = None,
) -> AsyncGenerator[Union[Event, RequestOutcome], None]:
    """Run one API request to completion, yielding events and finally a :class:`RequestOutcome`.

    ``prepare`` builds the system prompt and tool definitions *after* the wait for tool sources,
    so tools that connect during the wait are offered at once. ``sanitizer`` redacts configured
    secrets from streamed deltas and error messages. Raises :class:`RequestCancelled`
    when the user gives up, and ``Aborted`` on abort.
    """
    for warning in await wait_for_tools(run):
        yield Notice(level="warning", message=warning)
    prepared = prepare()
    for warning in prepared.warnings:
        yield Notice(level="warning", message=warning)
    system, tools = prepared.system, prepared.tools
    attempts = _Attempts(model=model)
    previous = run.session.previous_usage
    while True:
        run.guard.check()
        ts = run.session.next_ts()
        for notice in unsupported_notices(run, attempts.model):
            yield notice
        ctx, truncated = fit_attempt(run, attempts, previous, ts)
        previous = None
        if truncated is not None:
            yield truncated
        messages = ctx.truncated_messages
        estimate = run.counter.count_request(messages, system, tools)
        request = _sent(run, attempts, messages, prepared)  # after the count: it counts the images too
        estimate += left_out_tokens(run, messages, request)
        async for event in pace_before_sending(run, attempts, estimate):
            yield event
        run.pacer.sent()
        yield ApiRequestStarted(turn=turn, request=request_no, model=attempts.model, attempt=attempts.total,
                                estimated_input_tokens=estimate, messages_sent=len(messages))
        streamed = StreamEnd()
        async with aclosing(stream_with_probe(run, request, sanitizer)) as chunks:
            async for chunk in chunks:
                if isinstance(chunk, StreamEnd):
                    streamed = chunk
                else:
                    yield chunk
        observe_rate_limits(run, streamed)
        if streamed.billed is not None:  # its row is the answered attempt's: the cost goes there
            attempts.unanswered = streamed.billed + attempts.unanswered if attempts.unanswered else streamed.billed
        if streamed.complete is not None:
            yield RequestOutcome(rate_limit_wait_s=attempts.rate_wait_s,
                complete=streamed.complete, context=ctx, retries=attempts.total, ts=ts,
                duration_s=time.perf_counter() - attempts.started, estimated_input_tokens=estimate,
                model=attempts.model, sent_messages=messages, system=system, tools=tools,
                truncation=attempts.truncation, offered=prepared.offered, actions=tuple(attempts.actions),
                unanswered=attempts.unanswered)
            return
        error = streamed.error
        assert error is not None
        if streamed.got_first:
            yield StreamInterrupted(error_kind=error.kind.value, message=error.message,
                                    partial_text=streamed.partial_text)
        async for event in decide_after_failure(run, attempts, error, len(messages), ts):
            yield event


def _sent(run: RequestRun, attempts: _Attempts, messages: list[Message], prepared: Prepared) -> ModelRequest:
    """The request as sent: the fitted messages with the mask's cache anchors and the counted images."""
    session = run.session
    anchors = mask_anchors(run.config, session.history, session.context.updates, session.deleted_range,
                           len(messages), attempts.reread, session.context.results)
    return model_request(run.config, attempts.model, messages, prepared.system, prepared.tools,
                         frozenset(run.without), anchors, run.pacer.at_head,
                         images=(run.counter.last_images, run.counter.last_image_chars))  # counted with the estimate


async def wait_for_tools(run: RequestRun) -> list[str]:
    """Wait (bounded) for every tool source; a timeout or failure is a warning, never a failed request."""
    sources = [s for s in run.sources if not isinstance(s, StaticTools)]
    if not sources:
        return []
    limit = run.config.tool_wait_s + TOOL_WAIT_MARGIN_S
    try:
        with run.guard.armed():
            results = await within(asyncio.gather(*(s.ready() for s in sources)), limit)
    except asyncio.TimeoutError:
        return [f"Tool servers were still connecting after {limit:g} s; continuing without their tools."]
    except Aborted:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken tool server must not fail the request
        return [f"Waiting for tool servers failed ({type(exc).__name__}: {exc}); continuing without them."]
    return [str(w) for warnings in results for w in warnings or ()]


async def stream_with_probe(run: RequestRun, request: ModelRequest,
                            sanitizer: Sanitizer | None = None) -> AsyncGenerator[Delta | StreamEnd, None]:
    """Step 2: stream one request, passing deltas through (secrets redacted), then its :class:`StreamEnd`.

    Provider errors end up in ``StreamEnd.error`` (an :class:`ApiError`, secrets redacted); a
    failure after the complete message arrived (e.g. while closing) loses nothing. Abort and
    cancellation propagate (no :class:`StreamEnd` then).
    """
    stream: AsyncIterator[Chunk] = run.provider.stream(request)
    if sanitizer is not None and sanitizer.secrets:  # no extra layer per delta when none is set
        stream = redacted_stream(stream, sanitizer)
    armed, next_chunk = run.guard.armed(), stream.__anext__  # looked up once, used per chunk
    partial: list[str] = []
    generated: list[str] = []  # the thinking and tool input streamed too: billed, so counted on a stop
    complete: MessageComplete | None = None
    started: StreamStarted | None = None
    error: ApiError | None = None
    billed: Usage | None = None
    got_first = False
    try:
        with armed:  # the first-chunk probe
            chunk = await next_chunk()
        while True:
            if isinstance(chunk, TextDelta):
                got_first = True
                partial.append(chunk.text)
                yield chunk
            elif isinstance(chunk, MessageComplete):
                got_first, complete = True, chunk
            elif isinstance(chunk, StreamStarted):  # not a part of the answer yet: kept for the bill
                started = chunk
            else:
                got_first = True
                if isinstance(chunk, ToolUseDelta):
                    generated.append(chunk.partial_json)
                elif isinstance(chunk, ThinkingDelta):
                    generated.append(chunk.text)
                yield chunk
            with armed:  # checks for an abort first, also one pressed during the yield
                try:
                    chunk = await next_chunk()
                except StopAsyncIteration:
                    break
        if complete is None:
            raise ApiError(ErrorKind.UNKNOWN, "the stream ended without a complete message")
    except (asyncio.CancelledError, GeneratorExit, Aborted):
        if started is not None and complete is None:  # ■ after the answer began: the API billed it
            bill_interrupted(run, request.model, started.usage, "".join(partial + generated))
        raise
    except Exception as exc:  # noqa: BLE001 - providers raise ApiError; anything else is unknown
        if complete is None:
            error = redacted_error(as_api_error(exc), sanitizer)
            if started is not None:  # a drop or an error mid-answer: billed as a ■ is, then retried
                billed = bill_interrupted(run, request.model, started.usage, "".join(partial + generated))
    finally:
        await _aclose(stream)
    # A stop at model_context_window_exceeded is a complete, billed (truncated) answer: it is kept,
    # and the context manager shortens the conversation before the next request.
    yield StreamEnd(complete=complete, error=error, got_first=got_first, partial_text="".join(partial), billed=billed)


def bill_interrupted(run: RequestRun, model: str, started: Usage, text: str) -> Usage:
    """Keep as spent what a request stopped after its answer began (■, a dropped connection, an
    error event mid-answer: each retried, each billed) was billed for at least: its
    input as ``message_start`` reported it, and what streamed so far (text, a tool call's input,
    thinking) counted as output: a lower bound still, since a model whose thinking streams as a
    summary or not at all was billed for all of it. Its answer never enters the history: the session
    keeps it with the money rollbacks took out of its records, until the retry it led to is answered
    (its record then carries it, :func:`~.completion.record_completed_request`). Returns the usage billed."""
    output = count_text_tokens(text) if text else 0
    usage = dataclasses.replace(started, output_tokens=max(started.output_tokens, output))
    run.session.bill(Spent.unfinished(usage, model, run.config.prices))
    return usage


async def decide_after_failure(
    run: RequestRun, attempts: _Attempts, error: ApiError, messages_sent: int, ts: int,
) -> AsyncGenerator[Event, None]:
    """Step 4: after a failed attempt, yield what happens next and return to retry; raise
    :class:`RequestCancelled` when the user (or the headless default) gives up."""
    # An endpoint's refusal of a feature or its budget is no transient failure: no backoff (degrade.py).
    switched_off = switch_off(run.without, error)
    if switched_off is not None:
        attempts.total += 1  # the refused request was sent too
        yield switched_off
        return
    if is_budget_stop(error):
        raise RequestCancelled(error.kind, error.message)
    if (reached := run.budget_reached()) is not None:  # a break mid-answer was billed: no retry past a budget
        raise BudgetReached(*reached)
    if error.kind is ErrorKind.CONTEXT_WINDOW_EXCEEDED:
        recovered = None if attempts.overflow_recovered else recover_overflow(run, messages_sent, ts)
        if recovered is not None:
            attempts.overflow_recovered = True
            attempts.truncation = recovered
            attempts.actions.append(truncate_action(recovered))
            attempts.total += 1  # the refused request was sent too: the record counts it as a retry
            yield recovered
            return
        message = error.message if attempts.overflow_recovered else \
            f"{error.message} — the conversation cannot be shortened further"
        async for event in _ask_user(run, attempts, error, message, can_shorten=False):
            yield event
        attempts.overflow_recovered = False
        return
    max_delay = run.config.max_retry_delay_s
    server_wait = error.retry_after_s
    too_long = server_wait is not None and server_wait > max_delay
    if rate_limit_wait_applies(run, attempts, error):
        async for event in wait_out_rate_limit(run, attempts, error):
            yield event
        return
    if is_auto_retryable(error.kind) and attempts.streak < MAX_AUTO_RETRIES and not too_long:
        attempts.streak += 1
        attempts.total += 1
        delay = jittered_retry_delay(run, attempts.streak, server_wait, max_delay)
        yield RetryScheduled(attempt=attempts.streak, max_attempts=MAX_AUTO_RETRIES, delay_s=delay,
                             error_kind=error.kind.value, message=error.message, status=error.status,
                             request_id=error.request_id)
        await wait_or_skip(run, delay)
        return
    fallback = run.config.fallback_model
    if fallback and attempts.model != fallback and error.kind in (ErrorKind.OVERLOADED, ErrorKind.NOT_FOUND):
        yield ModelFallback(from_model=attempts.model, to_model=fallback, reason=error.kind.value)
        # The cut-off attempts so far were billed at this model's price: they stay spent without a row,
        # as the row (its cost priced at the model that answers) would price them at the fallback's.
        attempts.model, attempts.streak, attempts.unanswered = fallback, 0, None
        return
    message = error.message
    if too_long:
        message = f"{message} (the server asked to wait {server_wait:.0f} s, more than {max_delay:.0f} s)"
    async for event in _ask_user(run, attempts, error, message, can_shorten=True):
        yield event


async def _ask_user(run: RequestRun, attempts: _Attempts, error: ApiError, message: str,
                    *, can_shorten: bool) -> AsyncGenerator[Event, None]:
    failed = ApiRequestFailed(error_kind=error.kind.value, message=message, status=error.status,
                              request_id=error.request_id, attempts=attempts.total + 1, can_shorten=can_shorten)
    yield failed
    with run.guard.armed():
        choice = await run.ask_failure(failed)
    if choice != "retry":
        raise RequestCancelled(error.kind, message)
    attempts.streak = 0


async def _aclose(stream: object) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:  # noqa: BLE001 - closing a failed stream must not hide the failure
            pass
