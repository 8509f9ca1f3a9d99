"""How ``notebook_read`` tells the model who wrote a cell, and how the offline model reads it back:
the user's own agent cell and a cell the model only edited are not "by the agent"."""

from __future__ import annotations

from nbagent.engine.contracts.json_types import JSONObject
from nbagent.notebook.document.bridge_types import CellJSON
from nbagent.notebook.document.cells import ORIGIN, cell_for_model
from nbagent.providers.simulated.notebook import cells_in


def _cell(cid: str, source: str, mark: JSONObject | None) -> CellJSON:
    return {"id": cid, "cell_type": "code", "source": source, "outputs": [],
            "metadata": {"nbagent": mark} if mark else {}}


CELLS = [
    _cell("u1", "x = 1", None),
    _cell("p1", "%%agent\nread this notebook", {"session": "S", "turn": 1, "kind": "agent", "record": {}}),
    _cell("c1", "x.mean()", {"origin": ORIGIN, "session": "S", "turn": 1, "kind": "code", "tool_use_id": "t1"}),
    _cell("r1", "x.sum()", {"origin": "a received notebook", "session": "S", "turn": 1, "kind": "code"}),
    _cell("e1", "y = 2", {"session": "S", "turn": 2, "kind": "edit", "tool_use_id": "t2"}),
    _cell("m1", "z = 3", {"kind": "external", "client": "claude-code", "at": "2026-01-01T00:00:00+00:00"}),
]


def _read() -> str:
    return "\n\n".join(cell_for_model(i, c, 1_000)[0] for i, c in enumerate(CELLS))


def test_the_users_agent_cell_and_an_edited_cell_are_not_labelled_as_made_by_the_agent() -> None:
    heads = [line for line in _read().splitlines() if line.startswith("[")]
    assert heads == [
        "[0] id=u1 code",
        "[1] id=p1 code, the user's agent prompt (turn 1)",
        "[2] id=c1 code, by the agent (turn 1)",
        "[3] id=r1 code, marked as an agent's (turn 1; not made in this kernel)",
        "[4] id=e1 code, edited by the agent (turn 2)",
        "[5] id=m1 code, by MCP client claude-code",
    ]


def test_the_offline_model_finds_every_cell_and_counts_only_the_agents_own() -> None:
    cells = cells_in(_read())
    assert [c.id for c in cells] == ["u1", "p1", "c1", "r1", "e1", "m1"]
    assert [c.source for c in cells] == [c["source"] for c in CELLS]  # no cell swallowed by the one above
    assert [c.by_agent for c in cells] == [False, False, True, False, False, False]
