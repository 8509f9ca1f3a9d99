"""The offline model on a condition on a True/False column ("where active is true"): the rows
holding True (or False) are selected, never a text comparison that fails the cell."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer

FLAGS = pd.DataFrame({"customer": ["Ann", "bob", "Cid", "Dee"], "active": [True, False, True, True],
                      "price": [12.0, 8.0, 15.0, 20.0]})


@pytest.mark.parametrize(("prompt", "index"), [
    # branch me8: orders["active"].str.lower() == "true", the cell failed ("Can only use .str accessor")
    ("Show `orders` where active is true", [0, 2, 3]),
    ("Show `orders` where active is not true", [1]),
    ("Show `orders` where active is False", [1]),
])
async def test_a_true_false_column_is_compared_as_true_or_false(tmp_path: Path, prompt: str, index: list[int]) -> None:
    orders = FLAGS.copy()
    agent = agent_with({"orders": orders}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)  # every cell ran
    assert list(eval(codes[-1], {"orders": FLAGS.copy()}).index) == index
    assert f"{len(index)} {'row' if len(index) == 1 else 'rows'} of `orders`" in answer
    pd.testing.assert_frame_equal(orders, FLAGS)


async def test_another_word_on_a_true_false_column_is_said(tmp_path: Path) -> None:
    agent = agent_with({"orders": FLAGS.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show `orders` where active is maybe")
    assert codes == ["orders.dtypes"]
    assert "holds True/False" in answer
