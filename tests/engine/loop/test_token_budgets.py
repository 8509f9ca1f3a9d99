"""Budgets for models without prices (issue 25): token budgets per prompt and per session stop a
run at the limit; a dollar budget on a model nothing can price is refused, never counted at
Claude's prices and never silently off."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.engine.contracts.config import RunLimits, SessionConfig, UnpricedBudgetError
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import assert_history_valid, done_of, make_engine, messages_requests, run

LOCAL = "llama-local"
pytestmark = pytest.mark.filterwarnings("ignore:nbagent has no prices")  # said once per process


def local_api(replies: list) -> SimulatedAPI:
    return SimulatedAPI(replies, models={LOCAL: 32_768})


async def test_a_prompt_token_budget_stops_the_run_once_reached_and_the_next_prompt_starts_afresh(tmp_path: Path) -> None:
    api = local_api([tool_reply("add", {"a": 1, "b": 2})] * 3 + [text_reply("done")])
    engine = make_engine(api, tmp_path, model=LOCAL, token_budget=200)
    events = await run(engine, "add forever")
    done = done_of(events)
    used = engine.session.records[0].usage.total_tokens
    assert used >= 200 and len(engine.session.records) == 1  # stopped before the second request
    assert done.reason == "max_budget"
    assert done.stopped == f"stopped: this prompt's token budget 200 reached ({used:,} tokens used in this prompt)"
    assert_history_valid(engine.session.history)
    later = await run(engine, "and now")  # counts only its own tokens
    assert len(messages_requests(api)) == 2 and done_of(later).reason == "max_budget"


async def test_a_session_token_budget_counts_every_prompt(tmp_path: Path) -> None:
    api = local_api([text_reply("one"), text_reply("two")])
    engine = make_engine(api, tmp_path, model=LOCAL, session_token_budget=1)
    assert done_of(await run(engine, "first")).reason == "end_turn"  # nothing spent before it
    done = done_of(await run(engine, "second"))
    assert done.reason == "max_budget" and done.stopped is not None
    assert done.stopped.startswith("stopped: the session token budget 1 reached")
    assert len(messages_requests(api)) == 1


async def test_a_run_limit_token_budget_overrides_the_sessions(tmp_path: Path) -> None:
    api = local_api([tool_reply("add", {"a": 1, "b": 2}), text_reply("3")])
    engine = make_engine(api, tmp_path, model=LOCAL, token_budget=10_000_000)
    events = [e async for e in engine.submit_message("add", limits=RunLimits(token_budget=1))]
    assert done_of(events).reason == "max_budget" and len(messages_requests(api)) == 1


def test_a_dollar_budget_on_a_model_without_any_price_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(UnpricedBudgetError, match="no prices for model 'llama-local'.*token budget"):
        SessionConfig(model=LOCAL, max_budget_usd=1.0)
    with pytest.raises(UnpricedBudgetError, match="token budget"):
        SessionConfig(max_session_budget_usd=1.0).replace(model=LOCAL)
    # Priced by the user: fine; an unknown Claude model keeps its family's stand-in price.
    # Plain rows are documented (docs/models.md), but SessionConfig.prices is typed as ModelInfo rows only.
    SessionConfig(model=LOCAL, max_budget_usd=1.0, prices={LOCAL: {"input": 0.1, "output": 0.2}})  # type: ignore[dict-item]
    SessionConfig(model="claude-opus-4-1-20250805", max_budget_usd=1.0)


async def test_a_prompts_dollar_budget_on_an_unpriced_model_is_refused_before_sending(tmp_path: Path) -> None:
    api = local_api([text_reply("never")])
    engine = make_engine(api, tmp_path, model=LOCAL)
    events = [e async for e in engine.submit_message("hi", limits=RunLimits(max_budget_usd=0.5))]
    done = done_of(events)
    assert done.reason == "error" and done.error is not None and "dollar budget cannot be enforced" in done.error
    assert not messages_requests(api) and engine.session.history == []


async def test_a_model_the_table_does_not_know_uses_the_window_the_endpoint_reported(tmp_path: Path) -> None:
    engine = make_engine(local_api([]), tmp_path, model=LOCAL, known_windows={LOCAL: 32_768})
    assert engine.context_window == 32_768
    engine.reconfigure(context_window=4_000)  # an explicit window still wins
    assert engine.context_window == 4_000
