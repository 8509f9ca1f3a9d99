"""The offline model's notebook-tool rules, through the real SDK and the simulated API, on a live
document (the Python front-end of the bridge protocol) and a real IPython shell: "read this
notebook" reads every page and summarises; "fix the cell that …" reads, replaces the failed
cell's source with the fix and runs it, so the notebook ends with working code and its outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from IPython.core.interactiveshell import InteractiveShell

from nbagent import Agent
from nbagent.engine.contracts.events import Done, ToolUse
from nbagent.engine.contracts.json_types import JSONValue
from nbagent.engine.contracts.permissions import Allow, Deny, PermissionRequest
from nbagent.engine.loop.facts import NotebookState, VariableInfo
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.tools import NotebookTools
from nbagent.notebook.executor import ShellExecutor
from nbagent.providers.simulated import SimulatedAPI
from tests.providers.person_code import assert_person_code

from .fake_frontend import FakeFrontEnd

SALES = pd.DataFrame({"region": ["north", "south", "north"], "revenue": [120.0, 95.5, 130.25]})
KEY_ERROR = {"output_type": "error", "ename": "KeyError", "evalue": "'regoin'", "traceback": ["KeyError: 'regoin'"]}


def notebook() -> list[dict[str, Any]]:
    return [
        {"cell_type": "markdown", "source": "# Sales by region"},
        {"cell_type": "code", "source": 'import pandas as pd\n\nsales = pd.read_csv("sales.csv")', "outputs": []},
        {"cell_type": "code", "source": 'sales.groupby("regoin")["revenue"].sum()', "outputs": [KEY_ERROR]},
        {"cell_type": "code", "source": "sales.shape",
         "outputs": [{"output_type": "execute_result", "data": {"text/plain": "(3, 2)"}, "metadata": {}}]},
    ]


class Clicks:
    """The user, answering Allow to every question a call asks despite the allow list (an edit of a cell of theirs)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, JSONValue]]] = []

    async def __call__(self, name: str, tool_input: dict[str, JSONValue], _request: PermissionRequest) -> Allow | Deny:
        self.asked.append((name, tool_input))
        return Allow()


def agent_on(front: FakeFrontEnd, tmp_path: Path, *, with_notebook: bool = True,
             columns_in_facts: bool = True, clicks: Clicks | None = None) -> tuple[Agent, InteractiveShell]:
    shell = InteractiveShell.instance()
    shell.user_ns["sales"] = SALES.copy()

    def facts() -> NotebookState:
        summary = f"shape {SALES.shape}, columns {list(SALES.columns)}" if columns_in_facts else "a table"
        return NotebookState([VariableInfo("sales", "DataFrame", summary)], [])
    sources = [NotebookTools(front.connect(Bridge()), lambda: "S1")] if with_notebook else []
    agent = Agent(provider="simulated", simulated_options={"api": SimulatedAPI()}, cwd=tmp_path,
                  allow=["python", "notebook_edit", "notebook_run"], executor=ShellExecutor(shell),
                  kernel_facts=facts, tool_sources=sources, can_use_tool=clicks or Clicks())
    return agent, shell


def input_of(call: ToolUse) -> dict[str, object]:
    """A tool call's input (an object for every tool these tests call)."""
    assert isinstance(call.input, dict), call.input
    return call.input


async def run(agent: Agent, prompt: str) -> tuple[list[ToolUse], str]:
    events = [e async for e in agent.run(prompt)]
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn", events[-1]
    return [e for e in events if isinstance(e, ToolUse)], agent.last_output or ""


async def test_read_this_notebook_reads_it_and_summarises(tmp_path: Path) -> None:
    agent, _ = agent_on(FakeFrontEnd(notebook()), tmp_path)
    calls, answer = await run(agent, "Read this notebook and tell me what it does")
    assert [(c.name, c.input) for c in calls] == [("notebook_read", {})]
    assert answer.startswith("(simulated model) The notebook has 4 cells (3 code, 1 markdown).")
    assert 'Its headings: "Sales by region".' in answer and "It reads sales.csv." in answer
    assert "Its code defines `sales`." in answer
    assert "Failed: cell [2] (id c3): KeyError: 'regoin' (ask me to fix it)." in answer


async def test_a_long_notebook_is_read_page_by_page(tmp_path: Path) -> None:
    cells = [{"cell_type": "code", "source": f"x{i} = '{'y' * 3000}'", "outputs": []} for i in range(20)]
    agent, _ = agent_on(FakeFrontEnd(cells), tmp_path)
    calls, answer = await run(agent, "summarise the notebook")
    assert [c.name for c in calls] == ["notebook_read"] * 3
    assert isinstance(calls[1].input, dict) and set(calls[1].input) == {"start"}
    assert "The notebook has 20 cells (20 code, 0 markdown)." in answer


async def test_fix_the_cell_reads_replaces_and_runs_it(tmp_path: Path) -> None:
    front, clicks = FakeFrontEnd(notebook()), Clicks()
    agent, shell = agent_on(front, tmp_path, clicks=clicks)
    user_cells = [dict(c) for c in front.cells]
    calls, answer = await run(agent, "Fix the cell that fails with a KeyError")
    fixed = 'sales.groupby("region")["revenue"].sum()'
    assert [(c.name, c.input) for c in calls] == [
        ("notebook_read", {}),
        ("notebook_edit", {"action": "replace", "cell_id": "c3", "source": fixed}),
        ("notebook_run", {"cell_id": "c3"})]
    # notebook_edit is allowed, yet its replace of the user's cell asked: the user's cells are theirs
    assert [name for name, _ in clicks.asked] == ["notebook_edit"] and clicks.asked[0][1]["cell_id"] == "c3"
    assert_person_code([fixed])
    assert front.cells[2]["source"] == fixed and front.cells[2]["metadata"]["nbagent"]["kind"] == "edit"
    assert "north" in front.cells[2]["outputs"][-1]["data"]["text/plain"]  # the run's output is in the cell
    assert [c["source"] for c in front.cells[:2] + front.cells[3:]] == [c["source"] for c in user_cells[:2] + user_cells[3:]]
    assert "typo for 'region'" in answer and "I replaced the source of cell [2] (id c3)" in answer
    assert answer.rstrip().endswith(f"```python\n{fixed}\n```")
    assert shell.user_ns["sales"].shape == (3, 2)


async def test_fix_the_cell_with_nothing_failed_says_so_and_edits_nothing(tmp_path: Path) -> None:
    cells = notebook()[:2]
    front = FakeFrontEnd(cells)
    agent, _ = agent_on(front, tmp_path)
    calls, answer = await run(agent, "fix the cell that computes the totals")
    assert [c.name for c in calls] == ["notebook_read"] and "found nothing to fix" in answer
    assert [c["source"] for c in front.cells] == [c["source"] for c in cells]


async def test_without_a_front_end_it_says_it_cannot_read_the_notebook(tmp_path: Path) -> None:
    agent, _ = agent_on(FakeFrontEnd(notebook()), tmp_path, with_notebook=False)
    calls, answer = await run(agent, "Read this notebook")
    assert calls == [] and "offered only while JupyterLab or Notebook 7" in answer


async def test_fix_the_cell_looks_at_the_columns_when_the_facts_do_not_list_them(tmp_path: Path) -> None:
    front = FakeFrontEnd(notebook())
    agent, _ = agent_on(front, tmp_path, columns_in_facts=False)
    calls, _ = await run(agent, "fix the cell with the KeyError")
    assert [(c.name, input_of(c).get("code")) for c in calls] == [
        ("notebook_read", None), ("python", "sales.dtypes"), ("notebook_edit", None), ("notebook_run", None)]
    assert front.cells[2]["source"] == 'sales.groupby("region")["revenue"].sum()'
