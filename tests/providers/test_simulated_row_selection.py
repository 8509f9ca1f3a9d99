"""The offline model on questions about some rows of a live DataFrame: the rows meeting a
condition are selected (not the frame's head shown), a sort sorts, a fill fills, and the numbers
and the group it says match the data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nbagent.providers.simulated import readers

from .test_simulated_frame_counts import ORDERS
from .test_simulated_rule_code import agent_with, codes_and_answer


async def test_show_the_rows_with_a_condition_selects_them(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the orders with price above 20 in `orders`")
    assert codes == ['orders[orders["price"] > 20]']  # main: orders.head(), every price
    n = int((ORDERS["price"] > 20).sum())
    assert answer.startswith(f"(simulated model) {n} rows of `orders` have price > 20.")
    shown = answer.split("```")[1]  # the rows themselves, quoted after the sentence
    assert "30.0" in shown and "9.5" not in shown


async def test_which_rows_at_least_is_a_condition_not_a_smallest_group(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which rows of `orders` have quantity at least 4?")
    # "at least" is no superlative: no ranking of the customers by their smallest total
    assert codes == ['orders[orders["quantity"] >= 4]']
    assert answer.startswith(f"(simulated model) {int((ORDERS['quantity'] >= 4).sum())} rows of `orders` have quantity >= 4.")


async def test_no_row_meeting_the_condition_is_said(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "List the orders with quantity over 100 in `orders`")
    assert answer.startswith("(simulated model) no row of `orders` has quantity > 100.")


@pytest.mark.parametrize(("prompt", "code"), [
    ("Sort `orders` by price", 'orders.sort_values("price")'),
    ("Sort `orders` by quantity, largest first", 'orders.sort_values("quantity", ascending=False)'),
    ("Show `orders` sorted by the price in descending order", 'orders.sort_values("price", ascending=False)'),
])
async def test_a_sort_sorts_and_leaves_the_frame_as_it_was(tmp_path: Path, prompt: str, code: str) -> None:
    orders = ORDERS.copy()
    agent = agent_with({"orders": orders}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert codes == [code]  # main: orders.head()
    assert f"({len(ORDERS)} rows; `orders` itself is unchanged)" in answer
    pd.testing.assert_frame_equal(orders, ORDERS)


async def test_fill_missing_with_the_median_fills_the_named_column(tmp_path: Path) -> None:
    ns = {"orders": ORDERS.copy()}
    agent = agent_with(ns, tmp_path)
    codes, answer = await codes_and_answer(agent, "Fill the missing prices in `orders` with the median")
    # main: counted the missing values and computed the median, and filled nothing
    assert codes == ["orders.isna().sum()", "orders.dtypes",
                     'orders["price"] = orders["price"].fillna(orders["price"].median())\norders["price"].isna().sum()']
    assert ns["orders"]["price"].isna().sum() == 0
    assert ns["orders"]["price"].tolist() == ORDERS["price"].fillna(ORDERS["price"].median()).tolist()
    assert "filled the missing price values of `orders` with its median; none is missing now." in answer


async def test_fill_missing_values_with_the_mean_fills_every_numeric_column(tmp_path: Path) -> None:
    frame = ORDERS.assign(customer=ORDERS["customer"].where(ORDERS.index != 0))  # a text value missing too
    ns = {"orders": frame}
    agent = agent_with(ns, tmp_path)
    codes, answer = await codes_and_answer(agent, "Fill missing values in `orders` with the mean")
    assert codes[-1] == "orders = orders.fillna(orders.mean(numeric_only=True))\norders.isna().sum()"
    assert ns["orders"]["price"].isna().sum() == 0
    assert "still missing (not numbers): customer: 1" in answer


async def test_a_group_word_the_frame_lacks_is_said_in_its_singular(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "Top 2 regions by quantity in `orders`")
    top = ORDERS.groupby("customer")["quantity"].sum().nlargest(2)
    listed = ", ".join(f"{k} ({v})" for k, v in top.items())  # main: "(11.00)" for a total of whole numbers
    assert answer.startswith("(simulated model) `orders` has no region column, so I grouped by customer: "
                             f"the top 2 customer values by total quantity: {listed}.")


async def test_a_word_that_names_no_group_is_not_said_to_be_missing(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "Which one sells most in `orders`?")
    assert "has no" not in answer


@pytest.mark.parametrize(("frame", "rows"), [
    (ORDERS, len(ORDERS)),
    (ORDERS.set_index("customer"), len(ORDERS)),  # the index's name on a line of its own
    (ORDERS.iloc[:0], 0),
    (pd.DataFrame({f"a_rather_long_column_name_{i}": range(3) for i in range(12)}), 3),  # printed in blocks
    (pd.DataFrame({"x": range(500)}), 500),  # cut by pandas: its footer counts
])
def test_the_rows_a_frames_repr_holds_are_counted(frame: pd.DataFrame, rows: int) -> None:
    with pd.option_context("display.max_columns", None, "display.width", 80):
        assert readers.frame_rows(f"[result]\n{frame!r}") == rows


def test_a_series_is_not_counted_as_a_frame() -> None:
    assert readers.frame_rows(f"[result]\n{ORDERS['price']!r}") is None


CSV = "date,region,revenue\n2024-01-05,north,100\n2024-01-20,south,80\n2024-02-03,north,130\n2024-03-01,south,90\n"


async def test_which_month_of_a_loaded_csv_reads_its_date_text_as_dates(tmp_path: Path) -> None:
    (tmp_path / "sales.csv").write_text(CSV)
    ns: dict[str, object] = {}
    await codes_and_answer(agent_with(ns, tmp_path), "Load sales.csv")
    assert not pd.api.types.is_datetime64_any_dtype(ns["sales"]["date"])  # type: ignore[index]  # read_csv leaves text
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), "Which month had the highest revenue in `sales`?")
    # main: "I found no date column in `sales` to group by month"
    assert codes[-1] == ('import pandas as pd\n\nsales.groupby(pd.to_datetime(sales["date"]).dt.to_period("M"))'
                         '["revenue"].sum().sort_values(ascending=False)')
    assert answer.startswith("(simulated model) reading `date` (text) as dates, "
                             "2024-01 has the largest total revenue (180) by month.")
    assert not pd.api.types.is_datetime64_any_dtype(ns["sales"]["date"])  # type: ignore[index]  # the frame is as it was


async def test_a_group_fallback_is_not_a_csvs_date_text(tmp_path: Path) -> None:
    (tmp_path / "sales.csv").write_text(CSV)
    ns: dict[str, object] = {}
    await codes_and_answer(agent_with(ns, tmp_path), "Load sales.csv")
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), "Which store sells most in `sales`?")
    assert codes[-1] == 'sales.groupby("region")["revenue"].sum().sort_values(ascending=False)'  # main: by "date", each day
    assert answer.startswith("(simulated model) `sales` has no store column, so I grouped by region: north has")


async def test_the_correlation_of_two_named_columns_is_one_call_said_with_its_strength(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the correlation between price and quantity in `orders`?")
    assert codes == ["orders.dtypes", 'orders["price"].corr(orders["quantity"])']  # main: orders.head()
    r = ORDERS["price"].corr(ORDERS["quantity"])
    assert answer.startswith(f"(simulated model) the correlation of price and quantity in `orders` is {r:.2f} "
                             "(Pearson's r: a moderate negative linear relation).")


async def test_a_text_column_named_for_a_correlation_is_said_and_the_table_quoted(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How do price and customer correlate in `orders`?")
    assert codes[-1] == "orders.corr(numeric_only=True)"  # never orders["price"].corr(orders["customer"]): an error
    assert answer.startswith("(simulated model) customer is not numeric, so these are the correlations of the numeric "
                             "columns of `orders`.")
    assert "-0.525" in answer  # the table, quoted


@pytest.mark.parametrize(("prompt", "code", "said"), [
    ("How many customers are in `orders`?", 'orders["customer"].nunique()',
     f"there are {ORDERS['customer'].nunique()} distinct customer values in `orders`."),  # main: orders.head()
    ("How many categories does `orders` have?", 'orders["category"].nunique()',
     f"there are {ORDERS['category'].nunique()} distinct category values in `orders`."),
    ("How many orders are in `orders`?", "orders.shape", f"`orders` has {len(ORDERS)} rows and 5 columns."),
])
async def test_how_many_of_a_column_counts_its_distinct_values(tmp_path: Path, prompt: str, code: str, said: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path), prompt)
    assert codes[-1] == code and codes[:-1] in ([], ["orders.dtypes"])  # a number column is totalled: looked up first
    assert answer.startswith(f"(simulated model) {said}")


async def test_how_many_of_something_the_frame_lacks_says_so(tmp_path: Path) -> None:
    codes, answer = await codes_and_answer(agent_with({"orders": ORDERS.copy()}, tmp_path), "How many cities are in `orders`?")
    assert codes == []
    assert answer.startswith('(simulated model) `orders` has no column for "cities" to count.')


async def test_how_many_rows_per_group_counts_each_group(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many rows per customer are in `orders`?")
    assert codes == ['orders["customer"].value_counts()']  # main: orders.shape, the whole frame's
    counts = ORDERS["customer"].value_counts()
    listed = ", ".join(f"{c} {n}" for c, n in counts.items())
    assert answer.startswith(f"(simulated model) the rows of `orders` per customer: {listed}.")


async def test_a_condition_beside_a_group_question_ranks_only_those_rows(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which customer has the largest quantity for price above 12 in `orders`?")
    # main: the rows were selected, then every row ranked (dee's 11 units, 8 of them at $7.50 and $8)
    assert codes[-1] == 'orders[orders["price"] > 12].groupby("customer")["quantity"].sum().sort_values(ascending=False)'
    kept = ORDERS[ORDERS["price"] > 12].groupby("customer")["quantity"].sum()
    top = kept.idxmax()
    assert f"{top} has the largest total quantity ({kept.max()}) by customer, among the rows with price > 12." in answer


async def test_top_regions_by_a_number_before_its_types_are_known_groups_by_the_text(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What are the top 2 customers by quantity in `orders`?")
    # main: orders.groupby("quantity")["customer"].sum(), a TypeError (the count read as the group)
    assert codes == ["orders.dtypes", 'orders.groupby("customer")["quantity"].sum().nlargest(2)']
    assert "the top 2 customer values by total quantity" in answer


@pytest.mark.parametrize(("prompt", "code", "value"), [
    # main: orders[["price", "quantity"]].mean(), every row's, the condition's column averaged too
    ("What is the average price for quantity above 2 in `orders`?", 'orders.loc[orders["quantity"] > 2, "price"].mean()',
     "the mean price of `orders` for the rows with quantity > 2 is "
     f"{ORDERS.loc[ORDERS['quantity'] > 2, 'price'].mean():.2f}."),
    ("What is the total quantity for price at least 12 in `orders`?", 'orders.loc[orders["price"] >= 12, "quantity"].sum()',
     f"the total quantity of `orders` for the rows with price >= 12 is {ORDERS.loc[ORDERS['price'] >= 12, 'quantity'].sum()}."),
])
async def test_a_statistic_with_a_condition_is_of_those_rows(tmp_path: Path, prompt: str, code: str, value: str) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert codes == [code]
    assert answer.startswith(f"(simulated model) {value}")


async def test_a_condition_said_first_still_leaves_its_column_out_of_the_ranking(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "For price above 10, which customer has the largest quantity in `orders`?")
    # the types first (which named column is a number decides what is ranked), then those rows ranked
    assert codes == ["orders.dtypes",
                     'orders[orders["price"] > 10].groupby("customer")["quantity"].sum().sort_values(ascending=False)']
    assert "bob and cy tie for the largest total quantity (4) by customer, among the rows with price > 10." in answer


BUYS = pd.DataFrame({"customer": ["ann", "ann", "bob", "cy", "cy"], "price": [2.0, 3.0, 40.0, 5.0, 1.0],
                     "quantity": [10, 20, 1, 2, 3]})
"""ann buys cheap in bulk (spent 80), bob one dear thing (40): the prices alone rank bob first."""


def _spent() -> pd.Series:
    return (BUYS["price"] * BUYS["quantity"]).groupby(BUYS["customer"]).sum()


async def test_who_spent_the_most_totals_price_times_quantity(tmp_path: Path) -> None:
    buys = BUYS.copy()
    agent = agent_with({"buys": buys}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which customer spent the most in `buys`?")
    # main: buys.groupby("customer")["price"].sum(): bob, the dearest buyer, not the biggest spender
    assert codes == ["buys.dtypes", '(buys.assign(spent=buys["price"] * buys["quantity"])\n'
                     ' .groupby("customer")["spent"].sum().sort_values(ascending=False))']
    assert "ann has the largest total spent (80.00) by customer, spent being price × quantity." in answer
    pd.testing.assert_frame_equal(buys, BUYS)  # no column added to the user's frame


async def test_which_two_paid_the_least_ranks_the_two_smallest_spenders(tmp_path: Path) -> None:
    agent = agent_with({"buys": BUYS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which 2 customers paid the least in `buys`?")
    # main: "`buys` has no 2 column, so I grouped by customer", the prices' totals
    assert codes[-1] == 'buys.assign(spent=buys["price"] * buys["quantity"]).groupby("customer")["spent"].sum().nsmallest(2)'
    two = _spent().nsmallest(2)
    listed = ", ".join(f"{c} ({v:.2f})" for c, v in two.items())
    assert f"the bottom 2 customer values by total spent: {listed}" in answer


@pytest.mark.parametrize(("prompt", "code"), [
    ("How many orders have price above 12,5 in `orders`?", '(orders["price"] > 12.5).sum()'),  # main: no condition
    ("How many orders have price above 1,000 in `orders`?", '(orders["price"] > 1000).sum()'),
])
async def test_a_decimal_comma_is_a_decimal_and_a_thousands_comma_groups(tmp_path: Path, prompt: str, code: str) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, prompt)
    assert codes == [code]


async def test_the_bottom_groups_are_the_smallest(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Bottom 2 customers by quantity in `orders`")
    assert codes == ['orders.groupby("customer")["quantity"].sum().nsmallest(2)']  # main: orders.head()
    assert "the bottom 2 customer values by total quantity: eve (2), bob (4)." in answer


async def test_how_many_rows_meet_a_condition_per_group_counts_each_group(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many orders for price above 10 does each customer have in `orders`?")
    # main: (orders["price"] > 10).sum(), one count for all the customers
    assert codes == ['(orders["price"] > 10).groupby(orders["customer"]).sum().sort_values(ascending=False)']
    counts = (ORDERS["price"] > 10).groupby(ORDERS["customer"]).sum()
    assert (counts == 0).any()  # a customer with no such order is said, with 0 (value_counts left it out)
    for customer, n in counts.items():
        assert f"{customer} {n}" in answer.split("\n")[0]
    assert answer.startswith("(simulated model) the rows of `orders` with price > 10 per customer: ")


async def test_no_row_meeting_the_condition_per_group_is_said(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    _, answer = await codes_and_answer(agent, "How many rows have price above 100 per customer in `orders`?")
    assert answer.startswith("(simulated model) no row of `orders` has price > 100.")


@pytest.mark.parametrize("prompt", ["How many orders per customer have price above 10 in `orders`?",
                                    "For each customer, how many orders have price above 10 in `orders`?"])
async def test_a_group_said_before_the_condition_is_counted_per_group(tmp_path: Path, prompt: str) -> None:
    # before: (orders["price"] > 10).sum(), one count, the "per customer" dropped silently
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert codes == ['(orders["price"] > 10).groupby(orders["customer"]).sum().sort_values(ascending=False)']
    assert answer.startswith("(simulated model) the rows of `orders` with price > 10 per customer: ")
