"""Inspection commands between replayed agent cells describe the turns replayed so far: the loaded
session is the whole record, so a lesson's ``%agent cost`` cell after turn 1 of 2 read the money of
turn 2 as well, under an ``%agent history`` table that ended at turn 1 (newcomer pass 17)."""

from __future__ import annotations

import re
from typing import Any

from nbagent.notebook import magics as magics_mod

from .test_replay_inprocess import FIRST, SECOND, _line, agent, cell, ip, restart

__all__ = ["ip"]  # the fixture, shared with test_replay_inprocess


def _history_cost(history: str) -> tuple[int, float]:
    lines = [ln for ln in history.splitlines() if ln.strip()]
    assert lines[0].split()[:2] == ["turn", "request"] and " hit %   cost " in lines[0]  # the 9th value is the cost
    rows = [ln.split() for ln in lines[1:]]
    return len(rows), sum(float(r[8]) for r in rows)


def test_agent_cost_between_replayed_cells_adds_up_with_the_history_shown_so_far(ip: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "lesson.ipynb")  # the notebook's own record
    cell(ip, FIRST)
    cell(ip, SECOND)
    whole = agent().totals
    restart(magics_mod.active_magics())
    cell(ip, FIRST)  # one of the two recorded turns replayed: the cost cell sits between them

    history = _line(ip, "%agent history")
    cost = _line(ip, "%agent cost")

    rows, history_usd = _history_cost(history)
    assert re.search(rf"^requests {rows} ", cost, re.M), cost  # the requests the history lists, not the record's
    spent = re.search(rf"spent \$(\d+\.\d+) in {rows} request\(s\) by the 1 turn\(s\) replayed so far", cost)
    assert spent is not None, cost
    assert abs(float(spent.group(1)) - history_usd) <= 0.00005 * (rows + 1)  # the table's costs are rounded each
    assert rows < whole.spent_requests  # the record holds more, and says so on its own line
    assert f"the whole record: spent ${whole.spent_usd:.4f} in {whole.spent_requests} request(s)" in cost
    assert "replayed" in cell(ip, SECOND)  # the replay goes on
    after = _line(ip, "%agent cost")  # every turn shown: the session's totals, as before
    assert f"spent ${whole.spent_usd:.4f} in {whole.spent_requests} request(s)" in after and "so far" not in after


def test_agent_context_and_saw_between_replayed_cells_describe_the_turn_shown_not_the_records_last(
        ip: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "lesson.ipynb")
    cell(ip, FIRST)
    cell(ip, SECOND)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)

    context = _line(ip, "%agent context")
    saw = _line(ip, "%agent saw")

    assert "turn 1" in context.splitlines()[0].lower() and "turn 2" not in context.splitlines()[0].lower(), context
    assert "turn 2 is in it, not shown yet" in context  # the message table is the whole record's: said
    assert SECOND not in saw and FIRST in saw  # the request of turn 1, not turn 2's
    assert "replayed" in cell(ip, SECOND)
    assert "turn 2" in _line(ip, "%agent context").splitlines()[0].lower()  # all shown: the latest, as before


def test_agent_history_plot_between_replayed_cells_plots_the_requests_its_table_lists(ip: Any, monkeypatch: Any) -> None:
    from nbagent.display import charts

    monkeypatch.setenv("JPY_SESSION_NAME", "lesson.ipynb")
    cell(ip, FIRST)
    cell(ip, SECOND)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    plotted: list[list[int]] = []
    real = charts.plot_context_and_cost

    def plot(records: Any) -> Any:
        plotted.append([r.turn for r in records])
        return real(records)

    monkeypatch.setattr(charts, "plot_context_and_cost", plot)

    rows, _ = _history_cost(_line(ip, "%agent history --plot").split("<IPython.core.display.SVG")[0])

    assert plotted and set(plotted[0]) == {1} and len(plotted[0]) == rows  # on the old code: turn 2's too
