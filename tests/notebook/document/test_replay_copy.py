"""A record is written only by the notebook that made it, and an undone turn never replays.

A copy of a notebook (File > Duplicate: the same cells, ids and metadata, another file name)
replays the original's record, but going live or rolling back there forks it: the original's
Run All still replays all of its turns, and its session folder is never locked by the copy's
kernel. A turn ``%agent rollback`` undid does not replay when a later prompt reuses its number,
and a rollback cell that Run All reaches in a replaying kernel cuts nothing recorded after it.
"""

from __future__ import annotations

import json

from IPython.utils.capture import capture_output

from nbagent.engine.disk.task_lock import FolderLock
from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document.replay import load_index, sessions_dir
from nbagent.notebook.document.replay_lines import ROLLED_BACK_LINE, UNDONE_CELLS_LINE

from . import test_replay_from_notebook
from .test_replay_from_notebook import QUESTION, Lab

lab = test_replay_from_notebook.lab  # the in-process JupyterLab kernel (fixture)

SECOND = "what is 6 * 7? use python"
THIRD = "what is 5 * 5? use python"


def _add(lab: Lab, cell_id: str, source: str) -> None:
    lab.front.cells.append({"cell_type": "code", "id": cell_id, "source": source, "metadata": {}, "outputs": [],
                            "execution_count": None})


def _at(lab: Lab, cell_id: str) -> int:
    return next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)


def _run(lab: Lab, cell_id: str) -> str:
    return lab.run(_at(lab, cell_id))


def _two_turns(lab: Lab) -> str:
    """Q1 and Q2 run live in analysis.ipynb: returns the record's session."""
    _add(lab, "c-q2", f"%%agent\n{SECOND}")
    lab.run()
    _run(lab, "c-q2")
    current = magics_mod.active_magics().current
    assert current is not None and current.agent.session.task_dir is not None
    return current.agent.session.task_dir.name


def _prompts(lab: Lab, session: str) -> list[str]:
    index = load_index(lab.tmp_path, session)
    assert index is not None
    return [t.prompt for t in index.turns]


def _unlocked(lab: Lab, session: str) -> bool:
    lock = FolderLock(sessions_dir(lab.tmp_path) / session)
    try:
        lock.acquire()
    except Exception:
        return False
    lock.release()
    return True


def _line(lab: Lab, line: str) -> str:
    with capture_output() as cap:
        result = lab.ip.run_cell(line)
    assert result.error_in_exec is None, result.error_in_exec
    return cap.stdout


def test_rolling_back_in_a_copy_of_a_notebook_leaves_the_originals_record_whole(lab):
    session = _two_turns(lab)
    lab.restart("analysis-Copy1.ipynb")  # the duplicate, opened and Run All
    assert "replayed: session" in lab.run() and "replayed: session" in _run(lab, "c-q2")
    original = {c["id"]: json.loads(json.dumps(c["metadata"])) for c in lab.front.cells}  # the original file's

    out = _line(lab, "%agent rollback 1")

    assert "rolled back to the end of turn 1" in out and "the record of analysis.ipynb stays whole" in out
    assert _prompts(lab, session) == [QUESTION, SECOND]
    assert _unlocked(lab, session)  # the copy's kernel, still running, does not hold the original's folder
    assert [c["metadata"].get("nbagent", {}).get("undone") for c in lab.front.cells if c["id"] == "c-q2"] == [True]
    for cell in lab.front.cells:  # the original is another file: the copy's rollback marked the copy's cells only
        cell["metadata"] = original.get(cell["id"], cell["metadata"])
    lab.restart()  # the original, Run All
    assert ", turn 1" in lab.run() and ", turn 2" in _run(lab, "c-q2")


def test_a_new_prompt_in_a_copy_goes_on_in_a_record_of_its_own(lab):
    session = _two_turns(lab)
    lab.restart("analysis-Copy1.ipynb")
    lab.run()
    _run(lab, "c-q2")
    _add(lab, "c-q3", f"%%agent\n{THIRD}")

    out = _run(lab, "c-q3")

    assert "replayed" not in out and "25" in out
    current = magics_mod.active_magics().current
    assert current is not None and current.agent.session.task_dir is not None
    copied = current.agent.session.task_dir.name
    assert copied != session and _prompts(lab, copied) == [QUESTION, SECOND, THIRD]
    copy_index = load_index(lab.tmp_path, copied)
    assert copy_index is not None and copy_index.notebook == "analysis-Copy1.ipynb"
    assert _prompts(lab, session) == [QUESTION, SECOND]
    assert _unlocked(lab, session)


def test_status_in_a_copy_never_locks_the_originals_record_and_the_copy_replays_on(lab):
    session = _two_turns(lab)
    lab.restart("analysis-Copy1.ipynb")
    lab.run()

    status = _line(lab, "%agent status")

    assert "replaying session" in status and "1 turn(s) shown" in status
    assert _unlocked(lab, session)
    assert "replayed: session" in _run(lab, "c-q2")


def test_an_undone_turn_whose_number_a_later_prompt_reused_is_not_replayed(lab):
    session = _two_turns(lab)
    _line(lab, "%agent rollback 1")  # the rollback cell deleted before saving
    _add(lab, "c-q3", f"%%agent\n{THIRD}")
    assert "25" in _run(lab, "c-q3")  # turn 2 again
    lab.restart()  # Restart & Run All

    assert ", turn 1" in lab.run()
    undone = _run(lab, "c-q2")

    assert ROLLED_BACK_LINE in undone and "replayed" not in undone
    assert _prompts(lab, session) == [QUESTION, THIRD]  # the record is as the user left it


def test_a_rollback_cell_run_all_reaches_while_replaying_cuts_nothing_recorded_after_it(lab):
    session = _two_turns(lab)
    _add(lab, "c-rollback", "%agent rollback 1")
    _run(lab, "c-rollback")
    del lab.front.cells[_at(lab, "c-q2")]  # the undone question deleted; the rollback cell kept
    _add(lab, "c-q3", f"%%agent\n{THIRD}")
    _run(lab, "c-q3")
    lab.restart()

    lab.run()
    said = _run(lab, "c-rollback")
    again = _run(lab, "c-q3")

    assert "nothing rolled back" in said
    assert _prompts(lab, session) == [QUESTION, THIRD]
    assert "replayed: session" in again and ", turn 2" in again and ROLLED_BACK_LINE not in again


def test_a_kept_rollback_cell_and_its_undone_question_run_again_without_changing_the_record(lab):
    session = _two_turns(lab)
    _add(lab, "c-rollback", "%agent rollback 1")
    _run(lab, "c-rollback")
    _add(lab, "c-q3", f"%%agent\n{THIRD}")
    _run(lab, "c-q3")
    lab.restart()

    lab.run()
    undone = _run(lab, "c-q2")
    said = _run(lab, "c-rollback")
    later = _run(lab, "c-q3")

    # Run All reproduces what the user left: the undone question says so and asks nothing, the
    # rollback is already in the record, and the later question replays its turn.
    assert ROLLED_BACK_LINE in undone and "replayed" not in undone
    assert "nothing rolled back" in said
    assert "replayed: session" in later and ", turn 2" in later
    assert _prompts(lab, session) == [QUESTION, THIRD]
    assert magics_mod.active_magics().current is None  # no session loaded: nothing could ask


def _restart_after_cells_were_made(lab: Lab) -> None:
    """A kernel restart: the cells the agent made are now another kernel process's."""
    for c in lab.front.cells:
        mark = c["metadata"].get("nbagent")
        if isinstance(mark, dict):
            mark["origin"] = "an-earlier-kernel"
    lab.restart()


def test_a_rollback_while_replaying_says_the_earlier_kernels_cells_stay(lab):
    session = _two_turns(lab)
    _restart_after_cells_were_made(lab)
    lab.run()
    _run(lab, "c-q2")

    out = _line(lab, "%agent rollback 1")

    assert "rolled back to the end of turn 1" in out and "stays whole" not in out
    assert "1 agent cell(s) of the undone turns, made before this kernel started, left in place" in out
    assert _prompts(lab, session) == [QUESTION]  # the notebook's own record: undone as asked


def test_a_rollback_after_a_live_turn_that_followed_a_replay_says_the_earlier_kernels_cells_stay(lab):
    """Restart & Run All replayed two turns, a new prompt went on live (turn 3), then ``%agent
    rollback 1``: turn 2's cells, made before this kernel started, stay and Run All runs them; the
    line said only "1 agent cell(s) removed" (newcomer pass 14)."""
    session = _two_turns(lab)
    _restart_after_cells_were_made(lab)
    lab.run()
    _run(lab, "c-q2")
    _add(lab, "c-q3", f"%%agent\n{THIRD}")
    assert "done:" in _run(lab, "c-q3")  # live: the record goes on

    out = _line(lab, "%agent rollback 1")

    assert "rolled back to the end of turn 1" in out
    assert "1 agent cell(s) of the undone turns, made before this kernel started, left in place" in out
    assert _prompts(lab, session) == [QUESTION]


def test_a_copy_that_rolled_a_turn_back_replays_as_it_was_left(lab):
    # The copy's cells still carry the original's records: the turn the copy undid must not come
    # back from the original's record on the copy's own Restart & Run All.
    _two_turns(lab)
    lab.restart("analysis-Copy1.ipynb")
    lab.run()
    _run(lab, "c-q2")
    _add(lab, "c-rollback", "%agent rollback 1")
    _run(lab, "c-rollback")
    _add(lab, "c-q3", f"%%agent\n{THIRD}")
    assert "25" in _run(lab, "c-q3")
    lab.restart("analysis-Copy1.ipynb")

    first = lab.run()
    undone = _run(lab, "c-q2")
    said = _run(lab, "c-rollback")
    later = _run(lab, "c-q3")

    assert "replayed: session" in first and ", turn 1" in first
    assert ROLLED_BACK_LINE in undone and "replayed" not in undone and "42" not in undone
    assert "nothing rolled back" in said
    assert "replayed: session" in later and ", turn 2" in later
    assert magics_mod.active_magics().current is None  # no request could go out


def test_an_undone_cell_says_its_turns_cells_brought_back_by_undo_run_under_run_all(lab):
    # %agent rollback 1 removed turn 2's code cell, then Edit > Undo brought it back. The agent cell
    # replays nothing ("undone"), but Run All runs that cell: the kernel gets the undone turn's
    # effects, and the cell above must say so rather than "as you left it" alone.
    _two_turns(lab)
    made = [dict(c) for c in lab.front.cells if (c["metadata"].get("nbagent") or {}).get("kind") == "code"
            and c["metadata"]["nbagent"].get("turn") == 2]
    assert len(made) == 1
    _add(lab, "c-rollback", "%agent rollback 1")
    _run(lab, "c-rollback")
    assert all(c["id"] != made[0]["id"] for c in lab.front.cells)  # removed by the rollback
    lab.front.cells.insert(_at(lab, "c-q2") + 1, made[0])  # Undo
    lab.restart()

    lab.run()
    undone = _run(lab, "c-q2")

    assert ROLLED_BACK_LINE in undone and "replayed" not in undone
    assert UNDONE_CELLS_LINE.format(count=1) in undone


def test_an_undone_cell_whose_turns_cells_are_gone_says_only_that_it_was_undone(lab):
    _two_turns(lab)
    _add(lab, "c-rollback", "%agent rollback 1")
    _run(lab, "c-rollback")
    lab.restart()

    lab.run()
    undone = _run(lab, "c-q2")

    assert ROLLED_BACK_LINE in undone and "still in the notebook" not in undone


def test_agent_cells_moved_out_of_order_replay_and_the_next_prompt_follows_both(lab):
    # The user dragged turn 2's agent cell above turn 1's. Restart & Run All replays both (turn 2,
    # then turn 1); a new prompt after them must go on from the conversation both belong to, not
    # fork silently at turn 1 and drop turn 2, whose answer the notebook shows above it.
    session = _two_turns(lab)
    moved = lab.front.cells.pop(_at(lab, "c-q2"))
    lab.front.cells.insert(0, moved)
    lab.restart()

    assert ", turn 2" in _run(lab, "c-q2")
    first = lab.front.cells[_at(lab, "c-q2") + 1:]
    assert ", turn 1" in lab.run(lab.front.cells.index(next(c for c in first if c["source"].startswith("%%agent"))))
    _add(lab, "c-q3", f"%%agent\n{THIRD}")
    assert "25" in _run(lab, "c-q3")

    assert _prompts(lab, session) == [QUESTION, SECOND, THIRD]  # continued, not forked at turn 1
    history = magics_mod.active_magics().current.agent.history
    assert any(SECOND in str(m.get("content")) for m in history)


def test_a_rollback_cell_after_its_own_rollback_does_not_speak_of_a_later_turn_the_record_lacks(lab):
    # `%agent rollback 1` left in the notebook under its undone question: under Restart & Run All it
    # cuts nothing, and the record ends at turn 1, so "a later turn it holds is the answer of an
    # agent cell Run All has not reached yet" was untrue.
    _two_turns(lab)
    _add(lab, "c-rollback", "%agent rollback 1")
    _run(lab, "c-rollback")
    lab.restart()
    lab.run()
    _run(lab, "c-q2")

    said = _run(lab, "c-rollback")

    assert "nothing rolled back" in said and "holds no turn after turn 1" in said
    assert "Run All has not reached" not in said


def test_a_rollback_in_a_fresh_kernel_of_a_recorded_notebook_says_run_all_replays_first(lab):
    # The notebook opened again the next day: `%agent rollback 1` before anything ran. "Run a %%agent
    # cell first" alone read as "ask a new question"; Run All replays the recorded turns, asking nothing.
    _two_turns(lab)
    lab.restart()

    result = lab.ip.run_cell("%agent rollback 1")

    assert result.error_in_exec is not None and "Run All replays" in str(result.error_in_exec)


def test_an_interrupted_cell_that_retry_redid_below_asks_nothing_and_the_retry_cell_replays(lab):
    # Interrupted (■ while Allow waited: no record, only the mark), then `%agent retry` in a cell
    # below answered it. Restart & Run All: was the interrupted cell asking the model again ("its last
    # run did not finish … asking the model") and the retry cell failing "Nothing to retry", which
    # stopped Run All before the retried answer's cells.
    from nbagent.notebook.document.replay_lines import RETRIED_UNFINISHED_LINE

    lab.run()
    retry = lab.front.cells[0]  # the retry cell: it recorded turn 1 and carries it
    session = retry["metadata"]["nbagent"]["session"]
    retry["source"] = "%agent retry"
    lab.front.cells.insert(0, {"cell_type": "code", "id": "c-interrupted", "source": f"%%agent\n{QUESTION}",
                               "outputs": [], "execution_count": None,
                               "metadata": {"nbagent": {"origin": "an-earlier-kernel", "session": session,
                                                        "turn": 1, "kind": "agent"}}})
    lab.restart()

    first = _run(lab, "c-interrupted")
    assert RETRIED_UNFINISHED_LINE in first and "no recorded answer" not in first
    assert magics_mod.active_magics().current is None  # nothing asked
    again = _run(lab, retry["id"])
    assert "replayed: session" in again and ", turn 1" in again
