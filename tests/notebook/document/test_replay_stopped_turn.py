"""A turn stopped before it finished (■, Kernel > Interrupt or a kernel restart while Allow
waited, where the engine sees the stop first and ends the run with ``Done("aborted")``) records
nothing: Restart & Run All then asks the model for that cell again, instead of replaying the
interruption, failing the cell and stopping Run All there (newcomer pass 11: a restart while a
card waited, then Run All, showed the old interrupted turn and left every cell below ``[ ]``)."""

from __future__ import annotations

from typing import Any

from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document.recording import session_name
from nbagent.notebook.document.replay import load_index
from nbagent.notebook.document.replay_lines import UNSIGNED_LINE
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply

from .test_replay_inprocess import agent, cell, ip, restart  # noqa: F401  (fixture)

PROMPT = "Which region has the largest total revenue?"
# The model's first call stops the run, as ■ does while the turn goes on (the stop is seen by the
# engine, which ends the turn with Done("aborted")).
STOP = "import nbagent.notebook.magics as _m\n_m.active_magics().current.agent.abort()"


def _stopped_cell(ip: Any) -> None:  # noqa: F811
    ip.run_cell("%agent reset")
    agent().simulated_api.responder = ScriptedResponder([tool_reply([("python", {"code": STOP})]),
                                                         text_reply("never reached")])
    with capture_output():
        result = ip.run_cell(f"%%agent\n{PROMPT}")
    assert isinstance(result.error_in_exec, KeyboardInterrupt), result.error_in_exec  # the cell ends interrupted


def test_a_stopped_turn_is_not_recorded_so_run_all_asks_again(ip, tmp_path):  # noqa: F811
    ip.run_cell("%agent status")  # a session to script
    _stopped_cell(ip)
    name = session_name(agent())
    assert name is not None
    index = load_index(tmp_path, name)
    assert index is None or not index.turns, index

    restart(magics_mod.active_magics())
    out = cell(ip, PROMPT)  # Restart & Run All: the cell asks again (the offline model answers)

    assert "replayed: session" not in out
    assert "done: end_turn" in out  # answered live, not failed as the interrupted turn was


def test_a_cell_run_again_after_its_stopped_turn_replays_its_answer_not_the_stopped_one(ip, tmp_path):  # noqa: F811
    """■ at Allow, then the same agent cell again (turn 2 answers): its record's first turn is 2.
    A run that sends no cell metadata (nbclient, papermill) replayed "turn 1", the stopped turn
    that was never recorded, rebuilt from the folder's events as another's ("not signed with your
    key"), mixing both runs' calls (newcomer pass 19); and with the notebook's kernel still open
    the rebuild failed the cell on the session folder's lock."""
    ip.run_cell("%agent status")
    _stopped_cell(ip)
    agent().simulated_api.responder = ScriptedResponder([text_reply("the answer of the second run")])
    cell(ip, PROMPT)
    name = session_name(agent())
    assert name is not None
    index = load_index(tmp_path, name)
    assert index is not None and [t.turn for t in index.turns] == [2]

    restart(magics_mod.active_magics())
    out = cell(ip, PROMPT)  # Run All headless: no cell id, no metadata

    assert f"replayed: session {name}, turn 2" in out, out
    assert "the answer of the second run" in out
    assert UNSIGNED_LINE not in out and "never reached" not in out
