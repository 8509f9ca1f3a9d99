"""The issue's reproduction, through nbclient (what Run All, nbconvert and papermill do): a notebook
whose agent cell answers from ``sales = pd.read_csv('sales.csv')`` is recorded; one row of the CSV
changes; Run All must not show the old answer as current."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tests.notebook.support import cell_text

pytestmark = pytest.mark.kernel

QUESTION = "Which region has the largest total revenue in sales?"
ROWS = "region,revenue\nnorth,262\nsouth,100\nwest,50\nnorth,0\n"  # whole numbers: a total said as pandas prints it, (262)
CHANGED = ROWS.replace("west,50", "west,871.5")
WARNING = "`sales` changed since this answer was recorded: add --live to ask again."


def notebook(policy: str | None = None) -> Any:
    setup = "%load_ext nbagent\n%config AgentMagics.allow = ['python']"
    if policy is not None:
        setup += f"\n%config AgentMagics.replay_if_changed = '{policy}'"
    cells = [setup, "import pandas as pd\nsales = pd.read_csv('sales.csv')", f"%%agent\n{QUESTION}",
             "totals = sales.groupby('region').revenue.sum()\nprint(totals.idxmax(), totals.max())"]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


def run(cwd: Path, policy: str | None = None) -> Any:
    nb = notebook(policy)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def text(cell: Any) -> str:
    """The cell's outputs as text (one print can arrive as several stream messages: joined)."""
    return cell_text(cell)


@pytest.fixture
def recorded(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline simulated model answers
    (tmp_path / "sales.csv").write_text(ROWS)
    live = run(tmp_path)
    assert "north has the largest total revenue (262)" in text(live.cells[2])
    return tmp_path


def test_unchanged_inputs_replay_silently_as_before(recorded):
    again = run(recorded)
    out = text(again.cells[2])
    assert "replayed: session" in out and "changed since" not in out
    assert "north has the largest total revenue (262)" in out


def test_one_changed_row_makes_the_replayed_cell_say_so(recorded):
    (recorded / "sales.csv").write_text(CHANGED)
    again = run(recorded)
    out = text(again.cells[2])
    assert "replayed: session" in out and WARNING in out
    assert out.index(WARNING) < out.index("north has the largest")  # said before the old answer
    assert "west 871.5" in text(again.cells[3])


def test_under_the_fail_policy_the_agent_cell_fails(recorded):
    (recorded / "sales.csv").write_text(CHANGED)
    with pytest.raises(CellExecutionError) as failed:
        run(recorded, policy="fail")
    assert failed.value.ename == "ReplayInputsChanged" and "`sales` changed since" in failed.value.evalue


def test_under_the_live_policy_the_model_answers_from_the_new_data(recorded):
    (recorded / "sales.csv").write_text(CHANGED)
    again = run(recorded, policy="live")
    out = text(again.cells[2])
    assert "replayed: session" not in out and "asking the model again" in out
    assert "west has the largest total revenue (871.50)" in out
