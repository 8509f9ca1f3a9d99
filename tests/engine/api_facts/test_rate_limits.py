"""Reading the API's ``anthropic-ratelimit-*`` headers into buckets."""

from __future__ import annotations

import datetime as dt

import pytest

from nbagent.engine.api_facts.rate_limits import Bucket, parse_rate_limit_headers

NOW = dt.datetime(2026, 12, 2, 10, 0, 0, tzinfo=dt.timezone.utc)


def test_each_dimension_becomes_a_bucket_with_seconds_until_its_reset() -> None:
    headers = {
        "Anthropic-RateLimit-Requests-Limit": "50", "anthropic-ratelimit-requests-remaining": "10",
        "anthropic-ratelimit-requests-reset": "2026-12-02T10:00:48Z",
        "anthropic-ratelimit-input-tokens-limit": "40000", "anthropic-ratelimit-input-tokens-remaining": "40000",
        "anthropic-ratelimit-input-tokens-reset": "2026-12-02T10:00:00.000Z",
    }
    snap = parse_rate_limit_headers(headers, NOW, retry_after_s=2.0)
    assert snap is not None and snap.retry_after_s == 2.0
    requests = snap.buckets["requests"]
    assert requests == Bucket(50, 10, 48.0)
    assert requests.rate == pytest.approx(40 / 48)  # what was used, refilled by the reset time
    assert requests.available_after(12) == pytest.approx(20)
    assert requests.available_after(1000) == 50  # never more than the limit
    assert snap.buckets["input-tokens"].rate == pytest.approx(40000 / 60)  # full: per minute


def test_no_or_malformed_headers_give_nothing_rather_than_a_guess() -> None:
    assert parse_rate_limit_headers({"content-type": "application/json"}, NOW) is None
    bad = {"anthropic-ratelimit-requests-limit": "lots", "anthropic-ratelimit-requests-remaining": "3",
           "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-remaining": "-5",
           "anthropic-ratelimit-input-tokens-limit": "100", "anthropic-ratelimit-input-tokens-remaining": "7",
           "anthropic-ratelimit-input-tokens-reset": "soon"}
    snap = parse_rate_limit_headers(bad, NOW)
    assert snap is not None and set(snap.buckets) == {"input-tokens"}
    assert snap.buckets["input-tokens"].reset_s == 0.0
