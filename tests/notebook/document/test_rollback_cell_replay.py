"""A ``%agent rollback N`` cell left in the notebook, and an agent cell above it run again after it:
Restart & Run All replays that newer answer, then reaches the rollback cell. Its rollback is already
in the record (it ran before the newer turn was asked), so it must not cut the newer answer: the
cell says so and Run All goes on, and the next Restart & Run All shows the same answers."""

from __future__ import annotations

from typing import Any

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import fork
from nbagent.notebook.document.replay_lines import ROLLED_BACK_LINE

from .test_replay_from_notebook import Lab, lab  # noqa: F401  (fixture)

SECOND = "what is 6 * 7? use python"
EDITED = "what is 6 * 8? use python"


def _cell(cell_id: str, source: str) -> dict[str, Any]:
    return {"cell_type": "code", "id": cell_id, "source": source, "metadata": {}, "outputs": [], "execution_count": None}


def _seen_by_fork(front: Lab, monkeypatch: Any) -> None:
    """The executing cell's id and metadata, as the rollback command reads them (Lab patches the
    other modules; raising=False: the test also runs, and fails, on a fork.py that read neither)."""
    def metadata() -> dict[str, Any]:
        return dict(front.executing["metadata"], cellId=front.executing["id"]) if front.executing else {}
    monkeypatch.setattr(fork, "executing_cell_id", lambda: front.executing and front.executing["id"], raising=False)
    monkeypatch.setattr(fork, "executing_metadata", metadata, raising=False)


def test_run_all_does_not_cut_an_answer_asked_after_the_rollback_cell_ran(lab, monkeypatch):  # noqa: F811
    _seen_by_fork(lab, monkeypatch)
    lab.front.cells += [_cell("c-second", f"%%agent\n{SECOND}"), _cell("c-rollback", "%agent rollback 1")]
    second = lambda: next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-second")  # noqa: E731
    rollback = lambda: next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-rollback")  # noqa: E731
    lab.run()
    assert "42" in lab.run(second())
    assert "rolled back to the end of turn 1" in lab.run(rollback())
    # The user edits the undone cell and runs it again: the answer they keep, turn 2 again.
    lab.front.cells[second()]["source"] = f"%%agent\n{EDITED}"
    assert "48" in lab.run(second())

    for _ in range(2):  # Restart & Run All, twice: the same answers each time
        lab.restart()
        assert "replayed: session" in lab.run()
        shown = lab.run(second())
        assert "replayed: session" in shown and "48" in shown and ROLLED_BACK_LINE not in shown
        out = lab.run(rollback())
        assert "nothing rolled back" in out and "asked after" in out, out
        assert magics_mod.active_magics().current is None  # nothing loaded, nothing asked


def test_a_rollback_cell_typed_after_a_replay_still_rolls_back(lab, monkeypatch):  # noqa: F811
    """A new rollback cell (it never ran: no mark) in a replaying kernel is a new undo, as before."""
    _seen_by_fork(lab, monkeypatch)
    lab.front.cells += [_cell("c-second", f"%%agent\n{SECOND}")]
    second = lambda: next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-second")  # noqa: E731
    lab.run()
    lab.run(second())
    lab.restart()
    lab.run()
    assert "replayed: session" in lab.run(second())
    lab.front.cells.append(_cell("c-rollback", "%agent rollback 1"))

    out = lab.run(len(lab.front.cells) - 1)

    assert "rolled back to the end of turn 1" in out
    assert lab.front.cells[-1]["metadata"]["nbagent"]["kind"] == "rollback"



def test_a_recorded_rollback_cell_after_a_live_compact_keeps_the_compaction(lab, monkeypatch):  # noqa: F811
    """Turns 1-3 asked, ``%agent rollback 2`` undid turn 3; a compact cell added above turn 3's cell.
    Run All compacted live at the record's end, then the rollback cell (it ran before: its mark says
    so) rolled back live, undoing the compaction just made: every Run All sent a summary request and
    threw it away again."""
    _seen_by_fork(lab, monkeypatch)
    at = lambda cell_id: next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)  # noqa: E731
    lab.front.cells += [_cell("c-second", f"%%agent\n{SECOND}")]
    lab.run()
    lab.run(at("c-second"))
    lab.front.cells += [_cell("c-third", "%%agent\nwhat is 2 + 2? use python")]
    lab.run(at("c-third"))
    lab.front.cells += [_cell("c-rollback", "%agent rollback 2")]
    assert "rolled back to the end of turn 2" in lab.run(at("c-rollback"))
    lab.front.cells.insert(at("c-third"), _cell("c-compact", "%agent compact"))  # added above turn 3's cell
    for runs in range(2):  # Restart & Run All, twice
        lab.restart()
        outs = {cell_id: lab.run(at(cell_id)) for cell_id in [c["id"] for c in lab.front.cells]}
        agent = magics_mod.active_magics().current.agent
        if runs == 0:
            assert "Compacted messages" in outs["c-compact"], outs["c-compact"]
            requests, history = len(agent.records), list(agent.history)
        else:
            assert "Compacted messages" not in outs["c-compact"], outs["c-compact"]  # shown as recorded
        assert "undone with %agent rollback" in outs["c-third"], outs["c-third"]  # not asked again
        assert "nothing rolled back" in outs["c-rollback"], outs["c-rollback"]
        assert list(agent.history) == history and len(agent.records) == requests
