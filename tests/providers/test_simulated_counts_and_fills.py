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
