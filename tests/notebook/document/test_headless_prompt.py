"""A headless run (nbclient, papermill, nbconvert) of an agent cell with no recorded answer: no page
can show Allow / Deny, so a tool call that would ask is denied at once and the cell ends; the kernel
never waits for a click that cannot come."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.notebook.support import output_texts, stream_texts

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("kernel", ["python3", "nbagent"])
def test_a_never_run_agent_notebook_runs_headless_to_the_end_without_waiting(tmp_path, monkeypatch, kernel):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the embedded simulated model, on loopback
    cells = ["%load_ext nbagent", "%%agent\nwhat is 17 * 23? use python", "print('END')"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    # The old behaviour waited for a click until nbclient's timeout: a bounded run says it ended.
    NotebookClient(nb, timeout=90, kernel_name=kernel, resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = "\n".join(output_texts(nb.cells[1].outputs))
    assert "Denied without asking: nobody could see Allow / Deny" in shown, shown
    # Joined as a front-end shows them: the one print can arrive as two stream messages.
    assert stream_texts(nb.cells[2].outputs) == ["END\n"]
