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

The kernels of one machine on one key need not guess about each other: their pacers book every send in
a budget they share (:mod:`.shared_budget`, :func:`budget_for`), and the rules above are left for the
users of the key elsewhere.

Pure: the clock and the random source are injected (tests fix both).
"""

from __future__ import annotations

import random
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Callable, TypeVar

from ..api_facts.rate_limits import SECONDS_PER_WINDOW, Bucket, RateLimitSnapshot
from ..disk.shared_file import SharedFile, pacing_dir
from .shared_budget import RATE_DOUBT, Booking, Outcome, SharedBudget

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
BACKOFF_BASE_S = 2.0
PACED = ("requests", "input-tokens", "output-tokens")
"""The buckets paced on (``tokens`` is the tightest of the token buckets, already covered)."""

Uniform = Callable[[float, float], float]
T = TypeVar("T")
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
    again: bool = False
    """Wait ``delay_s``, then ask again: another kernel's first answer will state the budget."""


class RatePacer:
    """What this client knows of the key's buckets: the last headers, when they came, and what it
    sent since. One per provider (all sessions of a process share it, as they share the key)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, uniform: Uniform | None = random.uniform,
                 budget: SharedBudget | None = None) -> None:
        self.clock = clock
        self.budget = budget
        """The budget this machine's kernels on the same key share (None: this pacer knows only its own sends)."""
        self._slot: float | None = None  # when the budget booked the request being sent
        self._unsent = False  # booked and not sent yet
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
        self._unsent = False
        while self._sent and now - self._sent[0] > SECONDS_PER_WINDOW:
            self._sent.popleft()

    def observe(self, snapshot: RateLimitSnapshot | None, uncached_input: int | None = None) -> None:
        """Take a response's rate limit headers (and, when answered, its uncached input tokens)."""
        if uncached_input is not None:
            self._need_input, self._refusals = uncached_input, 0
            if snapshot is None or not _saturated(snapshot):
                self._widen = max(1.0, self._widen / WIDEN)
        charged = (uncached_input, self._estimate) if uncached_input is not None else None
        outcome: Outcome = "answered" if uncached_input is not None else "failed"
        if snapshot is not None and snapshot.buckets:
            self._observe_headers(snapshot, outcome, charged)
        else:
            self._reconcile(None, outcome, charged)  # no headers: still news (the probe is back)

    def failed(self, snapshot: RateLimitSnapshot | None) -> None:
        """Take a failure that was not a 429 (its booking is given back: it most likely took nothing)."""
        self.observe(snapshot)

    def at_head(self, snapshot: RateLimitSnapshot) -> None:
        """Take the headers of a response whose stream has just begun: the machine's other kernels
        book against them at once (the answer itself is taken by :meth:`observe` at its end)."""
        if self._slot is not None and snapshot.buckets:
            self._call_budget(lambda budget, slot: budget.reconcile(self.clock(), snapshot, slot, "head"))

    def _observe_headers(self, snapshot: RateLimitSnapshot, outcome: Outcome,
                         charged: tuple[int, int] | None = None) -> None:
        local = self._reconcile(snapshot, outcome, charged)  # the budget doubts rates on its own
        if self._rate_cap:
            snapshot = RateLimitSnapshot({dim: self._believed(dim, b) for dim, b in snapshot.buckets.items()},
                                         snapshot.retry_after_s, snapshot.age_s)
        requests = snapshot.buckets.get("requests")
        if requests is not None and requests.limit - requests.remaining > max(local, len(self._sent)) + 1:
            self.shared = True  # more used than this machine sent this minute: another kernel uses the key
        self._seen, self._at = snapshot, self.clock() - snapshot.age_s

    def _reconcile(self, snapshot: RateLimitSnapshot | None, outcome: Outcome,
                   charged: tuple[int, int] | None = None) -> int:
        """Tell the shared budget what became of the booked send; how many sends this machine booked
        this minute. The booking is settled: a later one is the next request's."""
        slot = self._slot if self._slot is not None else (self._sent[-1] if self._sent else None)
        self._slot = None
        if slot is None:
            return 0
        local = self._call_budget(lambda budget, s: budget.reconcile(self.clock(), snapshot, s, outcome, charged), slot)
        return local or 0

    def _call_budget(self, call: Callable[[SharedBudget, float], T], slot: float | None = None) -> T | None:
        """``call`` on the shared budget; a budget that fails (its file gone bad, replaced, a full disk)
        is dropped and this kernel paces alone, as without one: pacing never fails a request."""
        slot = self._slot if slot is None else slot
        if self.budget is None or slot is None:
            return None
        try:
            return call(self.budget, slot)
        except Exception:  # noqa: BLE001 - a file another process wrote may hold anything
            self.budget = None
            return None

    def refused(self, snapshot: RateLimitSnapshot | None) -> None:
        """Take a 429. With headers it is observed like any response. Without them it is still news:
        every bucket the pacer knew is, as far as it can tell, empty now (refilling at the rate it
        saw). Otherwise the last answer's budget aged into "plenty" while the server kept refusing,
        and refused kernels came back together: on the bench's ``docs`` server with headerless 429s,
        87% of a class's requests were refused instead of 19%."""
        self._refusals += 1
        if not _counts_requests(snapshot) and (self.budget is None or not _counts_requests(self._seen)):
            # Refused, and no requests bucket to tell whether others use the key: assume so. (With a
            # machine's budget, the answers' requests bucket tells, against all the machine sent.)
            self.shared = True
        if snapshot is not None and snapshot.buckets:
            self._widen = min(self._widen * WIDEN, WIDEST)  # (without headers the buckets are emptied instead)
            self._doubt_rates(snapshot)
            self._observe_headers(snapshot, "refused")
            return
        self._reconcile(None, "refused")
        if self._seen is not None:
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
        need_input = self._need_input or estimated_input
        best = self._own_delay(need_input, age)
        # Booked at the share of its count the machine's answers were charged: a kernel's last charge
        # says little of its next one (in a class, one request writes the cache and the next reads it).
        if self._slot is not None and self._unsent:  # booked, then stopped before sending: give it back
            self._reconcile(None, "dropped")
        self._slot = None  # (sent and stopped before its answer: it took its place, the booking stays)
        booking = self._book(estimated_input, counted=True)
        if booking is not None and booking["again"]:
            return PaceDecision(max(booking["delay_s"], best.delay_s), booking["dimension"], shared=True, again=True)
        if booking is not None:
            self._slot, self._unsent = booking["slot"], True
            if booking["delay_s"] > best.delay_s:
                bucket = self._seen.buckets.get(booking["dimension"]) if self._seen is not None else None
                best = PaceDecision(booking["delay_s"], booking["dimension"], bucket.remaining if bucket else 0,
                                    bucket.limit if bucket else 0, True)
        return best

    def _book(self, need_input: int, counted: bool) -> Booking | None:
        return self._call_budget(lambda budget, _: budget.reserve(self.clock(), need_input, counted), 0.0)

    def _own_delay(self, need_input: int, age: int) -> PaceDecision:
        """The wait this pacer's own answers call for (see the module docstring)."""
        if self._seen is None:
            return PaceDecision()
        elapsed = self.clock() - self._at
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


def _counts_requests(snapshot: RateLimitSnapshot | None) -> bool:
    return snapshot is not None and "requests" in snapshot.buckets


def _saturated(snapshot: RateLimitSnapshot) -> bool:
    """Whether a paced bucket of ``snapshot`` has less than :data:`SATURATED` of its size left."""
    return any(b.remaining < SATURATED * b.limit for dim, b in snapshot.buckets.items() if dim in PACED)


_PACERS: "weakref.WeakKeyDictionary[object, RatePacer]" = weakref.WeakKeyDictionary()


def pacer_for(provider: object) -> RatePacer:
    """The pacer of ``provider`` (made on first use): sessions sharing a provider share its key, and
    the kernels of this machine share a budget per ``provider.rate_scope`` (see :func:`budget_for`)."""
    try:
        pacer = _PACERS.get(provider)
        if pacer is None:
            pacer = _PACERS[provider] = RatePacer(budget=budget_for(getattr(provider, "rate_scope", None)))
        return pacer
    except TypeError:  # a provider that cannot be weakly referenced gets its own
        return RatePacer(budget=budget_for(getattr(provider, "rate_scope", None)))


def budget_for(scope: object) -> SharedBudget | None:
    """The budget shared by this user's kernels on the key ``scope`` names (a digest of the endpoint
    and key; None: a provider with no shared limit, such as the in-process simulated API), kept in
    :func:`~nbagent.engine.disk.shared_file.pacing_dir`; None when that folder cannot be used."""
    if not isinstance(scope, str) or not scope.isalnum():
        return None
    try:
        return SharedBudget(SharedFile(pacing_dir() / f"{scope}.json"))
    except OSError:  # no folder of the user's own: each kernel paces alone, as before
        return None


__all__ = ["PaceDecision", "RatePacer", "budget_for", "full_jitter_backoff", "pacer_for"]
