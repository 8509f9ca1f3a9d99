"""The user's own rules hold for MCP clients as for nbagent's model, in every mode (bypass too):
the session's ``deny`` list and its ``pre_tool_use`` hook refuse a client's call before anyone is
asked; the client is told why and the record shows the refusal. A hook's Allow does not skip the
card, and a hook that would rewrite the call refuses it (the call runs as shown or not at all)."""

from __future__ import annotations

from types import SimpleNamespace

from IPython.core.interactiveshell import InteractiveShell

import nbagent
from nbagent.engine.contracts.hooks import RewriteInput, ToolCall
from nbagent.engine.contracts.permissions import Allow, Deny
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import CallRefused, ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from nbagent.notebook.serve.server import ServeServer
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel


async def _alive() -> bool:
    return True


def no_shell_commands(call: ToolCall) -> Deny | Allow | RewriteInput | None:
    code = str(call.input.get("code") or call.input.get("source") or "")
    if "subprocess" in code:
        return Deny("no shell commands")
    if "ALLOWED_BY_HOOK" in code:
        return Allow()
    if "REWRITE" in code:
        return RewriteInput({"code": "pass"})
    return None


def _served(tmp_path, **settings) -> tuple[Operations, AnsweringPanel, FakeFrontEnd]:  # type: ignore[no-untyped-def]
    agent = nbagent.Agent(provider="simulated", cwd=tmp_path, permission_mode="bypass", start_mcp=False, **settings)
    server = SimpleNamespace(magics=SimpleNamespace(current=SimpleNamespace(agent=agent)))

    async def rules(tool: str, tool_input):  # type: ignore[no-untyped-def]
        return await ServeServer._user_rules(server, tool, tool_input)  # type: ignore[arg-type]

    front = FakeFrontEnd([{"cell_type": "code", "source": "x = 40"}])
    panel = AnsweringPanel()
    gate = ServeGate(panel, lambda: "bypass", _alive, lambda _t: True, rules=rules)
    return Operations(front.connect(Bridge()), gate, ActionLog(lambda: None), InteractiveShell.instance()), panel, front


async def test_a_denied_tool_is_refused_for_a_client_before_asking(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ops, panel, _ = _served(tmp_path, deny=["python"])
    try:
        await ops.run_code(Clients().admit(("claude-code", "s1")), "x = 1", 30)
    except CallRefused as exc:
        said = str(exc)
    else:
        raise AssertionError("run_code ran although python is denied")
    assert "python is denied" in said and panel.asked == []
    assert ops.log.entries()[-1].allowed_by == "refused"


async def test_a_denied_read_reads_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ops, _, _ = _served(tmp_path, deny=["notebook_read"])
    out = await ops.read(Clients().admit(("claude-code", "s1")), 0, 30, True)
    assert out.is_error and "x = 40" not in str(out.content)


async def test_the_users_pre_tool_use_hook_refuses_a_clients_code_and_edit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ops, panel, front = _served(tmp_path, hooks={"pre_tool_use": no_shell_commands})
    client = Clients().admit(("claude-code", "s1"))
    try:
        await ops.run_code(client, "import subprocess; subprocess.run('rm -rf ~')", 30)
    except CallRefused as exc:
        assert "A pre_tool_use hook denied this python call: no shell commands" in str(exc)
    else:
        raise AssertionError("the hook's Deny did not hold")
    try:
        await ops.edit(client, {"action": "insert", "cell_id": None, "index": None,
                                "source": "import subprocess", "cell_type": "code"})
    except CallRefused:
        pass
    else:
        raise AssertionError("the hook's Deny did not hold for an edit")
    assert panel.asked == [] and len(front.cells) == 1


async def test_a_hooks_allow_still_asks_and_a_rewrite_refuses(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ops, panel, _ = _served(tmp_path, hooks={"pre_tool_use": no_shell_commands})
    client = Clients().admit(("claude-code", "s1"))
    await ops.run_code(client, "ALLOWED_BY_HOOK = 1", 30)
    assert panel.asked == ["claude-code"]  # the user still decides
    try:
        await ops.run_code(client, "REWRITE = 1", 30)
    except CallRefused as exc:
        assert "rewrite" in str(exc)
    else:
        raise AssertionError("a rewritten call ran")
    assert panel.asked == ["claude-code"]
