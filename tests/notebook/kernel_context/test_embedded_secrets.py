"""A URL or connection string with a password in a notebook variable, whatever it is called, and a
(user, password) pair under a credential's name reach the model redacted."""

from __future__ import annotations

from pathlib import Path

from nbagent.notebook.kernel_context import KernelContext
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import make_engine, run
from tests.notebook.kernel_context.support import shell_with

URL = "postgresql://analyst:Tr0ub4dor-x9@db.internal:5432/sales"


async def test_a_database_url_s_password_is_redacted_from_the_variables_and_the_cell_that_typed_it(tmp_path: Path) -> None:
    api = SimulatedAPI(lambda body: text_reply("ok"))
    shell = shell_with((f"DATABASE_URL = {URL!r}", "engine = create_engine(DATABASE_URL)"), DATABASE_URL=URL)
    engine = make_engine(api, tmp_path, kernel_facts=KernelContext(shell))
    await run(engine, "why does `DATABASE_URL` fail?")
    body = str(api.requests[-1].body["messages"])
    assert "Tr0ub4dor-x9" not in body and "postgresql://analyst:[redacted]@db.internal:5432/sales" in body


async def test_an_odbc_connection_string_s_password_is_redacted_from_what_the_model_reads(tmp_path: Path) -> None:
    conn = "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db.internal;UID=analyst;PWD=Tr0ub4dor&3x;"
    api = SimulatedAPI(lambda body: text_reply("ok"))
    shell = shell_with((f"conn_str = {conn!r}", "cnxn = pyodbc.connect(conn_str)"), conn_str=conn)
    engine = make_engine(api, tmp_path, kernel_facts=KernelContext(shell))
    await run(engine, "why does `conn_str` fail?")
    body = str(api.requests[-1].body["messages"])
    assert "Tr0ub4dor" not in body and "UID=analyst;PWD=[redacted];" in body


async def test_a_basic_auth_pair_s_password_is_redacted_from_what_the_model_reads(tmp_path: Path) -> None:
    api = SimulatedAPI(lambda body: text_reply("ok"))
    shell = shell_with(("r = requests.get(url, auth=auth)",), auth=("analyst", "hunter2hunter2"))
    engine = make_engine(api, tmp_path, kernel_facts=KernelContext(shell))
    await run(engine, "why does the request with `auth` fail?")
    body = str(api.requests[-1].body["messages"])
    assert "hunter2hunter2" not in body and "analyst" in body
