"""The offline model on a data scientist's everyday questions of an orders frame with an
``order_id`` column, a price and a quantity (no amount column): each cell run on the live frame
and its answer checked against what a person computes with pandas."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_dates_as_written import ORDERS as DATED
from .test_simulated_rule_code import agent_with, codes_and_answer

ORDERS = DATED.assign(order_id=range(101, 101 + len(DATED)))[["order_id", *DATED.columns]]
"""The dated orders with an identifier column first, as exports have it."""
SOLD = ORDERS["price"] * ORDERS["quantity"]


async def test_the_top_customers_by_revenue_rank_price_times_quantity_not_the_order_ids(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What are the top 3 customers by revenue in `orders`?")
    # main: orders.groupby("customer")["order_id"].sum().nlargest(3): the order numbers totalled
    assert "order_id" not in codes[-1]
    top = SOLD.groupby(ORDERS["customer"]).sum().nlargest(3)
    listed = ", ".join(f"{c} ({v:.2f})" for c, v in top.items())
    assert f"the top 3 customer values by total sales: {listed}, sales being price × quantity" in answer


async def test_the_average_order_value_is_the_mean_of_price_times_quantity(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the average order value in `orders`?")
    # main: orders["order_id"].mean() ("order" read as order_id), then order_date's once ids were left out
    assert codes[-1] == '(orders["price"] * orders["quantity"]).mean()'
    assert f"is {SOLD.mean():.2f}" in answer


async def test_which_region_sells_most_totals_what_each_order_sold_for(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "Which region sells most in `orders`?")
    # main: the regions' total of order_id (the first numeric column)
    by_region = SOLD.groupby(ORDERS["region"]).sum()
    assert f"{by_region.idxmax()} has the largest total sales ({by_region.max():.2f}) by region" in answer


async def test_which_month_had_the_most_sales_totals_each_months_sales(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which month had the most sales in `orders`?")
    by_month = SOLD.groupby(ORDERS["order_date"].dt.to_period("M")).sum()
    assert f"{by_month.idxmax()} has the largest total sales ({by_month.max():.2f}) by month" in answer
    assert codes[-1].count("assign") == 1  # the month is of `orders`, not of a second assign


async def test_how_many_orders_per_region_counts_each_regions_rows(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders per region in `orders`?")
    # main: "`orders` has no column for "per" to count." (the frame's name taken out of "how many orders")
    assert codes == ['orders["region"].value_counts()']
    counts = ORDERS["region"].value_counts()
    assert "the rows of `orders` per region: " + ", ".join(f"{r} {n}" for r, n in counts.items()) in answer


async def test_a_named_id_column_is_still_what_is_asked(tmp_path: Path) -> None:
    ns = {"orders": ORDERS.copy()}
    codes, _ = await codes_and_answer(agent_with(ns, tmp_path), "What is the max order_id in `orders`?")
    assert codes[-1] == 'orders["order_id"].max()'
    pd.testing.assert_frame_equal(ns["orders"], ORDERS)


async def test_the_total_revenue_per_month_is_each_months_total(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    by_month = SOLD.groupby(ORDERS["order_date"].dt.to_period("M")).sum()
    listed = ", ".join(f"{m} {v:.2f}" for m, v in by_month.items())
    for prompt in ("What is the total revenue per month in `orders`?", "What are the monthly totals of sales in `orders`?"):
        codes, answer = await codes_and_answer(agent, prompt)
        # main: the grand total, 271.00 ("per month" dropped), and orders.head() for "monthly totals"
        assert f"the total of sales (price × quantity) per month in `orders`: {listed}" in answer, prompt


async def test_a_column_statistic_per_quarter_of_a_year_groups_those_rows_by_quarter(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "What is the total quantity per quarter in `orders` in 2024?")
    in_2024 = ORDERS[ORDERS["order_date"].dt.year == 2024]
    by_quarter = in_2024.groupby(in_2024["order_date"].dt.to_period("Q"))["quantity"].sum()
    listed = ", ".join(f"{q} {v}" for q, v in by_quarter.items())
    assert f"the total quantity per quarter in `orders` for the rows with order_date in 2024: {listed}" in answer


async def test_the_n_largest_orders_by_a_column_are_those_rows(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the 5 largest orders by quantity in `orders`")
    # main: orders.head(), then each customer's total quantity
    assert codes == ['orders.nlargest(5, "quantity")']
    shown = answer.split("```")[1]
    assert all(str(i) in shown for i in ORDERS.nlargest(5, "quantity")["order_id"])
    assert "the 5 rows of `orders` with the largest quantity" in answer


CUSTOMERS = pd.DataFrame({"customer": ["ann", "bob", "cy", "dee"], "segment": ["retail", "corporate", "retail", "home"],
                          "city": ["Oslo", "Rome", None, "Paris"]})


@pytest.mark.parametrize("prompt", ["Show the rows of `customers` with missing values",
                                    "Which customers have missing values in `customers`?"])
async def test_the_rows_of_a_named_frame_with_missing_values_are_those_rows(tmp_path: Path, prompt: str) -> None:
    agent = agent_with({"customers": CUSTOMERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: customers.head() and customers.isna().sum(), the counts, not cy's row
    assert codes == ["customers[customers.isna().any(axis=1)]"]
    assert "1 row of `customers` has a missing value" in answer


async def test_which_columns_have_missing_values_still_counts_per_column(tmp_path: Path) -> None:
    agent = agent_with({"customers": CUSTOMERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which columns have missing values in `customers`?")
    assert codes[-1] == "customers.isna().sum()" and "(city: 1)" in answer


async def test_a_number_between_two_numbers_selects_both_ends_included(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the orders with price between 10 and 20 in `orders`")
    # main: orders.head(), the first 5 rows whatever the price
    assert codes == ['orders[(orders["price"] >= 10) & (orders["price"] <= 20)]']
    n = int(ORDERS["price"].between(10, 20).sum())
    assert f"{n} rows of `orders` have price >= 10 and price <= 20" in answer
    _, answer = await codes_and_answer(agent, "What is the average price in `orders` for quantity between 2 and 5?")
    expected = ORDERS.loc[ORDERS["quantity"].between(2, 5), "price"].mean()
    assert f"for the rows with quantity >= 2 and quantity <= 5 is {expected:.2f}" in answer


async def test_duplicate_customers_are_repeated_customer_values_not_whole_rows(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many duplicate customers are in `orders`?")
    # main: orders.duplicated().sum(), "0 duplicated rows": no whole row repeats, though ann orders 3 times
    assert codes == ['orders["customer"].duplicated().sum()']
    n = int(ORDERS["customer"].duplicated().sum())
    assert n == 4 and f"{n} rows of `orders` repeat an earlier row's customer" in answer
    codes, _ = await codes_and_answer(agent, "How many duplicate rows are in `orders`?")
    assert codes == ["orders.duplicated().sum()"]


@pytest.mark.parametrize("prompt", ["Join `orders` with `customers` on customer", "Merge `orders` and `customers`"])
async def test_two_frames_joined_are_merged_on_their_shared_column(tmp_path: Path, prompt: str) -> None:
    ns = {"orders": ORDERS.copy(), "customers": CUSTOMERS.copy()}
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), prompt)
    # main: orders.head() and customers.head(), nothing joined
    assert codes == ['orders.merge(customers, on="customer", how="left")']
    joined = ORDERS.merge(CUSTOMERS, on="customer", how="left")
    assert f"`orders` joined with `customers` on customer has {len(joined)} rows" in answer
    assert "segment" in answer.split("```")[1]
    assert {k for k in ns if not k.startswith("_")} == {"orders", "customers"}  # shown, nothing assigned


async def test_a_join_on_a_column_one_frame_lacks_is_said(tmp_path: Path) -> None:
    ns = {"orders": ORDERS.copy(), "customers": CUSTOMERS.copy()}
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), "Join `orders` with `customers` on city")
    assert codes == [] and "do not both have a column \"city\" (both have: customer)" in answer


async def test_comparing_a_statistic_of_two_values_gives_each_values_statistic(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Compare the average price of North and South in `orders`")
    # main: orders["price"].mean(), 13.88 of every region, as if it compared anything
    assert codes[-2:] == ['orders.select_dtypes(exclude="number").isin(["North", "South"]).sum()',
                          'orders[orders["region"].isin(["North", "South"])].groupby("region")["price"].mean()']
    means = ORDERS[ORDERS["region"].isin(["North", "South"])].groupby("region")["price"].mean()
    listed = ", ".join(f"{r} {v:.2f}" for r, v in means.items())
    assert f"the mean price per region in `orders` for the rows with region North or South: {listed}" in answer


async def test_comparing_values_no_column_holds_is_said_not_averaged_over_all(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Compare the average price of Mars and Venus in `orders`")
    assert not any("mean()" in c for c in codes)
    assert "No text column of `orders` holds Mars or Venus as written" in answer


async def test_the_total_per_group_said_before_largest_first_groups_by_it(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "What is the total sales per region in `orders`, largest first?")
    # main: "`orders` has no total column, so I grouped by customer" (bob 76.00)
    by_region = SOLD.groupby(ORDERS["region"]).sum()
    assert answer.startswith(f"(simulated model) {by_region.idxmax()} has the largest total sales "
                             f"({by_region.max():.2f}) by region")


async def test_the_most_common_value_of_a_column_counts_its_rows(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the most common region in `orders`?")
    # main: orders.head()
    assert codes == ['orders["region"].value_counts()']
    counts = ORDERS["region"].value_counts()
    assert f"{counts.index[0]} has the most rows ({counts.iloc[0]}) by region" in answer


async def test_orders_from_a_named_region_are_that_regions_rows(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show orders from the North region in `orders`")
    # main: orders.head()
    assert codes[-1] == 'orders[orders["region"].str.lower() == "north"]'
    assert f"{int((ORDERS['region'] == 'North').sum())} rows of `orders` have region == \"North\"" in answer


async def test_a_column_called_number_alone_is_still_a_measure(tmp_path: Path) -> None:
    # me9: "number" read as an identifier ("order_number"), so no column was left to total
    scores = pd.DataFrame({"team": ["a", "b", "a"], "number": [3, 4, 5]})
    agent = agent_with({"scores": scores.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "Which team has the highest total in `scores`?")
    assert "a has the largest total number (8) by team" in answer


@pytest.mark.parametrize("col", ["sales region", 're{g}ion"'])
async def test_comparing_values_of_a_column_named_with_a_space_gives_each_values_statistic(tmp_path: Path, col: str) -> None:
    # me9: "per sales region" read as "per sales", so one mean of North and South together (2.67)
    frame = pd.DataFrame({col: ["North", "South", "North", "East"], "price": [1.0, 4.0, 3.0, 9.0]})
    agent = agent_with({"t": frame.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Compare the average price of North and South in `t`")
    of = json.dumps(col)
    assert codes[-1] == f't[t[{of}].isin(["North", "South"])].groupby({of})["price"].mean()'
    # each value's mean, not one of both (2.67): said, or shown where the Series is not read back
    assert "North 2.00, South 4.00" in answer or "North    2.0\nSouth    4.0" in answer


@pytest.mark.parametrize("prompt", ["Which customer_id spent the most in `o`?",
                                    "Which customer_id has the highest revenue in `o`?"])
async def test_which_identifier_spent_most_groups_by_that_identifier(tmp_path: Path, prompt: str) -> None:
    # before: o["customer_id"].max(), "the maximum customer_id of `o` is 9" (the highest id, not a spender)
    o = pd.DataFrame({"customer_id": [7, 8, 7, 9], "price": [1.0, 2.0, 3.0, 4.0], "quantity": [1, 1, 2, 2]})
    agent = agent_with({"o": o.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert '.groupby("customer_id")' in codes[-1], codes
    assert "9 has the largest total" in answer and "(8.00) by customer_id" in answer


async def test_the_highest_identifier_asked_for_is_still_its_maximum(tmp_path: Path) -> None:
    agent = agent_with({"q": pd.DataFrame({"store_id": [1, 2, 1], "revenue": [5.0, 9.0, 6.0]})}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the highest store_id in `q`?")
    assert codes[-1] == 'q["store_id"].max()' and "the maximum store_id of `q` is 2" in answer


async def test_duplicate_ids_said_in_two_words_are_that_columns_repeats(tmp_path: Path) -> None:
    # before: "duplicate order ids" counted whole duplicated rows (0) though order 2 appears twice
    orders = pd.DataFrame({"order_id": [1, 2, 2, 3], "customer": ["a", "b", "a", "c"], "price": [1.0, 2.0, 2.5, 3.0]})
    agent = agent_with({"orders": orders.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many duplicate order ids are in `orders`?")
    assert codes[-1] == 'orders["order_id"].duplicated().sum()'
    assert "1 row of `orders` repeats an earlier row's order_id" in answer


async def test_which_cols_have_missing_values_counts_per_column(tmp_path: Path) -> None:
    customers = pd.DataFrame({"customer": ["a", "b"], "city": [None, "x"]})
    agent = agent_with({"customers": customers.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, "Which cols have missing values in `customers`?")
    assert "isna().any(axis=1)" not in codes[-1] and "isna().sum()" in codes[-1], codes
