"""A headless run (nbclient, papermill, nbconvert) of an agent cell with no recorded answer: no page
can show Allow / Deny, so a tool call that would ask is denied at once and the run ends there: the
cell fails with one line saying how to allow the tool up front (the model is not sent another
request nobody sees). The kernel never waits for a click that cannot come."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tests.notebook.support import output_texts

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("kernel", ["python3", "nbagent"])
def test_a_never_run_agent_notebook_run_headless_stops_at_the_prompt_without_waiting(tmp_path, monkeypatch, kernel):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the embedded simulated model, on loopback
    cells = ["%load_ext nbagent", "%%agent\nwhat is 17 * 23? use python", "print('END')"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    # The old behaviour waited for a click until nbclient's timeout: a bounded run says it ended.
    with pytest.raises(CellExecutionError) as failed:
        NotebookClient(nb, timeout=90, kernel_name=kernel, resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert "AgentRunFailed: the agent run stopped at a permission prompt nobody could see" in str(failed.value)
    assert "%%agent --allow python" in str(failed.value)
    shown = "\n".join(output_texts(nb.cells[1].outputs))
    assert "Denied without asking, and the run stopped here: nobody could see Allow / Deny" in shown, shown
    assert nb.cells[2].outputs == []  # Run All stops at the failed cell, as at any failed cell
