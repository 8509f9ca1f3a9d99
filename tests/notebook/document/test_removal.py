"""Removing agent cells never touches the user's: re-running an agent cell, ``%agent rollback`` and
an old front-end, against the protocol-2 front-end (fake_frontend mirrors frontend/src/guard.ts,
which is unit-tested against a real YNotebook in frontend/test/)."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.materialise import Materialiser, remove_turn_cells
from nbagent.notebook.executor import ShellExecutor

from .fake_frontend import FakeFrontEnd, dumps
from .test_materialise import call

MINE = 'my_result = "my own cell"\nprint(my_result)'


def issue_notebook(version: int = 2) -> tuple[FakeFrontEnd, Bridge]:
    front = FakeFrontEnd([{"cell_type": "code", "source": "%load_ext nbagent"},
                          {"cell_type": "code", "source": "%%agent --allow python\nWhat is 2 * 3 and 4 * 5?"},
                          {"cell_type": "code", "source": MINE}], version=version)
    return front, front.connect(Bridge())


async def agent_turn(bridge: Bridge, turn: int, codes: list[str], session: str = "S") -> Materialiser:
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(bridge, executor, session=session, turn=lambda: turn, agent_cell_id="c2")
    await cells.begin()
    for i, code in enumerate(codes):
        await call(cells, executor, f"t{turn}-{i}", code)
    await cells.mark_agent_cell(turn)
    return cells


async def test_running_the_agent_cell_again_replaces_its_cells_and_keeps_the_users_byte_identical():
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["print(2 * 3)", "print(4 * 5)"])
    mine = dumps(front.cells[4])
    assert front.sources()[2:] == ["print(2 * 3)", "print(4 * 5)", MINE]
    await agent_turn(bridge, 2, ["print(6)", "print(20)"])
    assert front.sources()[2:] == ["print(6)", "print(20)", MINE]
    assert dumps(front.cells[4]) == mine


async def test_an_edited_rerun_or_queued_cell_of_the_earlier_run_stays_and_the_run_says_so():
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["a = 1", "b = 2", "c = 3"])
    front.cells[2]["source"] = "a = 1  # my fix"
    front.cells[3]["execution_count"] = 9  # the user ran it again
    front.running.add(front.cells[4]["id"])  # queued by Run All
    cells = await agent_turn(bridge, 2, [])
    assert front.sources()[2:5] == ["a = 1  # my fix", "b = 2", "c = 3"]
    assert cells.notice() == (
        "ⓘ 2 cell(s) of this cell's earlier run kept in the notebook (edited by you, run again by you).\n"
        "ⓘ 1 cell(s) of this cell's earlier run stay: Run All (or a run of selected cells) has them queued, so "
        "they run again after this cell's new ones. Delete them once that run ends; or use Restart & Run All, "
        "which replays the recorded turns without asking the model again.")


async def test_a_received_notebooks_agent_cells_are_not_removed_on_a_rerun():
    front, bridge = issue_notebook()
    theirs = {"origin": "someone-elses-kernel", "session": "S", "turn": 1, "kind": "code", "agent_cell": "c2"}
    front.cells[1]["metadata"]["nbagent"] = {**theirs, "kind": "agent"}
    front.cells.insert(2, {"id": "r1", "cell_type": "code", "source": "print(2 * 3)", "outputs": [],
                           "execution_count": None, "metadata": {"nbagent": theirs}})
    cells = await agent_turn(bridge, 1, ["print(6)"])
    assert front.sources()[2:] == ["print(6)", "print(2 * 3)", MINE]
    assert all(r["op"] != "delete" for r in front.requests) and cells.removal.count == 0


async def test_rollback_removes_only_later_turns_agent_cells_and_counts_what_went():
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["print(2 * 3)", "print(4 * 5)"])
    front.cells.append({"id": "u-status", "cell_type": "code", "source": "%agent status", "metadata": {},
                        "outputs": [], "execution_count": 3})
    front.cells.append({"id": "u-code", "cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": [],
                        "execution_count": 4})
    front.cells.append({"id": "u-rollback", "cell_type": "code", "source": "%agent rollback 0", "metadata": {},
                        "outputs": [], "execution_count": None})
    users = {c["id"]: dumps(c) for c in front.cells if "nbagent" not in c["metadata"]}
    removal = remove_turn_cells(bridge, "S", 0, protect="u-rollback")
    assert removal.count == 2 and removal.describe() == "2 agent cell(s) removed from the notebook"
    assert {c["id"]: dumps(c) for c in front.cells if "nbagent" not in c["metadata"]} == users
    assert [c["source"] for c in front.cells][-3:] == ["%agent status", "x = 1", "%agent rollback 0"]


async def test_rollback_marks_the_undone_agent_cell_and_removes_its_cells_from_one_read_of_the_notebook():
    """The undone turn's agent cell says so in its mark and its made cells go; the notebook is read
    once for both (it was read twice: once to mark, once to remove)."""
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["print(2 * 3)"])
    front.requests.clear()
    removal = remove_turn_cells(bridge, "S", 0, undone_in=["S"])
    assert removal.count == 1 and front.cells[1]["metadata"]["nbagent"]["undone"] is True
    assert [r["op"] for r in front.requests].count("read") == 1


async def test_rollback_removes_the_undone_turns_cells_even_when_its_agent_cell_cannot_be_marked():
    """A collaborator deleted the undone turn's agent cell between the read and the mark: the
    removal stopped with it once one read served both (0 removed; 1 before)."""
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["print(2 * 3)"])

    def gone(r: dict) -> dict:
        raise KeyError(f"no cell with id {r['cell_id']}")

    front.op_replace = gone  # type: ignore[method-assign]
    removal = remove_turn_cells(bridge, "S", 0, undone_in=["S"])
    assert removal.count == 1 and "print(2 * 3)" not in front.sources()


async def test_rollback_counts_only_what_the_front_end_really_removed():
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["a = 1", "b = 2"])
    front.cells[2]["source"] = "a = 1  # mine"
    removal = remove_turn_cells(bridge, "S", 0)
    assert removal.describe() == "1 agent cell(s) removed from the notebook; 1 kept (edited by you)"
    assert "a = 1  # mine" in front.sources() and "b = 2" not in front.sources()


async def test_rollback_says_an_agent_cell_the_user_turned_into_markdown_stays():
    """An agent cell of the undone turn that the user changed to markdown stayed (the front-end never
    removes a markdown cell) and the rollback said nothing of it: the kernel did not even ask."""
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["a = 1", "b = 2"])
    front.cells[2]["cell_type"] = "markdown"  # Change to Markdown keeps the cell's id and metadata
    removal = remove_turn_cells(bridge, "S", 0)
    assert removal.describe() == "1 agent cell(s) removed from the notebook; 1 kept (not a code cell)"
    assert front.sources()[2] == "a = 1" and "b = 2" not in front.sources()


async def test_rollback_says_which_of_the_users_cells_keep_the_agents_change():
    """A user's cell the model changed with notebook_edit in an undone turn stays as the model left it
    (it is the user's: nbagent never rewrites it back); the rollback's line says so instead of
    nothing (it read as if the rollback had undone everything)."""
    from nbagent.notebook.document.removal import ORIGIN

    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["a = 1"])
    fixed = {"origin": ORIGIN, "session": "S", "turn": 2, "tool_use_id": "t2-e", "kind": "edit"}
    front.cells[-1]["source"] = "fixed by the agent"
    front.cells[-1]["metadata"]["nbagent"] = fixed
    front.cells.append({"id": "u-md", "cell_type": "markdown", "source": "# edited too", "outputs": [],
                        "metadata": {"nbagent": {**fixed, "turn": 1}}})
    front.cells.append({"id": "u-other", "cell_type": "code", "source": "y = 2", "outputs": [], "execution_count": 5,
                        "metadata": {"nbagent": {**fixed, "session": "another"}}})
    before = [dumps(c) for c in front.cells if (c["metadata"].get("nbagent") or {}).get("kind") == "edit"]

    fixed_at = len(front.cells) - 3
    assert remove_turn_cells(bridge, "S", 1).describe() == (
        "1 of your cell(s) the agent changed in the undone turn(s) keep(s) its change: "
        f'cell [{fixed_at}] "fixed by the agent" (nbagent never rewrites your cells: Undo in the notebook, or edit it back)')
    removal = remove_turn_cells(bridge, "S", 0)
    assert removal.count == 1 and removal.changed == [front.cells[-3]["id"], "u-md"]
    # Which ones, by their place once the agent's cell above them is gone and their first line:
    # the count alone did not say which of several cells to Undo or edit back.
    assert removal.describe().startswith("1 agent cell(s) removed from the notebook; 2 of your cell(s) the agent ")
    assert f'its change: cell [{fixed_at - 1}] "fixed by the agent", cell [{fixed_at}] "# edited too" (' \
        in removal.describe()
    assert [dumps(c) for c in front.cells if (c["metadata"].get("nbagent") or {}).get("kind") == "edit"] == before


async def test_an_older_front_end_is_never_asked_to_delete():
    front, bridge = issue_notebook(version=1)
    await agent_turn(bridge, 1, ["a = 1"])
    await agent_turn(bridge, 2, ["b = 2"])
    assert all(r["op"] != "delete" for r in front.requests)
    assert front.sources()[2:] == ["b = 2", "a = 1", MINE]
    assert "older than the kernel's" in remove_turn_cells(bridge, "S", 0).describe()


async def test_an_interrupted_runs_cells_go_when_the_cell_runs_again():
    front, bridge = issue_notebook()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(bridge, executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await cells.begin()
    await call(cells, executor, "t1", "a = 1")  # then ■: mark_agent_cell at the end never runs
    await agent_turn(bridge, 2, ["b = 2"])
    assert front.sources()[2:] == ["b = 2", MINE]


async def test_rollback_names_a_users_cell_without_the_key_typed_into_it_since():
    """The model fixed a user's cell; the user then typed a key into it. ``%agent rollback`` named the
    cell by its first line cut to 40 characters, unredacted: 21 characters of the key went into
    the rollback cell's output, saved with the notebook (attacker pass 14)."""
    from nbagent.engine.loop.sanitize import Sanitizer
    from nbagent.notebook.document.removal import ORIGIN

    key = "sk-ant-api03-" + "Zq7Xw2Lm9Rt4Yp8Kd3Hv6Nb1Gf5Js0Ce" * 2
    front, bridge = issue_notebook()
    await agent_turn(bridge, 1, ["a = 1"])
    front.cells[-1]["source"] = f'k = "{key}"\nclient = make(k)'
    front.cells[-1]["metadata"]["nbagent"] = {"origin": ORIGIN, "session": "S", "turn": 2, "kind": "edit"}

    said = remove_turn_cells(bridge, "S", 1, redact=Sanitizer().redact).describe()

    assert 'k = "[redacted]"' in said and key[:16] not in said
