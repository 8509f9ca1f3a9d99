"""The offline model on dates as people write them ("after Feb 1, 2024", "before 1 March 2024",
"in Q1 2024", "in 2023") and on a statistic of a date range ("the total sales per region in
March"): each cell run on a live frame and its answer checked against what pandas computes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer

ORDERS = pd.DataFrame({
    "customer": ["ann", "bob", "ann", "cy", "bob", "dee", "ann", "cy"],
    "region": ["North", "South", "North", "East", "South", "North", "West", "East"],
    "price": [12.0, 8.0, 15.0, 30.0, 12.0, 5.0, 9.0, 20.0],
    "quantity": [2, 5, 1, 1, 3, 10, 4, 2],
    "order_date": pd.to_datetime(["2024-01-05", "2024-02-10", "2024-03-01", "2023-12-20", "2024-02-28",
                                  "2024-01-15", "2024-03-10", "2024-03-20"]),
})
"""Orders of price and quantity (no amount column), one of them in 2023, three in March."""
WHEN = ORDERS["order_date"]


async def test_the_total_sales_per_region_in_march_totals_march_only(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What are the total sales per region in March in `orders`?")
    # main: every row's price × quantity totalled per region, "in March" dropped without a word (North 89.00)
    march = (ORDERS["price"] * ORDERS["quantity"])[WHEN.dt.month == 3].groupby(ORDERS["region"]).sum()
    assert dict(march) == {"East": 40.0, "North": 15.0, "West": 36.0}
    assert "order_date in March (any year): East 40.00, North 15.00, West 36.00" in answer
    assert ".loc[orders[\"order_date\"].dt.month == 3]" in codes[-1]


async def test_a_statistic_of_a_column_in_a_year_is_of_that_years_rows(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "What is the average price in `orders` in 2024?")
    expected = ORDERS.loc[WHEN.dt.year == 2024, "price"].mean()
    assert expected != ORDERS["price"].mean()
    assert f"the mean price of `orders` for the rows with order_date in 2024 is {expected:.2f}" in answer


@pytest.mark.parametrize(("prompt", "rows"), [
    ("Show `orders` after Feb 1, 2024", WHEN > "2024-02-01"),
    ("Show `orders` after February 1st 2024", WHEN > "2024-02-01"),
    ("Show `orders` before 1 March 2024", WHEN < "2024-03-01"),
    ("Show `orders` between Jan 5, 2024 and 28 Feb 2024", WHEN.between("2024-01-05", "2024-02-28")),
    ("Show `orders` in Q1 2024", (WHEN.dt.year == 2024) & (WHEN.dt.quarter == 1)),
    ("Show `orders` in the first quarter of 2024", (WHEN.dt.year == 2024) & (WHEN.dt.quarter == 1)),
    ("Show `orders` in 2023", WHEN.dt.year == 2023),
])
async def test_a_date_as_people_write_it_selects_its_rows(tmp_path: Path, prompt: str, rows: pd.Series) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: orders.head(), the first 5 rows whatever the date
    assert codes[0] == "orders.dtypes" and codes[-1].startswith("orders[")
    n = int(rows.sum())
    assert 0 < n < len(ORDERS)
    assert f"{n} {'row' if n == 1 else 'rows'} of `orders` {'has' if n == 1 else 'have'} order_date" in answer


async def test_how_many_orders_in_a_quarter_counts_that_quarter(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders in `orders` in Q1 2024?")
    # main: "I could not tell what to count"
    n = int(((WHEN.dt.year == 2024) & (WHEN.dt.quarter == 1)).sum())
    assert f"{n} rows of `orders` have order_date in Q1 2024" in answer


async def test_a_number_after_in_that_is_no_year_is_no_date(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many rows of `orders` have price above 10?")
    assert codes == ['(orders["price"] > 10).sum()']


async def test_how_a_total_changed_from_one_month_to_another_gives_each_months_total(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "How did total sales change from January to February 2024 in `orders`?")
    # main: the grand total of every month, 271.00, as if it answered how the total changed
    sold = (ORDERS["price"] * ORDERS["quantity"])
    two = (WHEN.dt.year == 2024) & WHEN.dt.month.isin([1, 2])
    per_month = sold[two].groupby(WHEN[two].dt.to_period("M")).sum()
    listed = ", ".join(f"{m} {v:.2f}" for m, v in per_month.items())
    assert f"per month in `orders` for the rows with order_date in January or February 2024: {listed}" in answer


@pytest.mark.parametrize(("prompt", "code", "day"), [
    ("What is the earliest order date in `orders`?", 'orders.nsmallest(1, "order_date", keep="all")', "2023-12-20"),
    ("Show the 2 earliest orders in `orders`", 'orders.nsmallest(2, "order_date")', "2024-01-05"),
    ("Show the latest order in `orders`", 'orders.nlargest(1, "order_date", keep="all")', "2024-03-20"),
])
async def test_the_earliest_rows_are_the_smallest_dates(tmp_path: Path, prompt: str, code: str, day: str) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: "earliest" was nlargest, the latest order (2024-03-20) shown as the earliest
    assert codes[-1] == code and day in answer.split("```")[1]


async def test_a_total_from_one_month_to_a_later_one_includes_the_months_between(tmp_path: Path) -> None:
    # me9: .dt.month.isin([1, 3]): February's orders left out of "from January to March"
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the total sales in `orders` from January to March 2024?")
    sold = (ORDERS["price"] * ORDERS["quantity"])[(WHEN.dt.year == 2024) & WHEN.dt.month.between(1, 3)].sum()
    assert "isin([1, 2, 3])" in codes[-1]
    assert f"order_date in January, February or March 2024 is {sold:,.2f}" in answer


@pytest.mark.parametrize("prompt", ["Show `orders` after 01/02/2024", "How many orders in `orders` before 2/1/24?"])
async def test_a_date_written_with_slashes_is_said_not_read_not_divided(tmp_path: Path, prompt: str) -> None:
    # before: the cell 1/2/2024 ran and the answer said "01/02/2024 = 0.00024703557312252963"
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert not any("/" in code for code in codes), codes
    assert "as a date: with slashes it may be month first or day first" in answer


@pytest.mark.parametrize("prompt", ["What is the average tenure in years in `staff`?",
                                    "What is the average tenure in `staff` over the last 3 months?"])
async def test_a_unit_or_span_of_time_is_no_group_per_period(tmp_path: Path, prompt: str) -> None:
    # me9: "years" / "months" alone grouped by hire_date's year (month): "2020 1.50, 2021 3.75", no average of all
    staff = pd.DataFrame({"name": ["a", "b", "c"], "tenure": [1.5, 3.0, 4.5],
                          "hire_date": pd.to_datetime(["2020-01-01", "2021-05-01", "2021-07-01"])})
    agent = agent_with({"staff": staff.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert "groupby" not in codes[-1] and "the mean tenure of `staff` is 3.00" in answer, codes


@pytest.mark.parametrize("prompt", ["What is the total sales in `orders` in Q1?",
                                    "What is the total sales in `orders` in the first quarter?"])
async def test_a_quarter_without_a_year_is_that_quarter_of_every_year(tmp_path: Path, prompt: str) -> None:
    # me9: "in Q1" dropped without a word: every row's total (271.00) said as the total sales
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    sold = (ORDERS["price"] * ORDERS["quantity"])[WHEN.dt.quarter == 1].sum()
    assert ".dt.quarter == 1" in codes[-1] and f"order_date in Q1 (any year) is {sold:,.2f}" in answer, (codes, answer)


@pytest.mark.parametrize("prompt, said", [("What is the total sales in `orders` last month?", "last month"),
                                          ("Which region sold most in `orders` in week 5?", "in week 5")])
async def test_a_time_relative_to_today_is_said_not_applied(tmp_path: Path, prompt: str, said: str) -> None:
    # before: every row's total (271.00) given as if it were last month's, without a word
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, prompt)
    assert f'I did not narrow the rows to "{said}"' in answer


async def test_a_range_said_as_a_date_gets_no_relative_time_note(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "What is the total sales in `orders` in March 2024?")
    assert "did not narrow" not in answer and "in March 2024 is 91.00" in answer


async def test_a_quarter_of_a_year_said_with_of_keeps_the_year(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders in `orders` in Q1 of 2024?")
    assert "(orders[\"order_date\"].dt.year == 2024) & (orders[\"order_date\"].dt.quarter == 1)" in codes[-1], codes
    assert "order_date in Q1 2024" in answer
