"""A client's ``run_code`` that starts an agent prompt (``get_ipython().run_cell_magic("agent", …)``,
which the python tool's text check for a leading ``%%agent`` did not see) is refused at once: the
prompt's Allow / Deny would be shown inside the captured output, seen by no one, and the kernel held
until the call's ``timeout_s`` (up to an hour; the user's cells queued behind it)."""

from __future__ import annotations

import pytest

from .served import Served, text

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("serve"))
    yield s
    s.close()


@pytest.mark.parametrize("code", [
    "get_ipython().run_cell_magic('agent', '', 'what is 17 * 23? use python')",
    "from nbagent.notebook.magics import active_magics\nawait active_magics().fix_async('')",
    "from nbagent.notebook.cell_transformer import run_agent_cell\nawait run_agent_cell('', 'what is 2 + 2?')",
])
async def test_a_clients_code_that_starts_an_agent_prompt_is_refused_not_left_waiting(served, code):
    async with served.client("claude-code") as client:
        result = await served.call(client, "run_code", {"code": code, "timeout_s": 600}, click="Allow")
    said = text(result)
    assert result.is_error and "cannot run %agent/%%agent" in said, said
    assert "timed out" not in said
    assert served.run("print('idle')").strip() == "idle"  # the kernel runs the user's next cell
