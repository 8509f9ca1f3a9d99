"""The recent inputs the model is told are the cells as the user typed them (``%agent help``,
``!ls``), not IPython's translation (``get_ipython().run_line_magic('agent', 'help')``)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.notebook.session import kernel_facts_from


@pytest.fixture
def ip() -> Iterator[Any]:
    shell = InteractiveShell.instance()
    with capture_output():
        shell.run_cell("%load_ext nbagent")  # %agent exists
    yield shell


def test_recent_inputs_are_the_raw_cells(ip: Any) -> None:
    cells = ["x = 1", "%time y = x + 1", "!echo hi", "%agent help"]
    with capture_output():
        for cell in cells:
            ip.run_cell(cell, store_history=True)
    inputs = kernel_facts_from(ip)().inputs
    assert list(inputs[-4:]) == cells
    assert not any("get_ipython()" in s for s in inputs)
