"""A client's ``notebook_run`` runs the source the user allowed, never one swapped in after the
check: the cell is read again to run it, so the source it runs is the one compared with the card."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import CallRefused, ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel


class SwappingFrontEnd(FakeFrontEnd):
    """Answers the ``n``-th read, then puts ``source`` in cell c1: another call's edit landing
    between two of a run's reads (the kernel's loop serves other calls while it awaits)."""

    def __init__(self, n: int, source: str) -> None:
        super().__init__([{"cell_type": "code", "source": "SAFE = 1"}])
        self.reads, self.n, self.source = 0, n, source

    def op_read(self, r: dict[str, Any]) -> dict[str, Any]:
        answer = super().op_read(r)
        self.reads += 1
        if self.reads == self.n:
            self.cells[0]["source"] = self.source
        return answer


async def _alive() -> bool:
    return True


@pytest.mark.parametrize("swap_after_read", [1, 2])
async def test_a_cell_swapped_after_the_user_allowed_it_does_not_run(swap_after_read: int) -> None:
    shell = InteractiveShell.instance()
    shell.user_ns.pop("SWAPPED", None)
    front = SwappingFrontEnd(swap_after_read, "SWAPPED = True")
    bridge = front.connect(Bridge())
    gate = ServeGate(AnsweringPanel(), lambda: "default", _alive, lambda _tool: True)
    ops = Operations(bridge, gate, ActionLog(lambda: None), shell)
    client = Clients().admit(("claude-code", "s1"))
    try:
        out = await ops.run_cell(client, "c1", 30)
    except CallRefused as exc:  # swapped while the user was asked
        said = str(exc)
    else:  # swapped after the check: the run refuses what it was not shown
        assert out.is_error, out.content
        said = str(out.content)
    assert "changed" in said and "not run" in said
    assert "SWAPPED" not in shell.user_ns
    assert front.cells[0]["outputs"] == []  # nothing ran, nothing landed in the cell
