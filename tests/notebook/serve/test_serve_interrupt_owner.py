"""A client's ``interrupt`` (and its run's timeout) stops the code *its* run executes, never code
another executor runs meanwhile: a client's run that awaits (top-level ``await``) leaves the
kernel's loop free, and nbagent's own agent may run its code then."""

from __future__ import annotations

import threading

from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.executor import ShellExecutor
from nbagent.notebook.serve.clients import Client, Clients
from nbagent.notebook.serve.gate import ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel


async def _alive() -> bool:
    return True


def _ops(shell: InteractiveShell) -> Operations:
    gate = ServeGate(AnsweringPanel(), lambda: "default", _alive, lambda _t: True)
    return Operations(FakeFrontEnd([]).connect(Bridge()), gate, ActionLog(lambda: None), shell)


def _interrupting(ops: Operations, shell: InteractiveShell) -> Client:
    """``interrupt_now()`` in the code calls the client's interrupt from the server's thread."""
    client = Clients().admit(("claude-code", "s1"))

    def interrupt_now() -> str:
        said: list[str] = []
        thread = threading.Thread(target=lambda: said.append(ops.interrupt(client)))
        thread.start()
        thread.join()
        return said[0]

    shell.user_ns["interrupt_now"] = interrupt_now
    return client


async def test_a_clients_interrupt_does_not_reach_the_agents_code() -> None:
    shell = InteractiveShell.instance()
    ops = _ops(shell)
    ops.running = _interrupting(ops, shell)  # its run awaits: the agent's code runs meanwhile
    agent = ShellExecutor(shell)
    result = await agent.execute("SAID = interrupt_now()\nfor _ in range(10_000): pass\nAGENT_DONE = True")
    assert result.error is None, result.error
    assert shell.user_ns["AGENT_DONE"] is True and "nothing interrupted" in shell.user_ns["SAID"]


async def test_a_clients_interrupt_stops_its_own_code() -> None:
    shell = InteractiveShell.instance()
    ops = _ops(shell)
    ops.running = _interrupting(ops, shell)
    shell.user_ns.pop("CLIENT_DONE", None)
    result = await ops.executor.execute("interrupt_now()\nfor _ in range(10_000_000): pass\nCLIENT_DONE = True")
    assert result.error is not None and "KeyboardInterrupt" in result.error
    assert "CLIENT_DONE" not in shell.user_ns


async def test_a_run_stopped_by_its_timeout_says_so_not_only_keyboard_interrupt() -> None:
    # The client saw a KeyboardInterrupt traceback, as if the user had pressed ■, and could not tell
    # that a larger timeout_s would let its code finish.
    shell = InteractiveShell.instance()
    ops = _ops(shell)
    out = await ops.run_code(Clients().admit(("claude-code", "s1")), "import time\nwhile True: time.sleep(0.01)", 1)
    assert out.is_error and "KeyboardInterrupt" in str(out.content)
    assert "timed out: interrupted after timeout_s=1 s" in str(out.content) and "larger timeout_s" in str(out.content)
    quick = await ops.run_code(Clients().admit(("claude-code", "s1")), "QUICK = 1", 1)
    assert not quick.is_error and "timed out" not in str(quick.content)
