"""A cell the agent made and then rewrote with ``notebook_edit`` replace is still the agent's: a rollback
or a re-run of its agent cell removes it. It was marked ``"kind": "edit"`` (a user's cell the agent
changed), so ``%agent rollback`` kept it in the notebook and called it "your cell", and Run All ran
it again; a model could hide any cell of its own from a rollback that way (attacker pass 30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.notebook.document.materialise import remove_turn_cells
from nbagent.notebook.document.tools import NotebookTools

from .fake_frontend import dumps
from .test_removal import MINE, agent_turn, issue_notebook


async def edit(tools: dict[str, Any], tmp_path: Path, turn: int, uid: str, **args: Any) -> str:
    out = await tools["notebook_edit"].run(args, ToolContext(cwd=tmp_path, turn=turn, tool_use_id=uid))
    assert not out.is_error, out.content
    return str(out.content)


async def read(tools: dict[str, Any], tmp_path: Path, turn: int) -> None:
    await tools["notebook_read"].run({}, ToolContext(cwd=tmp_path, turn=turn, tool_use_id="read"))


async def test_a_cell_the_model_inserted_then_rewrote_goes_with_a_rollback_and_is_not_called_yours(tmp_path):
    front, bridge = issue_notebook()
    tools = {t.name: t for t in NotebookTools(bridge, lambda: "S").tools()}
    await agent_turn(bridge, 1, ["print(2 * 3)"])
    inserted = (await edit(tools, tmp_path, 2, "t2-ins", action="insert", cell_id="c2", source="y = 1")).split()[3]
    await read(tools, tmp_path, 2)
    await edit(tools, tmp_path, 2, "t2-rep", action="replace", cell_id=inserted, source="y = 2")
    mine = dumps(front.cells[-1])
    # Still the agent's kind: in chat mode, Restart & Run All runs it as code (as "edit", a user's plain
    # cell, it was sent to the model as a question: tests/notebook/test_magics_inprocess.py's chat tests).
    assert next(c for c in front.cells if c["id"] == inserted)["metadata"]["nbagent"]["kind"] == "new"

    removal = remove_turn_cells(bridge, "S", 1)

    assert removal.removed == [inserted]  # was: kept, its mark saying "edit"
    assert "your cell" not in removal.describe()  # was: '1 of your cell(s) … keep(s) its change: cell [3] "y = 2"'
    assert "y = 2" not in front.sources() and dumps(front.cells[-1]) == mine


async def test_a_materialised_cell_the_model_rewrote_is_replaced_when_its_agent_cell_runs_again(tmp_path):
    front, bridge = issue_notebook()
    tools = {t.name: t for t in NotebookTools(bridge, lambda: "S").tools()}
    await agent_turn(bridge, 1, ["print(2 * 3)"])
    await read(tools, tmp_path, 1)
    made = front.cells[2]["id"]
    await edit(tools, tmp_path, 1, "t1-fix", action="replace", cell_id=made, source="print(2 * 3)  # fixed")
    mine = dumps(front.cells[3])

    await agent_turn(bridge, 2, ["print(6)"])

    assert front.sources()[2:] == ["print(6)", MINE]  # was: the rewritten cell stayed below the new one
    assert dumps(front.cells[3]) == mine


async def test_a_users_cell_the_model_rewrote_stays_the_users(tmp_path):
    front, bridge = issue_notebook()
    tools = {t.name: t for t in NotebookTools(bridge, lambda: "S").tools()}
    await read(tools, tmp_path, 1)
    mine = front.cells[2]["id"]
    await edit(tools, tmp_path, 1, "t1-rep", action="replace", cell_id=mine, source="my_result = 2")

    removal = remove_turn_cells(bridge, "S", 0)

    assert removal.removed == [] and "my_result = 2" in front.sources()
    assert front.cells[2]["metadata"]["nbagent"]["kind"] == "edit" and "your cell" in removal.describe()

