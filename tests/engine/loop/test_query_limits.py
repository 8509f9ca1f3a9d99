"""Budget and turn limits end the loop with the right reason; cost totals are the sum of the
per-request costs (issue 4, test 5)."""

from __future__ import annotations

import warnings
from decimal import Decimal
from typing import Any

from nbagent.engine.api_facts.cost import Usage, cost_of
from nbagent.engine.api_facts.models import get_model
from nbagent.engine.loop.turn import PromptLimits
from nbagent.engine.state.store import SessionStore
from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply, tool_reply
from tests.engine.loop._blocks import content_list
from tests.engine.loop.test_query_support import (
    MODEL,
    assert_history_valid,
    assert_persisted_valid,
    done_of,
    kinds,
    make_engine,
    messages_requests,
    records_of,
    run,
    totals_for,
)


def test_a_budget_below_a_hundredth_of_a_cent_is_said_as_set_never_as_zero() -> None:
    # Notebook 04's `%%agent --max-budget 0.000001` said "this prompt's budget $0.0000 reached":
    # the limit the student typed read as zero. Amounts 4 decimals show stay as they were.
    limits = PromptLimits(None, 0.000001, None, 0.01, None, None, 0)
    reached = limits.reached(1, 0.0106)
    assert reached is not None and reached[1] == "stopped: this prompt's budget $0.000001 reached ($0.0006 spent in this prompt)"
    small = PromptLimits(None, 0.0000234, None, 0.0, None, None, 0).reached(1, 0.5)
    assert small is not None and "budget $0.000023 reached" in small[1]
    assert PromptLimits(None, 0.25, None, 0.0, None, None, 0).reached(1, 0.5) == (
        "max_budget", "stopped: this prompt's budget $0.2500 reached ($0.5000 spent in this prompt)")


def always_tools(body: dict) -> Any:
    return tool_reply("echo", {"text": "again"}, text="One more time.")


async def test_max_requests_stops_after_that_many_requests(tmp_path: Any) -> None:
    api = SimulatedAPI(always_tools)
    engine = make_engine(api, tmp_path, max_requests=2)
    ev = await run(engine, "loop forever")
    assert kinds(ev) == ["api_request_started", "request_completed", "tool_use", "tool_result"] * 2 + ["done"]
    assert done_of(ev).reason == "max_requests"
    assert len(messages_requests(api)) == 2
    assert_history_valid(engine.session.history)  # ends with the answered tool results
    assert content_list(engine.session.history[-1])[0]["type"] == "tool_result"
    assert_persisted_valid(engine.config.task_dir, engine)
    # The limit is per prompt: the next prompt gets two more requests.
    ev2 = await run(engine, "continue")
    assert done_of(ev2).reason == "max_requests" and len(messages_requests(api)) == 4
    assert_history_valid(engine.session.history)


async def test_max_budget_stops_before_the_next_request(tmp_path: Any) -> None:
    api = SimulatedAPI(always_tools)
    engine = make_engine(api, tmp_path, max_budget_usd=1e-9)
    ev = await run(engine, "spend")
    assert kinds(ev) == ["api_request_started", "request_completed", "tool_use", "tool_result", "done"]
    done = done_of(ev)
    assert done.reason == "max_budget" and done.totals.cost_usd >= 1e-9
    assert done.stopped is not None and done.stopped.startswith("stopped: this prompt's budget $0.000000001 reached")
    assert len(messages_requests(api)) == 1
    assert_history_valid(engine.session.history)
    # The budget is the prompt's: a new prompt gets its own (one more request), not none.
    ev2 = await run(engine, "spend more")
    assert done_of(ev2).reason == "max_budget" and len(messages_requests(api)) == 2
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_a_budget_not_reached_does_not_stop_the_loop(tmp_path: Any) -> None:
    api = SimulatedAPI([tool_reply("echo", {"text": "a"}), text_reply("done")])
    engine = make_engine(api, tmp_path, max_budget_usd=10.0, max_requests=5)
    ev = await run(engine, "cheap")
    assert done_of(ev).reason == "end_turn"


async def test_cost_totals_are_the_sum_of_per_request_costs(tmp_path: Any) -> None:
    # A system prompt over 1,024 tokens makes the simulated API write and then read the prompt
    # cache, so every price class (input, cache write, cache read, output) takes part.
    api = SimulatedAPI(
        [tool_reply("echo", {"text": "a"}), tool_reply("add", {"a": 1, "b": 2}), text_reply("done"),
         tool_reply("echo", {"text": "b"}), text_reply("done again")],
        faults={2: Fault.server_error()},
    )
    engine = make_engine(api, tmp_path, custom_system_prompt="Rules. " * 700)
    ev = await run(engine, "one") + await run(engine, "two")
    records = records_of(ev)
    assert records == engine.session.records and len(records) == 5
    assert sum(r.usage.cache_creation_input_tokens for r in records) > 0
    assert sum(r.usage.cache_read_input_tokens for r in records) > 0
    per_request = [cost_of(r.usage, r.model) for r in records]
    assert [r.cost_usd for r in records] == per_request
    expected = totals_for(records)
    assert engine.totals == expected
    assert done_of(ev).totals == expected
    assert expected.retries == 1 and expected.requests == 5 and expected.turns == 2
    # The price table by hand for one request (the model's published prices per million tokens).
    model = get_model(MODEL)
    assert model is not None
    prices = model.prices
    u = records[1].usage
    by_hand = (Decimal(u.input_tokens) * Decimal(str(prices.input))
               + Decimal(u.cache_creation_input_tokens) * Decimal(str(prices.cache_write_5m))
               + Decimal(u.cache_read_input_tokens) * Decimal(str(prices.cache_read))
               + Decimal(u.output_tokens) * Decimal(str(prices.output))) / Decimal(1_000_000)
    assert records[1].cost_usd == float(by_hand)
    # The totals on disk are the same sums.
    assert engine.config.task_dir is not None
    meta = SessionStore(engine.config.task_dir).load()
    assert meta.records == records
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_unknown_model_costs_are_none_and_counted_as_unpriced(tmp_path: Any) -> None:
    api = SimulatedAPI([text_reply("hi")])
    engine = make_engine(api, tmp_path, model="claude-unreleased-9")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = await run(engine, "hello")
    (record,) = records_of(ev)
    assert record.cost_usd is None
    totals = done_of(ev).totals
    assert totals.unpriced_requests == 1 and totals.cost_usd == 0.0
    assert totals.usage == Usage() + record.usage
