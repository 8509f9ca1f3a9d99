"""Waiting for a shared rate limit: a client-side budget seeded from the API's headers, and jitter.

A classroom is thirty to two hundred kernels on one organisation's key. Retried in fixed 2/4/8 s
steps they come back in step and the server refuses most of them again. Three rules here:

* **Pace before sending** (:meth:`RatePacer.pace_delay`): every response says what remains in each
  bucket and when it is full again. When little remains and others use the same key (the bucket
  went down by more than this client spent), the client waits for the share it used to come back,
  times a random factor: kernels spread out instead of arriving together. Alone, it waits only
  when its next request does not fit.
* **Honour ``retry-after``** (:meth:`RatePacer.retry_after_delay`): exactly, plus a little jitter.
  A 429 is news (:meth:`RatePacer.refused`): a shared key's next paced waits grow longer, a 429
  without headers says the buckets are empty, one without a ``requests`` bucket that others may use
  the key, and one whose headers say the bucket refills far faster than ``retry-after`` does is not
  believed about the rate.
* **Jittered backoff** (:func:`full_jitter_backoff`) for failures without a server wait.

Pure: the clock and the random source are injected (tests fix both).
"""

from __future__ import annotations

import random
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Callable

from ..api_facts.rate_limits import SECONDS_PER_WINDOW, Bucket, RateLimitSnapshot

LOW_SHARE = 0.5
"""Below this share of a bucket left, a shared key is paced (the bucket is being emptied)."""
SPREAD = 0.6
"""A paced wait is the bucket's refill time for what was used times uniform(1, 1 + SPREAD) ..."""
AGEING, AGEING_FLOOR = 0.3, 0.4
"""... times max(AGEING_FLOOR, 1 - AGEING × the prompt's earlier paced waits): a prompt that already
waited waits less, so the students unlucky early are not also the last (in a simulated class of 60
this cut the time to the last answer by a tenth and the slowest student's wait, at the same 429s)."""
RETRY_AFTER_JITTER = 0.1
"""``retry-after`` is honoured exactly plus up to this share of it (at most 1 s) at random."""
BLIND_SPREAD_BASE, BLIND_SPREAD_CAP_S = 4.0, 30.0
"""Refused again and again with no budget ever stated, a kernel adds up to ``retry-after × (4^(n-1) - 1)``
(at most 30 s) at random on its n-th refusal in a row: it knows nothing of the others but that they win
(base 4 rather than 2: 24% → 21% refused in the simulated class whose 429s carry no headers)."""
WIDEN, WIDEST, SATURATED = 1.5, 4.0, 0.1
"""Each 429 makes a shared key's paced waits 1.5 times longer (up to ``WIDEST`` times); an answer shortens
them by as much again, unless a paced bucket still has less than ``SATURATED`` of its size left. The
headers show a bucket's level, never how many kernels wait for it: a refusal is the only sign that more
came than it holds, and while the bucket stays empty the crowd is still there. (In the simulated class,
``bench/bench_class_sim.py``, 60 kernels on 20 requests a minute were refused 60% → 35% of the time, and
the default class of 50 finished sooner; doubling instead of 1.5 refused 29% but made it 4% slower.)"""
RATE_DOUBT = 4.0
"""A refused request's bucket that, by its reset time, would refill more than this many times faster
than ``retry-after`` says is capped at the ``retry-after`` rate: a server whose reset means "the next
unit" instead of "full again" made every kernel believe its bucket full in a second (95% refused)."""
BACKOFF_BASE_S = 2.0
PACED = ("requests", "input-tokens", "output-tokens")
"""The buckets paced on (``tokens`` is the tightest of the token buckets, already covered)."""

Uniform = Callable[[float, float], float]
JITTER = True
"""Whether new pacers draw random jitter; tests that check the exact schedule (2/4/8 s, a
``retry-after`` to the second) turn it off: backoff is then its ceiling and a server's wait exact."""


def full_jitter_backoff(attempt: int, max_delay: float, uniform: Uniform | None = random.uniform) -> float:
    """Automatic retry ``attempt``'s wait (1-based) without a server wait: uniform in
    ``[0, min(max_delay, 2 · 2^(attempt-1))]`` ("full jitter"), so failed kernels do not retry in
    step; ``uniform`` None gives the ceiling (no jitter)."""
    ceiling = min(BACKOFF_BASE_S * 2.0 ** (max(attempt, 1) - 1), max_delay)
    return ceiling if uniform is None else uniform(0.0, ceiling)


@dataclass(frozen=True)
class PaceDecision:
    """Why and how long to wait before a request (``delay_s`` 0: send now)."""

    delay_s: float = 0.0
    dimension: str = ""
    remaining: int = 0
    limit: int = 0
    shared: bool = False


class RatePacer:
    """What this client knows of the key's buckets: the last headers, when they came, and what it
    sent since. One per provider (all sessions of a process share it, as they share the key)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, uniform: Uniform | None = random.uniform) -> None:
        self.clock = clock
        self.uniform: Uniform | None = uniform if JITTER else None
        """The random source of every jitter (None: none, the deterministic schedule)."""
        self._seen: RateLimitSnapshot | None = None
        self._at = 0.0
        self._sent: deque[float] = deque()  # when this client sent its recent requests
        self._need_input = 0  # the uncached input tokens of its last answered request
        self._refusals = 0  # 429s in a row (an answer ends the run)
        self._widen = 1.0  # a shared key's paced waits are this many times longer (see WIDEN)
        self._rate_cap: dict[str, float] = {}  # a bucket's refill rate (units/s) as retry-after showed it
        self._estimate = 0  # the input tokens of the request being paced
        self.shared = False
        """Whether others were seen using the same buckets (they went down by more than this client spent)."""

    def sent(self) -> None:
        """Count a request this client is sending now."""
        now = self.clock()
        self._sent.append(now)
        while self._sent and now - self._sent[0] > SECONDS_PER_WINDOW:
            self._sent.popleft()

    def observe(self, snapshot: RateLimitSnapshot | None, uncached_input: int | None = None) -> None:
        """Take a response's rate limit headers (and, when answered, its uncached input tokens)."""
        if uncached_input is not None:
            self._need_input, self._refusals = uncached_input, 0
            if snapshot is None or not _saturated(snapshot):
                self._widen = max(1.0, self._widen / WIDEN)
        if snapshot is None or not snapshot.buckets:
            return
        if self._rate_cap:
            snapshot = RateLimitSnapshot({dim: self._believed(dim, b) for dim, b in snapshot.buckets.items()},
                                         snapshot.retry_after_s)
        requests = snapshot.buckets.get("requests")
        if requests is not None and requests.limit - requests.remaining > len(self._sent) + 1:
            self.shared = True  # more used than this client sent this minute: another kernel uses the key
        self._seen, self._at = snapshot, self.clock()

    def refused(self, snapshot: RateLimitSnapshot | None) -> None:
        """Take a 429. With headers it is observed like any response. Without them it is still news:
        every bucket the pacer knew is, as far as it can tell, empty now (refilling at the rate it
        saw). Otherwise the last answer's budget aged into "plenty" while the server kept refusing,
        and refused kernels came back together: on the bench's ``docs`` server with headerless 429s,
        87% of a class's requests were refused instead of 19%."""
        self._refusals += 1
        if snapshot is None or "requests" not in snapshot.buckets:
            self.shared = True  # refused, and no requests bucket to tell whether others use the key: assume so
        if snapshot is not None and snapshot.buckets:
            self._widen = min(self._widen * WIDEN, WIDEST)  # (without headers the buckets are emptied instead)
            self._doubt_rates(snapshot)
            self.observe(snapshot)
        elif self._seen is not None:
            emptied = {dim: Bucket(b.limit, 0, b.limit / b.rate) for dim, b in self._seen.buckets.items()}
            self._seen, self._at = RateLimitSnapshot(emptied), self.clock()

    def _doubt_rates(self, snapshot: RateLimitSnapshot) -> None:
        """Cap the rate of a bucket that had no room for the refused request and whose reset time says it
        refills more than :data:`RATE_DOUBT` times faster than ``retry-after`` does."""
        wait = snapshot.retry_after_s
        if not wait:
            return
        for dim in ("requests", "input-tokens"):
            bucket = snapshot.buckets.get(dim)
            need = 1 if dim == "requests" else self._need_input or self._estimate
            if bucket is not None and need > 0 and bucket.remaining < need and bucket.rate > RATE_DOUBT * need / wait:
                self._rate_cap[dim] = need / wait

    def _believed(self, dim: str, bucket: Bucket) -> Bucket:
        cap = self._rate_cap.get(dim)
        if cap is None or bucket.rate <= cap or bucket.remaining >= bucket.limit:
            return bucket
        return Bucket(bucket.limit, bucket.remaining, (bucket.limit - bucket.remaining) / cap)

    def pace_delay(self, estimated_input: int, age: int = 0) -> PaceDecision:
        """How long to wait before the next request (see the module docstring); ``age`` is how
        many paced waits the prompt already had."""
        self._estimate = estimated_input
        if self._seen is None:
            return PaceDecision()
        elapsed = self.clock() - self._at
        need_input = self._need_input or estimated_input
        best = PaceDecision()
        for dim in PACED:
            bucket = self._seen.buckets.get(dim)
            if bucket is None:
                continue
            need = need_input if dim == "input-tokens" else 1
            delay = self._bucket_delay(bucket, elapsed, need, age)
            if delay > best.delay_s:
                best = PaceDecision(delay, dim, bucket.remaining, bucket.limit, self.shared)
        return best

    def _bucket_delay(self, bucket: Bucket, elapsed: float, need: int, age: int) -> float:
        available = bucket.available_after(elapsed)
        need = min(need, bucket.limit)
        deficit = max(need - available, 0.0) / bucket.rate
        if not self.shared:
            return deficit  # alone: wait only for what the next request needs
        if available - need >= LOW_SHARE * bucket.limit and self._widen <= 1.0:
            return 0.0
        refill = max(bucket.reset_s - elapsed, deficit)
        return refill * self._widen * max(AGEING_FLOOR, 1.0 - AGEING * age) * self._draw(1.0, 1.0 + SPREAD)

    def _draw(self, low: float, high: float) -> float:
        return low if self.uniform is None else self.uniform(low, high)

    def retry_after_delay(self, retry_after_s: float) -> float:
        """The server's wait, exactly, plus a little jitter (so refused kernels do not return together).
        Refused repeatedly without ever being told a budget (no headers), it spreads wider each time
        (:data:`BLIND_SPREAD_CAP_S`): otherwise every such kernel came back each ``retry-after``."""
        jitter = min(RETRY_AFTER_JITTER * retry_after_s, 1.0)
        if self._seen is None and self._refusals > 1:
            spread = retry_after_s * (BLIND_SPREAD_BASE ** (self._refusals - 1) - 1.0)
            jitter = max(jitter, min(spread, BLIND_SPREAD_CAP_S))
        return retry_after_s + self._draw(0.0, jitter)


def _saturated(snapshot: RateLimitSnapshot) -> bool:
    """Whether a paced bucket of ``snapshot`` has less than :data:`SATURATED` of its size left."""
    return any(b.remaining < SATURATED * b.limit for dim, b in snapshot.buckets.items() if dim in PACED)


_PACERS: "weakref.WeakKeyDictionary[object, RatePacer]" = weakref.WeakKeyDictionary()


def pacer_for(provider: object) -> RatePacer:
    """The pacer of ``provider`` (made on first use): sessions sharing a provider share its key."""
    try:
        pacer = _PACERS.get(provider)
        if pacer is None:
            pacer = _PACERS[provider] = RatePacer()
        return pacer
    except TypeError:  # a provider that cannot be weakly referenced gets its own
        return RatePacer()


__all__ = ["PaceDecision", "RatePacer", "full_jitter_backoff", "pacer_for"]
