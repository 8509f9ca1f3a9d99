"""The offline model on a date range over datetimes that hold a time of day and a time zone, and
on a date range said with another condition: a date said is a whole day, and no condition is left out."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer

TIMED = pd.DataFrame({
    "region": ["North", "south", None, "North", "East", "west"],
    "price": [12.0, 8.0, 15.0, 20.0, 5.0, 11.0],
    "order_date": pd.to_datetime(["2023-03-05 10:00", "2024-01-10 00:00", "2024-02-01 15:30", "2024-02-15 18:00",
                                  "2024-03-20 09:00", "2025-03-01 08:00"]).tz_localize("Europe/Paris"),
})


@pytest.mark.parametrize(("prompt", "index"), [
    # main: .between("2024-01-01", "2024-02-15") left out 2024-02-15 18:00 though "both included" was said
    ("Show the orders between 2024-01-01 and 2024-02-15 in `orders`", [1, 2, 3]),
    # main: > "2024-02-01" took 2024-02-01 15:30 as after that day
    ("Show the orders after 2024-02-01 in `orders`", [3, 4, 5]),
    ("Show the orders until 2024-02-15 in `orders`", [0, 1, 2, 3]),
    ("Show the orders since 2024-02-01 in `orders`", [2, 3, 4, 5]),
    ("Show the orders before 2024-02-01 in `orders`", [0, 1]),
    # main: .dt.to_period("M") on a column with a time zone warns in the user's cell
    ("Show the orders in March 2024 in `orders`", [4]),
])
async def test_a_date_said_is_the_whole_day_of_a_timed_column(tmp_path: Path, prompt: str, index: list[int]) -> None:
    orders = TIMED.copy()
    agent = agent_with({"orders": orders}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        picked = eval(codes[-1], {"orders": TIMED.copy()})  # the generated cell, run on the real frame
    assert list(picked.index) == index
    assert f"{len(index)} {'row' if len(index) == 1 else 'rows'} of `orders`" in answer
    pd.testing.assert_frame_equal(orders, TIMED)


@pytest.mark.parametrize(("prompt", "index"), [
    # main: orders[orders["order_date"] > "2024-02-01"], the region condition left out (4 rows)
    ("Show `orders` where region is North after 2024-02-01", [3]),
    ("Show `orders` where price above 10 since 2024-02-01", [2, 3, 5]),
])
async def test_a_condition_said_with_a_date_range_applies_too(tmp_path: Path, prompt: str, index: list[int]) -> None:
    agent = agent_with({"orders": TIMED.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert list(eval(codes[-1], {"orders": TIMED.copy()}).index) == index
    assert " and order_date " in answer


async def test_a_condition_on_no_column_with_a_date_range_is_said(tmp_path: Path) -> None:
    agent = agent_with({"orders": TIMED.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show `orders` where colour is red after 2024-02-01")
    assert codes == ["orders.dtypes"]  # no rows shown as if the colour had been compared
    assert "could not tell which column" in answer


async def test_a_word_compared_with_a_date_column_is_said_not_understood(tmp_path: Path) -> None:
    agent = agent_with({"orders": TIMED.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show `orders` where order_date is march")
    # main: orders[orders["order_date"] == "march"], "no row of `orders` has order_date == "march""
    assert not any('== "march"' in code for code in codes)
    assert "order_date of `orders` holds dates" in answer


LONG = "quarterly_customer_orders_2024_cleaned"


@pytest.mark.parametrize(("prompt", "index"), [
    (f"Show `{LONG}` where region is North and price above 10", [0, 3]),
    (f"How many rows of `{LONG}` have price above 10 and price at most 18?", 3),
    (f"Show `{LONG}` where region is North after 2024-02-01", [3]),
])
async def test_a_long_frame_name_gives_cells_broken_as_a_person_would(tmp_path: Path, prompt: str,
                                                                     index: list[int] | int) -> None:
    agent = agent_with({LONG: TIMED.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, prompt)  # main: one line of 104-170 characters (ruff E501)
    got = eval(codes[-1], {LONG: TIMED.copy()})
    assert (list(got.index) if isinstance(index, list) else int(got)) == index


async def test_how_many_rows_per_group_in_a_date_range_counts_each_group(tmp_path: Path) -> None:
    agent = agent_with({"orders": TIMED.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders per region after 2024-02-01 in `orders`?")
    # before: (orders["order_date"] > "2024-02-01").sum(), one total, the "per region" left out
    counts = eval(codes[-1], {"orders": TIMED.copy()})
    assert dict(counts) == {"North": 1, "East": 1, "west": 1, "south": 0}
    assert "per region: " in answer


@pytest.mark.parametrize(("prompt", "first", "total"), [
    # before: the March rows shown, then orders.groupby("region")["price"].sum() over every row, the
    # answer reading as if of March ("North has the largest total price (32.00)")
    ("Which region has the highest price in March in `orders`?", "North", 12.0),
    ("Which region has the highest price after 2024-02-01 in `orders`?", "North", 20.0),
])
async def test_a_ranking_with_a_date_range_ranks_those_rows(tmp_path: Path, prompt: str, first: str, total: float) -> None:
    orders = TIMED.copy()
    agent = agent_with({"orders": orders}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    ranked = eval(codes[-1], {"orders": TIMED.copy()})
    assert (ranked.index[0], ranked.iloc[0]) == (first, total)
    assert f"{first} has the largest total price ({total:.2f})" in answer and "among the rows with order_date" in answer
    pd.testing.assert_frame_equal(orders, TIMED)
