"""A session whose only turn was stopped with ■ (its first request billed and recorded), then a
restart: ``%agent cost`` in the next kernel adds its money, and must not say a restart cut it short."""

from __future__ import annotations

from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import earlier

from .test_replay_inprocess import cell, ip, restart  # noqa: F401  (fixture)
from .test_replay_stopped_turn import _stopped_cell


def test_a_session_stopped_with_the_stop_button_is_not_said_to_be_cut_short_by_a_restart(ip, monkeypatch):  # noqa: F811
    monkeypatch.setattr(earlier, "_made_here", lambda session: False)  # the restart: another kernel
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    ip.run_cell("%agent status")
    _stopped_cell(ip)
    restart(magics_mod.active_magics())
    cell(ip, "what is 6 * 7? use python")
    with capture_output() as cap:
        ip.run_cell("%agent cost")

    assert "by this notebook's earlier session(s)" in cap.stdout, cap.stdout  # its money stays counted
    assert "that a kernel restart or ■ cut short before a turn finished" in cap.stdout, cap.stdout  # not "a restart" alone
