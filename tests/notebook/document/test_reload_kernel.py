"""A page reloaded (or the notebook closed and opened again) on a running kernel: the new page never
saw the kernel's ``comm_open``, and the old page that said hello is gone. The first agent cell of the
new page must still get its cells, its mark and its record, without waiting on the dead comm.

Each page is its own jupyter_client connection to one real kernel (its own ``session``, as each
browser page's kernel connection has), with a Python front-end answering the bridge protocol the
way the extension does: hello on ``comm_open``, one reply per request, on the shell channel."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jupyter_client.session import Session

from nbagent.notebook.document.bridge import TARGET
from nbagent.notebook.document.materialise import NO_BRIDGE_NOTICE
from tests.kernel_driver import KernelDriver

from .fake_frontend import FakeFrontEnd

pytestmark = pytest.mark.kernel

PROBE = """import json
from nbagent.notebook.document.bridge import bridge
print("PROBE" + json.dumps({"reopened": bridge().reopened, "waited": bridge().waited_s}))"""


class Page(KernelDriver):
    """One browser page on a running kernel: a new client session with the nbagent extension."""

    def __init__(self, km: Any, front: FakeFrontEnd) -> None:  # attaches; starts no kernel
        self.km, self.front = km, front
        # A session of its own: each page's kernel connection has one (km.client() shares the km's).
        self.kc = km.client(session=Session(key=km.session.key, signature_scheme=km.session.signature_scheme))
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.runs, self.comms, self.order, self.finished, self._subshell = {}, {}, [], [], None
        self.hellos = 0
        self.bridge_comms: set[str] = set()  # a page answers only on comms whose open it saw

    def _send(self, comm_id: str, data: dict[str, Any]) -> None:
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        content = msg["content"]
        if msg["msg_type"] == "comm_open" and content.get("target_name") == TARGET:
            self.hellos += 1
            self.bridge_comms.add(content["comm_id"])
            self._send(content["comm_id"], {"type": "hello", "version": 2, "frontend": "jupyterlab",
                                            "path": "analysis.ipynb"})
        elif msg["msg_type"] == "comm_msg" and content.get("comm_id") in self.bridge_comms:
            self._send(content["comm_id"], self.front.reply(content["data"]))
        else:
            super()._on_iopub(msg)

    def run_cell(self, cell_id: str) -> str:
        source = next(c["source"] for c in self.front.cells if c["id"] == cell_id)
        run = self.wait_done(self.execute(source, cell_id=cell_id), 90)
        assert run.status == "ok", run.text
        return run.text

    def close(self) -> None:  # the page goes; the kernel stays
        self.kc.stop_channels()


def agent_cell(cell_id: str, n: int) -> dict[str, Any]:
    return {"id": cell_id, "cell_type": "code", "source": f"%%agent --allow python\nwhat is {n} + 17? use python"}


def test_the_first_agent_cell_after_a_reload_gets_its_cells_at_once(tmp_path):
    kernel = KernelDriver("python3", cwd=str(tmp_path))
    try:
        assert kernel.wait_done(kernel.execute("%load_ext nbagent"), 60).status == "ok"
        first = Page(kernel.km, FakeFrontEnd([agent_cell("agent-1", 1)]))
        first.run_cell("agent-1")
        assert first.hellos == 1  # the kernel's bridge is connected to the first page
        first.close()  # reload: the old page is gone; the new one loads the saved notebook
        second = Page(kernel.km, FakeFrontEnd([*copy.deepcopy(first.front.cells), agent_cell("agent-2", 2)]))
        text = second.run_cell("agent-2")
        second.run_cell("agent-2")  # again on the same page: no new comm
        probe = second.wait_done(second.execute(PROBE), 30).text
        state = json.loads(next(ln for ln in probe.splitlines() if ln.startswith("PROBE"))[len("PROBE"):])
        second.close()
    finally:
        kernel.close()
    # A stall on the bridge (REQUEST_TIMEOUT_S) ends in the notice and a cell without the record, both
    # checked: no wall-clock bound, which a loaded CI machine's whole turn can exceed without a stall.
    assert NO_BRIDGE_NOTICE not in text, text
    cells = second.front.cells
    agent = next(c for c in cells if c["id"] == "agent-2")
    below = cells[cells.index(agent) + 1]
    assert agent["metadata"]["nbagent"]["kind"] == "agent" and "record" in agent["metadata"]["nbagent"]
    assert below["metadata"]["nbagent"]["kind"] == "code" and below["metadata"]["nbagent"]["agent_cell"] == "agent-2"
    assert second.hellos == 1 and state["reopened"] == 1, state
