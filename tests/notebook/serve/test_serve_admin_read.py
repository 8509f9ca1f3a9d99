"""The admin's ``allowed_tools`` holds for a client's reads as for nbagent's model: without
``notebook_read`` in it, a client's ``notebook_read`` is refused (nothing is read from the
front-end) and recorded as refused."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel


async def _alive() -> bool:
    return True


async def test_a_read_outside_the_admins_allowed_tools_is_refused() -> None:
    front = FakeFrontEnd([{"cell_type": "code", "source": "PASSWORD_NOTE = 'in the notebook'"}])
    log = ActionLog(lambda: None)
    allowed = {"python"}
    ops = Operations(front.connect(Bridge()), ServeGate(AnsweringPanel(), lambda: "default", _alive, allowed.__contains__),
                     log, InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    out = await ops.read(client, 0, 30, True)
    assert out.is_error and "allowed_tools" in str(out.content)
    assert "PASSWORD_NOTE" not in str(out.content)
    assert not [r for r in front.requests if r.get("op") == "read"]  # nothing read from the notebook
    assert log.entries()[-1].allowed_by == "refused"
    allowed.add("notebook_read")
    assert "PASSWORD_NOTE" in str((await ops.read(client, 0, 30, True)).content)
