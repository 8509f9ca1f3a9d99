"""A notebook recorded headless, saved with its outputs (``nbconvert --execute --inplace``), then run
by papermill with parameters: the agent cell replays with no request, flagged only where what it
was based on changed.

Was: the live turn recorded the folder's notebooks as files its answer read (nbagent's own look for
which notebook holds the executing cell), so saving the notebook, or editing another one of the
folder, flagged every replayed answer as changed ("⚠ nb.ipynb changed since this answer was
recorded"), and ``--if-changed fail`` failed the cell.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from nbagent.providers.simulated.app import SimulatedAPI
from nbagent.providers.simulated.server import LoopbackServer
from tests.notebook.support import cell_text

papermill = pytest.importorskip("papermill")

pytestmark = pytest.mark.kernel

SETUP = "%load_ext nbagent\n%config AgentMagics.allow = ['python']"
PROMPT = "%%agent\nwhat is n * 23? use python"


def notebook() -> Any:
    parameters = nbformat.v4.new_code_cell("n = 17")
    parameters.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SETUP), parameters,
                                         nbformat.v4.new_code_cell(PROMPT)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


@pytest.fixture
def recorded(tmp_path, monkeypatch) -> Any:
    """A folder whose nb.ipynb was run headless live, then saved in place with its outputs."""
    api = SimulatedAPI()
    with LoopbackServer(api) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-loopback-test")  # a live turn would be sent, and counted
        nb = notebook()
        nbformat.write(nb, str(tmp_path / "nb.ipynb"))
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
        nbformat.write(nb, str(tmp_path / "nb.ipynb"))  # as nbconvert --execute --inplace does
        assert api.request_count >= 1
        yield api


def papermill_run(folder: Path, output: str, n: int, parameters: dict[str, object] | None = None) -> Any:
    """``parameters``: papermill's ``-p`` (default: ``n`` alone; ``{}``: none at all)."""
    given = {"n": n} if parameters is None else parameters
    papermill.execute_notebook(str(folder / "nb.ipynb"), str(folder / output), parameters=given,
                               cwd=str(folder), kernel_name="python3", progress_bar=False, execution_timeout=120)
    return nbformat.read(str(folder / output), as_version=4)


def agent_cell(nb: Any) -> str:
    [cell] = [c for c in nb.cells if c.source.startswith("%%agent")]
    return cell_text(cell)


def test_a_notebook_saved_after_its_headless_record_replays_as_current(recorded, tmp_path):
    requests = recorded.request_count

    out = papermill_run(tmp_path, "out.ipynb", 17)  # the same value: only papermill's injected cell is new

    text = agent_cell(out)
    assert "replayed: session" in text and "changed since this answer was recorded" not in text
    assert recorded.request_count == requests


def test_papermill_with_another_parameter_flags_the_replay_by_the_variable_that_changed(recorded, tmp_path):
    requests = recorded.request_count
    papermill_run(tmp_path, "first.ipynb", 17)  # a papermill output beside the notebook: not another notebook

    out = papermill_run(tmp_path, "second.ipynb", 19)

    text = agent_cell(out)
    assert "replayed: session" in text
    assert "⚠ `n` changed since this answer was recorded" in text  # the variable, not the notebook file
    assert recorded.request_count == requests


def notebook_with_day() -> Any:
    nb = notebook()
    nb.cells[1].source = 'n = 17\nday = "2024-01-01"'
    nb.cells[2].source = "%%agent --if-changed fail\nwhat is n * 23? use python"
    return nb


@pytest.fixture
def recorded_by_papermill(tmp_path, monkeypatch) -> Any:
    """A folder whose nb.ipynb was run live by papermill itself, with its parameters injected."""
    api = SimulatedAPI()
    with LoopbackServer(api) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-loopback-test")
        nbformat.write(notebook_with_day(), str(tmp_path / "nb.ipynb"))
        papermill.execute_notebook(str(tmp_path / "nb.ipynb"), str(tmp_path / "live.ipynb"),
                                   parameters={"day": "2024-01-01", "n": 17}, cwd=str(tmp_path),
                                   kernel_name="python3", progress_bar=False, execution_timeout=120)
        assert api.request_count >= 1
        yield api


def test_a_papermill_record_replays_a_run_with_the_same_values_however_given(recorded_by_papermill, tmp_path):
    # Was: the injected cell was a context cell: without -p (the same defaults), or with the values
    # in another order, "⚠ the cell `# Parameters` changed" (and --if-changed fail failed the run).
    requests = recorded_by_papermill.request_count

    plain = papermill_run(tmp_path, "plain.ipynb", 17, {})  # no -p: the parameters cell's own values
    reordered = papermill_run(tmp_path, "reordered.ipynb", 17, {"day": "2024-01-01"})

    for out in (plain, reordered):
        text = agent_cell(out)
        assert "replayed: session" in text and "changed since this answer was recorded" not in text
    assert recorded_by_papermill.request_count == requests


def test_a_papermill_record_flags_a_string_parameter_by_its_content(recorded_by_papermill, tmp_path):
    # The same length, another day: a string described in a line is compared by its length only.
    with pytest.raises(papermill.PapermillExecutionError, match="`day` changed since this answer was recorded"):
        papermill_run(tmp_path, "other.ipynb", 17, {"day": "2024-02-01"})
