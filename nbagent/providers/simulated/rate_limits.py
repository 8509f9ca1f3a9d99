"""The simulated API's shared rate limit mode: an organisation's per-minute token buckets.

As the real API does it: one bucket per minute for requests, input tokens and output tokens, each
refilled continuously up to its limit. A request is admitted when each bucket holds what it needs
(one request; its *uncached* input tokens, since cache reads do not count towards the input token
limit; some output room), else it is answered 429 ``rate_limit_error`` with ``retry-after``
(seconds until it would fit). Output tokens are charged when the reply is built. Every response,
refused or not, carries ``anthropic-ratelimit-{dimension}-{limit,remaining,reset}`` headers
(``reset``: RFC 3339, when the bucket is full again) and the ``tokens`` bucket, the tightest of the
token buckets.

``time_factor`` compresses time for benches: at 10, a "minute" lasts 6 s, so the buckets refill
ten times as fast and every wait the headers state is a tenth as long (in fractions of a second,
where the real API rounds ``retry-after`` up to whole seconds).
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from dataclasses import dataclass
from typing import Callable

from ...engine.api_facts.rate_limits import HEADER_PREFIX, SECONDS_PER_WINDOW
from .validation import ApiError


@dataclass(frozen=True)
class RateLimitSettings:
    """Per-minute limits (None: that bucket is not limited) and the time compression factor."""

    requests_per_minute: int | None = None
    input_tokens_per_minute: int | None = None
    output_tokens_per_minute: int | None = None
    time_factor: float = 1.0

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        if not (isinstance(self.time_factor, (int, float)) and math.isfinite(self.time_factor) and self.time_factor > 0):
            raise ValueError(f"time_factor must be a positive number, got {self.time_factor!r}")


class _Bucket:
    def __init__(self, limit: int, per_second: float, now: float) -> None:
        self.limit, self.per_second = limit, per_second
        self.level, self.at = float(limit), now

    def refill(self, now: float) -> None:
        self.level = min(float(self.limit), self.level + (now - self.at) * self.per_second)
        self.at = now

    def wait_for(self, need: float) -> float:
        """Seconds until ``need`` fits (0 now); a need over the limit waits for a full bucket."""
        need = min(need, float(self.limit))
        return max(need - self.level, 0.0) / self.per_second

    def reset_s(self) -> float:
        return (self.limit - self.level) / self.per_second


class SharedRateLimits:
    """The organisation's buckets. ``clock`` measures elapsed time (monotonic), ``wall`` stamps
    the RFC 3339 reset headers; both are injectable for tests."""

    def __init__(self, settings: RateLimitSettings, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], _dt.datetime] = lambda: _dt.datetime.now(_dt.timezone.utc)) -> None:
        self.settings, self.clock, self.wall = settings, clock, wall
        per_minute = {"requests": settings.requests_per_minute, "input-tokens": settings.input_tokens_per_minute,
                      "output-tokens": settings.output_tokens_per_minute}
        now = clock()
        window = SECONDS_PER_WINDOW / settings.time_factor
        self.buckets = {dim: _Bucket(limit, limit / window, now) for dim, limit in per_minute.items() if limit}
        self.admitted = 0
        self.refused = 0
        self.admitted_input_tokens = 0
        """Uncached input tokens of the admitted requests (what the input token bucket counted)."""

    def _refill(self) -> None:
        now = self.clock()
        for bucket in self.buckets.values():
            bucket.refill(now)

    def admit(self, uncached_input_tokens: int) -> None:
        """Take one request and its uncached input tokens, or raise the 429 (nothing is taken then)."""
        self._refill()
        needs = {"requests": 1.0, "input-tokens": float(uncached_input_tokens), "output-tokens": 1.0}
        waits = {dim: b.wait_for(needs[dim]) for dim, b in self.buckets.items()}
        blocked = {dim: w for dim, w in waits.items() if w > 0}
        if blocked:
            self.refused += 1
            dim = max(blocked, key=lambda d: blocked[d])
            limit = self.buckets[dim].limit
            unit = dim.replace("-", " ")
            raise ApiError(429, "rate_limit_error",
                           f"This request would exceed the rate limit for your organization of {limit:,} {unit} "
                           "per minute. For details, refer to the rate limits documentation. [simulated]",
                           self._retry_after(blocked[dim]))
        self.admitted += 1
        self.admitted_input_tokens += uncached_input_tokens
        for dim, bucket in self.buckets.items():
            bucket.level -= min(needs[dim], float(bucket.limit)) if dim != "output-tokens" else 0.0

    def _retry_after(self, seconds: float) -> float:
        if self.settings.time_factor == 1:
            return float(max(math.ceil(seconds), 1))  # the real API sends whole seconds
        return max(round(seconds, 3), 0.001)

    def charge_output(self, output_tokens: int) -> None:
        """Count a reply's output tokens (the bucket may go below zero for one long reply)."""
        bucket = self.buckets.get("output-tokens")
        if bucket is not None:
            bucket.refill(self.clock())
            bucket.level -= output_tokens

    def headers(self) -> list[tuple[str, str]]:
        """The ``anthropic-ratelimit-*`` headers as of now."""
        self._refill()
        wall = self.wall()
        out: list[tuple[str, str]] = []
        tightest: tuple[float, str] | None = None
        for dim, bucket in self.buckets.items():
            out += _bucket_headers(dim, bucket, wall)
            if dim != "requests":
                share = bucket.level / bucket.limit
                if tightest is None or share < tightest[0]:
                    tightest = (share, dim)
        if tightest is not None:
            out += _bucket_headers("tokens", self.buckets[tightest[1]], wall)
        return out


def _bucket_headers(dim: str, bucket: _Bucket, wall: _dt.datetime) -> list[tuple[str, str]]:
    reset = wall + _dt.timedelta(seconds=bucket.reset_s())
    stamp = reset.astimezone(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return [(f"{HEADER_PREFIX}{dim}-limit", str(bucket.limit)),
            (f"{HEADER_PREFIX}{dim}-remaining", str(max(int(bucket.level), 0))),
            (f"{HEADER_PREFIX}{dim}-reset", stamp)]


__all__ = ["RateLimitSettings", "SharedRateLimits"]
