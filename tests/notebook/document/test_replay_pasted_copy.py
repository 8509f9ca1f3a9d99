"""A copy of an agent cell the user pasted among the recorded ones (Copy, Paste; or Duplicate): the
copy carries the original's record under a new id. Under Restart & Run All the original replays and
the copy asks the model — and says why before it asks, wherever it sits, as a copy run first in a
fresh kernel does (newcomer pass 16: below a replayed cell it asked silently)."""

from __future__ import annotations

import json

from nbagent.notebook.document import live_lines

from . import test_replay_from_notebook
from .test_replay_copy import SECOND, _add, _at, _run

lab = test_replay_from_notebook.lab  # the in-process JupyterLab kernel (fixture)


def _paste_copy_of_first_before(lab, cell_id: str) -> None:
    pasted = json.loads(json.dumps(lab.front.cells[0]))
    pasted["id"] = "c-pasted"
    lab.front.cells.insert(_at(lab, cell_id), pasted)


def test_a_copy_pasted_below_a_replayed_cell_says_it_is_a_copy_before_it_asks(lab):
    _add(lab, "c-q2", f"%%agent\n{SECOND}")
    lab.run()
    _run(lab, "c-q2")
    _paste_copy_of_first_before(lab, "c-q2")
    lab.restart()  # Restart & Run All

    first, copy, second = lab.run(), _run(lab, "c-pasted"), _run(lab, "c-q2")

    assert "replayed: session" in first
    assert "391" in copy and "replayed: session" not in copy
    assert live_lines.COPIED_LINE in copy and copy.index(live_lines.COPIED_LINE) < copy.index("nbagent · ")
    assert live_lines.AFTER_LIVE_LINE.format(turn=2) in second


def test_the_copys_own_answer_replays_at_the_next_restart_and_run_all(lab):
    _add(lab, "c-q2", f"%%agent\n{SECOND}")
    lab.run()
    _run(lab, "c-q2")
    _paste_copy_of_first_before(lab, "c-q2")
    lab.restart()
    for cell_id in ("c1", "c-pasted", "c-q2"):  # the copy asks once, and records its own answer
        _run(lab, cell_id)
    lab.restart()

    outs = [lab.run(), _run(lab, "c-pasted"), _run(lab, "c-q2")]

    assert all("replayed: session" in out for out in outs)
    assert all(live_lines.COPIED_LINE not in out for out in outs)
