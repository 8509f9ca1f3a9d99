"""The offline model on several questions in one prompt: "…, sort by price" is a sort, not a count
of the rows per price."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer
from .test_simulated_sales_questions import SALES


async def test_sort_by_after_a_count_is_a_sort_not_a_count_per_value(tmp_path: Path) -> None:
    agent = agent_with({"orders": SALES.copy()}, tmp_path)
    prompt = "How many orders have price above 10 and which customer spent the most, sort by price in `orders`"
    codes, answer = await codes_and_answer(agent, prompt)
    # main: (orders["price"] > 10).groupby(orders["price"]).sum()..., "per price: 12.0 2, 15.0 1, …"
    assert codes[0] == '(orders["price"] > 10).sum()' and 'orders.sort_values("price")' in codes
    assert f"{int((SALES['price'] > 10).sum())} rows of `orders` have price > 10" in answer


@pytest.mark.parametrize("prompt", ["How many orders have price above 10 and sort them by price in `orders`",
                                    "How many orders have price above 10, ranked by price, in `orders`?"])
async def test_sort_them_by_after_a_count_is_no_count_per_value(tmp_path: Path, prompt: str) -> None:
    agent = agent_with({"orders": SALES.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    # branch me8: (orders["price"] > 10).groupby(orders["price"]).sum()…, "per price: 12.0 1, …"
    assert codes[0] == '(orders["price"] > 10).sum()'
    assert f"{int((SALES['price'] > 10).sum())} rows of `orders` have price > 10" in answer
