"""A client's ``notebook_edit`` source and ``run_code`` code are bounded: one over
``MAX_INPUT_CHARS`` is refused before anyone is asked (the card would highlight it whole on the
kernel's loop first), with a message the client can act on, and the record shows the refusal."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import MAX_INPUT_CHARS, ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel

TOO_LONG = "x = 1\n" * (MAX_INPUT_CHARS // 6 + 1)


async def _alive() -> bool:
    return True


def _served() -> tuple[Operations, AnsweringPanel, FakeFrontEnd]:
    front = FakeFrontEnd([{"cell_type": "code", "source": "x = 40"}])
    panel = AnsweringPanel()
    ops = Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance())
    return ops, panel, front


async def test_run_code_over_the_bound_is_refused_before_asking() -> None:
    ops, panel, _ = _served()
    out = await ops.run_code(Clients().admit(("claude-code", "s1")), TOO_LONG, 30)
    assert out.is_error and f"at most {MAX_INPUT_CHARS:,}" in str(out.content)
    assert panel.asked == [] and not panel.cards.children
    assert ops.log.entries()[-1].allowed_by == "refused"


async def test_an_insert_over_the_bound_is_refused_before_asking() -> None:
    ops, panel, front = _served()
    out = await ops.edit(Clients().admit(("claude-code", "s1")), {"action": "insert", "cell_id": None, "index": None,
                                                                  "source": TOO_LONG, "cell_type": "code"})
    assert out.is_error and "split it" in str(out.content)
    assert panel.asked == [] and len(front.cells) == 1
    assert ops.log.entries()[-1].outcome.startswith("refused")


async def test_code_at_the_bound_is_asked_about() -> None:
    ops, panel, _ = _served()
    await ops.run_code(Clients().admit(("claude-code", "s1")), "#" * MAX_INPUT_CHARS, 30)
    assert panel.asked == ["claude-code"]
