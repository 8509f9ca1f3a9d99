"""A kernel whose front-end has no nbagent extension (jupyter_client, the stock front-end): the
notebook tools are not offered, the first agent cell waits at most once and briefly for a hello
that never comes, and later cells do not wait at all. A front-end that closes the bridge's comm at
once (JupyterLab or Notebook 7 without the extension) ends that wait with its close."""

from __future__ import annotations

import json

import pytest

from nbagent.notebook.document.bridge import HELLO_WAIT_S, TARGET
from tests.kernel_driver import KernelDriver

pytestmark = pytest.mark.kernel

PROBE = """import json, nbagent
from nbagent.notebook.document.bridge import bridge
print("PROBE" + json.dumps({"tools": [s.tools for s in nbagent.session().saw()], "waited": bridge().waited_s,
                            "connected": bridge().connected}))"""


def _three_agent_cells(kernel: str, cwd: str, refuse_targets: tuple[str, ...] = ()) -> dict:
    """Runs an agent cell with a cell id, a second one, and one without: what the kernel saw."""
    d = KernelDriver(kernel, cwd=cwd, refuse_targets=refuse_targets)
    try:
        assert d.wait_done(d.execute("%load_ext nbagent"), 60).status == "ok"
        for n, cell_id in enumerate(["cell-a", "cell-b", None]):
            run = d.wait_done(d.execute(f"%%agent --allow python\nwhat is {n} + 17? use python", cell_id=cell_id), 90)
            assert run.status == "ok", run.text
        probe = d.wait_done(d.execute(PROBE), 30)
        return json.loads(next(ln for ln in probe.text.splitlines() if ln.startswith("PROBE"))[len("PROBE"):])
    finally:
        d.close()


@pytest.mark.parametrize("kernel", ["python3", "nbagent"])
def test_no_front_end_no_notebook_tools_and_one_bounded_wait(tmp_path, kernel):
    state = _three_agent_cells(kernel, str(tmp_path))
    assert state["tools"] and all(not any(t.startswith("notebook_") for t in tools) for tools in state["tools"])
    assert not state["connected"]
    assert HELLO_WAIT_S - 0.1 <= state["waited"] <= HELLO_WAIT_S + 0.5  # the first cell with a cell id only


def test_a_front_end_that_closes_the_comm_ends_the_wait_at_once(tmp_path):
    state = _three_agent_cells("nbagent", str(tmp_path), refuse_targets=(TARGET,))
    assert not state["connected"]
    assert state["tools"] and all(not any(t.startswith("notebook_") for t in tools) for tools in state["tools"])
    assert state["waited"] < HELLO_WAIT_S / 2  # the close, read while the cell runs, not the whole wait
