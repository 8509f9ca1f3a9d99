"""An agent cell run again in JupyterLab (turn 2 replaced turn 1's answer in the notebook), then the
notebook run headless (nbconvert --execute, papermill, nbclient: no cell ids, no metadata): the
cell replays the answer the notebook shows, and the agent cell below it replays its own turn
(newcomer pass 19: the headless run showed the replaced turn-1 answer as current, and every agent
cell below then found no next turn for its prompt and asked the model)."""

from __future__ import annotations

from typing import Any

import nbformat

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import bridge, cell_run, command_replay, headless, link, live_lines, lookup, recording, replayed
from nbagent.notebook.document.bridge import Bridge

from . import test_replay_from_notebook
from .test_replay_from_notebook import Lab

lab = test_replay_from_notebook.lab  # the in-process JupyterLab kernel (fixture)
NEXT = "%%agent\nwhat is 6 * 7? use python"


def _headless(lab: Lab, monkeypatch: Any) -> None:
    """A fresh kernel that nbclient drives: no front-end, no cell ids, no metadata, the cell's text."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c["source"]) for c in lab.front.cells])
    nbformat.write(nb, lab.tmp_path / "analysis.ipynb")  # the record names the notebook; it is in the folder
    # What nbclient sends: the cell's text, no id, no metadata (the fixture's patches undone too).
    monkeypatch.setattr(bridge, "executing_request", lambda: {"content": {"code": lab.executing and lab.executing["source"]}})
    for module in (link, recording, cell_run, command_replay, replayed):
        monkeypatch.setattr(module, "executing_cell_id", lambda: None)
    for module in (link, lookup, replayed, command_replay):
        monkeypatch.setattr(module, "executing_metadata", lambda: {})
    for module in (link, lookup):
        monkeypatch.setattr(module, "in_kernel", lambda: True)  # a kernel nbclient drives, not a terminal
    for module in (link, lookup, headless):
        monkeypatch.setattr(module, "executing_code", lambda: lab.executing and lab.executing["source"])
    magics = magics_mod.active_magics()
    if magics.current is not None:
        magics.current.agent.close()
    magics.current = None
    magics._document = link.DocumentLink(the_bridge=Bridge())


def test_a_cell_run_again_replays_headless_the_answer_the_notebook_shows(lab, monkeypatch):
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": NEXT,
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.run()
    lab.run()  # the same agent cell again: turn 2 replaces turn 1's answer
    later = next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-next")
    assert "42" in lab.run(later)  # turn 3
    agents = [i for i, c in enumerate(lab.front.cells) if c["source"].startswith("%%agent")]
    _headless(lab, monkeypatch)

    first, second = (lab.run(i) for i in agents)

    assert ", turn 2 (no request sent)" in first and ", turn 1 " not in first, first
    assert ", turn 3 (no request sent)" in second and "asking the model" not in second, second
    assert magics_mod.active_magics().current is None  # nothing asked the model


def test_a_cell_run_again_after_the_cell_below_replays_headless_its_last_answer_and_the_cell_below_asks(
        lab, monkeypatch):
    """Run All (turns 1 and 2), then the first agent cell again (turn 3): JupyterLab's replay shows
    turn 3 and asks the model for the cell below (its answer followed turn 1); headless showed turn 1,
    the replaced answer, as current."""
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": NEXT,
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.run()
    later = next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-next")
    lab.run(later)  # turn 2
    lab.run()  # the first cell again: turn 3
    agents = [i for i, c in enumerate(lab.front.cells) if c["source"].startswith("%%agent")]
    _headless(lab, monkeypatch)

    first, second = (lab.run(i) for i in agents)

    assert ", turn 3 (no request sent)" in first and ", turn 1 " not in first, first
    assert "replayed: session" not in second and "42" in second
    assert live_lines.PAST_RECORD_LINE in second  # never a silent live run


def test_two_cells_of_one_id_replay_headless_each_its_own_answer(lab, monkeypatch):
    """Cut, Undo, Paste in JupyterLab makes two cells of one id (a pasted cut cell keeps its id), both
    asking the same prompt (turns 1 and 2). Headless, the first took turn 2 as its own "run again"
    (review of newcomer pass 19): it showed the second cell's answer, and the second cell asked the
    model on every CI run. Both replay, each its own turn, as before that pass."""
    first = lab.front.cells[0]
    lab.front.cells.append(dict(first, metadata={}, outputs=[]))  # the same id and text
    lab.run(0)
    lab.run(len(lab.front.cells) - 1)  # the pasted cell, below the cells the first one's turn made
    agents = [i for i, c in enumerate(lab.front.cells) if c["source"].startswith("%%agent")]
    _headless(lab, monkeypatch)

    one, two = (lab.run(i) for i in agents)

    assert ", turn 1 (no request sent)" in one, one
    assert ", turn 2 (no request sent)" in two and "asking the model" not in two, two
    assert magics_mod.active_magics().current is None  # nothing asked the model


def test_a_loop_of_prompts_under_another_cell_magic_replays_headless_each_turn(lab, monkeypatch):
    """A cell that asks several prompts in a loop (notebook 02's), under ``%%capture`` (or ``%%time``),
    one of them twice: headless, its first prompt jumped to the later turn of the same prompt as if
    the cell had been run again (review of newcomer pass 19), and the rest of the loop asked the model."""
    lab.front.cells[0]["source"] = (
        "%%capture out\nfor q in ['what is 17 * 23? use python', 'what is 6 * 7? use python', "
        "'what is 17 * 23? use python']:\n    get_ipython().run_cell_magic('agent', '', q)\n")
    lab.run(0)
    _headless(lab, monkeypatch)

    lab.run(0)

    out = lab.ip.user_ns["out"]
    text = out.stdout + "\n".join(o.data.get("text/plain", "") for o in out.outputs)
    assert all(f", turn {n} (no request sent)" in text for n in (1, 2, 3)), text
    assert "asking the model" not in text and magics_mod.active_magics().current is None
