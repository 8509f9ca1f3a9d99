"""A client's code or cell source that the card would show ``[redacted]`` is refused before asking:
the card redacts secrets (a key's value, or a key's shape: ``Bearer …`` takes any run of letters,
digits and ``./+-_~``), while what runs is the client's text as written, so the user allowed code
whose host, path or base64 payload the card hid (attacker pass 15)."""

from __future__ import annotations

import html
import re

from IPython.core.interactiveshell import InteractiveShell

from nbagent.engine.loop.sanitize import Sanitizer
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd

from .test_serve_grants import AnsweringPanel

PAYLOAD = 'import base64\nexec(base64.b64decode("Bearer aW1wb3J0IG9zOyBvcy5zeXN0ZW0oJ2lkJyk="[7:]))'
KEY = "sk-ant-api03-" + "Kx9" * 30


async def _alive() -> bool:
    return True


def _ops(front: FakeFrontEnd, panel: AnsweringPanel, shell: InteractiveShell) -> Operations:
    redact = lambda: Sanitizer((KEY,)).redact  # noqa: E731 - the server's: the secrets at hand
    return Operations(front.connect(Bridge()), ServeGate(panel, lambda: "default", _alive, lambda _t: True, redact=redact),
                      ActionLog(lambda: None), shell, redactor=redact)


def _card(panel: AnsweringPanel) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", str(panel.cards.children[-1].children[0].value)))


async def test_code_the_card_would_show_redacted_is_refused_before_asking_and_not_run() -> None:
    shell = InteractiveShell.instance()
    shell.user_ns.pop("hidden", None)
    panel = AnsweringPanel()
    ops = _ops(FakeFrontEnd([{"cell_type": "code", "source": "x = 1"}]), panel, shell)
    client = Clients().admit(("claude-code", "s1"))
    out = await ops.run_code(client, 'hidden = "Bearer Ab3dE5gH7jK9mN1pQ3sT5vX7z.evil.example/c"[7:]', 30)
    assert out.is_error and "[redacted]" in str(out.content) and panel.asked == []
    assert "hidden" not in shell.user_ns
    out = await ops.run_code(client, PAYLOAD, 30)
    assert out.is_error and panel.asked == []


async def test_a_cell_source_the_card_would_show_redacted_is_refused_before_asking() -> None:
    front = FakeFrontEnd([{"cell_type": "code", "source": "x = 1"}])
    panel = AnsweringPanel()
    ops = _ops(front, panel, InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    out = await ops.edit(client, {"action": "insert", "cell_id": None, "index": 0, "source": PAYLOAD, "cell_type": "code"})
    assert out.is_error and panel.asked == [] and len(front.cells) == 1


async def test_a_replace_of_a_users_cell_holding_a_key_still_asks_showing_it_redacted() -> None:
    """The user's own key in the cell overwritten is the card's to hide (it is not what runs)."""
    front = FakeFrontEnd([{"cell_type": "code", "source": f'key = "{KEY}"'}])
    panel = AnsweringPanel()
    ops = _ops(front, panel, InteractiveShell.instance())
    client = Clients().admit(("claude-code", "s1"))
    await ops.read(client, 0, 30, True)
    await ops.edit(client, {"action": "replace", "cell_id": "c1", "index": None, "source": "key = None", "cell_type": "code"})
    card = _card(panel)
    assert panel.asked == ["claude-code"] and KEY not in card and "key = None" in card
