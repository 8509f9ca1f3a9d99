"""Prompt caching: breakpoints, prefix reads and writes, TTLs on an injected clock."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from nbagent.engine.api_facts.cost import Usage, cost_of
from nbagent.providers.simulated import SimulatedAPI, text_reply

MODEL = "claude-sonnet-5-5"
BIG = "The notebook holds a sales table with region, month and revenue columns. " * 120  # > 1024 tokens


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def system(text: str = BIG, ttl: str | None = None) -> list[dict]:
    cache_control: dict = {"type": "ephemeral"}
    if ttl:
        cache_control["ttl"] = ttl
    return [{"type": "text", "text": text, "cache_control": cache_control}]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(clock: Clock) -> anthropic.AsyncAnthropic:
    return SimulatedAPI(lambda request: text_reply("ok"), clock=clock).async_client()


async def ask(client: anthropic.AsyncAnthropic, sys: Any = None, messages: list | None = None, **kw: Any) -> Any:
    params: dict = {"model": MODEL, "max_tokens": 50, "messages": messages or [{"role": "user", "content": "hi"}], **kw}
    if sys is not None:
        params["system"] = sys
    message = await client.messages.create(**params)
    return message.usage


async def test_second_identical_request_reads_what_the_first_wrote(client: anthropic.AsyncAnthropic) -> None:
    first = await ask(client, system())
    second = await ask(client, system())
    assert first.cache_creation_input_tokens > 1024 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    total = first.input_tokens + first.cache_creation_input_tokens
    assert second.input_tokens + second.cache_read_input_tokens == total
    # Cost figures become meaningful offline: the cached request is cheaper.
    cached, uncached = cost_of(Usage.from_api(second), MODEL), cost_of(Usage.from_api(first), MODEL)
    assert cached is not None and uncached is not None and cached < uncached


async def test_a_changed_prefix_is_not_read(client: anthropic.AsyncAnthropic) -> None:
    await ask(client, system())
    changed = await ask(client, system(BIG + " One more rule."))
    assert changed.cache_read_input_tokens == 0 and changed.cache_creation_input_tokens > 1024
    # Changing the tools changes the prefix too (tools come before system in cache order).
    tools = [{"name": "python", "description": "Run code.", "input_schema": {"type": "object"}}]
    with_tools = await ask(client, system(), tools=tools)
    assert with_tools.cache_read_input_tokens == 0


async def test_a_prefix_below_1024_tokens_is_not_cached(client: anthropic.AsyncAnthropic) -> None:
    for _ in range(2):
        usage = await ask(client, system("Short system prompt."))
        assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0


async def test_no_breakpoint_no_caching(client: anthropic.AsyncAnthropic) -> None:
    for _ in range(2):
        usage = await ask(client, BIG)
        assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0


async def test_ttl_expiry_turns_reads_back_into_writes_and_reads_refresh(
        client: anthropic.AsyncAnthropic, clock: Clock) -> None:
    written = (await ask(client, system())).cache_creation_input_tokens
    clock.now += 200
    assert (await ask(client, system())).cache_read_input_tokens == written
    clock.now += 200  # 400 s after the write, but 200 s after the read that refreshed it
    assert (await ask(client, system())).cache_read_input_tokens == written
    clock.now += 301
    expired = await ask(client, system())
    assert expired.cache_read_input_tokens == 0 and expired.cache_creation_input_tokens == written


async def test_one_hour_ttl_is_reported_and_outlives_five_minutes(
        client: anthropic.AsyncAnthropic, clock: Clock) -> None:
    first = await ask(client, system(ttl="1h"))
    assert first.cache_creation.ephemeral_1h_input_tokens == first.cache_creation_input_tokens > 0
    assert first.cache_creation.ephemeral_5m_input_tokens == 0
    clock.now += 1800
    assert (await ask(client, system(ttl="1h"))).cache_read_input_tokens == first.cache_creation_input_tokens
    clock.now += 3601
    assert (await ask(client, system(ttl="1h"))).cache_read_input_tokens == 0


async def test_a_growing_conversation_reads_the_previous_turns_prefix(client: anthropic.AsyncAnthropic) -> None:
    def turn(text: str, cached: bool) -> dict:
        block: dict = {"type": "text", "text": text}
        if cached:
            block["cache_control"] = {"type": "ephemeral"}
        return {"role": "user", "content": [block]}

    history = [turn(BIG, True)]
    first = await ask(client, messages=history)
    # Next turn: the breakpoint moves to the newest message; the old prefix is found by lookback.
    history = [turn(BIG, False), {"role": "assistant", "content": "ok"}, turn("And the totals?", True)]
    second = await ask(client, messages=history)
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens > 0  # the new turn is written on top


async def test_top_level_cache_control_caches_the_whole_prompt(client: anthropic.AsyncAnthropic) -> None:
    first = await ask(client, BIG, cache_control={"type": "ephemeral"})
    second = await ask(client, BIG, cache_control={"type": "ephemeral"})
    assert first.cache_creation_input_tokens > 1024
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens and second.input_tokens == 0


async def test_more_than_four_breakpoints_is_rejected(client: anthropic.AsyncAnthropic) -> None:
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks with cache_control"):
        await ask(client, blocks)


async def test_a_one_hour_breakpoint_after_a_five_minute_one_is_rejected(client: anthropic.AsyncAnthropic) -> None:
    five_then_hour = [{"type": "text", "text": BIG, "cache_control": {"type": "ephemeral"}},
                      {"type": "text", "text": "more", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    with pytest.raises(anthropic.BadRequestError, match="ttl '1h' must come before"):
        await ask(client, five_then_hour)
    hour_then_five = [dict(five_then_hour[1], text=BIG), dict(five_then_hour[0], text=BIG.upper())]
    usage = await ask(client, hour_then_five)
    # The span up to the one-hour breakpoint is a one-hour write, the rest a five-minute one.
    assert 0 < usage.cache_creation.ephemeral_1h_input_tokens < usage.cache_creation_input_tokens
    assert usage.cache_creation.ephemeral_5m_input_tokens > 0
