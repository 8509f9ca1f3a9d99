"""Materialised code: each python call that ran becomes a cell below the agent cell (source as run,
outputs, metadata); a denied call does not; running the agent cell again replaces its cells;
(every earlier run's, an Undo's included); rollback removes the cells of the turns it undoes; without a
front-end, one next-input cell."""

from __future__ import annotations

import functools
from typing import Any

from IPython.core.interactiveshell import ExecutionResult, InteractiveShell

from nbagent.engine.contracts import events as ev
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.materialise import (
    NO_BRIDGE_NOTICE,
    NOT_IN_NOTEBOOK_NOTICE,
    SILENT_PAGE_NOTICE,
    Materialiser,
    remove_turn_cells,
)
from nbagent.notebook.document.removal import ORIGIN
from nbagent.notebook.executor import ShellExecutor

from .fake_frontend import FakeFrontEnd


def front_with_agent_cell() -> FakeFrontEnd:
    return FakeFrontEnd([{"cell_type": "code", "source": "import pandas"},
                         {"cell_type": "code", "source": "%%agent\nplot it"},
                         {"cell_type": "markdown", "source": "the user's notes"}])


async def call(cells: Materialiser, executor: ShellExecutor, uid: str, code: str, *, run: bool = True) -> None:
    await cells.handle(ev.ToolUse(tool_use_id=uid, name="python", input={"code": code}))
    if run:
        await executor.execute(code)
    await cells.handle(ev.ToolResult(tool_use_id=uid, name="python", content="", is_error=not run))


async def test_each_python_call_that_ran_becomes_a_cell_in_order_with_outputs_and_metadata():
    front = front_with_agent_cell()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 2, agent_cell_id="c2")
    await cells.begin()
    await call(cells, executor, "t1", "a = 6\nprint(a * 7)")
    await call(cells, executor, "t2", "del everything", run=False)  # denied: never ran
    await call(cells, executor, "t3", "a + 1")
    assert front.sources() == ["import pandas", "%%agent\nplot it", "a = 6\nprint(a * 7)", "a + 1", "the user's notes"]
    first, second = front.cells[2], front.cells[3]
    assert first["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "42\n"}]
    assert second["outputs"][0]["output_type"] == "execute_result" and second["outputs"][0]["data"]["text/plain"] == "7"
    mark = first["metadata"]["nbagent"]
    assert {k: mark[k] for k in ("session", "turn", "tool_use_id", "kind", "agent_cell", "origin")} == {
        "session": "S", "turn": 2, "tool_use_id": "t1", "kind": "code", "agent_cell": "c2", "origin": ORIGIN}


async def test_an_agent_cell_run_again_replaces_its_cells_and_rollback_removes_a_turns_cells():
    front = front_with_agent_cell()
    bridge = front.connect(Bridge())
    executor = ShellExecutor(InteractiveShell.instance())
    for turn in (1, 2):
        cells = Materialiser(bridge, executor, session="S", turn=functools.partial(int, turn), agent_cell_id="c2")
        await cells.begin()
        await call(cells, executor, f"t{turn}", f"b = {turn}")
        await cells.mark_agent_cell(turn)
    assert front.sources() == ["import pandas", "%%agent\nplot it", "b = 2", "the user's notes"]
    assert front.cells[1]["metadata"]["nbagent"] == {"session": "S", "turn": 2, "kind": "agent", "origin": ORIGIN}

    assert remove_turn_cells(bridge, "S", 1).count == 1
    assert front.sources() == ["import pandas", "%%agent\nplot it", "the user's notes"]


async def test_a_re_run_also_replaces_an_earlier_run_that_undo_brought_back() -> None:
    front = front_with_agent_cell()
    bridge = front.connect(Bridge())
    executor = ShellExecutor(InteractiveShell.instance())
    undone: list[dict[str, Any]] = []
    for turn in (1, 2, 3):
        if turn == 2:
            undone = [dict(c) for c in front.cells if c["source"] == "b = 1"]
        if turn == 3:  # Undo after turn 2's re-run: turn 1's cell is back, the agent cell's mark says 2
            front.cells[2:3] = undone
            assert front.sources() == ["import pandas", "%%agent\nplot it", "b = 1", "the user's notes"]
        cells = Materialiser(bridge, executor, session="S", turn=functools.partial(int, turn), agent_cell_id="c2")
        await cells.begin()
        await call(cells, executor, f"t{turn}", f"b = {turn}")
        await cells.mark_agent_cell(turn)
    assert front.sources() == ["import pandas", "%%agent\nplot it", "b = 3", "the user's notes"]
    assert cells.notice() is None


async def test_a_re_run_says_it_removed_a_cell_the_user_had_moved_and_what_an_earlier_kernel_left():
    front = front_with_agent_cell()
    theirs = {"origin": "an-earlier-kernel", "session": "S0", "turn": 1, "kind": "code", "agent_cell": "c2"}
    front.cells.append({"cell_type": "code", "id": "old", "source": "b = 0", "metadata": {"nbagent": theirs},
                        "outputs": [], "execution_count": None})
    bridge = front.connect(Bridge())
    executor = ShellExecutor(InteractiveShell.instance())
    first = Materialiser(bridge, executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await first.begin()
    await call(first, executor, "t1", "b = 1")
    await call(first, executor, "t2", "b = 2")
    await first.mark_agent_cell(1)
    notice = first.notice()
    assert notice is not None and ("1 cell(s) this cell made in an earlier kernel (before a restart, or in the "
                                   "notebook this one was copied from) stay") in notice
    assert "moved" not in notice
    front.cells.insert(0, front.cells.pop(front.sources().index("b = 2")))  # the user moves one to the top

    again = Materialiser(bridge, executor, session="S", turn=lambda: 2, agent_cell_id="c2")
    await again.begin()

    assert front.sources() == ["import pandas", "%%agent\nplot it", "the user's notes", "b = 0"]
    notice = again.notice()
    assert notice is not None and "1 cell(s) of this cell's earlier runs removed from elsewhere in the notebook" in notice
    assert "made in an earlier kernel (before a restart" in notice


async def test_a_copied_agent_cells_pasted_code_cells_stay_and_the_run_says_they_will_run_too():
    """A user copied an agent cell with its code cell into another notebook and ran it: it asks the
    model (a copy), its new cell lands right below it and the pasted code cell stays below that, so
    Run All ran the same code twice, and nothing said so. A cell this kernel made for another agent
    cell that the user only moved here is not counted: that cell's re-run still removes it."""
    from nbagent.notebook.document.removal import ORIGIN

    front = front_with_agent_cell()
    pasted = {"origin": "the-other-notebooks-kernel", "session": "S0", "turn": 1, "kind": "code",
              "agent_cell": "their-agent-cell", "made": {"cell_id": "their-cell"}}
    moved = {"origin": ORIGIN, "session": "S", "turn": 1, "kind": "code", "agent_cell": "c9", "made": {"cell_id": "mv"}}
    front.cells[2:2] = [{"cell_type": "code", "id": "pasted", "source": "b = 0", "metadata": {"nbagent": pasted},
                         "outputs": [], "execution_count": 3},
                        {"cell_type": "code", "id": "mv", "source": "m = 0", "metadata": {"nbagent": moved},
                         "outputs": [], "execution_count": 4}]
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await cells.begin()
    await call(cells, executor, "t1", "b = 1")
    await cells.mark_agent_cell(1)
    assert front.sources() == ["import pandas", "%%agent\nplot it", "b = 1", "b = 0", "m = 0", "the user's notes"]
    assert cells.notice() == (
        "ⓘ 1 cell(s) below this one are copies of another agent cell's code (pasted with a copy of that cell, or "
        "duplicated): they are yours, so they stay. Delete them if this run's cells replace them, or Run All will "
        "run them too.")


async def test_an_error_becomes_an_error_output():
    front = front_with_agent_cell()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await call(cells, executor, "t1", "1 / 0")
    error = front.cells[2]["outputs"][-1]
    assert error["output_type"] == "error" and error["ename"] == "ZeroDivisionError"


async def test_an_attempt_that_raised_is_tagged_so_run_all_goes_on_past_it():
    """The agent's failed attempt is a cell that raises again on Run All: without Jupyter's
    ``raises-exception`` tag, Restart & Run All (and nbclient, papermill) stopped there, short of the
    state the turn left; a call that ran cleanly carries no tag."""
    front = front_with_agent_cell()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await call(cells, executor, "t1", "total = undefined_name + 1")
    await call(cells, executor, "t2", "total = 1 + 1")
    failed, fixed = front.cells[2], front.cells[3]
    assert failed["outputs"][-1]["output_type"] == "error" and failed["metadata"]["tags"] == ["raises-exception"]
    assert "tags" not in fixed["metadata"]


async def test_script_in_an_output_never_enters_the_document():
    front = front_with_agent_cell()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    code = ("from IPython.display import display, HTML, Javascript\n"
            "display(HTML('<img src=x onerror=alert(1)><b>ok</b>'))\ndisplay(Javascript('alert(2)'))")
    await call(cells, executor, "t1", code)
    text = str(front.cells[2]["outputs"])
    assert "onerror" not in text and "alert(2)" not in text and "<b>ok</b>" in text


async def test_without_a_front_end_the_last_code_is_the_next_input_with_one_notice() -> None:
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(Bridge(), executor, session="S", turn=lambda: 1, agent_cell_id=None)
    await cells.begin()
    await call(cells, executor, "t1", "c = 1")
    await call(cells, executor, "t2", "c + 1")
    got: list[str] = []

    class Shell:
        def set_next_input(self, text: str, replace: bool = False) -> None:
            got.append(text)

    shell: Any = Shell()
    assert cells.fallback(shell) == NO_BRIDGE_NOTICE and got == ["c + 1"]


async def test_a_page_that_sent_a_cell_id_but_does_not_answer_is_not_called_nbclient() -> None:
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(Bridge(), executor, session="S", turn=lambda: 1, agent_cell_id="agent-cell")
    await call(cells, executor, "t1", "d = 2")
    got: list[str] = []

    class Shell:
        def set_next_input(self, text: str, replace: bool = False) -> None:
            got.append(text)

    shell: Any = Shell()
    notice = cells.fallback(shell)
    assert notice == SILENT_PAGE_NOTICE and "nbclient" not in notice and got == ["d = 2"]


async def test_a_cell_the_user_undid_while_the_turn_ran_leaves_the_next_one_below_the_turns_last_cell() -> None:
    # Undo (Z) while the agent waits on its next Allow removes the cell it just made; the next call's
    # cell was refused ("no cell with id …"), and the run fell back to one unmarked next-input cell
    # saying the page does not answer ("is nbagent installed…?"), which it does.
    front = front_with_agent_cell()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await cells.begin()
    await call(cells, executor, "t1", "e = 1")
    await call(cells, executor, "t2", "e + 1")
    del front.cells[3]  # the user's Undo took `e + 1` away
    await call(cells, executor, "t3", "e + 2")
    del front.cells[2:4]  # and then `e = 1` and `e + 2`
    await call(cells, executor, "t4", "e + 3")
    assert front.sources() == ["import pandas", "%%agent\nplot it", "e + 3", "the user's notes"]
    assert front.cells[2]["metadata"]["nbagent"]["tool_use_id"] == "t4"
    shell: Any = object()  # no next input: the page took every cell
    assert cells.fallback(shell) is None and cells.live


async def test_a_page_failing_an_insert_for_another_reason_does_not_say_the_cell_left_the_notebook() -> None:
    # Only "no cell with id" means the anchor went; any other refusal (a page-side error) is not
    # retried below every earlier cell, and the notice does not claim the agent cell was deleted.
    front = front_with_agent_cell()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await cells.begin()
    await call(cells, executor, "t1", "f = 1")

    def broken(r: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("insertCell: the model is read-only")

    front.op_insert = broken  # type: ignore[method-assign]
    before = len(front.requests)
    await call(cells, executor, "t2", "f + 1")
    assert [r["op"] for r in front.requests[before:]] == ["insert"]
    assert not cells.elsewhere
    shell: Any = type("Shell", (), {"set_next_input": lambda self, text, replace: None})()
    assert cells.fallback(shell) == SILENT_PAGE_NOTICE != NOT_IN_NOTEBOOK_NOTICE


async def test_a_materialised_cell_shows_it_ran_under_the_agent_cells_execution_count():
    front = front_with_agent_cell()
    shell = InteractiveShell.instance()
    executor = ShellExecutor(shell)
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await cells.begin()
    agent_count = 17
    shell.displayhook.exec_result = ExecutionResult(None)  # as IPython does while the agent cell [17] runs
    shell.displayhook.exec_result.execution_count = agent_count
    try:
        await call(cells, executor, "t1", "print('hi')\n6 * 7")
    finally:
        shell.displayhook.exec_result = None
    made = front.cells[2]
    assert made["execution_count"] == agent_count
    assert [o.get("execution_count") for o in made["outputs"] if o["output_type"] == "execute_result"] == [agent_count]


KEY = "sk-ant-api03-" + "Mm4" * 30


async def test_a_key_printed_by_the_agent_s_code_is_redacted_in_its_cell_as_on_its_card(monkeypatch):
    from nbagent.engine.loop.sanitize import Sanitizer

    front = front_with_agent_cell()
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await call(cells, executor, "t1", f"print('KEY={KEY}')\n'{KEY}'")  # known by its shape
    assert KEY not in str(front.cells[2]["outputs"]) and "KEY=[redacted]" in str(front.cells[2]["outputs"])

    listed = "gateway-secret-value-123"  # known by value: the session's sanitizer, as cell_run passes it
    cells = Materialiser(front.connect(Bridge()), executor, session="S", turn=lambda: 1, agent_cell_id="c2",
                         redact=Sanitizer(secrets=(listed,)).strings)
    await call(cells, executor, "t2", "print('gateway-secret-' + 'value-123')")
    assert listed not in str(front.cells[3]["outputs"]) and "[redacted]" in str(front.cells[3]["outputs"])


async def test_a_re_run_past_the_users_cells_among_the_agents_does_not_say_they_were_moved():
    """The user put a cell of their own between the agent's first two cells: the
    re-run removes the second where it stands and says it was below the user's cells, not that it
    was "moved there, or brought back by Undo"; a cell moved below the next agent cell still is."""
    front = front_with_agent_cell()
    bridge = front.connect(Bridge())
    executor = ShellExecutor(InteractiveShell.instance())
    first = Materialiser(bridge, executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await first.begin()
    await call(first, executor, "t1", "a = 1")
    await call(first, executor, "t2", "a = 2")
    await call(first, executor, "t3", "a = 3")
    await first.mark_agent_cell(1)
    at = front.sources().index("a = 2")
    front.cells.insert(at, {"id": "mine", "cell_type": "code", "source": "mine = 1", "metadata": {}, "outputs": [],
                            "execution_count": None})
    front.cells.append({"id": "next-agent", "cell_type": "code", "source": "%%agent\nnext question", "metadata": {},
                        "outputs": [], "execution_count": None})
    front.cells.append(front.cells.pop(front.sources().index("a = 3")))  # moved below the next agent cell

    again = Materialiser(bridge, executor, session="S", turn=lambda: 2, agent_cell_id="c2")
    await again.begin()
    assert "a = 2" not in front.sources() and "a = 3" not in front.sources() and "mine = 1" in front.sources()
    notice = again.notice() or ""
    assert "ⓘ 1 cell(s) of this cell's earlier runs removed from below cells of yours among them" in notice
    assert "ⓘ 1 cell(s) of this cell's earlier runs removed from elsewhere in the notebook (moved there" in notice


async def test_marking_the_agent_cell_keeps_what_the_notebooks_author_put_in_its_mark():
    # Notebook 03's agent cells carry {"nbagent": {"click": ["Cancel"]}} (what an unattended run answers);
    # one live run in JupyterLab replaced the whole mark, so the next unattended run lost those answers.
    front = front_with_agent_cell()
    front.cells[1]["metadata"] = {"nbagent": {"click": ["Send now", "Allow"]}, "tags": ["raises-exception"]}
    bridge = front.connect(Bridge())
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(bridge, executor, session="S", turn=lambda: 1, agent_cell_id="c2")
    await cells.begin()
    await call(cells, executor, "t1", "b = 1")

    await cells.mark_agent_cell(1)

    assert front.cells[1]["metadata"]["nbagent"] == {"click": ["Send now", "Allow"], "session": "S", "turn": 1,
                                                     "kind": "agent", "origin": ORIGIN}
    assert front.cells[1]["metadata"]["tags"] == ["raises-exception"]


async def test_a_console_cell_on_the_notebooks_kernel_is_not_said_to_lack_the_extension() -> None:
    # New Console for Notebook: the page answers (nbagent is installed) but has no such cell.
    executor = ShellExecutor(InteractiveShell.instance())
    cells = Materialiser(front_with_agent_cell().connect(Bridge()), executor, session="S", turn=lambda: 1,
                         agent_cell_id="console-cell")
    await cells.begin()
    await call(cells, executor, "t1", "e = 3")
    got: list[str] = []

    class Shell:
        def set_next_input(self, text: str, replace: bool = False) -> None:
            got.append(text)

    shell: Any = Shell()
    notice = cells.fallback(shell)
    assert notice == NOT_IN_NOTEBOOK_NOTICE and "installed" not in notice and got == ["e = 3"]
