"""The offline model on sales, revenue or order value in a frame of price and quantity and no
amount column: each row's price × quantity, totalled or averaged (not each number column's)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer
from .test_simulated_sales_questions import SALES

_VALUE = SALES["price"] * SALES["quantity"]


async def test_total_sales_per_region_totals_price_times_quantity(tmp_path: Path) -> None:
    sales = SALES.copy()
    agent = agent_with({"orders": sales}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What are the total sales per region in `orders`?")
    # main: orders.groupby("region").sum(numeric_only=True), the prices and quantities each totalled
    totals = eval(codes[-1], {"orders": SALES.copy()})  # the generated cell, run on the real frame
    expected = _VALUE.groupby(SALES["region"]).sum()
    pd.testing.assert_series_equal(totals, expected, check_names=False)
    assert "North 89.00" in answer and "price × quantity" in answer
    pd.testing.assert_frame_equal(sales, SALES)  # the user's frame gets no column


@pytest.mark.parametrize(("prompt", "expected", "said"), [
    ("What is the average order value in `orders`?", _VALUE.mean(), "33.00"),
    ("What is the total revenue in `orders`?", _VALUE.sum(), "231.00"),
])
async def test_a_statistic_of_order_value_is_of_price_times_quantity(tmp_path: Path, prompt: str, expected: float,
                                                                     said: str) -> None:
    agent = agent_with({"orders": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: orders.mean(numeric_only=True), each column's mean
    assert eval(codes[-1], {"orders": SALES.copy()}) == pytest.approx(expected)
    assert f"is {said}" in answer


async def test_an_amount_column_of_its_own_is_totalled_as_it_is(tmp_path: Path) -> None:
    frame = SALES.assign(revenue=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    agent = agent_with({"orders": frame}, tmp_path)
    codes, _ = await codes_and_answer(agent, "What are the total sales per region in `orders`?")
    assert not any('* orders["quantity"]' in code for code in codes)
