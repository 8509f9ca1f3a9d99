"""The serve panel's check asks the page that ran the ``%agent serve`` cell: another window on the
same notebook shows that cell without the panel (a cell's outputs go to the page that ran it), and
its answer, if it came first, refused the call as "cleared" (review of me61, HIGH 1)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.server import ServeServer

SERVE_CELL = "serve-cell"
PANEL = "panel-model-1"


def _two_pages(bridge: Bridge) -> list[dict[str, Any]]:
    """Pages "other" (opened later: the serve cell without outputs) and "ran-serve" (the panel in
    it), each answering what is addressed to it or to no page; "other" answers first."""
    sent: list[dict[str, Any]] = []
    shown = {"other": {"index": 2, "running": False, "outputs": 0, "widgets": [], "outputs_hidden": False,
                       "in_collapsed_section": False},
             "ran-serve": {"index": 2, "running": False, "outputs": 2, "widgets": [PANEL], "outputs_hidden": False,
                           "in_collapsed_section": False}}

    class Comm:
        comm_id = "two-pages"

        def send(self, data: dict[str, Any]) -> None:
            sent.append(data)
            for page, found in shown.items():
                if data.get("client") in (None, page):
                    bridge._on_data({"type": "reply", "id": data["id"], "ok": True, "result": found}, page)

        def close(self) -> None:
            pass

    bridge._comm = Comm()
    for page in shown:
        bridge._on_data({"type": "hello", "version": 2, "frontend": "jupyterlab", "path": "a.ipynb"}, page)
    return sent


async def test_the_panel_check_asks_the_page_that_ran_the_serve_cell() -> None:
    bridge = Bridge()
    sent = _two_pages(bridge)
    server = SimpleNamespace(cell_id=SERVE_CELL, page="ran-serve", bridge=bridge,
                             panel=SimpleNamespace(widget=SimpleNamespace(model_id=PANEL)))
    assert await ServeServer._panel_hidden(server) is None  # type: ignore[arg-type]
    assert [(m["op"], m.get("client")) for m in sent] == [("find", "ran-serve")]


async def test_a_serve_cell_run_in_a_console_on_the_notebooks_kernel_is_not_judged_by_the_notebooks_pages() -> None:
    # (and a page reloaded since: the reopened connection's own check asks to run the cell again)
    bridge = Bridge()
    sent = _two_pages(bridge)
    server = SimpleNamespace(cell_id="console-cell", page="console-session", bridge=bridge,
                             panel=SimpleNamespace(widget=SimpleNamespace(model_id=PANEL)))
    assert await ServeServer._panel_hidden(server) is None  # type: ignore[arg-type]
    assert sent == []  # no notebook page has the console's cell: it is not asked
