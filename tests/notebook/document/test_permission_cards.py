"""What the user sees when a notebook tool asks: an Agent (offline model) edits and runs cells of a
document (the Python front-end of the bridge protocol), and its questions are the live view's
cards: the edit's card shows the cell as it is and as it will be, the run's card the source that
will run, in the widget, the transcript and the saved static HTML."""

from __future__ import annotations

import asyncio
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from nbagent import Agent
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.tools import NotebookTools
from nbagent.notebook.executor import ShellExecutor
from nbagent.notebook.view.agent_view import AgentView
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply

from .fake_frontend import FakeFrontEnd


class AllowingView(AgentView):
    """The live view, with a user who reads each card and clicks Allow."""

    def __init__(self) -> None:
        super().__init__(show_table=False)
        self.seen: list[tuple[str, str]] = []  # (the card's input box, the transcript) at each question

    async def ask_permission(self, tool_name: str, tool_input: Any, request: Any = None) -> Any:
        asked = asyncio.ensure_future(super().ask_permission(tool_name, tool_input, request))
        await asyncio.sleep(0)  # one step of the loop: the prompt is on the card, awaiting a click
        card = self.card(request.tool_use_id, tool_name)
        self.seen.append((card._input.value, self.transcript()))
        self.permission.allow()
        return await asked


async def test_the_edit_card_shows_a_diff_and_the_run_card_the_source(tmp_path):
    front = FakeFrontEnd([{"cell_type": "code", "source": "total = 40\nprint(total)"}])
    shell = InteractiveShell.instance()
    agent = Agent(provider="simulated", cwd=tmp_path, tools=[], executor=ShellExecutor(shell),
                  tool_sources=[NotebookTools(front.connect(Bridge()), lambda: "S1")])
    agent.simulated_api.responder = ScriptedResponder([
        tool_reply("notebook_read", {}),
        tool_reply("notebook_edit", {"action": "replace", "cell_id": "c1", "source": "total = 42\nprint(total)"}),
        tool_reply("notebook_run", {"cell_id": "c1"}),
        text_reply("done"),
    ])
    view = AllowingView()
    async for event in agent.run("fix the total", asker=view):
        view.handle(event)
    (edit_box, edit_text), (run_box, run_text) = view.seen
    assert "nbagent-diff-removed" in edit_box and "total = 40" in edit_box and "total = 42" in edit_box
    assert "replace cell 0 (id c1, code)" in edit_text and "- total = 40" in edit_text and "+ total = 42" in edit_text
    assert "run cell 0 (id c1, code) in the kernel" in run_text and '"cell_id"' not in run_text
    assert "print</span>" in run_box and "total" in run_box  # the source, highlighted
    assert front.cells[0]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "42\n"}]
    # The finished run's static transcript (what a saved notebook keeps) shows the same.
    static = view.static_html()
    assert "nbagent-diff-added" in static and "run cell 0 (id c1, code)" in static
    agent.close()


async def test_a_delete_the_tool_would_refuse_asks_nobody_and_the_model_is_told_why(tmp_path):
    """The model's delete of the user's own cell showed a card; the user clicked Allow, and the
    delete was refused then (power pass 1's open item): a question for nothing."""
    from nbagent.engine.contracts.events import PermissionAsked, ToolResult

    front = FakeFrontEnd([{"cell_type": "code", "source": "sales = load()"}])
    shell = InteractiveShell.instance()
    agent = Agent(provider="simulated", cwd=tmp_path, tools=[], executor=ShellExecutor(shell),
                  tool_sources=[NotebookTools(front.connect(Bridge()), lambda: "S1")])
    agent.simulated_api.responder = ScriptedResponder([
        tool_reply("notebook_read", {}),
        tool_reply("notebook_edit", {"action": "delete", "cell_id": "c1"}),
        text_reply("ok"),
    ])
    view = AllowingView()
    events = []
    async for event in agent.run("tidy up", asker=view):
        view.handle(event)
        events.append(event)
    assert view.seen == [] and not [e for e in events if isinstance(e, PermissionAsked)]
    refused = [e for e in events if isinstance(e, ToolResult) and e.name == "notebook_edit"]
    assert len(refused) == 1 and refused[0].is_error and "Cell c1 was not deleted" in refused[0].content
    assert front.sources() == ["sales = load()"]
    agent.close()
