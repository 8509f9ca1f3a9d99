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


# A received data file with both "sales region" and "sales_region" (a decoy first): the condition
# compared the decoy whichever one the prompt named, each read as the other once joined.
TWINS = pd.DataFrame({"sales region": ["South", "North", "South", "North"],
                      "sales_region": ["North", "South", "North", "East"], "price": [5.0, 12.0, 20.0, 8.0]})


@pytest.mark.parametrize("said", ["sales_region", "Sales_Region"])
async def test_a_column_named_exactly_is_compared_not_its_spaced_twin(tmp_path: Path, said: str) -> None:
    agent = agent_with({"orders": TWINS.copy()}, tmp_path)
    codes, _answer = await codes_and_answer(agent, f"Show `orders` where {said} is North")
    # main: orders[orders["sales region"].str.lower() == "north"], rows 1 and 3
    assert '"sales region"' not in codes[-1]
    picked = eval(codes[-1], {"orders": TWINS.copy()})
    assert list(picked.index) == [0, 2]


async def test_a_spaced_column_with_an_underscored_twin_is_not_read_as_the_twin(tmp_path: Path) -> None:
    agent = agent_with({"orders": TWINS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show `orders` where sales region is North")
    # main: orders[orders["sales_region"].str.lower() == "north"], rows 0 and 2: the other column
    assert '"sales_region"' not in "\n".join(codes)
    if codes and '"sales region"' in codes[-1]:
        assert list(eval(codes[-1], {"orders": TWINS.copy()}).index) == [1, 3]
