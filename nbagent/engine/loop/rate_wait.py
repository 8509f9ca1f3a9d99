"""The request's waits: for the shared rate limit (paced before sending, or a 429's
``retry-after``, which is not counted as a retry) and the jittered backoff of automatic retries.

Kept apart from :mod:`.request`'s steps so that a change to the generic retry rules and one to
rate limits touch different functions. The waits themselves are :func:`wait_or_skip`: the
injected sleep, cut short by *Retry now*, abortable.
"""

from __future__ import annotations

import asyncio
from typing import AsyncGenerator

from ..contracts.errors import ApiError, ErrorKind
from ..contracts.events import Event, RateLimitWait
from .pacing import PaceDecision, full_jitter_backoff
from .request_run import RequestRun, StreamEnd, _Attempts
from .shared_budget import FIRST_ANSWER_POLL_S, FIRST_ANSWER_WAIT_S


async def pace_before_sending(run: RequestRun, attempts: _Attempts, estimate: int) -> AsyncGenerator[Event, None]:
    """Wait before sending when the last headers say the shared budget is nearly used up
    (bounded by what is left of ``max_rate_limit_wait_s``; *Retry now* sends at once)."""
    decisions = [run.pacer.pace_delay(estimate, age=run.paced[0])]
    if decisions[-1].again and attempts.rate_wait_s < run.config.max_rate_limit_wait_s:
        async for event in wait_for_first_answer(run, attempts, estimate, decisions):
            yield event
    decision = decisions[-1]
    if decision.again:  # *Retry now* cut the wait short, or no answer came in time: send
        return
    left = run.config.max_rate_limit_wait_s - attempts.rate_wait_s
    delay = min(decision.delay_s, max(left, 0.0))
    if delay <= 0:
        return
    run.paced[0] += 1
    yield RateLimitWait(delay_s=delay, reason="paced", dimension=decision.dimension, remaining=decision.remaining,
                        limit=decision.limit, waited_s=attempts.rate_wait_s)
    attempts.rate_wait_s += await wait_or_skip(run, delay)


async def wait_for_first_answer(run: RequestRun, attempts: _Attempts, estimate: int,
                                decisions: list[PaceDecision]) -> AsyncGenerator[Event, None]:
    """Another kernel of this machine sent the first request on this key, and its answer will state
    the budget (:mod:`.shared_budget`): ask again every little while until the budget books this
    send (at most :data:`FIRST_ANSWER_WAIT_S`); the decision that ends it is appended to ``decisions``."""
    limit = min(FIRST_ANSWER_WAIT_S, run.config.max_rate_limit_wait_s - attempts.rate_wait_s)
    yield RateLimitWait(delay_s=limit, reason="paced", dimension=decisions[-1].dimension, waited_s=attempts.rate_wait_s)
    started = attempts.rate_wait_s
    for _ in range(int(FIRST_ANSWER_WAIT_S / FIRST_ANSWER_POLL_S) + 1):
        delay = min(decisions[-1].delay_s, FIRST_ANSWER_POLL_S, limit - (attempts.rate_wait_s - started))
        if delay <= 0:
            return
        waited = await wait_or_skip(run, delay)
        attempts.rate_wait_s += waited
        if waited < delay:  # *Retry now*
            return
        decisions.append(run.pacer.pace_delay(estimate, age=run.paced[0]))
        if not decisions[-1].again:
            return


def observe_rate_limits(run: RequestRun, streamed: StreamEnd) -> None:
    """Feed the response's rate limit headers (answered or refused) to the client-side budget."""
    if streamed.complete is not None:
        u = streamed.complete.usage
        run.pacer.observe(streamed.complete.rate_limits, u.input_tokens + u.cache_creation_input_tokens)
    elif streamed.error is not None and streamed.error.kind is ErrorKind.RATE_LIMIT:
        run.pacer.refused(streamed.error.rate_limits)
    elif streamed.error is not None:
        run.pacer.failed(streamed.error.rate_limits)


def rate_limit_wait_applies(run: RequestRun, attempts: _Attempts, error: ApiError) -> bool:
    """A 429 that says how long to wait is waited out, not counted as a retry, while the request's
    rate limit waits stay within ``max_rate_limit_wait_s`` and each within ``max_retry_delay_s``."""
    wait = error.retry_after_s
    return (error.kind is ErrorKind.RATE_LIMIT and wait is not None and wait <= run.config.max_retry_delay_s
            and attempts.rate_wait_s + wait <= run.config.max_rate_limit_wait_s)


async def wait_out_rate_limit(run: RequestRun, attempts: _Attempts, error: ApiError) -> AsyncGenerator[Event, None]:
    """Wait the server's ``retry-after`` (exactly, plus a little jitter), then send again."""
    assert error.retry_after_s is not None
    delay = run.pacer.retry_after_delay(error.retry_after_s)
    bucket = _tightest(error)
    attempts.total += 1  # the refused request was sent: the record counts it
    yield RateLimitWait(delay_s=delay, reason="retry_after", dimension=bucket[0], remaining=bucket[1],
                        limit=bucket[2], waited_s=attempts.rate_wait_s, request_id=error.request_id)
    attempts.rate_wait_s += await wait_or_skip(run, delay)


def _tightest(error: ApiError) -> tuple[str, int | None, int | None]:
    """The bucket of a 429's headers with the smallest share left (what the view names)."""
    buckets = error.rate_limits.buckets if error.rate_limits is not None else {}
    named = [(d, b) for d, b in buckets.items() if d != "tokens"]
    if not named:
        return "", None, None
    dim, b = min(named, key=lambda item: item[1].remaining / item[1].limit)
    return dim, b.remaining, b.limit


def jittered_retry_delay(run: RequestRun, attempt: int, server_wait: float | None, max_delay: float) -> float:
    """An automatic retry's wait: the server's (plus jitter) when it gave one, else full-jitter
    backoff; capped at ``max_delay``."""
    backoff = full_jitter_backoff(attempt, max_delay, run.pacer.uniform)
    delay = backoff if server_wait is None else max(backoff, run.pacer.retry_after_delay(server_wait))
    return min(delay, max_delay)


async def wait_or_skip(run: RequestRun, delay: float) -> float:
    """Sleep ``delay`` seconds, cut short by *Retry now*; abortable. Returns the seconds waited
    (``delay``, or less when *Retry now* cut it short)."""
    started = run.pacer.clock()
    retry_now = run.control.retry_now_event
    assert retry_now is not None
    retry_now.clear()
    with run.guard.armed():
        sleeper = asyncio.ensure_future(run.sleep(delay))
        skipper = asyncio.ensure_future(retry_now.wait())
        try:
            await asyncio.wait({sleeper, skipper}, return_when=asyncio.FIRST_COMPLETED)
            skipped = skipper.done() and not sleeper.done()
        finally:
            sleeper.cancel()
            skipper.cancel()
    retry_now.clear()
    return min(max(run.pacer.clock() - started, 0.0), delay) if skipped else delay
