"""A model without prices is said once, as nbagent's warning: never at a line of nbagent's own source.

A ``%%agent --model claude-nope-9`` cell showed, in red, ``/…/nbagent/engine/loop/completion.py:59:
UserWarning: nbagent has no prices …`` followed by that line's code (``cost = cost_of(…)``): it read
like a crash of nbagent (newcomer pass 26; Python printed the place ``stacklevel=2`` named, inside
the agent loop).
"""

from __future__ import annotations

import linecache
import os.path
import warnings
from typing import Any

import pytest

import nbagent
from nbagent.engine.api_facts import cost
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import make_engine, run

PACKAGE = os.path.dirname(os.path.realpath(nbagent.__file__))


def _in_nbagents_source(filename: str) -> bool:
    return os.path.isabs(filename) and os.path.realpath(filename).startswith(PACKAGE + os.sep)


async def test_an_unpriced_models_warning_names_no_line_of_nbagents_source(tmp_path: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cost, "_warned", set())
    engine = make_engine(SimulatedAPI([text_reply("4")]), tmp_path, model="claude-nope-9")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await run(engine, "What is 2 + 2?")
    said = [w for w in caught if "no prices for model 'claude-nope-9'" in str(w.message)]
    assert len(said) == 1 and issubclass(said[0].category, UserWarning)  # `pytest.warns(UserWarning)` still catches it
    assert not _in_nbagents_source(said[0].filename), said[0].filename
    assert linecache.getline(said[0].filename, said[0].lineno) == ""  # no code line printed under it
    text = warnings.formatwarning(said[0].message, said[0].category, said[0].filename, said[0].lineno)
    assert PACKAGE not in text and "cost_of(" not in text
    assert "docs/models.md" in text  # the advice is kept
    assert said[0].category.__name__ == "UnpricedModelWarning"  # a class to filter on: cost.UnpricedModelWarning


def test_an_unpriced_models_advice_is_one_a_notebook_user_can_act_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The advice said "prices={...} in the Agent's settings", which a ``%%agent`` user cannot set:
    now it says where prices can be given: Python's Agent, and a notebook's ``%config AgentMagics.prices`` (fx5)."""
    monkeypatch.setattr(cost, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cost.cost_of(cost.Usage(input_tokens=10, output_tokens=5), "claude-nope-9")
    said = str(caught[0].message)
    assert "in the Agent's settings" not in said
    assert "Agent(prices={...})" in said and "%config AgentMagics.prices = {...}" in said, said
