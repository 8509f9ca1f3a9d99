"""An unattended run runs each cell as it was queued, as JupyterLab's Run All does (it sends every
queued cell's source at once): the model's ``notebook_edit`` of a cell below its agent cell is not
what the run executes (attacker pass 16). nbclient read a cell's source when it reached it, so a
model allowed only ``notebook_edit`` (``nbagent.batch --notebook --allow notebook_edit``, where every
question is denied) got its code run by rewriting a template cell. (A replace of a cell the agent did
not make now asks each time, so the rewrite below is allowed by autorun's answer to that question,
as the notebook's author may have it answered.)"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import nbformat
import pytest
from nbformat import NotebookNode

from nbagent.notebook.autorun import as_queued
from nbagent.notebook.document.nbformat_frontend import NotebookDocument
from tests.notebook.support import stream_texts

SETUP = '''import nbagent
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply
s = nbagent.notebook.magics.active_magics().new_session(allow=("notebook_edit",))
s.agent.simulated_api.responder = ScriptedResponder([
    tool_reply("notebook_read", {}),
    tool_reply("notebook_edit", EDIT),
    text_reply("Done."),
])'''


def _template(path: Path, edit: Mapping[str, object]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"EDIT = {edit!r}\n" + SETUP),
                nbformat.v4.new_code_cell("%%agent\nSummarise the data."),
                nbformat.v4.new_markdown_cell("A note."),
                nbformat.v4.new_code_cell("print('template summary')")]
    nb.cells[2]["id"], nb.cells[3]["id"] = "note", "summary"
    nbformat.write(nb, str(path))
    return path


@pytest.mark.kernel
def test_a_cell_the_model_rewrote_below_its_agent_cell_runs_as_it_was_queued(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nbclient")
    from nbagent.notebook.autorun import run_notebook

    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # the offline simulated API
    rewrite = {"action": "replace", "cell_id": "summary", "source": "print('MODEL CODE RAN')"}
    to_code = {"action": "replace", "cell_id": "note", "cell_type": "code", "source": "print('MODEL CODE RAN')"}
    for name, edit in (("rewrite", rewrite), ("to_code", to_code)):
        src = _template(tmp_path / f"{name}.ipynb", edit)
        out = run_notebook(src, tmp_path / f"{name}-out.ipynb", kernel_name="nbagent", timeout=120)  # Allow: the edit
        nbformat.validate(nbformat.read(str(tmp_path / f"{name}-out.ipynb"), as_version=4))
        # Joined as a front-end shows them: one print can arrive as two stream messages.
        texts = [t for c in out.cells if c.cell_type == "code" for t in stream_texts(c.outputs)]
        assert "MODEL CODE RAN\n" not in texts, name  # on the old code the model's code ran
        assert "template summary\n" in texts, name  # the template's cell ran, as queued
        assert any(c.source == "print('MODEL CODE RAN')" for c in out.cells), name  # the model's edit is kept


def test_as_queued_keeps_what_a_cell_was_rewritten_to_while_it_ran() -> None:
    cell = nbformat.v4.new_code_cell("print('queued')")
    queued = (cell.cell_type, cell.source)
    cell.source = "print('edited before it ran')"
    with as_queued(cell, queued):
        assert cell.source == "print('queued')"  # what runs
    assert cell.source == "print('edited before it ran')"
    with as_queued(cell, queued):
        cell.source = "print('edited while it ran')"  # the agent cell's own turn rewrote it
    assert cell.source == "print('edited while it ran')"


def _document(*cells: dict[str, object]) -> tuple[NotebookDocument, list[str], NotebookNode]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.from_dict(c) for c in cells]
    return NotebookDocument(nb.cells, "nb.ipynb", nbformat.from_dict), [c["id"] for c in nb.cells], nb


def test_a_code_cell_made_markdown_while_queued_runs_as_queued_and_keeps_no_outputs() -> None:
    cell = nbformat.v4.new_code_cell("print('queued')")
    queued = (cell.cell_type, cell.source)
    doc, (cell_id,), nb = _document(cell)
    doc.answer({"type": "request", "id": 1, "op": "replace", "cell_id": cell_id, "cell_type": "markdown", "source": "# note"})
    cell = nb.cells[0]
    with as_queued(cell, queued):
        assert (cell["cell_type"], cell["source"]) == queued  # what runs, as under Run All
        cell["outputs"], cell["execution_count"] = [nbformat.v4.new_output("stream", text="queued\n")], 1
    nbformat.validate(nbformat.from_dict({**nbformat.v4.new_notebook(), "cells": [cell]}))
    assert (cell["cell_type"], cell["source"]) == ("markdown", "# note") and "outputs" not in cell


CHAINED = '''import nbagent
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply
s = nbagent.notebook.magics.active_magics().new_session(allow=("notebook_edit",))
s.agent.simulated_api.responder = ScriptedResponder([
    tool_reply("notebook_read", {}),
    tool_reply("notebook_edit", {"action": "replace", "cell_id": "second", "source": "%%agent\\nGo on."}),
    text_reply("Done."),
    tool_reply("python", {"code": "print('MODEL', 'CODE', 'RAN')"}),
    text_reply("Done too."),
])'''


@pytest.mark.kernel
def test_a_cell_the_model_rewrote_keeps_the_buttons_it_was_queued_with(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The first agent cell's model, allowed only notebook_edit, rewrote the second agent cell: the
    replace put its own mark in the cell's ``nbagent`` metadata, dropping the author's ``click:
    ["Deny"]``, and autorun pressed Allow on the second cell's python call (review of atk16)."""
    pytest.importorskip("nbclient")
    from nbagent.notebook.autorun import run_notebook

    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # the offline simulated API
    deny = {"nbagent": {"click": ["Deny"]}}
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(CHAINED), nbformat.v4.new_code_cell("%%agent\nTidy the notebook."),
                nbformat.v4.new_code_cell("%%agent\nSummarise.", metadata=deny)]  # the first cell's edit: Allow
    nb.cells[2]["id"] = "second"
    nbformat.write(nb, str(tmp_path / "t.ipynb"))
    out = run_notebook(tmp_path / "t.ipynb", kernel_name="nbagent", timeout=120)  # autorun: Allow unless a cell says
    assert "nbagent" in out.cells[2].metadata and "click" not in out.cells[2].metadata["nbagent"]  # the model's mark
    texts = [str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for c in out.cells
             if c.cell_type == "code" for o in c.outputs]
    assert not any("MODEL CODE RAN" in t for t in texts)  # its output (the card shows the code, not this)
