"""A ``notebook_edit`` that lacks what its action needs (a move without its index, a replace or an
insert without source, a delete without a cell) is refused before anyone is asked, for a client as
for nbagent's model: a card for it asked the user about a call that could only fail once allowed."""

from __future__ import annotations

import pytest

from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.tool_api import ToolInputError
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.tools import NotebookEdit, _Shared
from nbagent.notebook.serve.clients import Clients
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_input_bound import _served

INCOMPLETE: list[tuple[JSONObject, str]] = [
    ({"action": "move", "cell_id": "c1"}, "move needs index"),
    ({"action": "replace", "cell_id": "c1"}, "replace needs source"),
    ({"action": "insert"}, "insert needs source"),
    ({"action": "delete"}, "delete needs cell_id"),
]


@pytest.mark.parametrize(("args", "why"), INCOMPLETE)
async def test_a_clients_incomplete_edit_is_refused_before_asking(args: JSONObject, why: str) -> None:
    ops, panel, front = _served()
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 20, True)
    full: JSONObject = {"cell_id": None, "index": None, "source": None, "cell_type": "code", **args}
    out = await ops.edit(client, full)
    assert out.is_error and why in str(out.content)
    assert panel.asked == [] and not panel.cards.children and [c["source"] for c in front.cells] == ["x = 40"]
    assert ops.log.entries()[-1].allowed_by == "refused"


@pytest.mark.parametrize(("args", "why"), INCOMPLETE)
def test_the_models_incomplete_edit_fails_its_input_check_before_the_permission_question(
        args: JSONObject, why: str) -> None:
    tool = NotebookEdit(_Shared(FakeFrontEnd([]).connect(Bridge()), lambda: "s"))
    with pytest.raises(ToolInputError, match=why):
        tool.validate(args)


async def test_a_clients_delete_of_a_cell_nbagent_would_keep_is_refused_before_asking() -> None:
    # The user's cell, or one the client inserted itself: the card asked, the user clicked Allow,
    # and the delete was refused then ("not the agent's"); a client's delete of such a cell never
    # succeeds, so it asks no one.
    ops, panel, front = _served()
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 20, True)
    out = await ops.edit(client, {"action": "delete", "cell_id": "c1", "index": None, "source": None, "cell_type": "code"})
    assert out.is_error and "Ask the user to delete it" in str(out.content)
    assert panel.asked == [] and [c["source"] for c in front.cells] == ["x = 40"]
    assert ops.log.entries()[-1].allowed_by == "refused"
