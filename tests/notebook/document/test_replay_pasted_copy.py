"""A copy of an agent cell the user pasted (Copy, Paste; or Duplicate) carries the original's record
under a new id. Run first, it asks the model — and says why before it asks wherever it sits, as a copy
run first in a fresh kernel does (newcomer pass 16: below a replayed cell, or after another copy that
asked, it asked silently); from then on its answer is its own record and replays."""

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


def test_every_agent_cell_pasted_into_another_notebook_says_it_is_a_copy(lab):
    """Select the notebook's cells, Copy, Paste into a new notebook of the folder, Run All: every agent
    cell is a copy (new ids); the second asked silently after the first went live."""
    _add(lab, "c-q2", f"%%agent\n{SECOND}")
    lab.run()
    _run(lab, "c-q2")
    for cell in lab.front.cells:
        cell["id"] = f"pasted-{cell['id']}"
    lab.restart("second.ipynb")

    first, second = _run(lab, "pasted-c1"), _run(lab, "pasted-c-q2")

    assert "391" in first and "42" in second
    assert live_lines.COPIED_LINE in first and live_lines.COPIED_LINE in second
    assert second.index(live_lines.COPIED_LINE) < second.index("nbagent · ")


def test_an_agent_cell_merged_with_the_cell_below_says_its_prompt_was_edited_not_that_it_is_a_copy(lab):
    """Merge Cell Below on an agent cell (JupyterLab keeps the agent cell's metadata, its record
    included, under a new id, and the other cell's text joins the prompt): run, it asks the model as
    an edited prompt does, and says so; "a copy of another agent cell" would name a cell that is gone."""
    lab.run()
    merged = lab.front.cells[0]
    merged["id"], merged["source"] = "c-merged", f"{merged['source']}\n\n17 * 23"
    del lab.front.cells[1]

    out = _run(lab, "c-merged")

    assert live_lines.EDITED_LINE.format(turn=1) in out and live_lines.COPIED_LINE not in out


def _run_pasted_loop_copy(lab, monkeypatch, prompts: list[str]) -> str:
    """Notebook 02's loop cell asks ``prompts``, is pasted (a new id), and the copy runs in a fresh kernel
    with the metadata its execute request carries (the original's record, the same for every prompt)."""
    from nbagent.notebook.document import link, lookup

    lab.front.cells[0]["source"] = ("import nbagent\nfor p in PROMPTS:\n"
                                    "    await nbagent.notebook.magics.run_agent_cell('', p)")
    for module in (link, lookup):
        monkeypatch.setattr(module, "executing_code", lambda: lab.executing and lab.executing["source"])
    lab.ip.user_ns["PROMPTS"] = prompts
    lab.run()
    pasted = json.loads(json.dumps(lab.front.cells[0]))
    pasted["id"] = "c-pasted"
    lab.front.cells.append(pasted)
    lab.restart()
    sent = json.loads(json.dumps(pasted["metadata"]))  # the metadata the execute request carries
    for module in (link, lookup):
        monkeypatch.setattr(module, "executing_metadata", lambda: dict(sent, cellId="c-pasted"))
    return _run(lab, "c-pasted")


def test_a_pasted_copy_of_a_cell_asking_several_prompts_says_it_is_a_copy_not_that_a_prompt_was_edited(
        lab, monkeypatch):
    """Notebook 02's loop cell carries only its last prompt's record, so its first prompt differs from
    the record's: in a pasted copy (a new id) that prompt is a copy's, not an edited one."""
    out = _run_pasted_loop_copy(lab, monkeypatch, ["what is 2 * 3? use python", "what is 4 * 5? use python"])

    assert live_lines.COPIED_LINE in out.split("what is 4 * 5")[0]
    assert "was edited since" not in out


def test_a_pasted_copy_of_a_cell_asking_several_prompts_says_it_is_a_copy_once_not_before_each_prompt(
        lab, monkeypatch):
    """Every prompt of the copy's run reads the same metadata (the original's record): the line is said
    before the first request only (review of new16: it was said before each of notebook 02's twelve)."""
    prompts = ["what is 2 * 3? use python", "what is 4 * 5? use python", "what is 5 * 5? use python"]

    out = _run_pasted_loop_copy(lab, monkeypatch, prompts)

    assert "6" in out and "20" in out and "25" in out
    assert out.count(live_lines.COPIED_LINE) == 1 and out.index(live_lines.COPIED_LINE) < out.index("nbagent · ")
    assert "was edited since" not in out and "recorded answer (turn" not in out


def test_a_pasted_copy_of_an_agent_fix_cell_says_it_is_a_copy_not_that_its_prompt_was_edited(lab, monkeypatch):
    """A copy of an ``%agent fix`` cell (its record the fix of another failure) run for a new failure: its
    prompt is the failure nbagent sends, never typed; the request's code (``%agent fix``, not an agent
    cell) carrying another cell's record is a copy's, never "this cell's prompt was edited" (guard)."""
    from nbagent.notebook.document import link, lookup

    for module in (link, lookup):
        monkeypatch.setattr(module, "executing_code", lambda: lab.executing and lab.executing["source"])
    lab.front.cells[0]["source"] = "import pandas as pd\nsales = pd.DataFrame({'region': ['a'], 'revenue': [1.0]})"
    _add(lab, "c-broken", "sales.groupby('regoin')['revenue'].sum()")
    _add(lab, "c-fix", "%agent fix")
    lab.run()
    lab.run(_at(lab, "c-broken"), expect_error=True)
    assert "'region'" in _run(lab, "c-fix")
    pasted = json.loads(json.dumps(lab.front.cells[_at(lab, "c-fix")]))
    pasted["id"] = "c-fix-copy"
    _add(lab, "c-broken-2", "sales['revenu'].sum()")
    lab.front.cells.append(pasted)
    lab.run(_at(lab, "c-broken-2"), expect_error=True)

    out = _run(lab, "c-fix-copy")

    assert "was edited since" not in out and live_lines.COPIED_LINE in out
    assert out.index(live_lines.COPIED_LINE) < out.index("nbagent · ")
