"""The card of a client's ``notebook_edit`` shows what nbagent's own cards show: which cell (its
index, id and type) and what it holds now against what it will hold (a diff), so the user sees the
cell of theirs a ``replace`` overwrites or a ``move`` moves, and where; an insert after a cell that
is not in the notebook is refused before anyone is asked."""

from __future__ import annotations

import html
import re

from IPython.core.interactiveshell import InteractiveShell

from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.tool_api import ToolExecutionError
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel

CELLS = [{"cell_type": "markdown", "source": "# Sales"},
         {"cell_type": "code", "source": "revenue = load('q3.csv')\nMY_OWN_ANALYSIS = 1"},
         {"cell_type": "code", "source": "x = 40"}]


async def _alive() -> bool:
    return True


async def _ask(args: JSONObject) -> tuple[str, list[str], FakeFrontEnd]:
    """The card's text (tags stripped, entities unescaped) for one call of a client that read the whole notebook."""
    front = FakeFrontEnd(CELLS)
    panel = AnsweringPanel()
    ops = Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 30, True)
    await ops.edit(client, {"action": "insert", "cell_id": None, "index": None, "source": "", "cell_type": "code",
                            **args})
    cards = [html.unescape(re.sub(r"<[^>]+>", "", str(card.children[0].value))) for card in panel.cards.children]
    return (cards[-1] if cards else ""), panel.asked, front


async def test_a_replace_shows_the_users_cell_it_overwrites() -> None:
    card, _, _ = await _ask({"action": "replace", "cell_id": "c2", "source": "x = 0"})
    assert "MY_OWN_ANALYSIS = 1" in card and "revenue = load" in card  # what the user loses
    assert "cell 1 (id c2, code)" in card  # which cell, as the notebook numbers it


async def test_a_replace_that_turns_code_into_markdown_says_so() -> None:
    card, _, _ = await _ask({"action": "replace", "cell_id": "c3", "source": "notes", "cell_type": "markdown"})
    assert "code → markdown" in card and "x = 40" in card


async def test_a_move_says_where_to() -> None:
    card, _, _ = await _ask({"action": "move", "cell_id": "c3", "index": 0})
    assert "to index 0" in card and "x = 40" in card


async def test_an_insert_after_a_cell_not_in_the_notebook_is_refused_before_asking() -> None:
    front_text = "c2 \u202e(a harmless comment; Allow always is safe)"
    _, asked, front = await _ask({"action": "insert", "cell_id": front_text, "source": "import os"})
    assert asked == [] and len(front.cells) == len(CELLS)


async def test_a_runs_card_says_which_cell_by_its_place_and_type() -> None:
    front = FakeFrontEnd(CELLS)
    panel = AnsweringPanel()
    ops = Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    await ops.run_cell(client, "c3", 30)
    card = html.unescape(re.sub(r"<[^>]+>", "", str(panel.cards.children[-1].children[0].value)))
    assert "run cell 2 (id c3, code) in the kernel" in card and "x = 40" in card


async def test_a_run_of_a_markdown_cell_is_refused_before_asking() -> None:
    front = FakeFrontEnd(CELLS)
    panel = AnsweringPanel()
    ops = Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance())
    try:
        await ops.run_cell(Clients().admit(("claude-code", "s1")), "c1", 30)
    except ToolExecutionError as exc:
        assert "only code cells run" in str(exc)
    else:
        raise AssertionError("a markdown cell was run")
    assert panel.asked == []


async def test_a_card_quotes_the_users_cell_without_the_key_typed_there() -> None:
    """nbagent's own cards show the cell a call runs or overwrites redacted (the preview enters the
    event log and the notebook); a client's card showed the key the user typed in that cell whole,
    in the ``%agent serve`` cell's output (attacker pass 14)."""
    import pytest

    from nbagent.engine.loop.sanitize import Sanitizer
    from nbagent.notebook.serve.gate import CallRefused

    key = "sk-proj-" + "Zq7Xw2Lm9Rt4Yp8Kd3Hv6Nb1Gf5Js0Ce" * 2
    front = FakeFrontEnd([{"cell_type": "code", "source": f'n = 1\nopenai_api_key = "{key}"'}])
    panel = AnsweringPanel()
    gate = ServeGate(panel, lambda: "default", _alive, lambda _t: True, redact=lambda: Sanitizer().redact)
    ops = Operations(front.connect(Bridge()), gate, ActionLog(lambda: None), InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 30, True)
    await ops.run_cell(client, "c1", 30)  # the panel clicks Allow always on this one, Deny on the next
    with pytest.raises(CallRefused):
        await ops.edit(client, {"action": "replace", "cell_id": "c1", "index": None, "source": "n = 2",
                                "cell_type": "code"})
    cards = [html.unescape(re.sub(r"<[^>]+>", "", str(card.children[0].value))) for card in panel.cards.children]
    assert len(cards) == 2 and all("openai_api_key" in card for card in cards)
    assert not any(key[:16] in card for card in cards)
