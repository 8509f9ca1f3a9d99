"""A request stopped with ■ after its answer began was billed by the API (its input as
``message_start`` reported it, and what it generated): the session keeps it as spent, though no
record holds it (its answer never enters the history). It counted nothing before (newcomer pass 9)."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

from nbagent import Agent, RunLimits
from nbagent.engine.api_facts.cost import Usage, cost_of
from nbagent.engine.contracts.events import Event, TextDelta
from nbagent.engine.state.session import Session
from nbagent.engine.state.totals import Spent
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import done_of

LONG = " ".join(f"w{i}" for i in range(600))


async def _stopped_mid_answer(agent: Agent, deltas: int = 3) -> list[Event]:
    events: list[Event] = []
    seen = 0
    async for event in agent.run("tell me a long story"):
        events.append(event)
        if isinstance(event, TextDelta):
            seen += 1
            if seen == deltas:
                agent.abort()
    return events


async def test_a_request_stopped_mid_answer_stays_spent_in_the_session_and_its_folder(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply(LONG), text_reply("again")], tokens_per_second=2_000)
    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, task_dir=tmp_path / "task", read_mcp_json=False)

    events = await _stopped_mid_answer(agent)

    done = done_of(events)
    assert done.reason == "aborted" and agent.records == []  # no record: its answer is not in the history
    assert done.totals.spent_requests == 1 and done.totals.spent_usd > 0  # was 0 requests, $0
    assert agent.session.spent.tokens > 0
    spent = agent.totals.spent_usd
    agent.close()
    loaded = Session.load(tmp_path / "task")
    assert loaded.totals.spent_usd == spent and loaded.totals.spent_requests == 1  # session.json says so
    loaded.close()

    again = Agent.resume(tmp_path / "task", provider=simulated_provider(api), cwd=tmp_path, read_mcp_json=False)
    assert done_of([e async for e in again.run("a short one")]).reason == "end_turn"
    assert again.totals.spent_requests == 2 and again.totals.spent_usd > spent  # never un-spent
    again.close()


async def test_a_stop_before_any_answer_began_bills_nothing(tmp_path: Path) -> None:
    """Refused (overloaded, no ``message_start``), then ■ during the wait before the retry."""
    api = SimulatedAPI([text_reply("late")], faults={1: Fault.overloaded()})
    waiting = asyncio.Event()

    async def sleep(seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()  # the retry's wait, until ■

    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, read_mcp_json=False, sleep=sleep)
    run = asyncio.ensure_future(_collect(agent))
    await waiting.wait()
    agent.abort()

    done = done_of(await run)
    assert done.reason == "aborted" and done.totals.spent_requests == 0 and done.totals.spent_usd == 0


async def test_requests_whose_connection_dropped_mid_answer_stay_spent_though_retried(tmp_path: Path) -> None:
    """The API billed each (its input as ``message_start`` reported it); retried three times, the
    session counted one request, so a budget let through four times the input it counted."""
    async def no_wait(seconds: float) -> None:
        return None

    faults = {1: Fault.drop(6), 2: Fault.sse_error(6), 3: Fault.drop(6)}
    api = SimulatedAPI([text_reply(LONG)] * 4, faults=faults)
    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, read_mcp_json=False, sleep=no_wait)
    done = done_of([e async for e in agent.run("x " * 5_000)])
    assert done.reason == "end_turn" and len(api.requests) == 4 and len(agent.records) == 1
    prompt = agent.records[0].usage.input_tokens
    assert done.totals.spent_requests == 4 and agent.session.spent.tokens > 4 * prompt


async def test_a_request_that_broke_off_is_not_sent_again_past_the_prompts_budget(tmp_path: Path) -> None:
    """Each break mid-answer is billed: with the prompt's budget used up by the first, the retries
    (up to three, each billed again) went out anyway, since budgets were checked before requests only."""
    async def no_wait(seconds: float) -> None:
        return None

    api = SimulatedAPI([text_reply(LONG)] * 4, faults={1: Fault.drop(6), 2: Fault.drop(6), 3: Fault.drop(6)})
    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, read_mcp_json=False, sleep=no_wait)
    events = [e async for e in agent.run("x " * 5_000, limits=RunLimits(max_budget_usd=1e-6))]
    done = done_of(events)
    assert len(api.requests) == 1 and done.reason == "max_budget" and done.error is None
    assert done.totals.spent_requests == 1 and done.stopped is not None
    assert done.stopped.startswith("stopped: this prompt's budget $0.000001 reached")
    assert not [e for e in events if e.kind == "retry_scheduled"] and agent.records == []
    # The history stays valid: the prompt got its placeholder answer, and the next prompt runs.
    assert done_of([e async for e in agent.run("short")]).reason == "end_turn"


async def _collect(agent: Agent) -> list[Event]:
    return [e async for e in agent.run("hello")]


def test_the_spend_of_a_stopped_request_is_its_reported_input_and_the_text_it_streamed() -> None:
    from nbagent.engine.api_facts.tokens import count_text_tokens

    started = Usage(input_tokens=1_000, cache_read_input_tokens=4_000, output_tokens=1)
    streamed = count_text_tokens(LONG)
    billed = Usage(input_tokens=1_000, cache_read_input_tokens=4_000, output_tokens=streamed)
    spent = Spent.unfinished(billed, "claude-sonnet-4-5", None)
    assert spent.requests == 1 and spent.cost_usd == cost_of(billed, "claude-sonnet-4-5") and spent.unpriced_requests == 0
    before = cost_of(started, "claude-sonnet-4-5")
    assert spent.tokens == 5_000 + streamed and before is not None and before < spent.cost_usd
    with warnings.catch_warnings():  # "no prices for model …", said once per model
        warnings.simplefilter("ignore")
        unpriced = Spent.unfinished(billed, "claude-sonnet-9-unknown", None)  # budgets: its family's dearest price
    assert unpriced.cost_usd == 0 and unpriced.unpriced_requests == 1 and unpriced.budget_usd > 0


async def test_a_request_stopped_while_the_model_wrote_a_tool_calls_input_bills_what_it_wrote(tmp_path: Path) -> None:
    """■ while the model streamed a long python call: the API billed every token of its input so far,
    but only the text before it was counted (a few tokens), so "spent" read as if the code were free."""
    from nbagent.engine.api_facts.tokens import count_text_tokens
    from nbagent.engine.contracts.events import ToolUseDelta

    code = "\n".join(f"total_{i} = sales['revenue'].sum() * {i}" for i in range(200))
    api = SimulatedAPI([tool_reply("python", {"code": code}, text="I will run it.")], tokens_per_second=20_000)
    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, read_mcp_json=False)
    streamed: list[str] = []
    async for event in agent.run("compute the totals"):
        if isinstance(event, ToolUseDelta):
            streamed.append(event.partial_json)
            if len("".join(streamed)) > len(code) // 2:
                agent.abort()
    assert len("".join(streamed)) > len(code) // 2  # the stop came halfway through the call's input
    written = count_text_tokens("".join(streamed))
    # spent tokens = the input message_start reported + the output counted: the call's input is in it
    # (was: the input and the few tokens of "I will run it.", 996 of 1,600 here).
    assert agent.session.spent.tokens > written > 500
    agent.close()


async def test_a_retried_requests_row_carries_what_its_cut_off_attempts_were_billed(tmp_path: Path) -> None:
    """A dropped attempt was billed (the session's spent) but in no row: the run's table summed to
    less than its done line's "session spent", and a rollback of the turn was the only way to see it."""
    from nbagent.display.tables import for_display, turns_df

    async def no_wait(seconds: float) -> None:
        return None

    api = SimulatedAPI([text_reply(LONG)] * 3, faults={1: Fault.drop(6), 2: Fault.sse_error(6)})
    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, read_mcp_json=False, sleep=no_wait)
    done = done_of([e async for e in agent.run("x " * 5_000)])
    [row] = agent.records
    spent = agent.session.spent

    assert abs(turns_df(agent.records)["cumulative cost (session)"].iloc[-1] - round(spent.cost_usd, 4)) < 1e-9
    assert row.unanswered_usage is not None and row.unanswered_usage.input_tokens >= 2 * row.usage.input_tokens
    assert row.cost_usd == cost_of(row.usage + row.unanswered_usage, row.model)
    shown = for_display(turns_df(agent.records))  # the row says why its cost is more than its tokens'
    assert shown["cut-off tokens"].tolist() == [row.unanswered_usage.total_tokens]
    assert done.totals.spent_requests == 3 and spent.requests == 3  # each attempt was still sent and billed
    assert spent.tokens == row.usage.total_tokens + row.unanswered_usage.total_tokens  # counted once
    assert abs(done.totals.spent_usd - done.totals.cost_usd) < 1e-12

    agent.rollback(0)  # the row's money, its attempts' included, stays spent
    assert agent.records == [] and abs(agent.session.spent.cost_usd - spent.cost_usd) < 1e-12
    assert agent.session.spent.tokens == spent.tokens and agent.session.spent.requests == 3


async def test_attempts_cut_off_before_a_fallback_are_billed_at_their_own_models_price(tmp_path: Path) -> None:
    """Four attempts on haiku cut off by an error event, then the fallback (opus) answers: the row
    priced the haiku attempts at opus's price (spent grew by half again; the session's other
    unrowed money was clamped away), or, the other way round, the rows fell short of spent."""
    async def no_wait(seconds: float) -> None:
        return None

    for model, fallback in (("claude-haiku-4-5", "claude-opus-4-8"), ("claude-opus-4-8", "claude-haiku-4-5")):
        api = SimulatedAPI([text_reply(LONG)] * 6, faults={i: Fault.sse_error(6) for i in range(1, 5)})
        agent = Agent(provider=simulated_provider(api), cwd=tmp_path, read_mcp_json=False, sleep=no_wait,
                      model=model, fallback_model=fallback)
        done = done_of([e async for e in agent.run("x " * 5_000)])
        [row] = agent.records
        assert row.model == fallback and done.totals.spent_requests == 5
        cut_off = agent.session.dropped  # the four attempts, each at the price of the model it ran on
        assert cut_off.requests == 4 and cut_off.tokens > 4 * 5_000 and cut_off.cost_usd > 0
        assert abs(done.totals.spent_usd - (cut_off.cost_usd + (row.cost_usd or 0.0))) < 1e-12
        assert row.unanswered_usage is None and row.cost_usd == cost_of(row.usage, fallback)
        # At most their tokens at the model's dearest rate: opus's price for haiku's attempts is far more.
        dearest = max(cost_of(Usage(**{kind: 1}), model) or 0.0 for kind in ("input_tokens", "output_tokens",
                                                                             "cache_creation_input_tokens"))
        assert cut_off.cost_usd <= cut_off.tokens * dearest + 1e-12
        agent.close()
