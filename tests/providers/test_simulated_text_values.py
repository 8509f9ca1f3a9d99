"""The offline model on a condition that names a value in words: the rows the column really
holds are found whatever the case the user types ("region is north" finds "North"), and a word
compared with a number column ("price is high") gets an answer saying what was not understood."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer
from .test_simulated_sales_questions import SALES


@pytest.mark.parametrize(("prompt", "rows"), [
    ("Show `sales` where region is north", SALES["region"] == "North"),
    ("Show `sales` where region is NORTH", SALES["region"] == "North"),
    ("Show `sales` where region is not north", SALES["region"] != "North"),
    ("List `sales` whose customer starts with B", SALES["customer"].str.startswith("b")),
    ("Show the rows of `sales` where customer contains 'AN'", SALES["customer"].str.contains("an")),
])
async def test_a_text_value_is_matched_in_any_case(tmp_path: Path, prompt: str, rows: pd.Series) -> None:
    sales = SALES.copy()
    agent = agent_with({"sales": sales}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: sales["region"] == "north", no row of "North" data
    picked = eval(codes[-1], {"sales": SALES.copy()})  # the generated cell, run on the real frame
    assert list(picked.index) == list(SALES.index[rows])
    assert answer.startswith(f"(simulated model) {int(rows.sum())} rows of `sales` have ")
    pd.testing.assert_frame_equal(sales, SALES)


async def test_how_many_rows_with_a_lowercase_value_counts_them(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders in `sales` where region is south?")
    assert codes == ["sales.dtypes", '(sales["region"].str.lower() == "south").sum()']
    assert "2 rows of `sales` have region == \"south\"" in answer


@pytest.mark.parametrize("prompt", ["Show `sales` where price is high", "How many rows of `sales` where price is cheap?",
                                    "Show the orders in `sales` where price has increased"])
async def test_a_word_compared_with_a_number_column_is_said_not_understood(tmp_path: Path, prompt: str) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: sales[sales["price"] == "high"] found no row without a word why; "has increased" failed the
    # cell (.str.contains on numbers: "Can only use .str accessor with string values")
    assert not any('== "' in code for code in codes)
    assert "price of `sales` holds numbers" in answer and "which number" in answer
