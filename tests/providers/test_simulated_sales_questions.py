"""The offline model on everyday questions of a small sales frame, each cell run on the live frame
and its answer checked against what a person computes with pandas: distinct values counted (not
rows), text conditions, orders ranked by their amount, dates read from text, ties said."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer

SALES = pd.DataFrame({
    "customer": ["ann", "bob", "ann", "cy", "bob", "dee", "ann"],
    "region": ["North", "South", "North", "East", "South", "North", "West"],
    "price": [12.0, 8.0, 15.0, 30.0, 12.0, 5.0, 9.0],
    "quantity": [2, 5, 1, 1, 3, 10, 4],
    "date": ["2024-01-05", "2024-02-10", "2024-03-01", "2023-12-20", "2024-02-28", "2024-01-15", "2024-03-10"],
})
"""Dates as text, as ``pd.read_csv`` reads them; four rows have price above 10, of three customers."""


async def test_how_many_customers_meet_a_condition_counts_distinct_customers(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many customers in `sales` have price above 10?")
    # main: (sales["price"] > 10).sum(), 4: the rows, ann counted twice
    assert codes[-1] == 'sales.loc[sales["price"] > 10, "customer"].nunique()'
    expected = SALES.loc[SALES["price"] > 10, "customer"].nunique()
    assert expected == 3
    assert f"{expected} distinct customer values of `sales` have a row with price > 10" in answer


async def test_how_many_rows_meet_a_condition_still_counts_rows(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many rows of `sales` have price above 10?")
    assert codes == ['(sales["price"] > 10).sum()']
    assert "4 rows of `sales` have price > 10" in answer


def _spent_per_order() -> pd.Series:
    return SALES["price"] * SALES["quantity"]


async def test_the_most_paid_orders_are_orders_ranked_by_their_amount(tmp_path: Path) -> None:
    sales = SALES.copy()
    agent = agent_with({"sales": sales}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What are the 3 most paid orders in `sales`?")
    # main: each customer's total spent (bob 76), said as "`sales.assign(…)` has no 3 column, so I grouped by customer"
    assert codes[-1] == 'sales.assign(spent=sales["price"] * sales["quantity"]).nlargest(3, "spent")'
    assert answer.startswith("(simulated model) the top 3 rows of `sales` by spent, largest first "
                             "(spent being price × quantity).")
    shown = answer.split("```")[1]
    top = _spent_per_order().nlargest(3)
    assert list(top) == [50.0, 40.0, 36.0]
    assert all(f"{v:.1f}" in shown for v in top) and "24.0" not in shown  # ann's 12 × 2 is not among them
    pd.testing.assert_frame_equal(sales, SALES)  # the user's frame gets no column


async def test_which_customer_paid_the_most_still_totals_each_customer(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, "Which customer paid the most in `sales`?")
    assert codes[-1] == ('(sales.assign(spent=sales["price"] * sales["quantity"])\n'
                         ' .groupby("customer")["spent"].sum().sort_values(ascending=False))')


@pytest.mark.parametrize(("prompt", "code", "rows"), [
    ("Show `sales` where region is North", 'sales[sales["region"].str.lower() == "north"]', SALES["region"] == "North"),
    ("Show the rows of `sales` where customer contains 'a'", 'sales[sales["customer"].str.contains("a", case=False, na=False)]',
     SALES["customer"].str.contains("a")),
    ("List `sales` whose customer starts with b", 'sales[sales["customer"].str.lower().str.startswith("b", na=False)]',
     SALES["customer"].str.startswith("b")),
    ("Show `sales` where region is not North", 'sales[sales["region"].str.lower() != "north"]', SALES["region"] != "North"),
])
async def test_a_condition_on_a_text_column_selects_its_rows(tmp_path: Path, prompt: str, code: str,
                                                              rows: pd.Series) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: sales.head(), the first 5 rows whatever the condition; a word value: its column's type looked at first
    assert codes[-1] == code and codes[:-1] in ([], ["sales.dtypes"])
    assert answer.startswith(f"(simulated model) {rows.sum()} rows of `sales` have ")
    shown = answer.split("```")[1]
    assert all(f"\n{i} " in shown for i in SALES.index[rows]) and not any(f"\n{i} " in shown for i in SALES.index[~rows])


async def test_a_text_condition_with_a_missing_value_still_selects(tmp_path: Path) -> None:
    gappy = SALES.copy()
    gappy.loc[1, "customer"] = None
    agent = agent_with({"sales": gappy}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the rows of `sales` where customer contains 'b'")
    assert codes == ['sales[sales["customer"].str.contains("b", case=False, na=False)]']
    assert answer.startswith("(simulated model) 1 row of `sales` has customer containing \"b\"")


async def test_how_many_rows_meet_a_text_condition(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders in `sales` where region is North?")
    assert codes == ["sales.dtypes", '(sales["region"].str.lower() == "north").sum()']
    assert "3 rows of `sales` have region == \"North\"" in answer


async def test_what_the_selected_rows_spent_is_computed_on_those_rows(tmp_path: Path) -> None:
    sales = SALES.copy()
    agent = agent_with({"sales": sales}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which customer spent the most for quantity above 1 in `sales`?")
    # main: sales[sales["quantity"] > 1].assign(spent=sales["price"] * sales["quantity"]): the whole
    # frame's columns, right only because assign aligns them on the index
    # (me8 wrote sales_selected = sales[…] first, a name that could be a user's; now spent is made on
    # the whole frame and the rows selected after, no name assigned)
    assert codes[-1] == ('(sales.assign(spent=sales["price"] * sales["quantity"])\n'
                         ' .loc[sales["quantity"] > 1]\n'
                         ' .groupby("customer")["spent"].sum().sort_values(ascending=False))')
    chosen = SALES[SALES["quantity"] > 1]
    best = (chosen["price"] * chosen["quantity"]).groupby(chosen["customer"]).sum().sort_values(ascending=False)
    assert f"{best.index[0]} has the largest total spent ({best.iloc[0]:,.2f}) by customer, among the rows with " \
           "quantity > 1, spent being price × quantity." in answer
    pd.testing.assert_frame_equal(sales, SALES)


async def test_the_most_recent_orders_read_a_csvs_date_text_as_dates(tmp_path: Path) -> None:
    sales = SALES.copy()
    agent = agent_with({"sales": sales}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the 3 most recent orders in `sales`")
    # main: "I found no age or date column in `sales` to tell the most recent rows by."
    assert codes[-1] == 'import pandas as pd\n\nsales.assign(date=pd.to_datetime(sales["date"])).nlargest(3, "date")'
    assert answer.startswith("(simulated model) the 3 most recent rows of `sales` by date (reading `date`, which "
                             "holds text, as dates).")
    shown = answer.split("```")[1]
    latest = pd.to_datetime(SALES["date"]).nlargest(3)
    assert [shown.index(f"\n{i} ") for i in latest.index] == sorted(shown.index(f"\n{i} ") for i in latest.index)
    assert shown.count("\n") == 3 + 3  # [result], the header, 3 rows
    pd.testing.assert_frame_equal(sales, SALES)  # parsed in the expression, the user's column still text


@pytest.mark.parametrize(("prompt", "row"), [("What is the latest order in `sales`?", 6),
                                             ("Which is the oldest order in `sales`?", 3)])
async def test_the_latest_and_the_oldest_order_are_one_row_each(tmp_path: Path, prompt: str, row: int) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: sales.head() (no question understood)
    assert codes[-1].startswith("import pandas as pd\n\nsales.assign(date=pd.to_datetime(sales[\"date\"])).n")
    assert codes[-1].endswith('(1, "date", keep="all")')
    shown = answer.split("```")[1]
    assert f"\n{row} " in shown and SALES.loc[row, "date"] in shown and shown.count("\n") == 4


TIED = pd.DataFrame({"customer": ["ann", "bob", "cy", "ann"], "price": [10.0, 20.0, 20.0, 10.0], "quantity": [1, 1, 1, 1]})
"""bob and cy tie for the dearest order; ann, bob and cy for the largest total price."""


@pytest.mark.parametrize(("prompt", "code", "said"), [
    ("Show the top 1 rows of `sales` by price", 'sales.nlargest(1, "price", keep="all")',
     "2 rows of `sales` tie for the largest price"),
    ("Show the top 1 customer by price in `sales`", 'sales.groupby("customer")["price"].sum().nlargest(1, keep="all")',
     "ann, bob and cy tie for the largest total price (20.00) by customer"),
    ("Show the most paid order in `sales`",
     'sales.assign(spent=sales["price"] * sales["quantity"]).nlargest(1, "spent", keep="all")',
     "2 rows of `sales` tie for the top by spent (spent being price × quantity)"),
])
async def test_the_top_one_shows_every_row_tied_with_it(tmp_path: Path, prompt: str, code: str, said: str) -> None:
    agent = agent_with({"sales": TIED.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: nlargest(1, …): one of the tied, the others hidden; the answer said nothing of a tie
    assert codes[-1] == code
    assert said in answer


def _gappy() -> pd.DataFrame:
    gappy = SALES.copy()
    gappy.loc[[1, 4], "price"] = float("nan")
    gappy.loc[4, "region"] = None
    return gappy


@pytest.mark.parametrize("prompt", ["Show the rows with missing values in `sales`", "Which rows have missing values in `sales`?"])
async def test_the_rows_with_missing_values_are_those_rows(tmp_path: Path, prompt: str) -> None:
    agent = agent_with({"sales": _gappy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # main: sales.head() and sales.isna().sum(): the first 5 rows and the counts per column, not the rows
    assert codes == ["sales[sales.isna().any(axis=1)]"]
    assert answer.startswith("(simulated model) 2 rows of `sales` have a missing value.")
    shown = answer.split("```")[1]
    assert "\n1 " in shown and "\n4 " in shown and "\n0 " not in shown


async def test_duplicated_rows_are_shown_every_copy_and_counted(tmp_path: Path) -> None:
    doubled = pd.concat([SALES, SALES.iloc[[2]]], ignore_index=True)
    agent = agent_with({"sales": doubled}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the duplicate rows in `sales`")
    # main: sales.head()
    assert codes == ["sales[sales.duplicated(keep=False)]"]
    assert answer.startswith("(simulated model) 2 rows of `sales` are equal to another row in every column")
    (tmp_path / "b").mkdir()
    codes, answer = await codes_and_answer(agent_with({"sales": doubled}, tmp_path / "b"),
                                           "How many duplicate rows are in `sales`?")
    assert codes == ["sales.duplicated().sum()"]  # main: sales.shape
    assert "`sales` has 1 duplicated row (each equal to an earlier row in every column)" in answer


async def test_how_many_orders_per_month_counts_each_month_of_the_dates(tmp_path: Path) -> None:
    sales = SALES.copy()
    agent = agent_with({"sales": sales}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders per month in `sales`?")
    # main: "`sales` has no column for "per" to count."
    assert codes[-1] == 'import pandas as pd\n\nsales.groupby(pd.to_datetime(sales["date"]).dt.to_period("M")).size()'
    months = pd.to_datetime(SALES["date"]).dt.to_period("M").value_counts().sort_index()
    listed = ", ".join(f"{m} {n}" for m, n in months.items())
    assert f"the rows of `sales` per month: {listed}." in answer
    pd.testing.assert_frame_equal(sales, SALES)


async def test_the_share_of_each_region_in_total_sales_divides_by_the_whole(tmp_path: Path) -> None:
    sales = SALES.copy()
    agent = agent_with({"sales": sales}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the share of each region in total sales in `sales`?")
    # main: sales["region"].sum(): the region names glued into one string
    assert codes[-1] == ('(\n    (sales["price"] * sales["quantity"]).groupby(sales["region"]).sum()\n'
                         '    / (sales["price"] * sales["quantity"]).sum()\n).sort_values(ascending=False)')
    spent = SALES["price"] * SALES["quantity"]
    shares = (spent.groupby(SALES["region"]).sum() / spent.sum()).sort_values(ascending=False)
    listed = ", ".join(f"{r} {v * 100:.1f}%" for r, v in shares.items())
    assert f"the share of what was spent (spent being price × quantity) by region: {listed}." in answer
    pd.testing.assert_frame_equal(sales, SALES)


async def test_the_share_of_orders_by_region_is_of_the_rows(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What percentage of orders comes from each region in `sales`?")
    assert codes[-1] == 'sales["region"].value_counts(normalize=True)'
    assert "the share of the rows of `sales` by region: North 42.9%, South 28.6%" in answer


async def test_a_total_per_group_naming_no_number_column_totals_the_numbers(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the total sales per region in `sales`?")
    # main: sales["region"].sum(): "NorthSouthNorthEast…", the region names glued into one string
    assert codes == ['sales.groupby("region").sum(numeric_only=True)']
    shown = answer.split("```")[1]
    totals = SALES.groupby("region").sum(numeric_only=True)
    assert "NorthSouth" not in shown and f"{totals.loc['North', 'price']:.1f}" in shown


async def test_the_second_highest_price_and_the_second_dearest_order(tmp_path: Path) -> None:
    agent = agent_with({"sales": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the second highest price in `sales`?")
    # main: "`sales` has no second column, so I grouped by customer" and the customers' total prices
    assert codes[-1] == 'sales["price"].nlargest(2).iloc[-1]'
    assert f"the second largest price of `sales` is {SALES['price'].nlargest(2).iloc[-1]:,.2f}" in answer
    (tmp_path / "b").mkdir()
    codes, answer = await codes_and_answer(agent_with({"sales": SALES.copy()}, tmp_path / "b"),
                                           "Show the second most expensive order in `sales`")
    assert codes[-1] == 'sales.nlargest(2, "price").iloc[[-1]]'  # main: sales.head()
    shown = answer.split("```")[1]
    assert "\n2 " in shown and shown.count("\n") == 4  # row 2 (price 15) alone
