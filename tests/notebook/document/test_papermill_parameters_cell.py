"""papermill's injected cell is compared by its variables, not as a context cell (docs/replay.md)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from nbagent.notebook.document.cell_log import context_cells, papermill_parameters, parameter_names

INJECTED = '# Parameters\nday = "2024-01-01"\nn = 17\n'


def shell(*cells: str) -> Any:
    return cast(Any, SimpleNamespace(user_ns={"In": ["", *cells]}))


def test_papermills_injected_cell_is_no_context_cell_but_its_names_are_inputs():
    sh = shell("n = 3", INJECTED)

    assert list(context_cells(sh, None).values()) == ["n = 3"]
    assert parameter_names(sh) == ["day", "n"]


def test_a_cell_of_code_under_a_parameters_comment_stays_a_context_cell():
    for source in ("# Parameters\nn = load()", "# Parameters\nn = 1\nprint(n)", "# Parameters\nn = [x]",
                   "# Parameters\na, b = 1, 2", "# Parameters here\nn = 1", "# Parameters\nn = ("):
        assert papermill_parameters(source) is None, source
        assert list(context_cells(shell(source), None).values()) == [source.splitlines()[0]]


def test_a_float_papermill_wrote_as_a_call_is_a_parameter_value():
    # papermill's translation of `-p x nan` / `inf` / `-inf`, also inside a list or dict parameter.
    source = "# Parameters\nx = float('nan')\nlimits = {\"low\": float('-inf'), \"high\": [float('inf'), 1]}\n"

    assert papermill_parameters(source) == ["x", "limits"]
    assert context_cells(shell(source), None) == {}


def test_other_calls_under_a_parameters_comment_stay_code():
    for source in ("# Parameters\nx = float('1e3')", "# Parameters\nx = float(y)", "# Parameters\nx = int('nan')",
                   "# Parameters\nx = float('nan', 1)", "# Parameters\nx = float(x='nan')"):
        assert papermill_parameters(source) is None, source
