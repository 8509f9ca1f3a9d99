"""A card is asked only where the user sees it: once the ``%agent serve`` cell's output is cleared
or hidden, or the cell deleted (the panel's widget lives on in the kernel), a client's call is refused at
once, before asking or while its card waits, instead of waiting unseen for ``ASK_TIMEOUT_S``."""

from __future__ import annotations

import asyncio

import pytest

from .served import SHOW_PANEL, Served, text

pytestmark = pytest.mark.kernel

CLEAR = 'for c in FRONT.cells:\n    if c["id"] == "serve-cell": c["outputs"] = []'
HIDE = ('for c in FRONT.cells:\n    if c["id"] == "serve-cell": '
        'c["metadata"] = {"collapsed": True, "jupyter": {"outputs_hidden": True}}')  # as JupyterLab's "Collapse"
FOLD = 'FRONT.cells[0]["metadata"] = {"jp-MarkdownHeadingCollapsed": True}'  # "# Sales", above the serve cell
DELETE = 'FRONT.cells[:] = [c for c in FRONT.cells if c["id"] != "serve-cell"]'


@pytest.mark.parametrize("gesture", [CLEAR, HIDE, FOLD, DELETE],
                         ids=["output-cleared", "output-hidden", "section-collapsed", "cell-deleted"])
async def test_a_call_is_refused_without_a_card_when_the_serve_panel_is_gone(tmp_path, gesture):
    served = Served(tmp_path)
    try:
        served.run(gesture)
        served.run("FRONT.requests.clear()")
        async with served.client("claude-code") as client:
            refused = await asyncio.wait_for(client.call_tool("run_code", {"code": "HIDDEN_RAN = 1"}), 20)
        assert refused.is_error and "run `%agent serve` again" in text(refused)
        assert served.fresh_button("Allow") is None  # no card was added to the unseen panel
        assert "NameError" in served.run("HIDDEN_RAN")
        # told by a find of that one cell: no read of the whole notebook (its outputs can be 10s of MiB)
        assert "'read'" not in served.run("print([r['op'] for r in FRONT.requests])")
    finally:
        served.close()


async def test_a_waiting_card_is_settled_when_the_serve_output_is_cleared(tmp_path):
    served = Served(tmp_path)
    try:
        async with served.client("claude-code") as client:
            call = asyncio.ensure_future(client.call_tool("run_code", {"code": "HIDDEN_RAN = 1"}))
            while await asyncio.to_thread(served.fresh_button, "Allow") is None:
                pass  # until the card is shown: the user is being asked
            served.run("FRONT.requests.clear()")
            served.run(CLEAR)
            refused = await asyncio.wait_for(call, 20)
        assert refused.is_error and "no longer shown while the user was asked" in text(refused)
        assert "stopped before a decision (the card was no longer shown)" in served.html()
        assert "NameError" in served.run("HIDDEN_RAN")
        assert "'read'" not in served.run("print([r['op'] for r in FRONT.requests])")
    finally:
        served.close()


async def test_running_the_serve_cell_again_shows_cards_again(tmp_path):
    served = Served(tmp_path)
    try:
        served.run(CLEAR)
        served.serve("--clients 8")  # the user runs it again: its output shows the panel again
        served.run(SHOW_PANEL)
        async with served.client("claude-code") as client:
            allowed = await served.call(client, "run_code", {"code": "SHOWN_RAN = 1"}, click="Allow")
        assert not allowed.is_error, text(allowed)
        assert "1" in served.run("print(SHOWN_RAN)")
    finally:
        served.close()

