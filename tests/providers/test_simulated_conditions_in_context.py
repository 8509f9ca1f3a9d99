"""The offline model keeps a condition with the question that says it: a statistic or a ranking
is of some rows only when its own words say so (not when another sentence or another clause asks
for those rows), "the most orders" among some rows still counts them, and "the first / last N rows
by a column" are in that column's order (the last by date are the latest)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer

ORDERS = pd.DataFrame({
    "customer": ["ann", "bob", "cy", "ann", "bob", "dee", "cy", "ann"],
    "price": [10.0, 25.0, 12.5, 8.0, 30.0, 15.0, 20.0, 9.0],
    "quantity": [3, 1, 4, 2, 1, 5, 2, 1],
    "date": pd.to_datetime(["2024-01-05", "2024-02-01", "2024-01-20", "2024-03-02", "2024-03-15", "2024-02-11",
                            "2024-04-01", "2024-04-09"]),
})


@pytest.mark.parametrize("prompt", [
    "What is the average price in `orders`? And how many rows have quantity above 2?",
    "What is the average price in `orders`, and show me the rows with quantity above 2",
    "How many rows have quantity above 2 in `orders` and what is the average price?",
])
async def test_a_condition_asked_on_its_own_leaves_the_statistic_of_every_row(tmp_path: Path, prompt: str) -> None:
    frame = ORDERS.copy()
    codes, answer = await codes_and_answer(agent_with({"orders": frame}, tmp_path), prompt)
    # me4: orders.loc[orders["quantity"] > 2, "price"].mean(), "for the rows with quantity > 2" (12.50)
    assert not any(".loc[" in c for c in codes), codes
    assert f"price {ORDERS['price'].mean():.2f}" in answer, answer
    assert "for the rows with" not in answer
    assert frame.equals(ORDERS)


@pytest.mark.parametrize(("prompt", "code", "said"), [
    ("Which customer has the largest total quantity in `orders`? Also show the rows with price above 20.",
     'orders.groupby("customer")["quantity"].sum().sort_values(ascending=False)',
     "ann and cy tie for the largest total quantity (6) by customer."),
    ("Which customer has the most orders in `orders`? How many rows have price above 10?",
     'orders["customer"].value_counts()', "ann has the most rows (3) by customer."),
])
async def test_a_condition_asked_on_its_own_leaves_the_ranking_of_every_row(tmp_path: Path, prompt: str, code: str,
                                                                           said: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path), prompt)
    assert codes[-1] == code  # me4: orders[orders["price"] > 20].groupby(…), among those rows only
    assert said in answer and "among the rows" not in answer


@pytest.mark.parametrize("prompt", [
    "Which customer has the most orders in `orders` for price above 10?",
    "For price above 10, which customer has the most orders in `orders`?",
])
async def test_the_most_orders_among_some_rows_counts_those_rows(tmp_path: Path, prompt: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path), prompt)
    # me4: orders[orders["price"] > 10].groupby("customer")["price"].sum(): bob by his prices' total
    assert codes[-1] == 'orders[orders["price"] > 10]["customer"].value_counts()'
    counts = ORDERS[ORDERS["price"] > 10]["customer"].value_counts()
    assert list(counts[counts == counts.max()].index) == ["bob", "cy"]
    assert "bob and cy tie for the most rows (2) by customer, among the rows with price > 10" in answer


@pytest.mark.parametrize(("prompt", "code", "first"), [
    ("Show the last 2 rows of `orders` by date", 'orders.nlargest(2, "date")', "2024-04-09"),
    ("Show me the first 3 rows of `orders` by date", 'orders.nsmallest(3, "date")', "2024-01-05"),
])
async def test_the_first_and_last_rows_by_a_column_are_in_its_order(tmp_path: Path, prompt: str, code: str,
                                                                    first: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path), prompt)
    assert codes == [code]  # me4: the last 2 by date were the 2 earliest (nsmallest), the first 3 the latest
    lines = answer.split("```")[1].strip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["customer"])
    assert lines[header + 1].split()[-1] == first  # the first row printed


@pytest.mark.parametrize(("prompt", "code"), [
    ("Sort `orders` and show the top 3 by price", 'orders.sort_values("price", ascending=False).head(3)'),
    ("Sort `orders` by date and show the top 3 by price", 'orders.sort_values("price", ascending=False).head(3)'),
    ("Sort `orders` by date and show the bottom 2 by quantity", 'orders.sort_values("quantity").head(2)'),
])
async def test_a_sorts_top_rows_by_a_column_are_ranked_by_it_and_no_group(tmp_path: Path, prompt: str, code: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path), prompt)
    # me4: a second cell grouping by customer ("`orders` has no by column, so I grouped by customer"),
    # or by price the dates' total (a TypeError); "by date … the top 3 by price" sorted by date
    assert codes == [code]
    assert "grouped" not in answer


async def test_who_spent_the_most_totals_what_was_spent_after_a_price_is_named(tmp_path: Path) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path),
                                           "Sort `orders` by price. Which customer spent the most?")
    spent = (ORDERS["price"] * ORDERS["quantity"]).groupby(ORDERS["customer"]).sum().sort_values(ascending=False)
    # me4: the spent column made, then the prices totalled: "bob has the largest total price (55.00) …,
    # spent being price × quantity"
    assert '.groupby("customer")["spent"].sum()' in codes[-1]
    assert f"{spent.index[0]} has the largest total spent ({spent.iloc[0]:,.2f}) by customer" in answer


@pytest.mark.parametrize(("prompt", "code", "first"), [
    ("Give me the top 5 rows of `orders`", "orders.head(5)", "2024-01-05"),
    ("Show the last 3 rows of `orders`", "orders.tail(3)", "2024-02-11"),
])
async def test_the_top_or_last_n_rows_are_the_frames_head_or_tail(tmp_path: Path, prompt: str, code: str,
                                                                   first: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path), prompt)
    # main and me4: "`orders` has no row column, so I grouped by customer: …" / orders.head() (the first 5)
    assert codes == [code]
    assert "grouped" not in answer
    lines = answer.split("```")[1].strip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["customer"])
    assert lines[header + 1].split()[-1] == first and len(lines) - header - 1 == int(code[-2])


async def test_a_sorts_top_rows_by_a_column_the_frame_lacks_is_said(tmp_path: Path) -> None:
    frame = ORDERS.copy()
    codes, answer = await codes_and_answer(agent_with({"orders": frame}, tmp_path),
                                           "Sort `orders` by date and show the top 3 by colour")
    # before: sorted by date, the "by colour" left out without a word
    assert codes == []
    assert "I could not tell which column of `orders` \"top 3 by colour\" means." in answer
    assert frame.equals(ORDERS)


async def test_who_paid_the_highest_price_ranks_the_prices_not_what_was_spent(tmp_path: Path) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path),
                                           "Which customer paid the highest price in `orders`?")
    # me4: orders.assign(spent=orders["price"] * orders["quantity"]) …: cy "spent being price × quantity"
    assert not any("assign" in c for c in codes)
    assert codes[-1] == 'orders.groupby("customer")["price"].sum().sort_values(ascending=False)'
    assert "spent" not in answer


PEOPLE = pd.DataFrame({"name": ["al", "bea", "cal", "di", "ed"], "age": [34, 51, 22, 47, 40]})


@pytest.mark.parametrize(("frames", "prompt", "code", "first"), [
    ({"people": PEOPLE}, "Who are the 3 oldest people in `people`?", 'people.nlargest(3, "age")', "bea"),
    ({"people": PEOPLE}, "Show the 2 youngest in `people`", 'people.nsmallest(2, "age")', "cal"),
    ({"orders": ORDERS}, "Show the 3 most recent orders in `orders`", 'orders.nlargest(3, "date")', "ann"),
    ({"orders": ORDERS}, "Show the 2 oldest orders in `orders`", 'orders.nsmallest(2, "date")', "ann"),
])
async def test_the_n_oldest_or_newest_are_ranked_by_the_age_or_the_date(tmp_path: Path, frames: dict[str, pd.DataFrame],
                                                                        prompt: str, code: str, first: str) -> None:
    ns = {k: v.copy() for k, v in frames.items()}
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), prompt)
    # main and me4: people.head() (the first 5 rows, in the frame's order)
    assert codes[-1] == code
    lines = answer.split("```")[1].strip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] in (["name"], ["customer"]))
    assert lines[header + 1].split()[1] == first
    assert all(ns[k].equals(v) for k, v in frames.items())
