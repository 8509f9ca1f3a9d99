"""The offline model's typo fix puts a received data file's column name into the user's cell as
Python reads it: a name holding the cell's quote, a backslash or a line break is written as a
literal of its own, one that is no identifier is indexed, never spliced in as code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from .test_simulated_brain_skills import FIX, agent_on, code_of, failure, run

HOSTILE = "quarterly_revenue_total',print('PWNED'),'"
"""A column a received CSV names, one quote from code: close enough to ``quarterly_revenue_totl`` to be its typo."""


@pytest.mark.parametrize(("cell", "column"), [
    ("df['quarterly_revenue_totl'].sum()", HOSTILE),
    ('df["quarterly_revenue_totl"].sum()', 'quarterly_revenue_total",print("PWNED"),"'),
    ("df['quarterly_revenue_totl'].sum()", "quarterly_revenue_total\\'];print(1)#"),
    ("df.quarterly_revenue_totl.sum()", "quarterly_revenue_total.sum();print('PWNED')#"),
    ("df[f'quarterly_revenue_totl'].sum()", 'quarterly_revenue_{print("PWNED")}'),  # an f-string with no field
    ("df[f'quarterly_revenue_totl'].sum()", "quarterly_revenue_{print('PWNED')}"),
])
async def test_a_corrected_cell_indexes_the_column_it_names(tmp_path: Path, cell: str, column: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    frame = pd.DataFrame({"region": ["north", "south"], column: [1.0, 2.0]})
    ns: dict[str, Any] = {"df": frame}
    calls, answer = await run(agent_on(ns, tmp_path), FIX.format(cell=4, error=failure(cell, ns)))
    assert calls, answer
    code = code_of(calls[-1])
    capsys.readouterr()
    # main: df['quarterly_revenue_total',print('PWNED'),''].sum(): the cell printed PWNED, then failed
    try:
        exec(code, {"df": frame.copy()})  # as --insert-code's cell runs it
    finally:
        assert "PWNED" not in capsys.readouterr().out, code
    assert eval(code, {"df": frame.copy()}) == 3.0, code  # the column the answer names, summed
