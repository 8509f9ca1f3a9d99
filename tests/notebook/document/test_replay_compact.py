"""Restart & Run All of a notebook with an ``%agent compact`` cell replays; it never asks.

The replayed session holds the whole record (the turns after the compact cell too), so the compact
cell compacted that — a live summary request in the middle of a replay, on the user's key for a
received notebook, that rewrote turns Run All had not reached yet; and each Run All did it again.
"""

from __future__ import annotations

from typing import Any

from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from tests.notebook.document.test_replay_inprocess import FIRST, SECOND, agent, cell, ip, restart

__all__ = ["ip"]  # the in-process shell fixture

LATER = ["what is 2 + 2? use python", "what is 3 + 3? use python"]


def run(ip: Any, code: str) -> str:
    ip.display_pub.outputs.clear()
    with capture_output() as cap:
        result = ip.run_cell(code)
    assert result.error_in_exec is None, (result.error_in_exec, cap.stdout)  # Run All goes on
    shown = [o.data.get("text/plain", "") for o in cap.outputs]
    return "\n".join([cap.stdout, *shown, *(o["data"].get("text/plain", "") for o in ip.display_pub.outputs)])


def _notebook(ip: Any) -> list[str]:
    outs = [cell(ip, FIRST), cell(ip, SECOND), run(ip, "%agent compact")]
    return outs + [cell(ip, p) for p in LATER]


def test_run_all_of_a_notebook_with_a_compact_cell_sends_no_request_and_keeps_the_record(ip: Any) -> None:
    _notebook(ip)
    live = agent()
    requests, spent, history = len(live.records), live.totals.spent_usd, list(live.history)
    restart(magics_mod.active_magics())

    outs = _notebook(ip)

    assert all("replayed: session" in o for o in outs[:2] + outs[3:])
    assert "this compaction is in the record (after turn 2" in outs[2] and "no request sent" in outs[2]
    replayed = agent()
    assert (len(replayed.records), replayed.totals.spent_usd) == (requests, spent)  # nothing asked
    assert list(replayed.history) == history  # the later turns were not compacted again


def test_a_compact_cell_the_record_does_not_hold_says_so_under_run_all_and_sends_nothing(ip: Any) -> None:
    cell(ip, FIRST)
    cell(ip, SECOND)
    requests = len(agent().records)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)

    out = run(ip, "%agent compact")  # a cell added since the notebook last ran live

    assert "nothing compacted: this kernel is replaying the record (2 turn(s) shown" in out
    assert len(agent().records) == requests


def test_after_a_live_prompt_compact_compacts_as_it_does_live(ip: Any) -> None:
    cell(ip, FIRST)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND, "--live")

    out = run(ip, "%agent compact")

    assert "Compacted messages" in out
