"""The cells the offline model writes run in the user's kernel after Allow: they never overwrite a
variable of the user's, and a condition computes the rows asked for (each cell run on a live frame)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .test_simulated_rule_code import agent_with, codes_and_answer
from .test_simulated_sales_questions import SALES


async def test_the_selected_rows_never_overwrite_a_users_variable_of_that_name(tmp_path: Path) -> None:
    mine = pd.DataFrame({"kept": [1, 2]})
    ns = {"sales": SALES.copy(), "sales_selected": mine}
    agent = agent_with(ns, tmp_path)
    codes, _ = await codes_and_answer(agent, "Which customer spent the most for quantity above 1 in `sales`?")
    # before: sales_selected = sales[…], the user's own sales_selected replaced without a word
    assert codes[-1].startswith('sales_selected_2 = sales[sales["quantity"] > 1]\n')
    assert ns["sales_selected"] is mine


async def test_the_shares_never_overwrite_a_users_variable_of_that_name(tmp_path: Path) -> None:
    mine = [1, 2, 3]
    ns = {"sales": SALES.copy(), "sales_spent": mine}
    agent = agent_with(ns, tmp_path)
    codes, _ = await codes_and_answer(agent, "What is the share of each region in total sales in `sales`?")
    assert codes[-1].startswith('sales_spent_2 = sales["price"] * sales["quantity"]\n')
    assert ns["sales_spent"] is mine
