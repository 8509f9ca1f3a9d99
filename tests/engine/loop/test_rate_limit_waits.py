"""An agent on a shared rate limit (the simulated API's rate limit mode): it paces before sending
when the headers say others emptied the bucket, waits a 429's retry-after without counting it as a
retry, and the turn table shows the wait per request."""

from __future__ import annotations

import asyncio
from typing import Any

from nbagent import Agent
from nbagent.display.tables import turns_df
from nbagent.engine.contracts.events import RateLimitWait, RetryScheduled
from nbagent.engine.loop.shared_budget import MemoryStore, SharedBudget
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import RateLimitSettings, SimulatedAPI, text_reply, tool_reply


class Clock:
    """The server's clock, moved by the agent's (injected) sleep: waits take no real time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def two_requests(body: dict[str, Any]) -> Any:
    if len(body["messages"]) == 1:
        return tool_reply("list_files", {"path": "."})
    return text_reply("done")


def agent_on(sim: SimulatedAPI, clock: Clock, tmp_path: Any) -> Agent:
    agent = Agent(provider=simulated_provider(sim), sleep=clock.sleep, cwd=tmp_path, task_dir=tmp_path / "task")
    agent.engine.pacer.clock = clock  # type: ignore[attr-defined]
    return agent


async def test_a_429_is_waited_out_then_answered_and_the_table_shows_the_wait(tmp_path: Any) -> None:
    clock = Clock()
    sim = SimulatedAPI(two_requests, clock=clock, rate_limits=RateLimitSettings(requests_per_minute=60))
    assert sim.rate_limits is not None
    sim.rate_limits.buckets["requests"].level = 0.0  # the rest of the class took the whole minute
    agent = agent_on(sim, clock, tmp_path)
    events = [e async for e in agent.run("go")]
    waits = [e for e in events if isinstance(e, RateLimitWait)]
    assert waits and waits[0].reason == "retry_after" and 1.0 <= waits[0].delay_s <= 1.1
    assert not [e for e in events if isinstance(e, RetryScheduled)]
    assert events[-1].reason == "end_turn"  # type: ignore[union-attr]
    record = agent.session.records[0]
    assert record.retries >= 1 and record.rate_limit_wait_s >= 1.0
    assert turns_df(agent.session.records)["rate-limit wait s"].iloc[0] >= 1.0


async def test_when_others_emptied_the_bucket_it_paces_before_sending_instead_of_hitting_429(tmp_path: Any) -> None:
    clock = Clock()
    sim = SimulatedAPI(two_requests, clock=clock, rate_limits=RateLimitSettings(requests_per_minute=60))
    assert sim.rate_limits is not None
    sim.rate_limits.buckets["requests"].level = 3.0  # 57 of 60 used by other kernels
    agent = agent_on(sim, clock, tmp_path)
    events = [e async for e in agent.run("go")]
    paced = [e for e in events if isinstance(e, RateLimitWait) and e.reason == "paced"]
    assert len(paced) == 1 and paced[0].dimension == "requests" and paced[0].remaining == 2
    assert paced[0].delay_s >= 58.0 * 0.4  # the used share's refill, aged at most to its floor
    assert sim.rate_limits.refused == 0
    assert events[-1].reason == "end_turn"  # type: ignore[union-attr]
    assert agent.session.records[1].rate_limit_wait_s == round(paced[0].delay_s, 3)


async def _two_kernels_of_one_machine(sim: SimulatedAPI, clock: Clock, tmp_path: Any) -> tuple[list[Agent], list[list[Any]]]:
    """Two agents ("a", "b") sharing one machine's rate-limit budget (as kernels share it through a
    file), each running one prompt at once: the agents and each one's events."""
    budget = SharedBudget(MemoryStore())
    agents = [agent_on(sim, clock, tmp_path / name) for name in ("a", "b")]
    for agent in agents:
        agent.engine.pacer.budget = budget  # type: ignore[attr-defined]

    async def run(agent: Agent) -> list[Any]:
        return [e async for e in agent.run("go")]

    return agents, list(await asyncio.gather(*(run(agent) for agent in agents)))


async def test_two_kernels_of_one_machine_take_turns_and_neither_is_refused(tmp_path: Any) -> None:
    clock = Clock()
    sim = SimulatedAPI(two_requests, clock=clock, rate_limits=RateLimitSettings(requests_per_minute=60))
    assert sim.rate_limits is not None
    sim.rate_limits.buckets["requests"].level = 2.0  # room for two of the four requests now
    _, runs = await _two_kernels_of_one_machine(sim, clock, tmp_path)
    waits = [e for e in runs[1] if isinstance(e, RateLimitWait)]
    assert waits[0].dimension == "first answer"  # b waited for a's answer, then booked against its headers
    assert "another kernel on this machine asks first" in waits[0].headline
    assert sim.rate_limits.refused == 0
    assert all(events[-1].reason == "end_turn" for events in runs)


async def test_the_class_bench_counts_the_waits_the_records_measured_not_the_caps_their_events_announced(tmp_path: Any) -> None:
    """bench_classroom's "median wait" summed each wait event's ``delay_s``: for a kernel waiting for
    another's first answer that is the 5 s cap (the view says "waited up to"), not the wait."""
    from tests.bench_module import load_bench

    clock = Clock()
    sim = SimulatedAPI(two_requests, clock=clock, rate_limits=RateLimitSettings(requests_per_minute=60))
    agents, runs = await _two_kernels_of_one_machine(sim, clock, tmp_path)
    measured = sum(r.rate_limit_wait_s for r in agents[1].records)
    announced = sum(e.delay_s for e in runs[1] if isinstance(e, RateLimitWait))
    assert announced > measured + 1  # b's wait ended with a's answer, well inside its cap

    result = load_bench("bench_classroom").tally(runs[1], agents[1].records)

    assert result["waits"] == measured and result["announced_waits"] == announced
    assert result["reason"] == "end_turn" and result["failed"] == 0
