"""An agent cell answered, run again, and stopped (■ or Kernel > Interrupt while Allow waited)
before that run finished: the stopped run records nothing, and the notebook already dropped the
answer it was replacing (and its code cells). Restart & Run All replayed that replaced answer as the
cell's current one, with no word that the last run was stopped (newcomer pass 20, Notebook 7): now
the cell says so and asks again, as a cell whose only run was stopped does (docs/replay.md)."""

from __future__ import annotations

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import live_lines, replay_lines
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply

from .test_replay_from_notebook import Lab, lab  # noqa: F401  (fixture)

# The model's first call stops the run, as ■ does while the turn goes on.
STOP = "import nbagent.notebook.magics as _m\n_m.active_magics().current.agent.abort()"
SECOND = "%%agent\nwhat is 2 * 3? use python"


def _run_again_and_stop(lab: Lab, index: int) -> None:  # noqa: F811
    current = magics_mod.active_magics().current
    assert current is not None
    agent = current.agent
    agent.simulated_api.responder = ScriptedResponder([tool_reply([("python", {"code": STOP})]), text_reply("never")])
    lab.run(index, expect_error=True)  # the cell ends interrupted


def _at(lab: Lab, source: str) -> int:  # noqa: F811
    return next(i for i, c in enumerate(lab.front.cells) if c["source"] == source)


def test_a_cell_run_again_and_stopped_is_asked_again_not_its_replaced_answer_replayed(lab):  # noqa: F811
    assert "391" in lab.run()
    _run_again_and_stop(lab, 0)
    assert lab.front.cells[0]["metadata"]["nbagent"]["turn"] == 2  # nbagent's mark, no record

    lab.restart()
    out = lab.run()  # Restart & Run All

    assert "replayed" not in out and "391" in out, out  # not the replaced answer: the offline model answers
    line = live_lines.UNFINISHED_RERUN_LINE.format(turn=2, before=1)
    assert line in out and out.index(line) < out.index("nbagent · ") and live_lines.UNFINISHED_LINE not in out


def test_a_later_cell_run_again_and_stopped_is_asked_again_after_the_replay_above(lab):  # noqa: F811
    lab.run()
    lab.front.cells.append(lab.front._with_id({"cell_type": "code", "source": SECOND}))
    assert "6" in lab.run(_at(lab, SECOND))  # turn 2
    _run_again_and_stop(lab, _at(lab, SECOND))  # turn 3, stopped

    lab.restart()
    first = lab.run(0)
    out = lab.run(_at(lab, SECOND))

    assert "replayed: session" in first and "turn 1" in first
    assert "replayed" not in out, out
    assert live_lines.UNFINISHED_RERUN_LINE.format(turn=3, before=2) in out



def test_a_cell_run_again_stopped_and_retried_below_says_so_and_the_retry_replays(lab):  # noqa: F811
    """The stopped run redone by ``%agent retry`` (documented): the agent cell showed the answer
    the stopped run replaced, then the retry cell the retried one."""
    lab.run()
    _run_again_and_stop(lab, 0)
    current = magics_mod.active_magics().current
    assert current is not None
    current.agent.simulated_api.responder = ScriptedResponder([text_reply("the retried answer")])
    lab.front.cells.append(lab.front._with_id({"cell_type": "code", "source": "%agent retry"}))
    assert "the retried answer" in lab.run(len(lab.front.cells) - 1)

    lab.restart()
    first = lab.run(0)
    retry = lab.run(len(lab.front.cells) - 1)

    assert "replayed: session" not in first and "391" not in first, first  # not the answer the stopped run replaced
    assert "retried below with %agent retry" in first
    assert "replayed: session" in retry and "turn 2" in retry and "the retried answer" in retry


THIRD = "%%agent\nwhat is 5 * 7? use python"


def _append(lab: Lab, source: str) -> int:  # noqa: F811
    lab.front.cells.append(lab.front._with_id({"cell_type": "code", "source": source}))
    return len(lab.front.cells) - 1


def _replays_all(lab: Lab) -> list[str]:  # noqa: F811
    """Restart & Run All (the agent cells' outputs, in order, code cells run between them); asserts
    it sent no request (no session loaded: nothing could ask)."""
    lab.restart()
    outs = [(c["source"], lab.run(i)) for i, c in enumerate(list(lab.front.cells))]
    assert magics_mod.active_magics().current is None, outs
    return [out for source, out in outs if source.startswith("%")]


def test_a_middle_cell_run_again_and_stopped_shows_its_answer_saying_so_and_the_cells_below_replay(lab):  # noqa: F811
    """Asking that cell again made every agent cell below it ask the model too (their answers, which
    followed its recorded turn, still in the record): Run All of a recorded notebook paid for each."""
    lab.run()
    lab.run(_append(lab, SECOND))  # turn 2
    lab.run(_append(lab, THIRD))  # turn 3, which followed turn 2
    _run_again_and_stop(lab, _at(lab, SECOND))  # turn 4, stopped

    first, second, third = _replays_all(lab)

    assert "turn 1" in first and "replayed: session" in second and ", turn 2 " in second
    assert replay_lines.UNFINISHED_SHOWN_LINE.format(turn=4) in second
    assert "replayed: session" in third and ", turn 3 " in third and "35" in third


def test_a_stopped_rerun_undone_by_rollback_replays_the_answer_the_user_kept(lab):  # noqa: F811
    """``%agent rollback 1`` after the stopped run (the cell's mark says ``undone``): the user kept
    turn 1; Run All asked the model instead."""
    lab.run()
    _run_again_and_stop(lab, 0)
    lab.run(_append(lab, "%agent rollback 1"))

    first, _ = _replays_all(lab)

    assert "replayed: session" in first and ", turn 1 " in first and "391" in first
    assert "did not finish" not in first


def test_a_later_cell_run_again_stopped_and_retried_below_says_so_not_its_replaced_answer(lab):  # noqa: F811
    lab.run()
    lab.run(_append(lab, SECOND))  # turn 2
    _run_again_and_stop(lab, _at(lab, SECOND))  # turn 3, stopped
    magics = magics_mod.active_magics()
    assert magics.current is not None
    magics.current.agent.simulated_api.responder = ScriptedResponder([text_reply("the retried answer")])
    assert "the retried answer" in lab.run(_append(lab, "%agent retry"))

    first, second, retry = _replays_all(lab)

    assert "turn 1" in first
    assert "replayed: session" not in second and replay_lines.RETRIED_UNFINISHED_LINE in second, second
    assert "replayed: session" in retry and ", turn 3 " in retry and "the retried answer" in retry


def test_a_later_cell_stopped_at_its_first_run_and_retried_below_asks_nothing(lab):  # noqa: F811
    """Its turn is the retry cell's: Run All asked the model for it with no line saying why, and
    the retry cell then failed."""
    lab.run()
    second_cell = _append(lab, SECOND)
    _run_again_and_stop(lab, second_cell)  # turn 2, its first run, stopped
    magics = magics_mod.active_magics()
    assert magics.current is not None
    magics.current.agent.simulated_api.responder = ScriptedResponder([text_reply("the retried answer")])
    assert "the retried answer" in lab.run(_append(lab, "%agent retry"))

    _, second, retry = _replays_all(lab)

    assert replay_lines.RETRIED_UNFINISHED_LINE in second, second
    assert "replayed: session" in retry and ", turn 2 " in retry and "the retried answer" in retry
