"""``%agent serve`` in real JupyterLab with the bridge: the ``mcp`` SDK's client over HTTP inserts and
runs a cell after Allow is clicked in the page, a Deny, and a notebook closed while a card waits."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
import mcp_types
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.soak import first_by_default

from .test_agent_cells import _cells, _text, _wait
from .test_bridge_frontend import _open, _require_installed_bridge
from .test_jupyterlab import SHOTS, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks


class Calls:
    """One MCP client on its own thread and loop (Playwright's sync API owns the test's thread)."""

    def __init__(self, url: str, token: str, name: str = "claude-code") -> None:
        self.url, self.token, self.name = url, token, name

    def start(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        box: dict[str, Any] = {}

        async def call() -> None:
            headers = {"Authorization": f"Bearer {self.token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=90) as http:
                info = mcp_types.Implementation(name=self.name, version="1")
                async with Client(streamable_http_client(self.url, http_client=http), cache=None,
                                  client_info=info) as client:
                    box["result"] = await client.call_tool(tool, args)

        def run() -> None:
            try:
                asyncio.run(call())
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                box["error"] = exc

        box["thread"] = threading.Thread(target=run, daemon=True)
        box["thread"].start()
        return box

    @staticmethod
    def result(box: dict[str, Any], timeout: float = 60) -> mcp_types.CallToolResult:
        box["thread"].join(timeout)
        assert "error" not in box, box.get("error")
        assert "result" in box, f"no answer within {timeout} s"
        result = box["result"]
        assert isinstance(result, mcp_types.CallToolResult), result
        return result


def _text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


_SERVE_COUNT_JS = ("() => { const c = window.__nb.content.model.sharedModel.cells.find("
                   "c => c.getSource().startsWith('%agent serve')); return c ? c.execution_count : null; }")


def _serve_count(page) -> int | None:
    return page.evaluate(_SERVE_COUNT_JS)


def _settled(page) -> None:
    """Wait until no question is open: the kernel disables a card's buttons a moment after its client
    has the answer, so an enabled button seen before that belongs to the card just answered."""
    page.locator("button:text-is('Allow'):enabled").first.wait_for(state="detached", timeout=60_000)


def _click(page, label: str) -> None:
    button = page.locator(f"button:text-is('{label}'):enabled").last
    button.wait_for(state="visible", timeout=60_000)
    button.click()


@pytest.mark.parametrize("frontend", first_by_default(["jupyterlab", "notebook"]))
def test_a_client_inserts_and_runs_a_cell_once_allowed_in_the_page(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, f"serve_{frontend}.ipynb", "python3", ["%load_ext nbagent", "x = 40", "%agent serve"])
    page = _open(browser, lab, name, frontend)
    _run_all(page)
    cells = _wait(page, lambda cs: "the token is in" in _text(cs[2]["outputs"]), "the serve cell's lines")
    printed = _text(cells[2]["outputs"])
    url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", printed).group(1)  # type: ignore[union-attr]
    token = Path(re.search(r"the token is in (\S+) ", printed).group(1)).read_text()  # type: ignore[union-attr]
    assert token not in printed
    calls = Calls(url, token)

    box = calls.start("notebook_edit", {"action": "insert", "cell_id": cells[1]["id"], "source": "print('y is', x + 2)"})
    page.locator("text=MCP client claude-code").last.wait_for(timeout=60_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"serve_card_{frontend}.png"), full_page=False)
    _click(page, "Allow")
    inserted = calls.result(box)
    assert not inserted.is_error, _text_of(inserted)
    new_id = _text_of(inserted).split()[3]
    cells = _cells(page)
    assert cells[2]["id"] == new_id and cells[2]["meta"]["kind"] == "external"
    _settled(page)

    box = calls.start("notebook_run", {"cell_id": new_id})
    _click(page, "Allow")
    ran = calls.result(box)
    assert not ran.is_error and "y is 42" in _text_of(ran)
    _settled(page)
    _wait(page, lambda cs: "y is 42" in _text([c for c in cs if c["id"] == new_id][0]["outputs"]), "the outputs in the cell")

    box = calls.start("run_code", {"code": "DENIED = 1"})
    _click(page, "Deny")
    denied = calls.result(box)
    assert denied.is_error and "denied" in _text_of(denied)
    _settled(page)

    box = calls.start("run_code", {"code": "CLOSED = 1"})
    page.locator("button:text-is('Allow'):enabled").last.wait_for(timeout=60_000)
    started = time.monotonic()
    page.close()  # the user closes the notebook's tab while the card waits
    closed = calls.result(box, timeout=120)
    assert closed.is_error and "closed" in _text_of(closed), _text_of(closed)
    # The kernel checks the page every ALIVE_EVERY_S (5 s), each check bounded by 3 s; without it the
    # card would wait ASK_TIMEOUT_S (300 s). 30 s left a loaded CI machine little room over ~8 s.
    assert time.monotonic() - started < 100

    page = _open(browser, lab, name, frontend)  # the user opens it again: nothing shows the cards yet
    refused = calls.result(calls.start("run_code", {"code": "print('unseen')"}))
    assert refused.is_error and "run that cell again" in _text_of(refused).lower(), _text_of(refused)
    # Still the cell that ran %agent serve (its source and execution count): the notice goes there.
    _wait(page, lambda cs: any("run this cell again" in _text(c["outputs"]) for c in cs
                               if c["source"].startswith("%agent serve")), "the serve cell's notice")
    before = _serve_count(page)
    _run_all(page)  # the serve cell again: the same server shows its cards there
    # Only once that cell has run: a call before it is refused like the one above ("run that cell
    # again"), and no card would come. Its new count arrives with its execute_reply, after the run.
    page.wait_for_function(f"() => {{ const n = ({_SERVE_COUNT_JS})(); return n !== null && n !== {json.dumps(before)}; }}",
                           timeout=60_000)
    box = calls.start("run_code", {"code": "print('back', x)"})
    _click(page, "Allow")
    again = calls.result(box)
    assert not again.is_error and "back 40" in _text_of(again), _text_of(again)
    page.close()


def _on_serve_cell(page, command: str) -> None:
    """Select the ``%agent serve`` cell (the notebook's third) and run a JupyterLab command on it."""
    page.evaluate("(cmd) => { const nb = window.__nb.content; nb.activeCellIndex = 2; nb.deselectAll(); "
                  "return window.jupyterapp.commands.execute(cmd); }", command)


@pytest.mark.parametrize("frontend", first_by_default(["jupyterlab", "notebook"]))
def test_a_card_is_not_left_waiting_where_the_serve_output_is_hidden_or_cleared(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, f"serve_hidden_{frontend}.ipynb", "python3", ["%load_ext nbagent", "x = 40", "%agent serve"])
    page = _open(browser, lab, name, frontend)
    _run_all(page)
    cells = _wait(page, lambda cs: "the token is in" in _text(cs[2]["outputs"]), "the serve cell's lines")
    printed = _text(cells[2]["outputs"])
    url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", printed).group(1)  # type: ignore[union-attr]
    token = Path(re.search(r"the token is in (\S+) ", printed).group(1)).read_text()  # type: ignore[union-attr]
    calls = Calls(url, token)

    box = calls.start("run_code", {"code": "HIDDEN = 1"})
    page.locator("button:text-is('Allow'):enabled").last.wait_for(timeout=60_000)
    started = time.monotonic()
    _on_serve_cell(page, "notebook:hide-cell-outputs")  # the collapse bar's click: the card is out of sight
    hidden = calls.result(box, timeout=120)
    assert hidden.is_error and "hidden" in _text_of(hidden), _text_of(hidden)
    assert time.monotonic() - started < 60  # checked every 5 s: not the card's 300 s
    _on_serve_cell(page, "notebook:show-cell-outputs")
    box = calls.start("run_code", {"code": "print('shown', x)"})
    _click(page, "Allow")
    shown = calls.result(box)
    assert not shown.is_error and "shown 40" in _text_of(shown), _text_of(shown)
    _settled(page)

    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    started = time.monotonic()
    cleared = calls.result(calls.start("run_code", {"code": "CLEARED = 1"}))
    assert cleared.is_error and "cleared" in _text_of(cleared) and "%agent serve` again" in _text_of(cleared)
    assert time.monotonic() - started < 30  # refused before a card, not after its 300 s
    page.close()
