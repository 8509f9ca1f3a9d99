"""The offline model on more everyday questions about a live DataFrame with a date column:
a group named by no column is never the dates, "<y> over <x>" plots y against x, distinct values
are counted with ``nunique``, and two columns' statistic is one call."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_frame_counts import ORDERS
from .test_simulated_rule_code import agent_with, codes_and_answer


async def test_a_group_the_frame_lacks_falls_back_to_a_text_column_not_the_dates(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which region sells most in `orders`?")
    # main (earlier): by order_date; "sells" totals price × quantity (me9: not the prices)
    assert codes[-1] == ('(orders.assign(sales=orders["price"] * orders["quantity"])\n'
                         ' .groupby("customer")["sales"].sum().sort_values(ascending=False))')
    sold = (ORDERS["price"] * ORDERS["quantity"]).groupby(ORDERS["customer"]).sum()
    # and says so (main: "cy has the largest total price (47.00) by customer.", as if asked by customer)
    assert answer.startswith("(simulated model) `orders` has no region column, so I grouped by customer: "
                             f"{sold.idxmax()} has the largest total sales ({sold.max():.2f}) by customer")


async def test_y_over_a_column_plots_y_against_that_column(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, "Plot quantity over order_date in `orders`")
    # main: orders[["quantity", "order_date"]].plot() against the row number, labelled "row"
    assert codes == ['import matplotlib.pyplot as plt\n\norders.plot(x="order_date", y="quantity")\n'
                     'plt.title("Quantity over order_date")\nplt.xlabel("order_date")\nplt.ylabel("quantity")\nplt.show()']


async def test_over_time_looks_for_the_date_column_then_plots_against_it(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, "Plot price over time in `orders`")
    assert codes[0] == "orders.dtypes"
    assert 'orders.plot(x="order_date", y="price")' in codes[1]  # main: orders["price"].plot() by row


async def test_how_many_unique_values_is_nunique(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "How many unique customers are in `orders`?")
    assert codes == ['orders["customer"].nunique()']  # main: orders.head(), no answer
    assert answer.startswith(f"(simulated model) there are {ORDERS['customer'].nunique()} distinct customer values in `orders`.")


async def test_the_mean_of_two_columns_is_one_call_with_both(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "What is the mean price and quantity in `orders`?")
    # main: price only; it looks at the dtypes first, which of two named columns are numbers
    assert codes == ["orders.dtypes", 'orders[["price", "quantity"]].mean()']
    means = ORDERS[["price", "quantity"]].mean()
    assert f"the mean of `orders`: price {means['price']:.2f}, quantity {means['quantity']:.2f}" in answer


async def test_the_highest_average_ranks_the_groups_means_not_their_totals(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which category has the highest average price in `orders`?")
    # main: the totals by category, then orders["category"].mean(), a TypeError on the text column
    assert codes == ['orders.groupby("category")["price"].mean().sort_values(ascending=False)']
    means = ORDERS.groupby("category")["price"].mean().sort_values(ascending=False)
    assert answer.startswith(f"(simulated model) {means.index[0]} has the largest mean price ({means.iloc[0]:.2f}) by category.")


async def test_a_plural_in_ies_names_its_column(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Top 2 categories by average price in `orders`")
    assert codes == ['orders.groupby("category")["price"].mean().nlargest(2)']
    top = ORDERS.groupby("category")["price"].mean().nlargest(2)
    listed = ", ".join(f"{k} ({v:.2f})" for k, v in top.items())
    assert answer.startswith(f"(simulated model) the top 2 category values by mean price: {listed}.")


async def test_a_mean_asked_beside_a_group_question_is_the_columns_mean_not_the_ranking(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which customer sells most in `orders`, and what is the average price?")
    # pu5 ranked the customers by their mean price ("sells most" is a total) and never gave the average;
    # a text column named beside a number made the statistic orders[["customer", "price"]].mean(): TypeError
    assert codes == ['orders.groupby("customer")["price"].sum().sort_values(ascending=False)', "orders.dtypes",
                     'orders["price"].mean()']
    totals = ORDERS.groupby("customer")["price"].sum()
    assert answer.startswith(f"(simulated model) {totals.idxmax()} has the largest total price ({totals.max():.2f}) by customer")
    assert f"the mean price of `orders` is {ORDERS['price'].mean():.2f}" in answer


@pytest.mark.filterwarnings("error::UserWarning")
async def test_a_time_zone_aware_date_column_is_a_date_column(tmp_path: Path) -> None:
    stamped = pd.DataFrame({"ts": pd.date_range("2024-01-30", periods=4, freq="D", tz="UTC"),
                            "shop": ["a", "b", "a", "b"], "amount": [1.0, 2.0, 3.0, 4.0]})
    agent = agent_with({"stamped": stamped}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which month had the highest total amount in `stamped`?")
    # its dtype "datetime64[us, UTC]" was cut at the space: column "ts  datetime64[us,", dtype "UTC]";
    # pu5 answered "I found no date column in `stamped` to group by month"
    # (the time zone dropped first: to_period on it warns in the user's cell)
    assert codes[-1] == ('stamped.groupby(stamped["ts"].dt.tz_localize(None).dt.to_period("M"))["amount"].sum()'
                         '.sort_values(ascending=False)')
    assert answer.startswith("(simulated model) 2024-02 has the largest total amount (7.00) by month.")


async def test_a_text_column_named_beside_y_is_not_plotted_over_x(tmp_path: Path) -> None:
    agent = agent_with({"orders": ORDERS.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, "Plot the quantity of each customer over order_date in `orders`")
    # pu5: orders.plot(x="order_date", y=["quantity", "customer"]), titled "Quantity, customer over order_date"
    assert codes[0] == "orders.dtypes"
    assert codes[1] == ('import matplotlib.pyplot as plt\n\norders.plot(x="order_date", y="quantity")\n'
                        'plt.title("Quantity over order_date")\nplt.xlabel("order_date")\nplt.ylabel("quantity")\nplt.show()')
