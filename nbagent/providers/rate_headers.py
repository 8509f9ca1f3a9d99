"""A response's rate limit headers, read from the SDK's ``httpx2`` response."""

from __future__ import annotations

import datetime as _dt

from ..engine.api_facts.rate_limits import RateLimitSnapshot, parse_rate_limit_headers


def rate_limits_of(response: object, retry_after_s: float | None = None) -> RateLimitSnapshot | None:
    """The ``anthropic-ratelimit-*`` headers of an ``httpx2`` response, read now (None without them)."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    raw = getattr(headers, "raw", None)
    if isinstance(raw, list):  # httpx2's headers: decode only the rate limit ones, not all ~20 per response
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in raw
                   if k[:20].lower() == b"anthropic-ratelimit-"}
    try:
        return parse_rate_limit_headers(headers, _dt.datetime.now(_dt.timezone.utc), retry_after_s)
    except Exception:  # noqa: BLE001 - headers we cannot read must not fail an answered request
        return None


__all__ = ["rate_limits_of"]
