"""An ``undone`` mark that is not signed (as rollbacks wrote it before the signing, or anyone can add)
beside my own signed record, while the session's folder still holds the turn: the cell still shows
nothing and asks nothing (no answer is revived), but it no longer says "undone … as you left it",
since no rollback is recorded and the next live prompt sends that answer to the model again. Was:
ROLLED_BACK_LINE, while the model still held the answer."""

from __future__ import annotations

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import replay_lines
from nbagent.notebook.document.replay_lines import ROLLED_BACK_LINE

from .test_replay_from_notebook import Lab, lab  # noqa: F401  (fixture)


def test_an_unsigned_undone_mark_says_the_answer_may_still_be_in_the_sessions_history(lab: Lab) -> None:  # noqa: F811
    lab.run()
    mark = lab.front.cells[0]["metadata"]["nbagent"]
    assert "undone" not in mark["record"]
    mark["undone"] = True  # the mark alone, unsigned; the folder records no rollback
    lab.restart()

    out = lab.run()

    assert "391" not in out and "replayed: session" not in out  # nothing revived
    assert ROLLED_BACK_LINE not in out and "may still be in the session's history" in out
    assert getattr(replay_lines, "UNDONE_BY_MARK_LINE", "").format(before=0) in out  # with what to run: rollback 0
    assert magics_mod.active_magics().current is None  # nothing asked


def test_a_signed_rollback_still_says_undone_as_you_left_it(lab: Lab) -> None:  # noqa: F811
    lab.run()
    lab.ip.run_cell("%agent rollback 0")
    lab.restart()
    out = lab.run()
    assert ROLLED_BACK_LINE in out and "may still be in the session's history" not in out
