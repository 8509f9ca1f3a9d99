"""The notebook tools against the bridge protocol (a Python front-end; the browser tests drive the
real extension): read pages with outputs and images, edits refused on unread or changed cells,
runs whose outputs land in the document and that a timeout interrupts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.notebook.document.bridge import Bridge, BridgeUnavailable
from nbagent.notebook.document.removal import ORIGIN
from nbagent.notebook.document.tools import NotebookTools
from nbagent.notebook.executor import ShellExecutor

from .fake_frontend import FakeFrontEnd

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def cells() -> list[dict[str, Any]]:
    return [
        {"cell_type": "markdown", "source": "# Sales"},
        {"cell_type": "code", "source": "x = 40", "outputs": []},
        {"cell_type": "code", "source": "plot()", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "drawn\n"},
            {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}, "metadata": {}}]},
    ]


@pytest.fixture
def front() -> FakeFrontEnd:
    return FakeFrontEnd(cells())


@pytest.fixture
def tools(front: FakeFrontEnd) -> dict[str, Any]:
    source = NotebookTools(front.connect(Bridge()), lambda: "S1")
    return {t.name: t for t in source.tools()}


def ctx(tmp_path: Path, executor: Any = None) -> ToolContext:
    return ToolContext(cwd=tmp_path, turn=3, tool_use_id="toolu_1", executor=executor)


async def call(tools: dict[str, Any], name: str, tmp_path: Path, executor: Any = None, **args: Any) -> Any:
    return await tools[name].run(args, ctx(tmp_path, executor))


async def test_read_shows_each_cell_with_id_source_outputs_and_images(tools, tmp_path):
    out = await call(tools, "notebook_read", tmp_path)
    text = out.content[0]["text"]
    assert "3 cells" in text and "[1] id=c2 code" in text and "x = 40" in text and "drawn" in text
    assert out.content[1]["type"] == "image" and out.content[1]["source"]["media_type"] == "image/png"


async def test_read_is_paged(tools, tmp_path):
    out = await call(tools, "notebook_read", tmp_path, start=0, count=1)
    assert "showing 0–0" in out.content and "read again with start=1" in out.content


async def test_replace_needs_a_read_and_refuses_a_cell_changed_since(front, tools, tmp_path):
    unread = await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert unread.is_error and "has not been read" in unread.content
    await call(tools, "notebook_read", tmp_path)
    front.cells[1]["source"] = "x = 99  # the user typed here"
    changed = await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert changed.is_error and "changed since you last read it" in changed.content
    assert front.cells[1]["source"] == "x = 99  # the user typed here"
    await call(tools, "notebook_read", tmp_path)
    done = await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert not done.is_error and front.cells[1]["source"] == "x = 41"
    mark = front.cells[1]["metadata"]["nbagent"]
    assert {k: mark[k] for k in ("session", "turn", "tool_use_id", "kind", "origin")} == {
        "session": "S1", "turn": 3, "tool_use_id": "toolu_1", "kind": "edit", "origin": ORIGIN}


async def test_insert_delete_and_move(front, tools, tmp_path):
    await call(tools, "notebook_read", tmp_path)
    added = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c1", source="y = 2")
    assert not added.is_error and front.sources() == ["# Sales", "y = 2", "x = 40", "plot()"]
    moved = await call(tools, "notebook_edit", tmp_path, action="move", cell_id="c3", index=0)
    assert not moved.is_error and front.sources()[0] == "plot()"
    refused = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id="c2")
    assert refused.is_error and "Ask the user to delete it" in refused.content and "x = 40" in front.sources()
    new_id = next(c["id"] for c in front.cells if c["source"] == "y = 2")  # the model's own cell: its to delete
    gone = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id=new_id)
    assert not gone.is_error and "y = 2" not in front.sources()
    markdown = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id="c1")
    assert markdown.is_error and "not a code cell" in markdown.content and "# Sales" in front.sources()


async def test_delete_refuses_the_models_own_cell_once_the_user_edited_it(front, tools, tmp_path):
    await call(tools, "notebook_read", tmp_path)
    await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c1", source="y = 2")
    new_id = front.cells[1]["id"]
    front.cells[1]["source"] = "y = 3  # mine now"
    await call(tools, "notebook_read", tmp_path)
    refused = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id=new_id)
    assert refused.is_error and "edited by you" in refused.content
    assert "y = 3  # mine now" in front.sources()


async def test_run_puts_the_outputs_in_the_document(front, tools, tmp_path):
    shell = InteractiveShell.instance()
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    assert not out.is_error and shell.user_ns["x"] == 40
    front.cells[1]["source"] = "print(x + 2)"
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    assert "42" in out.content
    assert front.cells[1]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "42\n"}]


async def test_a_run_past_its_timeout_is_interrupted_and_the_agent_goes_on(front, tools, tmp_path):
    front.cells[1]["source"] = "import time\nfor _ in range(600): time.sleep(0.05)"
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(InteractiveShell.instance()),
                     cell_id="c2", timeout_s=1)
    assert out.is_error and "KeyboardInterrupt" in out.content
    assert front.cells[1]["outputs"][-1]["output_type"] == "error"
    await asyncio.sleep(0)  # the loop is still running: the agent was not cancelled


async def test_a_markdown_cell_does_not_run(tools, tmp_path):
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(InteractiveShell.instance()), cell_id="c1")
    assert out.is_error and "markdown" in out.content


def test_no_tools_are_offered_without_a_front_end() -> None:
    assert list(NotebookTools(Bridge(), lambda: "S").tools()) == []


async def test_a_front_end_that_stops_answering_is_a_clear_error_once_then_no_tools(front, tmp_path):
    bridge = front.connect(Bridge())
    front.answer = False
    with pytest.raises(BridgeUnavailable, match="did not answer"):
        await bridge.request("read", timeout=0.2)
    assert not bridge.connected and list(NotebookTools(bridge, lambda: "S").tools()) == []
