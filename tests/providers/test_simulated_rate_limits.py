"""The simulated API's shared rate limit mode: per-minute buckets, 429 with retry-after, and the
``anthropic-ratelimit-*`` headers, as the real API has them."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from nbagent.engine.api_facts.rate_limits import parse_rate_limit_headers
from nbagent.engine.contracts.errors import ErrorKind
from nbagent.providers.simulated import RateLimitSettings, SimulatedAPI, text_reply

MODEL = "claude-sonnet-5-5"
WALL = dt.datetime(2026, 12, 2, 10, 0, 0, tzinfo=dt.timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def api(settings: RateLimitSettings, clock: Clock) -> SimulatedAPI:
    sim = SimulatedAPI(lambda body: text_reply("ok"), clock=clock, rate_limits=settings)
    assert sim.rate_limits is not None
    sim.rate_limits.wall = lambda: WALL + dt.timedelta(seconds=clock.now)
    return sim


def body(text: str = "hi", system: Any = None) -> bytes:
    b: dict[str, Any] = {"model": MODEL, "max_tokens": 50, "messages": [{"role": "user", "content": text}]}
    if system is not None:
        b["system"] = system
    return json.dumps(b).encode()


async def send(sim: SimulatedAPI, data: bytes | None = None) -> tuple[int, dict[str, str], dict[str, Any]]:
    response = await sim.handle("POST", "/v1/messages", {"x-api-key": "k"}, data or body())
    raw = b"".join([chunk async for chunk in response.body])
    return response.status, dict(response.headers), json.loads(raw)


async def test_over_the_requests_limit_it_answers_429_with_retry_after_and_headers() -> None:
    clock = Clock()
    sim = api(RateLimitSettings(requests_per_minute=2), clock)
    for remaining in (1, 0):
        status, headers, _ = await send(sim)
        assert status == 200 and headers["anthropic-ratelimit-requests-remaining"] == str(remaining)
    status, headers, payload = await send(sim)
    assert status == 429 and payload["error"]["type"] == "rate_limit_error"
    assert "2 requests per minute" in payload["error"]["message"]
    assert headers["retry-after"] == "30"  # one request refills in 30 s; whole seconds, as the real API
    snap = parse_rate_limit_headers(headers, WALL)
    assert snap is not None and snap.buckets["requests"].remaining == 0
    assert snap.buckets["requests"].reset_s == pytest.approx(60.0)
    clock.now = 30.0
    assert (await send(sim))[0] == 200  # refilled continuously
    assert sim.rate_limits is not None
    assert (sim.rate_limits.admitted, sim.rate_limits.refused) == (3, 1)


async def test_input_tokens_count_only_what_the_cache_did_not_serve() -> None:
    clock = Clock()
    sim = api(RateLimitSettings(input_tokens_per_minute=100_000), clock)
    system = [{"type": "text", "text": "You are careful. " * 600, "cache_control": {"type": "ephemeral"}}]
    await send(sim, body("first", system))
    first = 100_000 - int((await send(sim, body("first", system)))[1]["anthropic-ratelimit-input-tokens-remaining"])
    limits = sim.rate_limits
    assert limits is not None
    # The second, identical request read its prefix from the cache: only the rest was counted.
    assert limits.admitted_input_tokens - first < first / 5


async def test_time_factor_compresses_the_minute_and_the_waits() -> None:
    clock = Clock()
    sim = api(RateLimitSettings(requests_per_minute=6, time_factor=10), clock)
    for _ in range(6):
        await send(sim)
    status, headers, _ = await send(sim)
    assert status == 429 and float(headers["retry-after"]) == pytest.approx(1.0)  # 10 s / 10, not whole
    clock.now = 1.0
    assert (await send(sim))[0] == 200


async def test_output_tokens_are_charged_after_the_reply_and_refuse_when_spent() -> None:
    clock = Clock()
    sim = api(RateLimitSettings(output_tokens_per_minute=1), clock)
    status, headers, message = await send(sim)
    assert status == 200 and message["usage"]["output_tokens"] == 1
    status, headers, payload = await send(sim)
    assert status == 429 and "output tokens per minute" in payload["error"]["message"]
    assert headers["anthropic-ratelimit-output-tokens-remaining"] == "0"


def test_settings_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="requests_per_minute"):
        RateLimitSettings(requests_per_minute=0)
    with pytest.raises(ValueError, match="time_factor"):
        RateLimitSettings(requests_per_minute=5, time_factor=0)


async def test_the_sdk_provider_carries_the_headers_to_the_engine() -> None:
    from nbagent.engine.contracts.errors import ApiError
    from nbagent.engine.contracts.provider import MessageComplete, ModelRequest
    from nbagent.providers.anthropic import simulated_provider

    clock = Clock()
    sim = api(RateLimitSettings(requests_per_minute=1), clock)
    provider = simulated_provider(sim)
    request = ModelRequest(model=MODEL, messages=[{"role": "user", "content": "hi"}], system=None, tools=(),
                           max_tokens=50)
    chunks = [c async for c in provider.stream(request)]
    done = chunks[-1]
    assert isinstance(done, MessageComplete) and done.rate_limits is not None
    assert done.rate_limits.buckets["requests"].remaining == 0
    with pytest.raises(ApiError) as refused:
        [c async for c in provider.stream(request)]
    err = refused.value
    assert err.kind is ErrorKind.RATE_LIMIT and err.retry_after_s == 60.0
    assert err.rate_limits is not None and err.rate_limits.buckets["requests"].limit == 1
