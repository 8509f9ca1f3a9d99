"""Which of the agent's assignments make a variable the turn's own rather than an input: only one
that surely ran before the read (a top-level statement, not a branch, loop, handler or function
body), so a replay never shows an answer as current when the user's data it read has changed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nbagent.notebook.document.input_changes import changes
from nbagent.notebook.document.inputs import TurnInputs, TurnWatch
from nbagent.notebook.executor import ShellExecutor

from .test_turn_inputs import ip, turn  # noqa: F401 - the fixture and helper of the turn's inputs


def told_turn(shell: Any, root: Any, told: list[str], *codes: str, raises: int | None = None) -> TurnInputs:
    """One live turn told ``told`` in full whose model runs ``codes`` (the one at index ``raises``
    fails), as saved and read back."""
    executor, watch = ShellExecutor(shell), TurnWatch(shell, root, None)
    executor.before_execute, executor.after_execute = watch.before_code, watch.after_code
    watch.told_in_full(told)

    async def run() -> None:
        with watch:
            for i, code in enumerate(codes):
                assert ((await executor.execute(code)).error is not None) == (i == raises)

    asyncio.run(run())
    return TurnInputs.from_json(watch.inputs().to_json())


@pytest.mark.parametrize("codes", [
    ("if 'sales' not in globals():\n    sales = pd.read_csv('sales.csv')\nsales.revenue.sum()",),
    ("try:\n    sales = pd.read_csv('missing.csv')\nexcept FileNotFoundError:\n    pass\nsales.revenue.sum()",),
    ("for sales in []:\n    pass\nsales.revenue.sum()",),
    ("import contextlib\nwith contextlib.suppress(FileNotFoundError):\n    sales = pd.read_csv('missing.csv')\n"
     "sales.revenue.sum()",),
    ("def total(frame):\n    sales = frame.revenue\n    return 0\nsales.revenue.sum()",),
    ("if 'sales' not in globals():\n    sales = pd.read_csv('sales.csv')", "sales.revenue.sum()"),
], ids=["if", "try", "empty-for", "suppressed-with", "function-local", "across-calls"])
def test_a_read_after_an_assignment_that_may_not_have_run_is_an_input(ip, tmp_path, codes):  # noqa: F811
    inputs = told_turn(ip, tmp_path, [], *codes)
    assert "sales" in inputs.read
    ip.run_cell("sales.loc[2, 'revenue'] = 871")  # the user's rows changed, same shape
    assert changes(inputs, ip, tmp_path) == ["`sales`"]


def test_an_augmented_assignment_reads_the_users_variable(ip, tmp_path):  # noqa: F811
    inputs = turn(ip, tmp_path, "rate += 1\nprint(rate)")
    assert "rate" in inputs.read


@pytest.mark.parametrize("told", [[], ["sales"]], ids=["described-in-a-line", "told-in-full"])
def test_a_variable_the_code_read_before_reassigning_it_is_reported_when_gone(ip, tmp_path, told):  # noqa: F811
    # `sales = sales.dropna()` (no NA: the same value) reads the user's `sales`: the turn's code cells
    # below cannot make it again, so its absence at the replay is a change.
    inputs = told_turn(ip, tmp_path, told, "sales = sales.dropna()\nsales.revenue.sum()")
    del ip.user_ns["sales"]
    assert changes(inputs, ip, tmp_path) == ["`sales` (no longer defined)"]


def test_the_data_loaded_again_at_top_level_is_the_turns_own_in_a_fresh_kernel(ip, tmp_path):  # noqa: F811
    # F1's plain case kept: Run All twice (told `sales` in full, the code loads it again, then reads
    # it), Restart & Run All: no false "no longer defined"; a changed row of the user's still shows.
    inputs = told_turn(ip, tmp_path, ["sales"], "sales = pd.read_csv('sales.csv')", "sales.head()")
    del ip.user_ns["sales"]
    assert changes(inputs, ip, tmp_path) == []
    ip.run_cell("sales = pd.read_csv('sales.csv')\nsales.loc[2, 'revenue'] = 871")
    assert changes(inputs, ip, tmp_path) == ["`sales`"]


@pytest.mark.parametrize("failed", ["sales = pd.read_csv('missing.csv')", "x = undefined_name\nsales = 1",
                                    "a, sales = (1, 2, 3)", "import no_such_module as sales"])
def test_an_assignment_in_a_call_that_raised_leaves_the_next_calls_read_an_input(ip, tmp_path, failed) -> None:  # noqa: F811
    # "loading the file failed, so use the kernel's variable": the reload never bound `sales`
    inputs = told_turn(ip, tmp_path, [], failed, "sales.revenue.sum()", raises=0)
    ip.run_cell("sales.loc[2, 'revenue'] = 871")
    assert changes(inputs, ip, tmp_path) == ["`sales`"]


def test_a_variable_a_failed_reload_did_not_make_is_reported_when_gone(ip, tmp_path) -> None:  # noqa: F811
    inputs = told_turn(ip, tmp_path, ["sales"], "sales = pd.read_csv('missing.csv')", "sales.revenue.sum()", raises=0)
    del ip.user_ns["sales"]
    assert changes(inputs, ip, tmp_path) == ["`sales` (no longer defined)"]
