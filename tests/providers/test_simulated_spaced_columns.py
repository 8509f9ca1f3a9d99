"""The offline model on a column whose name has several words ("sales region", "unit price"): a
condition on it compares that column (it was ignored, and the frame's head shown)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer

SPACED = pd.DataFrame({"sales region": ["North", "South", "North", "East"], "unit price": [5.0, 12.0, 20.0, 8.0],
                       "customer": ["ann", "bob", "cy", "dee"]})


@pytest.mark.parametrize(("prompt", "rows"), [
    ("Show `orders` where sales region is North", SPACED["sales region"] == "North"),
    ("Show `orders` where Sales Region is north", SPACED["sales region"] == "North"),
    ("Show `orders` where unit price above 10", SPACED["unit price"] > 10),
])
async def test_a_condition_on_a_column_of_several_words_selects_its_rows(tmp_path: Path, prompt: str,
                                                                         rows: pd.Series) -> None:
    agent = agent_with({"orders": SPACED.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: orders.head() / "I could not tell which column of `orders` to compare"
    picked = eval(codes[-1], {"orders": SPACED.copy()})  # the generated cell, run on the real frame
    assert list(picked.index) == list(SPACED.index[rows])
    assert f"{int(rows.sum())} rows of `orders` have" in answer


async def test_how_many_rows_on_a_column_of_several_words_counts_them(tmp_path: Path) -> None:
    agent = agent_with({"orders": SPACED.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many rows of `orders` where sales region is South?")
    assert codes[-1] == '(orders["sales region"].str.lower() == "south").sum()'
    assert "1 row of `orders` has sales region" in answer
