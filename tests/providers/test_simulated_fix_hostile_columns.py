"""The offline model's typo fix puts a received data file's column name into the user's cell as
Python reads it: a name holding the cell's quote, a backslash or a line break is written as a
literal of its own, one that is no identifier is indexed, never spliced in as code."""

from __future__ import annotations

import contextlib
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


@pytest.mark.parametrize(("cell", "column"), [
    # the typo also named inside a label string: the name's quote ended the label and the rest ran
    ("print(\"sum of 'quarterly_revenue_totl':\", df['quarterly_revenue_totl'].sum())",
     'quarterly_revenue_total"+str(print("PWNED"))+"'),
    ('print("df.quarterly_revenue_totl", df.quarterly_revenue_totl.sum())',
     "+str(print('PWNED'))+'quarterly_revenue_total'+"),
    # in an f-string's text: a brace in the name became a field
    ("print(f\"sum of 'quarterly_revenue_totl': {df['quarterly_revenue_totl'].sum()}\")",
     "quarterly_revenue_{print(chr(80)+'WNED')}"),
])
async def test_a_column_name_written_inside_another_string_of_the_cell_adds_no_code(
        tmp_path: Path, cell: str, column: str, capsys: pytest.CaptureFixture[str]) -> None:
    frame = pd.DataFrame({"region": ["north", "south"], column: [1.0, 2.0]})
    ns: dict[str, Any] = {"df": frame}
    calls, answer = await run(agent_on(ns, tmp_path), FIX.format(cell=4, error=failure(cell, ns)))
    capsys.readouterr()
    for call in calls:  # main: the corrected cell printed PWNED
        with contextlib.suppress(Exception):  # whatever it raises, it must not have run the name
            exec(code_of(call), {"df": frame.copy()})
        assert "PWNED" not in capsys.readouterr().out, code_of(call)
    assert not calls, [code_of(c) for c in calls]
    assert "I did not rewrite your cell" in answer, answer


@pytest.mark.parametrize(("cell", "column"), [
    ("print(\"sum of 'quarterly_revenue_totl':\", df['quarterly_revenue_totl'].sum())", "quarterly_revenue_total"),
    ("print(f\"sum of 'quarterly_revenue_totl': {df['quarterly_revenue_totl'].sum()}\")", "quarterly revenue total"),
    ('print("df.quarterly_revenue_totl", df.quarterly_revenue_totl.sum())', "quarterly_revenue_total"),
    ("x = df['''quarterly_revenue_totl'''].sum()\nprint(x)", "quarterly_revenue_total's"),
    ("%time df['quarterly_revenue_totl'].sum()", "quarterly revenue-total"),
])
async def test_an_ordinary_column_in_a_label_or_magic_cell_is_still_corrected(
        tmp_path: Path, cell: str, column: str) -> None:
    frame = pd.DataFrame({"region": ["north", "south"], column: [1.0, 2.0]})
    ns: dict[str, Any] = {"df": frame}
    source = cell.removeprefix("%time ")  # the error as the kernel ran it; the cell as the user wrote it
    error = failure(source, ns).replace(f"\n{source}\n", f"\n{cell}\n", 1)
    calls, answer = await run(agent_on(ns, tmp_path), FIX.format(cell=4, error=error))
    assert calls, answer
    assert "quarterly_revenue_totl" not in code_of(calls[-1]), code_of(calls[-1])
