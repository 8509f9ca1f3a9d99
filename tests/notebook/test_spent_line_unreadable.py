"""The money line of ``%agent cost`` / ``%agent status`` where replay indexes could not be read."""

from __future__ import annotations

from nbagent.engine.state.totals import RunningTotals
from nbagent.notebook.status import spent_line


def test_many_unreadable_indexes_are_counted_and_only_three_named() -> None:
    """A received folder with hundreds of damaged indexes (a bad merge of ``.nbagent/``) made every
    money line name each one: pages of file names in each ``%agent cost``. Now three, and how many more."""
    damaged = [f".nbagent/replay/20261207-1000{i:02d}-12-1.json (invalid JSON: Expecting value)" for i in range(300)]
    line = spent_line(RunningTotals().of([], 0), unreadable=damaged)
    assert "left out: 300 replay index(es) that could not be read" in line, line
    assert damaged[0] in line and damaged[2] in line and damaged[3] not in line, line
    assert "and 297 more; move it aside or restore it" in line, line
    assert len(line) < 1000


def test_one_unreadable_index_is_named_whole() -> None:
    damaged = [".nbagent/replay/x.json (invalid JSON: Expecting value)"]
    line = spent_line(RunningTotals().of([], 0), unreadable=damaged)
    assert f"could not be read, so any earlier session of this notebook they name is not added: {damaged[0]}; move" in line
