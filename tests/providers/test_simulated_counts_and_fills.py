"""The offline model changes the user's frame only when asked to ("don't fill …", "should I fill …"
leave it as it was), and a "how many" question is answered with the count it asks for, or said to
be unclear, never with another count (the frame's shape, a column's distinct values)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_frame_counts import ORDERS
from .test_simulated_rule_code import agent_with, codes_and_answer


@pytest.mark.parametrize("prompt", [
    "Don't fill the missing prices in `orders` with the median, just count them",
    "Should I fill the missing prices in `orders` with the median?",
    "How would I fill the missing prices in `orders` with the median?",
    "Do not impute the missing prices in `orders` with 0",
])
async def test_a_fill_not_asked_for_leaves_the_frame_as_it_was(tmp_path: Path, prompt: str) -> None:
    ns = {"orders": ORDERS.copy()}
    codes, _ = await codes_and_answer(agent_with(ns, tmp_path), prompt)
    assert not [c for c in codes if "fillna" in c]  # me1: orders["price"] = orders["price"].fillna(…)
    pd.testing.assert_frame_equal(ns["orders"], ORDERS)


@pytest.mark.parametrize("prompt", [
    "Can you fill the missing prices in `orders` with the median?",
    "Count the missing values, then fill the missing prices in `orders` with the median.",
])
async def test_a_fill_asked_for_in_a_question_or_a_later_sentence_fills(tmp_path: Path, prompt: str) -> None:
    ns = {"orders": ORDERS.copy()}
    codes, _ = await codes_and_answer(agent_with(ns, tmp_path), prompt)
    assert codes[-1] == 'orders["price"] = orders["price"].fillna(orders["price"].median())\norders["price"].isna().sum()'
    assert ns["orders"]["price"].isna().sum() == 0


SALES = pd.DataFrame({"region": ["north", "south", "north", "east"], "revenue": [120.0, 80.5, 142.0, 99.0],
                      "units": [3, 2, 4, 2]})


@pytest.mark.parametrize(("prompt", "codes", "said"), [
    # me1: '`sales` has no column for "missing" to count.' before the count
    ("How many missing values does `sales` have?", ["sales.isna().sum()"], "`sales` has 0 missing values."),
    # me1: "there are 4 distinct revenue values" before the count of the missing ones
    ("How many revenue values are missing in `sales`?", ["sales.isna().sum()"], "`sales` has 0 missing values."),
    # me1: "there are 3 distinct units values" before the total
    ("How many units did we sell in total in `sales`?", ['sales["units"].sum()'], "the total units of `sales` is 11."),
    # me1: sales["units"].nunique(), "there are 3 distinct units values"
    ("How many units were sold in `sales`?", ["sales.dtypes", 'sales["units"].sum()'], "the total units of `sales` is 11."),
    ("How many regions are in `sales`?", ["sales.dtypes", 'sales["region"].nunique()'],
     "there are 3 distinct region values in `sales`."),
    ("How many sales are there in `sales`?", ["sales.shape"], "`sales` has 4 rows and 3 columns."),
])
async def test_how_many_is_answered_with_the_count_it_asks_for(tmp_path: Path, prompt: str, codes: list[str],
                                                              said: str) -> None:
    made, answer = await codes_and_answer(agent_with({"sales": SALES.copy()}, tmp_path), prompt)
    assert made == codes
    assert answer.startswith(f"(simulated model) {said}")


@pytest.mark.parametrize("prompt", [
    "How many of the sales in `sales` are in the north?",  # me1: sales.shape, "4 rows"
    "How many sales in `sales` are bigger than 100?",  # me1: sales.shape, "4 rows"
])
async def test_how_many_with_more_than_the_frames_rows_is_not_answered_with_its_shape(tmp_path: Path, prompt: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"sales": SALES.copy()}, tmp_path), prompt)
    assert "sales.shape" not in codes
    assert answer.startswith("(simulated model) I could not tell what to count in `sales`")


async def test_how_many_per_group_counts_the_rows_of_each(tmp_path: Path) -> None:
    codes, answer = await codes_and_answer(agent_with({"sales": SALES.copy()}, tmp_path),
                                           "How many sales does each region have in `sales`?")
    assert codes == ['sales["region"].value_counts()']  # me1: sales.shape
    assert "the rows of `sales` per region: north 2, south 1, east 1." in answer


PEOPLE = pd.DataFrame({"name": ["ann", "bob", "cy"], "salary": [52000.0, 31000.0, 88000.0]})


@pytest.mark.parametrize(("prompt", "code"), [
    ("Show the people in `people` with salary above 50k", 'people[people["salary"] > 50000]'),  # me1: > 50, every row
    ("How many rows of `people` have salary over 1.5k?", '(people["salary"] > 1500).sum()'),
])
async def test_a_number_in_thousands_is_read_whole(tmp_path: Path, prompt: str, code: str) -> None:
    codes, _ = await codes_and_answer(agent_with({"people": PEOPLE.copy()}, tmp_path), prompt)
    assert codes == [code]


async def test_a_number_with_another_letter_is_no_condition(tmp_path: Path) -> None:
    codes, _ = await codes_and_answer(agent_with({"people": PEOPLE.copy()}, tmp_path),
                                      "Show the people in `people` with salary above 50x")
    assert not [c for c in codes if "> 50]" in c]  # me1: people[people["salary"] > 50]


@pytest.mark.parametrize(("prompt", "code"), [
    ("Sort `people` by salary, largest to smallest", 'people.sort_values("salary", ascending=False)'),  # me1: ascending
    ("Sort `people` by salary high to low", 'people.sort_values("salary", ascending=False)'),  # me1: ascending
    ("Sort `people` by salary in ascending order, not descending", 'people.sort_values("salary")'),  # me1: descending
    ("Sort `people` by salary, low to high", 'people.sort_values("salary")'),
])
async def test_a_sort_is_in_the_order_asked(tmp_path: Path, prompt: str, code: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"people": PEOPLE.copy()}, tmp_path), prompt)
    assert codes == [code]
    assert ("largest first" if "False" in code else "smallest first") in answer


@pytest.mark.parametrize(("prompt", "code", "said"), [
    ("Show `sales` where units is at least 3 and revenue above 130",  # me1: units >= 3 only, 2 rows
     'sales[(sales["units"] >= 3) & (sales["revenue"] > 130)]', "1 row of `sales` has units >= 3 and revenue > 130."),
    ("Show `sales` with revenue below 90 or units above 3",
     'sales[(sales["revenue"] < 90) | (sales["units"] > 3)]', "2 rows of `sales` have revenue < 90 or units > 3."),
    ("How many rows of `sales` have units at least 3 and revenue above 130?",
     '((sales["units"] >= 3) & (sales["revenue"] > 130)).sum()', "1 row of `sales` has units >= 3 and revenue > 130."),
])
async def test_two_joined_conditions_both_apply(tmp_path: Path, prompt: str, code: str, said: str) -> None:
    codes, answer = await codes_and_answer(agent_with({"sales": SALES.copy()}, tmp_path), prompt)
    assert codes == [code]
    assert answer.startswith(f"(simulated model) {said}")


async def test_a_joined_condition_on_no_column_is_said_not_left_out(tmp_path: Path) -> None:
    codes, answer = await codes_and_answer(agent_with({"sales": SALES.copy()}, tmp_path),
                                           "Show `sales` with revenue above 100 and cost above 5")
    assert not [c for c in codes if c.startswith("sales[")]  # me1: the revenue rows, as if they were the ones asked for
    assert 'the condition after "and"' in answer


GAPPY = pd.DataFrame({"name": ["ann", "bob", "cy", None], "city": ["paris", None, "rome", "oslo"],
                      "age": [34.0, float("nan"), 52.0, 41.0], "salary": [52000.0, 31000.0, float("nan"), 45000.0]})


async def test_a_fill_of_a_named_text_column_changes_that_column_only(tmp_path: Path) -> None:
    ns = {"people": GAPPY.copy()}
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), "Fill the missing city values in `people` with 0")
    assert codes[-1] == 'people["city"] = people["city"].fillna("0")\npeople["city"].isna().sum()'  # me1: people.fillna(0)
    pd.testing.assert_frame_equal(ns["people"].drop(columns="city"), GAPPY.drop(columns="city"))  # age, salary as they were
    assert ns["people"]["city"].tolist() == ["paris", "0", "rome", "oslo"]  # text, as pandas requires of a str column


async def test_a_mean_fill_of_a_text_column_fills_nothing_and_says_why(tmp_path: Path) -> None:
    ns = {"people": GAPPY.copy()}
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), "Fill the missing names in `people` with the median")
    assert not [c for c in codes if "fillna" in c]  # me1: people.fillna(people.median(numeric_only=True)): age, salary
    pd.testing.assert_frame_equal(ns["people"], GAPPY)
    assert "name of `people` is not numeric, so there is no median to fill its missing values with" in answer


async def test_a_fill_of_two_named_columns_fills_both(tmp_path: Path) -> None:
    ns = {"people": GAPPY.copy()}
    codes, answer = await codes_and_answer(agent_with(ns, tmp_path), "Fill the missing salary and age in `people` with 0")
    assert codes[-1] == ('people[["salary", "age"]] = people[["salary", "age"]].fillna({"salary": 0, "age": 0})\n'
                         'people[["salary", "age"]].isna().sum()')  # me1: salary only
    assert ns["people"][["salary", "age"]].isna().sum().sum() == 0 and ns["people"]["city"].isna().sum() == 1
    assert "filled the missing salary and age values of `people` with 0; none is missing now." in answer


async def test_a_column_named_outside_the_fill_is_not_filled(tmp_path: Path) -> None:
    ns = {"people": GAPPY.copy()}
    codes, _ = await codes_and_answer(agent_with(ns, tmp_path),
                                      "Fill the missing age in `people` with the median and show the salary above 40000")
    assert 'people["age"] = people["age"].fillna(people["age"].median())\npeople["age"].isna().sum()' in codes
    assert ns["people"]["salary"].isna().sum() == 1  # the salary the prompt only shows is as it was


MONTH = "Which month had the highest revenue in `sales`?"


async def test_which_month_reads_the_column_named_as_a_date_not_one_containing_date(tmp_path: Path) -> None:
    frame = pd.DataFrame({"validated": ["yes", "no", "yes"], "order_date": ["2024-01-05", "2024-02-01", "2024-02-09"],
                          "revenue": [1.0, 2.0, 3.0]})  # as read_csv leaves it: both text
    codes, answer = await codes_and_answer(agent_with({"sales": frame}, tmp_path), MONTH)
    # me1: pd.to_datetime(sales["validated"]): a failed cell ("validated" contains "date")
    assert codes[-1] == ('import pandas as pd\n\nsales.groupby(pd.to_datetime(sales["order_date"]).dt.to_period("M"))'
                         '["revenue"].sum().sort_values(ascending=False)')
    assert answer.startswith("(simulated model) reading `order_date` (text) as dates, 2024-02 has the largest total revenue")


@pytest.mark.parametrize("name", ["weekday", "day_of_week"])
async def test_a_name_merely_containing_day_is_not_read_as_dates(tmp_path: Path, name: str) -> None:
    frame = pd.DataFrame({name: ["Mon", "Tue", "Wed"], "store": ["a", "b", "a"], "revenue": [1.0, 2.0, 3.0]})
    codes, answer = await codes_and_answer(agent_with({"sales": frame}, tmp_path), MONTH)
    assert not [c for c in codes if "to_datetime" in c]  # me1: pd.to_datetime(sales["weekday"]), a failed cell
    assert "I found no date column in `sales`" in answer
