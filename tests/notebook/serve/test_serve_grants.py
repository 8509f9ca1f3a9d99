"""Whom "Allow always" covers: the client as :class:`Clients` keys it (its name and its MCP
session), never a name another client can claim."""

from __future__ import annotations

import pytest

from nbagent.engine.contracts.events import CallPreview
from nbagent.notebook.serve.card import ServePanel
from nbagent.notebook.serve.clients import Client, Clients
from nbagent.notebook.serve.gate import CallRefused, Request, ServeGate
from nbagent.notebook.view.prompts import PermissionPrompt


class AnsweringPanel(ServePanel):
    """Clicks "Allow always" on the first card and Deny on the others, as soon as each is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def ask(self, client: str, tool: str, summary: str, detail: str, reason: str,
            preview: CallPreview | None = None) -> PermissionPrompt:
        prompt = super().ask(client, tool, summary, detail, reason, preview)
        _ = prompt.deny("no") if self.asked else prompt.allow_always()
        self.asked.append(client)
        return prompt


async def _alive() -> bool:
    return True


def _run(client: Client) -> Request:
    return Request(client.name, "python", "run code in the kernel", "x = 1", client.key)


async def test_allow_always_is_not_inherited_by_a_client_claiming_another_ones_shown_name() -> None:
    clients = Clients(max_clients=8)
    clients.admit(("claude-code", "session-1"))
    second = clients.admit(("claude-code", "session-2"))
    impostor = clients.admit(("claude-code #2", "session-3"))  # claims the name the second one is shown by
    assert second.name == "claude-code #2" and impostor.name != second.name
    panel = AnsweringPanel()
    gate = ServeGate(panel, lambda: "default", _alive, lambda _tool: True)
    assert (await gate.check(_run(second))).by == "the user (Allow always)"
    assert (await gate.check(_run(second))).by == "the user (Allow always, earlier)"
    with pytest.raises(CallRefused, match="denied"):  # asked, not allowed by the other one's grant
        await gate.check(_run(impostor))
    assert panel.asked == ["claude-code #2", impostor.name]
    assert gate.always() == ["python for claude-code #2"]


async def test_allow_always_runs_nothing_while_no_front_end_answers() -> None:
    """"Keep the notebook open: nothing runs while it is closed" holds for a grant too: an "Allow
    always" given earlier does not run a client's code once the notebook is closed (or opened
    again without its serve cell run again, which :meth:`ServeServer._alive` refuses)."""
    open_now = [True]

    async def alive() -> bool:
        return open_now[0]

    client = Clients().admit(("claude-code", "s1"))
    gate = ServeGate(AnsweringPanel(), lambda: "default", alive, lambda _tool: True)
    assert (await gate.check(_run(client))).by == "the user (Allow always)"
    open_now[0] = False  # the user closed the notebook's tab
    with pytest.raises(CallRefused, match="not open"):
        await gate.check(_run(client))
    open_now[0] = True
    assert (await gate.check(_run(client))).by == "the user (Allow always, earlier)"


async def test_a_denied_run_code_is_named_as_the_client_called_it() -> None:
    """The client was told "The user denied this python call", a tool it does not have: it called
    run_code (the policy and the hooks know it as python)."""
    client = Clients().admit(("claude-code", "s1"))
    panel = AnsweringPanel()
    panel.asked.append("a first card allowed always")  # so this one is denied
    gate = ServeGate(panel, lambda: "default", _alive, lambda _tool: True)
    with pytest.raises(CallRefused, match=r"^The user denied this run_code call in the notebook: no\.$"):
        await gate.check(_run(client))
