"""What ``%agent serve`` sends back has the secrets redacted as they are at the call, from the same
sources as nbagent's own model (the session's ``secret_env`` and the secrets given in code): not
only those set when the server started. A real kernel and client (see :mod:`.served`)."""

from __future__ import annotations

import pytest

from .served import Served, text

pytestmark = pytest.mark.kernel

LATE = "PostServeTok_zyxwvutsrqponmlkjih987"
GIVEN = "CodeGivenKey_abcdefghijklmnop12345"
DB = "DbPassword_qrstuvwxyzabcdefgh678"
PASSWORD = "Hunter2-notebook-pw"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("serve-secrets"))
    yield s
    s.close()


async def test_a_key_put_in_the_environment_after_serve_started_is_redacted_in_list_variables(served):
    served.run(f"import os, pandas as pd\nos.environ['ANTHROPIC_AUTH_TOKEN'] = {LATE!r}\n"
               "late = os.environ['ANTHROPIC_AUTH_TOKEN']\ndf = pd.DataFrame({'t': [late] * 3, 'n': [1, 2, 3]})")
    async with served.client() as client:
        listed = await served.call(client, "list_variables", {"names": ["late", "df"]})
    assert not listed.is_error and "late: str" in text(listed) and "df: DataFrame" in text(listed)
    assert "[redacted]" in text(listed) and "PostServeTok" not in text(listed)


async def test_a_session_started_later_adds_its_api_key_and_wider_secret_env(served):
    served.run("from nbagent.notebook.magics import active_magics\n"
               f"active_magics().new_session(provider='simulated', api_key={GIVEN!r}, secret_env=("
               "'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'DB_PASSWORD'))\n"
               f"os.environ['DB_PASSWORD'] = {DB!r}\n"
               f"given = {GIVEN!r}\ndb = os.environ['DB_PASSWORD']\nkeys = pd.DataFrame({{'k': [given, db]}})")
    async with served.client() as client:
        listed = await served.call(client, "list_variables", {"names": ["given", "db", "keys"]})
    assert not listed.is_error and "keys: DataFrame" in text(listed)
    assert "CodeGivenKey" not in text(listed) and "DbPassword" not in text(listed)


async def test_a_key_straddling_notebook_reads_cut_never_reaches_a_client(served):
    # Cut first and redacted whole afterwards, a key across notebook_read's cut kept its first
    # characters; now it is redacted before the cut (and a head left before the marker is caught).
    from nbagent.engine.contracts.tool_api import truncate_middle
    from nbagent.notebook.document.tools import CELL_OUTPUT_CHARS

    def straddles(offset: int) -> bool:
        cut = truncate_middle("a" * offset + LATE + "b" * 3000, CELL_OUTPUT_CHARS)
        return LATE[:12] in cut and LATE not in cut

    offset = next(o for o in range(CELL_OUTPUT_CHARS) if straddles(o))
    served.run(f"import os\nos.environ['ANTHROPIC_AUTH_TOKEN'] = {LATE!r}\n"
               "FRONT.cells.append({'cell_type': 'code', 'id': 'c-long', 'source': 'print(log)', 'metadata': {}, "
               "'execution_count': 1, 'outputs': [{'output_type': 'stream', 'name': 'stdout', "
               f"'text': 'a' * {offset} + {LATE!r} + 'b' * 3000}}]}})")
    async with served.client() as client:
        read = await served.call(client, "notebook_read", {})
    assert not read.is_error and "id=c-long" in text(read)
    assert LATE[:8] not in text(read)


async def test_the_notebook_s_credential_variables_never_reach_a_client(served):
    """nbagent's own model has a notebook's ``db_password`` redacted (read at each prompt's start);
    a client calling between prompts, as clients do, got it in list_variables and in the cell that
    typed it (attacker pass 11)."""
    served.run(f"db_password = {PASSWORD!r}\n"
               f"FRONT.cells.append({{'cell_type': 'code', 'id': 'c-pw', 'source': \"db_password = {PASSWORD!r}\", "
               "'metadata': {}, 'execution_count': 2, 'outputs': []})")
    async with served.client() as client:
        listed = await served.call(client, "list_variables", {"names": ["db_password"]})
        read = await served.call(client, "notebook_read", {})
    assert "db_password: str" in text(listed) and "id=c-pw" in text(read)
    assert PASSWORD not in text(listed) + text(read) and "[redacted]" in text(listed)


async def test_the_kernels_credential_variables_are_redacted_for_a_client_as_for_the_model(served):
    # nbagent's model gets db_password [redacted] in every prompt; list_variables and notebook_read
    # ask no one, so outside a prompt they sent it whole to the client.
    password = "Tr0ub4dor&3horseBattery"
    served.run(f"import pandas as pd\ndb_password = {password!r}\nsettings = {{'db': {{'password': {password!r}}}}}\n"
               "logins = pd.DataFrame({'user': ['a'], 'pw': [db_password]})\n"
               "FRONT.cells.append({'cell_type': 'code', 'id': 'c-pw', 'source': 'db_password = ' + repr(db_password), "
               "'metadata': {}, 'execution_count': 2, 'outputs': []})")
    async with served.client() as client:
        listed = await served.call(client, "list_variables", {"names": ["db_password", "settings", "logins"]})
        read = await served.call(client, "notebook_read", {})
    assert not listed.is_error and "db_password: str" in text(listed) and "logins: DataFrame" in text(listed)
    assert "id=c-pw" in text(read)
    for shown in (text(listed), text(read)):
        assert password not in shown and "Tr0ub4dor" not in shown and "[redacted]" in shown


async def test_a_reply_whose_secrets_cannot_be_read_is_refused_not_sent_unredacted() -> None:
    """Reading the notebook's credential variables raised (a cell changing a mapping, three times in
    a row) outside the call's error handling: the reply was lost to an SDK error (review of this
    session). It is refused with a line, and nothing of it is sent."""
    from typing import Any, Awaitable, Callable

    from nbagent.notebook.serve.app import UNREDACTABLE, ToolCalls
    from nbagent.notebook.serve.clients import Clients

    class Loop:
        async def run(self, work: Callable[[], Awaitable[Any]]) -> Any:
            return await work()

    def unreadable() -> Any:
        raise RuntimeError("dictionary changed size during iteration")

    calls = ToolCalls(None, Clients(), Loop(), unreadable)  # type: ignore[arg-type]

    async def work(_client: object) -> str:
        return f"db_password = {PASSWORD!r}"

    reply = await calls.call(object(), work)  # type: ignore[arg-type]
    assert reply.is_error and [getattr(c, "text", "") for c in reply.content] == [UNREDACTABLE]
