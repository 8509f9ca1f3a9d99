"""Replay through nbclient: a notebook recorded against a loopback simulated API (with faults and a
retry) runs again with no key and no request, showing the same text, tables and notices; editing
one prompt makes exactly that turn and the later ones live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from nbagent.providers.simulated.app import SimulatedAPI
from nbagent.providers.simulated.faults import FaultSchedule
from nbagent.providers.simulated.server import LoopbackServer
from tests.notebook.support import cell_text

pytestmark = pytest.mark.kernel

PROMPTS = ["what is 17 * 23? use python", "what is 391 + 5?", "what is 396 * 2?"]
SETUP = "%load_ext nbagent\n%config AgentMagics.allow = ['python']\n%config AgentMagics.provider = 'auto'"
# Lines about this kernel rather than the record (which model a live run would use; the replay mark;
# that a headless run found no record to replay).
NOT_RECORDED = ("⟲ replayed: session", "ℹ No ANTHROPIC_API_KEY", "ⓘ no notebook bridge", "ⓘ no recorded answer")


def notebook(prompts: list[str]) -> Any:
    cells = [nbformat.v4.new_code_cell(SETUP)] + [nbformat.v4.new_code_cell(f"%%agent\n{p}") for p in prompts]
    return nbformat.v4.new_notebook(cells=cells)


def run(nb: Any, cwd: Path, kernel: str) -> Any:
    NotebookClient(nb, timeout=120, kernel_name=kernel, resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def shown(cell: Any) -> str:
    lines = cell_text(cell).splitlines()  # one print's stream messages joined, as a front-end shows them
    return "\n".join(line for line in lines if not line.startswith(NOT_RECORDED)).strip()


@pytest.fixture
def api(monkeypatch):
    simulated = SimulatedAPI(faults=FaultSchedule.parse("2=overloaded,5=rate_limit"))
    with LoopbackServer(simulated) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-loopback-test")
        yield simulated


@pytest.mark.parametrize("kernel", ["python3", "nbagent"])
def test_run_all_replays_a_recorded_notebook_with_no_key_and_no_request(api, tmp_path, monkeypatch, kernel):
    recorded = run(notebook(PROMPTS), tmp_path, kernel)
    requests = api.request_count
    assert requests >= 6 and "retry" in "\n".join(shown(c) for c in recorded.cells[1:]).lower()
    first = recorded.cells[1].outputs[0]  # a headless run with no record says so before it asks
    assert first.data["text/plain"].startswith("ⓘ no recorded answer for this cell here")

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = run(notebook(PROMPTS), tmp_path, kernel)

    assert api.request_count == requests
    for live, again in zip(recorded.cells[1:], replayed.cells[1:], strict=True):
        assert "replayed: session" in str(again.outputs)
        assert shown(again) == shown(live)


def test_an_edited_prompt_makes_that_turn_and_the_later_ones_live(api, tmp_path):
    run(notebook(PROMPTS), tmp_path, "python3")
    requests = api.request_count

    edited = run(notebook([PROMPTS[0], "what is 391 + 7?", PROMPTS[2]]), tmp_path, "python3")

    replayed = ["replayed: session" in str(c.outputs) for c in edited.cells[1:]]
    assert replayed == [True, False, False]
    assert api.request_count > requests
    assert "398" in shown(edited.cells[2])  # the edited prompt was answered live
    # The later recorded cell says why it asks (it went live with no line before: no metadata headless).
    assert ("ⓘ this cell's recorded answer (turn 3) is not replayed: an agent cell before it asked the model in "
            "this kernel") in str(edited.cells[3].outputs)


def test_after_run_all_replays_status_describes_the_replayed_session(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    nb = notebook(PROMPTS[:1])
    nb.cells.append(nbformat.v4.new_code_cell("%agent status"))
    run(nb, tmp_path, "python3")
    again = notebook(PROMPTS[:1])
    again.cells.append(nbformat.v4.new_code_cell("%agent status"))

    run(again, tmp_path, "python3")

    status = shown(again.cells[2])
    replayed = str(again.cells[1].outputs)
    assert "replayed: session" in replayed and "No ANTHROPIC_API_KEY" not in replayed  # the live kernel's notice
    assert "no session yet" not in status and "turns        1" in status and "1 turn(s) shown" in status


def test_a_headless_run_that_goes_live_never_writes_the_record_of_a_named_notebook(api, tmp_path, monkeypatch):
    from nbagent.engine.disk.persist import read_json
    from nbagent.notebook.document.replay import ReplayIndex

    monkeypatch.setenv("JPY_SESSION_NAME", "nb.ipynb")  # recorded under Jupyter Server, which names the notebook
    nbformat.write(notebook(PROMPTS), str(tmp_path / "nb.ipynb"))  # the file (headless replay checks it holds the cells)
    run(notebook(PROMPTS[:2]), tmp_path, "python3")
    indexes = tmp_path / ".nbagent" / "replay"
    [original] = [ReplayIndex.from_json(read_json(p)) for p in indexes.glob("*.json")]
    monkeypatch.delenv("JPY_SESSION_NAME")  # nbconvert --execute of the notebook or a copy of it: no name

    again = run(notebook(PROMPTS), tmp_path, "python3")

    assert ["replayed: session" in str(c.outputs) for c in again.cells[1:]] == [True, True, False]
    after = {i.session: i for i in (ReplayIndex.from_json(read_json(p)) for p in indexes.glob("*.json"))}
    assert after[original.session] == original  # the record stays whole
    [copy] = [i for name, i in after.items() if name != original.session]
    # Named after the one notebook of the folder that holds these cells (see document/headless.py).
    assert [t.prompt for t in copy.turns] == PROMPTS and copy.notebook == "nb.ipynb"


CODE_SESSION = "import nbagent\ns = nbagent.notebook.magics.active_magics().new_session()"


def test_a_session_made_in_code_still_replays_and_says_when_it_asks(api, tmp_path, monkeypatch):
    """Notebook 04 makes its session in a cell (to reach ``s.agent``): a headless Run All of it
    replays the record like any other notebook, and says so before it asks when there is none."""
    def made_in_code(prompts: list[str]) -> Any:
        nb = notebook(prompts)
        nb.cells.insert(1, nbformat.v4.new_code_cell(CODE_SESSION))
        return nb

    recorded = run(made_in_code(PROMPTS[:2]), tmp_path, "python3")
    requests = api.request_count
    assert recorded.cells[2].outputs[0].data["text/plain"].startswith("ⓘ no recorded answer for this cell here")

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = run(made_in_code(PROMPTS[:2]), tmp_path, "python3")

    assert api.request_count == requests
    assert ["replayed: session" in str(c.outputs) for c in replayed.cells[2:]] == [True, True]
