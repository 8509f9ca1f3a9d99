"""The API's rate limits as its headers state them: one token bucket per dimension.

Every response of the Messages API (answered or refused with 429) carries
``anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-{limit,remaining,reset}``:
the bucket's size, what is left in it, and when (RFC 3339) it is full again. The buckets refill
continuously, so ``(limit - remaining) / seconds-until-reset`` is the refill rate, whatever time
scale the server runs at (a time-compressed test server included). A 429 adds ``retry-after``.

This module only reads them (pure, no clock of its own): :func:`parse_rate_limit_headers` takes
the time of receipt, so a caller can turn the absolute reset times into seconds.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from typing import Mapping

HEADER_PREFIX = "anthropic-ratelimit-"
DIMENSIONS = ("requests", "input-tokens", "output-tokens", "tokens")
"""The buckets the API reports (``tokens`` is the most restrictive of the token buckets)."""
SECONDS_PER_WINDOW = 60.0
"""The limits are per minute: a full bucket's refill rate when no reset time says otherwise."""


@dataclass(frozen=True)
class Bucket:
    """One rate limit bucket as the server last stated it: ``limit``, ``remaining`` and
    ``reset_s``, the seconds from receipt until it is full again (0 when full)."""

    limit: int
    remaining: int
    reset_s: float

    @property
    def rate(self) -> float:
        """Units refilled per second (derived from the reset time; per minute when it is full)."""
        used = self.limit - self.remaining
        if used > 0 and self.reset_s > 0:
            return used / self.reset_s
        return self.limit / SECONDS_PER_WINDOW

    def available_after(self, elapsed_s: float) -> float:
        """What the bucket holds ``elapsed_s`` seconds after receipt (others' use not counted)."""
        return min(float(self.limit), self.remaining + self.rate * max(elapsed_s, 0.0))


@dataclass(frozen=True)
class RateLimitSnapshot:
    """The rate limit headers of one response. ``buckets`` by dimension (``requests``,
    ``input-tokens``, ``output-tokens``, ``tokens``); ``retry_after_s`` when the server asked to wait."""

    buckets: Mapping[str, Bucket] = field(default_factory=dict)
    retry_after_s: float | None = None
    age_s: float = 0.0
    """Seconds from receipt to when the client took them: a streamed answer's headers are read at its
    head and handed over at its end (``remaining`` is as of receipt, ``reset_s`` counts from it)."""

    def __bool__(self) -> bool:
        return bool(self.buckets) or self.retry_after_s is not None


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) and number >= 0 else None


def _seconds_until(value: str | None, now: _dt.datetime) -> float | None:
    if not value:
        return None
    try:
        when = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return max((when - now).total_seconds(), 0.0)


def parse_rate_limit_headers(headers: Mapping[str, str], now: _dt.datetime,
                             retry_after_s: float | None = None) -> RateLimitSnapshot | None:
    """The snapshot of ``headers`` (case-insensitive keys) received at ``now`` (aware UTC), or
    None when they state no limit. Malformed values are left out, never guessed."""
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    buckets: dict[str, Bucket] = {}
    for dim in DIMENSIONS:
        limit = _number(lower.get(f"{HEADER_PREFIX}{dim}-limit"))
        remaining = _number(lower.get(f"{HEADER_PREFIX}{dim}-remaining"))
        if limit is None or remaining is None or limit <= 0:
            continue
        reset = _seconds_until(lower.get(f"{HEADER_PREFIX}{dim}-reset"), now)
        buckets[dim] = Bucket(int(limit), int(min(remaining, limit)), reset if reset is not None else 0.0)
    snapshot = RateLimitSnapshot(buckets, retry_after_s)
    return snapshot if snapshot else None


__all__ = ["DIMENSIONS", "Bucket", "RateLimitSnapshot", "parse_rate_limit_headers"]
