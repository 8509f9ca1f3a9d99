"""``Agent.run_sync`` returns a RunResult: still the list of events, plus the answers callers want."""

from __future__ import annotations

from nbagent import Agent
from nbagent.engine.api_facts.cost import cost_of
from nbagent.engine.contracts.events import Done, RequestCompleted
from nbagent.result import RunResult


def test_run_sync_result_is_the_event_list_with_text_cost_and_done() -> None:
    agent = Agent(provider="simulated", allow=["python"])
    result = agent.run_sync("What is 17 * 23?")
    assert isinstance(result, RunResult) and isinstance(result, list)
    assert isinstance(result[-1], Done) and result.done is result[-1] and result.events == list(result)
    assert "391" in result.text and result.reason == "end_turn"
    records = [r for r in agent.records]
    assert result.cost is not None and result.cost > 0
    assert abs(result.cost - sum(r.cost_usd or 0 for r in records)) < 1e-9


def test_a_run_on_a_model_without_prices_has_no_cost_never_zero() -> None:
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import SimulatedAPI, text_reply

    api = SimulatedAPI([text_reply("Hello.")], models={"llama-local": 32_768})
    agent = Agent(provider=simulated_provider(api), model="llama-local")
    result = agent.run_sync("Say hello.")
    assert result.reason == "end_turn" and result.cost is None
    assert "unknown (1 request(s) without prices)" in repr(result)


def test_run_result_repr_is_one_short_line() -> None:
    agent = Agent(provider="simulated", allow=["python"])
    agent.run_sync("What is 1 + 1?")
    result = agent.run_sync("What is 17 * 23?")
    text = repr(result)
    assert "\n" not in text and len(text) < 160
    assert text.startswith("RunResult(end_turn, 2 request(s), 1 tool call(s), $")
    # This run's cost, not the session's.
    assert result.cost is not None and result.done is not None and result.cost < result.done.totals.cost_usd


def test_an_unfinished_run_says_so() -> None:
    assert RunResult().done is None and RunResult().reason is None
    assert repr(RunResult()).startswith("RunResult(unfinished, 0 request(s)")


def test_text_leaves_out_a_broken_streams_partial_text_and_separates_requests() -> None:
    # A stream dropped mid-answer and sent again read "The answer is 42.The answer is 42." in
    # result.text (the partial text never enters history); two requests' texts ran together.
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply, tool_reply

    answer = "The answer is forty-two, computed carefully by hand."
    api = SimulatedAPI([text_reply(answer), text_reply(answer)], faults={1: Fault.drop(after_events=10)})
    result = Agent(provider=simulated_provider(api)).run_sync("q")
    assert [e.kind for e in result].count("stream_interrupted") == 1
    assert result.text == answer
    api = SimulatedAPI([tool_reply("python", {"code": "6 * 7"}, text="Let me compute."), text_reply("It is 42.")])
    result = Agent(provider=simulated_provider(api), allow=["python"]).run_sync("q")
    assert result.text == "Let me compute.\n\nIt is 42."


async def test_ask_leaves_out_a_broken_streams_partial_text() -> None:
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply

    answer = "The answer is forty-two, computed carefully by hand."
    api = SimulatedAPI([text_reply(answer), text_reply(answer)], faults={1: Fault.drop(after_events=10)})
    assert await Agent(provider=simulated_provider(api)).ask("q") == answer


def test_the_sessions_cost_on_a_model_without_prices_is_unknown_never_zero() -> None:
    # docs/api.md pointed at done.totals.cost_usd for the session's cost: 0.0 on a local model.
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import SimulatedAPI, text_reply

    api = SimulatedAPI([text_reply("Hello."), text_reply("Hi.")], models={"llama-local": 32_768})
    agent = Agent(provider=simulated_provider(api), model="llama-local")
    done = agent.run_sync("Say hello.").done
    assert done is not None and done.totals.unpriced_requests == 1 and done.totals.cost is None
    priced = Agent(provider="simulated").run_sync("What is 2 * 3?").done
    assert priced is not None and priced.totals.cost == priced.totals.cost_usd > 0


def test_a_run_without_a_completed_request_costs_a_float_zero() -> None:
    # It returned the int 0 (sum of nothing), typed float | None.
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply

    api = SimulatedAPI([text_reply("never")], faults={1: Fault.auth()})
    result = Agent(provider=simulated_provider(api)).run_sync("q")
    assert result.reason == "error" and type(result.cost) is float and result.cost == 0.0


def test_a_run_billed_for_broken_streams_on_a_model_without_prices_has_no_cost_never_zero() -> None:
    # Every stream broke after its answer began (each billed, at no known price), so no record kept
    # a request: the run read cost 0.0 and "$0.0000" (indep pass).
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply

    async def no_wait(seconds: float) -> None:
        return None

    answer = "The answer is forty-two, computed carefully by hand."
    api = SimulatedAPI([text_reply(answer)] * 4, models={"llama-local": 32_768},
                       faults={n: Fault.drop(after_events=10) for n in range(1, 5)})
    result = Agent(provider=simulated_provider(api), model="llama-local", sleep=no_wait).run_sync("q")
    assert result.reason == "error" and [e.kind for e in result].count("stream_interrupted") == 4
    assert result.cost is None
    assert "unknown (4 request(s) without prices)" in repr(result)


def test_a_priced_run_costs_what_its_broken_streams_were_billed_too() -> None:
    # Three streams broke after the answer began (billed), the fourth answered: the run read a
    # quarter of what the session was billed (review of session 57; money spent is never left out).
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply

    async def no_wait(seconds: float) -> None:
        return None

    answer = "The answer is forty-two, computed carefully by hand."
    api = SimulatedAPI([text_reply(answer)] * 4, faults={n: Fault.drop(after_events=10) for n in range(1, 4)})
    agent = Agent(provider=simulated_provider(api), sleep=no_wait)
    result = agent.run_sync("q")
    [record] = [e.record for e in result if isinstance(e, RequestCompleted) and e.record is not None]
    assert result.reason == "end_turn" and result.cost == agent.session.spent.cost_usd
    # The answered request's row carries its three broken attempts (pu6): it is most of the bill.
    assert record.unanswered_usage is not None and record.cost_usd is not None and result.cost is not None
    assert abs(record.cost_usd - result.cost) < 1e-12
    answered = cost_of(record.usage, record.model)
    assert answered is not None and result.cost > 3.5 * answered
    assert f"${result.cost:.4f}" in repr(result)
