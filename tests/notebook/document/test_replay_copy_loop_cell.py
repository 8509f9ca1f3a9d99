"""A copy of a notebook (File > Duplicate, or saved under another name) replays the original's
record, as docs/replay.md says; but a cell whose code asks several prompts (notebook 02's
``run_agent_cell`` loop) carries only its last prompt's record, so in the copy its first prompt
found no record of this notebook and every prompt asked the model again, saying "its last run did
not finish and record one". It now replays from the record the cell's own metadata names."""

from __future__ import annotations

import shutil

import pytest

from nbagent.notebook.autorun import run_notebook

from .test_replay_changed_nbclient import text

pytestmark = pytest.mark.kernel

LOOP = ("import nbagent\nmagics = nbagent.notebook.magics.active_magics()\n"
        "magics.new_session(allow=('python',))\n"
        "for p in ['What is 17 * 23?', 'What is 2 * 4?']:\n"
        "    await nbagent.notebook.magics.run_agent_cell('', p)")


def test_a_copy_of_a_notebook_replays_every_prompt_of_a_loop_cell(tmp_path, monkeypatch):
    import nbformat

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline simulated model answers
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%load_ext nbagent"), nbformat.v4.new_code_cell(LOOP)])
    nbformat.write(nb, str(tmp_path / "original.ipynb"))
    first = run_notebook(tmp_path / "original.ipynb", tmp_path / "original.out.ipynb", kernel_name="python3",
                         timeout=120, cwd=tmp_path)
    assert "replayed: session" not in text(first.cells[1]) and "17 * 23 = 391" in text(first.cells[1])
    shutil.copy(tmp_path / "original.out.ipynb", tmp_path / "copy.ipynb")  # saved, then duplicated
    again = run_notebook(tmp_path / "copy.ipynb", tmp_path / "copy.out.ipynb", kernel_name="python3", timeout=120,
                         cwd=tmp_path)
    out = text(again.cells[1])
    assert out.count("replayed: session") == 2, out
    assert "did not finish" not in out and "17 * 23 = 391" in out
