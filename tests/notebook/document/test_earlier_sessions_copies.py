"""Which earlier sessions ``%agent cost`` adds as "cut short by a kernel restart": only a session
whose billed request a restart cut short. A copy of the notebook (File > Duplicate) that only
replayed the original's record and rolled it back forked a copy of it (its money copied with it)
and spent nothing: its next kernel must not add the original's money as its own."""

from __future__ import annotations

from nbagent.notebook.document import earlier

from . import test_replay_from_notebook
from .test_replay_copy import SECOND, _add, _line, _run
from .test_replay_from_notebook import Lab

lab = test_replay_from_notebook.lab  # the in-process JupyterLab kernel (fixture)

THIRD = "what is 5 * 5? use python"


def test_a_copy_that_only_replayed_and_rolled_back_never_adds_the_originals_money_as_cut_short(lab: Lab, monkeypatch):
    monkeypatch.setattr(earlier, "_made_here", lambda session: False)  # each restart: another kernel
    _add(lab, "c-q2", f"%%agent\n{SECOND}")
    lab.run()
    _run(lab, "c-q2")
    lab.restart("analysis-Copy1.ipynb")  # the duplicate, opened and Run All: replays, spends nothing
    assert "replayed: session" in lab.run() and "replayed: session" in _run(lab, "c-q2")
    assert "rolled back" in _line(lab, "%agent rollback 0")
    lab.restart("analysis-Copy1.ipynb")
    _add(lab, "c-q3", f"%%agent --new\n{THIRD}")
    assert "25" in _run(lab, "c-q3")

    cost = _line(lab, "%agent cost")

    assert "cut short" not in cost, cost


def test_a_session_rolled_back_to_its_start_is_not_said_to_be_cut_short_by_a_restart(lab: Lab, monkeypatch):
    monkeypatch.setattr(earlier, "_made_here", lambda session: False)
    lab.run()
    assert "rolled back" in _line(lab, "%agent rollback 0")
    lab.restart()
    _add(lab, "c-q3", f"%%agent --new\n{THIRD}")
    assert "25" in _run(lab, "c-q3")

    cost = _line(lab, "%agent cost")

    assert "cut short" not in cost, cost
