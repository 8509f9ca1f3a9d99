"""A real kernel serving its notebook (``%agent serve``), a Python front-end for the bridge in the
kernel, and the ``mcp`` SDK's own client over HTTP on loopback: clicks are real ``comm_msg``s the
idle kernel handles, as a browser sends them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
import mcp_types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.kernel_driver import KernelDriver

SETUP = """\
%load_ext nbagent
from tests.notebook.document.fake_frontend import FakeFrontEnd
from nbagent.notebook.document.bridge import bridge
FRONT = FakeFrontEnd([{"cell_type": "markdown", "source": "# Sales"}, {"cell_type": "code", "source": "x = 40"},
                      {"cell_type": "code", "source": "%agent serve", "id": "serve-cell"}])
FRONT.connect(bridge())
"""

# What a browser's notebook model holds once the serve cell ran: the panel's widget view in its
# outputs (the gate asks only while it is shown there). No name is left in the user's namespace.
SHOW_PANEL = """\
(lambda s, cells: s is None or [c.__setitem__("outputs", [{"output_type": "display_data", "metadata": {},
    "data": {"application/vnd.jupyter.widget-view+json": {"model_id": s.panel.widget.model_id,
    "version_major": 2, "version_minor": 0}}}]) for c in cells if c["id"] == "serve-cell"])(
    __import__("nbagent.notebook.serve.command", fromlist=["current"]).current(), FRONT.cells)
"""


class Served:
    """One kernel with its server; ``call`` makes a client call and clicks a card's button."""

    def __init__(self, tmp: Path, kernel_name: str = "python3", subshell_clicks: bool = False) -> None:
        self.tmp = tmp
        self.subshell_clicks = subshell_clicks  # as JupyterLab 4.6 sends widget comms
        self.d = KernelDriver(kernel_name, cwd=str(tmp), env={"JUPYTER_RUNTIME_DIR": str(tmp / "runtime")})
        self.d.wait_done(self.d.execute(SETUP), 60)
        self.clicked: set[str] = set()
        self.url = self.token = ""
        self.serve("--clients 8")

    def serve(self, options: str = "") -> str:
        # With the cell's id, as JupyterLab sends it: the panel is written there again after a reopen.
        run = self.d.wait_done(self.d.execute(f"%agent serve {options}", cell_id="serve-cell"), 60)
        assert run.status == "ok", run.text
        url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", run.text)
        token_file = re.search(r"the token is in (\S+) ", run.text)
        assert url is not None and token_file is not None, run.text
        self.url, self.token_file = url.group(1), Path(token_file.group(1))
        self.token = self.token_file.read_text()
        self.d.wait_done(self.d.execute(SHOW_PANEL), 60)
        return run.text

    def run(self, code: str) -> str:
        run = self.d.wait_done(self.d.execute(code), 60)
        return run.text

    def cells(self) -> list[dict[str, Any]]:
        text = self.run("import json; print('CELLS' + json.dumps(FRONT.cells))")
        cells: list[dict[str, Any]] = json.loads([line for line in text.splitlines() if line.startswith("CELLS")][-1][5:])
        return cells

    def html(self) -> str:
        """Every HTML widget's text (the panel's cards), after reading what arrived."""
        self.d.pump()
        return "\n".join(str(s.get("value", "")) for s in self.d.comms.values() if s.get("_model_name") == "HTMLModel")

    def fresh_button(self, label: str) -> str | None:
        """The newest button with ``label`` not clicked yet (after reading what arrived)."""
        self.d.pump()
        ids = [b for b in self.d.buttons(label) if b not in self.clicked]
        return ids[-1] if ids else None

    @contextlib.asynccontextmanager
    async def client(self, name: str = "test-client", token: str | None = None) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.token if token is None else token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(self.url, http_client=http)
            info = mcp_types.Implementation(name=name, version="1")
            async with Client(transport, cache=None, client_info=info) as client:
                yield client

    async def call(self, client: Client, tool: str, args: dict[str, Any], click: str | None = None,
                   reason: str | None = None) -> mcp_types.CallToolResult:
        task = asyncio.ensure_future(client.call_tool(tool, args))
        deadline = asyncio.get_running_loop().time() + 60
        while click is not None and not task.done():  # a call refused before asking has no card
            button = await asyncio.to_thread(self.fresh_button, click)
            if button is not None:
                self.clicked.add(button)
                await asyncio.to_thread(self.d.click, button, subshell=self.subshell_clicks)
                break
            assert asyncio.get_running_loop().time() < deadline, f"no {click!r} button within 60 s"
        return await asyncio.wait_for(task, 60)

    def close(self) -> None:
        self.d.close()


def text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)
