"""The cells the offline model writes run in the user's kernel after Allow: they never overwrite a
variable of the user's, and a condition computes the rows asked for (each cell run on a live frame)."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer, run
from .test_simulated_sales_questions import SALES


def assigned(codes: list[str]) -> list[str]:
    """The names the cells assign at their top level (a lambda's argument is none)."""
    found: list[str] = []
    for code in codes:
        for node in ast.parse(code).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            found += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return found


async def test_no_cell_assigns_a_name_a_user_variable_unknown_to_the_facts_may_hold(tmp_path: Path) -> None:
    # a notebook of more than 40 variables: the facts list 40 and name the rest only by count, so a
    # sales_selected / sales_spent of the user's is unknown to the model. Before: sales_selected = …,
    # sales_spent = … overwrote them; now the cells assign no name at all
    from nbagent import Agent
    from nbagent.engine.loop.facts import NotebookState, VariableInfo
    from nbagent.providers.simulated import SimulatedAPI
    from nbagent.tools.executor import NamespaceExecutor

    mine, theirs = pd.DataFrame({"kept": [1, 2]}), [1, 2, 3]
    ns = {"sales": SALES.copy(), "sales_selected": mine, "sales_spent": theirs}

    def facts() -> NotebookState:  # sales only: the other two are past the 40 names listed
        shown = [VariableInfo("sales", "DataFrame", f"shape {SALES.shape}, columns {list(SALES.columns)}")]
        return NotebookState(shown, [], None, left_out="Left out: 2 more variables", left_out_names=[])

    agent = Agent(provider="simulated", simulated_options={"api": SimulatedAPI()}, cwd=tmp_path, allow=["python"],
                  executor=NamespaceExecutor(ns), kernel_facts=facts)
    for prompt in ("Which customer spent the most for quantity above 1 in `sales`?",
                   "Which customer spent the most in `sales` where price above 10?",
                   "What is the share of each region in total sales in `sales`?"):
        codes, answer = await codes_and_answer(agent, prompt)
        assert not assigned(codes), codes
    assert ns["sales_selected"] is mine and ns["sales_spent"] is theirs
    spent = (SALES["price"] * SALES["quantity"])[SALES["price"] > 10].groupby(SALES["customer"]).sum()
    codes, answer = await codes_and_answer(agent, "Which customer spent the most in `sales` where price above 10?")
    assert f"{spent.idxmax()} has the largest total spent ({spent.max():,.2f}) by customer" in answer


async def test_the_selected_rows_never_overwrite_a_users_variable_of_that_name(tmp_path: Path) -> None:
    mine = pd.DataFrame({"kept": [1, 2]})
    ns = {"sales": SALES.copy(), "sales_selected": mine}
    agent = agent_with(ns, tmp_path)
    codes, _ = await codes_and_answer(agent, "Which customer spent the most for quantity above 1 in `sales`?")
    # before: sales_selected = sales[…], the user's own sales_selected replaced without a word
    assert codes[-1].startswith('(sales.assign(spent=sales["price"] * sales["quantity"])\n .loc[sales["quantity"] > 1]\n')
    assert not assigned(codes) and ns["sales_selected"] is mine


async def test_the_shares_never_overwrite_a_users_variable_of_that_name(tmp_path: Path) -> None:
    mine = [1, 2, 3]
    ns = {"sales": SALES.copy(), "sales_spent": mine}
    agent = agent_with(ns, tmp_path)
    codes, _ = await codes_and_answer(agent, "What is the share of each region in total sales in `sales`?")
    assert codes[-1].startswith('(\n    (sales["price"] * sales["quantity"]).groupby(sales["region"]).sum()\n')
    assert not assigned(codes) and ns["sales_spent"] is mine


MESSY = SALES.assign(price=[12.0, None, 15.0, 30.0, 12.0, 5.0, 9.0], customer=["ann", "bob", "a(n)", "cy", "bob", None, "ann"])
"""A missing price and customer, and a name with a bracket."""


async def test_where_a_column_is_missing_selects_its_missing_values(tmp_path: Path) -> None:
    agent = agent_with({"sales": MESSY.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show `sales` where price is missing")
    # before: sales[sales["price"] == "missing"] and "no row of `sales` has price == "missing""
    assert codes[0] == 'sales[sales["price"].isna()]'
    assert "1 row of `sales` has price missing" in answer
    codes, answer = await codes_and_answer(agent, "Show the rows of `sales` where price is not null")
    assert codes[0] == 'sales[sales["price"].notna()]'
    assert f"{MESSY['price'].notna().sum()} rows of `sales` have price not missing" in answer


async def test_a_text_condition_joined_to_a_number_condition_applies_both(tmp_path: Path) -> None:
    agent = agent_with({"sales": MESSY.copy()}, tmp_path)
    expected = int(((MESSY["region"] == "North") & (MESSY["price"] > 10)).sum())
    assert expected == 2  # region North alone is 3 rows, price above 10 alone 4
    for prompt, code in [
        ("Show `sales` where region is North and price above 10",
         'sales[(sales["region"].str.lower() == "north") & (sales["price"] > 10)]'),
        ("Show `sales` where price above 10 and region is North",
         'sales[(sales["price"] > 10) & (sales["region"].str.lower() == "north")]'),
    ]:
        codes, answer = await codes_and_answer(agent, prompt)
        # before: the second condition dropped without a word (region alone, or price alone)
        assert codes[-1] == code and codes[:-1] in ([], ["sales.dtypes"])
        assert f"{expected} rows of `sales` have" in answer


async def test_contains_finds_the_text_as_typed_not_as_a_regular_expression(tmp_path: Path) -> None:
    agent = agent_with({"sales": MESSY.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show `sales` where customer contains '('")
    # before: .str.contains("(", na=False) raised re.error (missing ), unterminated subpattern)
    assert codes == ['sales[sales["customer"].str.contains("(", case=False, na=False, regex=False)]']
    assert "1 row of `sales` has customer containing \"(\"" in answer


@pytest.mark.parametrize(("dates", "prompt", "unread"), [
    (["2024-01-05", "2024-02-10", "not a date"], "Show the latest order in `sales`", "not a date"),
    (["2024-01-05", "02/10/2024", "2024-03-01"], "How many orders per month in `sales`?", "02/10/2024"),
    (["2024-01-05", "2024-02-10", "soon"], "Which month has the highest total price in `sales`?", "soon"),
])
async def test_dates_pandas_cannot_read_are_said_with_the_value_and_what_to_do(
        tmp_path: Path, dates: list[str], prompt: str, unread: str) -> None:
    sales = pd.DataFrame({"customer": ["a", "b", "c"], "price": [1.0, 2.0, 3.0], "date": dates})
    agent = agent_with({"sales": sales}, tmp_path)
    _, answer = await run(agent, prompt)
    # before: only the head of the traceback (pandas' internals), its last line, which names the value, cut off
    lead = answer.split("\n")[0]
    assert lead.startswith("(simulated model) `date` of `sales` holds text that pandas cannot read as a date (")
    assert f'"{unread}"' in lead or f": {unread}" in lead
    assert 'format="mixed"' in lead and 'errors="coerce"' in lead
    assert list(sales["date"]) == dates  # the user's column is still the text it was


async def test_a_frame_of_more_than_60_columns_is_answered_after_its_look(tmp_path: Path) -> None:
    wide = pd.DataFrame({f"feature_{i}": [0.0] * 7 for i in range(200)}).assign(**SALES)
    agent = agent_with({"sales": wide}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Which customer in `sales` spent the most?")
    # before: pandas cut the 205 dtypes to the first and last 30 ("..."), read as no .dtypes at all:
    # "`sales` does not look like a DataFrame (its `.dtypes` failed), so I wrote no pandas code for it."
    assert codes[-1] == ('(sales.assign(spent=sales["price"] * sales["quantity"])\n'
                         ' .groupby("customer")["spent"].sum().sort_values(ascending=False))')
    spent = (SALES["price"] * SALES["quantity"]).groupby(SALES["customer"]).sum().sort_values(ascending=False)
    assert f"{spent.index[0]} has the largest total spent ({spent.iloc[0]:,.2f}) by customer" in answer



async def test_the_selected_rows_never_overwrite_a_variable_the_facts_name_only(tmp_path: Path) -> None:
    # before (atk28): in a notebook of many frames the facts (kernel_context.build) name the user's
    # sales_selected only, in their "Left out (…): …" line, which the offline model did not read:
    # sales_selected = sales[…] replaced it
    from nbagent import Agent
    from nbagent.engine.loop.facts import NotebookState, VariableInfo
    from nbagent.providers.simulated import SimulatedAPI
    from nbagent.tools.executor import NamespaceExecutor

    mine = [1, 2]
    ns = {"sales": SALES.copy(), "sales_selected": mine}
    line = "Left out (the kernel context's token budget; ask the python tool for them): v58, v59, sales_selected"

    def facts() -> NotebookState:
        shown = [VariableInfo("sales", "DataFrame", f"shape {SALES.shape}, columns {list(SALES.columns)}")]
        return NotebookState(shown, [], None, left_out=line, left_out_names=["v58", "v59", "sales_selected"])

    agent = Agent(provider="simulated", simulated_options={"api": SimulatedAPI()}, cwd=tmp_path, allow=["python"],
                  executor=NamespaceExecutor(ns), kernel_facts=facts)
    codes, _ = await codes_and_answer(agent, "Which customer spent the most for quantity above 1 in `sales`?")
    assert not assigned(codes) and ns["sales_selected"] is mine


async def test_loading_a_csv_never_replaces_a_users_variable_of_its_name(tmp_path: Path) -> None:
    # before: "load sales.csv" wrote sales = pd.read_csv(…) over the user's own `sales`, and "load
    # pd.csv" wrote pd = pd.read_csv(…) over pandas itself; now sales_csv / pd_csv, and the answer says why
    SALES.to_csv(tmp_path / "sales.csv", index=False)
    SALES.to_csv(tmp_path / "pd.csv", index=False)
    mine = pd.DataFrame({"kept": [1, 2]})
    ns = {"sales": mine}
    agent = agent_with(ns, tmp_path)
    codes, answer = await codes_and_answer(agent, "Load sales.csv")
    assert assigned(codes) == ["sales_csv"] and ns["sales"] is mine, codes
    assert ns["sales_csv"].shape == SALES.shape
    assert "Loaded sales.csv into `sales_csv` (`sales` is already one of your variables, left as it is)" in answer
    codes, _ = await codes_and_answer(agent, "Load pd.csv")
    assert assigned(codes) == ["pd_csv"] and ns["pd"] is pd, codes


async def test_loading_a_csv_again_reloads_the_variable_this_session_made(tmp_path: Path) -> None:
    SALES.to_csv(tmp_path / "sales.csv", index=False)
    ns: dict[str, object] = {}
    agent = agent_with(ns, tmp_path)
    first, _ = await codes_and_answer(agent, "Load sales.csv")
    again, answer = await codes_and_answer(agent, "Load sales.csv")
    assert assigned(first) == assigned(again) == ["sales"], again
    assert "Loaded sales.csv into `sales`;" in answer
