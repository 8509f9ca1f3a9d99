"""The offline model on rows in a date range ("between 2024-01-01 and 2024-02-15", "after
2024-02-01", "in March"): those rows selected or counted, not the frame's head."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_frame_counts import ORDERS
from .test_simulated_rule_code import agent_with, codes_and_answer

_DATES = ORDERS["order_date"]


@pytest.mark.parametrize(("prompt", "rows"), [
    ("Show the orders between 2024-01-01 and 2024-02-15 in `orders`", _DATES.between("2024-01-01", "2024-02-15")),
    ("Show the orders in March in `orders`", _DATES.dt.month == 3),
    ("List the orders in February 2024 in `orders`", _DATES.dt.to_period("M") == "2024-02"),
    ("Show the orders after 2024-02-01 in `orders`", _DATES > "2024-02-01"),
    ("Show the orders before 2024-01-20 in `orders`", _DATES < "2024-01-20"),
])
async def test_the_rows_in_a_date_range_are_selected(tmp_path: Path, prompt: str, rows: pd.Series) -> None:
    orders = ORDERS.copy()
    agent = agent_with({"orders": orders}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: orders.head(), the first 5 rows whatever the dates
    picked = eval(codes[-1], {"orders": ORDERS.copy()})  # the generated cell, run on the real frame
    assert list(picked.index) == list(ORDERS.index[rows])
    n = int(rows.sum())
    assert f"{n} {'row' if n == 1 else 'rows'} of `orders`" in answer
    pd.testing.assert_frame_equal(orders, ORDERS)


async def test_how_many_rows_after_a_date_counts_them(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders after 2024-02-01 in `orders`?")
    # main: no cell, "`orders` has no column for "after" to count"
    assert codes[-1] == '(orders["order_date"].dt.normalize() > "2024-02-01").sum()'
    assert f"{int((_DATES > '2024-02-01').sum())} rows of `orders` have order_date after 2024-02-01" in answer


async def test_a_frame_without_a_datetime_column_is_said(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.drop(columns="order_date")}, tmp_path)
    _, answer = await codes_and_answer(agent, "Show the orders after 2024-02-01 in `orders`")
    assert "has no column of dates" in answer
