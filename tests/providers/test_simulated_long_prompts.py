"""The offline model's cost on a long prompt grows with its length, not its square: an
18,000-character prompt of questions without a superlative took seconds (each "which" scanned
to the prompt's end and back), and each word was compared with every column, once per time said."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

import pandas as pd
import pytest

from nbagent.providers.simulated import columns, frames, plots

from .test_simulated_rule_code import agent_with, codes_and_answer

_QUESTIONS = "Which one is it, and what do we do with the orders of each region? "


def _prompt(chars: int) -> str:
    return (_QUESTIONS * (chars // len(_QUESTIONS) + 1))[:chars]


def test_the_group_question_pattern_is_linear_in_the_prompt() -> None:
    text = _prompt(36_000)
    start = time.perf_counter()
    frames.intents(text)
    # main: ~5 s (the GROUP pattern's ".*" from each of ~500 "which"/"what" to the end); now ~0.1 s
    assert time.perf_counter() - start < 1.5


def test_the_question_about_a_plot_pattern_is_linear_in_the_prompt() -> None:
    unit = "how the orders come in and what we sell every day in the north and south "  # no sentence end
    text = (unit * (36_000 // len(unit) + 1))[:36_000] + " plot the price"
    start = time.perf_counter()
    assert plots.ASKS_FOR_A_PLOT.search(text)
    # before: ~1.2 s ("[^.?!]*" from each how/what to the end and back; 18k: 0.2 s, searched on every request); now ~0.03 s
    assert time.perf_counter() - start < 0.5


def test_each_distinct_word_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    wide = tuple(f"feature_{i}" for i in range(200)) + ("region", "price")
    looked: list[str] = []
    real = columns.matches

    def counted(word: str, cols: Sequence[str]) -> str | None:
        looked.append(word)
        return real(word, cols)
    monkeypatch.setattr(columns, "matches", counted)
    found = columns.named(_prompt(18_000) + " What is the price?", wide)
    assert found == ["region", "price"]  # in the order first said
    assert len(looked) == len(set(looked)) < 20  # main: ~3,400 look-ups, each of every column


async def test_a_long_prompt_still_answers_its_question(tmp_path: Path) -> None:
    sales = pd.DataFrame({"region": ["north", "south", "north"], "revenue": [10.0, 30.0, 25.0]})
    agent = agent_with({"sales": sales}, tmp_path)
    start = time.perf_counter()
    codes, answer = await codes_and_answer(agent, _prompt(18_000) + " Which region of `sales` has the most revenue?")
    assert codes[-1] == 'sales.groupby("region")["revenue"].sum().sort_values(ascending=False)'
    assert "north has the largest total revenue (35.00) by region" in answer
    assert time.perf_counter() - start < 10  # a guard: the whole turn (every request reads the prompt again)
