"""``nbagent.session().cost`` is what the session spent, and unknown (None) once a request had no
price: it read ``0.0`` for a session on a local model (pow3)."""

from __future__ import annotations

from nbagent import Agent
from nbagent.notebook.session import NotebookSession
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI, text_reply


def test_the_cost_of_a_session_on_a_model_without_prices_is_unknown_even_after_a_rollback() -> None:
    api = SimulatedAPI([text_reply("Hello."), text_reply("Hi.")], models={"llama-local": 32_768})
    session = NotebookSession(Agent(provider=simulated_provider(api), model="llama-local"))
    session.agent.run_sync("Say hello.")
    assert session.agent.totals.spent_usd == 0.0 and session.cost is None
    session.agent.rollback(0)  # the request was still made: its price is still unknown
    assert session.cost is None


def test_the_cost_of_a_priced_session_is_what_it_spent() -> None:
    session = NotebookSession(Agent(provider="simulated"))
    session.agent.run_sync("What is 2 * 3?")
    assert session.cost == session.agent.totals.spent_usd > 0
